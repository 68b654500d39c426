// SPDX-License-Identifier: MIT
/// @file The cuda suite for fused pointwise kernels: a float chain over random shapes, broadcasts
/// and views in float and double (16-bit floats: pointwise_16bit_test.cu), and the device-mismatch
/// error; GPU results against a double-precision host reference (bodies in pointwise_suite.hpp).
#include <doctest/doctest.h>

#include "backend/cuda/pointwise_suite.hpp"
#include "cuda_support.hpp"

using namespace pointwise_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("pointwise on cuda: a * sigmoid(b) + c over random shapes, broadcasts and views" *
                       doctest::skip(!cuda_available()),
                   T, float, double) {
  chain_over_random_shapes<OnCuda, T>(70);
}

// A CUDA tensor meeting a CPU tensor is a weft::Error naming both devices,
// raised before anything is allocated or written. The check runs on the host,
// so this case runs without a GPU too (on an unallocated fake CUDA tensor).
TEST_CASE("pointwise: a CUDA tensor and a CPU tensor in one kernel is an error naming both devices") {
  const Shape shape{4, 5};
  Tensor<float> host = weft::rand<float>(shape, 1);
  weft::TensorView<float> device = cuda_available() ? host.to(Device::cuda()) : unallocated_cuda_tensor<float>(shape);

  Tensor<float> y;
  std::string message;
  try {
    y = device + host;
  } catch (const weft::Error& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(contains(message, "cuda:0"));
  CHECK(contains(message, "cpu"));
  CHECK(contains(message, "[4, 5]"));
  CHECK_FALSE(y.defined());  // nothing allocated

  Tensor<float> out = weft::full<float>(shape, 7.0f);
  message.clear();
  try {
    out.view() = device * 2;  // a view keeps its device (a Tensor would take the expression's)
  } catch (const weft::Error& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(contains(message, "cuda:0"));
  CHECK(contains(message, "cpu"));
  for (float v : out.to_vector()) CHECK(v == 7.0f);  // nothing written

  weft::TensorView<float> device_out =
      cuda_available() ? weft::empty<float>(shape, Device::cuda()) : unallocated_cuda_tensor<float>(shape);
  CHECK_THROWS_AS(weft::fuse(weft::assign(out, host * 2), weft::assign(device_out, device * 2)), weft::Error);
  for (float v : out.to_vector()) CHECK(v == 7.0f);
}

}  // TEST_SUITE("cuda")
