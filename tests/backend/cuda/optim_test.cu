// SPDX-License-Identifier: MIT
/// @file cuda: optimizer steps on CUDA tensors against the same steps on the CPU. The CUDA path
/// keeps the step count on the device and skips with where(found_inf, old, new); the CPU's reads
/// found_inf and counts on the host (the cpu suite checks both paths' expressions against
/// torch.optim's goldens, the device path on the CPU's executor). Runs where a GPU is present;
/// compiled for sm_80/sm_90 in CI.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include <weft/optim/optim.hpp>

#include "cuda_support.hpp"

using weft::test::cuda_available;
using weft::Tensor;
using weft::TensorList;
namespace optim = weft::optim;

namespace {

/// A list of float32 tensors with fresh normal values (never all zero), on the CPU.
TensorList<float> random_list(std::mt19937_64& rng, const std::vector<weft::Shape>& shapes, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  TensorList<float> list;
  for (const auto& s : shapes) {
    std::vector<float> v(std::size_t(s.numel()));
    for (float& x : v) x = normal(rng);
    list.push_back(weft::from_vector<float>(v, s));
  }
  return list;
}

TensorList<float> to_device(const TensorList<float>& list, weft::Device d) {
  TensorList<float> out;
  for (const auto& t : list) out.push_back(t.to(d));
  return out;
}

/// Largest |a - b| / (1 + |b|) over two lists (a on any device, b on the CPU).
double max_difference(const TensorList<float>& a, const TensorList<float>& b) {
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const std::vector<float> x = a[k].to_vector(), y = b[k].to_vector();
    for (std::size_t i = 0; i < x.size(); ++i)
      worst = std::max(worst, std::isnan(x[i]) ? INFINITY : std::fabs(double(x[i]) - y[i]) / (1 + std::fabs(y[i])));
  }
  return worst;
}

/// Runs `steps` steps of Opt on the CPU and on CUDA from the same values, with loss scaling and
/// one skipped step, and compares parameters and state after each.
template <class Opt, class Options>
void compare_with_cpu(Options options) {
  std::mt19937_64 rng(std::random_device{}());
  const std::vector<weft::Shape> shapes = {{257, 33}, {4096}, {1}, {0}, {3, 5, 7}};
  const weft::Device gpu = weft::Device::cuda();
  TensorList<float> p_cpu = random_list(rng, shapes, 1.0f);
  TensorList<float> p_gpu = to_device(p_cpu, gpu);
  Opt cpu(p_cpu, options), cuda(p_gpu, options);
  const Tensor<float> scale = weft::full<float>({1}, 512.0f);
  for (int step = 1; step <= 6; ++step) {
    CAPTURE(step);
    const bool skip = step == 3;
    const Tensor<float> found = weft::full<float>({1}, skip ? 1.0f : 0.0f);
    TensorList<float> g = random_list(rng, shapes, skip ? NAN : 512.0f);  // scaled gradients (NaN when skipped)
    cpu.step(g, optim::GradScale{scale, found});
    cuda.step(to_device(g, gpu), optim::GradScale{scale.to(gpu), found.to(gpu)});
    // float32 on both sides; the GPU contracts and rounds sqrt/division its own way, and computes
    // the bias corrections in float32 (the CPU in float64: ~1e-5 of a step of ~lr): a few ulps per step
    CHECK(max_difference(p_gpu, p_cpu) < 1e-5);
    for (const std::string& name : cpu.state_names()) CHECK(max_difference(cuda.state(name), cpu.state(name)) < 1e-5);
    CHECK(cuda.step_count() == cpu.step_count());
  }
  CHECK(cuda.step_count() == 5);
}

}  // namespace

TEST_SUITE("cuda") {
TEST_CASE("optim on cuda: AdamW (amsgrad) and SGD (nesterov) with GradScale match the CPU" *
          doctest::skip(!cuda_available())) {
  compare_with_cpu<optim::AdamW<float>>(optim::AdamWOptions{.lr = 1e-2, .amsgrad = true});
  compare_with_cpu<optim::SGD<float>>(optim::SGDOptions{.lr = 1e-2, .momentum = 0.9, .weight_decay = 1e-3, .nesterov = true});
}
}
