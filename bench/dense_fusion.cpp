// SPDX-License-Identifier: MIT
/// @file Dense fusion benchmark: operations that fuse the pointwise work around them into one kernel, against the same work done eagerly (one kernel per op, intermediates materialized) and a copy roofline.
//
// Sections (one per family; each prints its workloads and adds its targets):
//   cat   out = cat(dim, p1, p2, p3) of three pointwise producers, fp32, each producer
//         p_k reading one input of 2M elements (8 MiB): x*0.5 + tanh(x), sigmoid(y)*y,
//         exp(z) - 1 (a math function per element), and x*0.5 + 1, y*y, z - 1 (one add or
//         multiply). Fused: ONE multi-shape kernel writes each producer straight into its
//         slice of the output (8 bytes per output element: read the input, write the
//         output). Eager: each producer into its own tensor, then the runtime-list cat
//         copies them (16 bytes per element); also timed: the producers alone. Along dim 0
//         (slices are contiguous blocks) and dim -1 (slices are column blocks of every row).
//
//   gemm  y = gelu(matmul(x, w) + b), fp32, 4096x1024 times 1024x4096 (w as stored and as
//         a transposed view), GPT-2's fc layer (1024x768 times 768x3072, w^T), its projection
//         (1024x3072 times 3072x768: deeper than wide, which the size rule leaves unfused),
//         256^3 (the smallest product the rule fuses), and 4096x1024x4096 in bf16 where the CPU
//         has a native bf16 GEMM (AMX; its epilogue rides on that GEMM's blocks): the GEMM
//         alone (y = matmul(x, w) into a preallocated y: Eigen's SGEMM), fused (the epilogue
//         on each output block of weft's FMA GEMM), the GEMM then one pass in place, and
//         eager (product, + b, gelu: three new tensors). GFLOP/s, the overhead over the
//         GEMM alone, and the fraction of the peak the instructions can reach (bench/peak.hpp,
//         measured at start: fp32 FMAs, bf16 dot products), since the GEMM alone is itself
//         short of it; the target: fused within 10% of the GEMM alone (gemm / fused >= 0.91).
//
//   rows  reductions with a kept dim inside a pointwise statement (a row epilogue: per row,
//         pass 1 reduces it, pass 2 writes it), fp32, into a preallocated y: y = x / sum(x, -1,
//         true) (4096x1024), the layer-norm formula (x - mean(x, -1, true)) * rsqrt(var(x, -1, 0,
//         true) + 1e-5) (8192x768) and the softmax formula exp(x - amax) / sum(exp(x - amax))
//         (4096x1024), against eager (each reduction into its own tensor, then the pointwise
//         pass); the two formulas also against weft::layer_norm (weight 1, no bias) and
//         weft::softmax, which run the same formulas the same way and return a new y (their
//         rows say what the new y and layer_norm's weight cost). Targets: eager / fused.
//
// Method (bench/bench_common.hpp, bench/pointwise.cpp): every variant runs once per
// round, in turn, after a short idle pause; medians over rounds are reported and the
// targets are the median over rounds of the ratio within a round. GB/s counts the bytes
// that must move (each output element: its input read once, itself written once), for
// every variant alike; "vs copy" compares with the best parallel copy of that many bytes,
// measured in the same rounds. Run it as `chrt -f 1 dense_fusion` on a shared machine.

#include <algorithm>
#include <string>
#include <tuple>
#include <type_traits>

#include "bench_common.hpp"

namespace {

using namespace weft_bench;

struct CpuContext {
  int warmup;
  int reps;
  int gemm_reps;  // rounds of the GEMM section (each of its runs takes ~0.1-0.5 s)
  Peaks peak;     // the GEMM section's compute roofline
  float* copy_src;
  float* copy_dst;
  Report* report;
};

// =====================================================================
// cat: cat(dim, p1, p2, p3) of pointwise producers
// =====================================================================

/// Per-round samples (ms) of the variants the cat targets compare.
struct CatResult {
  std::vector<double> fused, eager, fused_kernels, eager_kernels, copy;
};

/// cat(dim, p1, p2, p3) of the producers `make(x, y, z)` returns (a std::tuple of three
/// expressions) over inputs of `shape`, fused and eagerly: as the API runs them (a new output
/// each time), and their kernels alone, writing a preallocated output (the multi-shape fuse that
/// cat(dim, e...) runs; the producers into their tensors and the runtime-list cat's copy).
template <class Make>
CatResult bench_cat(CpuContext& ctx, const weft::Shape& shape, std::int64_t dim, const char* workload, Make make) {
  const weft::Tensor<float> x = make_tensor<float>(shape, 1), y = make_tensor<float>(shape, 2),
                            z = make_tensor<float>(shape, 3, -2.0f, 2.0f);
  // (references into the tuple, not a structured binding: the lambdas below capture them, which
  // clang 16 cannot do with a structured binding under OpenMP)
  const auto producers = make(x, y, z);
  const auto& p1 = std::get<0>(producers);
  const auto& p2 = std::get<1>(producers);
  const auto& p3 = std::get<2>(producers);
  const int d = dim < 0 ? int(dim) + shape.rank() : int(dim);
  const std::int64_t n = shape[d], elements = 3 * shape.numel();
  const double bpe = 8.0;
  weft::Shape joined = shape;
  joined[d] = 3 * n;

  weft::Tensor<float> fused_out, eager_out;
  weft::Tensor<float> out = make_tensor<float>(joined, 7), out_eager = make_tensor<float>(joined, 8);
  // The intermediates keep their shapes: each assignment writes in place.
  weft::Tensor<float> t1 = make_tensor<float>(shape, 4), t2 = make_tensor<float>(shape, 5), t3 = make_tensor<float>(shape, 6);
  auto produce = [&] { t1 = p1, t2 = p2, t3 = p3; };
  Variant fused{"weft cat(dim, p1, p2, p3)", [&] { return time_ms([&] { fused_out = weft::cat(dim, p1, p2, p3); }); }};
  Variant eager{"eager: 3 producers + cat", [&] {
                  return time_ms([&] {
                    produce();
                    eager_out = weft::cat({t1, t2, t3}, dim);
                  });
                }};
  Variant fused_kernels{"  its kernel, into out", [&] {
                          return time_ms([&] {
                            weft::fuse(weft::assign(out.narrow(d, 0, n), p1), weft::assign(out.narrow(d, n, n), p2),
                                       weft::assign(out.narrow(d, 2 * n, n), p3));
                          });
                        }};
  Variant eager_kernels{"  its kernels, into out", [&] {
                          return time_ms([&] {
                            produce();
                            weft::detail::run_cat(out_eager.view(), {t1.view(), t2.view(), t3.view()}, d);
                          });
                        }};
  CopyBench copy(ctx.copy_src, ctx.copy_dst, double(elements) * bpe);

  std::vector<Variant*> timed;
  for (Variant& v : copy.variants) timed.push_back(&v);
  const std::vector<Variant*> ours{&fused, &eager, &fused_kernels, &eager_kernels};
  timed.insert(timed.end(), ours.begin(), ours.end());
  measure(timed, ctx.warmup, ctx.reps);
  report_workload(*ctx.report, workload, elements, bpe, copy, ours);

  const double diff = std::max({max_abs_diff(fused_out, eager_out), max_abs_diff(out, eager_out),
                                max_abs_diff(out_eager, eager_out)});
  std::printf("%-34s   check: max|fused - eager| = %.3g%s\n", "", diff, diff <= 1e-6 ? "" : "  <-- MISMATCH");
  if (!(diff <= 1e-6)) ctx.report->notes.push_back(std::string(workload) + ": results disagree");
  return {fused.ms, eager.ms, fused_kernels.ms, eager_kernels.ms, copy.best().ms};
}

/// The cat section: dim 0 and dim -1 over 2M-element (8 MiB) inputs, with producers that call a
/// math function per element (compute-bound on a CPU) and with producers of one add or multiply
/// (memory-bound).
std::vector<Target> section_cat(CpuContext& ctx) {
  auto math = [](const auto& x, const auto& y, const auto& z) {
    return std::make_tuple(x * 0.5f + weft::tanh(x), weft::sigmoid(y) * y, weft::exp(z) - 1.0f);
  };
  auto light = [](const auto& x, const auto& y, const auto& z) {
    return std::make_tuple(x * 0.5f + 1.0f, y * y, z - 1.0f);
  };
  std::vector<Target> targets;
  for (std::int64_t dim : {0, -1}) {
    const weft::Shape shape = dim == 0 ? weft::Shape{2048, 1024} : weft::Shape{1024, 2048};
    const std::string at = dim == 0 ? "cat dim 0" : "cat dim -1";
    const std::string dims = dim == 0 ? " [3 x 2048x1024]" : " [3 x 1024x2048]";
    const CatResult m = bench_cat(ctx, shape, dim, (at + " tanh,sigmoid,exp" + dims).c_str(), math);
    std::printf("\n");
    const CatResult l = bench_cat(ctx, shape, dim, (at + " mul,add" + dims).c_str(), light);
    std::printf("\n");
    targets.push_back(make_target(at + " math: kernels, speedup over eager", 1.8, "x", m.eager_kernels, m.fused_kernels));
    targets.push_back(make_target(at + " math: cat(), speedup over eager", 1.8, "x", m.eager, m.fused));
    targets.push_back(make_target(at + " mul/add: kernels, speedup over eager", 1.8, "x", l.eager_kernels, l.fused_kernels));
    targets.push_back(make_target(at + " mul/add: cat(), speedup over eager", 1.8, "x", l.eager, l.fused));
    targets.push_back(make_target(at + " mul/add: kernel, fraction of copy", 0.7, "%", l.copy, l.fused_kernels));
  }
  return targets;
}

// =====================================================================
// gemm: y = gelu(matmul(x, w) + b), the GEMM's epilogue
// =====================================================================

/// Per-round samples (ms) of the GEMM-epilogue variants.
struct GemmResult {
  std::vector<double> gemm, identity, fused, one_pass, eager;
};

/// y = gelu(matmul(x, w) + b) over x (n x k), w (k x m, or its transpose stored m x k: a linear
/// layer's weight, read through a transposed view), b (m), fp32 or bf16: the GEMM alone (y =
/// matmul(x, w) into a preallocated y: Eigen's SGEMM for fp32, the native bf16 GEMM (AMX) for
/// bf16), the epilogue GEMM with the cheapest epilogue (y = matmul(x, w) + 0: what the gelu and
/// bias add to it; fp32: weft's FMA GEMM, bf16: the same native GEMM), fused (the epilogue on each
/// output block, the output written once), one extra pass (the product into y, then y = gelu(y +
/// b) in place: what an unfused library at its best does) and eager (PyTorch eager's shape: the
/// product, then + b into a new tensor, then gelu into another).
template <class T>
GemmResult bench_gemm(CpuContext& ctx, std::int64_t n, std::int64_t k, std::int64_t m, bool transposed_weight,
                      const char* workload) {
  const weft::Tensor<T> x = make_tensor<T>({n, k}, 11, -1.0f, 1.0f), b = make_tensor<T>({m}, 13);
  const weft::Tensor<T> w_stored = transposed_weight ? make_tensor<T>({m, k}, 12, -1.0f, 1.0f)
                                                     : make_tensor<T>({k, m}, 12, -1.0f, 1.0f);
  const weft::TensorView<const T> w = transposed_weight ? w_stored.transpose(0, 1) : w_stored.view();
  weft::Tensor<T> y_gemm = make_tensor<T>({n, m}, 14), y_fused = make_tensor<T>({n, m}, 15),
                  y_pass = make_tensor<T>({n, m}, 16), y_identity = make_tensor<T>({n, m}, 17), y_eager;
  Variant gemm{"gemm alone: y = matmul(x, w)", [&] { return time_ms([&] { y_gemm = weft::matmul(x, w); }); }};
  Variant identity{std::is_same_v<T, float> ? "fused: matmul + 0 (FMA gemm)" : "fused: matmul + 0", [&] {
                     return time_ms([&] { y_identity = weft::matmul(x, w) + 0.0f; });
                   }};
  Variant fused{"fused: gelu(matmul + b)", [&] {
                  return time_ms([&] { y_fused = weft::gelu(weft::matmul(x, w) + b); });
                }};
  Variant one_pass{"gemm, then 1 pass in place", [&] {
                     return time_ms([&] {
                       y_pass = weft::matmul(x, w);
                       y_pass = weft::gelu(y_pass + b);
                     });
                   }};
  Variant eager{"eager: 3 ops, new tensors", [&] {
                  return time_ms([&] {
                    const weft::Tensor<T> p = weft::matmul(x, w);
                    const weft::Tensor<T> q = p + b;
                    y_eager = weft::gelu(q);
                  });
                }};
  std::vector<Variant*> timed{&gemm, &identity, &fused, &one_pass, &eager};
  measure(timed, ctx.warmup, ctx.gemm_reps);
  const double flops = 2.0 * double(n) * double(k) * double(m);
  const double roof = std::is_same_v<T, float> ? ctx.peak.fp32 : bf16_roof(ctx.peak);
  auto gflops = [&](const Variant* v) { return flops / (v->med() * 1e-3) / 1e9; };
  for (const Variant* v : timed)  // (JSON rows; GB/s there counts the output written once)
    ctx.report->rows.push_back(Row{workload, v->name, n * m, double(sizeof(T)), v->med(), v->min(), gflops(v) / roof});
  for (const Variant* v : timed)
    std::printf("%-34s %-28s %10.2f %10.2f %8.1f GFLOP/s  %+6.1f%% vs gemm alone  %3.0f%% of peak\n", workload,
                v->name.c_str(), v->med(), v->min(), gflops(v), 100.0 * (v->med() / gemm.med() - 1),
                100 * gflops(v) / roof);
  // fp32: the two GEMMs sum in different orders: |diff| <= k 2^-24 sum |x w| (~ k 2^-24 k/4 here)
  // times gelu's slope. bf16: one GEMM, each product rounded once either way: fused and one pass
  // equal; eager also rounds q = p + b to bfloat16 (half an ulp, 2^-9 |q|, times gelu's slope
  // <= 1.13), and its gelu's rounding may then land on the neighbouring bfloat16: 2^-7 |y| bounds both.
  const double gemm_tol = std::is_same_v<T, float> ? double(k) * 0x1p-24 * double(k) * 0.5 : 0.0;
  const double y_max = double(weft::eval(weft::amax(weft::abs(weft::cast<float>(y_pass)))).item());
  const double eager_tol = gemm_tol + (std::is_same_v<T, float> ? 0.0 : 0x1p-7 * y_max);
  const double fused_diff = max_abs_diff(y_fused, y_pass), eager_diff = max_abs_diff(y_eager, y_pass);
  const bool agree = fused_diff <= gemm_tol && eager_diff <= eager_tol;
  std::printf("%-34s check: max|fused - one pass| = %.3g (tolerance %.3g), max|eager - one pass| = %.3g (tolerance "
              "%.3g)%s\n", "", fused_diff, gemm_tol, eager_diff, eager_tol, agree ? "" : "  <-- MISMATCH");
  if (!agree) ctx.report->notes.push_back(std::string(workload) + ": results disagree");
  return {gemm.ms, identity.ms, fused.ms, one_pass.ms, eager.ms};
}

/// The GEMM-epilogue section: 4096 x 1024 times 1024 x 4096 (the 4096 x 4096 x 1024 product of
/// the goal), with the weight stored as given and transposed, and a GPT-2-sized linear layer.
std::vector<Target> section_gemm(CpuContext& ctx) {
  std::vector<Target> targets;
  struct Case {
    std::int64_t n, k, m;
    bool transposed;
    const char* name;
  };
  const Case cases[] = {{4096, 1024, 4096, false, "gemm 4096x1024x4096"},
                        {4096, 1024, 4096, false, "gemm 4096x1024x4096 bf16"},
                        {4096, 1024, 4096, true, "gemm 4096x1024x4096, w^T"},
                        {1024, 768, 3072, true, "gemm 1024x768x3072, w^T (GPT-2 fc)"},
                        {1024, 3072, 768, true, "gemm 1024x3072x768, w^T (deep: unfused)"},
                        {256, 256, 256, false, "gemm 256x256x256"}};
  for (const Case& c : cases) {
    const bool bf16 = std::string(c.name).ends_with("bf16");
    if (bf16 && !weft::detail::cpu::bf16_gemm_native()) {
      std::printf("%-34s skipped: this CPU has no native bf16 GEMM (AMX, BFMMLA); bf16 does not fuse there\n\n", c.name);
      continue;
    }
    const GemmResult r = bf16 ? bench_gemm<weft::bfloat16>(ctx, c.n, c.k, c.m, c.transposed, c.name)
                              : bench_gemm<float>(ctx, c.n, c.k, c.m, c.transposed, c.name);
    std::printf("\n");
    // Overhead of the epilogue over the GEMM alone: gemm / fused >= 1 / 1.1.
    targets.push_back(make_target(std::string(c.name) + ": fused, gemm / it", 1 / 1.1, "x", r.gemm, r.fused));
    targets.push_back(make_target(std::string(c.name) + ": fused, its gemm / it", 1 / 1.1, "x", r.identity, r.fused));
    targets.push_back(make_target(std::string(c.name) + ": 1 pass, gemm / it", 0, "x", r.gemm, r.one_pass));
    targets.push_back(make_target(std::string(c.name) + ": eager, gemm / it", 0, "x", r.gemm, r.eager));
  }
  return targets;
}

// =====================================================================
// rows: reductions with a kept dim, run as a row epilogue
// =====================================================================

/// One row-epilogue workload over x of `shape`: `fused(x, y)` and `eager(x, y)` write y; `kernel`,
/// when given, is the public op computing the same. Returns the per-round samples
/// {fused, eager, kernel}.
template <class Fused, class Eager, class Kernel>
std::tuple<std::vector<double>, std::vector<double>, std::vector<double>> bench_rows(
    CpuContext& ctx, const weft::Shape& shape, const char* workload, Fused fused_op, Eager eager_op, Kernel kernel_op,
    bool with_kernel) {
  const weft::Tensor<float> x = make_tensor<float>(shape, 21, -4.0f, 4.0f);
  weft::Tensor<float> y_fused = make_tensor<float>(shape, 22), y_eager = make_tensor<float>(shape, 23),
                      y_kernel = make_tensor<float>(shape, 24);
  Variant fused{"fused: one statement", [&] { return time_ms([&] { fused_op(x, y_fused); }); }};
  Variant eager{"eager: reductions, then 1 pass", [&] { return time_ms([&] { eager_op(x, y_eager); }); }};
  Variant kernel{"the public op (a new y)", [&] { return time_ms([&] { kernel_op(x, y_kernel); }); }};
  std::vector<Variant*> timed{&fused, &eager};
  if (with_kernel) timed.push_back(&kernel);
  measure(timed, ctx.warmup, ctx.reps);
  for (const Variant* v : timed) {
    ctx.report->rows.push_back(Row{workload, v->name, shape.numel(), 8.0, v->med(), v->min()});
    std::printf("%-34s %-32s %10.3f %10.3f  %5.2fx eager\n", workload, v->name.c_str(), v->med(), v->min(),
                eager.med() / v->med());
  }
  const double diff = std::max(max_abs_diff(y_fused, y_eager), with_kernel ? max_abs_diff(y_kernel, y_eager) : 0.0);
  std::printf("%-34s check: max|fused - eager| = %.3g%s\n", "", diff, diff <= 1e-4 ? "" : "  <-- MISMATCH");
  if (!(diff <= 1e-4)) ctx.report->notes.push_back(std::string(workload) + ": results disagree");
  return {fused.ms, eager.ms, kernel.ms};
}

std::vector<Target> section_rows(CpuContext& ctx) {
  using T = weft::Tensor<float>;
  std::vector<Target> targets;
  auto none = [](const T&, T&) {};
  const auto [nf, ne, nk] = bench_rows(
      ctx, {4096, 1024}, "x / sum(x, -1, true) 4096x1024", [](const T& x, T& y) { y = x / weft::sum(x, -1, true); },
      [](const T& x, T& y) {
        const T s = weft::sum(x, -1, true);
        y = x / s;
      },
      none, false);
  std::printf("\n");
  targets.push_back(make_target("rows: x / sum, eager / fused", 1.0, "x", ne, nf));
  const auto [lf, le, lk] = bench_rows(
      ctx, {8192, 768}, "layer-norm formula 8192x768",
      [](const T& x, T& y) { y = (x - weft::mean(x, -1, true)) * weft::rsqrt(weft::var(x, -1, 0.0, true) + 1e-5); },
      [](const T& x, T& y) {
        const T m = weft::mean(x, -1, true), v = weft::var(x, -1, 0.0, true);
        y = (x - m) * weft::rsqrt(v + 1e-5);
      },
      [w = weft::ones<float>({768})](const T& x, T& y) { y = weft::layer_norm(x, w, T(), 1e-5); }, true);
  std::printf("\n");
  targets.push_back(make_target("rows: layer-norm formula, eager / fused", 1.0, "x", le, lf));
  targets.push_back(make_target("rows: weft::layer_norm (a new y), fused / it", 0, "x", lf, lk));
  const auto [sf, se, sk] = bench_rows(
      ctx, {4096, 1024}, "softmax formula 4096x1024",
      [](const T& x, T& y) {
        const auto shifted = x - weft::amax(x, -1, true);
        y = weft::exp(shifted) / weft::sum(weft::exp(shifted), -1, true);
      },
      [](const T& x, T& y) {
        const T m = weft::amax(x, -1, true);
        const T e = weft::exp(x - m), s = weft::sum(e, -1, true);
        y = e / s;
      },
      [](const T& x, T& y) { y = weft::softmax(x, -1); }, true);
  std::printf("\n");
  targets.push_back(make_target("rows: softmax formula, eager / fused", 1.0, "x", se, sf));
  targets.push_back(make_target("rows: weft::softmax (a new y), fused / it", 0, "x", sf, sk));
  return targets;
}

// =====================================================================
// main
// =====================================================================

int run_cpu(const Options& opt) {
  const int threads = max_threads();
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 5 : 21;
  const int warmup = opt.quick ? 1 : 3;
  Report report;
  print_cpu_machine("dense_fusion", threads, "omp_get_max_threads", report);
  const Peaks peak = measure_peaks(threads);
  std::printf("  %s\n", peaks_line(peak).c_str());
  report.notes.push_back(peaks_line(peak));
  print_cpu_method(reps, warmup,
                   "  GB/s counts the bytes that must move (inputs read once, output written once), for every\n"
                   "  variant alike; 'vs copy' is that over the best copy of the same number of bytes.\n"
                   "  cat() returns a new 24 MiB tensor (fused and eager alike): its first touch page-faults,\n"
                   "  which the 'into out' rows (the same kernels, a preallocated output) leave out\n\n");
  // Copy buffers for the largest workload (cat: 6M output elements, 8 bytes each moved), first-touched in parallel.
  const std::int64_t copy_floats = (std::int64_t(6) << 20) + 64;
  weft::Tensor<float> copy_src = make_tensor<float>({copy_floats}, 100), copy_dst = make_tensor<float>({copy_floats}, 101);
  CpuContext ctx{warmup, reps, opt.quick ? 3 : 7, peak, copy_src.data(), copy_dst.data(), &report};

  print_header();
  for (const Target& t : section_cat(ctx)) report.targets.push_back(t);
  for (const Target& t : section_gemm(ctx)) report.targets.push_back(t);
  for (const Target& t : section_rows(ctx)) report.targets.push_back(t);
  print_targets(report.targets);
  return write_json_if_asked(opt, "dense_fusion", "cpu", threads, reps, weft::kCpuPacketIsa, report);
}

}  // namespace

int main(int argc, char** argv) {
  return weft_bench::run_main(argc, argv, "dense_fusion", "cpu", [](const Options& opt) {
    return opt.device == "cuda" ? weft_bench::needs_cuda_build("dense_fusion") : run_cpu(opt);
  });
}
