// SPDX-License-Identifier: MIT
/// @file What one small statement costs: `y = a * sigmoid(b) + c` and `y = x + row` on tensors of 64 to 16384 elements,
/// where the per-call work (checks, plan, kernel construction) is a visible share of the time.
//
// Variants, interleaved per round:
//   (a) std::memcpy of the output's bytes (the floor of any call that writes them),
//   (b) Eigen's Tensor module, the same expression on the calling thread (DefaultDevice): its
//       expression templates do no per-call work beyond the loop,
//   (c) weft, one assignment per call (checks, plan, kernel; the kernel runs on the calling thread
//       below 16384 elements per thread).
// Prints ns per call (median of the rounds) and weft's per-call excess over Eigen. Uses the
// public API only, so the same file builds against any version of weft's headers (an A/B of two
// versions compiles it twice).
//
//   chrt -f 1 build/release/bench/call_overhead [--rounds N]
#include <unsupported/Eigen/CXX11/Tensor>
#include <weft/weft.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// ns per call of f, over enough calls to take about 20 ms.
template <class F>
double ns_per_call(F&& f, std::int64_t calls) {
  for (std::int64_t i = 0; i < calls / 10 + 1; ++i) f();  // warm up
  const auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < calls; ++i) f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(calls);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else {
      std::printf("usage: %s [--rounds N]\n", argv[0]);
      return !!std::strcmp(argv[i], "--help");
    }
  }
  std::printf("%-34s %10s %10s %10s %14s\n", "workload", "copy ns", "eigen ns", "weft ns", "weft - eigen");
  for (const std::int64_t n : {64, 1024, 16384}) {
    const std::int64_t calls = std::max<std::int64_t>(2000, 20000000 / (n + 200));
    // y = a * sigmoid(b) + c, contiguous (the linear layout)
    const auto a = weft::randn<float>({n}, 1), b = weft::randn<float>({n}, 2), c = weft::randn<float>({n}, 3);
    auto y = weft::zeros<float>({n});
    std::vector<float> ya(std::size_t(n), 0.0f);
    Eigen::TensorMap<Eigen::Tensor<const float, 1>> ea(a.data(), n), eb(b.data(), n), ec(c.data(), n);
    Eigen::Tensor<float, 1> ey(n);
    std::vector<double> copy, eigen, fused;
    for (int r = 0; r < rounds; ++r) {
      copy.push_back(ns_per_call([&] {
        std::memcpy(ya.data(), a.data(), std::size_t(n) * sizeof(float));
        asm volatile("" : : "r"(ya.data()) : "memory");
      }, calls));
      eigen.push_back(ns_per_call([&] { ey = ea * eb.sigmoid() + ec; }, calls));
      fused.push_back(ns_per_call([&] { y = a * weft::sigmoid(b) + c; }, calls));
    }
    char label[64];
    std::snprintf(label, sizeof label, "a*sigmoid(b)+c [%lld]", (long long)n);
    std::printf("%-34s %10.0f %10.0f %10.0f %14.0f\n", label, median(copy), median(eigen), median(fused),
                median(fused) - median(eigen));

    // y = x + row, x (n/64 x 64): a broadcast operand (the strided layout)
    const std::int64_t rows = std::max<std::int64_t>(n / 64, 1);
    const auto x = weft::randn<float>({rows, 64}, 4), row = weft::randn<float>({64}, 5);
    auto z = weft::zeros<float>({rows, 64});
    std::vector<float> za(std::size_t(rows * 64), 0.0f);
    Eigen::TensorMap<Eigen::Tensor<const float, 2, Eigen::RowMajor>> ex(x.data(), rows, 64);
    Eigen::TensorMap<Eigen::Tensor<const float, 2, Eigen::RowMajor>> erow(row.data(), 1, 64);
    Eigen::Tensor<float, 2, Eigen::RowMajor> ez(rows, 64);
    const Eigen::array<Eigen::Index, 2> bcast{rows, 1};
    copy.clear(), eigen.clear(), fused.clear();
    for (int r = 0; r < rounds; ++r) {
      copy.push_back(ns_per_call([&] {
        std::memcpy(za.data(), x.data(), std::size_t(rows * 64) * sizeof(float));
        asm volatile("" : : "r"(za.data()) : "memory");
      }, calls));
      eigen.push_back(ns_per_call([&] { ez = ex + erow.broadcast(bcast); }, calls));
      fused.push_back(ns_per_call([&] { z = x + row; }, calls));
    }
    std::snprintf(label, sizeof label, "x + row [%lld x 64]", (long long)rows);
    std::printf("%-34s %10.0f %10.0f %10.0f %14.0f\n", label, median(copy), median(eigen), median(fused),
                median(fused) - median(eigen));
  }
  return 0;
}
