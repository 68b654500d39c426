// SPDX-License-Identifier: MIT
/// @file GPT-2 small decoding token by token at batch 1 (examples/gpt2's Decoder, a KV cache): the Linear weights
/// prepacked against unpacked, in the same rounds, beside PyTorch eager decoding the same shapes, with the same-run
/// copy roofline.
///
///   chrt -f 1 bench/gpt2_decode [--layers 12] [--tokens 64] [--batch 1] [--rounds 5] [--threads 2] [--no-torch]
///                               [--quick] [--json FILE]
///
/// The model is GPT-2 124M (12 layers, 12 heads, 768 channels, vocabulary 50257 padded to 50304) at its
/// initialization. A round decodes --tokens positions greedily from token 0 (the first step's cache empty, the last's
/// holding tokens - 1 positions) with each weft decoder in turn, the order alternating from round to round; a
/// decoder's time for the round is the round's total over its steps (ms per step: per token at batch 1). The
/// prepacked decoder's panels are packed once, before the rounds (a snapshot for inference), and its logits must
/// equal the unpacked decoder's bit for bit. PyTorch eager (bench/gpt2_decode_torch.py: the same model with a KV
/// cache, torch's scaled_dot_product_attention, under torch.inference_mode) runs as a child process per round, its
/// warm-up decode untimed. The targets are medians over rounds of per-round ratios.
///
/// Then the Linear products of one step alone, per shape: the dispatched matmul, the prepacked call and Eigen's GEMM
/// (run_products).
///
/// Roofline: at batch 1 a step reads every weight once (each is used in one matrix-vector product) and does 2 FLOPs
/// per weight, so it is bound by memory bandwidth: the bytes of the Linear weights and the tied head (the cache and
/// activations are < 1% at these lengths) over the step's time, against the best parallel copy of as many bytes
/// measured in the same rounds (bench_common.hpp's CopyBench; its GB/s counts bytes read plus written).

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "../examples/gpt2/decode.hpp"
#include "bench_common.hpp"

namespace {

using weft_bench::median;
using weft_bench::time_ms;

struct Settings {
  std::int64_t layers = 12, tokens = 64, batch = 1, rounds = 5, threads = 2;
  bool torch = true;
  std::string json;
};

void usage() {
  std::printf("usage: gpt2_decode [--layers 12] [--tokens 64] [--batch 1] [--rounds 5] [--threads 2] [--no-torch]\n"
              "                   [--quick] [--json FILE]\n"
              "  --tokens N   positions decoded per round (greedy, from token 0)\n"
              "  --quick      2 layers, 8 tokens, 2 rounds, no torch (a smoke run)\n");
}

/// Decodes `tokens` positions greedily from token 0 with `decoder` (reset first); the logits of every step go to
/// `logits` when given. Returns the milliseconds of all steps.
double decode_round(gpt2::Decoder& decoder, std::int64_t batch, std::int64_t tokens, std::int64_t vocab,
                    std::vector<weft::Tensor<float>>* logits) {
  decoder.reset();
  std::vector<std::int32_t> next(std::size_t(batch), 0);
  double ms = 0;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const weft::Tensor<std::int32_t> in = weft::from_vector(next, {batch});
    weft::Tensor<float> out;
    ms += time_ms([&] { out = decoder.step(in); });
    for (std::int64_t b = 0; b < batch; ++b) {
      const float* row = out.data() + b * vocab;
      next[std::size_t(b)] = std::int32_t(std::max_element(row, row + vocab) - row);
    }
    if (logits) logits->push_back(out);
  }
  return ms;
}

/// The ms per step (one token per sequence) that bench/gpt2_decode_torch.py prints (`decode: X ms/step`), NAN
/// when it printed none.
double run_torch_round(const Settings& s) {
  const std::string command = "OMP_NUM_THREADS=" + std::to_string(s.threads) + " python3 '" WEFT_SOURCE_DIR
                              "/bench/gpt2_decode_torch.py' --layers " + std::to_string(s.layers) + " --tokens " +
                              std::to_string(s.tokens) + " --batch " + std::to_string(s.batch) + " --threads " +
                              std::to_string(s.threads) + " 2>&1";
  FILE* out = popen(command.c_str(), "r");
  if (!out) return NAN;
  static const std::regex line(R"(^decode: ([0-9.]+) ms/step)");
  char buffer[4096];
  double ms = NAN;
  std::string last;
  while (std::fgets(buffer, sizeof buffer, out)) {
    std::cmatch m;
    if (std::regex_search(buffer, m, line)) ms = std::stod(m[1].str());
    last = buffer;
  }
  if (pclose(out) != 0 || std::isnan(ms))
    std::fprintf(stderr, "  (the torch peer failed; its last line: %s)\n", last.c_str());
  return ms;
}

/// The Linear products of one decoding step alone, x [B, in] times W^T (W [out, in]): the dispatched matmul (which
/// the unpacked decoder runs: Eigen's GEMM below 2^21 multiply-adds, else the FMA GEMM packing W per call), the
/// prepacked call (nn::linear's on panels: the FMA GEMM reading them, where the dispatched call is that GEMM), and
/// Eigen's GEMM on every shape (at B = 1 a matrix-vector product reading W once: what a dispatch that sent 1-row
/// products to Eigen would run, with other bits). Per step: each block's four shapes times the layers, plus the head.
void run_products(const Settings& s, const gpt2::Config& config, weft_bench::Report& report) {
  struct Product {
    const char* name;
    std::int64_t in, out, count;
  };
  const std::int64_t C = config.channels;
  const Product products[] = {{"qkv", C, 3 * C, s.layers},   {"attn proj", C, C, s.layers},
                              {"fc", C, 4 * C, s.layers},    {"fc proj", 4 * C, C, s.layers},
                              {"head (tied)", C, config.vocab_size, 1}};
  std::printf("\nthe Linear products of one step alone (x [%lld, in] W^T), median ms per call:\n", (long long)s.batch);
  std::printf("%-12s %6s %6s %6s %9s %9s %9s %11s\n", "product", "in", "out", "calls", "matmul", "prepacked",
              "Eigen", "on panels");
  double total[3] = {0, 0, 0};
  for (const Product& p : products) {
    const weft::Tensor<float> x = weft_bench::make_tensor<float>({s.batch, p.in}, 11, -1, 1);
    const weft::Tensor<float> w = weft_bench::make_tensor<float>({p.out, p.in}, 12, -0.05f, 0.05f);
    const weft::nn::PrepackedLinear<float> panels = weft::nn::prepack_linear(w);
    const bool on_panels = weft::detail::matmul_prepacked_applies(panels, s.batch, weft::Device::cpu());
    weft::Tensor<float> out = weft::empty<float>({s.batch, p.out});
    weft_bench::Variant dispatched("matmul",
                                   [&] { return time_ms([&] { out = weft::matmul(x, w.transpose(0, 1)); }); });
    weft_bench::Variant prepacked("prepacked", [&] {
      return time_ms([&] {
        if (on_panels) weft::detail::matmul_prepacked<float>(x.view(), panels, nullptr, out.data());
        else out = weft::matmul(x, w.transpose(0, 1));
      });
    });
    weft_bench::Variant eigen("Eigen", [&] {
      return time_ms([&] {
        weft::detail::cpu::gemm_batched(x.data(), p.in, weft::Strides{}, w.data(), p.in, weft::Strides{}, out.data(),
                                        weft::Shape{}, s.batch, p.in, p.out, false, true);
      });
    });
    weft_bench::measure({&dispatched, &prepacked, &eigen}, 2, p.out > 10000 ? 7 : 21);
    const double ms[3] = {dispatched.med(), prepacked.med(), eigen.med()};
    std::printf("%-12s %6lld %6lld %6lld %9.3f %9.3f %9.3f %11s\n", p.name, (long long)p.in, (long long)p.out,
                (long long)p.count, ms[0], ms[1], ms[2], on_panels ? "yes" : "no (Eigen)");
    for (int v = 0; v < 3; ++v) total[v] += double(p.count) * ms[v];
    for (const weft_bench::Variant* v : {&dispatched, &prepacked, &eigen})
      report.rows.push_back({std::string("gpt2 decode product ") + p.name, v->name, p.in * p.out,
                             sizeof(float), v->med(), v->min()});
  }
  std::printf("%-12s %6s %6s %6s %9.2f %9.2f %9.2f   (ms per step: the sum over its calls)\n", "per step", "", "", "",
              total[0], total[1], total[2]);
}

int run(const Settings& s) {
  weft::set_num_threads(int(s.threads));
  weft_bench::Report report;
  weft_bench::print_cpu_machine("gpt2_decode", int(s.threads), "weft's and torch's threads", report);
  const gpt2::Config config{1024, 50257, 50304, s.layers, 12, 768};
  if (s.tokens < 1 || s.tokens > config.max_seq_len) throw std::invalid_argument("--tokens must be in [1, 1024]");
  gpt2::Model model(gpt2::initial_checkpoint(config, 1337));
  const double C = double(config.channels);
  const double weight_bytes = (double(s.layers) * 12 * C * C + double(config.vocab_size) * C) * sizeof(float);
  std::printf("GPT-2 (%lld layers, 768 channels): decoding %lld tokens per round at batch %lld; a step reads "
              "%.0f MB of Linear and head weights\n",
              (long long)s.layers, (long long)s.tokens, (long long)s.batch, weight_bytes * 1e-6);

  gpt2::Decoder plain(model.weights(), config, s.batch, s.tokens, false);
  const double pack_ms = time_ms([&] { gpt2::Decoder(model.weights(), config, s.batch, s.tokens, true); });
  gpt2::Decoder packed(model.weights(), config, s.batch, s.tokens, true);
  std::printf("prepacking the weights (a Decoder's construction): %.0f ms\n", pack_ms);

  // the prepacked decoder's logits are the unpacked one's, bit for bit
  std::vector<weft::Tensor<float>> want, got;
  decode_round(plain, s.batch, s.tokens, config.vocab_size, &want);
  decode_round(packed, s.batch, s.tokens, config.vocab_size, &got);
  for (std::size_t t = 0; t < want.size(); ++t)
    if (std::memcmp(want[t].data(), got[t].data(), std::size_t(want[t].numel()) * sizeof(float)) != 0)
      throw std::runtime_error("the prepacked decoder's logits differ from the unpacked one's at step " +
                               std::to_string(t));
  std::printf("prepacked logits equal the unpacked ones bit for bit (%lld steps)\n\n", (long long)s.tokens);

  // the copy roofline: the weights' bytes read, as many written (aligned buffers: the copies use aligned loads)
  const weft::Shape floats{std::int64_t(weight_bytes / sizeof(float))};
  weft::Tensor<float> src = weft_bench::make_tensor<float>(floats, 7), dst = weft_bench::make_tensor<float>(floats, 8);
  weft_bench::CopyBench copy(src.data(), dst.data(), 2 * weight_bytes);
  std::vector<double> plain_ms, packed_ms, torch_ms;
  for (std::int64_t r = 0; r < s.rounds; ++r) {
    for (int v = 0; v < 2; ++v) {
      const bool packed_turn = (v == 1) == (r % 2 == 0);
      gpt2::Decoder& d = packed_turn ? packed : plain;
      (packed_turn ? packed_ms : plain_ms).push_back(decode_round(d, s.batch, s.tokens, config.vocab_size, nullptr) /
                                                     double(s.tokens));
    }
    for (weft_bench::Variant& c : copy.variants) c.ms.push_back(c.run());
    if (s.torch) torch_ms.push_back(run_torch_round(s));
    std::printf("round %lld: unpacked %.2f ms/step, prepacked %.2f ms/step", (long long)r, plain_ms.back(),
                packed_ms.back());
    if (s.torch) std::printf(", torch eager %.2f ms/step", torch_ms.back());
    std::printf("\n");
    std::fflush(stdout);
  }

  const double copy_gbps = 2 * weight_bytes / (copy.best().med() * 1e-3) / 1e9;
  std::printf("\n%-30s %10s %10s %12s %9s\n", "decoder (batch 1)", "median ms", "min ms", "weights GB/s", "vs copy");
  auto row = [&](const char* name, const std::vector<double>& ms) {
    if (ms.empty() || std::isnan(median(ms))) return;
    const double gbps = weight_bytes / (median(ms) * 1e-3) / 1e9;
    std::printf("%-30s %10.2f %10.2f %12.1f %8.0f%%\n", name, median(ms), weft_bench::minimum(ms), gbps,
                100 * gbps / copy_gbps);
    report.rows.push_back({"gpt2 decode batch " + std::to_string(s.batch), name, 1, weight_bytes, median(ms),
                           weft_bench::minimum(ms)});
  };
  row("weft unpacked", plain_ms);
  row("weft prepacked", packed_ms);
  row("torch eager", torch_ms);
  std::printf("%-30s %10.2f %10s %12.1f %8.0f%%  (%s)\n", "copy of the weights' bytes", copy.best().med(), "",
              copy_gbps, 100.0, copy.best().name.c_str());

  report.targets.push_back(weft_bench::make_target("prepacked vs unpacked (speedup)", 1.0, "x", plain_ms, packed_ms));
  const std::vector<double> roof(packed_ms.size(), weight_bytes / (copy_gbps * 1e9) * 1e3);
  report.targets.push_back(weft_bench::make_target("prepacked vs the copy roofline (fraction)", 0, "%", roof,
                                                   packed_ms));
  if (!torch_ms.empty() && !std::isnan(median(torch_ms)))
    report.targets.push_back(
        weft_bench::make_target("prepacked vs PyTorch eager (speedup)", 1.0, "x", torch_ms, packed_ms));
  weft_bench::print_targets(report.targets);
  run_products(s, config, report);
  weft_bench::Options o;
  o.json = s.json;
  return weft_bench::write_json_if_asked(o, "gpt2_decode", "cpu", int(s.threads), int(s.rounds), weft::kCpuPacketIsa,
                                         report);
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  const std::map<std::string, std::int64_t*> counts = {{"--layers", &s.layers}, {"--tokens", &s.tokens},
                                                       {"--batch", &s.batch},   {"--rounds", &s.rounds},
                                                       {"--threads", &s.threads}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (counts.count(a) && has_value) {
      *counts.at(a) = std::atoll(argv[++i]);
      if (*counts.at(a) < 1) {
        std::fprintf(stderr, "gpt2_decode: %s must be >= 1\n", a.c_str());
        return 2;
      }
    } else if (a == "--json" && has_value) {
      s.json = argv[++i];
    } else if (a == "--no-torch") {
      s.torch = false;
    } else if (a == "--quick") {
      s.layers = 2, s.tokens = 8, s.rounds = 2, s.torch = false;
    } else {
      usage();
      return a == "--help" ? 0 : 2;
    }
  }
  try {
    return run(s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpt2_decode: %s\n", e.what());
    return 1;
  }
}
