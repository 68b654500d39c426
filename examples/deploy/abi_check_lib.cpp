// SPDX-License-Identifier: MIT
/// @file The functions abi_check.c calls through the C ABI: one per way a call can go right or wrong.

#include <stdexcept>
#include <tuple>

#include <weft/export.hpp>
#include <weft/weft.hpp>

using weft::Tensor;
using weft::TensorView;

// axpy: 2 x + y (elementwise; weft's broadcasting rules, so [3] with [4] is a weft::Error).
WEFT_EXPORT(axpy, [](TensorView<const float> x, TensorView<const float> y) { return Tensor<float>(x * 2.0f + y); });

// triple: x *= 3 in the caller's buffer (an input may be written), and returns a copy of the result.
Tensor<float> triple(TensorView<float> x) {
  x *= 3.0f;
  return x.clone();
}
WEFT_EXPORT(triple, triple);

// halves: two outputs of different element types, (x / 2, x's element count).
WEFT_EXPORT(halves, [](TensorView<const double> x) {
  Tensor<std::int32_t> n = weft::empty<std::int32_t>({1});
  n.data()[0] = std::int32_t(x.numel());
  return std::tuple<Tensor<double>, Tensor<std::int32_t>>(Tensor<double>(x * 0.5), std::move(n));
});

// boom, boom_int: a std::exception and a throw of something else must both come back as an error.
WEFT_EXPORT(boom, [](TensorView<const float>) -> Tensor<float> { throw std::runtime_error("boom: as planned"); });
WEFT_EXPORT(boom_int, [](TensorView<const float>) -> Tensor<float> { throw 42; });
