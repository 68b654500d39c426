// SPDX-License-Identifier: MIT
/// @file Attention written as its formula, matmul(softmax(matmul(q, k^T) * scale, -1), v), which weft runs as nn::sdpa_forward (nn/attention_pattern.hpp), against the same ops one by one (the scores and the weights as two L x S tensors per head) and a direct nn::scaled_dot_product_attention call.
//
// fp32, N = 1, H = 8, E = Ev = 64, L = S = 1024 and 2048. Each round runs the three variants in
// turn; medians over rounds, and the median over rounds of the per-round ratio op by op /
// formula. `attention_pattern --peak formula|ops L` runs one pass in a fresh process and prints
// the growth of its peak RSS (VmHWM) over the inputs'. Run it as
// `OMP_NUM_THREADS=2 chrt -f 1 attention_pattern` on a shared machine.

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using namespace weft_bench;
using weft::Tensor;

constexpr std::int64_t kHeads = 8, kE = 64;
constexpr double kScale = 0.125;

struct Problem {
  Tensor<float> q, k, v;
};

Problem make_problem(std::int64_t L) {
  const weft::Shape shape{1, kHeads, L, kE};
  return {make_tensor<float>(shape, 1, -1, 1), make_tensor<float>(shape, 2, -1, 1), make_tensor<float>(shape, 3, -1, 1)};
}

Tensor<float> formula(const Problem& p) {
  return weft::matmul(weft::softmax(weft::matmul(p.q, p.k.transpose(-2, -1)) * kScale, -1), p.v);
}

Tensor<float> one_by_one(const Problem& p) {
  const Tensor<float> scores = weft::matmul(p.q, p.k.transpose(-2, -1)) * kScale;
  const Tensor<float> weights = weft::softmax(scores, -1);
  return weft::matmul(weights, p.v);
}

Tensor<float> direct(const Problem& p) {
  weft::nn::SdpaOptions o;
  o.scale = kScale;
  return weft::nn::scaled_dot_product_attention(p.q, p.k, p.v, o);
}

long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--peak") == 0) {
    const Problem p = make_problem(std::stoll(argv[3]));
    const long before = peak_rss_kib();
    const Tensor<float> out = std::strcmp(argv[2], "formula") == 0 ? formula(p) : one_by_one(p);
    std::printf("%s L=%s: peak RSS +%.1f MiB\n", argv[2], argv[3], double(peak_rss_kib() - before) / 1024);
    return out.numel() > 0 ? 0 : 1;
  }
  const int rounds = 7;
  std::printf("attention_pattern: fp32, N=1, H=%lld, E=Ev=%lld, %d threads, %d rounds (median ms)\n",
              (long long)kHeads, (long long)kE, max_threads(), rounds);
  for (std::int64_t L : {1024, 2048}) {
    const Problem p = make_problem(L);
    std::printf("  L=S=%lld: formula vs op by op max |diff| %.2e\n", (long long)L,
                max_abs_diff(formula(p), one_by_one(p)));
    std::vector<double> f, o, d, ratio;
    for (int r = 0; r < rounds; ++r) {
      o.push_back(time_ms([&] { (void)one_by_one(p); }));
      f.push_back(time_ms([&] { (void)formula(p); }));
      d.push_back(time_ms([&] { (void)direct(p); }));
      ratio.push_back(o.back() / f.back());
    }
    std::printf("  L=S=%lld: op by op %.1f ms, formula %.1f ms, direct sdpa %.1f ms; op by op / formula %.2fx\n",
                (long long)L, median(o), median(f), median(d), median(ratio));
  }
  return 0;
}
