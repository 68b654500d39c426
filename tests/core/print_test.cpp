// SPDX-License-Identifier: MIT
/// @file core: operator<< of tensors and views (core/print.hpp) against PyTorch 2.x's repr of the same
/// tensors, with `dtype=<weft name>` where torch omits the dtype or writes `dtype=torch.<name>`.
#include <doctest/doctest.h>

#include <weft/ops/factories.hpp>
#include <weft/core/print.hpp>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using weft::bfloat16;
using weft::from_vector;
using weft::half;
using weft::Shape;
using weft::Tensor;

namespace {

template <class X>
std::string printed(const X& tensor) {
  std::ostringstream os;
  os << tensor;
  return os.str();
}

/// 0, 1/d, 2/d, ... computed in float, as torch.arange(n.) / d.
std::vector<float> ramp(int n, float d) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(float(i) / d);
  return v;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("print: float32 in a common width, 4 decimals") {
  CHECK(printed(from_vector<float>({0.1f, -2.f, 3.f, 4.f}, Shape{2, 2})) ==
        "tensor([[ 0.1000, -2.0000],\n"
        "        [ 3.0000,  4.0000]], dtype=float32)");
  // A float tensor of whole numbers prints "1." (no decimals); zeros and infinities do not widen the column.
  CHECK(printed(from_vector<float>({0.f, 0.f, 0.f})) == "tensor([0., 0., 0.], dtype=float32)");
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(printed(from_vector<float>({1.f, inf})) == "tensor([1., inf], dtype=float32)");
  CHECK(printed(from_vector<float>({std::numeric_limits<float>::quiet_NaN(), inf, -inf, 1.5f})) ==
        "tensor([   nan,    inf,   -inf, 1.5000], dtype=float32)");
}

TEST_CASE("print: float64 switches to scientific notation as torch does") {
  // max / min > 1000
  CHECK(printed(from_vector<double>({1e-5, 1.0, 1e10})) ==
        "tensor([1.0000e-05, 1.0000e+00, 1.0000e+10], dtype=float64)");
  // max > 1e8
  CHECK(printed(from_vector<double>({123456789.0, 1.5})) == "tensor([1.2346e+08, 1.5000e+00], dtype=float64)");
}

TEST_CASE("print: the 16-bit floats print their stored value") {
  // 0.1 is 0.0999755859375 in float16 and 0.10009765625 in bfloat16.
  CHECK(printed(from_vector<half>({half(0.1f), half(1.5f), half(-2.25f)})) ==
        "tensor([ 0.1000,  1.5000, -2.2500], dtype=float16)");
  CHECK(printed(from_vector<bfloat16>({bfloat16(0.1f), bfloat16(1.5f), bfloat16(-2.25f)})) ==
        "tensor([ 0.1001,  1.5000, -2.2500], dtype=bfloat16)");
}

TEST_CASE("print: integers and bool") {
  CHECK(printed(from_vector<std::int32_t>({1, -20, 300, 4}, Shape{2, 2})) ==
        "tensor([[  1, -20],\n"
        "        [300,   4]], dtype=int32)");
  CHECK(printed(from_vector<std::int64_t>({-5, 12345678901})) == "tensor([         -5, 12345678901], dtype=int64)");
  CHECK(printed(from_vector<bool>({true, false, false, true}, Shape{2, 2})) ==
        "tensor([[ True, False],\n"
        "        [False,  True]], dtype=bool)");
}

TEST_CASE("print: 0-d, empty and undefined tensors") {
  CHECK(printed(from_vector<float>({3.5f}, Shape{})) == "tensor(3.5000, dtype=float32)");
  CHECK(printed(from_vector<std::int32_t>({-7}, Shape{})) == "tensor(-7, dtype=int32)");
  CHECK(printed(weft::empty<float>(Shape{0, 3})) == "tensor([], size=(0, 3), dtype=float32)");
  CHECK(printed(weft::empty<std::int32_t>(Shape{0})) == "tensor([], dtype=int32)");  // no size for (0,)
  CHECK(printed(Tensor<double>()) == "tensor(undefined)");
}

TEST_CASE("print: 3-D tensors separate matrices with a blank line") {
  CHECK(printed(from_vector<float>(ramp(24, 4.f), Shape{2, 3, 4})) ==
        "tensor([[[0.0000, 0.2500, 0.5000, 0.7500],\n"
        "         [1.0000, 1.2500, 1.5000, 1.7500],\n"
        "         [2.0000, 2.2500, 2.5000, 2.7500]],\n"
        "\n"
        "        [[3.0000, 3.2500, 3.5000, 3.7500],\n"
        "         [4.0000, 4.2500, 4.5000, 4.7500],\n"
        "         [5.0000, 5.2500, 5.5000, 5.7500]]], dtype=float32)");
}

TEST_CASE("print: long rows wrap at 80 columns, and so does the dtype") {
  CHECK(printed(from_vector<float>(ramp(30, 3.f))) ==
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
        "        6.0000, 6.3333, 6.6667, 7.0000, 7.3333, 7.6667, 8.0000, 8.3333, 8.6667,\n"
        "        9.0000, 9.3333, 9.6667], dtype=float32)");
  CHECK(printed(from_vector<float>(ramp(27, 3.f))) ==
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
        "        6.0000, 6.3333, 6.6667, 7.0000, 7.3333, 7.6667, 8.0000, 8.3333, 8.6667],\n"
        "       dtype=float32)");
}

TEST_CASE("print: more than 1000 elements summarize to 3 at each end of each dim") {
  CHECK(printed(weft::arange<std::int64_t>(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999], dtype=int64)");
  // The notation comes from the shown elements only: 0.25 .. 399.75 spans more than 1000x.
  CHECK(printed(from_vector<float>(ramp(1600, 4.f), Shape{40, 40})) ==
        "tensor([[0.0000e+00, 2.5000e-01, 5.0000e-01,  ..., 9.2500e+00, 9.5000e+00,\n"
        "         9.7500e+00],\n"
        "        [1.0000e+01, 1.0250e+01, 1.0500e+01,  ..., 1.9250e+01, 1.9500e+01,\n"
        "         1.9750e+01],\n"
        "        [2.0000e+01, 2.0250e+01, 2.0500e+01,  ..., 2.9250e+01, 2.9500e+01,\n"
        "         2.9750e+01],\n"
        "        ...,\n"
        "        [3.7000e+02, 3.7025e+02, 3.7050e+02,  ..., 3.7925e+02, 3.7950e+02,\n"
        "         3.7975e+02],\n"
        "        [3.8000e+02, 3.8025e+02, 3.8050e+02,  ..., 3.8925e+02, 3.8950e+02,\n"
        "         3.8975e+02],\n"
        "        [3.9000e+02, 3.9025e+02, 3.9050e+02,  ..., 3.9925e+02, 3.9950e+02,\n"
        "         3.9975e+02]], dtype=float32)");
}

TEST_CASE("print: views print the elements they show") {
  const Tensor<float> a = from_vector<float>({1.5f, 2.f, 3.f, 4.f, 5.f, 6.f}, Shape{2, 3});
  // a.transpose(0, 1) is a strided TensorView<const float>.
  CHECK(printed(a.transpose(0, 1)) ==
        "tensor([[1.5000, 4.0000],\n"
        "        [2.0000, 5.0000],\n"
        "        [3.0000, 6.0000]], dtype=float32)");
  Tensor<std::int64_t> b = from_vector<std::int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, Shape{2, 2, 2});
  CHECK(printed(b.select(1, 1)) ==
        "tensor([[3, 4],\n"
        "        [7, 8]], dtype=int64)");
}

}  // TEST_SUITE
