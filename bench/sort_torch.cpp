// SPDX-License-Identifier: MIT
/// @file weft::sort beside libtorch's stable sort in one process, interleaved round by round: one row of 1M floats (ascending and descending), a batch of 4096 rows of 256 floats, one row of 1M int64 and of 1M doubles; nonzero and masked_select of 1M floats; the speedup, GB/s against the machine's parallel copy, and the row length where weft's radix sort overtakes its comparison sort.
//
// Built as bench/matmul_torch is, where Meson finds PyTorch's pip wheel (option torch_peer;
// bench/meson.build): both libraries share the process's libgomp, the same threads and the same
// inputs (uniform random values, about 1% of them repeated, so that stability matters). Each round
// times torch (at::sort(x, /*stable=*/true, dim, descending)), then weft (weft first in every other
// round), each timing a run of repetitions of at least ~20 ms; both allocate their outputs, as a
// call does. The speedup is the median over rounds of the per-round ratio torch time / weft time.
// Each row checks that weft's values and indices equal torch's (a stable sort has one answer).
// GB/s counts the bytes a sort must move once: the input read, the values and the int64 indices
// written; the roofline is the best parallel copy of as many bytes (bench_common.hpp).
//
//   OMP_NUM_THREADS=2 chrt -f 1 build/bench-torch/bench/sort_torch [--reps N]
#include <omp.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <weft/ops/select.hpp>
#include <weft/ops/sort.hpp>

#include "bench_common.hpp"
#include "torch_peer.hpp"

namespace {

using weft_bench::median;
using weft_bench::time_ms;
using weft_bench::to_weft;

struct Workload {
  const char* name;
  std::int64_t rows, n;
  torch::ScalarType dtype;
  bool descending;
  double lo = 0, hi = 1e6;  // uniform values in [lo, hi) (integers: truncated)
};

struct Result {
  std::vector<double> torch_ms, weft_ms;
  bool same = false;  // weft's values and indices equal torch's
};

/// Times f as a run of `count` calls, per call (ms).
template <class F>
double per_call_ms(int count, const F& f) {
  return time_ms([&] {
           for (int i = 0; i < count; ++i) f();
         }) /
         count;
}

template <class TorchRun, class WeftRun>
Result interleaved(const TorchRun& run_torch, const WeftRun& run_weft, int reps, bool same);

template <class T>
Result run_workload(const Workload& w, int reps) {
  torch::manual_seed(0);
  torch::Tensor x = w.lo + torch::rand({w.rows, w.n}, torch::kDouble) * (w.hi - w.lo);
  // About 1% of the elements repeat another's value: ties whose order a stable sort must keep.
  const torch::Tensor repeats = torch::randint(0, w.rows * w.n, {w.rows * w.n / 100});
  x.view(-1).index_put_({repeats}, x.view(-1).index({torch::randperm(w.rows * w.n).slice(0, 0, repeats.size(0))}));
  x = x.to(w.dtype);
  if (w.rows == 1) x = x.view(-1);
  const weft::Tensor<T> wx = to_weft<T>(x);

  auto run_torch = [&] { return at::sort(x, /*stable=*/true, -1, w.descending); };
  auto run_weft = [&] { return weft::sort(wx, -1, w.descending); };
  const auto [tv, ti] = run_torch();
  const weft::Sorted<T> ws = run_weft();
  const bool same = std::memcmp(ws.values.data(), tv.data_ptr(), std::size_t(tv.numel()) * sizeof(T)) == 0 &&
                    std::memcmp(ws.indices.data(), ti.data_ptr(), std::size_t(ti.numel()) * sizeof(std::int64_t)) == 0;
  return interleaved(run_torch, run_weft, reps, same);
}

/// torch and weft timed in turn, round by round (weft first in every other round), each a run of
/// repetitions of at least ~20 ms; `same`: whether their results agreed.
template <class TorchRun, class WeftRun>
Result interleaved(const TorchRun& run_torch, const WeftRun& run_weft, int reps, bool same) {
  Result r;
  r.same = same;
  const double once = std::min(time_ms(run_torch), time_ms(run_weft));
  const int count = std::max(1, int(std::ceil(20.0 / std::max(once, 1e-6))));
  for (int round = -1; round < reps; ++round) {  // round -1 warms up
    double t, wt;
    if (round % 2 == 0) {
      t = per_call_ms(count, run_torch);
      wt = per_call_ms(count, run_weft);
    } else {
      wt = per_call_ms(count, run_weft);
      t = per_call_ms(count, run_torch);
    }
    if (round < 0) continue;
    r.torch_ms.push_back(t);
    r.weft_ms.push_back(wt);
  }
  return r;
}

/// nonzero and masked_select of 1M floats, half of them zero, against at::nonzero and
/// at::masked_select (a random mask): same results, interleaved timing.
std::vector<std::pair<std::string, Result>> run_selections(int reps) {
  torch::manual_seed(1);
  const std::int64_t n = 1 << 20;
  const torch::Tensor x = torch::rand({1024, n / 1024}) * (torch::rand({1024, n / 1024}) < 0.5);
  const torch::Tensor mask = torch::rand({1024, n / 1024}) < 0.5;
  const weft::Tensor<float> wx = to_weft<float>(x);
  const weft::Tensor<bool> wmask = to_weft<bool>(mask);
  std::vector<std::pair<std::string, Result>> results;
  {
    const torch::Tensor t = at::nonzero(x).contiguous();  // torch's [count, 2] result is column-major
    const weft::Tensor<std::int64_t> w = weft::nonzero(wx);
    const bool same = t.numel() == w.numel() &&
                      std::memcmp(w.data(), t.data_ptr(), std::size_t(t.numel()) * sizeof(std::int64_t)) == 0;
    results.emplace_back("nonzero 1024 x 1024 float", interleaved([&] { return at::nonzero(x); },
                                                                  [&] { return weft::nonzero(wx); }, reps, same));
  }
  {
    const torch::Tensor t = at::masked_select(x, mask);
    const weft::Tensor<float> w = weft::masked_select(wx, wmask);
    const bool same =
        t.numel() == w.numel() && std::memcmp(w.data(), t.data_ptr(), std::size_t(t.numel()) * sizeof(float)) == 0;
    results.emplace_back("masked_select 1024 x 1024", interleaved([&] { return at::masked_select(x, mask); },
                                                                  [&] { return weft::masked_select(wx, wmask); },
                                                                  reps, same));
  }
  return results;
}

/// The machine's parallel copy of `bytes` (the best of bench_common's copies, median of rounds), GB/s.
double copy_gbps(double bytes, int reps) {
  const weft::Tensor<float> src = weft::full<float>({std::int64_t(bytes / 2 / sizeof(float)) + 16}, 1.0f);
  weft::Tensor<float> dst = weft::empty<float>(src.shape());  // 64-byte aligned, as the vector copies need
  weft_bench::CopyBench copy(const_cast<float*>(src.data()), dst.data(), bytes);
  std::vector<weft_bench::Variant*> variants;
  for (weft_bench::Variant& v : copy.variants) variants.push_back(&v);
  weft_bench::measure(variants, 2, reps);
  return bytes / (copy.best().med() * 1e-3) / 1e9;
}

/// One thread's time per row (us) of weft's two row sorts for rows of n keys of K (from floats:
/// the keys of bool, of bfloat16, of float, of double): the comparison sort of (key, index)
/// and the LSD radix sort, to place kRadixMinRow<K>.
template <class K>
void crossover(int reps) {
  namespace cpu = weft::detail::cpu;
  std::printf("%8s %6s %12s %12s\n", "n", "key", "comparison", "radix");
  for (const std::int64_t n : {64, 128, 256, 512, 1024, 2048, 4096, 8192}) {
    const std::size_t length = std::size_t(n);
    std::vector<K> source(length), keys(length), scratch(length);
    std::vector<std::uint32_t> order(length), order_alt(length);
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = weft_bench::hashed(7, std::uint64_t(i), -1.0f, 1.0f);
      if constexpr (sizeof(K) == 8) source[std::size_t(i)] = weft::detail::radix_key(v);
      else if constexpr (sizeof(K) == 4) source[std::size_t(i)] = weft::detail::radix_key(float(v));
      else if constexpr (sizeof(K) == 2) source[std::size_t(i)] = weft::detail::radix_key(weft::bfloat16(float(v)));
      else source[std::size_t(i)] = weft::detail::radix_key(v > 0);
    }
    const K low = *std::min_element(source.begin(), source.end());  // the caller's, found as it makes the keys
    const int count = int(std::max<std::int64_t>(1, 2000000 / n));
    std::vector<double> comparison, radix;
    for (int round = 0; round < reps; ++round) {
      if (n < 2 * cpu::kRadixMinRow<K>)
        comparison.push_back(per_call_ms(count, [&] { cpu::comparison_sort_row(source.data(), order.data(), n); }) *
                             1e3);
      radix.push_back(per_call_ms(count, [&] {
                        keys = source;
                        cpu::radix_sort_row(keys.data(), scratch.data(), order.data(), order_alt.data(), n, low);
                      }) *
                      1e3);
    }
    std::printf("%8lld %6d %12.2f %12.2f\n", (long long)n, int(8 * sizeof(K)),
                comparison.empty() ? NAN : median(comparison), median(radix));
  }
  std::printf("(weft sorts rows of %d-bit keys shorter than %lld by comparison)\n", int(8 * sizeof(K)),
              (long long)cpu::kRadixMinRow<K>);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 11;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc && std::atoi(argv[i + 1]) >= 1) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: sort_torch [--reps N]\n");
      return 2;
    }
  }
  const int threads = omp_get_max_threads();
  torch::set_num_threads(threads);
  std::printf("weft::sort vs libtorch %s at::sort(stable=true) in one process, interleaved rounds\n", TORCH_VERSION);
  std::printf("  cpu: %s; threads: %d; load average %.2f\n", weft_bench::cpu_model().c_str(), threads,
              weft_bench::load_average());
  const double copy = copy_gbps(1e6 * (4 + 4 + 8), reps);
  std::printf("  roofline: parallel copy of 16 MB at %.1f GB/s\n", copy);
  std::printf("  %d rounds after a warm-up round, torch and weft alternating which goes first, each timing\n"
              "  >= ~20 ms of repeated sorts\n\n",
              reps);
  std::printf("%-28s %10s %10s %8s %8s %8s %s\n", "workload", "weft ms", "torch ms", "weft/", "weft", "% copy",
              "check");
  std::printf("%-28s %10s %10s %8s %8s %8s\n", "", "", "", "torch", "GB/s", "");
  std::printf("%s\n", std::string(86, '-').c_str());
  const std::vector<Workload> workloads = {
      {"1 x 1M float", 1, 1 << 20, torch::kFloat32, false},
      {"1 x 1M float descending", 1, 1 << 20, torch::kFloat32, true},
      {"4096 x 256 float", 4096, 256, torch::kFloat32, false},
      {"1 x 1M int64", 1, 1 << 20, torch::kInt64, false},
      {"1 x 1M int32, [-1000, 1000)", 1, 1 << 20, torch::kInt32, false, -1000, 1000},
      {"1 x 1M double", 1, 1 << 20, torch::kFloat64, false},
  };
  int failures = 0;
  for (const Workload& w : workloads) {
    Result r;
    std::size_t bytes_per_element = 0;
    if (w.dtype == torch::kFloat32) r = run_workload<float>(w, reps), bytes_per_element = 4;
    else if (w.dtype == torch::kInt64) r = run_workload<std::int64_t>(w, reps), bytes_per_element = 8;
    else if (w.dtype == torch::kInt32) r = run_workload<std::int32_t>(w, reps), bytes_per_element = 4;
    else r = run_workload<double>(w, reps), bytes_per_element = 8;
    std::vector<double> ratio;
    for (std::size_t i = 0; i < r.weft_ms.size(); ++i) ratio.push_back(r.torch_ms[i] / r.weft_ms[i]);
    const double moved = double(w.rows * w.n) * double(2 * bytes_per_element + 8);
    const double gbps = moved / (median(r.weft_ms) * 1e-3) / 1e9;
    failures += !r.same;
    std::printf("%-28s %10.3f %10.3f %7.2fx %8.1f %7.0f%% %s\n", w.name, median(r.weft_ms), median(r.torch_ms),
                median(ratio), gbps, 100 * gbps / copy, r.same ? "same" : "DIFFERENT");
  }
  for (const auto& [name, r] : run_selections(reps)) {
    std::vector<double> ratio;
    for (std::size_t i = 0; i < r.weft_ms.size(); ++i) ratio.push_back(r.torch_ms[i] / r.weft_ms[i]);
    failures += !r.same;
    std::printf("%-28s %10.3f %10.3f %7.2fx %8s %8s %s\n", name.c_str(), median(r.weft_ms), median(r.torch_ms),
                median(ratio), "-", "-", r.same ? "same" : "DIFFERENT");
  }
  std::printf("weft/torch: median over rounds of torch time / weft time (> 1: weft is faster); GB/s: input read +\n"
              "values and int64 indices written, once, over weft's median time; %% copy: of the copy roofline;\n"
              "check: weft's values and indices equal torch's bit for bit\n");
  std::printf("\nrow sorts on one thread, us per row (median of %d rounds of >= ~20 ms)\n", reps);
  crossover<std::uint8_t>(reps);
  crossover<std::uint16_t>(reps);
  crossover<std::uint32_t>(reps);
  crossover<std::uint64_t>(reps);
  return failures ? 1 : 0;
}
