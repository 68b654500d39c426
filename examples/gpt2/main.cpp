// SPDX-License-Identifier: MIT
/// @file The gpt2 program: `test` checks a model against llm.c's debug state as llm.c's test_gpt2 does, `train` trains
/// on a token file, `sample` generates tokens, `generate` decodes greedily with a KV cache. With no arguments it runs
/// `test` and a short `train` on the small model in tests/golden/gpt2 (the build passes its folder), with
/// `check-backward` between them.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "data_parallel.hpp"
#include "decode.hpp"
#include "hand_written.hpp"
#include "model.hpp"

namespace {

using gpt2::Model;
using weft::Tensor;

const char* const kUsage = R"(usage:
  gpt2 test MODEL STATE [--losses FILE] [--loss-tolerance X]
      one forward and backward on the debug state's batch, checked as llm.c's test_gpt2 does
      (logits within 1e-2, loss within 1e-2, every gradient element within 2e-2), then 10 AdamW
      steps (lr 1e-4, betas 0.9/0.999, eps 1e-8, weight decay 0.01); FILE holds the expected loss
      of each step, checked within X (default 1e-2). Exit status 0 only when every check passes.
  gpt2 check-backward MODEL STATE [--tolerance X]
      one forward and backward on the debug state's batch, by autograd and by the hand-written
      backward (the oracle): the loss, the logits and each of the 16 gradients must agree within
      X relative to the tensor's largest magnitude (default 1e-6).
  gpt2 train MODEL DATA [--batch B] [--seq T] [--steps N] [--lr X] [--threads K] [--zero1] [--losses-out FILE]
      AdamW steps on consecutive batches of a token file (defaults: B 4, T 64, N 20, lr 1e-4).
      Under `mpirun -np R` (a build with MPI) the R ranks train data-parallel: each takes B / R rows of
      every batch, the gradients are averaged over the ranks, and every rank keeps the whole AdamW
      state, or with --zero1 its 1/R shard of it. FILE gets the loss of each step, one per line.
  gpt2 sample MODEL [--tokens N] [--seed S] [--prompt "ID ID ..."] [--tokenizer FILE]
      generates N tokens (default 32) after the prompt (default: token 0, or end-of-text).
  gpt2 generate [MODEL] [--tokens N] [--batch B] [--prompt "ID ID ..."] [--prepack] [--seed S] [--tokenizer FILE]
      greedy decoding with a KV cache (gpt2::Decoder): B sequences (default 1) of the prompt (default: token 0),
      then N tokens (default 32) each, one step per token; prints the first sequence and the milliseconds per
      step. --prepack keeps the Linear weights in the GEMM's packed panels (the same logits, bit for bit).
      Without MODEL: GPT-2 small (124M: 12 layers, 768 channels) at a random initialization of seed S.
Files are llm.c's: the float32 checkpoint (magic 20240326 v3), the debug state (20240327 v2),
token files (20240520) and the tokenizer (20240328).
)";

/// --name value options and --name flags after the positional arguments.
struct Options {
  std::vector<std::string> positional;
  std::map<std::string, std::string> named;
  std::set<std::string> flags;

  double number(const std::string& name, double fallback) const {
    auto it = named.find(name);
    if (it == named.end()) return fallback;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0')
      throw std::invalid_argument("--" + name + " takes a number, got '" + it->second + "'");
    return v;
  }
  std::string text(const std::string& name, const std::string& fallback) const {
    auto it = named.find(name);
    return it == named.end() ? fallback : it->second;
  }
};

Options parse(int argc, char** argv, int first, const std::vector<std::string>& allowed,
              const std::vector<std::string>& flags = {}) {
  Options o;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      o.positional.push_back(arg);
      continue;
    }
    const std::string name = arg.substr(2);
    if (std::find(flags.begin(), flags.end(), name) != flags.end()) {
      o.flags.insert(name);
      continue;
    }
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      throw std::invalid_argument("unknown option " + arg);
    if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
    o.named[name] = argv[++i];
  }
  return o;
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

/// The largest |got - want| over n elements, and whether every one is within the tolerance.
struct Comparison {
  double max_diff = 0;
  bool ok = true;
};
Comparison compare(const float* got, const float* want, std::int64_t n, double tolerance) {
  Comparison c;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(double(got[i]) - double(want[i]));
    if (!(d <= tolerance)) c.ok = false;  // NaN fails
    c.max_diff = std::max(c.max_diff, std::isnan(d) ? INFINITY : d);
  }
  return c;
}

/// The 16 gradient tensors by name, in checkpoint order.
using Member = weft::TensorView<float> gpt2::ParameterTensors::*;
const std::pair<const char*, Member> kTensors[] = {
    {"dwte", &gpt2::ParameterTensors::wte},           {"dwpe", &gpt2::ParameterTensors::wpe},
    {"dln1w", &gpt2::ParameterTensors::ln1w},         {"dln1b", &gpt2::ParameterTensors::ln1b},
    {"dqkvw", &gpt2::ParameterTensors::qkvw},         {"dqkvb", &gpt2::ParameterTensors::qkvb},
    {"dattprojw", &gpt2::ParameterTensors::attprojw}, {"dattprojb", &gpt2::ParameterTensors::attprojb},
    {"dln2w", &gpt2::ParameterTensors::ln2w},         {"dln2b", &gpt2::ParameterTensors::ln2b},
    {"dfcw", &gpt2::ParameterTensors::fcw},           {"dfcb", &gpt2::ParameterTensors::fcb},
    {"dfcprojw", &gpt2::ParameterTensors::fcprojw},   {"dfcprojb", &gpt2::ParameterTensors::fcprojb},
    {"dlnfw", &gpt2::ParameterTensors::lnfw},         {"dlnfb", &gpt2::ParameterTensors::lnfb}};

bool print_check(const char* what, const Comparison& c) {
  std::printf("%-10s %s, max |diff| = %e\n", what, c.ok ? "OK" : "NOT OK", c.max_diff);
  return c.ok;
}

int run_test(const std::string& model_path, const std::string& state_path, const std::string& losses_path,
             double loss_tolerance) {
  Model model(gpt2::read_checkpoint(model_path));
  const gpt2::Config& cfg = model.config();
  gpt2::DebugState state = gpt2::read_debug_state(state_path, cfg, model.num_parameters());
  std::vector<double> expected_losses;
  if (!losses_path.empty()) expected_losses = gpt2::read_numbers(losses_path);
  std::printf("[GPT-2] max_seq_len %lld, vocab %lld (padded %lld), layers %lld, heads %lld, channels %lld, "
              "%lld parameters\n[State] batch %lld, seq_len %lld\n",
              (long long)cfg.max_seq_len, (long long)cfg.vocab_size, (long long)cfg.padded_vocab_size,
              (long long)cfg.num_layers, (long long)cfg.num_heads, (long long)cfg.channels,
              (long long)model.num_parameters(), (long long)state.batch, (long long)state.seq_len);

  // One fused AdamW kernel over the whole flat buffer per step.
  weft::optim::AdamW<float> optimizer(weft::TensorList<float>({model.parameters()}), gpt2::adamw_options(1e-4));
  bool all_ok = true;
  const std::int64_t V = cfg.vocab_size, rows = state.batch * state.seq_len;
  for (int step = 0; step < 10; ++step) {
    const auto start = std::chrono::steady_clock::now();
    const float loss = model.forward(state.inputs, state.targets);
    model.backward();
    if (step == 0) {
      all_ok &= print_check("logits", compare(model.logits().data(), state.logits.data(), rows * V, 1e-2));
      const bool loss_ok = std::fabs(loss - state.loss) < 1e-2;
      std::printf("%-10s %s, %f vs %f\n", "loss", loss_ok ? "OK" : "NOT OK", loss, state.loss);
      all_ok &= loss_ok;
      // Each gradient tensor, in checkpoint order; wte's padding rows are not compared (as llm.c).
      const gpt2::ParameterTensors& got = model.gradient_tensors();
      const gpt2::ParameterTensors want = gpt2::point_parameters(state.grads.view(), cfg);
      for (const auto& [name, member] : kTensors) {
        const weft::TensorView<float>& g = got.*member;
        const std::int64_t n = member == &gpt2::ParameterTensors::wte ? V * cfg.channels : g.numel();
        all_ok &= print_check(name, compare(g.data(), (want.*member).data(), n, 2e-2));
      }
    }
    optimizer.step(weft::TensorList<float>({model.gradients()}));
    const double ms = milliseconds_since(start);
    bool step_ok = true;
    if (std::size_t(step) < expected_losses.size())
      step_ok = std::fabs(double(loss) - expected_losses[std::size_t(step)]) < loss_tolerance;
    else if (!expected_losses.empty())
      step_ok = false;  // fewer expected losses than steps
    all_ok &= step_ok;
    std::printf("step %d: loss %f (took %f ms)%s\n", step, loss, ms, step_ok ? "" : "  NOT OK");
  }
  std::printf("overall okay: %d\n", int(all_ok));
  return all_ok ? 0 : 1;
}

/// max |got - want| / max |want| over n elements (NaN compares as infinite).
double relative_difference(const float* got, const float* want, std::int64_t n) {
  double diff = 0, scale = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(double(got[i]) - double(want[i]));
    diff = std::max(diff, std::isnan(d) ? INFINITY : d);
    scale = std::max(scale, std::fabs(double(want[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

/// Autograd's backward against the hand-written one (the oracle) on the debug state's batch: the loss, the logits and
/// each gradient tensor within `tolerance` of the oracle's, relative to the tensor's largest magnitude.
int run_check_backward(const std::string& model_path, const std::string& state_path, double tolerance) {
  const gpt2::Checkpoint checkpoint = gpt2::read_checkpoint(model_path);
  Model model(checkpoint);
  gpt2::HandWrittenModel oracle(checkpoint);
  const gpt2::Config& cfg = model.config();
  const gpt2::DebugState state = gpt2::read_debug_state(state_path, cfg, model.num_parameters());
  const float loss = model.forward(state.inputs, state.targets);
  model.backward();
  const float want_loss = oracle.forward(state.inputs, state.targets);
  oracle.backward();
  const std::int64_t V = cfg.vocab_size, rows = state.batch * state.seq_len;
  bool all_ok = true;
  auto check = [&](const char* what, double relative) {
    const bool ok = relative <= tolerance;
    std::printf("%-10s %s, max |autograd - hand-written| / max |hand-written| = %.3e\n", what, ok ? "OK" : "NOT OK",
                relative);
    all_ok &= ok;
  };
  check("loss", std::fabs(double(loss) - double(want_loss)) / std::fabs(double(want_loss)));
  const Tensor<float> want_logits(oracle.activations().logits.narrow(1, 0, V));
  check("logits", relative_difference(model.logits().data(), want_logits.data(), rows * V));
  for (const auto& [name, member] : kTensors) {
    const weft::TensorView<float>& got = model.gradient_tensors().*member;
    const std::int64_t n = member == &gpt2::ParameterTensors::wte ? V * cfg.channels : got.numel();
    check(name, relative_difference(got.data(), (oracle.gradient_tensors().*member).data(), n));
  }
  // wte's padding rows: no Var covers them, so their gradient stays zero.
  const weft::TensorView<float> padding = model.gradient_tensors().wte.narrow(0, V, cfg.padded_vocab_size - V);
  double padding_max = 0;
  for (std::int64_t i = 0; i < padding.numel(); ++i) padding_max = std::max(padding_max, std::fabs(double(padding.data()[i])));
  check("dwte pad", padding_max);
  std::printf("backward %s\n", all_ok ? "matches the hand-written one" : "DIFFERS from the hand-written one");
  return all_ok ? 0 : 1;
}

/// Consecutive windows of B x T tokens of a token file (targets shifted by one), wrapping around. B is the global
/// batch: every rank reads the same stream and takes its own B / ranks rows of each window (rank r: rows
/// [r B / ranks, (r + 1) B / ranks)).
class Batches {
 public:
  Batches(std::vector<std::uint16_t> tokens, std::int64_t batch, std::int64_t seq_len, int rank, int ranks)
      : tokens_(std::move(tokens)), batch_(batch), seq_len_(seq_len), rank_(rank), rows_(batch / ranks) {
    if (batch % ranks != 0)
      throw std::invalid_argument("--batch " + std::to_string(batch) + " does not split over " +
                                  std::to_string(ranks) + " data-parallel ranks: pass a multiple of " +
                                  std::to_string(ranks));
    if (std::int64_t(tokens_.size()) < batch * seq_len + 1)
      throw std::invalid_argument("the token file holds " + std::to_string(tokens_.size()) + " tokens; a batch of " +
                                  std::to_string(batch) + " x " + std::to_string(seq_len) + " needs " +
                                  std::to_string(batch * seq_len + 1));
  }
  /// This rank's rows of the next window: inputs and targets [B / ranks, T].
  std::pair<Tensor<std::int32_t>, Tensor<std::int32_t>> next(std::int64_t vocab_size) {
    const std::int64_t window = batch_ * seq_len_, n = rows_ * seq_len_;
    if (position_ + window + 1 > std::int64_t(tokens_.size())) position_ = 0;
    const std::int64_t first = position_ + rank_ * n;
    std::vector<std::int32_t> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      x[std::size_t(i)] = tokens_[std::size_t(first + i)];
      y[std::size_t(i)] = tokens_[std::size_t(first + i + 1)];
      if (x[std::size_t(i)] >= vocab_size || y[std::size_t(i)] >= vocab_size)
        throw std::invalid_argument("token " + std::to_string(std::max(x[std::size_t(i)], y[std::size_t(i)])) +
                                    " at position " + std::to_string(first + i) +
                                    " is outside the model's vocabulary of " + std::to_string(vocab_size));
    }
    position_ += window;
    return {weft::from_vector(x, {rows_, seq_len_}), weft::from_vector(y, {rows_, seq_len_})};
  }

 private:
  std::vector<std::uint16_t> tokens_;
  std::int64_t batch_, seq_len_, rank_, rows_, position_ = 0;
};

struct TrainOptions {
  std::int64_t batch = 4, seq_len = 64;  // batch: the global batch, over every data-parallel rank
  int steps = 20;
  double lr = 1e-4;
  bool zero1 = false;      // shard AdamW's state over the ranks (ZeRO-1) instead of replicating it
  std::string losses_out;  // when set, rank 0 writes each step's loss to this file, one per line
};

/// Trains on every rank of the job (one without MPI) and returns the losses of each step: each the mean over the
/// global batch.
std::vector<float> run_train(const std::string& model_path, const std::string& data_path, const TrainOptions& t) {
  const gpt2::DataParallel dp;
  // Padded to a multiple of the rank count so that ZeRO-1 splits the flat buffers into equal shards.
  Model model(gpt2::read_checkpoint(model_path), dp.size());
  if (t.seq_len < 1 || t.seq_len > model.config().max_seq_len || t.batch < 1 || t.steps < 0)
    throw std::invalid_argument("got --batch " + std::to_string(t.batch) + " --seq " + std::to_string(t.seq_len) +
                                " --steps " + std::to_string(t.steps) + "; the model takes --seq 1 to " +
                                std::to_string(model.config().max_seq_len) + ", --batch >= 1 and --steps >= 0");
  Batches data(gpt2::read_tokens(data_path), t.batch, t.seq_len, dp.rank(), dp.size());
  gpt2::DataParallelAdamW optimizer(model, dp, gpt2::adamw_options(t.lr), t.zero1);
  const bool print = dp.rank() == 0;
  std::vector<float> losses;
  for (int step = 0; step < t.steps; ++step) {
    auto [x, y] = data.next(model.config().vocab_size);
    const auto start = std::chrono::steady_clock::now();
    // The model's loss (and gradient) is the mean over this rank's rows. Every rank has the same number of rows,
    // so the mean of the ranks' means is the mean over the global batch: averaging over the ranks gives the loss
    // and the gradient of the global batch, as one process would compute them.
    const float local_loss = model.forward(x, y);
    model.backward();
    const auto update_start = std::chrono::steady_clock::now();
    optimizer.step();  // with N ranks: the collectives, and the wait for the slowest rank's backward
    const double update_ms = milliseconds_since(update_start);
    const float loss = dp.average(local_loss);
    if (print)
      std::printf("step %d: loss %f (took %f ms, update %f ms)\n", step, loss, milliseconds_since(start), update_ms);
    std::fflush(stdout);
    losses.push_back(loss);
  }
  // Every rank's optimizer state, printed by rank 0: replicated, each holds m and v for every parameter; sharded,
  // 1/R of that.
  const std::vector<std::int64_t> state_bytes = dp.gather(optimizer.state_bytes());
  if (!print) return losses;
  std::printf("optimizer state (AdamW m and v, %s), bytes per rank:", t.zero1 ? "ZeRO-1: sharded" : "replicated");
  for (std::size_t r = 0; r < state_bytes.size(); ++r) std::printf(" %lld", (long long)state_bytes[r]);
  std::printf("\n");
  if (!t.losses_out.empty()) gpt2::write_numbers(t.losses_out, std::vector<double>(losses.begin(), losses.end()));
  return losses;
}

/// Token ids separated by spaces, each < vocab; `fallback` when there are none.
std::vector<std::int32_t> parse_prompt(const std::string& prompt, std::int64_t vocab, std::int32_t fallback) {
  std::vector<std::int32_t> tokens;
  for (const char* p = prompt.c_str(); *p;) {
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    if (end == p) throw std::invalid_argument("--prompt takes token ids separated by spaces, got '" + prompt + "'");
    if (v < 0 || v >= vocab)
      throw std::invalid_argument("prompt token " + std::to_string(v) + " is outside the vocabulary of " +
                                  std::to_string(vocab));
    tokens.push_back(std::int32_t(v));
    p = end;
    while (*p == ' ') ++p;
  }
  if (tokens.empty()) tokens.push_back(fallback);
  return tokens;
}

/// Prints token ids as the tokenizer's pieces (ids when there is none).
void print_tokens(const std::vector<std::int32_t>& tokens, const std::optional<gpt2::Tokenizer>& tokenizer) {
  for (std::int32_t id : tokens) {
    if (tokenizer && std::size_t(id) < tokenizer->pieces.size())
      std::fputs(tokenizer->pieces[std::size_t(id)].c_str(), stdout);
    else
      std::printf("%d ", id);
  }
  std::printf("\n");
}

/// Greedy decoding of `batch` copies of the prompt with a KV cache, `count` tokens each after it.
int run_generate(const std::string& model_path, int count, std::int64_t batch, bool prepack, std::uint64_t seed,
                 const std::string& prompt, const std::string& tokenizer_path) {
  gpt2::Config small;  // GPT-2 small, as llm.c's checkpoint of it
  small.max_seq_len = 1024, small.vocab_size = 50257, small.padded_vocab_size = 50304;
  small.num_layers = 12, small.num_heads = 12, small.channels = 768;
  Model model(model_path.empty() ? gpt2::initial_checkpoint(small, seed) : gpt2::read_checkpoint(model_path));
  const gpt2::Config& cfg = model.config();
  const auto tokenizer = tokenizer_path.empty() ? std::nullopt : gpt2::read_tokenizer(tokenizer_path);
  std::vector<std::int32_t> tokens =
      parse_prompt(prompt, cfg.vocab_size, tokenizer && tokenizer->end_of_text >= 0 ? tokenizer->end_of_text : 0);
  const std::int64_t steps = std::int64_t(tokens.size()) + count - 1;
  if (count < 1 || steps > cfg.max_seq_len)
    throw std::invalid_argument("the prompt's " + std::to_string(tokens.size()) + " tokens and --tokens " +
                                std::to_string(count) + " must fit the model's " + std::to_string(cfg.max_seq_len) +
                                " positions, with --tokens >= 1");
  const auto prepack_start = std::chrono::steady_clock::now();
  gpt2::Decoder decoder(model.weights(), cfg, batch, steps, prepack);
  const double prepack_ms = milliseconds_since(prepack_start);
  // every sequence is the prompt, then its own greedy choices (the same ones: a batch measures throughput)
  std::vector<std::int32_t> next(std::size_t(batch), tokens[0]);
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t t = 0; t < steps; ++t) {
    const Tensor<float> logits = decoder.step(weft::from_vector(next, {batch}));  // [B, V]
    for (std::int64_t b = 0; b < batch; ++b) {
      const float* row = logits.data() + b * cfg.vocab_size;
      next[std::size_t(b)] = std::size_t(t + 1) < tokens.size()
                                 ? tokens[std::size_t(t + 1)]
                                 : std::int32_t(std::max_element(row, row + cfg.vocab_size) - row);
    }
    if (std::size_t(t + 1) >= tokens.size()) tokens.push_back(next[0]);
  }
  const double ms = milliseconds_since(start);
  print_tokens(tokens, tokenizer);
  const std::string weights =
      prepack ? "Linear weights prepacked in " + std::to_string(int(prepack_ms)) + " ms" : "Linear weights unpacked";
  std::printf("generate: %lld steps at batch %lld, %.2f ms/token (%s), %lld parameters\n", (long long)steps,
              (long long)batch, ms / double(steps), weights.c_str(), (long long)model.num_parameters());
  return 0;
}

/// Samples from softmax(logits) of the last position, one token at a time (no cache: each step
/// runs the whole window, the last max_seq_len tokens).
int run_sample(const std::string& model_path, int count, std::uint64_t seed, const std::string& prompt,
               const std::string& tokenizer_path) {
  Model model(gpt2::read_checkpoint(model_path));
  const gpt2::Config& cfg = model.config();
  const auto tokenizer = tokenizer_path.empty() ? std::nullopt : gpt2::read_tokenizer(tokenizer_path);
  std::vector<std::int32_t> tokens =
      parse_prompt(prompt, cfg.vocab_size, tokenizer && tokenizer->end_of_text >= 0 ? tokenizer->end_of_text : 0);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    const std::int64_t t = std::min<std::int64_t>(std::int64_t(tokens.size()), cfg.max_seq_len);
    const std::vector<std::int32_t> window(tokens.end() - t, tokens.end());
    model.forward(weft::from_vector(window, {1, t}), Tensor<std::int32_t>());
    const Tensor<float> probs = weft::softmax(model.logits().select(0, 0).select(0, t - 1), 0);
    const std::vector<float> p = probs.to_vector();
    std::discrete_distribution<std::int32_t> pick(p.begin(), p.end());
    tokens.push_back(pick(rng));
  }
  print_tokens(tokens, tokenizer);
  return 0;
}

/// No arguments: `test` on the small model the build points at, with the reference losses held
/// to 1e-4 (it ran in float64), then 40 `train` steps on its token file, whose loss must fall.
int run_self_check() {
#if defined(WEFT_GPT2_GOLDEN_DIR)
  const std::string dir = WEFT_GPT2_GOLDEN_DIR;
  if (run_test(dir + "/model.bin", dir + "/state.bin", dir + "/losses.txt", 1e-4) != 0) return 1;
  if (run_check_backward(dir + "/model.bin", dir + "/state.bin", 1e-6) != 0) return 1;
  TrainOptions t;
  t.seq_len = 20;
  t.steps = 40;
  t.lr = 1e-3;
  const std::vector<float> losses = run_train(dir + "/model.bin", dir + "/tokens.bin", t);
  const bool falls = losses.back() < 0.5f * losses.front();
  std::printf("train: loss %f -> %f, %s\n", losses.front(), losses.back(), falls ? "falls (OK)" : "NOT OK");
  return falls ? 0 : 1;
#else
  std::fputs(kUsage, stderr);
  return 2;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  try {
#if WEFT_GPT2_DIST
    // MPI, for `train` on data-parallel ranks (run without mpirun, this process is the only rank). Its destructor
    // also runs while an exception leaves main: the other ranks learn that this one left instead of waiting.
    const weft::dist::Runtime runtime(argc, argv);
#endif
    if (argc < 2) return run_self_check();
    const std::string command = argv[1];
    if (command == "test") {
      const Options o = parse(argc, argv, 2, {"losses", "loss-tolerance"});
      if (o.positional.size() != 2) throw std::invalid_argument("gpt2 test takes MODEL and STATE");
      return run_test(o.positional[0], o.positional[1], o.text("losses", ""), o.number("loss-tolerance", 1e-2));
    }
    if (command == "check-backward") {
      const Options o = parse(argc, argv, 2, {"tolerance"});
      if (o.positional.size() != 2) throw std::invalid_argument("gpt2 check-backward takes MODEL and STATE");
      return run_check_backward(o.positional[0], o.positional[1], o.number("tolerance", 1e-6));
    }
    if (command == "train") {
      const Options o = parse(argc, argv, 2, {"batch", "seq", "steps", "lr", "threads", "losses-out"}, {"zero1"});
      if (o.positional.size() != 2) throw std::invalid_argument("gpt2 train takes MODEL and DATA");
      if (o.named.count("threads")) weft::set_num_threads(int(o.number("threads", 0)));
      TrainOptions t;
      t.batch = std::int64_t(o.number("batch", double(t.batch)));
      t.seq_len = std::int64_t(o.number("seq", double(t.seq_len)));
      t.steps = int(o.number("steps", t.steps));
      t.lr = o.number("lr", t.lr);
      t.zero1 = o.flags.count("zero1") != 0;
      t.losses_out = o.text("losses-out", "");
      run_train(o.positional[0], o.positional[1], t);
      return 0;
    }
    if (command == "sample") {
      const Options o = parse(argc, argv, 2, {"tokens", "seed", "prompt", "tokenizer"});
      if (o.positional.size() != 1) throw std::invalid_argument("gpt2 sample takes MODEL");
      return run_sample(o.positional[0], int(o.number("tokens", 32)), std::uint64_t(o.number("seed", 1337)),
                        o.text("prompt", ""), o.text("tokenizer", ""));
    }
    if (command == "generate") {
      const Options o = parse(argc, argv, 2, {"tokens", "batch", "seed", "prompt", "tokenizer"}, {"prepack"});
      if (o.positional.size() > 1) throw std::invalid_argument("gpt2 generate takes at most MODEL");
      return run_generate(o.positional.empty() ? "" : o.positional[0], int(o.number("tokens", 32)),
                          std::int64_t(o.number("batch", 1)), o.flags.count("prepack") != 0,
                          std::uint64_t(o.number("seed", 1337)), o.text("prompt", ""), o.text("tokenizer", ""));
    }
    std::fputs(kUsage, stderr);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpt2: %s\n", e.what());
    return 1;
  }
}
