// SPDX-License-Identifier: MIT
/// @file Foreach benchmark: one fused multi-tensor AdamW kernel against a per-tensor loop and torch's foreach chains.
//
// Workloads:
//   1. AdamW over a transformer-like float32 parameter list: 12 layers x
//      {4 x 768x768, 768x3072, 3072x768, 6 x 768} and a final 2 x 768,
//      146 tensors, 85.0M parameters (1.4 GB per list: far beyond the caches).
//   2. The same update over 10,000 tensors of 100 elements (1M parameters):
//      what a per-tensor loop pays per launch, one foreach kernel pays once.
//   3. Y = X * 0.5 + tanh(X) over those 10,000 x 100 floats as one list kernel against
//      the same over ONE tensor of 1M floats: what a list costs beyond its elements.
//   4. The AdamW update of workload 2 against the same over ONE tensor of 1M parameters.
// Workloads 3 and 4 also run over lists whose members are packed back to back in one buffer
// (packed_list): the kernel is the same, the heap's layout is not.
// The update moves 28 bytes per parameter (p, g, m, v read; p, m, v written):
//   m1 = b1 * m + (1 - b1) * g
//   v1 = b2 * v + (1 - b2) * g * g
//   p1 = p * (1 - lr * wd) - (lr / bc1) * (m1 / (sqrt(v1) / sqrt(bc2) + eps))
// with the bias corrections bc1 = 1 - b1^step, bc2 = 1 - b2^step as numbers.
// Each workload runs beside
//   (a) a parallel copy of the same number of bytes (bench_common.hpp's
//       CopyBench: memcpy per thread, a vector loop, streaming stores; the
//       best is the roofline),
//   (b) the same weft::fuse over each tensor in turn (one kernel per tensor),
//   (c) torch 1.13's _multi_tensor_adamw: nine single-op foreach passes, each
//       list statement its own kernel, sqrt(v) and the denominator
//       materialized in temporary lists (_foreach_mul_, _foreach_add_,
//       _foreach_addcmul_, _foreach_sqrt, _foreach_div_, _foreach_add,
//       _foreach_addcdiv_): 88 bytes per parameter,
//   (d) torch >= 2.0's sequence: _foreach_lerp_ for m and the denominator
//       built in place, eight passes, 80 bytes per parameter.
// Every variant updates its own copy of (p, m, v), started from the same
// values; as each runs the same number of steps, their final states are
// compared (max abs difference), so the benchmark cannot time different
// computations. Methodology as bench/pointwise: interleaved rounds, medians,
// `chrt -f 1 foreach` on a shared machine.

#include "adamw_common.hpp"

namespace {

using namespace weft_bench;

/// Per-round samples (ms) of the variants the targets compare.
struct UpdateResult {
  std::vector<double> fused, per_tensor, chain_113, chain_2x, copy;
};

struct Context {
  int warmup, reps;
  float* copy_src;
  float* copy_dst;
  Report* report;
};

/// Times the four forms of the update over lists of `shapes`, beside a copy
/// of the same bytes, and checks that they computed the same states.
UpdateResult bench_adamw(Context& ctx, const std::vector<weft::Shape>& shapes, const std::string& workload) {
  const double bpe = 7.0 * sizeof(float);
  const AdamWHyper h;
  const TensorList<float> g = make_list(shapes, 4, -1.0f, 1.0f);
  AdamState fused_state = make_state(shapes), loop_state = make_state(shapes), chain_113_state = make_state(shapes),
            chain_2x_state = make_state(shapes);
  ChainTemps temps{make_list(shapes, 5, 0.0f, 1.0f), make_list(shapes, 6, 0.0f, 1.0f)};
  const std::int64_t n = g.numel();

  Variant fused{"foreach: fused", [&] {
                  AdamState& s = fused_state;
                  return time_ms([&] { adamw_fused(s.p, s.m, s.v, g, h); });
                }};
  Variant loop{"per-tensor fused loop", [&] {
                 AdamState& s = loop_state;
                 return time_ms([&] {
                   for (std::size_t k = 0; k < g.size(); ++k) adamw_fused(s.p[k], s.m[k], s.v[k], g[k], h);
                 });
               }};
  Variant chain_113{"chain: 9 ops (torch1.13)", [&] {
                      return time_ms([&] { adamw_chain(chain_113_state, g, temps, h, false); });
                    }};
  Variant chain_2x{"chain: 8 ops (torch2.x)", [&] {
                     return time_ms([&] { adamw_chain(chain_2x_state, g, temps, h, true); });
                   }};
  CopyBench copy(ctx.copy_src, ctx.copy_dst, double(n) * bpe);

  std::vector<Variant*> all;
  for (Variant& v : copy.variants) all.push_back(&v);
  for (Variant* v : {&fused, &loop, &chain_113, &chain_2x}) all.push_back(v);
  measure(all, ctx.warmup, ctx.reps);
  report_workload(*ctx.report, workload, n, bpe, copy, {&fused, &loop, &chain_113, &chain_2x});

  // Every variant ran warmup + reps steps from the same state.
  const double tol = 1e-5;
  double dl = max_abs_diff(fused_state, loop_state), d1 = max_abs_diff(fused_state, chain_113_state),
         d2 = max_abs_diff(fused_state, chain_2x_state);
  bool ok = dl <= tol && d1 <= tol && d2 <= tol;
  std::printf("%-34s   check (p, m, v after %d steps): max|fused - loop| = %.3g, max|fused - chain 9| = %.3g, "
              "max|fused - chain 8| = %.3g%s\n",
              "", ctx.warmup + ctx.reps, dl, d1, d2, ok ? "" : "  <-- MISMATCH");
  if (!ok) ctx.report->notes.push_back(workload + ": results disagree beyond tolerance");
  return {fused.ms, loop.ms, chain_113.ms, chain_2x.ms, copy.best().ms};
}

/// Per-round samples (ms) of one kernel over a list of heap-allocated tensors, over a list of
/// tensors packed back to back, and over one tensor holding as many elements.
struct ListVsOneResult {
  std::vector<double> list, packed, one;
};

/// `count` tensors of `size` floats in [lo, hi), views of one buffer, each starting on a 64-byte
/// line right after the previous one's last line: the densest layout 64-byte aligned allocations
/// can have. Separate allocations add a malloc header, alignment padding and the Storage's
/// shared_ptr control block between members (a tensor of 100 floats takes 576 bytes of the heap,
/// not 448), which the hardware prefetchers fetch too.
TensorList<float> packed_list(std::int64_t count, std::int64_t size, std::uint64_t seed, float lo, float hi) {
  const std::int64_t stride = (size + 15) / 16 * 16;
  weft::Tensor<float> buffer = make_tensor<float>({count * stride}, seed, lo, hi);
  TensorList<float> list;
  for (std::int64_t k = 0; k < count; ++k) list.push_back(buffer.view().narrow(0, k * stride, size));
  return list;
}

/// Times a kernel over a list (heap-allocated members), over a packed list and over one tensor of
/// n elements moving `bpe` bytes each, beside a copy of the same bytes: what a list of small
/// tensors costs beyond its elements (per tensor: a table entry, a row start, a tail of size mod
/// the packet length, and the heap's layout).
ListVsOneResult time_list_vs_one(Context& ctx, const std::string& workload, std::int64_t n, double bpe,
                                 const std::function<void()>& list_kernel, const std::function<void()>& packed_kernel,
                                 const std::function<void()>& one_kernel) {
  Variant list{"list: one foreach kernel", [&] { return time_ms(list_kernel); }};
  Variant packed{"list packed back to back", [&] { return time_ms(packed_kernel); }};
  Variant one{"one tensor", [&] { return time_ms(one_kernel); }};
  CopyBench copy(ctx.copy_src, ctx.copy_dst, double(n) * bpe);
  std::vector<Variant*> all;
  for (Variant& v : copy.variants) all.push_back(&v);
  for (Variant* v : {&list, &packed, &one}) all.push_back(v);
  measure(all, ctx.warmup, ctx.reps);
  report_workload(*ctx.report, workload, n, bpe, copy, {&list, &packed, &one});
  return {list.ms, packed.ms, one.ms};
}

/// Y = X * 0.5 + tanh(X) over `count` tensors of `size` floats as one foreach kernel, and over ONE
/// tensor of count * size floats.
ListVsOneResult bench_tanh_list_vs_one(Context& ctx, std::int64_t count, std::int64_t size, const std::string& workload) {
  std::vector<weft::Tensor<float>> xs, ys;
  for (std::int64_t i = 0; i < count; ++i) {
    xs.push_back(make_tensor<float>({size}, std::uint64_t(1000 + i)));
    ys.push_back(make_tensor<float>({size}, std::uint64_t(50000 + i)));
  }
  weft::TensorList<float> X(xs), Y(ys);
  TensorList<float> packed_x = packed_list(count, size, 9, -4.0f, 4.0f), packed_y = packed_list(count, size, 10, -4.0f, 4.0f);
  const weft::Tensor<float> x1 = make_tensor<float>({count * size}, 7);
  weft::Tensor<float> y1 = make_tensor<float>({count * size}, 8);
  return time_list_vs_one(
      ctx, workload, count * size, 8.0, [&] { Y = X * 0.5f + weft::tanh(X); },
      [&] { packed_y = packed_x * 0.5f + weft::tanh(packed_x); }, [&] { y1 = x1 * 0.5f + weft::tanh(x1); });
}

/// The fused AdamW update over `count` tensors of `size` floats (one foreach kernel), and over ONE
/// tensor of as many elements per operand.
ListVsOneResult bench_adamw_list_vs_one(Context& ctx, std::int64_t count, std::int64_t size,
                                        const std::string& workload) {
  const AdamWHyper h;
  const std::vector<weft::Shape> shapes(std::size_t(count), weft::Shape{size});
  const TensorList<float> g = make_list(shapes, 4, -1.0f, 1.0f);
  AdamState s = make_state(shapes);
  // make_state's values, packed
  const TensorList<float> packed_g = packed_list(count, size, 4, -1.0f, 1.0f);
  AdamState packed{packed_list(count, size, 1, -1.0f, 1.0f), packed_list(count, size, 2, -0.1f, 0.1f),
                   packed_list(count, size, 3, 0.01f, 0.02f)};
  const std::vector<weft::Shape> one{weft::Shape{count * size}};
  const AdamState one_state = make_state(one);
  weft::Tensor<float> p1 = one_state.p[0].clone(), m1 = one_state.m[0].clone(), v1 = one_state.v[0].clone();
  const weft::Tensor<float> g1 = make_list(one, 4, -1.0f, 1.0f)[0].clone();
  return time_list_vs_one(
      ctx, workload, count * size, 7.0 * sizeof(float), [&] { adamw_fused(s.p, s.m, s.v, g, h); },
      [&] { adamw_fused(packed.p, packed.m, packed.v, packed_g, h); }, [&] { adamw_fused(p1, m1, v1, g1, h); });
}

int run_cpu(const Options& opt) {
  const int threads = max_threads();
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 5 : 21;
  const int warmup = opt.quick ? 1 : 3;
  const std::vector<weft::Shape> big = transformer_shapes(12, 768);
  const std::vector<weft::Shape> small(10000, weft::Shape{100});
  std::int64_t big_n = 0;
  for (const auto& s : big) big_n += s.numel();

  Report report;
  print_cpu_machine("foreach", threads, "omp_get_max_threads; every weft kernel may use this many", report);
  print_cpu_method(reps, warmup,
                   "  GB/s counts the 28 bytes per parameter that must move (p, g, m, v read once; p, m, v\n"
                   "  written once), for every variant alike; 'vs copy' is that over the best copy of the\n"
                   "  same number of bytes. Variants: 'foreach: fused' is weft::fuse over TensorLists (one\n"
                   "  kernel); 'per-tensor fused loop' the same fuse over each Tensor in turn; 'chain' rows\n"
                   "  are torch's _multi_tensor_adamw, one foreach kernel per torch op\n\n");

  // Copy buffers for the largest workload: 28 bytes per parameter moved, 14 in each buffer.
  const std::int64_t copy_floats = big_n * 7 / 2 + 64;
  weft::Tensor<float> copy_src = make_tensor<float>({copy_floats}, 100);
  weft::Tensor<float> copy_dst = make_tensor<float>({copy_floats}, 101);
  Context ctx{warmup, reps, copy_src.data(), copy_dst.data(), &report};

  print_header();
  const std::string big_name = "AdamW " + std::to_string(big.size()) + " tensors [" + million(big_n) + "]";
  UpdateResult w1 = bench_adamw(ctx, big, big_name);
  std::printf("\n");
  UpdateResult w2 = bench_adamw(ctx, small, "AdamW 10000 x 100 [1.0M]");
  std::printf("\n");
  const ListVsOneResult w3 = bench_tanh_list_vs_one(ctx, 10000, 100, "x*0.5+tanh(x) 10000 x 100 [1.0M]");
  std::printf("\n");
  const ListVsOneResult w4 = bench_adamw_list_vs_one(ctx, 10000, 100, "AdamW 10000 x 100 vs one [1.0M]");

  const std::string big_tensors = std::to_string(big.size()) + " tensors: ";
  report.targets = {
      make_target(big_tensors + "fraction of copy bandwidth", 0.80, "%", w1.copy, w1.fused),
      make_target(big_tensors + "speedup over 9-op chain", 3.0, "x", w1.chain_113, w1.fused),
      make_target(big_tensors + "speedup over 8-op chain (torch2)", 3.0, "x", w1.chain_2x, w1.fused),
      make_target(big_tensors + "speedup over per-tensor loop", 1.0, "x", w1.per_tensor, w1.fused),
      make_target("10000 x 100: speedup over per-tensor loop", 5.0, "x", w2.per_tensor, w2.fused),
      make_target("10000 x 100 tanh chain: list vs one tensor", 0.8, "x", w3.one, w3.list),
      make_target("10000 x 100 AdamW: list vs one tensor", 0.8, "x", w4.one, w4.list),
      make_target("10000 x 100 tanh chain: packed list vs one", 0.8, "x", w3.one, w3.packed),
      make_target("10000 x 100 AdamW: packed list vs one", 0.8, "x", w4.one, w4.packed),
  };
  print_targets(report.targets);
  std::printf("(the goals: copy bandwidth, the 9-op chain and 10000 x 100; the torch 2.x chain, the\n"
              "per-tensor loop over the %zu tensors and the packed lists are for reference)\n",
              big.size());
  return write_json_if_asked(opt, "foreach", "cpu", threads, reps, weft::kCpuPacketIsa, report);
}

}  // namespace

int main(int argc, char** argv) {
  return weft_bench::run_main(argc, argv, "foreach", "cpu", [](const Options& opt) {
    return opt.device == "cuda" ? weft_bench::needs_cuda_build("foreach") : run_cpu(opt);
  });
}
