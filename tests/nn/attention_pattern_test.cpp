// SPDX-License-Identifier: MIT
/// @file cpu: attention recognized from its formula (nn/attention_pattern.hpp): every recognized form
/// against the same ops run one by one in double, into poisoned outputs; no L x S tensor on the
/// recognized path; the `sdpa` log for recognized forms and for near misses (which run as written).
#include <cmath>
#include <functional>
#include <string>

#include <weft/weft.hpp>

#include "error_check.hpp"
#include "log_capture.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::Tensor;

namespace {

/// The inputs of one problem: q (..., L, E), k^T (..., E, S) (a transposed view of a stored (S, E)
/// k, or a tensor of its own), v (..., S, Ev), a float mask and a bool mask (L, S) in which every
/// query sees key 0.
template <class T>
struct Inputs {
  Tensor<T> q, k, kt_stored, v, mask;
  Tensor<bool> keep;
  /// k^T: kt_stored where there is one, else a view of k.
  TensorView<const T> kt() const { return kt_stored.defined() ? TensorView<const T>(kt_stored) : k.transpose(-2, -1); }
};

template <class T>
Inputs<T> random_inputs(Rng& rng, const Shape& batch, std::int64_t L, std::int64_t S, std::int64_t E, std::int64_t Ev,
                        bool kt_stored) {
  auto with = [&](std::int64_t a, std::int64_t b) {
    Shape s = batch;
    s.push_back(a), s.push_back(b);
    return s;
  };
  const Domain d{-2, 2};
  Inputs<T> in;
  in.q = random_contiguous<T>(rng, with(L, E), d);
  in.v = random_contiguous<T>(rng, with(S, Ev), d);
  in.mask = random_contiguous<T>(rng, Shape{L, S}, d);
  in.keep = random_contiguous<bool>(rng, Shape{L, S}, Domain{});
  for (std::int64_t i = 0; i < L; ++i) in.keep.data()[i * S] = true;
  if (kt_stored) in.kt_stored = random_contiguous<T>(rng, with(E, S), d);
  else in.k = random_contiguous<T>(rng, with(S, E), d);
  return in;
}

template <class T>
Inputs<double> in_double(const Inputs<T>& in) {
  Inputs<double> d;
  d.q = weft::cast<double>(in.q);
  d.v = weft::cast<double>(in.v);
  d.mask = weft::cast<double>(in.mask);
  d.keep = in.keep;
  d.kt_stored = weft::cast<double>(in.kt());
  return d;
}

constexpr double kScale = 0.375;

/// One formula: `fused` builds matmul(softmax(scores), v) as one expression; `scores` computes the
/// scores alone (a tensor), from which the ops run one by one.
struct Form {
  const char* name;
  bool mask_expression;  // the mask is an expression (evaluated into a tensor before attention runs)
  std::function<void(Tensor<float>&, const Inputs<float>&)> fused;  // out = the formula
  std::function<Tensor<double>(const Inputs<double>&)> scores_double;
  std::function<Tensor<float>(const Inputs<float>&)> scores_float;
};

#define WEFT_FORM(name, mask_expression, expr)                                                         \
  Form {                                                                                               \
    name, mask_expression, [](Tensor<float>& out, const Inputs<float>& in) { out = weft::matmul(weft::softmax(expr, -1), in.v); }, \
        [](const Inputs<double>& in) -> Tensor<double> { return expr; },                               \
        [](const Inputs<float>& in) -> Tensor<float> { return expr; }                                  \
  }

const Form kForms[] = {
    WEFT_FORM("matmul(q, k^T) * scale", false, weft::matmul(in.q, in.kt()) * kScale),
    WEFT_FORM("matmul(q, k^T) / scale", false, weft::matmul(in.q, in.kt()) / 3),
    WEFT_FORM("scale * matmul(q, k^T) + mask", false, kScale * weft::matmul(in.q, in.kt()) + in.mask),
    WEFT_FORM("mask + matmul(q, k^T) * scale", false, in.mask + weft::matmul(in.q, in.kt()) * kScale),
    WEFT_FORM("where(mask, matmul(q, k^T) * scale, fill)", false, weft::where(in.keep, weft::matmul(in.q, in.kt()) * kScale, -INFINITY)),
    WEFT_FORM("matmul(q, k^T)", false, weft::matmul(in.q, in.kt())),
    WEFT_FORM("matmul(q, k^T) * scale + mask", true, weft::matmul(in.q, in.kt()) * kScale + in.mask * 2),
    WEFT_FORM("where(mask, matmul(q, k^T) / scale, fill)", true, weft::where(in.keep || in.mask > 0, weft::matmul(in.q, in.kt()) / 3, -INFINITY)),
};
#undef WEFT_FORM

/// softmax(scores, -1) v, op by op: three tensors.
template <class T>
Tensor<T> one_by_one(const Tensor<T>& scores, const Tensor<T>& v) {
  const Tensor<T> p = weft::softmax(scores, -1);
  return weft::matmul(p, v);
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::isnan(a[i]) ? INFINITY : std::fabs(a[i] - b[i]));
  return m;
}

/// The fused formula's values against the ops run one by one in double: within 4 times the error
/// of the ops run one by one in float (plus a few ulps of the output's size).
void check_against_double(const std::vector<double>& got, const Inputs<float>& in, const Form& form) {
  const Inputs<double> ind = in_double(in);
  const std::vector<double> ref = values_of(one_by_one(form.scores_double(ind), ind.v));
  const std::vector<double> naive = values_of(one_by_one(form.scores_float(in), in.v));
  REQUIRE(got.size() == ref.size());
  double size = 0;
  for (double x : ref) size = std::max(size, std::fabs(x));
  const double tol = 4 * max_abs_diff(naive, ref) + 8 * eps_of<float>() * size;
  CHECK_MESSAGE(max_abs_diff(got, ref) <= tol, form.name, ": error ", max_abs_diff(got, ref), " > ", tol);
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("attention pattern: every recognized form matches the ops one by one in double, into poisoned outputs") {
  WEFT_TEST_RNG(rng);
  const Shape batches[] = {Shape{}, Shape{3}, Shape{2, 3}};
  for (const Shape& batch : batches)
    for (bool kt_stored : {false, true})
      for (const Form& form : kForms) {
        CAPTURE(form.name);
        CAPTURE(shape_str(batch));
        CAPTURE(kt_stored);
        const std::int64_t L = rng.integer(1, 40), S = rng.integer(1, 50), E = rng.integer(1, 24), Ev = rng.integer(1, 20);
        const Inputs<float> in = random_inputs<float>(rng, batch, L, S, E, Ev, kt_stored);
        Tensor<float> fresh;
        const std::string log = log_of("sdpa", [&] { form.fused(fresh, in); });
        CHECK_MESSAGE(LogCapture::count(log, "recognized as attention (") == 1, log);
        CHECK_MESSAGE(log.find(form.name) != std::string::npos, log);
        CHECK_MESSAGE((log.find("evaluated from its expression") != std::string::npos) == form.mask_expression, log);
        CHECK_MESSAGE(log.find("nn::sdpa_forward: ") != std::string::npos, log);
        check_against_double(values_of(fresh), in, form);
        // Into an existing destination of the output's shape: every element written.
        Tensor<float> into = weft::empty<float>(fresh.shape());
        poison(into);
        const float* at = into.data();
        form.fused(into, in);
        CHECK(into.data() == at);
        check_against_double(values_of(into), in, form);
      }
}

TEST_CASE("attention pattern: a bfloat16 formula is recognized, and its error is within its op-by-op run's") {
  WEFT_TEST_RNG(rng);
  using weft::bfloat16;
  const Inputs<bfloat16> in = random_inputs<bfloat16>(rng, Shape{2, 2}, 37, 45, 16, 8, false);
  const Inputs<double> ind = in_double(in);
  Tensor<bfloat16> out;
  const std::string log =
      log_of("sdpa", [&] { out = weft::matmul(weft::softmax(weft::matmul(in.q, in.kt()) * kScale + in.mask, -1), in.v); });
  CHECK_MESSAGE(log.find("recognized as attention (") != std::string::npos, log);
  const std::vector<double> ref = values_of(one_by_one<double>(weft::matmul(ind.q, ind.kt()) * kScale + ind.mask, ind.v));
  const std::vector<double> naive = values_of(one_by_one<bfloat16>(weft::matmul(in.q, in.kt()) * kScale + in.mask, in.v));
  double size = 0;
  for (double x : ref) size = std::max(size, std::fabs(x));
  CHECK(max_abs_diff(values_of(out), ref) <= 4 * max_abs_diff(naive, ref) + 8 * eps_of<bfloat16>() * size);
}

TEST_CASE("attention pattern: the recognized path allocates what nn::sdpa_forward does, no L x S tensor") {
  WEFT_TEST_RNG(rng);
  const Inputs<float> in = random_inputs<float>(rng, Shape{2, 2}, 64, 96, 16, 16, false);
  auto& counter = weft::detail::tensor_counters().allocations;
  weft::nn::SdpaOptions o;
  o.scale = kScale;
  std::int64_t before = counter.load();
  { const auto r = weft::nn::sdpa_forward(in.q, in.k, in.v, o); }
  const std::int64_t direct = counter.load() - before;
  before = counter.load();
  { const Tensor<float> out = weft::matmul(weft::softmax(weft::matmul(in.q, in.kt()) * kScale, -1), in.v); }
  const std::int64_t fused = counter.load() - before;
  before = counter.load();
  { const Tensor<float> out = one_by_one<float>(weft::matmul(in.q, in.kt()) * kScale, in.v); }
  const std::int64_t unfused = counter.load() - before;
  CHECK(fused == direct);
  CHECK(unfused > fused);  // the scores and the weights
}

TEST_CASE("attention pattern: near misses run as written, and the sdpa log says which part did not match") {
  WEFT_TEST_RNG(rng);
  const Inputs<float> in = random_inputs<float>(rng, Shape{2}, 12, 12, 8, 6, false);
  const Inputs<double> ind = in_double(in);
  const Tensor<float> scale_tensor = weft::full<float>(Shape{1}, float(kScale));
  struct Miss {
    const char* part;
    std::function<Tensor<float>()> fused;
    std::function<Tensor<double>()> ref;
  };
  const Tensor<double> scale_double = weft::full<double>(Shape{1}, kScale);
  const Miss misses[] = {
      {"softmax is over dim -2 of the scores [2, 12, 12]",
       [&] { return weft::matmul(weft::softmax(weft::matmul(in.q, in.kt()) * kScale, -2), in.v); },
       [&] { return weft::matmul(weft::softmax(Tensor<double>(weft::matmul(ind.q, ind.kt()) * kScale), -2), ind.v); }},
      {"softmax's input is not matmul(q, k^T)",
       [&] { return weft::matmul(weft::softmax(weft::relu(weft::matmul(in.q, in.kt())), -1), in.v); },
       [&] { return weft::matmul(weft::softmax(Tensor<double>(weft::relu(weft::matmul(ind.q, ind.kt()))), -1), ind.v); }},
      {"the scale of matmul(q, k^T) is a tensor",
       [&] { return weft::matmul(weft::softmax(weft::matmul(in.q, in.kt()) * scale_tensor, -1), in.v); },
       [&] { return weft::matmul(weft::softmax(Tensor<double>(weft::matmul(ind.q, ind.kt()) * scale_double), -1), ind.v); }},
      {"the term added to the scores is a number, not a floating mask",
       [&] { return weft::matmul(weft::softmax(weft::matmul(in.q, in.kt()) + 1.5f, -1), in.v); },
       [&] { return weft::matmul(weft::softmax(Tensor<double>(weft::matmul(ind.q, ind.kt()) + 1.5), -1), ind.v); }},
      {"where(mask, scores, fill) needs fill = -inf (attention's bool mask), got -100",
       [&] { return weft::matmul(weft::softmax(weft::where(in.keep, weft::matmul(in.q, in.kt()), -100.0), -1), in.v); },
       [&] {
         return weft::matmul(weft::softmax(Tensor<double>(weft::where(ind.keep, weft::matmul(ind.q, ind.kt()), -100.0)), -1),
                             ind.v);
       }},
  };
  for (const Miss& m : misses) {
    CAPTURE(m.part);
    Tensor<float> got;
    const std::string log = log_of("sdpa", [&] { got = m.fused(); });
    CHECK_MESSAGE(log.find(std::string("not recognized as attention: ") + m.part) != std::string::npos, log);
    CHECK_MESSAGE(log.find("nn::sdpa_forward") == std::string::npos, log);
    const std::vector<double> ref = values_of(m.ref());
    double size = 0;
    for (double x : ref) size = std::max(size, std::fabs(x));
    CHECK(max_abs_diff(values_of(got), ref) <= 64 * eps_of<float>() * std::max(size, 1.0));
  }
}

TEST_CASE("attention pattern: broadcast batch and head dims are recognized; grouped-query heads read k and v once") {
  WEFT_TEST_RNG(rng);
  struct Case {
    Shape q, k, v;  // the batch and head dims of q, k^T and v
    bool grouped;   // k^T and v of one head where q has several: sdpa's grouped-query heads
  };
  const Case cases[] = {
      {Shape{2, 4}, Shape{2, 1}, Shape{2, 1}, true},           // multi-query: one key and value head
      {Shape{2, 3, 2}, Shape{2, 3, 1}, Shape{2, 3, 1}, true},  // grouped: queries (N, Hk, G), keys (N, Hk, 1)
      {Shape{4}, Shape{1}, Shape{1}, true},                    // heads alone
      {Shape{2, 3}, Shape{1, 3}, Shape{1, 3}, false},          // k and v shared over the batch
      {Shape{}, Shape{3}, Shape{3}, false},                    // one q for three k and v
      {Shape{2, 3}, Shape{2, 3}, Shape{3}, false},             // v of a lower rank
      {Shape{2, 4}, Shape{2, 1}, Shape{2, 4}, false},          // k shared by the heads, v not
  };
  auto with = [](Shape s, std::int64_t a, std::int64_t b) {
    s.push_back(a), s.push_back(b);
    return s;
  };
  const Domain d{-2, 2};
  for (const Case& c : cases)
    for (int mask_form = 0; mask_form < 3; ++mask_form) {  // none, a float mask per head, a bool mask (L, S)
      CAPTURE(shape_str(c.q));
      CAPTURE(shape_str(c.k));
      CAPTURE(shape_str(c.v));
      CAPTURE(mask_form);
      const std::int64_t L = rng.integer(1, 30), S = rng.integer(1, 40), E = rng.integer(1, 20), Ev = rng.integer(1, 16);
      const Tensor<float> q = random_contiguous<float>(rng, with(c.q, L, E), d);
      const Tensor<float> kt = random_contiguous<float>(rng, with(c.k, E, S), d);
      const Tensor<float> v = random_contiguous<float>(rng, with(c.v, S, Ev), d);
      const Shape batch = weft::broadcast_shapes("test", {c.q, c.k, c.v});
      const Tensor<float> mask = random_contiguous<float>(rng, with(batch, L, S), d);
      Tensor<bool> keep = random_contiguous<bool>(rng, Shape{L, S}, Domain{});
      for (std::int64_t i = 0; i < L; ++i) keep.data()[i * S] = true;
      const Tensor<double> qd = weft::cast<double>(q), ktd = weft::cast<double>(kt), vd = weft::cast<double>(v),
                           maskd = weft::cast<double>(mask);
      Tensor<float> got = weft::empty<float>(with(batch, L, Ev));
      poison(got);
      std::vector<double> ref, naive;
      const std::string log = log_of("sdpa", [&] {
        if (mask_form == 0) {
          got = weft::matmul(weft::softmax(weft::matmul(q, kt) * kScale, -1), v);
          ref = values_of(one_by_one<double>(weft::matmul(qd, ktd) * kScale, vd));
          naive = values_of(one_by_one<float>(weft::matmul(q, kt) * kScale, v));
        } else if (mask_form == 1) {
          got = weft::matmul(weft::softmax(weft::matmul(q, kt) * kScale + mask, -1), v);
          ref = values_of(one_by_one<double>(weft::matmul(qd, ktd) * kScale + maskd, vd));
          naive = values_of(one_by_one<float>(weft::matmul(q, kt) * kScale + mask, v));
        } else {
          got = weft::matmul(weft::softmax(weft::where(keep, weft::matmul(q, kt) * kScale, -INFINITY), -1), v);
          ref = values_of(one_by_one<double>(weft::where(keep, weft::matmul(qd, ktd) * kScale, -INFINITY), vd));
          naive = values_of(one_by_one<float>(weft::where(keep, weft::matmul(q, kt) * kScale, -INFINITY), v));
        }
      });
      CHECK_MESSAGE(LogCapture::count(log, "recognized as attention (") == 1, log);
      CHECK_MESSAGE((log.find("grouped-query heads") != std::string::npos) == c.grouped, log);
      CHECK_MESSAGE((log.find("stride-0 views") != std::string::npos) == !c.grouped, log);  // every other case broadcasts
      CHECK(got.shape() == with(batch, L, Ev));
      double size = 0;
      for (double x : ref) size = std::max(size, std::fabs(x));
      const std::vector<double> values = values_of(got);
      REQUIRE(values.size() == ref.size());
      CHECK(max_abs_diff(values, ref) <= 4 * max_abs_diff(naive, ref) + 8 * eps_of<float>() * size);
    }
}

TEST_CASE("attention pattern: grouped-query heads allocate what a direct grouped sdpa call does (k and v not expanded)") {
  WEFT_TEST_RNG(rng);
  const Domain d{-2, 2};
  const Tensor<float> q = random_contiguous<float>(rng, Shape{2, 4, 48, 16}, d);
  const Tensor<float> k = random_contiguous<float>(rng, Shape{2, 1, 64, 16}, d);
  const Tensor<float> v = random_contiguous<float>(rng, Shape{2, 1, 64, 16}, d);
  auto& counter = weft::detail::tensor_counters().allocations;
  weft::nn::SdpaOptions o;
  o.scale = kScale;
  o.enable_gqa = true;
  std::int64_t before = counter.load();
  Tensor<float> direct = weft::nn::scaled_dot_product_attention(q, k, v, o);
  const std::int64_t direct_allocations = counter.load() - before;
  before = counter.load();
  Tensor<float> fused = weft::matmul(weft::softmax(weft::matmul(q, k.transpose(-2, -1)) * kScale, -1), v);
  CHECK(counter.load() - before == direct_allocations);
  CHECK(values_of(fused) == values_of(direct));  // the same kernel on the same operands
}

TEST_CASE("softmax of a matmul is a lazy node with the eager softmax's values wherever it is read") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> a = random_contiguous<float>(rng, Shape{3, 7, 5}, Domain{}),
                      b = random_contiguous<float>(rng, Shape{5, 11}, Domain{});
  const Tensor<float> eager = weft::softmax(weft::eval(weft::matmul(a, b) * 0.5), -1);
  const auto node = weft::softmax(weft::matmul(a, b) * 0.5, -1);
  static_assert(weft::DenseNode<std::remove_cvref_t<decltype(node)>>);
  CHECK(node.shape() == eager.shape());
  const Tensor<float> assigned = node;
  CHECK(values_of(assigned) == values_of(eager));
  Tensor<float> into = weft::empty<float>(eager.shape());
  poison(into);
  into = node;
  CHECK(values_of(into) == values_of(eager));
  const std::vector<double> around = values_of(weft::eval(node * 2.0 + 1.0)), expect = values_of(weft::eval(eager * 2.0 + 1.0));
  CHECK(around == expect);
  CHECK(has(error_of([&] { (void)weft::eval(weft::softmax(weft::matmul(a, b), 3)); }), "dim 3 is out of range"));
}

}  // TEST_SUITE
