// SPDX-License-Identifier: MIT
/// @file What the cuda suite's dense and reduction files share: random host values moved to the GPU
/// and viewed there in a chosen layout, so that the GPU kernel and the double reference read the
/// same values.
#pragma once

#include <utility>

#include <weft/ops/factories.hpp>

#include "cuda_support.hpp"
#include "reference.hpp"

namespace gpu_inputs {
inline namespace WEFT_BACKEND_ABI {  // its helpers reach weft's backends (docs/architecture.md, ODR safety)

using namespace weft_test;
using weft::Device;

inline const Device gpu = Device::cuda();

/// A host tensor's values on the GPU, viewed there as `layout` does on the host: contiguous, with
/// its last two dims transposed, or every other element of dim 0 (a strided view).
enum class GpuLayout { contiguous, transposed, strided };

template <class T>
weft::TensorView<T> on_gpu(Rng& rng, const Shape& shape, GpuLayout layout, const Domain& d = Domain{}) {
  if (layout == GpuLayout::transposed && shape.rank() >= 2) {
    Shape t = shape;
    std::swap(t[t.rank() - 1], t[t.rank() - 2]);
    return random_contiguous<T>(rng, t, d).to(gpu).transpose(-1, -2);
  }
  if (layout == GpuLayout::strided && shape.rank() >= 1) {
    Shape t = shape;
    t[0] = 2 * t[0];
    return random_contiguous<T>(rng, t, d).to(gpu).slice(0, 0, t[0], 2);
  }
  return random_contiguous<T>(rng, shape, d).to(gpu);
}

/// `got` (on the GPU) holds exactly `want`'s values (NaN matching NaN): for the ops that one order
/// decides (index ops, sorts, selections), whose GPU results equal the CPU's.
template <class T>
void check_same(const weft::TensorBase<T>& got, const Tensor<T>& want) {
  CHECK(got.device() == gpu);
  REQUIRE(got.shape() == want.shape());
  const std::vector<double> a = values_of(got.to(Device::cpu())), b = values_of(want);
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < a.size(); ++i) wrong += !(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])));
  CHECK(wrong == 0);
}

/// float32's epsilon, 2^-23: the unit of the GPU tolerances.
inline constexpr double kEps = 0x1p-23;

/// A tensor's values (any device, any strides) copied to the host in row-major order.
template <class T>
std::vector<T> values_on_host(const weft::TensorBase<T>& t) {
  return t.to(Device::cpu()).to_vector();
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace gpu_inputs
