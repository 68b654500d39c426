// SPDX-License-Identifier: MIT
/// @file Attention benchmark: flash forward and backward GFLOP/s against a large Eigen SGEMM of the same run and the machine's measured peak, flash against math at L = S = 4096, and peak memory per L.
//
// Shapes: fp32 and bf16, N = 1, H = 8, L = S = 2048, E = Ev = 64 and 128, causal and not.
// FLOPs counted as FlashAttention does: forward 4 N H L S E (two GEMMs), backward 2.5x that
// (five GEMMs), half of each when causal. A target is the median over rounds of
// (this variant's GFLOP/s) / (the SGEMM's GFLOP/s) within a round, or a ratio of times. The
// SGEMM is itself a kernel with its own losses, so every row is also a fraction of the peak its
// instructions can reach (bench/peak.hpp, measured at start on the bench's threads): fp32 rows
// of the FMA peak, bf16 rows of the bf16 dot product's (bf16_roof: the FMA peak where weft
// converts to float).
// Peak memory: each size runs in a fresh process that prints its own peak RSS (VmHWM).
#include <unistd.h>

#include <Eigen/Core>

#include "bench_common.hpp"

using namespace weft_bench;
using weft::Tensor;
namespace nn = weft::nn;

namespace {

struct AttnCase {
  std::int64_t L, E;
  bool causal;
  bool bf16 = false;
  std::string name() const {
    return std::string(bf16 ? "bf16 " : "") + "L=S=" + std::to_string(L) + " E=" + std::to_string(E) +
           (causal ? " causal" : "");
  }
  /// Forward FLOPs: q k^T and p v, 2 L S E each per head; causal keeps half.
  double forward_flops(std::int64_t heads) const { return 4.0 * double(heads * L * L * E) * (causal ? 0.5 : 1.0); }
};

constexpr std::int64_t kHeads = 8;

/// One case's operands and timed calls.
struct AttnRun {
  virtual ~AttnRun() = default;
  virtual void forward() const = 0;
  virtual void backward() const = 0;
};

template <class T>
struct AttnInputs : AttnRun {
  Tensor<T> q, k, v, dout;
  nn::SdpaOptions opts;
  nn::SdpaOutput<T> fwd;
  explicit AttnInputs(const AttnCase& c) {
    const weft::Shape shape{1, kHeads, c.L, c.E};
    q = make_tensor<T>(shape, 1, -1, 1);
    k = make_tensor<T>(shape, 2, -1, 1);
    v = make_tensor<T>(shape, 3, -1, 1);
    dout = make_tensor<T>(shape, 4, -1, 1);
    opts.is_causal = c.causal;
    fwd = nn::sdpa_forward(q, k, v, opts);
  }
  void forward() const override { nn::sdpa_forward(q, k, v, opts); }
  void backward() const override { nn::sdpa_backward(dout, q, k, v, fwd.out, fwd.lse, opts); }
};

/// The child's side of child_peak_rss_mib: one forward pass of `backend` at (1, 8, L, L, 64), then
/// its peak resident set (VmHWM of /proc/self/status, in kB) on stdout.
int rss_child(std::int64_t L, const std::string& backend) {
  {
    nn::SdpaBackendGuard guard({backend == "math" ? nn::SdpaBackend::math : nn::SdpaBackend::flash});
    AttnInputs<float> in(AttnCase{L, 64, false});
  }
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) std::printf("%lld\n", std::atoll(line.c_str() + 6));
  return 0;
}

/// Peak RSS (MiB) of a fresh process (this program, re-executed: libgomp's threads do not survive
/// a plain fork) that runs one forward pass of `backend` at (1, 8, L, L, 64). The child reads its
/// own high-water mark: a parent's rusage of a child counts the parent's RSS at fork (Linux keeps
/// maxrss across exec).
double child_peak_rss_mib(std::int64_t L, const char* backend) {
  std::fflush(stdout);
  char exe[4096] = {};
  if (readlink("/proc/self/exe", exe, sizeof exe - 1) <= 0) return NAN;
  const std::string cmd = std::string("'") + exe + "' --rss-child " + std::to_string(L) + " " + backend;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return NAN;
  long long kb = -1;
  if (std::fscanf(pipe, "%lld", &kb) != 1) kb = -1;
  return pclose(pipe) == 0 && kb > 0 ? double(kb) / 1024.0 : NAN;
}

int run(const Options& opt) {
  if (opt.device == "cuda") {
    std::printf("sdpa: attention runs on the CPU in this version; no CUDA benchmark\n");
    return 0;
  }
  Report report;
  const int threads = max_threads();
  print_cpu_machine("sdpa", threads, "OpenMP: flash's (head, block) units; Eigen's GEMM threads", report);
  const Peaks peak = measure_peaks(threads);
  std::printf("  %s\n", peaks_line(peak).c_str());
  report.notes.push_back(peaks_line(peak));
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 2 : 7, warmup = 1;
  print_cpu_method(reps, warmup,
                   "  GFLOP/s: forward 4 N H L S E (half when causal), backward 2.5x forward; SGEMM 2 n^3\n"
                   "  % peak: fp32 rows of the fp32 FMA peak, bf16 rows of the bf16 peak where weft's bf16 GEMM\n"
                   "  is native (else of fp32's: it converts)\n\n");

  // The roofline: one large SGEMM through Eigen, threaded as weft::matmul runs it.
  const std::int64_t n = opt.quick ? 1024 : 2048;
  Eigen::MatrixXf A = Eigen::MatrixXf::Random(n, n), B = Eigen::MatrixXf::Random(n, n), C(n, n);
  Variant sgemm("eigen sgemm " + std::to_string(n) + "^3", [&] { return time_ms([&] { C.noalias() = A * B; }); });
  const double sgemm_flops = 2.0 * double(n) * double(n) * double(n);
  // bf16's roofline: weft's bf16 matmul of the same size (its native GEMM where the build has one).
  const Tensor<weft::bfloat16> Ab = make_tensor<weft::bfloat16>({n, n}, 5, -1, 1),
                               Bb = make_tensor<weft::bfloat16>({n, n}, 6, -1, 1);
  Tensor<weft::bfloat16> Cb = weft::empty<weft::bfloat16>({n, n});
  Variant bgemm("weft bf16 matmul " + std::to_string(n) + "^3 (" + weft::detail::cpu::bf16_gemm_path() + ")",
                [&] { return time_ms([&] { Cb = weft::matmul(Ab, Bb); }); });

  const std::int64_t L = opt.quick ? 1024 : 2048;
  std::vector<AttnCase> cases;
  for (bool bf16 : {false, true})
    for (std::int64_t E : {64, 128})
      for (bool causal : {false, true}) cases.push_back({L, E, causal, bf16});
  std::vector<std::unique_ptr<AttnRun>> inputs;
  std::vector<Variant> fwd, bwd;
  fwd.reserve(cases.size());
  bwd.reserve(cases.size());
  for (const AttnCase& c : cases) {
    if (c.bf16) {
      inputs.push_back(std::make_unique<AttnInputs<weft::bfloat16>>(c));
    } else {
      inputs.push_back(std::make_unique<AttnInputs<float>>(c));
    }
    const AttnRun* in = inputs.back().get();
    fwd.emplace_back("flash forward", [in] { return time_ms([&] { in->forward(); }); });
    bwd.emplace_back("flash backward", [in] { return time_ms([&] { in->backward(); }); });
  }
  std::vector<Variant*> all{&sgemm, &bgemm};
  for (std::size_t i = 0; i < cases.size(); ++i) all.push_back(&fwd[i]), all.push_back(&bwd[i]);
  measure(all, warmup, reps);

  std::printf("%-28s %-24s %10s %10s %9s %9s %7s\n", "workload", "variant", "median ms", "min ms", "GFLOP/s", "vs gemm",
              "% peak");
  std::printf("%s\n", std::string(104, '-').c_str());
  // "vs gemm": of the SGEMM's rate for fp32 rows, of the bf16 matmul's for bf16 rows.
  const double sgemm_gflops = sgemm_flops / (sgemm.med() * 1e6), bgemm_gflops = sgemm_flops / (bgemm.med() * 1e6);
  auto row = [&](const std::string& workload, const Variant& v, double flops, bool bf16 = false) {
    const double gflops = flops / (v.med() * 1e6), roof = bf16 ? bf16_roof(peak) : peak.fp32;
    std::printf("%-28s %-24s %10.2f %10.2f %9.1f %8.0f%% %6.0f%%\n", workload.c_str(), v.name.c_str(), v.med(), v.min(),
                gflops, 100 * gflops / (bf16 ? bgemm_gflops : sgemm_gflops), 100 * gflops / roof);
    // Rows carry FLOPs as elements x 1 byte, so the JSON's "gbps" field reads as GFLOP/s.
    report.rows.push_back(Row{workload, v.name, std::int64_t(flops), 1.0, v.med(), v.min(), gflops / roof});
  };
  row("roofline", sgemm, sgemm_flops);
  row("roofline bf16", bgemm, sgemm_flops, true);
  // Targets on FLOP rates: reference time scaled by (variant FLOPs / SGEMM FLOPs).
  auto flop_target = [&](const std::string& name, double goal, const Variant& v, double flops) {
    std::vector<double> scaled;
    for (double t : sgemm.ms) scaled.push_back(t * flops / sgemm_flops);
    report.targets.push_back(make_target(name, goal, "%", scaled, v.ms));
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const double f = cases[i].forward_flops(kHeads);
    row(cases[i].name(), fwd[i], f, cases[i].bf16);
    row(cases[i].name(), bwd[i], 2.5 * f, cases[i].bf16);
    if (cases[i].bf16) continue;  // bf16's peer is PyTorch's kernel (bench/compare_torch.py sdpa --dtype bf16)
    flop_target("forward " + cases[i].name() + " vs sgemm", 0.50, fwd[i], f);
    flop_target("backward " + cases[i].name() + " vs sgemm", 0.35, bwd[i], 2.5 * f);
  }

  // Flash against the math backend (materialized L x S weights) at L = S = 4096.
  {
    const std::int64_t Lm = opt.quick ? 2048 : 4096;
    AttnInputs<float> in(AttnCase{Lm, 64, false});
    Variant flash("flash forward", [&] { return time_ms([&] { in.forward(); }); });
    Variant math("math forward", [&] {
      nn::SdpaBackendGuard guard({nn::SdpaBackend::math});
      return time_ms([&] { in.forward(); });
    });
    measure({&flash, &math}, 1, std::max(2, reps / 2));
    const AttnCase c{Lm, 64, false};
    row(c.name(), flash, c.forward_flops(kHeads));
    row(c.name(), math, c.forward_flops(kHeads));
    report.targets.push_back(make_target("flash vs math forward, " + c.name(), 3.0, "x", math.ms, flash.ms));
  }
  print_targets(report.targets);

  std::printf("\npeak RSS of a child running one forward pass, H=8 E=64 fp32 (inputs: 4 x 8 L 64 x 4 bytes):\n");
  std::printf("%8s %14s %14s\n", "L = S", "flash MiB", "math MiB");
  for (std::int64_t l : {1024, 2048, 4096, 8192}) {
    const double f = child_peak_rss_mib(l, "flash");
    const double m = l <= 4096 ? child_peak_rss_mib(l, "math") : NAN;
    std::printf("%8lld %14.1f %14.1f\n", (long long)l, f, m);
    report.notes.push_back("peak RSS L=" + std::to_string(l) + ": flash " + std::to_string(f) + " MiB, math " +
                           std::to_string(m) + " MiB");
  }
  return write_json_if_asked(opt, "sdpa", "cpu", threads, reps, weft::kCpuPacketIsa, report);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--rss-child") return rss_child(std::atoll(argv[2]), argv[3]);
  return run_main(argc, argv, "sdpa", "cpu", run);
}
