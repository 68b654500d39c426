// SPDX-License-Identifier: MIT
/// @file cpu: index_select, gather, embedding, index_add, scatter_add, embedding_backward and masked_fill
/// against references computed with plain loops over the index arithmetic (random shapes, dims and
/// layouts, int64 and int32 indices, every dtype each op takes, repeated indices, empty tensors),
/// bitwise reproducibility of the additions on one and two threads (they add in index order), and
/// every error (with the target left unchanged).
#include <cstring>
#include <map>

#include <weft/ops/indexing.hpp>
#include <weft/backend/threads.hpp>

#include "dense_reference.hpp"
#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::Device;

namespace {

/// Random index values in [0, limit) of `shape`, in a random layout (expanded ones repeat values).
template <class I>
TensorView<I> random_index(Rng& rng, const Shape& shape, std::int64_t limit) {
  return make_view<I>(rng, shape, Domain{0, double(std::max<std::int64_t>(limit, 1) - 1)}, random_layout(rng, false));
}

/// `shape` with dim d set to n.
Shape with_extent(Shape shape, int d, std::int64_t n) {
  shape[d] = n;
  return shape;
}

/// A shape no larger than `shape` in every dim but `free` (-1: none), where it is in [0, free_max].
Shape smaller_shape(Rng& rng, const Shape& shape, int free, std::int64_t free_max) {
  Shape s = shape;
  for (int d = 0; d < s.rank(); ++d) s[d] = d == free ? rng.integer(0, free_max) : rng.integer(0, s[d]);
  return s;
}

/// The expected value of t0 + sum of `terms` added one by one in T (16-bit floats round at each
/// addition, float and double accumulate in their own precision; integers are exact): a
/// sequential sum's bound, (k + 2) eps of the sum of magnitudes.
template <class T>
Expect sum_expect(double t0, const std::vector<double>& terms) {
  CompensatedSum sum, magnitude;
  sum.add(t0);
  magnitude.add(std::fabs(t0));
  for (double x : terms) sum.add(x), magnitude.add(std::fabs(x));
  return {sum.value(), double(terms.size() + 2) * eps_of<T>() * magnitude.value() + ulp_of<T>(sum.value())};
}

/// The in-place target of an add: a view in a random (non-expanded) layout whose storage around
/// it is poisoned, holding random values.
template <class T>
TensorView<T> random_target(Rng& rng, const Shape& shape) {
  TensorView<T> target = make_destination<T>(rng, shape, random_layout(rng, true));
  write_values(target, values_of(random_contiguous<T>(rng, shape, Domain{})));
  return target;
}

template <class T>
T random_alpha(Rng& rng) {
  if constexpr (std::is_integral_v<T>) return T(rng.pick(std::vector<int>{1, -2, 3}));
  else return T(float(rng.pick(std::vector<double>{1, 0.5, -2, 3})));
}

template <class T, class I>
void check_index_select(Rng& rng) {
  const Shape shape = random_shape(rng, 1, 4, 800);
  const auto random = random_dim(rng, shape.rank());
  const std::int64_t d = random.dim;
  const int dim = random.wrapped;
  const TensorView<T> x = make_view<T>(rng, shape, Domain{}, random_layout(rng, false));
  const TensorView<I> index = random_index<I>(rng, Shape{shape[dim] == 0 ? 0 : rng.integer(0, 12)}, shape[dim]);
  INFO("dtype ", type_name<T>(), ", index ", type_name<I>(), ", x ", shape_str(shape), ", dim ", d, ", index ",
       shape_str(index.shape()));
  const Tensor<T> out = weft::index_select(x, d, index);
  REQUIRE(out.shape() == with_extent(shape, dim, index.numel()));
  WEFT_CHECK_REPORT(check_output(out, [&](const std::vector<std::int64_t>& idx) {
    std::vector<std::int64_t> at = idx;
    at[std::size_t(dim)] = std::int64_t(value_at(index, {idx[std::size_t(dim)]}));
    return Expect{value_at(x, at)};
  }));
}

template <class T, class I>
void check_gather(Rng& rng) {
  const Shape shape = random_shape(rng, 1, 4, 800);
  const auto random = random_dim(rng, shape.rank());
  const std::int64_t d = random.dim;
  const int dim = random.wrapped;
  const TensorView<T> x = make_view<T>(rng, shape, Domain{}, random_layout(rng, false));
  const Shape index_shape = shape[dim] == 0 ? with_extent(shape, dim, 0) : smaller_shape(rng, shape, dim, 9);
  const TensorView<I> index = random_index<I>(rng, index_shape, shape[dim]);
  INFO("dtype ", type_name<T>(), ", index ", type_name<I>(), ", x ", shape_str(shape), ", dim ", d, ", index ",
       shape_str(index_shape));
  const Tensor<T> out = weft::gather(x, d, index);
  REQUIRE(out.shape() == index_shape);
  WEFT_CHECK_REPORT(check_output(out, [&](const std::vector<std::int64_t>& idx) {
    std::vector<std::int64_t> at = idx;
    at[std::size_t(dim)] = std::int64_t(value_at(index, idx));
    return Expect{value_at(x, at)};
  }));
}

template <class T, class I>
void check_embedding(Rng& rng) {
  const Shape wshape{rng.integer(1, 40), rng.pick(std::vector<std::int64_t>{1, 3, 16, 33, 64})};
  const TensorView<T> weight = make_view<T>(rng, wshape, Domain{}, random_layout(rng, false));
  const TensorView<I> index = random_index<I>(rng, random_shape(rng, 0, 3, 60), wshape[0]);
  INFO("dtype ", type_name<T>(), ", index ", type_name<I>(), ", weight ", shape_str(wshape), ", index ",
       shape_str(index.shape()));
  const Tensor<T> out = weft::embedding(weight, index);
  Shape want = index.shape();
  want.push_back(wshape[1]);
  REQUIRE(out.shape() == want);
  WEFT_CHECK_REPORT(check_output(out, [&](const std::vector<std::int64_t>& idx) {
    const std::vector<std::int64_t> at(idx.begin(), idx.end() - 1);
    return Expect{value_at(weight, {std::int64_t(value_at(index, at)), idx.back()})};
  }));
}

/// The terms each target element receives, keyed by its multi-index, in the order of the additions.
using Terms = std::map<std::vector<std::int64_t>, std::vector<double>>;

template <class T>
void check_adds(const TensorView<T>& target, const std::vector<double>& before, const Terms& terms) {
  std::size_t k = 0;
  WEFT_CHECK_REPORT(check_output(target, [&](const std::vector<std::int64_t>& idx) {
    const auto it = terms.find(idx);
    return it == terms.end() ? Expect{before[k++]} : sum_expect<T>(before[k++], it->second);
  }));
}

template <class T, class I>
void check_index_add(Rng& rng) {
  const Shape shape = random_shape(rng, 1, 4, 800);
  const auto random = random_dim(rng, shape.rank());
  const std::int64_t d = random.dim;
  const int dim = random.wrapped;
  const TensorView<T> target = random_target<T>(rng, shape);
  // Few distinct values, so that indices repeat.
  const std::int64_t n = shape[dim] == 0 ? 0 : rng.integer(0, 16);
  const TensorView<I> index = random_index<I>(rng, Shape{n}, std::min<std::int64_t>(shape[dim], rng.integer(1, 4)));
  const TensorView<T> source = make_view<T>(rng, with_extent(shape, dim, n), Domain{}, random_layout(rng, false));
  const T alpha = random_alpha<T>(rng);
  INFO("dtype ", type_name<T>(), ", index ", type_name<I>(), ", target ", shape_str(shape), ", dim ", d, ", index ",
       shape_str(index.shape()), ", alpha ", double(alpha));
  const std::vector<double> before = values_of(target);
  Terms terms;
  for_each_index(source.shape(), [&](const std::vector<std::int64_t>& idx) {
    std::vector<std::int64_t> at = idx;
    at[std::size_t(dim)] = std::int64_t(value_at(index, {idx[std::size_t(dim)]}));
    terms[at].push_back(double(alpha) * value_at(source, idx));
  });
  weft::index_add(target, d, index, source, alpha);
  check_adds(target, before, terms);
}

template <class T, class I>
void check_scatter_add(Rng& rng) {
  const Shape shape = random_shape(rng, 1, 4, 800);
  const auto random = random_dim(rng, shape.rank());
  const std::int64_t d = random.dim;
  const int dim = random.wrapped;
  const TensorView<T> target = random_target<T>(rng, shape);
  Shape source_shape = smaller_shape(rng, shape, dim, 9);
  Shape index_shape = smaller_shape(rng, source_shape, -1, 0);
  if (shape[dim] == 0) index_shape = with_extent(index_shape, dim, 0);
  const TensorView<I> index = random_index<I>(rng, index_shape, std::min<std::int64_t>(shape[dim], rng.integer(1, 4)));
  const TensorView<T> source = make_view<T>(rng, source_shape, Domain{}, random_layout(rng, false));
  INFO("dtype ", type_name<T>(), ", index ", type_name<I>(), ", target ", shape_str(shape), ", dim ", d, ", index ",
       shape_str(index_shape), ", source ", shape_str(source_shape));
  const std::vector<double> before = values_of(target);
  Terms terms;
  for_each_index(index_shape, [&](const std::vector<std::int64_t>& idx) {
    std::vector<std::int64_t> at = idx;
    at[std::size_t(dim)] = std::int64_t(value_at(index, idx));
    terms[at].push_back(value_at(source, idx));
  });
  weft::scatter_add(target, d, index, source);
  check_adds(target, before, terms);
}

/// t0 + terms added one at a time in T, rounding as T's arithmetic does (the sums are exact in
/// double, then rounded once): the value an in-order accumulation must give bit for bit.
template <class T>
double in_order(double t0, const std::vector<double>& terms) {
  for (double x : terms) t0 = round_to<T>(t0 + x);
  return t0;
}

template <class T>
std::vector<unsigned char> bytes_of(const TensorView<T>& t) {
  const Tensor<T> c = t.clone();
  const auto* p = reinterpret_cast<const unsigned char*>(c.data());
  return std::vector<unsigned char>(p, p + c.numel() * std::int64_t(sizeof(T)));
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("index_select, gather, embedding: random shapes, dims, layouts, int64 and int32 indices", T,
                   float, double, half, bfloat16, std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 24; ++iter) {
    if (iter % 2) {
      check_index_select<T, std::int64_t>(rng), check_gather<T, std::int64_t>(rng);
      check_embedding<T, std::int64_t>(rng);
    } else {
      check_index_select<T, std::int32_t>(rng), check_gather<T, std::int32_t>(rng);
      check_embedding<T, std::int32_t>(rng);
    }
  }
}

TEST_CASE_TEMPLATE("index_add, scatter_add: random shapes, dims, layouts, repeated indices", T, float, double, half,
                   bfloat16, std::int32_t, std::int64_t) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 30; ++iter) {
    if (iter % 2) {
      check_index_add<T, std::int64_t>(rng), check_scatter_add<T, std::int64_t>(rng);
    } else {
      check_index_add<T, std::int32_t>(rng), check_scatter_add<T, std::int32_t>(rng);
    }
  }
}

TEST_CASE_TEMPLATE("index_add, scatter_add, embedding_backward: in index order, bitwise equal on 1 and 2 threads", T,
                   float, half, bfloat16) {
  WEFT_TEST_RNG(rng);
  const int saved_threads = weft::get_num_threads();
  // 3000 indices into 6 rows of 40 columns (rows repeat ~500 times), 120000 additions: enough for
  // two threads.
  const Tensor<std::int64_t> index = random_contiguous<std::int64_t>(rng, Shape{3000}, Domain{0, 5});
  // Multiples of 2^-10: every partial sum is exact in double, so the model below rounds only as T does.
  const Domain grid{.lo = -4, .hi = 4, .grid = 1.0 / 1024};
  const TensorView<T> source = make_view<T>(rng, Shape{3000, 40}, grid, Layout::permuted);
  const Tensor<T> start = random_contiguous<T>(rng, Shape{6, 40}, grid);
  // What adding in index order gives, in T's own rounding.
  const std::vector<double> s = values_of(source), t0 = values_of(start);
  std::vector<std::vector<double>> terms(6 * 40);
  for (std::int64_t i = 0; i < 3000; ++i)
    for (std::int64_t c = 0; c < 40; ++c)
      terms[std::size_t(index.data()[i] * 40 + c)].push_back(s[std::size_t(i * 40 + c)]);
  std::vector<Expect> want(terms.size());
  for (std::size_t e = 0; e < terms.size(); ++e) want[e].want = in_order<T>(t0[e], terms[e]);
  std::vector<unsigned char> first;
  for (int threads : {1, 2}) {
    weft::set_num_threads(threads);
    INFO("threads ", threads);
    Tensor<T> target = start;
    weft::index_add(target, 0, index, source);
    WEFT_CHECK_REPORT(check_output(target, want));
    if (first.empty()) first = bytes_of<T>(target);
    CHECK(bytes_of<T>(target) == first);
    // scatter_add with the index broadcast along the columns adds the same terms in the same order.
    Tensor<T> scattered = start;
    weft::scatter_add(scattered, 0, index.view().unsqueeze(1).expand(Shape{3000, 40}), source);
    CHECK(bytes_of<T>(scattered) == first);
    // embedding_backward from zeros: the same order again.
    const Tensor<T> grad = weft::embedding_backward(source.reshape(Shape{30, 100, 40}),
                                                    index.view(Shape{30, 100}), 6);
    std::vector<Expect> from_zero(terms.size());
    for (std::size_t e = 0; e < terms.size(); ++e) from_zero[e].want = in_order<T>(0, terms[e]);
    WEFT_CHECK_REPORT(check_output(grad, from_zero));
  }
  weft::set_num_threads(saved_threads);
}

TEST_CASE("embedding and embedding_backward: a token batch (the GPT-2 shapes, scaled down)") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> wte = random_contiguous<float>(rng, Shape{50, 24}, Domain{});
  const Tensor<std::int32_t> tokens = random_contiguous<std::int32_t>(rng, Shape{4, 16}, Domain{0, 49});
  const Tensor<float> x = weft::embedding(wte, tokens);
  CHECK(x.shape() == Shape{4, 16, 24});
  const std::vector<float> w = wte.to_vector(), got = x.to_vector();
  for (std::int64_t t = 0; t < 64; ++t)
    CHECK(std::memcmp(&got[std::size_t(t * 24)], &w[std::size_t(tokens.data()[t] * 24)], 24 * sizeof(float)) == 0);
  const Tensor<float> dout = random_contiguous<float>(rng, Shape{4, 16, 24}, Domain{});
  const Tensor<float> dwte = weft::embedding_backward(dout, tokens, 50);
  Tensor<float> by_hand = weft::zeros<float>(Shape{50, 24});
  weft::index_add(by_hand, 0, tokens.view(Shape{64}), dout.view(Shape{64, 24}));
  CHECK(dwte.to_vector() == by_hand.to_vector());
}

TEST_CASE("indexing: empty indices, tensors and outputs") {
  const Tensor<float> x = weft::ones<float>(Shape{3, 4});
  const Tensor<std::int64_t> none = weft::zeros<std::int64_t>(Shape{0});
  CHECK(weft::index_select(x, 1, none).shape() == Shape{3, 0});
  CHECK(weft::gather(x, 0, weft::zeros<std::int64_t>(Shape{0, 4})).shape() == Shape{0, 4});
  CHECK(weft::embedding(x, weft::zeros<std::int64_t>(Shape{2, 0})).shape() == Shape{2, 0, 4});
  CHECK(weft::embedding_backward(weft::zeros<float>(Shape{0, 4}), none, 5).to_vector() == std::vector<float>(20, 0));
  Tensor<float> target = weft::ones<float>(Shape{3, 4});
  weft::index_add(target, 0, none, weft::zeros<float>(Shape{0, 4}));
  weft::scatter_add(target, 1, weft::zeros<std::int64_t>(Shape{3, 0}), x);
  CHECK(target.to_vector() == std::vector<float>(12, 1));
  const Tensor<float> nothing = weft::zeros<float>(Shape{0, 4});
  CHECK(weft::index_select(nothing, 1, weft::zeros<std::int64_t>(Shape{2})).shape() == Shape{0, 2});
}

TEST_CASE_TEMPLATE("masked_fill: random shapes and layouts, a broadcast mask, x's dtype kept", T, float, double, half,
                   bfloat16, std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) {
    const Shape shape = random_shape(rng, 0, 4, 600);
    const TensorView<T> x = make_view<T>(rng, shape, Domain{}, random_layout(rng, false));
    const TensorView<bool> mask =
        make_view<bool>(rng, broadcastable_to(rng, shape), Domain{}, random_layout(rng, false));
    const double value = std::is_same_v<T, bool> ? 1.0 : std::is_integral_v<T> ? -7.0 : -1e4;
    INFO("dtype ", type_name<T>(), ", x ", shape_str(shape), ", mask ", shape_str(mask.shape()));
    auto e = weft::masked_fill(x, mask, value);
    static_assert(std::is_same_v<typename decltype(e)::value_type, T>);
    TensorView<T> out = make_destination<T>(rng, shape, random_layout(rng, true));
    out = e;
    WEFT_CHECK_REPORT(check_output(out, [&](const std::vector<std::int64_t>& idx) {
      return Expect{value_at(mask, idx) != 0 ? round_to<T>(value) : value_at(x, idx)};
    }));
  }
  // A mask expression and -inf, the attention idiom.
  const Tensor<float> scores = weft::zeros<float>(Shape{3, 3});
  const Tensor<float> masked = weft::masked_fill(scores, weft::zeros<float>(Shape{3, 1}) < weft::ones<float>(Shape{3}),
                                                 -INFINITY);
  for (float v : masked.to_vector()) CHECK(v == -INFINITY);
}

TEST_CASE("index_select, gather, embedding: errors name the op, the shapes, the bad value and the fix") {
  // Every tensor is made first: the op must fail before allocating anything.
  using Index = Tensor<std::int64_t>;
  const Tensor<float> x = weft::zeros<float>(Shape{3, 4}), scalar = weft::zeros<float>(Shape{}),
                      vector = weft::zeros<float>(Shape{3}), grad = weft::zeros<float>(Shape{2, 4});
  const Index ok = weft::zeros<std::int64_t>(Shape{2}), column = weft::zeros<std::int64_t>(Shape{2, 1}),
              square = weft::zeros<std::int64_t>(Shape{2, 2}), wide_rows = weft::zeros<std::int64_t>(Shape{2, 5});
  const Index bad = weft::from_vector<std::int64_t>({0, 3, 4, 1}, Shape{4});
  const Index bad_row = weft::from_vector<std::int64_t>({0, 1, 2, 3}, Shape{1, 4});
  const Index bad_square = weft::from_vector<std::int64_t>({0, 1, 2, 3}, Shape{2, 2});
  const Tensor<std::int32_t> negative = weft::from_vector<std::int32_t>({1, -1}, Shape{2});
  const TensorView<const std::int64_t> strided =
      weft::from_vector<std::int64_t>({0, 9, 1, 9, 7, 9}, Shape{6}).slice(0, 0, 6, 2);
  const TensorView<float> gpu_x = fake_cuda_view<float>(Shape{3, 4});
  const TensorView<std::int64_t> gpu_index = fake_cuda_view<std::int64_t>(Shape{2});

  std::string m = error_before_allocation([&] { weft::index_select(x, 1, bad); });
  CHECK(has(m, "weft::index_select"));
  CHECK(has(m, "index value 4 at position [2]"));
  CHECK(has(m, "dim 1 of the input (shape [3, 4])"));
  CHECK(has(m, "[0, 4)"));
  m = error_before_allocation([&] { weft::index_select(x, 0, negative); });
  CHECK(has(m, "index value -1 at position [1]"));
  m = error_before_allocation([&] { weft::index_select(x, 0, strided); });  // read in place
  CHECK(has(m, "index value 7 at position [2]"));
  m = error_before_allocation([&] { weft::index_select(x, 0, column); });
  CHECK(has(m, "index has shape [2, 1] but needs 1 dim(s)"));
  m = error_before_allocation([&] { weft::index_select(x, 2, ok); });
  CHECK(has(m, "dim 2 is out of range for an input of shape [3, 4]"));
  m = error_before_allocation([&] { weft::index_select(scalar, 0, ok); });
  CHECK(has(m, "zero-dimensional"));
  m = error_before_allocation([&] { weft::index_select(x, 0, Index()); });
  CHECK(has(m, "index is an empty"));
  m = error_before_allocation([&] { weft::index_select(x, 0, gpu_index); });
  CHECK(has(m, "index (shape [2]) is on cuda:0"));
  m = error_before_allocation([&] { weft::index_select(gpu_x, 0, gpu_index); });
  CHECK(has(m, "nvcc"));

  m = error_before_allocation([&] { weft::gather(x, 0, bad_row); });
  CHECK(has(m, "weft::gather"));
  CHECK(has(m, "index value 3 at position [0, 3]"));
  CHECK(has(m, "[0, 3)"));
  m = error_before_allocation([&] { weft::gather(x, 0, wide_rows); });
  CHECK(has(m, "index of shape [2, 5] is larger than the input (shape [3, 4]) in dim 1"));
  m = error_before_allocation([&] { weft::gather(x, 0, ok); });
  CHECK(has(m, "index has shape [2] but needs 2 dim(s)"));
  m = error_before_allocation([&] { weft::gather(x, -3, square); });
  CHECK(has(m, "dim -3 is out of range"));

  m = error_before_allocation([&] { weft::embedding(x, bad_square); });
  CHECK(has(m, "weft::embedding"));
  CHECK(has(m, "index value 3 at position [1, 1]"));
  CHECK(has(m, "weight (shape [3, 4])"));
  m = error_before_allocation([&] { weft::embedding(vector, ok); });
  CHECK(has(m, "weight has shape [3] but needs 2 dim(s)"));
  m = error_before_allocation([&] { weft::embedding_backward(x, ok, 5); });
  CHECK(has(m, "weft::embedding_backward"));
  CHECK(has(m, "grad_out has shape [3, 4] but an index of shape [2]"));
  m = error_before_allocation([&] { weft::embedding_backward(grad, ok, 0); });
  CHECK(has(m, "index value 0 at position [0]"));
  CHECK(has(m, "which is empty"));
  m = error_before_allocation([&] { weft::embedding_backward(grad, ok, -1); });
  CHECK(has(m, "num_embeddings must be >= 0"));
}

TEST_CASE("index_add, scatter_add, masked_fill: errors name the op, the shapes, the bad value and the fix; target "
          "unchanged") {
  WEFT_TEST_RNG(rng);
  using Index = Tensor<std::int64_t>;
  const TensorView<float> target = random_target<float>(rng, Shape{3, 4});
  const std::vector<unsigned char> snapshot = storage_snapshot(target);
  const Tensor<float> source = weft::ones<float>(Shape{4, 4}), one_row = weft::ones<float>(Shape{1, 4}),
                      narrow = weft::ones<float>(Shape{2, 2});
  const TensorView<float> gpu_source = fake_cuda_view<float>(Shape{4, 4});
  const Index last_bad = weft::from_vector<std::int64_t>({0, 1, 2, 3}, Shape{4});
  auto index = [](const Shape& shape) { return weft::zeros<std::int64_t>(shape); };
  const Index two = index(Shape{2}), four = index(Shape{4}), four_by_one = index(Shape{4, 1}), one = index(Shape{1}),
              four_by_two = index(Shape{4, 2}), two_by_three = index(Shape{2, 3}), one_by_one = index(Shape{1, 1});
  const Tensor<std::int32_t> scatter_bad = weft::from_vector<std::int32_t>({0, 3, 1, 4}, Shape{2, 2});
  Tensor<float> row = weft::zeros<float>(Shape{4});
  const TensorView<float> repeated = row.view().unsqueeze(0).expand(Shape{3, 4});

  // The bad value comes last: nothing may be added before every index is checked.
  std::string m = error_before_allocation([&] { weft::index_add(target, 0, last_bad, source); });
  CHECK(has(m, "weft::index_add"));
  CHECK(has(m, "index value 3 at position [3]"));
  CHECK(has(m, "dim 0 of target (shape [3, 4])"));
  m = error_before_allocation([&] { weft::index_add(target, 0, two, source); });
  CHECK(has(m, "source has shape [4, 4]"));
  CHECK(has(m, "need source of shape [2, 4]"));
  m = error_before_allocation([&] { weft::index_add(target, 0, four_by_one, source); });
  CHECK(has(m, "index has shape [4, 1] but needs 1 dim(s)"));
  m = error_before_allocation([&] { weft::index_add(target, 2, four, source); });
  CHECK(has(m, "dim 2 is out of range"));
  m = error_before_allocation([&] { weft::index_add(target, 0, four, gpu_source); });
  CHECK(has(m, "source (shape [4, 4]) is on cuda:0"));
  m = error_before_allocation([&] { weft::index_add(target, 1, four, target); });
  CHECK(has(m, "overlaps target"));
  m = error_before_allocation([&] { weft::index_add(repeated, 0, one, one_row); });
  CHECK(has(m, "repeats its elements along dim 0"));

  m = error_before_allocation([&] { weft::scatter_add(target, 1, scatter_bad, source); });
  CHECK(has(m, "weft::scatter_add"));
  CHECK(has(m, "index value 4 at position [1, 1]"));
  CHECK(has(m, "[0, 4)"));
  m = error_before_allocation([&] { weft::scatter_add(target, 1, four_by_two, source); });
  CHECK(has(m, "index of shape [4, 2] is larger than target (shape [3, 4]) in dim 0"));
  m = error_before_allocation([&] { weft::scatter_add(target, 0, two_by_three, narrow); });
  CHECK(has(m, "index of shape [2, 3] is larger than source (shape [2, 2]) in dim 1"));
  m = error_before_allocation([&] { weft::scatter_add(target, 0, two, source); });
  CHECK(has(m, "index has shape [2] but needs 2 dim(s)"));
  m = error_before_allocation([&] { weft::scatter_add(target, 0, one_by_one, Tensor<float>()); });
  CHECK(has(m, "source is an empty"));
  CHECK(storage_snapshot(target) == snapshot);

  const Tensor<std::int32_t> xi = weft::zeros<std::int32_t>(Shape{3});
  m = error_of([&] { (void)weft::masked_fill(xi, xi == 0, 1e10); });
  CHECK(has(m, "weft::masked_fill"));
  CHECK(has(m, "does not fit the input's dtype int32"));
}

}  // TEST_SUITE
