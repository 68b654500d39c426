// SPDX-License-Identifier: MIT
/// @file bfloat16 matmul benchmark: weft::matmul's GFLOP/s at M = N = K = 512, 2048 and 4096 beside the portable path (cast to float, Eigen SGEMM, round) and a large Eigen SGEMM (the FLOP roofline) of the same run, and as fractions of the machine's measured peaks.
//
// FLOPs: 2 M N K per product. weft::matmul runs the AMX GEMM (backend/cpu/gemm/amx.hpp) in a
// build for AMX-BF16 where Linux permits tile data, the vdpbf16ps GEMM (backend/cpu/gemm/dpbf16.hpp)
// in a build for AVX512-BF16 without AMX, the BFMMLA GEMM (backend/cpu/gemm/bfmmla.hpp) in an
// aarch64 build with FEAT_BF16, else the portable path itself (the header line says which:
// bf16_gemm_path()). A target is the median over rounds of (portable time /
// weft time) within a round. The SGEMM is itself a kernel with its own losses, so every row is
// also a fraction of the peak its instructions can reach (bench/peak.hpp, measured at start on the
// bench's threads): the bf16 dot product's for weft's rows (bf16_roof: the FMA peak where weft
// converts to float), the fp32 FMA peak for the SGEMM and the portable path.
#include <Eigen/Core>

#include "bench_common.hpp"

using namespace weft_bench;
using weft::bfloat16;
using weft::Tensor;

namespace {

int run(const Options& opt) {
  if (opt.device == "cuda") return needs_cuda_build("matmul_bf16");
  Report report;
  const int threads = max_threads();
  print_cpu_machine("matmul_bf16", threads, "OpenMP: weft's GEMM blocks; Eigen's GEMM threads", report);
  const Peaks peak = measure_peaks(threads);
  std::printf("  %s\n", peaks_line(peak).c_str());
  report.notes.push_back(peaks_line(peak));
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 3 : 9, warmup = 1;
  print_cpu_method(reps, warmup,
                   "  GFLOP/s: 2 M N K per product; % peak: weft's bf16 rows of the bf16 peak where its GEMM is\n"
                   "  native (else of fp32's: it converts), the SGEMM and cast+sgemm+round of the fp32 FMA peak\n");
  // The path runs where the first matmul would (this asks Linux for AMX tile data, once).
  const std::string path = weft::detail::cpu::bf16_gemm_path();
  std::printf("  weft bf16 matmul: %s\n\n", path.c_str());
  report.notes.push_back("weft bf16 matmul: " + path);

  // The roofline: one large SGEMM through Eigen, threaded as weft::matmul runs it.
  const std::int64_t big = opt.quick ? 1024 : 2048;
  Eigen::MatrixXf A = Eigen::MatrixXf::Random(big, big), B = Eigen::MatrixXf::Random(big, big), C(big, big);
  Variant sgemm("eigen sgemm fp32", [&] { return time_ms([&] { C.noalias() = A * B; }); });
  const double sgemm_flops = 2.0 * double(big) * double(big) * double(big);

  struct Case {
    std::int64_t n;
    Tensor<bfloat16> a, b;
  };
  std::vector<Case> cases;
  std::vector<std::int64_t> sizes{512, big};
  if (!opt.quick) sizes.push_back(4096);
  for (std::int64_t n : sizes)
    cases.push_back({n, make_tensor<bfloat16>({n, n}, 2 * std::uint64_t(n), -1, 1),
                     make_tensor<bfloat16>({n, n}, 2 * std::uint64_t(n) + 1, -1, 1)});
  std::vector<Variant> weft_v, cast_v;
  weft_v.reserve(cases.size());
  cast_v.reserve(cases.size());
  for (Case& c : cases) {
    weft_v.emplace_back("weft matmul bf16", [&c] { return time_ms([&] { weft::eval(weft::matmul(c.a, c.b)); }); });
    // The path weft::matmul takes without AMX (ops/matmul.hpp), spelled out.
    cast_v.emplace_back("cast+sgemm+round", [&c] {
      return time_ms([&] {
        const Tensor<float> cf = weft::matmul(weft::eval(weft::cast<float>(c.a)), weft::eval(weft::cast<float>(c.b)));
        weft::eval(weft::cast<bfloat16>(cf));
      });
    });
  }
  std::vector<Variant*> all{&sgemm};
  for (std::size_t i = 0; i < cases.size(); ++i) all.push_back(&weft_v[i]), all.push_back(&cast_v[i]);
  measure(all, warmup, reps);

  std::printf("%-24s %-24s %10s %10s %9s %9s %7s\n", "workload", "variant", "median ms", "min ms", "GFLOP/s",
              "vs sgemm", "% peak");
  std::printf("%s\n", std::string(100, '-').c_str());
  const double sgemm_gflops = sgemm_flops / (sgemm.med() * 1e6);
  auto row = [&](const std::string& workload, const Variant& v, double flops, double roof) {
    const double gflops = flops / (v.med() * 1e6);
    std::printf("%-24s %-24s %10.2f %10.2f %9.1f %8.0f%% %6.0f%%\n", workload.c_str(), v.name.c_str(), v.med(), v.min(),
                gflops, 100 * gflops / sgemm_gflops, 100 * gflops / roof);
    // Rows carry FLOPs as elements x 1 byte, so the JSON's "gbps" field reads as GFLOP/s.
    report.rows.push_back(Row{workload, v.name, std::int64_t(flops), 1.0, v.med(), v.min(), gflops / roof});
  };
  const std::string big_name = std::to_string(big) + "^3";
  row("roofline " + big_name, sgemm, sgemm_flops, peak.fp32);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const double n = double(cases[i].n), flops = 2 * n * n * n;
    const std::string name = "bf16 " + std::to_string(cases[i].n) + "^3";
    row(name, weft_v[i], flops, bf16_roof(peak));
    row(name, cast_v[i], flops, peak.fp32);
    report.targets.push_back(make_target("weft vs cast+sgemm+round, " + name, 1.25, "x", cast_v[i].ms, weft_v[i].ms));
  }
  {  // weft's bf16 GFLOP/s as a fraction of the SGEMM's, per round
    const double n = double(big), flops = 2 * n * n * n;
    std::vector<double> scaled;
    for (double t : sgemm.ms) scaled.push_back(t * flops / sgemm_flops);
    report.targets.push_back(make_target("weft bf16 " + big_name + " vs sgemm", 1.0, "%", scaled, weft_v[1].ms));
  }
  print_targets(report.targets);
  return write_json_if_asked(opt, "matmul_bf16", "cpu", threads, reps, weft::kCpuPacketIsa, report);
}

}  // namespace

int main(int argc, char** argv) { return run_main(argc, argv, "matmul_bf16", "cpu", run); }
