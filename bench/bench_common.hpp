// SPDX-License-Identifier: MIT
/// @file What the benchmark programs share: options, interleaved timing, the copy and compute rooflines, tables and JSON.
//
// The methodology (bench/pointwise.cpp describes it in full): every variant
// of a workload runs once per round, in turn, after a short idle pause;
// medians and minimums over rounds are reported; a target is the median over
// rounds of (reference time / measured time) within a round; GB/s counts the
// bytes that must move, and "vs copy" compares with the best of three
// parallel copies of the same number of bytes, measured in the same rounds.
//
// Include it after any Eigen header that needs EIGEN_USE_THREADS (it includes
// weft, which includes Eigen/Core). nvcc compiles the part above the CPU
// section (bench/pointwise_cuda.cu).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#if !defined(__CUDACC__) && defined(__AVX__)
#include <immintrin.h>
#endif

#include <weft/weft.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

#if !defined(__CUDACC__)
#include "peak.hpp"
#endif

namespace weft_bench {

// ---------------------------------------------------------------- options
/// Pause before each timed run. OpenMP's idle workers spin for a few
/// milliseconds after a parallel region (libgomp: GOMP_SPINCOUNT, ~3-6 ms
/// measured here) and would take a core from the next variant's threads
/// (Eigen's thread pool); the pause lets them go to sleep first.
inline int g_settle_ms = 10;

struct Options {
  bool quick = false;
  std::string device;
  std::string json;
  int reps = 0;  // 0: the default for quick / full
};

inline void usage(const char* argv0) {
  std::printf(
      "usage: %s [--quick] [--device cpu|cuda] [--reps N] [--settle-ms N] [--json FILE]\n"
      "  --quick        fewer repetitions (a smoke run)\n"
      "  --device D     cpu (the host build) or cuda (the .cu build)\n"
      "  --reps N       timed repetitions per variant (after warm-up)\n"
      "  --settle-ms N  idle pause before each timed run (default 10; lets spinning workers sleep)\n"
      "  --json FILE    also write the results as JSON\n"
      "On a shared machine, run it as `chrt -f 1 %s ...` for numbers that other work does not disturb.\n",
      argv0, argv0);
}

inline bool parse(int argc, char** argv, Options& o, const char* default_device) {
  o.device = default_device;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick") o.quick = true;
    else if (a == "--device") o.device = value("--device");
    else if (a.rfind("--device=", 0) == 0) o.device = a.substr(9);
    else if (a == "--json") o.json = value("--json");
    else if (a.rfind("--json=", 0) == 0) o.json = a.substr(7);
    else if (a == "--reps") o.reps = std::atoi(value("--reps").c_str());
    else if (a == "--settle-ms") g_settle_ms = std::atoi(value("--settle-ms").c_str());
    else if (a == "--help" || a == "-h") {
      usage(argv[0]);
      std::exit(0);
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      usage(argv[0]);
      return false;
    }
  }
  if (o.device != "cpu" && o.device != "cuda") {
    std::fprintf(stderr, "--device must be cpu or cuda, got '%s'\n", o.device.c_str());
    return false;
  }
  return true;
}

// ------------------------------------------------------------- statistics
inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
inline double minimum(const std::vector<double>& v) { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); }

/// One timed variant of a workload: its name, the work, and its samples (ms).
struct Variant {
  Variant(std::string n, std::function<double()> f) : name(std::move(n)), run(std::move(f)) {}
  std::string name;
  std::function<double()> run;  // returns the elapsed milliseconds of one execution
  std::vector<double> ms;
  double med() const { return median(ms); }
  double min() const { return minimum(ms); }
};

/// Warm-up rounds, then `reps` rounds in which every variant runs once, in
/// turn (interleaved, so slow drifts of the machine hit every variant alike).
inline void measure(std::vector<Variant*> variants, int warmup, int reps) {
  auto settle = [] {
    if (g_settle_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(g_settle_ms));
  };
  for (int r = 0; r < warmup; ++r)
    for (Variant* v : variants) settle(), v->run();
  for (int r = 0; r < reps; ++r)
    for (Variant* v : variants) settle(), v->ms.push_back(v->run());
}

/// One row of the results (also a JSON object).
struct Row {
  std::string workload, variant;
  std::int64_t elements;
  double bytes_per_element;
  double median_ms, min_ms;
  double peak_fraction = NAN;  // GFLOP/s over the compute peak (bench/peak.hpp); NAN: not compute-bound
  double gbps() const { return double(elements) * bytes_per_element / (median_ms * 1e-3) / 1e9; }
};

/// A target ratio of times, reference / fused (a
/// fraction of copy bandwidth, or a speedup), against its goal. `value` is
/// the median over rounds of the ratio within each round: the variants of a
/// round ran back to back, so a slow spell of the machine cancels out.
struct Target {
  std::string name;
  double goal;
  std::string unit;  // "x" for speedups, "%" for fractions of copy bandwidth
  double value = NAN, of_medians = NAN, of_mins = NAN;
  bool met() const { return value >= goal; }
};

/// Target `name`: reference time / fused time, from per-round samples.
inline Target make_target(std::string name, double goal, std::string unit, const std::vector<double>& reference,
                          const std::vector<double>& fused) {
  Target t{std::move(name), goal, std::move(unit)};
  std::vector<double> per_round;
  for (std::size_t r = 0; r < std::min(reference.size(), fused.size()); ++r)
    per_round.push_back(reference[r] / fused[r]);
  t.value = median(per_round);
  t.of_medians = median(reference) / median(fused);
  t.of_mins = minimum(reference) / minimum(fused);
  return t;
}

struct Report {
  std::vector<Row> rows;
  std::vector<Target> targets;
  std::vector<std::string> notes;
};

inline void print_header() {
  std::printf("%-34s %-24s %10s %10s %9s %9s\n", "workload", "variant", "median ms", "min ms", "GB/s",
              "vs copy");
  std::printf("%s\n", std::string(100, '-').c_str());
}

inline void print_row(const Row& r, double copy_gbps) {
  std::printf("%-34s %-24s %10.3f %10.3f %9.1f %8.0f%%\n", r.workload.c_str(), r.variant.c_str(), r.median_ms,
              r.min_ms, r.gbps(), 100.0 * r.gbps() / copy_gbps);
}

inline void print_targets(const std::vector<Target>& targets) {
  std::printf("\n%-44s %9s %9s %9s %8s  %s\n", "target", "measured", "(medians", "mins)", "goal",
              "status");
  std::printf("%s\n", std::string(92, '-').c_str());
  for (const Target& t : targets) {
    if (t.unit == "x")
      std::printf("%-44s %8.2fx %8.2fx %8.2fx %7.2fx  %s\n", t.name.c_str(), t.value, t.of_medians, t.of_mins, t.goal,
                  t.met() ? "met" : "MISSED");
    else
      std::printf("%-44s %8.0f%% %8.0f%% %8.0f%% %7.0f%%  %s\n", t.name.c_str(), 100 * t.value, 100 * t.of_medians,
                  100 * t.of_mins, 100 * t.goal, t.met() ? "met" : "MISSED");
  }
  std::printf("measured: median over rounds of (reference time / fused time) within a round; (medians, mins):\n"
              "the same ratio of the medians and of the minimum times. Fractions of copy bandwidth are\n"
              "copy time / fused time for the same bytes.\n");
}

inline std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

/// Writes the report as JSON: `program` (the benchmark's name), the run's settings, rows, targets, notes.
inline bool write_json(const std::string& path, const std::string& program, const std::string& device, int threads,
                       int reps, bool quick, const std::string& isa, const Report& rep) {
  std::ofstream f(path);
  if (!f) return false;
  char buf[640];
  f << "{\n  \"program\": \"" << json_escape(program) << "\",\n  \"device\": \"" << device
    << "\",\n  \"threads\": " << threads << ",\n  \"reps\": " << reps << ",\n  \"quick\": "
    << (quick ? "true" : "false") << ",\n  \"isa\": \"" << json_escape(isa) << "\",\n  \"results\": [\n";
  for (std::size_t i = 0; i < rep.rows.size(); ++i) {
    const Row& r = rep.rows[i];
    char fraction[32] = "null";  // every row has the field, so that all rows read alike
    if (!std::isnan(r.peak_fraction)) std::snprintf(fraction, sizeof fraction, "%.4f", r.peak_fraction);
    std::snprintf(buf, sizeof buf,
                  "    {\"workload\": \"%s\", \"variant\": \"%s\", \"elements\": %lld, \"bytes_per_element\": %g, "
                  "\"median_ms\": %.6f, \"min_ms\": %.6f, \"gbps\": %.3f, \"peak_fraction\": %s}%s\n",
                  json_escape(r.workload).c_str(), json_escape(r.variant).c_str(), (long long)r.elements,
                  r.bytes_per_element, r.median_ms, r.min_ms, r.gbps(), fraction, i + 1 < rep.rows.size() ? "," : "");
    f << buf;
  }
  f << "  ],\n  \"targets\": [\n";
  for (std::size_t i = 0; i < rep.targets.size(); ++i) {
    const Target& t = rep.targets[i];
    std::snprintf(buf, sizeof buf,
                  "    {\"name\": \"%s\", \"value\": %.4f, \"ratio_of_medians\": %.4f, \"ratio_of_mins\": %.4f, "
                  "\"goal\": %.4f, \"unit\": \"%s\", \"met\": %s}%s\n",
                  json_escape(t.name).c_str(), t.value, t.of_medians, t.of_mins, t.goal, t.unit.c_str(),
                  t.met() ? "true" : "false", i + 1 < rep.targets.size() ? "," : "");
    f << buf;
  }
  f << "  ],\n  \"notes\": [";
  for (std::size_t i = 0; i < rep.notes.size(); ++i)
    f << (i ? ", " : "") << "\"" << json_escape(rep.notes[i]) << "\"";
  f << "]\n}\n";
  return bool(f);
}

/// Writes the report to `--json FILE` when one was asked for; returns the
/// program's exit status (1 when the file cannot be written).
inline int write_json_if_asked(const Options& opt, const std::string& program, const std::string& device, int threads,
                               int reps, const std::string& isa, const Report& rep) {
  if (opt.json.empty()) return 0;
  if (!write_json(opt.json, program, device, threads, reps, opt.quick, isa, rep)) {
    std::fprintf(stderr, "cannot write %s\n", opt.json.c_str());
    return 1;
  }
  std::printf("\nwrote %s\n", opt.json.c_str());
  return 0;
}

/// A deterministic value in [lo, hi) for element i (a cheap integer hash).
inline float hashed(std::uint64_t seed, std::uint64_t i, float lo, float hi) {
  std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return lo + (hi - lo) * float(x >> 40) * (1.0f / 16777216.0f);
}

/// The CPU's model name and the 1-minute load average (Linux; empty / -1 elsewhere).
inline std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      std::size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "";
}
inline double load_average() {
  std::ifstream f("/proc/loadavg");
  double load = -1;
  f >> load;
  return load;
}

// =====================================================================
// CPU
// =====================================================================
using Clock = std::chrono::steady_clock;

template <class F>
double time_ms(F&& f) {
  auto t0 = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// [begin, end) of thread t of `threads` over n elements: contiguous blocks
/// (the split weft's CPU executor and OpenMP's static schedule use), in
/// multiples of 16 elements so vector stores stay aligned.
inline void thread_range(std::int64_t n, int threads, int t, std::int64_t& begin, std::int64_t& end) {
  std::int64_t chunk = ((n + threads - 1) / threads + 15) / 16 * 16;
  begin = std::min(n, std::int64_t(t) * chunk);
  end = std::min(n, begin + chunk);
}

/// Runs f(begin, end) once in every OpenMP thread, on that thread's block of
/// [0, n) (thread_range).
template <class F>
void for_each_thread_block(std::int64_t n, F&& f) {
  WEFT_PRAGMA_OMP(omp parallel)
  {
    std::int64_t b, e;
#if defined(_OPENMP)
    thread_range(n, omp_get_num_threads(), omp_get_thread_num(), b, e);
#else
    b = 0, e = n;
#endif
    f(b, e);
  }
}

/// Fills p[0, n) with hashed values in [lo, hi), each thread touching its own
/// block first so its pages live where that thread runs.
template <class T>
void first_touch_fill(T* p, std::int64_t n, std::uint64_t seed, float lo, float hi) {
  for_each_thread_block(n, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) p[i] = T(hashed(seed, std::uint64_t(i), lo, hi));
  });
}

template <class T>
weft::Tensor<T> make_tensor(const weft::Shape& shape, std::uint64_t seed, float lo = -4.0f, float hi = 4.0f) {
  weft::Tensor<T> t = weft::empty<T>(shape);
  first_touch_fill(t.data(), t.numel(), seed, lo, hi);
  return t;
}

// The rest is host-only (nvcc's builds time CUDA kernels with bench_cuda.hpp).
#if !defined(__CUDACC__)

/// The threads weft's CPU kernels may use (OpenMP's maximum).
inline int max_threads() { return weft::detail::cpu::max_threads(); }

// ---- compute peaks: the FLOP roofline ----------------------------------------

/// The header line naming the peaks that a run's "% peak" figures are fractions of.
inline std::string peaks_line(const Peaks& p) {
  char fp32[160], bf16[96] = "none";
  std::snprintf(fp32, sizeof fp32, "peaks on %d threads (bench/peak.hpp): fp32 %.1f GFLOP/s (%s)", p.threads, p.fp32,
                p.fma_instruction.c_str());
  if (p.bf16 > 0) std::snprintf(bf16, sizeof bf16, "%.1f GFLOP/s (%s)", p.bf16, p.bf16_instruction.c_str());
  return std::string(fp32) + ", bf16 " + bf16;
}

/// The peak weft's bfloat16 matmul and attention are held to: the bf16 dot product's where weft has
/// a native bf16 GEMM (attention runs the same instruction), else the FMA peak, since they convert
/// to float (so too in an AMX build refused tile data, whose peak.bf16 is vdpbf16ps's, a kernel
/// weft does not build there).
inline double bf16_roof(const Peaks& p) { return weft::detail::cpu::bf16_gemm_native() ? p.bf16 : p.fp32; }

// ---- copies: the bandwidth roofline ---------------------------------------

/// One parallel copy of `bytes` bytes; every thread copies its own block.
enum class CopyKind { memcpy_chunks, vector_loop, streaming_loop };

// A plain loop of 64-byte vector loads and stores. The empty asm keeps the
// compiler from recognizing the loop as memcpy (which would make it the
// memcpy variant again).
inline void copy_vector_loop(float* __restrict dst, const float* __restrict src, std::int64_t n) {
  typedef float V __attribute__((vector_size(64), aligned(64)));
  std::int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    V a = *reinterpret_cast<const V*>(src + i), b = *reinterpret_cast<const V*>(src + i + 16),
      c = *reinterpret_cast<const V*>(src + i + 32), d = *reinterpret_cast<const V*>(src + i + 48);
    *reinterpret_cast<V*>(dst + i) = a;
    *reinterpret_cast<V*>(dst + i + 16) = b;
    *reinterpret_cast<V*>(dst + i + 32) = c;
    *reinterpret_cast<V*>(dst + i + 48) = d;
    asm volatile("" ::: "memory");
  }
  for (; i < n; ++i) dst[i] = src[i];
}

// Non-temporal stores: the destination is not read for ownership first.
inline bool have_streaming_copy() {
#if defined(__AVX__)
  return true;
#else
  return false;
#endif
}
/// Four aligned vector loads, then four non-temporal stores, per step of
/// 4 x L floats (the widest vectors the build has).
template <int L, class Load, class Stream>
std::int64_t stream_blocks(float* __restrict dst, const float* __restrict src, std::int64_t n, Load load,
                           Stream stream) {
  std::int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    auto a = load(src + i), b = load(src + i + L), c = load(src + i + 2 * L), d = load(src + i + 3 * L);
    stream(dst + i, a);
    stream(dst + i + L, b);
    stream(dst + i + 2 * L, c);
    stream(dst + i + 3 * L, d);
  }
  return i;
}

inline void copy_streaming_loop(float* __restrict dst, const float* __restrict src, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__AVX512F__)
  i = stream_blocks<16>(dst, src, n, [](const float* p) { return _mm512_load_ps(p); },
                        [](float* p, __m512 v) { _mm512_stream_ps(p, v); });
  _mm_sfence();
#elif defined(__AVX__)
  i = stream_blocks<8>(dst, src, n, [](const float* p) { return _mm256_load_ps(p); },
                       [](float* p, __m256 v) { _mm256_stream_ps(p, v); });
  _mm_sfence();
#endif
  for (; i < n; ++i) dst[i] = src[i];
}

/// Copies n floats from src to dst with `kind`, one block per OpenMP thread.
inline void parallel_copy(float* dst, const float* src, std::int64_t n, CopyKind kind) {
  for_each_thread_block(n, [&](std::int64_t b, std::int64_t e) {
    if (b < e) {
      switch (kind) {
        case CopyKind::memcpy_chunks: std::memcpy(dst + b, src + b, std::size_t(e - b) * sizeof(float)); break;
        case CopyKind::vector_loop: copy_vector_loop(dst + b, src + b, e - b); break;
        case CopyKind::streaming_loop: copy_streaming_loop(dst + b, src + b, e - b); break;
      }
    }
  });
}

/// The copy variants of one workload: `bytes` moved = bytes read + bytes written.
struct CopyBench {
  float* src;
  float* dst;
  std::int64_t n;  // floats copied
  std::vector<Variant> variants;

  CopyBench(float* s, float* d, double bytes) : src(s), dst(d), n(std::int64_t(bytes / 2 / sizeof(float))) {
    variants.emplace_back("copy: memcpy per thread", [this] {
                          return time_ms([&] { parallel_copy(dst, src, n, CopyKind::memcpy_chunks); });
                        });
    variants.emplace_back("copy: vector loop", [this] {
                          return time_ms([&] { parallel_copy(dst, src, n, CopyKind::vector_loop); });
                        });
    if (have_streaming_copy())
      variants.emplace_back("copy: streaming stores", [this] {
                            return time_ms([&] { parallel_copy(dst, src, n, CopyKind::streaming_loop); });
                          });
  }
  /// The fastest copy (by median): the roofline.
  const Variant& best() const {
    const Variant* b = &variants[0];
    for (const Variant& v : variants)
      if (v.med() < b->med()) b = &v;
    return *b;
  }
};


/// Largest |x - y| over two float-convertible tensors (a sanity check that
/// every variant computed the same thing).
template <class T>
double max_abs_diff(const weft::TensorBase<T>& x, const weft::TensorBase<T>& y) {
  const T* p = x.data();
  const T* q = y.data();
  double m = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) m = std::max(m, std::fabs(double(float(p[i])) - double(float(q[i]))));
  return m;
}


/// Appends one workload's rows to the report and prints them; returns the
/// roofline (best copy) GB/s.
inline double report_workload(Report& report, const std::string& workload, std::int64_t elements,
                              double bytes_per_element, const CopyBench& copy, const std::vector<Variant*>& variants) {
  const double bytes = double(elements) * bytes_per_element;
  const Variant& best = copy.best();
  const double copy_gbps = bytes / (best.med() * 1e-3) / 1e9;
  for (const Variant& v : copy.variants) {
    Row r{workload, v.name, elements, bytes_per_element, v.med(), v.min()};
    report.rows.push_back(r);
    print_row(r, copy_gbps);
  }
  for (const Variant* v : variants) {
    Row r{workload, v->name, elements, bytes_per_element, v->med(), v->min()};
    report.rows.push_back(r);
    print_row(r, copy_gbps);
  }
  return copy_gbps;
}

/// The first lines of a CPU run: the program, the machine, the thread count
/// (`threads_note` says who uses it), the load average with a warning on a
/// busy machine, and weft's SIMD layer. The CPU model and the load go into
/// report.notes.
inline void print_cpu_machine(const char* program, int threads, const char* threads_note, Report& report) {
  std::printf("weft %s benchmark, cpu\n", program);
  std::string model = cpu_model();
  if (!model.empty())
    std::printf("  cpu: %s, %u hardware threads\n", model.c_str(), std::thread::hardware_concurrency());
  std::printf("  threads: %d (%s)\n", threads, threads_note);
  double load = load_average();
  if (load >= 0) {
    std::printf("  load average at start: %.2f", load);
    if (load > 0.5 * std::thread::hardware_concurrency()) std::printf("  <-- busy machine: expect noisy numbers");
    std::printf("\n");
  }
  std::printf("  weft SIMD: %s, %d-byte vectors (%d floats per packet), bf16 stores: %s\n", weft::kCpuPacketIsa,
              int(weft::kCpuPacketBytes), weft::detail::simd::native_lanes<float>, weft::kCpuBf16Store);
  if (!model.empty()) report.notes.push_back("cpu: " + model);
  if (load >= 0) report.notes.push_back("load average at start: " + std::to_string(load));
}

/// The method lines after print_cpu_machine: repetitions and pauses, then
/// `bytes_note` (what GB/s counts, printed as given), then a warning when
/// weft was built against the stand-in SIMD layer.
inline void print_cpu_method(int reps, int warmup, const char* bytes_note) {
  std::printf("  reps: %d timed rounds after %d warm-up round(s); each round runs every variant once, in turn,\n"
              "  after a %d ms idle pause (--settle-ms); median and min reported\n",
              reps, warmup, g_settle_ms);
  std::printf("%s", bytes_note);
  if (std::string(weft::kCpuPacketIsa) == "stub")
    std::printf("  NOTE: built against the stand-in SIMD layer (-I/tmp/stub): weft's numbers are not real\n\n");
}

/// The host build's answer to --device cuda: the CUDA benchmark is the
/// program's .cu build.
inline int needs_cuda_build(const char* program) {
  std::printf("%s: --device cuda needs the CUDA build (bench/%s_cuda.cu, compiled by nvcc); this is the host build\n",
              program, program);
  return 0;
}

#endif  // !__CUDACC__

/// A benchmark's main: parses the options (exit status 2 on a bad one), runs
/// `body(options)` and turns an exception into exit status 1 with its message.
template <class Body>
int run_main(int argc, char** argv, const char* program, const char* default_device, Body&& body) {
  Options opt;
  if (!parse(argc, argv, opt, default_device)) return 2;
  try {
    return body(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace weft_bench
