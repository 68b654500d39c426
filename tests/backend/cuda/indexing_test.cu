// SPDX-License-Identifier: MIT
/// @file cuda: cat, stack, index_select, gather and embedding on a GPU equal, bit for bit, what the host
/// computes from the same values (the copies move elements, and the cpu suite checks the host against
/// references); index_add, scatter_add and embedding_backward (atomics) against double-precision host
/// references; masked_fill; an out-of-range index on the GPU refused before target is written.
/// Skipped at run time without a CUDA device.
#include <doctest/doctest.h>

#include <weft/ops/indexing.hpp>
#include <weft/ops/join.hpp>

#include "backend/cuda/gpu_inputs.hpp"
#include "dense_reference.hpp"
#include "error_check.hpp"

using namespace gpu_inputs;
using weft::test::cuda_available;

namespace {
inline namespace WEFT_BACKEND_ABI {  // its helpers reach weft's backends (docs/architecture.md, ODR safety)

/// Index values in [0, limit) on the GPU, in a GPU layout.
template <class I>
weft::TensorView<I> gpu_index(Rng& rng, const Shape& shape, std::int64_t limit, GpuLayout layout) {
  return on_gpu<I>(rng, shape, layout, Domain{0, double(std::max<std::int64_t>(limit, 1) - 1)});
}

template <class T, class I>
void check_copies(Rng& rng) {
  const Shape shape = random_shape(rng, 1, 4, 3000);
  const int dim = int(rng.integer(0, shape.rank() - 1));
  const auto layout = [&] { return GpuLayout(rng.integer(0, 2)); };
  const weft::TensorView<T> x = on_gpu<T>(rng, shape, layout());
  const Tensor<T> hx = x.to(Device::cpu());
  INFO("dtype ", type_name<T>(), ", index ", type_name<I>(), ", x ", shape_str(shape), ", dim ", dim);

  Shape other = shape;
  other[dim] = rng.integer(0, 5);
  const weft::TensorView<T> y = on_gpu<T>(rng, other, layout());
  CHECK(values_on_host(weft::cat({x, y, x}, dim)) == weft::cat({hx, y.to(Device::cpu()), hx}, dim).to_vector());
  const int new_dim = dim - shape.rank() - 1;  // negative
  CHECK(values_on_host(weft::stack({x, x}, new_dim)) == weft::stack({hx, hx}, new_dim).to_vector());

  const std::int64_t n = shape[dim] == 0 ? 0 : rng.integer(0, 9);
  const weft::TensorView<I> index = gpu_index<I>(rng, Shape{n}, shape[dim], layout());
  CHECK(values_on_host(weft::index_select(x, dim, index)) ==
        weft::index_select(hx, dim, index.to(Device::cpu())).to_vector());

  Shape gshape = shape;
  for (int d = 0; d < gshape.rank(); ++d)
    gshape[d] = d == dim ? (shape[dim] == 0 ? 0 : rng.integer(0, 7)) : rng.integer(0, shape[d]);
  const weft::TensorView<I> g = gpu_index<I>(rng, gshape, shape[dim], layout());
  CHECK(values_on_host(weft::gather(x, dim, g)) == weft::gather(hx, dim, g.to(Device::cpu())).to_vector());

  const weft::TensorView<T> weight = on_gpu<T>(rng, Shape{rng.integer(1, 30), rng.integer(1, 70)}, layout());
  const weft::TensorView<I> tokens = gpu_index<I>(rng, random_shape(rng, 0, 3, 200), weight.shape()[0], layout());
  CHECK(values_on_host(weft::embedding(weight, tokens)) ==
        weft::embedding(weight.to(Device::cpu()), tokens.to(Device::cpu())).to_vector());
}

/// t0 + the terms, in double, within a sum's bound in T's precision (any order of additions).
template <class T>
void check_sums(const std::vector<double>& got, const std::vector<double>& start,
                const std::vector<std::vector<double>>& terms) {
  for (std::size_t e = 0; e < got.size(); ++e) {
    CompensatedSum sum, magnitude;
    sum.add(start[e]);
    magnitude.add(std::fabs(start[e]));
    for (double x : terms[e]) sum.add(x), magnitude.add(std::fabs(x));
    const double tol = double(terms[e].size() + 2) * eps_of<T>() * magnitude.value() + ulp_of<T>(sum.value());
    CHECK(std::fabs(got[e] - sum.value()) <= tol);
  }
}

template <class T, class I>
void check_adds(Rng& rng) {
  const Shape shape = random_shape(rng, 1, 3, 2000);
  const int dim = int(rng.integer(0, shape.rank() - 1));
  const auto layout = [&] { return GpuLayout(rng.integer(0, 2)); };
  INFO("dtype ", type_name<T>(), ", index ", type_name<I>(), ", target ", shape_str(shape), ", dim ", dim);
  const weft::TensorView<T> start = on_gpu<T>(rng, shape, layout());
  const std::vector<double> s0 = values_of(start.to(Device::cpu()));
  const weft::Strides row_major = weft::contiguous_strides(shape);
  auto flat = [&](const std::vector<std::int64_t>& idx) {
    std::int64_t f = 0;
    for (int d = 0; d < shape.rank(); ++d) f += idx[std::size_t(d)] * row_major[d];
    return std::size_t(f);
  };

  // index_add with few distinct rows, so that the atomics collide.
  const std::int64_t n = shape[dim] == 0 ? 0 : rng.integer(0, 40);
  Shape sshape = shape;
  sshape[dim] = n;
  const weft::TensorView<I> index = gpu_index<I>(rng, Shape{n}, std::min<std::int64_t>(shape[dim], 3), layout());
  const weft::TensorView<T> source = on_gpu<T>(rng, sshape, layout());
  const Tensor<I> hi = index.to(Device::cpu());
  const Tensor<T> hs = source.to(Device::cpu());
  std::vector<std::vector<double>> terms(s0.size());
  for_each_index(sshape, [&](const std::vector<std::int64_t>& idx) {
    std::vector<std::int64_t> at = idx;
    at[std::size_t(dim)] = std::int64_t(value_at(hi, {idx[std::size_t(dim)]}));
    terms[flat(at)].push_back(2 * value_at(hs, idx));
  });
  weft::Tensor<T> target(start);
  weft::index_add(target, dim, index, source, T(2));
  check_sums<T>(values_of(target.to(Device::cpu())), s0, terms);

  // scatter_add with an index no larger than source and target.
  Shape ishape = shape;
  for (int d = 0; d < ishape.rank(); ++d)
    ishape[d] = d == dim ? (shape[dim] == 0 ? 0 : rng.integer(0, 30)) : rng.integer(0, shape[d]);
  const weft::TensorView<I> sindex = gpu_index<I>(rng, ishape, std::min<std::int64_t>(shape[dim], 3), layout());
  const weft::TensorView<T> ssource = on_gpu<T>(rng, ishape, layout());
  const Tensor<I> hsi = sindex.to(Device::cpu());
  const Tensor<T> hss = ssource.to(Device::cpu());
  std::vector<std::vector<double>> sterms(s0.size());
  for_each_index(ishape, [&](const std::vector<std::int64_t>& idx) {
    std::vector<std::int64_t> at = idx;
    at[std::size_t(dim)] = std::int64_t(value_at(hsi, idx));
    sterms[flat(at)].push_back(value_at(hss, idx));
  });
  weft::Tensor<T> scattered(start);
  weft::scatter_add(scattered, dim, sindex, ssource);
  check_sums<T>(values_of(scattered.to(Device::cpu())), s0, sterms);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("cuda cat, stack, index_select, gather, embedding: the host's values, bit for bit" *
                       doctest::skip(!cuda_available()),
                   T, float, weft::half, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 12; ++iter) {
    if (iter % 2) check_copies<T, std::int64_t>(rng);
    else check_copies<T, std::int32_t>(rng);
  }
}

TEST_CASE_TEMPLATE("cuda index_add, scatter_add: double references, repeated indices" *
                       doctest::skip(!cuda_available()),
                   T, float, double, weft::half, weft::bfloat16, std::int32_t, std::int64_t) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 10; ++iter) {
    if (iter % 2) check_adds<T, std::int64_t>(rng);
    else check_adds<T, std::int32_t>(rng);
  }
}

TEST_CASE("cuda embedding_backward, masked_fill, and an out-of-range index" * doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  const weft::TensorView<float> dout = on_gpu<float>(rng, Shape{4, 64, 48}, GpuLayout::contiguous);
  const weft::TensorView<std::int32_t> tokens = gpu_index<std::int32_t>(rng, Shape{4, 64}, 10, GpuLayout::strided);
  const Tensor<float> dwte = weft::embedding_backward(dout, tokens, 10);
  CHECK(dwte.device() == gpu);
  const std::vector<double> hd = values_of(dout.to(Device::cpu())), ht = values_of(tokens.to(Device::cpu()));
  std::vector<std::vector<double>> terms(10 * 48);
  for (std::size_t t = 0; t < ht.size(); ++t)
    for (std::size_t c = 0; c < 48; ++c) terms[std::size_t(ht[t]) * 48 + c].push_back(hd[t * 48 + c]);
  check_sums<float>(values_of(dwte.to(Device::cpu())), std::vector<double>(10 * 48, 0.0), terms);

  const weft::TensorView<float> x = on_gpu<float>(rng, Shape{5, 7}, GpuLayout::transposed);
  const Tensor<float> filled = weft::masked_fill(x, x > 0.0f, -INFINITY);
  const std::vector<float> hx = values_on_host(x), hf = values_on_host(filled);
  for (std::size_t i = 0; i < hx.size(); ++i) CHECK(hf[i] == (hx[i] > 0 ? -INFINITY : hx[i]));

  // The index lives on the GPU: it is read back and checked before anything is added.
  Tensor<float> target = weft::zeros<float>(Shape{3, 4}, gpu);
  const Tensor<std::int64_t> bad = weft::from_vector<std::int64_t>({0, 2, 3}, Shape{3}).to(gpu);
  const std::string m = error_of([&] { weft::index_add(target, 0, bad, weft::ones<float>(Shape{3, 4}, gpu)); });
  CHECK(has(m, "weft::index_add"));
  CHECK(has(m, "index value 3 at position [2]"));
  for (float v : values_on_host(target)) CHECK(v == 0.0f);
}

}  // TEST_SUITE
