// SPDX-License-Identifier: MIT
/// @file ResNet-18 (CIFAR-10) training and inference on weft beside PyTorch eager and torch.compile, and the ResNet-18 (CIFAR) and ResNet-50 (ImageNet) convolutions, forward and backward, beside libtorch's in the same process, fp32 and bf16.
//
//   OMP_NUM_THREADS=2 chrt -f 1 build/release/bench/resnet [--batch 64] [--steps 3] [--infer-steps 20]
//       [--rounds 2] [--threads 2] [--reps 5] [--no-model] [--no-layers] [--no-compile] [--channels-last] [--quick]
//       [--layers TEXT] [--dtypes fp32,bf16] [--json FILE]
//
// Built where Meson finds PyTorch's pip wheel (option torch_peer; bench/meson.build), as
// bench/matmul_torch is: libtorch and weft share the process's libgomp and its threads.
//
// Part 1, the model: examples/resnet/resnet.hpp's ResNet-18 (CIFAR-10, 32x32 inputs), float32, in
// this process: per round, --steps training steps (forward, backward, SGD with momentum 0.9 and
// weight decay 5e-4) at --batch, and --infer-steps eval-mode forward passes at batch 1 under
// ad::NoGrad through resnet::FoldedResNet (as `resnet infer`), and as many through the modules' own
// forward (BatchNorm apart, as `resnet infer --mode modules`) with every weight prepacked (nn::prepack)
// and unpacked, in turn (prepacking's gain alone); then
// bench/resnet_torch.py (the same architecture in PyTorch) run eagerly and under torch.compile,
// each a child process that prints one line per timed step (its warm-up steps, torch.compile's
// compilation among them, are not timed). A round's time of each peer is the
// median of its steps; the targets are medians over rounds of per-round ratios. The roofline is
// the fp32 FMA peak of --threads threads measured at start (bench/peak.hpp), against the step's
// FLOPs: 2 multiply-adds per weight per output pixel of every convolution and the linear layer,
// times 3 in training (forward, input gradient, weight gradient).
//
// Part 2, the layers: each distinct convolution of ResNet-18 (CIFAR, batch --layer-batch) and
// representative ones of ResNet-50 (ImageNet 224x224: the 7x7/2 stem, the bottlenecks' 1x1 and
// 3x3 convolutions, the strided shortcuts; batch 1), NCHW (or with --channels-last the
// activations in channels-last memory, torch's weights too), no bias: nn::conv2d against at::conv2d
// and nn::conv2d_backward (dx and dw) against at::convolution_backward, on the same inputs,
// interleaved round by round (which library goes first alternates), each timing >= ~20 ms of
// repeated calls. Each result is checked against libtorch's: |weft - torch| over the bound of
// any summation order (the same convolution of |x| and |w|, or the backward of |dy|), at most
// 2 (K 2^-24 + 2^-9 for bf16's rounding), K the length of the sums.
#include <omp.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "../examples/resnet/folded.hpp"
#include "../examples/resnet/resnet.hpp"
#include "bench_common.hpp"
#include "peak.hpp"
#include "torch_peer.hpp"

namespace {

using weft_bench::median;
using weft_bench::time_ms;
using weft_bench::to_weft;

struct Settings {
  std::int64_t batch = 64, layer_batch = 64, threads = 2, steps = 3, infer_steps = 20, rounds = 2, reps = 5;
  bool model = true, layers = true, torch = true, compile = true, quick = false, channels_last = false;
  std::string json;
  std::string layer_filter;  // --layers: only the layers whose "net layer" name contains it
  std::string dtypes = "fp32,bf16";  // --dtypes
};

// ---------------------------------------------------------------- the model

/// Multiply-adds x 2 of one forward pass of the CIFAR ResNet at N images of H x W: every
/// convolution (O C/groups kH kW per output pixel) and the linear layer.
double forward_flops(const resnet::ResNetConfig& c, double N, std::int64_t H, std::int64_t W) {
  auto conv = [&](std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t h, std::int64_t w) {
    return 2.0 * N * double(in * out * k * k) * double(h * w);
  };
  double flops = conv(c.in_channels, c.widths[0], 3, H, W);
  std::int64_t in = c.widths[0];
  for (std::size_t s = 0; s < c.widths.size(); ++s)
    for (std::int64_t b = 0; b < c.blocks[s]; ++b) {
      const std::int64_t stride = b == 0 ? c.strides[s] : 1, out = c.widths[s];
      H = (H - 1) / stride + 1, W = (W - 1) / stride + 1;  // 3x3, padding 1
      flops += conv(in, out, 3, H, W) + conv(out, out, 3, H, W);
      if (stride != 1 || in != out) flops += conv(in, out, 1, H, W);
      in = out;
    }
  return flops + 2.0 * N * double(in * c.num_classes);
}

/// The model in this process: its training steps and inference passes, a median per round.
class WeftModel {
 public:
  WeftModel(std::int64_t batch, std::int64_t steps, std::int64_t infer_steps)
      : batch_(batch), steps_(steps), infer_steps_(infer_steps) {
    weft::manual_seed(0);
    model_ = std::make_unique<resnet::ResNet<float>>();
    weft::optim::SGDOptions o;
    o.lr = 0.1, o.momentum = 0.9, o.weight_decay = 5e-4;
    optimizer_ = std::make_unique<weft::optim::SGD<float>>(model_->parameters(), o);
    images_ = weft::randn<float>({batch, 3, 32, 32}, 1);
    labels_ = weft::randint<std::int64_t>(0, 10, {batch}, 2);
    image_ = weft::randn<float>({1, 3, 32, 32}, 3);
    train_round(1), infer_round(1);  // warm-up: allocations, packing, the optimizer's state
  }

  double train_round(std::int64_t steps) {
    model_->train();
    std::vector<double> ms;
    for (std::int64_t s = 0; s < steps; ++s)
      ms.push_back(time_ms([&] {
        optimizer_->zero_grad();
        weft::ad::Var<float> loss = weft::nn::cross_entropy((*model_)(weft::ad::Var<float>(images_)), labels_);
        loss.backward();
        optimizer_->step();
      }));
    return median(ms);
  }
  /// As `resnet infer` runs: eval mode, every BatchNorm folded into its convolution, prepacked,
  /// relu and residual in the epilogues, channels-last activations (resnet::FoldedResNet, built
  /// untimed: once per trained model); the model itself is left as it was for the next steps.
  double infer_round(std::int64_t passes) {
    model_->eval();
    const resnet::FoldedResNet<float> folded(*model_);
    model_->train();
    const weft::ad::NoGrad no_tape;
    std::vector<double> ms;
    for (std::int64_t s = 0; s < passes; ++s) ms.push_back(time_ms([&] { (void)folded(image_); }));
    return median(ms);
  }
  /// The modules' own eval forward at batch 1 (BatchNorm apart: `resnet infer --mode modules`), every weight
  /// prepacked (nn::prepack, untimed) or none: what prepacking alone gains at batch 1.
  double modules_infer_round(std::int64_t passes, bool prepacked) {
    model_->eval();
    if (prepacked) weft::nn::prepack(*model_);
    std::vector<double> ms;
    {
      const weft::ad::NoGrad no_tape;
      for (std::int64_t s = 0; s < passes; ++s)
        ms.push_back(time_ms([&] { (void)(*model_)(weft::ad::Var<float>(image_)); }));
    }
    weft::nn::unpack(*model_);
    model_->train();
    return median(ms);
  }
  double train_round() { return train_round(steps_); }
  double infer_round() { return infer_round(infer_steps_); }
  std::int64_t batch() const { return batch_; }

 private:
  std::int64_t batch_;
  std::int64_t steps_, infer_steps_;
  std::unique_ptr<resnet::ResNet<float>> model_;
  std::unique_ptr<weft::optim::SGD<float>> optimizer_;
  weft::Tensor<float> images_, image_;
  weft::Tensor<std::int64_t> labels_;
};

/// The median training-step and inference-pass times of one run of bench/resnet_torch.py (NAN
/// where it printed none), and its warm-up lines.
struct TorchRun {
  double train_ms = NAN, infer_ms = NAN;
  std::string warmup;
};
TorchRun run_torch_script(const std::string& command) {
  TorchRun r;
  std::vector<double> train, infer;
  FILE* out = popen((command + " 2>&1").c_str(), "r");
  if (!out) return r;
  static const std::regex timed(R"(^(step|infer) \d+: .*\(took ([0-9.]+) ms\))");
  char line[4096];
  while (std::fgets(line, sizeof line, out)) {
    std::cmatch m;
    if (std::regex_search(line, m, timed)) (m[1] == "step" ? train : infer).push_back(std::stod(m[2].str()));
    else if (std::string(line).rfind("warm-up:", 0) == 0) r.warmup += line;
  }
  if (pclose(out) != 0) std::fprintf(stderr, "  (%s failed)\n", command.c_str());
  if (!train.empty()) r.train_ms = median(train);
  if (!infer.empty()) r.infer_ms = median(infer);
  return r;
}

void run_model(const Settings& s, const weft_bench::Peaks& peak, weft_bench::Report& report) {
  const resnet::ResNetConfig config;
  const double train_flops = 3 * forward_flops(config, double(s.batch), 32, 32);
  const double infer_flops = forward_flops(config, 1, 32, 32);
  std::printf("ResNet-18 (CIFAR-10): training step at batch %lld (%.1f GFLOP), inference at batch 1 (%.2f GFLOP)\n",
              (long long)s.batch, train_flops * 1e-9, infer_flops * 1e-9);
  WeftModel weft_model(s.batch, s.steps, s.infer_steps);
  const std::string script = WEFT_SOURCE_DIR "/bench/resnet_torch.py";
  const std::string torch_command = "OMP_NUM_THREADS=" + std::to_string(s.threads) + " python3 '" + script +
                                    "' --batch " + std::to_string(s.batch) + " --steps " + std::to_string(s.steps) +
                                    " --infer-steps " + std::to_string(s.infer_steps) + " --threads " +
                                    std::to_string(s.threads);
  std::vector<double> weft_train, weft_infer, eager_train, eager_infer, compile_train, compile_infer;
  std::vector<double> modules_packed, modules_plain;
  std::string compile_warmup;
  for (std::int64_t r = 0; r < s.rounds; ++r) {
    weft_train.push_back(weft_model.train_round());
    weft_infer.push_back(weft_model.infer_round());
    // prepacking alone: the modules' forward with and without, the order alternating from round to round
    for (int v = 0; v < 2; ++v) {
      const bool packed = (v == 1) == (r % 2 == 0);
      (packed ? modules_packed : modules_plain).push_back(weft_model.modules_infer_round(s.infer_steps, packed));
    }
    std::printf("round %lld: weft %.1f ms/step, %.2f ms/image (modules: %.2f prepacked, %.2f unpacked)", (long long)r,
                weft_train.back(), weft_infer.back(), modules_packed.back(), modules_plain.back());
    if (s.torch) {
      const TorchRun eager = run_torch_script(torch_command);
      eager_train.push_back(eager.train_ms), eager_infer.push_back(eager.infer_ms);
      std::printf("; torch eager %.1f ms/step, %.2f ms/image", eager.train_ms, eager.infer_ms);
      if (s.compile) {
        const TorchRun compiled = run_torch_script(torch_command + " --compile");
        compile_train.push_back(compiled.train_ms), compile_infer.push_back(compiled.infer_ms);
        compile_warmup = compiled.warmup;
        std::printf("; torch.compile %.1f ms/step, %.2f ms/image", compiled.train_ms, compiled.infer_ms);
      }
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  auto row = [&](const char* workload, const char* variant, const std::vector<double>& ms, double flops) {
    if (ms.empty()) return;
    weft_bench::Row r{workload, variant, 1, 0, median(ms), weft_bench::minimum(ms)};
    r.peak_fraction = flops / (median(ms) * 1e6) / peak.fp32;
    report.rows.push_back(r);
    std::printf("  %-28s %-14s %10.2f ms %8.1f GFLOP/s %5.0f%% of the fp32 peak\n", workload, variant, median(ms),
                flops / (median(ms) * 1e6), 100 * r.peak_fraction);
  };
  std::printf("\n");
  row("resnet18 train step", "weft", weft_train, train_flops);
  row("resnet18 train step", "torch eager", eager_train, train_flops);
  row("resnet18 train step", "torch.compile", compile_train, train_flops);
  row("resnet18 inference batch 1", "weft", weft_infer, infer_flops);
  row("resnet18 inference batch 1", "torch eager", eager_infer, infer_flops);
  row("resnet18 inference batch 1", "torch.compile", compile_infer, infer_flops);
  row("resnet18 modules batch 1", "weft prepacked", modules_packed, infer_flops);
  row("resnet18 modules batch 1", "weft unpacked", modules_plain, infer_flops);
  std::printf("  (GFLOP/s count a direct convolution's flops; float 3x3 layers of stride 1 run as Winograd's\n"
              "  F(2x2, 3x3), 2.25x fewer multiplies, so weft's rate can pass the peak)\n");
  const std::vector<double> peak_train(weft_train.size(), train_flops / peak.fp32 * 1e-6);
  report.targets.push_back(
      weft_bench::make_target("weft train step vs fp32 FMA peak (fraction)", 0, "%", peak_train, weft_train));
  report.targets.push_back(weft_bench::make_target("prepacked vs unpacked modules, batch 1 (speedup)", 1.0, "x",
                                                   modules_plain, modules_packed));
  if (!eager_train.empty()) {
    report.targets.push_back(weft_bench::make_target("weft train vs PyTorch eager (speedup)", 1.3, "x", eager_train,
                                                     weft_train));
    report.targets.push_back(weft_bench::make_target("weft inference vs PyTorch eager (speedup)", 1.5, "x",
                                                     eager_infer, weft_infer));
  }
  if (!compile_train.empty()) {
    report.targets.push_back(weft_bench::make_target("weft train vs torch.compile (speedup)", 1.0, "x", compile_train,
                                                     weft_train));
    report.targets.push_back(weft_bench::make_target("weft inference vs torch.compile (speedup)", 1.0, "x",
                                                     compile_infer, weft_infer));
  }
  if (!compile_warmup.empty()) std::printf("torch.compile, the last round's warm-up:\n%s", compile_warmup.c_str());
}

// ---------------------------------------------------------------- the layers

struct ConvShape {
  const char* net;
  const char* role;
  std::int64_t n, c, h, w, o, k, stride, padding;
  std::int64_t out_h() const { return (h + 2 * padding - k) / stride + 1; }
  std::int64_t out_w() const { return (w + 2 * padding - k) / stride + 1; }
  double flops() const { return 2.0 * double(n * o * c * k * k) * double(out_h() * out_w()); }
};

/// ResNet-18 (CIFAR)'s distinct convolutions at batch `cifar_batch`; ResNet-50 (ImageNet)'s stem
/// and a bottleneck's convolutions per stage (torchvision's v1.5: the stride on the 3x3) at batch 1.
std::vector<ConvShape> conv_shapes(std::int64_t cifar_batch) {
  const std::int64_t b = cifar_batch;
  return {
      {"resnet18", "stem 3x3", b, 3, 32, 32, 64, 3, 1, 1},
      {"resnet18", "layer1 3x3", b, 64, 32, 32, 64, 3, 1, 1},
      {"resnet18", "layer2.0 3x3/2", b, 64, 32, 32, 128, 3, 2, 1},
      {"resnet18", "layer2 3x3", b, 128, 16, 16, 128, 3, 1, 1},
      {"resnet18", "layer2 shortcut 1x1/2", b, 64, 32, 32, 128, 1, 2, 0},
      {"resnet18", "layer3.0 3x3/2", b, 128, 16, 16, 256, 3, 2, 1},
      {"resnet18", "layer3 3x3", b, 256, 8, 8, 256, 3, 1, 1},
      {"resnet18", "layer4.0 3x3/2", b, 256, 8, 8, 512, 3, 2, 1},
      {"resnet18", "layer4 3x3", b, 512, 4, 4, 512, 3, 1, 1},
      {"resnet50", "stem 7x7/2", 1, 3, 224, 224, 64, 7, 2, 3},
      {"resnet50", "layer1 1x1 reduce", 1, 256, 56, 56, 64, 1, 1, 0},
      {"resnet50", "layer1 3x3", 1, 64, 56, 56, 64, 3, 1, 1},
      {"resnet50", "layer1 1x1 expand", 1, 64, 56, 56, 256, 1, 1, 0},
      {"resnet50", "layer2.0 3x3/2", 1, 128, 56, 56, 128, 3, 2, 1},
      {"resnet50", "layer2 shortcut 1x1/2", 1, 256, 56, 56, 512, 1, 2, 0},
      {"resnet50", "layer3 3x3", 1, 256, 14, 14, 256, 3, 1, 1},
      {"resnet50", "layer3 1x1 reduce", 1, 1024, 14, 14, 256, 1, 1, 0},
      {"resnet50", "layer4 3x3", 1, 512, 7, 7, 512, 3, 1, 1},
      {"resnet50", "layer4 1x1 expand", 1, 512, 7, 7, 2048, 1, 1, 0},
  };
}

struct LayerResult {
  std::vector<double> torch_fwd, weft_fwd, torch_bwd, weft_bwd;  // one sample per round
  double error = 0, tolerance = 0;                                 // the worst of y, dx, dw
};

/// max |weft - torch| / bound over the elements.
template <class T>
double bounded_error(const weft::Tensor<T>& got, const torch::Tensor& want, const torch::Tensor& bound) {
  const torch::Tensor g =
      torch::from_blob(const_cast<T*>(got.data()), want.sizes(), want.scalar_type()).to(torch::kFloat);
  return ((g - want.to(torch::kFloat)).abs() / bound.clamp_min(1e-30)).max().item<double>();
}

template <class T>
LayerResult run_layer(const ConvShape& s, torch::ScalarType dtype, std::int64_t reps, bool channels_last) {
  torch::manual_seed(0);
  // Channels-last: torch's tensors (the weight too, as model.to(memory_format=...) makes it) and
  // weft's activations in NHWC memory; weft's weight stays a (contiguous) Tensor, as a module holds it.
  const auto format = channels_last ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous;
  const torch::Tensor x = torch::randn({s.n, s.c, s.h, s.w}).to(dtype).contiguous(format);
  const torch::Tensor w =
      (torch::randn({s.o, s.c, s.k, s.k}) / std::sqrt(double(s.c * s.k * s.k))).to(dtype).contiguous(format);
  const torch::Tensor dy = torch::randn({s.n, s.o, s.out_h(), s.out_w()}).to(dtype).contiguous(format);
  const weft::Tensor<T> ww = to_weft<T>(w), x_nchw = to_weft<T>(x), dy_nchw = to_weft<T>(dy);
  const weft::TensorView<const T> wx =
      channels_last ? weft::TensorView<const T>(weft::channels_last(x_nchw)) : x_nchw.view();
  const weft::TensorView<const T> wdy =
      channels_last ? weft::TensorView<const T>(weft::channels_last(dy_nchw)) : dy_nchw.view();
  const weft::nn::ConvOptions o{.stride = s.stride, .padding = s.padding};
  const std::vector<std::int64_t> stride{s.stride, s.stride}, padding{s.padding, s.padding}, dilation{1, 1};

  torch::Tensor y, dx, dw;
  weft::Tensor<T> wy;
  weft::nn::ConvGradients<T> wg;
  auto torch_fwd = [&] { y = at::conv2d(x, w, {}, stride, padding); };
  auto weft_fwd = [&] { wy = weft::nn::conv2d(wx, ww, o); };
  auto torch_bwd = [&] {
    std::tie(dx, dw, std::ignore) = at::convolution_backward(dy, x, w, std::nullopt, stride, padding, dilation, false,
                                                             {0, 0}, 1, {true, true, false});
  };
  auto weft_bwd = [&] {
    wg = weft::nn::conv2d_backward<T>(wdy, wx, ww, o, {.input = true, .weight = true, .bias = false});
  };
  torch_fwd(), weft_fwd(), torch_bwd(), weft_bwd();

  LayerResult r;
  {
    const torch::Tensor ax = x.to(torch::kFloat).abs(), aw = w.to(torch::kFloat).abs(), ady = dy.to(torch::kFloat).abs();
    const torch::Tensor y_bound = at::conv2d(ax, aw, {}, stride, padding);
    const auto [dx_bound, dw_bound, unused] = at::convolution_backward(ady, ax, aw, std::nullopt, stride, padding,
                                                                       dilation, false, {0, 0}, 1, {true, true, false});
    const double rounding = dtype == torch::kBFloat16 ? std::ldexp(1.0, -9) : 0.0;
    const double k_y = double(s.c * s.k * s.k), k_dx = double(s.o * s.k * s.k), k_dw = double(s.n * s.out_h() * s.out_w());
    r.tolerance = 2 * (rounding + std::max({k_y, k_dx, k_dw}) * std::ldexp(1.0, -24));
    r.error = std::max({bounded_error(wy, y, y_bound), bounded_error(wg.dx, dx, dx_bound),
                        bounded_error(wg.dweight, dw, dw_bound)});
  }
  auto repeated = [](const auto& f) {
    const int count = std::max(1, int(std::ceil(20.0 / std::max(time_ms(f), 1e-6))));
    return time_ms([&] {
             for (int i = 0; i < count; ++i) f();
           }) /
           count;
  };
  for (std::int64_t round = 0; round < reps; ++round) {
    if (round % 2 == 0) {
      r.torch_fwd.push_back(repeated(torch_fwd)), r.weft_fwd.push_back(repeated(weft_fwd));
      r.torch_bwd.push_back(repeated(torch_bwd)), r.weft_bwd.push_back(repeated(weft_bwd));
    } else {
      r.weft_fwd.push_back(repeated(weft_fwd)), r.torch_fwd.push_back(repeated(torch_fwd));
      r.weft_bwd.push_back(repeated(weft_bwd)), r.torch_bwd.push_back(repeated(torch_bwd));
    }
  }
  return r;
}

/// The median over rounds of torch time / weft time.
double speedup(const std::vector<double>& torch_ms, const std::vector<double>& weft_ms) {
  std::vector<double> ratio;
  for (std::size_t i = 0; i < weft_ms.size(); ++i) ratio.push_back(torch_ms[i] / weft_ms[i]);
  return median(ratio);
}

int run_layers(const Settings& s, const weft_bench::Peaks& peak, weft_bench::Report& report) {
  const char* layout = s.channels_last ? "channels-last" : "NCHW";
  std::printf("\nconvolutions, %s, no bias: weft::nn::conv2d / conv2d_backward (dx, dw) vs libtorch %s; %lld rounds\n",
              layout, TORCH_VERSION, (long long)s.reps);
  std::printf("%-5s %-9s %-22s %-24s %8s %8s %7s %8s %8s %7s %6s %8s %s\n", "dtype", "net", "layer",
              "N C HxW -> O k/s", "fwd", "torch", "weft/", "bwd", "torch", "weft/", "fwd", "error /", "check");
  std::printf("%-5s %-9s %-22s %-24s %8s %8s %7s %8s %8s %7s %6s %8s\n", "", "", "", "", "GFLOP/s", "GFLOP/s", "torch",
              "GFLOP/s", "GFLOP/s", "torch", "%peak", "bound");
  std::printf("%s\n", std::string(140, '-').c_str());
  int failures = 0;
  for (bool bf16 : {false, true}) {
    if (s.dtypes.find(bf16 ? "bf16" : "fp32") == std::string::npos) continue;
    const double roof = bf16 ? weft_bench::bf16_roof(peak) : peak.fp32;
    const std::vector<double> zeros(std::size_t(s.reps), 0.0);
    LayerResult totals{zeros, zeros, zeros, zeros};
    for (const ConvShape& c : conv_shapes(s.layer_batch)) {
      if ((std::string(c.net) + " " + c.role).find(s.layer_filter) == std::string::npos) continue;
      const LayerResult r = bf16 ? run_layer<weft::bfloat16>(c, torch::kBFloat16, s.reps, s.channels_last)
                                 : run_layer<float>(c, torch::kFloat32, s.reps, s.channels_last);
      const double fwd = c.flops() / (median(r.weft_fwd) * 1e6), bwd = 2 * c.flops() / (median(r.weft_bwd) * 1e6);
      const double torch_fwd = c.flops() / (median(r.torch_fwd) * 1e6);
      const double torch_bwd = 2 * c.flops() / (median(r.torch_bwd) * 1e6);
      const bool ok = r.error <= r.tolerance;
      failures += !ok;
      const std::string dims = std::to_string(c.n) + " " + std::to_string(c.c) + " " + std::to_string(c.h) + "x" +
                               std::to_string(c.w) + " -> " + std::to_string(c.o) + " " + std::to_string(c.k) + "/" +
                               std::to_string(c.stride);
      std::printf("%-5s %-9s %-22s %-24s %8.1f %8.1f %6.2fx %8.1f %8.1f %6.2fx %5.0f%% %8.1e %s\n", bf16 ? "bf16" : "fp32",
                  c.net, c.role, dims.c_str(), fwd, torch_fwd, speedup(r.torch_fwd, r.weft_fwd), bwd, torch_bwd,
                  speedup(r.torch_bwd, r.weft_bwd), 100 * fwd / roof, r.error, ok ? "ok" : "FAIL");
      std::fflush(stdout);
      const std::string workload = std::string(c.net) + " " + c.role + " " + (bf16 ? "bf16 " : "fp32 ") + layout;
      for (const auto& [variant, ms, flops] :
           {std::tuple{"weft forward", &r.weft_fwd, c.flops()}, std::tuple{"torch forward", &r.torch_fwd, c.flops()},
            std::tuple{"weft backward", &r.weft_bwd, 2 * c.flops()},
            std::tuple{"torch backward", &r.torch_bwd, 2 * c.flops()}}) {
        weft_bench::Row row{workload, variant, 1, 0, median(*ms), weft_bench::minimum(*ms)};
        row.peak_fraction = flops / (median(*ms) * 1e6) / roof;
        report.rows.push_back(row);
      }
      for (std::size_t round = 0; round < r.weft_fwd.size(); ++round) {
        totals.weft_fwd[round] += r.weft_fwd[round], totals.torch_fwd[round] += r.torch_fwd[round];
        totals.weft_bwd[round] += r.weft_bwd[round], totals.torch_bwd[round] += r.torch_bwd[round];
      }
    }
    // One target per dtype and direction: the layers' times summed per round (each layer once, as
    // a network runs them), so the layers weigh by their time, not one vote each.
    const std::string dtype = std::string(bf16 ? "bf16 " : "fp32 ") + layout;
    report.targets.push_back(weft_bench::make_target(dtype + " convolutions forward vs libtorch (summed)", 1.0, "x",
                                                     totals.torch_fwd, totals.weft_fwd));
    report.targets.push_back(weft_bench::make_target(dtype + " convolutions backward vs libtorch (summed)", 1.0, "x",
                                                     totals.torch_bwd, totals.weft_bwd));
  }
  std::printf("GFLOP/s: 2 N O C k^2 H' W' per forward, twice that per backward (dx and dw), from the median time over\n"
              "rounds; weft/torch: median over rounds of torch time / weft time (> 1: weft is faster); %%peak: weft's\n"
              "forward over the peak (fp32 FMA; bf16: weft's bf16 GEMM instruction's); error / bound: the worst of\n"
              "y, dx and dw, FAIL above 2 (K 2^-24 + 2^-9 for bf16), K the longest sum; fp32 3x3 layers of stride 1\n"
              "run as Winograd's F(2x2, 3x3) (2.25x fewer multiplies than the flops counted: %%peak past 100%%)\n");
  return failures;
}

void usage() {
  std::printf("usage: resnet [--batch 64] [--layer-batch 64] [--steps 3] [--infer-steps 20] [--rounds 2] [--threads 2]\n"
              "              [--reps 5] [--no-model] [--no-layers] [--no-torch] [--no-compile] [--channels-last] [--quick]\n"
              "              [--layers TEXT] [--dtypes fp32,bf16] [--json FILE]\n"
              "  --batch        the training batch (part 1); --layer-batch: ResNet-18's batch in part 2\n"
              "  --no-compile   no torch.compile peer (its compilation takes minutes on 2 cores)\n"
              "  --channels-last  part 2's activations (and torch's weights) in channels-last memory\n"
              "  --layers TEXT  part 2: only the layers whose \"net layer\" contains TEXT (\"resnet50 stem\"),\n"
              "                 and --dtypes only those dtypes (the summed targets then sum only those)\n"
              "  --quick        batch 8, 1 round of 1 step and 3 passes, no torch.compile, 1 layer round\n"
              "Run it as `OMP_NUM_THREADS=2 chrt -f 1 resnet ...` on a shared machine.\n");
}

/// Reads the arguments into `s`: 0 when they are fine, else the exit status (0 after --help).
int parse_settings(int argc, char** argv, Settings& s) {
  const std::map<std::string, std::int64_t*> counts = {
      {"--batch", &s.batch},   {"--layer-batch", &s.layer_batch}, {"--steps", &s.steps}, {"--infer-steps", &s.infer_steps},
      {"--rounds", &s.rounds}, {"--threads", &s.threads},         {"--reps", &s.reps}};
  const std::map<std::string, bool*> switches_off = {
      {"--no-model", &s.model}, {"--no-layers", &s.layers}, {"--no-torch", &s.torch}, {"--no-compile", &s.compile}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (counts.count(a) && has_value) {
      *counts.at(a) = std::atoll(argv[++i]);
      if (*counts.at(a) < 1) {
        std::fprintf(stderr, "resnet: %s must be >= 1\n", a.c_str());
        return 2;
      }
    } else if (switches_off.count(a)) {
      *switches_off.at(a) = false;
    } else if (a == "--channels-last") {
      s.channels_last = true;
    } else if (a == "--layers" && has_value) {
      s.layer_filter = argv[++i];
    } else if (a == "--dtypes" && has_value) {
      s.dtypes = argv[++i];
    } else if (a == "--json" && has_value) {
      s.json = argv[++i];
    } else if (a == "--quick") {
      s.quick = true, s.compile = false;
      s.batch = s.layer_batch = 8;
      s.steps = s.rounds = s.reps = 1;
      s.infer_steps = 3;
    } else {
      usage();
      return a == "--help" ? 0 : 2;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  if (argc > 1 && std::string(argv[1]) == "--help") return usage(), 0;
  if (const int status = parse_settings(argc, argv, s)) return status;
  weft::set_num_threads(int(s.threads));
  torch::set_num_threads(int(s.threads));
  if (s.torch && std::system("python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "note: python3 cannot import torch; no PyTorch peer for the model\n");
    s.torch = false;
  }
  weft_bench::Report report;
  std::printf("weft vs PyTorch %s on ResNet; %lld threads (weft, libtorch, python)\n  cpu: %s; weft SIMD: %s\n",
              TORCH_VERSION, (long long)s.threads, weft_bench::cpu_model().c_str(), weft::kCpuPacketIsa);
  const weft_bench::Peaks peak = weft_bench::measure_peaks(int(s.threads));
  std::printf("  %s\n\n", weft_bench::peaks_line(peak).c_str());
  report.notes.push_back(weft_bench::cpu_model());
  report.notes.push_back(weft_bench::peaks_line(peak));
  int failures = 0;
  try {
    if (s.model) run_model(s, peak, report);
    if (s.layers) failures = run_layers(s, peak, report);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "resnet: %s\n", e.what());
    return 1;
  }
  weft_bench::print_targets(report.targets);
  if (!s.json.empty()) {
    const int threads = int(s.threads), rounds = int(s.rounds);
    if (!weft_bench::write_json(s.json, "resnet", "cpu", threads, rounds, s.quick, weft::kCpuPacketIsa, report)) {
      std::fprintf(stderr, "cannot write %s\n", s.json.c_str());
      return 1;
    }
    std::printf("\nwrote %s\n", s.json.c_str());
  }
  return failures ? 1 : 0;
}
