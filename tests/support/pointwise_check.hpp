// SPDX-License-Identifier: MIT
/// @file Expected values and tolerances of one pointwise op, and a harness that runs an op over
/// random shapes, broadcasting and strided layouts (inputs and destinations) and checks every element.
///
/// Tolerance model (see each op's `ulps` where it is used):
///   An op computed in type C (Map::compute_type: float for 16-bit floats and integers under
///   float-valued ops) from exact inputs returns the exact value v with an error of at most
///   `ulps * eps(C) * scale`, where eps(C) is C's machine epsilon (2^-23 float, 2^-52 double) and
///   `scale` is the magnitude of the terms the result is built from: |v| for a correctly rounded or
///   relatively accurate function (scale = |v|), more where the implementation cancels terms (gelu's
///   1 + erf(x / sqrt 2) for x < 0: scale = |x|). The double-precision reference adds its own
///   rounding (2^-52 |v|). Storing to a narrower type rounds once more: at most half an ulp of the
///   output type at |v| + err, on top of err (rounding a value that is off by err lands at most
///   0.5 ulp + err from v). Integer and bool results are exact (tolerance 0).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "reference.hpp"

namespace weft_test {

/// An exact reference value and the magnitude its error bound scales with (0: exact in any type).
struct RefVal {
  double v;
  double scale;
};
inline RefVal rel(double v) { return {v, std::fabs(v)}; }
inline RefVal exact(double v) { return {v, 0.0}; }
/// v is already the stored value (rounded to the output type by the reference): exact match.
inline RefVal stored(double v) { return {v, -1.0}; }

/// How precisely an op's compute type C and output type Out pin down an element.
template <class Out, class C>
Expect expect_value(RefVal r, double ulps) {
  if (std::isnan(r.v) || std::isinf(r.v) || r.scale < 0) return {r.v, 0.0};
  if constexpr (!is_float_type_v<Out>) {
    return {round_to<Out>(r.v), 0.0};
  } else {
    double err = ulps * eps_of<C>() * r.scale + 0x1p-52 * std::fabs(r.v);
    if constexpr (sizeof(Out) < sizeof(C) || is_float16_v<Out>) err += 0.5 * ulp_of<Out>(std::fabs(r.v) + err);
    return {r.v, err};
  }
}

/// The value a C++ number has inside a kernel computing in C: converted once to C.
template <class C>
double scalar_in(double s) {
  return round_to<C>(s);
}

template <class E>
using value_t = typename E::value_type;
namespace detail {
template <class E>
struct compute_of {
  using type = weft::math_t<typename E::value_type>;  // Cast<U, E>: the value rounded to U, in U's math type
};
template <class E>
  requires requires { typename E::compute_type; }
struct compute_of<E> {
  using type = typename E::compute_type;
};
}  // namespace detail
template <class E>
using compute_t = typename detail::compute_of<E>::type;

/// With WEFT_TEST_ERRORS=1 in the environment, prints the largest |error| / tolerance seen per op
/// (how much of its tolerance an op actually uses: a ratio far below 1 everywhere would mean the
/// tolerance could be tighter).
inline void note_error_ratio(const char* what, const Report& r) {
  static const bool on = std::getenv("WEFT_TEST_ERRORS") != nullptr;
  if (on && r.checked > 0) std::printf("[error/tolerance] %-28s %.3f over %lld elements\n", what, r.worst_ratio, (long long)r.checked);
}

/// A random output shape (rank 0..4) for trial `trial`, a destination shape that may be larger
/// than the broadcast of the inputs (copy_ rule), and the inputs' shapes.
struct OpShapes {
  Shape out;
  std::vector<Shape> inputs;
  Shape dst;
};
inline OpShapes op_shapes(Rng& rng, int trial, std::size_t n_inputs, std::int64_t max_numel) {
  OpShapes s;
  s.out = random_shape(rng, 0, 4, max_numel);
  for (std::size_t k = 0; k < n_inputs; ++k) s.inputs.push_back(trial == 0 ? s.out : broadcastable_to(rng, s.out));
  Shape full;
  broadcast_shapes(s.inputs, full);
  s.dst = full;
  if (trial % 3 == 2 && full.rank() < 4) {
    std::vector<std::int64_t> d = dims_of(full);
    d.insert(d.begin(), rng.integer(2, 3));
    s.dst = Shape(d);
  }
  return s;
}

template <class>
using as_double = double;

/// The part of check_op that does not depend on the op: trial shapes, inputs of random layouts,
/// the poisoned destination, expected values and the element checks. It is instantiated once per
/// (result dtype, compute type, input dtypes), so the ops of a suite share it and each op adds
/// only its own kernels (about a third of a suite's compile time before this split).
template <class Expected, class C, class... Ins>
class OpTrials {
 public:
  static constexpr std::size_t N = sizeof...(Ins);
  using Ref = std::function<RefVal(as_double<Ins>...)>;

  OpTrials(const char* what, Rng& rng, const std::array<Domain, N>& domains, double ulps, Ref ref, int trials,
           std::int64_t max_numel)
      : what_(what), rng_(rng), domains_(domains), ulps_(ulps), ref_(std::move(ref)), trials_(trials), max_numel_(max_numel) {}

  /// Starts the next trial: new shapes, inputs and destination. False after the last one.
  bool next() {
    if (++trial_ >= trials_) return false;
    shapes_ = op_shapes(rng_, trial_, N, max_numel_);
    std::size_t k = 0;
    auto input = [&](auto tag) {
      using T = decltype(tag);
      std::size_t i = k++;
      return make_view<T>(rng_, shapes_.inputs[i], domains_[i], random_layout(rng_, false));
    };
    // New handles each trial (emplace): assigning a view writes values into the old one.
    inputs_.emplace(std::tuple<TensorView<Ins>...>{input(Ins{})...});  // braces: inputs drawn in order
    layout_ = random_layout(rng_, true);
    y_.emplace(make_destination<Expected>(rng_, shapes_.dst, layout_));
    values_ = std::apply([&](const auto&... t) { return std::vector<std::vector<double>>{broadcast_values(t, shapes_.dst)...}; },
                         *inputs_);
    want_.clear();
    return true;
  }

  const std::tuple<TensorView<Ins>...>& inputs() const { return *inputs_; }
  TensorView<Expected>& destination() { return *y_; }
  bool first() const { return trial_ == 0; }

  /// The op, trial, shapes and layouts, and the seed that replays them.
  std::string context() const {
    std::string in;
    std::apply([&](const auto&... t) { ((in += shape_str(t.shape()) + (t.is_contiguous() ? " " : " (strided) ")), ...); },
               *inputs_);
    return cat_str("op: ", what_, "; replay with WEFT_TEST_SEED=", std::to_string(seed()), "; trial ", std::to_string(trial_),
                   ": out ", shape_str(shapes_.dst), " (", layout_name(layout_), "), inputs ", in);
  }

  /// The destination against the double-precision reference.
  void check_destination() {
    INFO(context());
    Report report = check_output(*y_, expected());
    WEFT_CHECK_REPORT(report);
    note_error_ratio(what_, report);
  }

  /// eval() gives the same values in a new contiguous tensor.
  void check_eval(const weft::TensorBase<Expected>& z) {
    INFO(context(), "; eval()");
    CHECK(z.shape() == shapes_.dst);
    CHECK(z.is_contiguous());
    WEFT_CHECK_REPORT(check_output(z, expected()));
  }

 private:
  const std::vector<Expect>& expected() {
    if (want_.empty()) {
      want_.resize(std::size_t(shapes_.dst.numel()));
      for (std::size_t i = 0; i < want_.size(); ++i)
        want_[i] = [&]<std::size_t... I>(std::index_sequence<I...>) {
          return expect_value<Expected, C>(ref_(values_[I][i]...), ulps_);
        }(std::make_index_sequence<N>{});
    }
    return want_;
  }
  static std::string cat_str(auto&&... parts) {
    std::string s;
    ((s += parts), ...);
    return s;
  }

  const char* what_;
  Rng& rng_;
  std::array<Domain, N> domains_;
  double ulps_;
  Ref ref_;
  int trials_, trial_ = -1;
  std::int64_t max_numel_;
  OpShapes shapes_;
  std::optional<std::tuple<TensorView<Ins>...>> inputs_;
  Layout layout_ = Layout::contiguous;
  std::optional<TensorView<Expected>> y_;
  std::vector<std::vector<double>> values_;
  std::vector<Expect> want_;
};

/// Runs `trials` random cases of an n-ary op: random output shape (rank 0..4), inputs of random
/// broadcastable shapes and layouts (incl. non-contiguous and expanded), a poisoned destination of
/// a random layout; checks `y = make(inputs...)` element by element against ref(values...), and
/// eval(make(inputs...)) once. Ins are the input dtypes; Expected the result dtype (checked at
/// compile time).
template <class Expected, class... Ins, class Make, class Ref>
void check_op(const char* what, Rng& rng, const std::array<Domain, sizeof...(Ins)>& domains, double ulps, Make make,
              Ref ref, int trials = 8, std::int64_t max_numel = 2500) {
  using E = decltype(std::apply(make, std::declval<const std::tuple<TensorView<Ins>...>&>()));
  static_assert(std::is_same_v<value_t<E>, Expected>, "unexpected result dtype");
  using C = compute_t<E>;
  // The tolerance scales with C's epsilon: pin C down independently of weft's own claim.
  static_assert(!is_float16_v<C>, "16-bit floats compute in float");
  static_assert(!std::is_same_v<Expected, double> || std::is_same_v<C, double>, "a float64 result computes in float64");
  static_assert(!std::is_same_v<Expected, float> || std::is_same_v<C, float>, "a float32 result computes in float32");
  OpTrials<Expected, C, Ins...> t(what, rng, domains, ulps, ref, trials, max_numel);
  while (t.next()) {
    INFO(t.context());  // evaluated only if something below fails or throws
    auto e = std::apply(make, t.inputs());
    t.destination() = e;
    t.check_destination();
    if (t.first()) t.check_eval(weft::eval(e));
  }
}

/// A test-site RNG mixed with a name, so each op in a shared harness gets its own stream.
inline Rng named_rng(const char* name, int salt = 0) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char* p = name; *p; ++p) h = (h ^ std::uint64_t(static_cast<unsigned char>(*p))) * 1099511628211ull;
  return Rng(site_seed(name, salt) ^ h);
}

}  // namespace weft_test
