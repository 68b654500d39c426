// SPDX-License-Identifier: MIT
/// @file The CUDA attention benchmark: weft's FlashAttention-2 forward in TFLOP/s (bf16, N L = 16k tokens, H E = 2048), beside a cuBLAS GEMM roofline and torch's SDPA when python3 imports torch.
//
// FLOPs of a forward: 4 N H L S E (q k^T and p v), halved when causal (FlashAttention's
// convention). Medians of cudaEvent-timed runs after a warm-up.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <weft/weft.hpp>

namespace {

using weft::bfloat16;
using weft::Device;

struct Shape4 {
  std::int64_t N, H, L, E;
  bool causal;
};

/// Median milliseconds of `reps` runs of f, after one warm-up.
template <class F>
double median_ms(int reps, F&& f) {
  f();
  weft::detail::check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(start);
    f();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double attention_tflops(const Shape4& s, double ms) {
  const double flops = 4.0 * double(s.N * s.H) * double(s.L) * double(s.L) * double(s.E) * (s.causal ? 0.5 : 1.0);
  return flops / (ms * 1e-3) / 1e12;
}

/// torch's SDPA on the same shapes and device, in TFLOP/s per line ("" when torch is missing).
std::vector<std::string> torch_results(const std::vector<Shape4>& shapes, int reps) {
  if (std::system("python3 -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1") != 0) return {};
  std::string cases;
  for (const Shape4& s : shapes) {
    char one[96];
    std::snprintf(one, sizeof one, "(%lld, %lld, %lld, %lld, %s), ", (long long)s.N, (long long)s.H, (long long)s.L,
                  (long long)s.E, s.causal ? "True" : "False");
    cases += one;
  }
  const std::string script =
      "import torch, torch.nn.functional as F\n"
      "for N, H, L, E, c in [" + cases + "]:\n"
      "    q, k, v = (torch.randn(N, H, L, E, device='cuda', dtype=torch.bfloat16) for _ in range(3))\n"
      "    F.scaled_dot_product_attention(q, k, v, is_causal=c); torch.cuda.synchronize()\n"
      "    ts = []\n"
      "    for _ in range(" + std::to_string(reps) + "):\n"
      "        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
      "        a.record(); F.scaled_dot_product_attention(q, k, v, is_causal=c); b.record(); b.synchronize()\n"
      "        ts.append(a.elapsed_time(b))\n"
      "    ms = sorted(ts)[len(ts) // 2]\n"
      "    print(4 * N * H * L * L * E * (0.5 if c else 1) / (ms * 1e-3) / 1e12)\n";
  const std::string path = "/tmp/weft_sdpa_cuda_torch.py";
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fputs(script.c_str(), f);
    std::fclose(f);
  }
  std::vector<std::string> lines;
  if (FILE* p = popen(("python3 " + path + " 2>&1").c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) lines.emplace_back(buf, strcspn(buf, "\n"));
    pclose(p);
  }
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help") {
      std::printf("sdpa_cuda [--device cuda] [--quick]: weft's CUDA flash attention forward (bf16) in TFLOP/s,\n"
                  "beside a cuBLAS bf16 GEMM and torch's SDPA (when python3 imports torch with CUDA)\n");
      return 0;
    }
    if (a == "--quick") quick = true;
    else if (a == "--device" && i + 1 < argc) {
      if (std::string(argv[++i]) != "cuda") return std::fprintf(stderr, "sdpa_cuda: only --device cuda\n"), 2;
    } else {
      return std::fprintf(stderr, "sdpa_cuda: unknown argument %s (see --help)\n", a.c_str()), 2;
    }
  }
  if (weft::detail::cuda_device_count() == 0) return std::fprintf(stderr, "sdpa_cuda: no CUDA device\n"), 1;
  const int reps = quick ? 5 : 20;
  std::vector<Shape4> shapes;
  for (std::int64_t E : quick ? std::vector<std::int64_t>{128} : std::vector<std::int64_t>{64, 128, 256})
    for (std::int64_t L : quick ? std::vector<std::int64_t>{4096} : std::vector<std::int64_t>{1024, 4096, 16384})
      for (bool causal : {false, true}) shapes.push_back({16384 / L, 2048 / E, L, E, causal});

  // Roofline: a bf16 GEMM through cuBLAS, 8192^3, into a preallocated output.
  const std::int64_t n = 8192;
  const auto a = weft::randn<bfloat16>({n, n}, 1).to(Device::cuda()), b = weft::randn<bfloat16>({n, n}, 2).to(Device::cuda());
  auto c = weft::empty<bfloat16>({n, n}, Device::cuda());
  const double gemm = 2.0 * n * n * n / (median_ms(reps, [&] {
                        weft::detail::cuda::gemm_strided_batched(a.data(), n, 0, b.data(), n, 0, c.data(), 1, n, n, n,
                                                                 Device::cuda());
                      }) * 1e-3) / 1e12;
  std::printf("cuBLAS bf16 GEMM %lld^3: %.1f TFLOP/s\n", (long long)n, gemm);

  const std::vector<std::string> torch = torch_results(shapes, reps);
  std::printf("%-28s %10s %8s %10s %8s\n", "forward bf16 (N,H,L,E)", "TFLOP/s", "x GEMM", "torch", "x torch");
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape4& s = shapes[i];
    const auto q = weft::randn<bfloat16>({s.N, s.H, s.L, s.E}, 3).to(Device::cuda());
    const auto k = weft::randn<bfloat16>({s.N, s.H, s.L, s.E}, 4).to(Device::cuda());
    const auto v = weft::randn<bfloat16>({s.N, s.H, s.L, s.E}, 5).to(Device::cuda());
    weft::nn::SdpaOptions o;
    o.is_causal = s.causal;
    // The kernel into preallocated outputs (sdpa_forward also allocates them: a cudaMalloc per call).
    namespace nnd = weft::nn::detail;
    const nnd::SdpaShape sh = nnd::sdpa_shape("bench", q.shape(), k.shape(), v.shape(), o);
    auto out = weft::empty<bfloat16>(sh.out_shape(), Device::cuda());
    auto lse = weft::empty<double>(sh.lse_shape(), Device::cuda());
    const double tf = attention_tflops(s, median_ms(reps, [&] { weft::detail::flash_forward_cuda<bfloat16>(q, k, v, sh, out.data(), lse.data()); }));
    char label[64];
    std::snprintf(label, sizeof label, "(%lld,%lld,%lld,%lld)%s", (long long)s.N, (long long)s.H, (long long)s.L,
                  (long long)s.E, s.causal ? " causal" : "");
    const double t = i < torch.size() ? std::atof(torch[i].c_str()) : 0;
    if (t > 0) std::printf("%-28s %10.1f %8.2f %10.1f %8.2f\n", label, tf, tf / gemm, t, tf / t);
    else std::printf("%-28s %10.1f %8.2f %10s %8s\n", label, tf, tf / gemm, "-", "-");
  }
  if (torch.empty()) std::printf("torch: not importable with CUDA here\n");
  else if (torch.size() < shapes.size()) std::printf("torch: %s\n", torch.back().c_str());
  return 0;
}
