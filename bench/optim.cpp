// SPDX-License-Identifier: MIT
/// @file Optimizer benchmark: weft::optim steps (one fused kernel each) against copy bandwidth and
/// the same AdamW update as single-op foreach passes.
//
// Workloads, float32, a transformer-like list of 146
// tensors (12 layers x {4 x d x d, d x 4d, 4d x d, 6 x d} + 2 x d, d = 832:
// 99.7M parameters, 400 MB per list):
//   1. weft::optim::AdamW.step against
//      (a) a parallel copy of the same number of bytes (28 per parameter: p,
//          g, m, v read; p, m, v written) measured in the same run,
//      (b) torch's _multi_tensor_adamw as single-op foreach passes, one
//          kernel per torch op (bench/adamw_common.hpp: 8 passes as torch
//          2.x, 9 as torch 1.13);
//   2. every optimizer's step, each beside a copy of its own bytes per
//      parameter (SGD with momentum 20, Adam 28, Adagrad 20, RMSprop 20,
//      centered 28, Lion 20).
// bench/compare_torch.py runs torch.optim on the same shapes and thread
// count beside this program and prints the side-by-side table.
//
// The same file is the CUDA benchmark when bench/optim_cuda.cu includes it:
// there AdamW runs over the list scaled to d = 1664 (399M parameters, 1.6 GB
// per list) on the device, against a device-to-device copy of the same bytes
// and the 8-op chain, with and without a GradScale (the no-sync path).

#include <weft/optim/optim.hpp>

#include "adamw_common.hpp"
#if defined(__CUDACC__)
#include "bench_cuda.hpp"
#endif

namespace {

using namespace weft_bench;
namespace optim = weft::optim;

#if !defined(__CUDACC__)
struct Context {
  int warmup, reps;
  std::vector<weft::Shape> shapes;
  std::int64_t n;
  float* copy_src;
  float* copy_dst;
  Report* report;
};

/// Workload 1: returns the per-round samples of {fused, chain 8, chain 9, copy}.
std::vector<std::vector<double>> bench_adamw(Context& ctx, const std::string& workload) {
  const double bpe = 7.0 * sizeof(float);
  const AdamWHyper h;
  const TensorList<float> g = make_list(ctx.shapes, 4, -1.0f, 1.0f);
  AdamState chain_2x = make_state(ctx.shapes), chain_113 = make_state(ctx.shapes);
  ChainTemps temps{make_list(ctx.shapes, 5, 0.0f, 1.0f), make_list(ctx.shapes, 6, 0.0f, 1.0f)};
  AdamState fused_state = make_state(ctx.shapes);
  optim::AdamW opt(fused_state.p, {.lr = h.lr, .betas = {h.b1, h.b2}, .eps = h.eps, .weight_decay = h.wd});
  opt.step(g);  // makes the state; then every list back to the chains' starting values
  opt.state("exp_avg") = make_state(ctx.shapes).m;
  opt.state("exp_avg_sq") = make_state(ctx.shapes).v;
  fused_state.p = make_state(ctx.shapes).p;

  Variant fused{"optim::AdamW.step", [&] {
                  return time_ms([&] {
                    opt.set_step_count(h.step - 1);  // every round the same step number, like the chains
                    opt.step(g);
                  });
                }};
  Variant c8{"chain: 8 ops (torch2.x)", [&] { return time_ms([&] { adamw_chain(chain_2x, g, temps, h, true); }); }};
  Variant c9{"chain: 9 ops (torch1.13)", [&] { return time_ms([&] { adamw_chain(chain_113, g, temps, h, false); }); }};
  CopyBench copy(ctx.copy_src, ctx.copy_dst, double(ctx.n) * bpe);
  std::vector<Variant*> all;
  for (Variant& v : copy.variants) all.push_back(&v);
  for (Variant* v : {&fused, &c8, &c9}) all.push_back(v);
  measure(all, ctx.warmup, ctx.reps);
  report_workload(*ctx.report, workload, ctx.n, bpe, copy, {&fused, &c8, &c9});

  // Same start, same steps: the three must agree.
  AdamState fused_now{fused_state.p, opt.state("exp_avg"), opt.state("exp_avg_sq")};
  const double d8 = max_abs_diff(fused_now, chain_2x), d9 = max_abs_diff(fused_now, chain_113);
  const bool ok = d8 <= 1e-5 && d9 <= 1e-5;
  std::printf("%-34s   check (p, m, v after %d steps): max|fused - chain 8| = %.3g, max|fused - chain 9| = %.3g%s\n",
              "", ctx.warmup + ctx.reps, d8, d9, ok ? "" : "  <-- MISMATCH");
  if (!ok) ctx.report->notes.push_back(workload + ": results disagree beyond tolerance");
  return {fused.ms, c8.ms, c9.ms, copy.best().ms};
}

/// Workload 2: one optimizer's step beside a copy of its bytes; returns {fused, copy} samples.
template <class Make>
std::vector<std::vector<double>> bench_step(Context& ctx, const std::string& name, double bytes_per_param, Make make) {
  const TensorList<float> g = make_list(ctx.shapes, 4, -1.0f, 1.0f);
  TensorList<float> p = make_list(ctx.shapes, 1, -1.0f, 1.0f);
  auto opt = make(p);
  opt.step(g);  // makes the state
  Variant fused{"step", [&] { return time_ms([&] { opt.step(g); }); }};
  CopyBench copy(ctx.copy_src, ctx.copy_dst, double(ctx.n) * bytes_per_param);
  std::vector<Variant*> all;
  for (Variant& v : copy.variants) all.push_back(&v);
  all.push_back(&fused);
  measure(all, ctx.warmup, ctx.reps);
  report_workload(*ctx.report, name, ctx.n, bytes_per_param, copy, {&fused});
  return {fused.ms, copy.best().ms};
}

int run_cpu(const Options& opt) {
  const int threads = max_threads();
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 5 : 15;
  const int warmup = opt.quick ? 1 : 2;
  Report report;
  print_cpu_machine("optim", threads, "omp_get_max_threads; every weft kernel may use this many", report);
  print_cpu_method(reps, warmup,
                   "  GB/s counts the bytes per parameter that must move (AdamW: p, g, m, v read once; p, m, v\n"
                   "  written once = 28), for every variant alike; 'vs copy' is that over the best copy of the\n"
                   "  same number of bytes. 'chain' rows are torch's _multi_tensor_adamw, one foreach kernel\n"
                   "  per torch op (temporaries preallocated: that only favours them)\n\n");
  Context ctx{warmup, reps, transformer_shapes(12, 832), 0, nullptr, nullptr, &report};
  for (const auto& s : ctx.shapes) ctx.n += s.numel();
  const std::int64_t copy_floats = ctx.n * 7 / 2 + 64;
  weft::Tensor<float> copy_src = make_tensor<float>({copy_floats}, 100);
  weft::Tensor<float> copy_dst = make_tensor<float>({copy_floats}, 101);
  ctx.copy_src = copy_src.data();
  ctx.copy_dst = copy_dst.data();
  const std::string tensors = std::to_string(ctx.shapes.size()) + " tensors [" + million(ctx.n) + "]";

  print_header();
  auto adamw = bench_adamw(ctx, "AdamW " + tensors);
  std::printf("\n");
  auto sgd = bench_step(ctx, "SGD momentum " + tensors, 20, [](TensorList<float>& p) {
    return optim::SGD(p, {.lr = 1e-3, .momentum = 0.9});
  });
  auto adam = bench_step(ctx, "Adam " + tensors, 28, [](TensorList<float>& p) { return optim::Adam(p); });
  auto adagrad = bench_step(ctx, "Adagrad " + tensors, 20, [](TensorList<float>& p) { return optim::Adagrad(p); });
  auto rmsprop = bench_step(ctx, "RMSprop " + tensors, 20, [](TensorList<float>& p) { return optim::RMSprop(p); });
  auto centered = bench_step(ctx, "RMSprop centered " + tensors, 28, [](TensorList<float>& p) {
    return optim::RMSprop(p, {.centered = true});
  });
  auto lion = bench_step(ctx, "Lion " + tensors, 20, [](TensorList<float>& p) { return optim::Lion(p); });

  report.targets = {
      make_target("AdamW: fraction of copy bandwidth", 0.80, "%", adamw[3], adamw[0]),
      make_target("AdamW: speedup over 8 single-op passes", 3.0, "x", adamw[1], adamw[0]),
      make_target("AdamW: speedup over 9 single-op passes", 3.0, "x", adamw[2], adamw[0]),
      make_target("SGD momentum: fraction of copy", 0.80, "%", sgd[1], sgd[0]),
      make_target("Adam: fraction of copy", 0.80, "%", adam[1], adam[0]),
      make_target("Adagrad: fraction of copy", 0.80, "%", adagrad[1], adagrad[0]),
      make_target("RMSprop: fraction of copy", 0.80, "%", rmsprop[1], rmsprop[0]),
      make_target("RMSprop centered: fraction of copy", 0.80, "%", centered[1], centered[0]),
      make_target("Lion: fraction of copy", 0.80, "%", lion[1], lion[0]),
  };
  print_targets(report.targets);
  std::printf("(the goals are set for AdamW; the other optimizers' 80%% is the same bar, for reference)\n");
  return write_json_if_asked(opt, "optim", "cpu", threads, reps, weft::kCpuPacketIsa, report);
}
#endif  // !__CUDACC__

#if defined(__CUDACC__)
TensorList<float> to_cuda(const TensorList<float>& list) {
  TensorList<float> out;
  for (const auto& t : list) out.push_back(t.to(weft::Device::cuda()));
  return out;
}
AdamState to_cuda(const AdamState& s) { return {to_cuda(s.p), to_cuda(s.m), to_cuda(s.v)}; }

int run_cuda(const Options& opt) {
  if (!have_cuda_device("optim")) return 0;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 5 : 21;
  const int warmup = opt.quick ? 1 : 3;
  // 399M parameters (d = 1664): 10 lists of 1.6 GB and the copy buffers; halve d on a small device.
  std::int64_t d = 1664;
  while (d > 64 && 12.0 * 12 * double(d * d) * 4 * 16 > 0.8 * double(prop.totalGlobalMem)) d /= 2;
  const std::vector<weft::Shape> shapes = transformer_shapes(12, d);
  std::int64_t n = 0;
  for (const auto& s : shapes) n += s.numel();
  std::printf("weft optim benchmark, cuda\n  device: %s (%.1f GiB), AdamW over %zu tensors, %s parameters\n", prop.name,
              prop.totalGlobalMem / 1073741824.0, shapes.size(), million(n).c_str());
  std::printf("  reps: %d timed after %d warm-up round(s), variants interleaved; cudaEvent timing\n", reps, warmup);
  std::printf("  roofline: cudaMemcpy device-to-device of the same bytes (28 per parameter, read + write counted)\n\n");

  const double bpe = 7.0 * sizeof(float);
  const AdamWHyper h;
  const TensorList<float> g = to_cuda(make_list(shapes, 4, -1.0f, 1.0f));
  AdamState fused = to_cuda(make_state(shapes)), scaled = to_cuda(make_state(shapes)), chain = to_cuda(make_state(shapes));
  ChainTemps temps{to_cuda(make_list(shapes, 5, 0.0f, 1.0f)), to_cuda(make_list(shapes, 6, 0.0f, 1.0f))};
  const optim::AdamWOptions o{.lr = h.lr, .betas = {h.b1, h.b2}, .eps = h.eps, .weight_decay = h.wd};
  optim::AdamW plain_opt(fused.p, o), scaled_opt(scaled.p, o);
  // Make the state, then every list back to the chain's starting values.
  plain_opt.step(g);
  scaled_opt.step(g);
  for (optim::AdamW<float>* opt_ : {&plain_opt, &scaled_opt}) {
    opt_->state("exp_avg") = chain.m;
    opt_->state("exp_avg_sq") = chain.v;
    opt_->set_step_count(h.step - 1);
  }
  fused.p = chain.p;
  scaled.p = chain.p;
  const weft::Tensor<float> one = weft::ones<float>({1}, weft::Device::cuda()),
                            no_inf = weft::zeros<float>({1}, weft::Device::cuda());

  EventTimer timer;
  char *src = nullptr, *dst = nullptr;
  const std::size_t copy_bytes = std::size_t(double(n) * bpe / 2) + 256;
  check(cudaMalloc(&src, copy_bytes), "cudaMalloc");
  check(cudaMalloc(&dst, copy_bytes), "cudaMalloc");
  check(cudaMemset(src, 1, copy_bytes), "cudaMemset");
  Report report;
  CudaContext ctx{warmup, reps, &timer, src, dst, &report};
  // Every round runs step h.step, like the chain (on CUDA the step count lives on the device: a
  // one-element kernel counts, and the step kernel computes the bias corrections from it). The
  // GradScale step's count is not reset: its bias corrections drift, its bytes do not.
  Variant step{"optim::AdamW.step", [&] {
                 plain_opt.set_step_count(h.step - 1);
                 return timer.ms([&] { plain_opt.step(g); });
               }};
  Variant step_scaled{"step(g, GradScale) no sync", [&] {
                        return timer.ms([&] { scaled_opt.step(g, optim::GradScale{one, no_inf}); });
                      }};
  Variant c8{"chain: 8 ops (torch2.x)", [&] { return timer.ms([&] { adamw_chain(chain, g, temps, h, true); }); }};
  Variant copy = device_copy(ctx, double(n) * bpe);
  measure({&copy, &step, &step_scaled, &c8}, warmup, reps);
  print_header();
  report_cuda(ctx, "AdamW " + std::to_string(shapes.size()) + " tensors [" + million(n) + "]", n, bpe, copy,
              {&step, &step_scaled, &c8});
  // The plain step and the chain ran the same steps from the same values.
  AdamState now{fused.p, plain_opt.state("exp_avg"), plain_opt.state("exp_avg_sq")};
  const double diff = max_abs_diff(now, chain);
  std::printf("%-34s   check (p, m, v): max|step - chain 8| = %.3g%s\n", "", diff, diff <= 1e-5 ? "" : "  <-- MISMATCH");
  if (!(diff <= 1e-5)) report.notes.push_back("AdamW: step and chain disagree beyond tolerance");
  cudaFree(src);
  cudaFree(dst);

  report.targets = {
      make_target("AdamW: fraction of device copy bandwidth", 0.85, "%", copy.ms, step.ms),
      make_target("AdamW with GradScale: fraction of copy", 0.85, "%", copy.ms, step_scaled.ms),
      make_target("AdamW: speedup over 8 single-op passes", 3.0, "x", c8.ms, step.ms),
  };
  print_targets(report.targets);
  return write_json_if_asked(opt, "optim", "cuda", 0, reps, prop.name, report);
}
#endif  // __CUDACC__

}  // namespace

int main(int argc, char** argv) {
#if defined(__CUDACC__)
  return weft_bench::run_main(argc, argv, "optim", "cuda", [](const Options& opt) {
    if (opt.device == "cpu") {
      std::printf("optim_cuda: the CPU benchmark is bench/optim (the host build); nothing to run here\n");
      return 0;
    }
    return run_cuda(opt);
  });
#else
  return weft_bench::run_main(argc, argv, "optim", "cpu", [](const Options& opt) {
    return opt.device == "cuda" ? weft_bench::needs_cuda_build("optim") : run_cpu(opt);
  });
#endif
}
