// SPDX-License-Identifier: MIT
/// @file cuda: sort, argsort, nonzero and masked_select on a GPU equal the CPU's results exactly (the CPU's are checked
/// against stable-sort and loop references in tests/ops; one order decides a stable sort and a selection), on every
/// dtype, with ties, NaN, one long row and many rows, dims 0 and -1 of strided views. Skipped at run time without a
/// CUDA device.
#include <doctest/doctest.h>

#include <weft/ops/select.hpp>
#include <weft/ops/sort.hpp>

#include "backend/cuda/gpu_inputs.hpp"
#include "dense_reference.hpp"

using namespace gpu_inputs;
using weft::test::cuda_available;

namespace {
inline namespace WEFT_BACKEND_ABI {  // its helpers reach weft's backends (docs/architecture.md, ODR safety)

template <class T>
void check_on_gpu(Rng& rng, const Shape& shape, GpuLayout layout) {
  const weft::TensorView<T> x = on_gpu<T>(rng, shape, layout, tie_domain<T>(0.05));
  const Tensor<T> host = x.to(Device::cpu());
  INFO("shape ", shape_str(shape));
  for (const std::int64_t dim : {std::int64_t(0), std::int64_t(-1)})
    for (const bool descending : {false, true}) {
      const weft::Sorted<T> got = weft::sort(x, dim, descending), want = weft::sort(host, dim, descending);
      check_same(got.values, want.values);
      check_same(got.indices, want.indices);
      check_same(weft::argsort(x, dim, descending), want.indices);
    }
  check_same(weft::nonzero(x), weft::nonzero(host));
  const weft::TensorView<bool> mask = on_gpu<bool>(rng, shape, GpuLayout::contiguous);
  check_same(weft::masked_select(x, mask), weft::masked_select(host, mask.to(Device::cpu())));
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("cuda sort, argsort, nonzero, masked_select: the host's results, bit for bit" *
                       doctest::skip(!cuda_available()),
                   T, float, double, weft::half, weft::bfloat16, std::int32_t, std::int64_t, bool, std::int8_t,
                   std::uint8_t, std::int16_t) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 6; ++iter)
    check_on_gpu<T>(rng, random_shape(rng, 1, 3, 3000), GpuLayout(rng.integer(0, 2)));
  check_on_gpu<T>(rng, Shape{300000}, GpuLayout::contiguous);  // one long row: DeviceRadixSort
  check_on_gpu<T>(rng, Shape{700, 3, 257}, GpuLayout::transposed);
}

TEST_CASE("cuda masked_select: a mask on another device is refused" * doctest::skip(!cuda_available())) {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3}, gpu);
  const Tensor<bool> mask = weft::full<bool>(Shape{3}, true);
  CHECK(has(error_of([&] { weft::masked_select(x, mask); }), "move them to one device"));
}

}  // TEST_SUITE
