// SPDX-License-Identifier: MIT
/// @file Prints the machine's compute peaks (bench/peak.hpp): fp32 and fp64 FMA and bfloat16 dot-product GFLOP/s, on one thread and on all threads at once.
//
// The roofline of the compute-bound benches: a GEMM's GFLOP/s over these is the fraction of what
// the cores can do at all, where a large SGEMM's is the fraction of another kernel's result.
//
//   chrt -f 1 build/release/bench/peak [--threads N] [--json FILE]
#include "peak.hpp"

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.hpp"

namespace {

void usage(const char* argv0) {
  std::printf(
      "usage: %s [--threads N] [--json FILE]\n"
      "  --threads N  the all-threads row's thread count (default: OpenMP's maximum)\n"
      "  --json FILE  also write the results as JSON\n"
      "On a shared machine, run it as `chrt -f 1 %s ...`.\n",
      argv0, argv0);
}

/// `value` with one decimal, or `none` where the build has no bfloat16 dot product (p.bf16 is 0).
std::string bf16_cell(const weft_bench::Peaks& p, double value, const char* none) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", value);
  return p.bf16 > 0 ? buf : none;
}

bool write_json(const std::string& path, const std::vector<weft_bench::Peaks>& rows) {
  using weft_bench::json_escape;
  std::ofstream f(path);
  f << "{\n  \"program\": \"peak\",\n  \"cpu\": \"" << json_escape(weft_bench::cpu_model())
    << "\",\n  \"fma_instruction\": \"" << json_escape(rows[0].fma_instruction) << "\",\n  \"bf16_instruction\": \""
    << json_escape(rows[0].bf16_instruction) << "\",\n  \"results\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const weft_bench::Peaks& p = rows[i];
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "    {\"threads\": %d, \"fp32_gflops\": %.1f, \"fp32_gflops_per_thread\": %.1f, "
                  "\"fp64_gflops\": %.1f, \"fp64_gflops_per_thread\": %.1f, \"bf16_gflops\": %s, "
                  "\"bf16_gflops_per_thread\": %s}%s\n",
                  p.threads, p.fp32, p.fp32 / p.threads, p.fp64, p.fp64 / p.threads,
                  bf16_cell(p, p.bf16, "null").c_str(), bf16_cell(p, p.bf16 / p.threads, "null").c_str(),
                  i + 1 < rows.size() ? "," : "");
    f << buf;
  }
  f << "  ]\n}\n";
  return bool(f);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = weft_bench::max_threads();
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc) json = argv[++i];
    else if (a == "--help" || a == "-h") {
      usage(argv[0]);
      return 0;
    } else {
      usage(argv[0]);
      return 2;
    }
  }
  if (threads < 1) {
    std::fprintf(stderr, "--threads must be at least 1\n");
    return 2;
  }
  std::printf("weft peak benchmark, cpu\n");
  const std::string model = weft_bench::cpu_model();
  if (!model.empty())
    std::printf("  cpu: %s, %u hardware threads\n", model.c_str(), std::thread::hardware_concurrency());
  const double load = weft_bench::load_average();
  if (load >= 0) std::printf("  load average at start: %.2f\n", load);

  std::vector<weft_bench::Peaks> rows{weft_bench::measure_peaks(1)};
  if (threads > 1) rows.push_back(weft_bench::measure_peaks(threads));
  std::printf("  fp32 / fp64: %s, %d independent chains a thread; bf16: %s\n", rows[0].fma_instruction.c_str(),
              weft_bench::peak_detail::kChains, rows[0].bf16_instruction.c_str());
  std::printf("  each peak: the best of 5 runs of ~30 ms, all threads at once between two barriers\n\n");
  std::printf("%7s %13s %11s %13s %11s %13s %11s\n", "threads", "fp32 GFLOP/s", "per thread", "fp64 GFLOP/s",
              "per thread", "bf16 GFLOP/s", "per thread");
  std::printf("%s\n", std::string(84, '-').c_str());
  for (const weft_bench::Peaks& p : rows)
    std::printf("%7d %13.1f %11.1f %13.1f %11.1f %13s %11s\n", p.threads, p.fp32, p.fp32 / p.threads, p.fp64,
                p.fp64 / p.threads, bf16_cell(p, p.bf16, "none").c_str(), bf16_cell(p, p.bf16 / p.threads, "none").c_str());
  std::printf("GFLOP/s: 2 per multiply-add, over all threads of the row\n");
  if (!json.empty()) {
    if (!write_json(json, rows)) {
      std::fprintf(stderr, "cannot write %s\n", json.c_str());
      return 1;
    }
    std::printf("\nwrote %s\n", json.c_str());
  }
  return 0;
}
