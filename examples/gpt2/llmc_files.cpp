// SPDX-License-Identifier: MIT
/// @file Readers of llm.c's files (llmc_files.hpp): each checks the magic number, the version and the size, and says
/// which file is wrong and how.

#include "llmc_files.hpp"

#include <weft/ops/factories.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace gpt2 {
namespace {

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

File open_file(const std::string& path, const char* what) {
  File f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw std::runtime_error("cannot open the " + std::string(what) + " '" + path + "'");
  return f;
}

void read_exactly(std::FILE* f, void* out, std::size_t bytes, const std::string& path) {
  if (bytes != 0 && std::fread(out, 1, bytes, f) != bytes)
    throw std::runtime_error("'" + path + "' is truncated: expected " + std::to_string(bytes) + " more bytes");
}

std::array<std::int32_t, 256> read_header(std::FILE* f, const std::string& path, std::int32_t magic,
                                          std::int32_t version, const char* what, const char* writer) {
  std::array<std::int32_t, 256> h{};
  read_exactly(f, h.data(), sizeof(h), path);
  if (h[0] != magic)
    throw std::runtime_error("'" + path + "' is not an llm.c " + what + " (magic " + std::to_string(h[0]) +
                             ", expected " + std::to_string(magic) + ")");
  if (h[1] != version)
    throw std::runtime_error("'" + path + "' is version " + std::to_string(h[1]) + " of the " + what + " format; " +
                             "this program reads version " + std::to_string(version) + " (write it with " + writer +
                             ")");
  return h;
}

void write_exactly(std::FILE* f, const void* data, std::size_t bytes, const std::string& path) {
  if (std::fwrite(data, 1, bytes, f) != bytes) throw std::runtime_error("cannot write '" + path + "'");
}

File create_file(const std::string& path) {
  File f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) throw std::runtime_error("cannot create '" + path + "'");
  return f;
}

void expect_end(std::FILE* f, const std::string& path) {
  if (std::fgetc(f) != EOF) throw std::runtime_error("'" + path + "' has bytes past its expected end");
}

}  // namespace

Checkpoint read_checkpoint(const std::string& path) {
  File f = open_file(path, "checkpoint");
  const auto h = read_header(f.get(), path, 20240326, 3, "checkpoint", "llm.c's train_gpt2.py");
  Checkpoint c;
  c.config = {h[2], h[3], h[7], h[4], h[5], h[6]};
  const Config& k = c.config;
  if (k.max_seq_len <= 0 || k.vocab_size <= 0 || k.padded_vocab_size < k.vocab_size || k.num_layers <= 0 ||
      k.num_heads <= 0 || k.channels <= 0 || k.channels % k.num_heads != 0)
    throw std::runtime_error("'" + path + "' has an invalid configuration (maxT " + std::to_string(k.max_seq_len) +
                             ", V " + std::to_string(k.vocab_size) + ", Vp " + std::to_string(k.padded_vocab_size) +
                             ", L " + std::to_string(k.num_layers) + ", NH " + std::to_string(k.num_heads) + ", C " +
                             std::to_string(k.channels) + ")");
  const std::int64_t C = k.channels, L = k.num_layers;
  const std::int64_t count = k.padded_vocab_size * C + k.max_seq_len * C + L * 12 * C * C + L * 13 * C + 2 * C;
  c.parameters = weft::empty<float>({count});
  read_exactly(f.get(), c.parameters.data(), std::size_t(count) * sizeof(float), path);
  expect_end(f.get(), path);
  return c;
}

void write_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  const Config& k = checkpoint.config;
  std::array<std::int32_t, 256> h{};
  const std::int64_t fields[] = {20240326, 3, k.max_seq_len, k.vocab_size, k.num_layers, k.num_heads, k.channels,
                                 k.padded_vocab_size};
  for (std::size_t i = 0; i < std::size(fields); ++i) h[i] = std::int32_t(fields[i]);
  File f = create_file(path);
  write_exactly(f.get(), h.data(), sizeof(h), path);
  const weft::TensorView<const float> p = checkpoint.parameters.view().contiguous();
  write_exactly(f.get(), p.data(), std::size_t(p.numel()) * sizeof(float), path);
}

DebugState read_debug_state(const std::string& path, const Config& config, std::int64_t num_parameters) {
  File f = open_file(path, "debug state");
  const auto h = read_header(f.get(), path, 20240327, 2, "debug state", "llm.c's train_gpt2.py");
  DebugState s;
  s.batch = h[2];
  s.seq_len = h[3];
  if (s.batch <= 0 || s.seq_len <= 0 || s.seq_len > config.max_seq_len)
    throw std::runtime_error("'" + path + "' has batch " + std::to_string(s.batch) + " and sequence length " +
                             std::to_string(s.seq_len) + "; the model takes sequences of 1 to " +
                             std::to_string(config.max_seq_len) + " tokens");
  s.inputs = weft::empty<std::int32_t>({s.batch, s.seq_len});
  s.targets = weft::empty<std::int32_t>({s.batch, s.seq_len});
  s.logits = weft::empty<float>({s.batch, s.seq_len, config.vocab_size});
  s.grads = weft::empty<float>({num_parameters});
  read_exactly(f.get(), s.inputs.data(), std::size_t(s.inputs.numel()) * 4, path);
  read_exactly(f.get(), s.targets.data(), std::size_t(s.targets.numel()) * 4, path);
  read_exactly(f.get(), s.logits.data(), std::size_t(s.logits.numel()) * 4, path);
  read_exactly(f.get(), &s.loss, 4, path);
  read_exactly(f.get(), s.grads.data(), std::size_t(num_parameters) * 4, path);
  expect_end(f.get(), path);
  return s;
}

std::vector<std::uint16_t> read_tokens(const std::string& path) {
  File f = open_file(path, "token file");
  const auto h = read_header(f.get(), path, 20240520, 1, "token file", "llm.c's dev/data scripts");
  if (h[2] < 2) throw std::runtime_error("'" + path + "' holds " + std::to_string(h[2]) + " tokens; training needs "
                                         "at least 2 (an input and its target)");
  std::vector<std::uint16_t> tokens(static_cast<std::size_t>(h[2]));
  read_exactly(f.get(), tokens.data(), tokens.size() * 2, path);
  return tokens;
}

void write_tokens(const std::string& path, const std::vector<std::uint16_t>& tokens) {
  std::array<std::int32_t, 256> h{};
  h[0] = 20240520;
  h[1] = 1;
  h[2] = std::int32_t(tokens.size());
  File f = create_file(path);
  write_exactly(f.get(), h.data(), sizeof(h), path);
  write_exactly(f.get(), tokens.data(), tokens.size() * sizeof(std::uint16_t), path);
}

std::optional<Tokenizer> read_tokenizer(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return std::nullopt;
  const auto h = read_header(f.get(), path, 20240328, 2, "tokenizer", "llm.c's train_gpt2.py");
  Tokenizer t;
  t.end_of_text = h[3];
  t.pieces.resize(std::size_t(h[2]));
  for (std::string& piece : t.pieces) {
    unsigned char length = 0;
    read_exactly(f.get(), &length, 1, path);
    piece.resize(length);
    read_exactly(f.get(), piece.data(), length, path);
  }
  return t;
}

std::vector<double> read_numbers(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::vector<double> values;
  for (double v; in >> v;) values.push_back(v);
  if (!in.eof()) throw std::runtime_error("'" + path + "' holds something other than numbers");
  return values;
}

void write_numbers(const std::string& path, const std::vector<double>& values) {
  std::ofstream out(path);
  out.precision(17);  // enough digits to read back the same double
  for (double v : values) out << v << '\n';
  if (!out.flush()) throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace gpt2
