// SPDX-License-Identifier: MIT
/// @file weft's attention beside libtorch's CPU flash kernels in one process, interleaved round by round: fp32 and bf16, forward and backward.
//
// Built when Meson finds PyTorch's pip wheel (option torch_peer; bench/meson.build): libtorch's
// headers and libraries come from the wheel, and both libraries then share the process's one
// libgomp. Each round runs torch forward, weft forward, torch backward, weft backward on the same
// inputs (bench/sdpa's shapes: N = 1, H = 8, L = S = 2048, E = 64 and 128, causal and not), so a
// slow spell of the shared machine lands on both sides; the speedup is the median over rounds of
// the per-round ratio torch time / weft time. torch's side is the pair of aten ops that
// F.scaled_dot_product_attention and its autograd node call on the CPU
// (_scaled_dot_product_flash_attention_for_cpu and its _backward), with no autograd bookkeeping.
//
//   OMP_NUM_THREADS=2 chrt -f 1 build/release/bench/sdpa_torch [--reps N] [--dtype float|bf16] [--E 64|128]
#include <omp.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <weft/weft.hpp>

#include "torch_peer.hpp"

namespace {

using weft_bench::to_weft;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <class F>
double time_ms(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Times {
  std::vector<double> torch_fwd, weft_fwd, torch_bwd, weft_bwd;
};

template <class T>
Times run_case(torch::ScalarType dtype, std::int64_t L, std::int64_t E, bool causal, int reps) {
  torch::manual_seed(0);
  auto make = [&] { return (torch::rand({1, 8, L, E}) * 2 - 1).to(dtype); };
  const torch::Tensor q = make(), k = make(), v = make(), dout = make();
  const weft::Tensor<T> wq = to_weft<T>(q), wk = to_weft<T>(k), wv = to_weft<T>(v), wdout = to_weft<T>(dout);
  weft::nn::SdpaOptions o;
  o.is_causal = causal;
  const auto [out, lse] = at::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal);
  const weft::nn::SdpaOutput<T> wf = weft::nn::sdpa_forward(wq, wk, wv, o);
  Times t;
  for (int r = -1; r < reps; ++r) {  // round -1 warms up
    const double tf = time_ms([&] { at::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal); });
    const double wf_ms = time_ms([&] { weft::nn::sdpa_forward(wq, wk, wv, o); });
    const double tb = time_ms(
        [&] { at::_scaled_dot_product_flash_attention_for_cpu_backward(dout, q, k, v, out, lse, 0.0, causal); });
    const double wb = time_ms([&] { weft::nn::sdpa_backward(wdout, wq, wk, wv, wf.out, wf.lse, o); });
    if (r < 0) continue;
    t.torch_fwd.push_back(tf), t.weft_fwd.push_back(wf_ms), t.torch_bwd.push_back(tb), t.weft_bwd.push_back(wb);
  }
  return t;
}

std::vector<double> ratios(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> r;
  for (std::size_t i = 0; i < num.size(); ++i) r.push_back(num[i] / den[i]);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  std::string dtype;     // --dtype float|bf16: only those rows (default both)
  std::int64_t only_e = 0;  // --E N: only head dim N (default 64 and 128)
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (arg == "--dtype" && i + 1 < argc) dtype = argv[++i];
    else if (arg == "--E" && i + 1 < argc) only_e = std::atoll(argv[++i]);
    else {
      std::fprintf(stderr, "usage: sdpa_torch [--reps N] [--dtype float|bf16] [--E 64|128]\n");
      return 2;
    }
  }
  const std::int64_t L = 2048;
  std::printf("weft vs libtorch %s in one process, interleaved rounds; %d threads (torch), %d (OpenMP); %d rounds\n",
              TORCH_VERSION, torch::get_num_threads(), omp_get_max_threads(), reps);
  namespace nd = weft::detail::cpu::flash;
  std::printf("weft SIMD %s, bf16 attention's block products: %s\n", weft::kCpuPacketIsa,
              nd::flash_amx_available()      ? "amx-bf16 tiles"
              : nd::flash_dpbf16_available() ? "avx512-bf16 vdpbf16ps"
              : nd::flash_bfmmla_available() ? "neon-bfmmla"
                                             : "fp32 (converted)");
  std::printf("%-28s %9s %9s %8s   %9s %9s %8s\n", "shape", "weft fwd", "torch fwd", "speedup", "weft bwd", "torch bwd",
              "speedup");
  std::printf("%s\n", std::string(90, '-').c_str());
  for (bool bf16 : {false, true})
    for (std::int64_t E : {64, 128})
      for (bool causal : {false, true}) {
        if ((!dtype.empty() && dtype != (bf16 ? "bf16" : "float")) || (only_e != 0 && only_e != E)) continue;
        const Times t = bf16 ? run_case<weft::bfloat16>(torch::kBFloat16, L, E, causal, reps)
                             : run_case<float>(torch::kFloat32, L, E, causal, reps);
        const std::string name = std::string(bf16 ? "bf16 " : "") + "L=S=" + std::to_string(L) +
                                 " E=" + std::to_string(E) + (causal ? " causal" : "");
        std::printf("%-28s %9.2f %9.2f %7.2fx   %9.2f %9.2f %7.2fx\n", name.c_str(), median(t.weft_fwd),
                    median(t.torch_fwd), median(ratios(t.torch_fwd, t.weft_fwd)), median(t.weft_bwd),
                    median(t.torch_bwd), median(ratios(t.torch_bwd, t.weft_bwd)));
      }
  std::printf("ms: medians over rounds; speedup: median over rounds of torch time / weft time (>= 1.0x: weft is faster)\n");
  return 0;
}
