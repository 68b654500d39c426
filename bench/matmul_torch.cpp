// SPDX-License-Identifier: MIT
/// @file weft::matmul beside libtorch's in one process, interleaved round by round: fp32 square sizes and GPT-2 124M's shapes (forward and backward), bf16 square sizes; GFLOP/s, the speedup, and weft's fraction of the machine's measured peak.
//
// Built as bench/sdpa_torch is, where Meson finds PyTorch's pip wheel (option torch_peer;
// bench/meson.build): both libraries share the process's one libgomp, the same threads, and the
// same inputs. Each round times torch, then weft (weft first in every other round, so neither
// always runs on the caches and clocks the other left), each timing a run of repetitions of at
// least ~20 ms; outputs are preallocated on both sides (at::mm_out; `out = weft::matmul(a, b)` into
// a weft::Tensor of the product's shape writes in place). The speedup is the median over rounds
// of the per-round ratio torch time / weft time. The roofline is the machine's own peak, measured
// in the same run by bench/peak.hpp: fp32 FMAs for float, the bfloat16 dot-product instruction
// (AMX tiles, vdpbf16ps, BFMMLA) for bf16.
//
// Shapes M x K x N (a: M x K, b: K x N): squares 64 ... 4096; GPT-2 124M's linear layers at 256
// tokens (B = 4, T = 64: qkv, attention projection, MLP up, MLP down), and two backward products
// of the qkv layer: dW = x^T dy, x^T a transposed view of the contiguous activations (read in
// place by both libraries), and dx = dy W.
//
//   OMP_NUM_THREADS=2 chrt -f 1 build/release/bench/matmul_torch [--reps N] [--dtype float|bf16]
//       [--sizes 512,256x768x2304]
#include <omp.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "peak.hpp"
#include "torch_peer.hpp"

namespace {

using weft_bench::to_weft;

using weft_bench::median;
using weft_bench::time_ms;

struct MatmulShape {
  std::int64_t m, k, n;
  bool a_transposed;  // a is the transpose of a contiguous K x M tensor
  const char* role;
  std::string dims() const { return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n); }
};

std::vector<MatmulShape> shapes(bool bf16) {
  std::vector<MatmulShape> s;
  for (std::int64_t n : {64, 128, 256, 512, 1024, 2048, 4096}) s.push_back({n, n, n, false, ""});
  if (bf16) return s;
  s.push_back({256, 768, 2304, false, "gpt2 qkv"});
  s.push_back({256, 768, 768, false, "gpt2 attn proj"});
  s.push_back({256, 768, 3072, false, "gpt2 mlp up"});
  s.push_back({256, 3072, 768, false, "gpt2 mlp down"});
  s.push_back({768, 256, 2304, true, "qkv dW = x^T dy"});
  s.push_back({256, 2304, 768, false, "qkv dx = dy W"});
  return s;
}

/// Whether --sizes asks for the shape: a number N names the square N x N x N, MxKxN any shape.
bool wanted(const std::vector<std::string>& sizes, const MatmulShape& s) {
  if (sizes.empty()) return true;
  for (const std::string& t : sizes)
    if (t == s.dims() || (s.m == s.k && s.k == s.n && t == std::to_string(s.n))) return true;
  return false;
}

struct Result {
  std::vector<double> torch_ms, weft_ms;  // per product, one sample per round
  double error;                           // max |weft - torch| / (|a| |b|), elementwise
  double tolerance;
};

template <class T>
Result run_shape(const MatmulShape& s, torch::ScalarType dtype, int reps) {
  torch::manual_seed(0);
  const torch::Tensor a_stored = (torch::rand(s.a_transposed ? std::vector<std::int64_t>{s.k, s.m}
                                                              : std::vector<std::int64_t>{s.m, s.k}) * 2 - 1)
                                     .to(dtype);
  const torch::Tensor b = (torch::rand({s.k, s.n}) * 2 - 1).to(dtype);
  const torch::Tensor a = s.a_transposed ? a_stored.t() : a_stored;
  torch::Tensor out = torch::empty({s.m, s.n}, dtype);
  weft::Tensor<T> wa_stored = to_weft<T>(a_stored);
  const weft::Tensor<T> wb = to_weft<T>(b);
  const weft::TensorView<T> wa = s.a_transposed ? wa_stored.transpose(0, 1) : wa_stored.view();
  weft::Tensor<T> wout = weft::empty<T>({s.m, s.n});
  const T* const wout_data = wout.data();

  auto run_torch = [&] { at::mm_out(out, a, b); };
  auto run_weft = [&] { wout = weft::matmul(wa, wb); };
  run_torch();  // first calls: workspaces, packing buffers, AMX permission
  run_weft();
  if (wout.data() != wout_data) throw std::runtime_error("weft::matmul reallocated its preallocated output");

  // Both results against the bound of any summation order, sum_k |a_ik| |b_kj| per element: each
  // side is within k u of it (u = 2^-24: fp32 sums), bf16 outputs also within one rounding (2^-9).
  Result r;
  const torch::Tensor bound = torch::mm(a.to(torch::kFloat).abs(), b.to(torch::kFloat).abs());
  const torch::Tensor w = torch::from_blob(wout.data(), {s.m, s.n}, dtype).to(torch::kFloat);
  r.error = ((w - out.to(torch::kFloat)).abs() / bound.clamp_min(1e-30)).max().item<double>();
  r.tolerance = 2 * ((dtype == torch::kBFloat16 ? std::ldexp(1.0, -9) : 0.0) + double(s.k) * std::ldexp(1.0, -24));

  const double once = std::min(time_ms(run_torch), time_ms(run_weft));
  const int count = std::max(1, int(std::ceil(20.0 / std::max(once, 1e-6))));
  auto timing = [count](const auto& f) {
    return time_ms([&] {
             for (int i = 0; i < count; ++i) f();
           }) /
           count;
  };
  for (int round = -1; round < reps; ++round) {  // round -1 warms up
    double t, wt;
    if (round % 2 == 0) {
      t = timing(run_torch);
      wt = timing(run_weft);
    } else {
      wt = timing(run_weft);
      t = timing(run_torch);
    }
    if (round < 0) continue;
    r.torch_ms.push_back(t);
    r.weft_ms.push_back(wt);
  }
  return r;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  std::string dtype;               // --dtype float|bf16: only those rows (default both)
  std::vector<std::string> sizes;  // --sizes: only those shapes (default all)
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (arg == "--dtype" && i + 1 < argc) dtype = argv[++i];
    else if (arg == "--sizes" && i + 1 < argc) sizes = split(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: matmul_torch [--reps N] [--dtype float|bf16] [--sizes LIST]\n"
                   "  LIST: comma-separated N (the square N x N x N) or MxKxN, e.g. 512,256x768x2304\n");
      return 2;
    }
  }
  if (reps < 1 || (!dtype.empty() && dtype != "float" && dtype != "bf16")) {
    std::fprintf(stderr, "matmul_torch: --reps must be >= 1 and --dtype float or bf16\n");
    return 2;
  }
  const int threads = omp_get_max_threads();
  torch::set_num_threads(threads);
  std::printf("weft vs libtorch %s matmul in one process, interleaved rounds\n", TORCH_VERSION);
  std::printf("  cpu: %s; threads: %d (torch::get_num_threads), %d (omp_get_max_threads)\n",
              weft_bench::cpu_model().c_str(), torch::get_num_threads(), threads);
  std::printf("  weft SIMD: %s; weft bf16 matmul: %s\n", weft::kCpuPacketIsa,
              weft::detail::cpu::bf16_gemm_path());
  const weft_bench::Peaks peak = weft_bench::measure_peaks(threads);
  std::printf("  peaks on %d threads (bench/peak.hpp): fp32 %.1f GFLOP/s (%s), bf16 ", threads, peak.fp32,
              peak.fma_instruction.c_str());
  if (peak.bf16 > 0) std::printf("%.1f GFLOP/s (%s)\n", peak.bf16, peak.bf16_instruction.c_str());
  else std::printf("none\n");
  std::printf("  %d rounds after a warm-up round; each round times torch and weft (alternating which goes first)\n"
              "  on the same inputs into preallocated outputs, each timing >= ~20 ms of repeated products\n\n",
              reps);
  std::printf("%-5s %-16s %-16s %9s %9s %8s %7s %9s %s\n", "dtype", "M x K x N", "", "weft", "torch", "weft/",
              "weft", "error /", "check");
  std::printf("%-5s %-16s %-16s %9s %9s %8s %7s %9s\n", "", "", "", "GFLOP/s", "GFLOP/s", "torch", "% peak",
              "bound");
  std::printf("%s\n", std::string(92, '-').c_str());
  int failures = 0;
  for (bool bf16 : {false, true}) {
    if (!dtype.empty() && dtype != (bf16 ? "bf16" : "float")) continue;
    const double roof = bf16 ? peak.bf16 : peak.fp32;
    for (const MatmulShape& s : shapes(bf16)) {
      if (!wanted(sizes, s)) continue;
      const Result r = bf16 ? run_shape<weft::bfloat16>(s, torch::kBFloat16, reps)
                            : run_shape<float>(s, torch::kFloat32, reps);
      const double flops = 2.0 * double(s.m) * double(s.k) * double(s.n);
      const double weft_gflops = flops / (median(r.weft_ms) * 1e6), torch_gflops = flops / (median(r.torch_ms) * 1e6);
      std::vector<double> ratio;
      for (std::size_t i = 0; i < r.weft_ms.size(); ++i) ratio.push_back(r.torch_ms[i] / r.weft_ms[i]);
      const bool ok = r.error <= r.tolerance;
      failures += !ok;
      char fraction[16] = "-";
      if (roof > 0) std::snprintf(fraction, sizeof fraction, "%.0f%%", 100 * weft_gflops / roof);
      std::printf("%-5s %-16s %-16s %9.1f %9.1f %7.2fx %7s %9.1e %s\n", bf16 ? "bf16" : "fp32", s.dims().c_str(), s.role,
                  weft_gflops, torch_gflops, median(ratio), fraction, r.error, ok ? "ok" : "FAIL");
    }
  }
  std::printf("GFLOP/s: 2 M N K per product, from the median time over rounds; weft/torch: median over rounds of\n"
              "torch time / weft time (> 1: weft is faster); %% peak: weft's GFLOP/s over the peak above (fp32 FMA\n"
              "for fp32, the bf16 dot product for bf16); error / bound: max over elements of |weft - torch| /\n"
              "sum_k |a_ik| |b_kj|, FAIL above 2 (k 2^-24, + 2^-9 for bf16's rounding of the output)\n");
  return failures ? 1 : 0;
}
