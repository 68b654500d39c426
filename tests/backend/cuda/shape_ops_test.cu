// SPDX-License-Identifier: MIT
/// @file cuda: flip, roll, repeat, tile, pad (every mode), tril, triu and outer on a GPU equal, bit for bit, what the host computes from the same values (they move elements; the cpu suite checks the host against index loops); einsum on cuBLAS against the host's within the error of two float sums. Skipped at run time without a CUDA device.
#include <doctest/doctest.h>

#include <weft/ops/einsum.hpp>
#include <weft/ops/flip.hpp>
#include <weft/ops/outer.hpp>
#include <weft/ops/pad.hpp>
#include <weft/ops/repeat.hpp>
#include <weft/ops/roll.hpp>
#include <weft/ops/triangle.hpp>

#include "backend/cuda/gpu_inputs.hpp"
#include "error_check.hpp"

using namespace gpu_inputs;
using weft::test::cuda_available;
using weft::PadMode;

namespace {
inline namespace WEFT_BACKEND_ABI {  // its helpers reach weft's backends (docs/architecture.md, ODR safety)

template <class T>
void check_moves(Rng& rng) {
  const Shape shape = random_shape(rng, 2, 4, 3000);
  const auto layout = [&] { return GpuLayout(rng.integer(0, 2)); };
  const weft::TensorView<T> x = on_gpu<T>(rng, shape, layout());
  const Tensor<T> hx = x.to(Device::cpu());
  const int r = shape.rank();
  INFO("dtype ", type_name<T>(), ", x ", shape_str(shape));
  CHECK(values_on_host(weft::flip(x, {0, -1})) == weft::flip(hx, {0, -1}).to_vector());
  CHECK(values_on_host(weft::roll(x, {7, -3}, {1, 0})) == weft::roll(hx, {7, -3}, {1, 0}).to_vector());
  CHECK(values_on_host(weft::roll(x, -5)) == weft::roll(hx, -5).to_vector());
  std::vector<std::int64_t> repeats(std::size_t(r + 1), 1);
  repeats[0] = 2, repeats[std::size_t(r)] = 3;
  CHECK(values_on_host(weft::repeat(x, repeats)) == weft::repeat(hx, repeats).to_vector());
  CHECK(values_on_host(weft::tile(x, {2})) == weft::tile(hx, {2}).to_vector());
  const std::int64_t n = shape[r - 1];
  if (n > 1) {
    const std::vector<std::int64_t> pads{n - 1, -1, 1, 2};
    for (PadMode mode : {PadMode::constant, PadMode::reflect, PadMode::replicate}) {
      if (mode == PadMode::reflect && shape[r - 2] < 3) continue;
      CHECK(values_on_host(weft::pad(x, pads, mode)) == weft::pad(hx, pads, mode).to_vector());
    }
  }
  const Tensor<T> lower = weft::tril(x, 1), upper = weft::triu(x, -1);
  CHECK(values_on_host(lower) == Tensor<T>(weft::tril(hx, 1)).to_vector());
  CHECK(values_on_host(upper) == Tensor<T>(weft::triu(hx, -1)).to_vector());
  const weft::TensorView<T> v = on_gpu<T>(rng, Shape{rng.integer(1, 50)}, layout());
  const Tensor<T> o = weft::outer(x.select(0, 0).select(0, 0), v);
  const Tensor<T> hv = v.to(Device::cpu());
  CHECK(values_on_host(o) == Tensor<T>(weft::outer(hx.select(0, 0).select(0, 0), hv)).to_vector());
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("cuda flip, roll, repeat, tile, pad, tril, triu, outer: the host's values, bit for bit" *
                       doctest::skip(!cuda_available()),
                   T, float, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 10; ++iter) check_moves<T>(rng);
}

TEST_CASE("cuda einsum: cuBLAS against the host's GEMM, views and copies" * doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  const weft::TensorView<float> a = on_gpu<float>(rng, Shape{3, 17, 9}, GpuLayout::transposed);
  const weft::TensorView<float> b = on_gpu<float>(rng, Shape{9, 3, 11}, GpuLayout::strided);
  const Tensor<float> ha = a.to(Device::cpu()), hb = b.to(Device::cpu());
  for (const char* spec : {"bij,jbk->bik", "bij,jbk->kib", "bij,jbk", "bij,jbk->", "...j,jbk->...k"}) {
    INFO("spec ", spec);
    const std::vector<float> got = values_on_host(weft::einsum(spec, a, b)), want = weft::einsum(spec, ha, hb).to_vector();
    REQUIRE(got.size() == want.size());
    // Two float sums of up to 3 * 9 * 17 products of values in [-4, 4]: each within that many
    // half-ulps of float of the sum of magnitudes (at most 16 per product).
    const double terms = 3 * 9 * 17, tol = 2 * (terms + 2) * 0x1p-24 * terms * 16;
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(double(got[i]) - double(want[i])) <= tol);
  }
}

}  // TEST_SUITE
