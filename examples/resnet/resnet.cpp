// SPDX-License-Identifier: MIT
/// @file The resnet program: `train` runs SGD steps of ResNet-18 (CIFAR) on synthetic or .npy images, `infer` times eval-mode forward passes, `check` compares a checkpoint's logits with expected ones; with no arguments, a short train and infer.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <weft/io.hpp>

#include "folded.hpp"
#include "resnet.hpp"

namespace {

using weft::Tensor;
using Var = weft::ad::Var<float>;

const char* const kUsage = R"(usage:
  resnet train [--batch 64] [--steps 20] [--lr 0.1] [--data X.npy --labels Y.npy] [--threads K] [--seed S]
      SGD steps (momentum 0.9, weight decay 5e-4, as the usual CIFAR-10 recipe) of ResNet-18 for CIFAR-10 in
      training mode. Without --data: random images (standard normal) and random labels, a fresh batch per step,
      from --seed (default 0). X.npy: uint8 (scaled to [0, 1] and normalized with CIFAR-10's channel mean and std)
      or float32 images, [N, 32, 32, 3] (a channels-last view, normalized in place) or [N, 3, 32, 32]; Y.npy:
      int64 labels [N] in [0, 10). Step k copies rows k B ... k B + B - 1, wrapping around, into an NCHW
      batch. Prints each step's loss and time, then the median step time over the steps after the first
      (warm-up).
  resnet infer [--batch 1] [--steps 20] [--threads K] [--seed S] [--mode folded|modules]
      eval-mode forward passes (running statistics, nothing recorded for autograd) on random images; prints each
      pass's time and the median time per image over the passes after the first. folded (the default): every
      BatchNorm folded into its convolution, the blocks' relu and residual in the convolutions' epilogues,
      prepacked weights, channels-last activations; modules: the modules' forward, weights prepacked.
  resnet check --weights W.safetensors --images X.npy --logits L.npy [--state-out S.safetensors]
      loads a ResNet-18 checkpoint (strict: every key of the model, shapes and dtypes as its), runs it in eval
      mode on the images (as --data reads them) and compares the logits with L.npy (float32 [N, 10]); exit
      status 0 when they agree within float32 rounding. --state-out writes the model's state_dict afterwards.
      examples/resnet/check_torch.py runs it against PyTorch.
With no arguments: `train --batch 4 --steps 3` and `infer --batch 1 --steps 3` (a smoke run; exit status 1 when
a loss or logit is not finite).
)";

/// CIFAR-10's per-channel mean and standard deviation of the [0, 1]-scaled training images.
constexpr float kCifarMean[3] = {0.4914f, 0.4822f, 0.4465f};
constexpr float kCifarStd[3] = {0.2470f, 0.2435f, 0.2616f};

/// The --name value pairs after the command, each name one of those the command takes.
class Options {
 public:
  Options(std::map<std::string, std::string> values) : values_(std::move(values)) {}  // NOLINT: from a braced list
  Options(int argc, char** argv, const std::vector<std::string>& names) {
    for (int i = 2; i < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag.rfind("--", 0) != 0 || std::find(names.begin(), names.end(), flag.substr(2)) == names.end())
        throw std::invalid_argument("unknown argument " + flag);
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      values_[flag.substr(2)] = argv[i + 1];
    }
  }

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string text(const std::string& name) const { return has(name) ? values_.at(name) : std::string(); }
  /// The whole value as a number (from_chars: "12abc" is refused, not read as 12).
  double number(const std::string& name, double fallback) const {
    if (!has(name)) return fallback;
    const std::string& v = values_.at(name);
    double x = 0;
    const auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (error != std::errc() || end != v.data() + v.size())
      throw std::invalid_argument("--" + name + " takes a number, got '" + v + "'");
    return x;
  }
  std::int64_t count(const std::string& name, std::int64_t fallback) const {
    const double v = number(name, double(fallback));
    if (v < 1 || v != std::floor(v)) throw std::invalid_argument("--" + name + " takes a positive integer");
    return std::int64_t(v);
  }

 private:
  std::map<std::string, std::string> values_;
};

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

/// The median of the times after the first (the first call allocates, packs and warms the caches).
double median_after_first(std::vector<double> ms) {
  if (ms.size() > 1) ms.erase(ms.begin());
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

/// Whether the .npy file's header names uint8 elements ('|u1'): load_npy reads one dtype, so the
/// program asks the header which one before loading.
bool npy_holds_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(256, '\0');
  in.read(head.data(), std::streamsize(head.size()));
  head.resize(std::size_t(in.gcount()));
  if (head.rfind("\x93NUMPY", 0) != 0) throw std::invalid_argument(path + " is not an .npy file");
  return head.find("'|u1'") != std::string::npos;
}

/// The .npy images as floats [N, 3, H, W]: uint8 scaled to [0, 1] and normalized with CIFAR-10's
/// statistics, float32 as they are; a file [N, H, W, 3] permuted, not copied (a channels-last
/// view, which keeps its elements alive).
weft::TensorView<float> load_images(const std::string& path) {
  const bool bytes = npy_holds_bytes(path);
  Tensor<float> stored = bytes ? Tensor<float>(weft::cast<float>(weft::io::load_npy<std::uint8_t>(path)) / 255.0f)
                               : weft::io::load_npy<float>(path);
  const weft::Shape s = stored.shape();
  const bool nhwc = s.rank() == 4 && s[3] == 3 && s[1] != 3;
  if (s.rank() != 4 || !(nhwc || s[1] == 3))
    throw std::invalid_argument(path + ": images must be [N, 32, 32, 3] or [N, 3, 32, 32], got " + weft::detail::cat(s));
  weft::TensorView<float> images = nhwc ? stored.permute({0, 3, 1, 2}) : stored.view();
  if (bytes) {
    const Tensor<float> mean = weft::from_vector<float>({kCifarMean[0], kCifarMean[1], kCifarMean[2]}, {1, 3, 1, 1});
    const Tensor<float> stddev = weft::from_vector<float>({kCifarStd[0], kCifarStd[1], kCifarStd[2]}, {1, 3, 1, 1});
    images = (images - mean) / stddev;  // in place, in either layout
  }
  return images;
}

/// Images [N, 3, 32, 32] of a training set and their labels [N].
struct Dataset {
  weft::TensorView<float> images;
  Tensor<std::int64_t> labels;
};

/// The images (load_images) and their labels, checked.
Dataset load_dataset(const std::string& data, const std::string& labels) {
  // Built whole: assigning a view to a view would write its elements, not rebind it.
  const Dataset d{load_images(data), weft::io::load_npy<std::int64_t>(labels)};
  const std::int64_t n = d.images.shape()[0];
  if (d.labels.dim() != 1 || d.labels.shape()[0] != n)
    throw std::invalid_argument(labels + ": labels must be [" + std::to_string(n) + "], got " +
                                weft::detail::cat(d.labels.shape()));
  for (std::int64_t i = 0; i < d.labels.numel(); ++i)
    if (d.labels.data()[i] < 0 || d.labels.data()[i] >= 10)
      throw std::invalid_argument(labels + ": label " + std::to_string(d.labels.data()[i]) + " at row " +
                                  std::to_string(i) + " is not a CIFAR-10 class in [0, 10)");
  return d;
}

/// Step k's batch of B rows: consecutive rows from k B, back to row 0 when fewer than B remain.
struct Batch {
  Tensor<float> images;
  Tensor<std::int64_t> labels;
};
Batch batch_of(const Dataset& d, std::int64_t step, std::int64_t B) {
  const std::int64_t n = d.images.shape()[0];
  if (n < B)
    throw std::invalid_argument("the data has " + std::to_string(n) + " images, fewer than --batch " + std::to_string(B));
  std::int64_t start = (step * B) % n;
  if (start + B > n) start = 0;
  return {weft::eval(d.images.narrow(0, start, B)), weft::eval(d.labels.narrow(0, start, B))};
}

/// Random images (standard normal) and labels, drawn from `seed`'s stream for this step.
Batch synthetic_batch(std::uint64_t seed, std::int64_t step, std::int64_t B) {
  const std::uint64_t s = seed * 1000003u + std::uint64_t(step);
  return {weft::randn<float>({B, 3, 32, 32}, s), weft::randint<std::int64_t>(0, 10, {B}, s + 1)};
}

bool finite(const Tensor<float>& t) {
  for (std::int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.data()[i])) return false;
  return true;
}

/// `train`: returns 0, or 1 when a loss is not finite.
int train(const Options& o) {
  const std::int64_t B = o.count("batch", 64), steps = o.count("steps", 20);
  const std::uint64_t seed = std::uint64_t(o.number("seed", 0));
  weft::optim::SGDOptions sgd;
  sgd.lr = o.number("lr", 0.1);
  sgd.momentum = 0.9;
  sgd.weight_decay = 5e-4;
  const bool from_files = !o.text("data").empty();
  if (from_files != !o.text("labels").empty()) throw std::invalid_argument("--data and --labels go together");
  const Dataset data = from_files ? load_dataset(o.text("data"), o.text("labels")) : Dataset{};

  weft::manual_seed(seed);
  resnet::ResNet<float> model;
  weft::optim::SGD<float> optimizer(model.parameters(), sgd);
  std::printf("ResNet-18 (CIFAR-10): %lld parameters; batch %lld, lr %g, %s\n", (long long)resnet::parameter_count(model),
              (long long)B, sgd.lr, from_files ? o.text("data").c_str() : "synthetic data");
  std::vector<double> ms;
  bool ok = true;
  for (std::int64_t step = 0; step < steps; ++step) {
    const Batch b = from_files ? batch_of(data, step, B) : synthetic_batch(seed, step, B);
    const auto t0 = std::chrono::steady_clock::now();
    optimizer.zero_grad();
    Var loss = weft::nn::cross_entropy(model(Var(b.images)), b.labels);
    loss.backward();
    optimizer.step();
    ms.push_back(milliseconds_since(t0));
    const float value = loss.value().item();
    ok = ok && std::isfinite(value);
    std::printf("step %lld: loss %f (took %f ms)\n", (long long)step, value, ms.back());
    std::fflush(stdout);
  }
  const double median = median_after_first(ms);
  std::printf("train: %.1f ms/step (median), %.1f images/s\n", median, double(B) / median * 1e3);
  return ok ? 0 : 1;
}

/// `infer`: returns 0, or 1 when a logit is not finite.
int infer(const Options& o) {
  const std::int64_t B = o.count("batch", 1), steps = o.count("steps", 20);
  const std::uint64_t seed = std::uint64_t(o.number("seed", 0));
  weft::manual_seed(seed);
  resnet::ResNet<float> model;
  model.eval();
  // --mode folded: BatchNorm folded into the convolutions, prepacked, relu and residual in their
  // epilogues, channels-last activations (examples/resnet/folded.hpp); --mode modules: the
  // modules' own forward, their convolutions' weights prepacked.
  const std::string mode = o.has("mode") ? o.text("mode") : "folded";
  if (mode != "folded" && mode != "modules") throw std::invalid_argument("--mode is folded or modules, got '" + mode + "'");
  const bool plain = mode == "modules";
  if (plain) weft::nn::prepack(model);
  const resnet::FoldedResNet<float> folded(model);
  const weft::ad::NoGrad no_tape;
  std::vector<double> ms;
  bool ok = true;
  for (std::int64_t step = 0; step < steps; ++step) {
    const Tensor<float> images = synthetic_batch(seed, step, B).images;
    const auto t0 = std::chrono::steady_clock::now();
    const Tensor<float> logits = plain ? model(Var(images)).value() : folded(images);
    ms.push_back(milliseconds_since(t0));
    ok = ok && finite(logits);
    std::printf("pass %lld: (took %f ms)\n", (long long)step, ms.back());
  }
  const double median = median_after_first(ms);
  std::printf("infer: %.2f ms/image (median pass %.2f ms at batch %lld)\n", median / double(B), median, (long long)B);
  return ok ? 0 : 1;
}

/// `check`: returns 0 when the logits of the checkpoint's model agree with the expected ones.
int check(const Options& o) {
  for (const char* name : {"weights", "images", "logits"})
    if (!o.has(name)) throw std::invalid_argument(std::string("check needs --") + name);
  resnet::ResNet<float> model;
  model.load_state_dict(weft::io::SafeTensors(o.text("weights")));  // strict: every key, shape and dtype
  model.eval();
  const weft::ad::NoGrad no_tape;
  const Tensor<float> logits = model(Var(weft::eval(load_images(o.text("images"))))).value();
  const Tensor<float> expected = weft::io::load_npy<float>(o.text("logits"));
  if (expected.shape() != logits.shape())
    throw std::invalid_argument(o.text("logits") + ": shape " + weft::detail::cat(expected.shape()) +
                                ", the model gives " + weft::detail::cat(logits.shape()));
  double worst = 0, scale = 0;
  for (std::int64_t i = 0; i < logits.numel(); ++i) {
    worst = std::max(worst, double(std::fabs(logits.data()[i] - expected.data()[i])));
    scale = std::max(scale, double(std::fabs(expected.data()[i])));
  }
  // Two float32 forward passes that sum in other orders differ by about sqrt(K) 2^-24 relative per
  // sum (K <= 4608 products in ResNet-18's convolutions: 4e-6), and BatchNorm keeps every layer's
  // scale near 1, so over its 20 layers they stay within ~1e-4 of the logits' scale; a wrong
  // weight, name or layout is off by the scale itself. NaN fails.
  const double tolerance = 1e-4 * scale;
  const bool ok = worst <= tolerance;
  std::printf("check: max |weft - expected| %.3g over %lld logits (tolerance %.3g = 1e-4 max |expected|): %s\n",
              worst, (long long)logits.numel(), tolerance, ok ? "ok" : "FAILED");
  if (o.has("state-out")) weft::io::save_safetensors(o.text("state-out"), model.state_dict());
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 1) {
      const int trained = train(Options{{{"batch", "4"}, {"steps", "3"}}});
      return trained | infer(Options{{{"batch", "1"}, {"steps", "3"}}});
    }
    const std::string command = argv[1];
    const std::map<std::string, std::vector<std::string>> names = {
        {"train", {"batch", "steps", "lr", "data", "labels", "threads", "seed"}},
        {"infer", {"batch", "steps", "threads", "seed", "mode"}},
        {"check", {"weights", "images", "logits", "state-out", "threads"}}};
    if (names.count(command)) {
      const Options o(argc, argv, names.at(command));
      if (o.has("threads")) weft::set_num_threads(int(o.count("threads", 1)));
      return command == "train" ? train(o) : command == "infer" ? infer(o) : check(o);
    }
    std::fputs(kUsage, command == "--help" || command == "-h" ? stdout : stderr);
    return command == "--help" || command == "-h" ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "resnet: %s\n", e.what());
    return 1;
  }
}
