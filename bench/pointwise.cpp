// SPDX-License-Identifier: MIT
/// @file Pointwise benchmark: fused weft kernels against a plain copy, Eigen's Tensor module and op-by-op evaluation.
//
// Workloads (the targets):
//   1. y = a * sigmoid(b) + c * d, fp32, 16M elements     (20 bytes/element move)
//   2. the same in bfloat16                               (10 bytes/element)
//   3. y = x + row over a 4096 x 4096 fp32 matrix         ( 8 bytes/element)
// Each is run beside
//   (a) a parallel copy of the same number of bytes (memcpy per thread, a
//       plain vector loop, a non-temporal-store loop; the best is the roofline),
//   (b) Eigen's Tensor module on a ThreadPoolDevice with the same thread count,
//   (c) the chain evaluated op by op with every intermediate materialized
//       (t1 = sigmoid(b); t2 = a*t1; t3 = c*d; y = t2+t3), what an eager framework does.
// Variants are interleaved (A B C A B C ...) and medians are reported,
// because the machines this runs on are noisy; the targets use the median
// over rounds of the ratio within a round. On a machine shared with other
// work, `chrt -f 1 pointwise` (real-time priority, Linux) keeps the other
// processes from taking the benchmark's cores mid-run.
//
// The same file is the CUDA benchmark when bench/pointwise_cuda.cu includes
// it: there --device cuda times weft's CUDA kernels with cudaEvents against a
// device-to-device copy (256M elements).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

// Eigen's Tensor module first: EIGEN_USE_THREADS must be set before any
// Eigen header (weft's own GEMM includes Eigen/Core).
#if !defined(__CUDACC__)
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#endif

#include <weft/weft.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

// ---------------------------------------------------------------- options
/// Pause before each timed run. OpenMP's idle workers spin for a few
/// milliseconds after a parallel region (libgomp: GOMP_SPINCOUNT, ~3-6 ms
/// measured here) and would take a core from the next variant's threads
/// (Eigen's thread pool); the pause lets them go to sleep first.
int g_settle_ms = 10;

struct Options {
  bool quick = false;
  std::string device;
  std::string json;
  int reps = 0;  // 0: the default for quick / full
};

void usage(const char* argv0) {
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

bool parse(int argc, char** argv, Options& o, const char* default_device) {
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
double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
double minimum(const std::vector<double>& v) { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); }

/// One timed variant of a workload: its name, the work, and its samples (ms).
struct Variant {
  Variant(std::string n, std::function<double()> f) : name(std::move(n)), run(std::move(f)) {}
  std::string name;
  std::function<double()> run;  // returns the elapsed milliseconds of one execution
  std::vector<double> ms;
  double med() const { return median(ms); }
  double min() const { return minimum(ms); }
};

/// Pause before each timed run. OpenMP's idle workers spin for a few
/// milliseconds after a parallel region (libgomp: GOMP_SPINCOUNT, ~3-6 ms
/// measured here) and would take a core from the next variant's threads
/// (Eigen's thread pool); the pause lets them go to sleep first.

/// Warm-up rounds, then `reps` rounds in which every variant runs once, in
/// turn (interleaved, so slow drifts of the machine hit every variant alike).
void measure(std::vector<Variant*> variants, int warmup, int reps) {
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
  double gbps() const { return double(elements) * bytes_per_element / (median_ms * 1e-3) / 1e9; }
};

/// One of the targets: a ratio of times, reference / fused (a
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
Target make_target(std::string name, double goal, std::string unit, const std::vector<double>& reference,
                   const std::vector<double>& fused) {
  Target t{std::move(name), goal, std::move(unit)};
  std::vector<double> per_round;
  for (std::size_t r = 0; r < std::min(reference.size(), fused.size()); ++r) per_round.push_back(reference[r] / fused[r]);
  t.value = median(per_round);
  t.of_medians = median(reference) / median(fused);
  t.of_mins = minimum(reference) / minimum(fused);
  return t;
}

/// Per-round samples (ms) of the variants the targets compare.
struct ChainResult {
  std::vector<double> fused, eigen, op_by_op, copy;
};

struct Report {
  std::vector<Row> rows;
  std::vector<Target> targets;
  std::vector<std::string> notes;
};

void print_header() {
  std::printf("%-34s %-24s %10s %10s %9s %9s\n", "workload", "variant", "median ms", "min ms", "GB/s",
              "vs copy");
  std::printf("%s\n", std::string(100, '-').c_str());
}

void print_row(const Row& r, double copy_gbps) {
  std::printf("%-34s %-24s %10.3f %10.3f %9.1f %8.0f%%\n", r.workload.c_str(), r.variant.c_str(), r.median_ms,
              r.min_ms, r.gbps(), 100.0 * r.gbps() / copy_gbps);
}

void print_targets(const std::vector<Target>& targets) {
  std::printf("\n%-44s %9s %9s %9s %8s  %s\n", "target (issue)", "measured", "(medians", "mins)", "goal",
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

std::string json_escape(const std::string& s) {
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

bool write_json(const std::string& path, const std::string& device, int threads, int reps, bool quick,
                const std::string& isa, const Report& rep) {
  std::ofstream f(path);
  if (!f) return false;
  char buf[512];
  f << "{\n  \"program\": \"pointwise\",\n  \"device\": \"" << device << "\",\n  \"threads\": " << threads
    << ",\n  \"reps\": " << reps << ",\n  \"quick\": " << (quick ? "true" : "false") << ",\n  \"isa\": \""
    << json_escape(isa) << "\",\n  \"results\": [\n";
  for (std::size_t i = 0; i < rep.rows.size(); ++i) {
    const Row& r = rep.rows[i];
    std::snprintf(buf, sizeof buf,
                  "    {\"workload\": \"%s\", \"variant\": \"%s\", \"elements\": %lld, \"bytes_per_element\": %g, "
                  "\"median_ms\": %.6f, \"min_ms\": %.6f, \"gbps\": %.3f}%s\n",
                  json_escape(r.workload).c_str(), json_escape(r.variant).c_str(), (long long)r.elements,
                  r.bytes_per_element, r.median_ms, r.min_ms, r.gbps(), i + 1 < rep.rows.size() ? "," : "");
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

/// A deterministic value in [lo, hi) for element i (a cheap integer hash).
inline float hashed(std::uint64_t seed, std::uint64_t i, float lo, float hi) {
  std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return lo + (hi - lo) * float(x >> 40) * (1.0f / 16777216.0f);
}

/// The CPU's model name and the 1-minute load average (Linux; empty / -1 elsewhere).
std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      std::size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "";
}
double load_average() {
  std::ifstream f("/proc/loadavg");
  double load = -1;
  f >> load;
  return load;
}

int max_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// =====================================================================
// CPU
// =====================================================================
#if !defined(__CUDACC__)

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

/// Fills p[0, n) with hashed values in [lo, hi), each thread touching its own
/// block first so its pages live where that thread runs.
template <class T>
void first_touch_fill(T* p, std::int64_t n, std::uint64_t seed, float lo, float hi) {
  WEFT_PRAGMA_OMP(omp parallel)
  {
    std::int64_t b, e;
#if defined(_OPENMP)
    thread_range(n, omp_get_num_threads(), omp_get_thread_num(), b, e);
#else
    b = 0, e = n;
#endif
    for (std::int64_t i = b; i < e; ++i) p[i] = T(hashed(seed, std::uint64_t(i), lo, hi));
  }
}

template <class T>
weft::Tensor<T> make_tensor(const weft::Shape& shape, std::uint64_t seed, float lo = -4.0f, float hi = 4.0f) {
  weft::Tensor<T> t = weft::empty<T>(shape);
  first_touch_fill(t.data(), t.numel(), seed, lo, hi);
  return t;
}

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
inline void copy_streaming_loop(float* __restrict dst, const float* __restrict src, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 64 <= n; i += 64) {
    __m512 a = _mm512_load_ps(src + i), b = _mm512_load_ps(src + i + 16), c = _mm512_load_ps(src + i + 32),
           d = _mm512_load_ps(src + i + 48);
    _mm512_stream_ps(dst + i, a);
    _mm512_stream_ps(dst + i + 16, b);
    _mm512_stream_ps(dst + i + 32, c);
    _mm512_stream_ps(dst + i + 48, d);
  }
  _mm_sfence();
#elif defined(__AVX__)
  for (; i + 32 <= n; i += 32) {
    __m256 a = _mm256_load_ps(src + i), b = _mm256_load_ps(src + i + 8), c = _mm256_load_ps(src + i + 16),
           d = _mm256_load_ps(src + i + 24);
    _mm256_stream_ps(dst + i, a);
    _mm256_stream_ps(dst + i + 8, b);
    _mm256_stream_ps(dst + i + 16, c);
    _mm256_stream_ps(dst + i + 24, d);
  }
  _mm_sfence();
#endif
  for (; i < n; ++i) dst[i] = src[i];
}

/// Copies n floats from src to dst with `kind`, one block per OpenMP thread.
void parallel_copy(float* dst, const float* src, std::int64_t n, CopyKind kind) {
  WEFT_PRAGMA_OMP(omp parallel)
  {
    std::int64_t b, e;
#if defined(_OPENMP)
    thread_range(n, omp_get_num_threads(), omp_get_thread_num(), b, e);
#else
    b = 0, e = n;
#endif
    if (b < e) {
      switch (kind) {
        case CopyKind::memcpy_chunks: std::memcpy(dst + b, src + b, std::size_t(e - b) * sizeof(float)); break;
        case CopyKind::vector_loop: copy_vector_loop(dst + b, src + b, e - b); break;
        case CopyKind::streaming_loop: copy_streaming_loop(dst + b, src + b, e - b); break;
      }
    }
  }
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

// ---- Eigen ------------------------------------------------------------------

template <class T>
using EMap1 = Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor, Eigen::Index>, Eigen::Aligned64>;
template <class T>
using EMap2 = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor, Eigen::Index>, Eigen::Aligned64>;

template <class T>
EMap1<T> emap(const weft::Tensor<T>& t) {
  return EMap1<T>(t.data(), t.numel());
}
inline EMap1<Eigen::bfloat16> emap(const weft::Tensor<weft::bfloat16>& t) {
  static_assert(sizeof(Eigen::bfloat16) == sizeof(weft::bfloat16));
  return EMap1<Eigen::bfloat16>(reinterpret_cast<Eigen::bfloat16*>(t.data()), t.numel());
}

/// Largest |x - y| over two float-convertible tensors (a sanity check that
/// every variant computed the same thing).
template <class T>
double max_abs_diff(const weft::Tensor<T>& x, const weft::Tensor<T>& y) {
  const T* p = x.data();
  const T* q = y.data();
  double m = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) m = std::max(m, std::fabs(double(float(p[i])) - double(float(q[i]))));
  return m;
}

struct CpuContext {
  int threads;
  int warmup;
  int reps;
  Eigen::ThreadPool* pool;
  Eigen::ThreadPoolDevice* device;
  float* copy_src;
  float* copy_dst;
  Report* report;
};

/// Appends one workload's rows to the report and prints them; returns the
/// roofline (best copy) GB/s.
double report_workload(CpuContext& ctx, const std::string& workload, std::int64_t elements, double bytes_per_element,
                       const CopyBench& copy, const std::vector<Variant*>& variants) {
  const double bytes = double(elements) * bytes_per_element;
  const Variant& best = copy.best();
  const double copy_gbps = bytes / (best.med() * 1e-3) / 1e9;
  for (const Variant& v : copy.variants) {
    Row r{workload, v.name, elements, bytes_per_element, v.med(), v.min()};
    ctx.report->rows.push_back(r);
    print_row(r, copy_gbps);
  }
  for (const Variant* v : variants) {
    Row r{workload, v->name, elements, bytes_per_element, v->med(), v->min()};
    ctx.report->rows.push_back(r);
    print_row(r, copy_gbps);
  }
  return copy_gbps;
}

// ---- workload 1 and 2: y = a * sigmoid(b) + c * d ------------------------------

template <class T>
ChainResult bench_chain(CpuContext& ctx, std::int64_t n, const char* workload) {
  using ET = std::conditional_t<std::is_same_v<T, weft::bfloat16>, Eigen::bfloat16, T>;
  const double bpe = 5.0 * sizeof(T);
  weft::Shape shape{n};
  weft::Tensor<T> a = make_tensor<T>(shape, 1), b = make_tensor<T>(shape, 2), c = make_tensor<T>(shape, 3),
                  d = make_tensor<T>(shape, 4);
  weft::Tensor<T> y_fused = make_tensor<T>(shape, 5), y_eigen = make_tensor<T>(shape, 6),
                  y_eager = make_tensor<T>(shape, 7);
  weft::Tensor<T> t1 = make_tensor<T>(shape, 8), t2 = make_tensor<T>(shape, 9), t3 = make_tensor<T>(shape, 10);

  auto ea = emap(a), eb = emap(b), ec = emap(c), ed = emap(d), ey = emap(y_eigen);

  Variant fused{"weft fused", [&] { return time_ms([&] { y_fused = a * weft::sigmoid(b) + c * d; }); }};
  Variant eigen{"eigen tensor", [&] {
                  return time_ms([&] { ey.device(*ctx.device) = ea * eb.sigmoid() + ec * ed; });
                }};
  // bf16: Eigen can also compute in float and round once, as weft does.
  Variant eigen_f32{"eigen tensor (f32 math)", [&] {
                      return time_ms([&] {
                        ey.device(*ctx.device) = (ea.template cast<float>() * eb.template cast<float>().sigmoid() +
                                                  ec.template cast<float>() * ed.template cast<float>())
                                                     .template cast<ET>();
                      });
                    }};
  Variant eager{"op-by-op (4 kernels)", [&] {
                  return time_ms([&] {
                    t1 = weft::sigmoid(b);
                    t2 = a * t1;
                    t3 = c * d;
                    y_eager = t2 + t3;
                  });
                }};
  CopyBench copy(ctx.copy_src, ctx.copy_dst, double(n) * bpe);

  std::vector<Variant*> all;
  for (Variant& v : copy.variants) all.push_back(&v);
  all.push_back(&fused);
  all.push_back(&eigen);
  constexpr bool low = std::is_same_v<T, weft::bfloat16>;
  if (low) all.push_back(&eigen_f32);
  all.push_back(&eager);
  measure(all, ctx.warmup, ctx.reps);

  std::vector<Variant*> ours = {&fused, &eigen};
  if (low) ours.push_back(&eigen_f32);
  ours.push_back(&eager);
  report_workload(ctx, workload, n, bpe, copy, ours);

  // Sanity: the variants agree (bf16 differs by rounding the intermediates).
  double tol = low ? 0.25 : 1e-4;
  double de = max_abs_diff(y_fused, y_eigen), dg = max_abs_diff(y_fused, y_eager);
  std::printf("%-34s   check: max|fused - eigen| = %.3g, max|fused - op-by-op| = %.3g%s\n", "", de, dg,
              de <= tol && dg <= tol ? "" : "  <-- MISMATCH");
  if (!(de <= tol && dg <= tol))
    ctx.report->notes.push_back(std::string(workload) + ": results disagree beyond tolerance");

  // bf16: the faster Eigen formulation is the peer.
  const Variant& peer = low && eigen_f32.med() < eigen.med() ? eigen_f32 : eigen;
  return {fused.ms, peer.ms, eager.ms, copy.best().ms};
}

// ---- workload 3: y = x + row ---------------------------------------------------

ChainResult bench_broadcast(CpuContext& ctx, std::int64_t rows, std::int64_t cols, const char* workload) {
  const double bpe = 8.0;
  weft::Tensor<float> x = make_tensor<float>({rows, cols}, 11), row = make_tensor<float>({cols}, 12);
  weft::Tensor<float> y_fused = make_tensor<float>({rows, cols}, 13), y_eigen = make_tensor<float>({rows, cols}, 14);

  EMap2<float> ex(x.data(), rows, cols), ey(y_eigen.data(), rows, cols);
  EMap2<float> erow(row.data(), 1, cols);
  Eigen::array<Eigen::Index, 2> bcast{rows, 1};

  Variant fused{"weft fused", [&] { return time_ms([&] { y_fused = x + row; }); }};
  Variant eigen{"eigen tensor", [&] {
                  return time_ms([&] { ey.device(*ctx.device) = ex + erow.broadcast(bcast); });
                }};
  CopyBench copy(ctx.copy_src, ctx.copy_dst, double(rows * cols) * bpe);

  std::vector<Variant*> all;
  for (Variant& v : copy.variants) all.push_back(&v);
  all.push_back(&fused);
  all.push_back(&eigen);
  measure(all, ctx.warmup, ctx.reps);
  report_workload(ctx, workload, rows * cols, bpe, copy, {&fused, &eigen});

  double de = max_abs_diff(y_fused, y_eigen);
  std::printf("%-34s   check: max|fused - eigen| = %.3g%s\n", "", de, de <= 1e-6 ? "" : "  <-- MISMATCH");
  if (!(de <= 1e-6)) ctx.report->notes.push_back(std::string(workload) + ": results disagree");
  return {fused.ms, eigen.ms, {}, copy.best().ms};
}

int run_cpu(const Options& opt) {
  const int threads = max_threads();
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 5 : 21;
  const int warmup = opt.quick ? 1 : 3;
  const std::int64_t n = std::int64_t(16) << 20;  // 16M elements
  const std::int64_t rows = 4096, cols = 4096;

  std::printf("weft pointwise benchmark, cpu\n");
  std::string model = cpu_model();
  if (!model.empty()) std::printf("  cpu: %s, %u hardware threads\n", model.c_str(), std::thread::hardware_concurrency());
  std::printf("  threads: %d (omp_get_max_threads; Eigen ThreadPoolDevice gets the same)\n", threads);
  double load = load_average();
  if (load >= 0) {
    std::printf("  load average at start: %.2f", load);
    if (load > 0.5 * std::thread::hardware_concurrency()) std::printf("  <-- busy machine: expect noisy numbers");
    std::printf("\n");
  }
  std::printf("  weft SIMD: %s, %d-byte vectors\n", weft::simd::kIsaName, int(weft::simd::kBytes));
  std::printf("  Eigen %d.%d.%d, SIMD: %s\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
              Eigen::SimdInstructionSetsInUse());
  std::printf("  reps: %d timed rounds after %d warm-up round(s); each round runs every variant once, in turn,\n"
              "  after a %d ms idle pause (--settle-ms); median and min reported\n",
              reps, warmup, g_settle_ms);
  std::printf("  GB/s counts the bytes that must move (inputs read once, output written once), for every\n"
              "  variant alike; 'vs copy' is that over the best copy of the same number of bytes\n\n");
  if (std::string(weft::simd::kIsaName) == "stub")
    std::printf("  NOTE: built against the stand-in SIMD layer (-I/tmp/stub): weft's numbers are not real\n\n");

  Eigen::ThreadPool pool(threads);
  Eigen::ThreadPoolDevice device(&pool, threads);

  // Copy buffers for the largest workload (fp32 chain: 20 bytes per element
  // moved, so 10 bytes per element in each buffer), first-touched in parallel.
  const std::int64_t copy_floats = n * 10 / 4 + 64;
  weft::Tensor<float> copy_src = make_tensor<float>({copy_floats}, 100), copy_dst = make_tensor<float>({copy_floats}, 101);

  Report report;
  if (!model.empty()) report.notes.push_back("cpu: " + model);
  if (load >= 0) report.notes.push_back("load average at start: " + std::to_string(load));
  CpuContext ctx{threads, warmup, reps, &pool, &device, copy_src.data(), copy_dst.data(), &report};

  print_header();
  ChainResult f32 = bench_chain<float>(ctx, n, "fp32 a*sigmoid(b)+c*d [16M]");
  std::printf("\n");
  ChainResult bf16 = bench_chain<weft::bfloat16>(ctx, n, "bf16 a*sigmoid(b)+c*d [16M]");
  std::printf("\n");
  ChainResult bc = bench_broadcast(ctx, rows, cols, "fp32 x + row [4096x4096]");

  report.targets = {
      make_target("fp32 fused: fraction of copy bandwidth", 0.85, "%", f32.copy, f32.fused),
      make_target("fp32 fused: speedup over Eigen", 1.0, "x", f32.eigen, f32.fused),
      make_target("fp32 fused: speedup over op-by-op", 2.2, "x", f32.op_by_op, f32.fused),
      make_target("bf16 fused: fraction of copy bandwidth", 0.85, "%", bf16.copy, bf16.fused),
      make_target("bf16 fused: speedup over Eigen (faster form)", 1.0, "x", bf16.eigen, bf16.fused),
      make_target("bf16 fused: speedup over op-by-op", 2.2, "x", bf16.op_by_op, bf16.fused),
      make_target("broadcast: fraction of copy bandwidth", 0.70, "%", bc.copy, bc.fused),
      make_target("broadcast: speedup over Eigen", 1.0, "x", bc.eigen, bc.fused),
  };
  print_targets(report.targets);
  std::printf("(the issue sets the fp32 and broadcast goals; the bf16 rows use the fp32 goals for reference)\n");

  if (!opt.json.empty()) {
    if (!write_json(opt.json, "cpu", threads, reps, opt.quick, weft::simd::kIsaName, report)) {
      std::fprintf(stderr, "cannot write %s\n", opt.json.c_str());
      return 1;
    }
    std::printf("\nwrote %s\n", opt.json.c_str());
  }
  return 0;
}

#endif  // !__CUDACC__

// =====================================================================
// CUDA
// =====================================================================
#if defined(__CUDACC__)

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

/// Times f on the default stream with CUDA events (f only enqueues work).
struct EventTimer {
  cudaEvent_t start, stop;
  EventTimer() {
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  template <class F>
  double ms(F&& f) {
    check(cudaEventRecord(start), "cudaEventRecord");
    f();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    return t;
  }
};

template <class T>
weft::Tensor<T> make_cuda_tensor(std::int64_t n, std::uint64_t seed) {
  std::vector<T> host(static_cast<std::size_t>(n));
  WEFT_PRAGMA_OMP(omp parallel for schedule(static))
  for (std::int64_t i = 0; i < n; ++i) host[std::size_t(i)] = T(hashed(seed, std::uint64_t(i), -4.0f, 4.0f));
  weft::Tensor<T> t = weft::empty<T>({n}, weft::Device::cuda());
  check(cudaMemcpy(t.data(), host.data(), std::size_t(n) * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return t;
}

template <class T>
double max_abs_diff_cuda(const weft::Tensor<T>& x, const weft::Tensor<T>& y, std::int64_t sample) {
  std::vector<T> hx(static_cast<std::size_t>(sample)), hy(static_cast<std::size_t>(sample));
  check(cudaMemcpy(hx.data(), x.data(), std::size_t(sample) * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(hy.data(), y.data(), std::size_t(sample) * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  double m = 0;
  for (std::int64_t i = 0; i < sample; ++i) m = std::max(m, std::fabs(double(float(hx[i])) - double(float(hy[i]))));
  return m;
}

struct CudaContext {
  int warmup, reps;
  EventTimer* timer;
  char* copy_src;
  char* copy_dst;
  Report* report;
};

Variant device_copy(CudaContext& ctx, double bytes) {
  std::size_t half = std::size_t(bytes / 2);
  return {"copy: cudaMemcpy D2D", [&ctx, half] {
            return ctx.timer->ms([&] {
              check(cudaMemcpyAsync(ctx.copy_dst, ctx.copy_src, half, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
            });
          }};
}

void report_cuda(CudaContext& ctx, const std::string& workload, std::int64_t elements, double bpe, const Variant& copy,
                 const std::vector<Variant*>& variants) {
  double copy_gbps = double(elements) * bpe / (copy.med() * 1e-3) / 1e9;
  Row c{workload, copy.name, elements, bpe, copy.med(), copy.min()};
  ctx.report->rows.push_back(c);
  print_row(c, copy_gbps);
  for (const Variant* v : variants) {
    Row r{workload, v->name, elements, bpe, v->med(), v->min()};
    ctx.report->rows.push_back(r);
    print_row(r, copy_gbps);
  }
}

template <class T>
ChainResult bench_chain_cuda(CudaContext& ctx, std::int64_t n, const char* workload) {
  const double bpe = 5.0 * sizeof(T);
  weft::Tensor<T> a = make_cuda_tensor<T>(n, 1), b = make_cuda_tensor<T>(n, 2), c = make_cuda_tensor<T>(n, 3),
                  d = make_cuda_tensor<T>(n, 4);
  weft::Tensor<T> y = weft::empty<T>({n}, weft::Device::cuda()), y_eager = weft::empty<T>({n}, weft::Device::cuda());
  weft::Tensor<T> t1 = weft::empty<T>({n}, weft::Device::cuda()), t2 = weft::empty<T>({n}, weft::Device::cuda()),
                  t3 = weft::empty<T>({n}, weft::Device::cuda());
  Variant fused{"weft fused", [&] { return ctx.timer->ms([&] { y = a * weft::sigmoid(b) + c * d; }); }};
  Variant eager{"op-by-op (4 kernels)", [&] {
                  return ctx.timer->ms([&] {
                    t1 = weft::sigmoid(b);
                    t2 = a * t1;
                    t3 = c * d;
                    y_eager = t2 + t3;
                  });
                }};
  Variant copy = device_copy(ctx, double(n) * bpe);
  measure({&copy, &fused, &eager}, ctx.warmup, ctx.reps);
  report_cuda(ctx, workload, n, bpe, copy, {&fused, &eager});
  double dg = max_abs_diff_cuda(y, y_eager, std::min<std::int64_t>(n, 1 << 20));
  std::printf("%-34s   check: max|fused - op-by-op| = %.3g (first 1M elements)\n", "", dg);
  return {fused.ms, {}, eager.ms, copy.ms};
}

ChainResult bench_broadcast_cuda(CudaContext& ctx, std::int64_t rows, std::int64_t cols, const char* workload) {
  const double bpe = 8.0;
  weft::Tensor<float> x = make_cuda_tensor<float>(rows * cols, 11).view({rows, cols});
  weft::Tensor<float> row = make_cuda_tensor<float>(cols, 12);
  weft::Tensor<float> y = weft::empty<float>({rows, cols}, weft::Device::cuda());
  Variant fused{"weft fused", [&] { return ctx.timer->ms([&] { y = x + row; }); }};
  Variant copy = device_copy(ctx, double(rows * cols) * bpe);
  measure({&copy, &fused}, ctx.warmup, ctx.reps);
  report_cuda(ctx, workload, rows * cols, bpe, copy, {&fused});
  return {fused.ms, {}, {}, copy.ms};
}

int run_cuda(const Options& opt) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    std::printf("weft pointwise benchmark, cuda: no CUDA device visible; nothing to run\n");
    return 0;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 5 : 21;
  const int warmup = opt.quick ? 1 : 3;
  // 256M elements (fp32: 1 GiB per tensor); smaller when the device is small.
  std::int64_t n = std::int64_t(256) << 20;
  while (n > (std::int64_t(1) << 20) && double(n) * 4 * 12 > 0.8 * double(prop.totalGlobalMem)) n /= 2;
  std::int64_t rows = 16384, cols = n / 16384;

  std::printf("weft pointwise benchmark, cuda\n");
  std::printf("  device: %s (%.1f GiB), %lld elements per tensor\n", prop.name, prop.totalGlobalMem / 1073741824.0,
              (long long)n);
  std::printf("  reps: %d timed after %d warm-up round(s), variants interleaved; cudaEvent timing\n", reps, warmup);
  std::printf("  roofline: cudaMemcpy device-to-device of the same bytes (read + write counted)\n\n");

  EventTimer timer;
  char *src = nullptr, *dst = nullptr;
  std::size_t copy_bytes = std::size_t(n) * 10 + 256;
  check(cudaMalloc(&src, copy_bytes), "cudaMalloc");
  check(cudaMalloc(&dst, copy_bytes), "cudaMalloc");
  check(cudaMemset(src, 1, copy_bytes), "cudaMemset");
  check(cudaMemset(dst, 0, copy_bytes), "cudaMemset");
  Report report;
  CudaContext ctx{warmup, reps, &timer, src, dst, &report};

  print_header();
  ChainResult f32 = bench_chain_cuda<float>(ctx, n, "fp32 a*sigmoid(b)+c*d");
  std::printf("\n");
  ChainResult bf16 = bench_chain_cuda<weft::bfloat16>(ctx, n, "bf16 a*sigmoid(b)+c*d");
  std::printf("\n");
  ChainResult bc = bench_broadcast_cuda(ctx, rows, cols, "fp32 x + row");
  cudaFree(src);
  cudaFree(dst);

  report.targets = {
      make_target("fp32 fused: fraction of copy bandwidth", 0.85, "%", f32.copy, f32.fused),
      make_target("fp32 fused: speedup over op-by-op", 2.2, "x", f32.op_by_op, f32.fused),
      make_target("bf16 fused: fraction of copy bandwidth", 0.85, "%", bf16.copy, bf16.fused),
      make_target("bf16 fused: speedup over op-by-op", 2.2, "x", bf16.op_by_op, bf16.fused),
      make_target("broadcast: fraction of copy bandwidth", 0.70, "%", bc.copy, bc.fused),
  };
  print_targets(report.targets);
  if (!opt.json.empty()) {
    if (!write_json(opt.json, "cuda", 0, reps, opt.quick, prop.name, report)) {
      std::fprintf(stderr, "cannot write %s\n", opt.json.c_str());
      return 1;
    }
    std::printf("\nwrote %s\n", opt.json.c_str());
  }
  return 0;
}

#endif  // __CUDACC__

}  // namespace

int main(int argc, char** argv) {
#if defined(__CUDACC__)
  const char* default_device = "cuda";
#else
  const char* default_device = "cpu";
#endif
  Options opt;
  if (!parse(argc, argv, opt, default_device)) return 2;
  try {
#if defined(__CUDACC__)
    if (opt.device == "cpu") {
      std::printf("pointwise_cuda: the CPU benchmark is bench/pointwise (the host build, where Eigen keeps its "
                  "SIMD); nothing to run here\n");
      return 0;
    }
    return run_cuda(opt);
#else
    if (opt.device == "cuda") {
      std::printf("pointwise: --device cuda needs the CUDA build (bench/pointwise_cuda.cu, compiled by nvcc); "
                  "this is the host build\n");
      return 0;
    }
    return run_cpu(opt);
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pointwise: %s\n", e.what());
    return 1;
  }
}
