// SPDX-License-Identifier: MIT
/// @file cpu: weft::nn modules against torch.nn: parameter names and order, the golden state_dicts of
/// tests/golden/make_module_golden.py load with torch's values, save -> load round trips in place,
/// every load_state_dict error (nothing written), torch's initial distributions, train/eval.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <weft/io.hpp>
#include <weft/nn/modules.hpp>

#include "error_check.hpp"

#ifndef WEFT_GOLDEN_DIR
#error "tests/meson.build defines WEFT_GOLDEN_DIR (the tests/golden directory)"
#endif

using namespace weft_test;
using weft::Shape;
namespace ad = weft::ad;
namespace io = weft::io;
namespace nn = weft::nn;
namespace fs = std::filesystem;

namespace {

const std::string kGolden = std::string(WEFT_GOLDEN_DIR) + "/nn/";

/// torch's nn.Sequential(nn.Linear(5, 7), nn.LayerNorm(7), nn.Linear(7, 3, bias=False)).
template <class T = float>
nn::Sequential<T> sequential_model(std::uint64_t seed) {
  return nn::Sequential<T>(nn::Linear<T>(5, 7, true, seed), nn::LayerNorm<T>(7), nn::Linear<T>(7, 3, false, seed + 1));
}

/// make_module_golden.py's Net: named children, an Embedding, a Dropout inside a Sequential.
struct Net : nn::Module<> {
  explicit Net(std::uint64_t seed)
      : embed(11, 4, seed), block(nn::Linear<>(4, 6, true, seed + 1), nn::Dropout<>(0.1), nn::LayerNorm<>(6)),
        head(6, 2, true, seed + 2) {
    register_module("embed", &Net::embed);
    register_module("block", &Net::block);
    register_module("head", &Net::head);
  }
  nn::Embedding<> embed;
  nn::Sequential<> block;
  nn::Linear<> head;
};

template <class M>
std::vector<std::string> parameter_names(const M& model) {
  std::vector<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names.push_back(name);
  return names;
}

std::vector<std::string> state_dict_names(const nn::StateDict& state) {
  std::vector<std::string> names;
  for (const io::NamedTensor& t : state) names.push_back(t.name);
  return names;
}

/// The golden file's "keys" metadata: torch's state_dict keys in torch's order.
std::vector<std::string> torch_keys(const io::SafeTensors& file) {
  std::vector<std::string> keys;
  const std::string& joined = file.metadata().at("keys");
  for (std::size_t begin = 0, end; begin <= joined.size(); begin = end + 1) {
    end = std::min(joined.find(',', begin), joined.size());
    keys.push_back(joined.substr(begin, end - begin));
  }
  return keys;
}

/// Every parameter's values, by name (copies: later writes do not change them).
template <class T>
std::vector<std::pair<std::string, std::vector<T>>> snapshot(const nn::Module<T>& model) {
  std::vector<std::pair<std::string, std::vector<T>>> out;
  for (const auto& [name, p] : model.named_parameters()) out.emplace_back(name, p.value().to_vector());
  return out;
}

/// Checks that every parameter of `model` equals the file's tensor of its name, element for element.
template <class T>
void check_equals_file(const nn::Module<T>& model, const io::SafeTensors& file) {
  // Not a structured binding: clang cannot capture one in CAPTURE's lambda under OpenMP.
  for (const auto& named : model.named_parameters()) {
    const std::string& name = named.first;
    const auto& p = named.second;
    CAPTURE(name);
    REQUIRE(file.contains(name));
    CHECK(file.shape(name) == p.shape());
    CHECK(file.get<T>(name).to_vector() == p.value().to_vector());
  }
}

struct MeanStd {
  double mean, std, min, max;
};
MeanStd statistics(const std::vector<float>& v) {
  double sum = 0, sq = 0, lo = v.at(0), hi = v.at(0);
  for (float x : v) sum += x, sq += double(x) * x, lo = std::min<double>(lo, x), hi = std::max<double>(hi, x);
  const double mean = sum / double(v.size());
  return {mean, std::sqrt(sq / double(v.size()) - mean * mean), lo, hi};
}

}  // namespace

TEST_CASE("nn::Module: parameter names and order are torch's") {
  io::SafeTensors seq_file(kGolden + "sequential.safetensors"), net_file(kGolden + "net.safetensors");
  nn::Sequential<> seq = sequential_model(1);
  CHECK(parameter_names(seq) == torch_keys(seq_file));
  CHECK(parameter_names(seq) == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "2.weight"});
  CHECK(state_dict_names(seq.state_dict()) == torch_keys(seq_file));

  Net net(1);
  CHECK(parameter_names(net) == torch_keys(net_file));  // block.1 is the Dropout: no parameters
  CHECK(state_dict_names(net.state_dict()) == torch_keys(net_file));

  // parameters() are handles to the same nodes as the modules' members.
  std::vector<ad::Var<float>> params = net.parameters();
  REQUIRE(params.size() == 7);
  CHECK(params[0].node() == net.embed.weight.node());
  CHECK(params[5].node() == net.head.weight.node());
  CHECK(params[1].node() == net.block.at<nn::Linear<>>(0).weight.node());
  CHECK(params[0].requires_grad());

  // Shapes are torch's: Linear's weight is [out, in].
  CHECK(seq.at<nn::Linear<>>(0).weight.shape() == Shape{7, 5});
  CHECK(seq.at<nn::Linear<>>(0).bias.shape() == Shape{7});
  CHECK(!seq.at<nn::Linear<>>(2).bias.defined());
  CHECK(net.embed.weight.shape() == Shape{11, 4});
}

TEST_CASE("nn::Module: torch's golden state_dicts load with torch's values, in place") {
  nn::Sequential<> seq = sequential_model(2);
  std::vector<ad::Var<float>> held = seq.parameters();  // as an optimizer would hold them
  const float* storage = held[0].value().data();
  io::SafeTensors file(kGolden + "sequential.safetensors");
  nn::LoadResult result = seq.load_state_dict(file);
  CHECK(result.missing_keys.empty());
  CHECK(result.unexpected_keys.empty());
  check_equals_file(seq, file);
  CHECK(held[0].value().data() == storage);  // written into the existing storage
  CHECK(held[0].value().to_vector() == file.get<float>("0.weight").to_vector());

  Net net(3);
  io::SafeTensors net_file(kGolden + "net.safetensors");
  net.load_state_dict(net_file);
  check_equals_file(net, net_file);

  // float64: the same model's float64 file into a Sequential<double>.
  nn::Sequential<double> seq64 = sequential_model<double>(4);
  io::SafeTensors file64(kGolden + "sequential_f64.safetensors");
  seq64.load_state_dict(file64);
  check_equals_file(seq64, file64);
}

TEST_CASE("nn::Module: state_dict -> save_safetensors -> load_state_dict round-trips") {
  const std::string path = (fs::temp_directory_path() / ("weft_module_test_" + std::to_string(::getpid()) + ".safetensors")).string();
  struct RemoveAtEnd {
    std::string path;
    ~RemoveAtEnd() { fs::remove(path); }
  } remove_at_end{path};
  Net a(5), b(6);
  CHECK(snapshot(a) != snapshot(b));
  io::save_safetensors(path, a.state_dict());
  b.load_state_dict(io::SafeTensors(path));
  CHECK(snapshot(a) == snapshot(b));

  // A state_dict in memory loads directly; its entries share the parameters' elements.
  Net c(7);
  nn::StateDict state = c.state_dict();
  CHECK(state[0].tensor.bytes().data() == static_cast<const void*>(c.embed.weight.value().data()));
  a.load_state_dict(state);
  CHECK(snapshot(a) == snapshot(c));
  // Loading a module's own state_dict into itself changes nothing.
  c.load_state_dict(c.state_dict());
  CHECK(snapshot(a) == snapshot(c));
}

TEST_CASE("nn::Module: load_state_dict errors list every problem and write nothing") {
  Net net(8);
  const auto before = snapshot(net);
  auto keep_only = [](nn::StateDict state, auto drop) {
    nn::StateDict out;
    for (io::NamedTensor& t : state)
      if (!drop(t.name)) out.push_back(std::move(t));
    return out;
  };
  Net other(9);
  nn::StateDict full = other.state_dict();

  SUBCASE("missing keys") {
    nn::StateDict state = keep_only(full, [](const std::string& n) { return n == "head.bias" || n == "embed.weight"; });
    const std::string msg = error_of([&] { net.load_state_dict(state); });
    CHECK(has(msg, "weft::nn::Module::load_state_dict: Error(s) in loading state_dict for (anonymous namespace)::Net (nothing was loaded):"));
    CHECK(has(msg, "Missing key(s) in state_dict: \"embed.weight\", \"head.bias\"."));
    CHECK(has(msg, "nothing was loaded"));
    CHECK(has(msg, "strict = false"));
    CHECK(!has(msg, "Unexpected"));
    CHECK(snapshot(net) == before);
    // strict = false loads the rest and reports what it skipped.
    nn::LoadResult r = net.load_state_dict(state, false);
    CHECK(r.missing_keys == std::vector<std::string>{"embed.weight", "head.bias"});
    CHECK(r.unexpected_keys.empty());
    CHECK(net.embed.weight.value().to_vector() == before[0].second);
    CHECK(net.head.weight.value().to_vector() == other.head.weight.value().to_vector());
  }
  SUBCASE("unexpected keys") {
    nn::StateDict state = full;
    state.push_back({"head.extra", weft::zeros<float>({2})});
    state.push_back({"block.1.weight", weft::zeros<float>({6})});
    const std::string msg = error_of([&] { net.load_state_dict(state); });
    CHECK(has(msg, "Unexpected key(s) in state_dict: \"head.extra\", \"block.1.weight\"."));
    CHECK(!has(msg, "Missing"));
    CHECK(snapshot(net) == before);
    nn::LoadResult r = net.load_state_dict(state, false);
    CHECK(r.unexpected_keys == std::vector<std::string>{"head.extra", "block.1.weight"});
    CHECK(snapshot(net) == snapshot(other));
  }
  SUBCASE("mis-shaped entries, strict or not") {
    nn::StateDict state = keep_only(full, [](const std::string& n) { return n == "head.weight" || n == "block.2.bias"; });
    state.push_back({"head.weight", weft::zeros<float>({6, 2})});
    state.push_back({"block.2.bias", weft::zeros<float>({1, 6})});
    const std::string msg = error_of([&] { net.load_state_dict(state); });
    CHECK(has(msg, "size mismatch for block.2.bias: copying a param with shape [1, 6] from checkpoint, the shape in "
                   "current model is [6]."));
    CHECK(has(msg, "size mismatch for head.weight: copying a param with shape [6, 2] from checkpoint, the shape in "
                   "current model is [2, 6]."));
    CHECK(snapshot(net) == before);
    CHECK(has(error_of([&] { net.load_state_dict(state, false); }), "size mismatch for head.weight"));
    CHECK(snapshot(net) == before);
  }
  SUBCASE("wrong dtype: a float64 checkpoint into a float32 model") {
    nn::Sequential<> seq = sequential_model(10);
    const auto seq_before = snapshot(seq);
    const std::string msg = error_of([&] { seq.load_state_dict(io::SafeTensors(kGolden + "sequential_f64.safetensors")); });
    CHECK(has(msg, "for weft::nn::Sequential<float>"));
    CHECK(has(msg, "dtype mismatch for 0.weight: copying a param of dtype float64 from checkpoint, the dtype in "
                   "current model is float32."));
    CHECK(has(msg, "dtype mismatch for 2.weight"));
    CHECK(snapshot(seq) == seq_before);
    // The same from a state_dict in memory, of a bfloat16 tensor.
    nn::StateDict state = seq.state_dict();
    state[2] = {"1.weight", weft::ones<weft::bfloat16>({7})};
    CHECK(has(error_of([&] { seq.load_state_dict(state); }), "dtype mismatch for 1.weight: copying a param of dtype "
                                                              "bfloat16 from checkpoint"));
    CHECK(snapshot(seq) == seq_before);
  }
  SUBCASE("a dtype weft has no type for (U16), one it has (uint8), and loading from a file without strict") {
    struct Bytes : nn::Module<> {
      Bytes()
          : u16(ad::param(weft::zeros<float>({3}))), u8(ad::param(weft::zeros<float>({6}))),
            f32(ad::param(weft::zeros<float>({2, 3}))) {
        register_parameter("u16", &Bytes::u16);
        register_parameter("u8", &Bytes::u8);
        register_parameter("f32", &Bytes::f32);
      }
      ad::Var<float> u16, u8, f32;
    };
    Bytes bytes;
    io::SafeTensors all(std::string(WEFT_GOLDEN_DIR) + "/io/all.safetensors");  // make_io_golden.py's
    REQUIRE(all.dtype_code("u16") == "U16");
    REQUIRE(all.dtype_code("u8") == "U8");
    const std::string msg = error_of([&] { bytes.load_state_dict(all, false); });
    CHECK(has(msg, "dtype mismatch for u16: copying a param of dtype U16 from checkpoint, the dtype in current model "
                   "is float32."));
    CHECK(has(msg, "dtype mismatch for u8: copying a param of dtype uint8 from checkpoint, the dtype in current "
                   "model is float32."));
    CHECK(!has(msg, "Unexpected"));  // not strict: unexpected keys are no error
    CHECK(!has(msg, "strict = false"));
    CHECK(bytes.f32.value().to_vector() == std::vector<float>(6, 0.0f));
  }
  SUBCASE("every kind at once, and a repeated key: one error") {
    nn::StateDict state = keep_only(full, [](const std::string& n) { return n == "embed.weight" || n == "head.weight"; });
    state.push_back({"head.weight", weft::zeros<double>({2, 6})});
    state.push_back({"block.0.bias", weft::zeros<float>({6})});
    state.push_back({"tail.weight", weft::zeros<float>({1})});
    const std::string msg = error_of([&] { net.load_state_dict(state); });
    CHECK(has(msg, "Missing key(s) in state_dict: \"embed.weight\"."));
    CHECK(has(msg, "Unexpected key(s) in state_dict: \"tail.weight\"."));
    CHECK(has(msg, "Repeated key(s) in state_dict: \"block.0.bias\"."));
    CHECK(has(msg, "dtype mismatch for head.weight"));
    CHECK(snapshot(net) == before);
  }
}

TEST_CASE("nn::Module: tied weights are one parameter under two names, as in torch") {
  struct Tied : nn::Module<> {
    Tied() : embed(10, 4, 1), head(4, 10, false, 2) {
      head.weight = embed.weight;  // GPT-2's lm_head shares wte
      register_module("embed", &Tied::embed);
      register_module("head", &Tied::head);
    }
    nn::Embedding<> embed;
    nn::Linear<> head;
  };
  Tied tied;
  CHECK(parameter_names(tied) == std::vector<std::string>{"embed.weight"});  // an optimizer steps it once
  CHECK(state_dict_names(tied.state_dict()) == std::vector<std::string>{"embed.weight", "head.weight"});
  Tied other;
  other.embed.weight.data() = 3.0f;
  tied.load_state_dict(other.state_dict());
  CHECK(tied.head.weight.value().to_vector() == std::vector<float>(40, 3.0f));
}

TEST_CASE("nn::Module: initialization follows torch's distributions; seeds reproduce it") {
  SUBCASE("Linear: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias") {
    nn::Linear<> fc(256, 512, true, 42);
    const double bound = 1.0 / 16;
    const MeanStd w = statistics(fc.weight.value().to_vector());
    // 131072 draws of U(-b, b): std b/sqrt(3); the mean's own std is b/sqrt(3)/362.
    CHECK(w.min >= -bound);
    CHECK(w.max <= bound);
    CHECK(w.max > 0.999 * bound);
    CHECK(w.min < -0.999 * bound);
    CHECK(std::abs(w.mean) < 5 * bound / std::sqrt(3.0) / 362);
    CHECK(std::abs(w.std / (bound / std::sqrt(3.0)) - 1) < 0.01);
    const MeanStd b = statistics(fc.bias.value().to_vector());
    CHECK(b.min >= -bound);
    CHECK(b.max <= bound);
    CHECK(std::abs(b.std / (bound / std::sqrt(3.0)) - 1) < 0.1);  // 512 draws
    // The bias is not the weight's first elements (each parameter draws its own stream).
    CHECK(fc.bias.value().narrow(0, 0, 8).to_vector() != fc.weight.value().select(0, 0).narrow(0, 0, 8).to_vector());
  }
  SUBCASE("Embedding: N(0, 1)") {
    nn::Embedding<> e(1000, 64, 7);
    const MeanStd s = statistics(e.weight.value().to_vector());
    CHECK(std::abs(s.mean) < 5.0 / 253);  // 64000 draws
    CHECK(std::abs(s.std - 1) < 0.02);
    CHECK(s.max > 3.5);
    CHECK(s.min < -3.5);
  }
  SUBCASE("LayerNorm: weight ones, bias zeros") {
    nn::LayerNorm<> ln(6, 1e-6);
    CHECK(ln.weight.value().to_vector() == std::vector<float>(6, 1.0f));
    CHECK(ln.bias.value().to_vector() == std::vector<float>(6, 0.0f));
    CHECK(ln.eps() == 1e-6);
    CHECK(ln.normalized_shape() == Shape{6});
  }
  SUBCASE("a seed gives the same values; without one, every module draws new ones") {
    CHECK(snapshot(Net(11)) == snapshot(Net(11)));
    CHECK(snapshot(Net(11)) != snapshot(Net(12)));
    nn::Linear<> a(3, 4), b(3, 4);
    CHECK(a.weight.value().to_vector() != b.weight.value().to_vector());
  }
  SUBCASE("a layer without inputs") {
    nn::Linear<> empty(0, 3);
    CHECK(empty.weight.shape() == Shape{3, 0});
    CHECK(empty.bias.value().to_vector() == std::vector<float>(3, 0.0f));
  }
}

TEST_CASE("nn::Module: 16-bit modules save and load their own dtype") {
  nn::Linear<weft::bfloat16> fc(64, 32, true, 3);
  const MeanStd w = statistics(weft::eval(weft::cast<float>(fc.weight.value())).to_vector());
  CHECK(w.max <= 0.125);
  CHECK(w.min >= -0.125);
  CHECK(std::abs(w.std / (0.125 / std::sqrt(3.0)) - 1) < 0.05);
  nn::StateDict state = fc.state_dict();
  CHECK(state[0].tensor.dtype() == weft::DType::bfloat16);
  nn::Linear<weft::bfloat16> copy(64, 32, true, 4);
  copy.load_state_dict(state);
  CHECK(copy.weight.value().to_vector() == fc.weight.value().to_vector());
  nn::Linear<> wider(64, 32);
  CHECK(has(error_of([&] { wider.load_state_dict(state); }), "dtype mismatch for weight: copying a param of dtype "
                                                             "bfloat16 from checkpoint, the dtype in current model is "
                                                             "float32."));
}

TEST_CASE("nn::Module: train and eval reach every module") {
  Net net(13);
  CHECK(net.is_training());
  net.eval();
  CHECK(!net.is_training());
  CHECK(!net.block.is_training());
  CHECK(!net.block[1].is_training());
  CHECK(!net.head.is_training());
  net.block.train();
  CHECK(net.block.at<nn::Dropout<>>(1).is_training());
  CHECK(!net.is_training());
  net.train();
  CHECK(net.embed.is_training());
}

TEST_CASE("nn::Module: a module moves with its registry; Sequential holds modules of any kind") {
  nn::Linear<> fc(2, 3, true, 1);
  const auto values = snapshot(fc);
  nn::Sequential<> seq;
  nn::Linear<>& stored = seq.push_back(std::move(fc));
  CHECK(snapshot(stored) == values);
  seq.push_back(nn::Dropout<>(0.0));
  seq.push_back(nn::Sequential<>(nn::LayerNorm<>(3)));
  CHECK(seq.size() == 3);
  CHECK(parameter_names(seq) == std::vector<std::string>{"0.weight", "0.bias", "2.0.weight", "2.0.bias"});

  nn::Sequential<> moved = std::move(seq);
  CHECK(parameter_names(moved) == std::vector<std::string>{"0.weight", "0.bias", "2.0.weight", "2.0.bias"});
  CHECK(snapshot(moved.at<nn::Linear<>>(0)) == values);

  nn::Sequential deduced(nn::Linear(4, 2), nn::Linear(2, 1));  // Sequential<float>
  CHECK(parameter_names(deduced).size() == 4);
  CHECK(has(error_of([&] { deduced.at<nn::LayerNorm<>>(1); }), "module 1 is a weft::nn::Linear<float>, not a "
                                                              "weft::nn::LayerNorm<float>"));
  CHECK(has(error_of([&] { deduced[2]; }), "index 2 is out of range: the Sequential holds 2 module(s)"));
}

TEST_CASE("nn::Module: bad arguments and registrations are weft::Error") {
  CHECK(has(error_of([] { nn::Dropout<>(1.5); }), "dropout probability has to be between 0 and 1, but got 1.5"));
  CHECK(has(error_of([] { nn::Dropout<>(-0.1); }), "between 0 and 1"));
  CHECK(nn::Dropout<>(1.0).p() == 1.0);
  CHECK(has(error_of([] { nn::Linear<>(-1, 3); }), "in_features and out_features must be >= 0, got -1 and 3"));
  CHECK(has(error_of([] { nn::Embedding<>(4, -2); }), "must be >= 0"));

  struct Twice : nn::Module<> {
    Twice() : a(1, 1), b(1, 1) {
      register_module("fc", &Twice::a);
      register_module("fc", &Twice::b);
    }
    nn::Linear<> a, b;
  };
  CHECK(has(error_of([] { Twice(); }), "weft::nn::Module::register_module: name \"fc\" in "));
  CHECK(has(error_of([] { Twice(); }), "Twice: a child module already has that name; pick another"));
  struct Other : nn::Module<> {
    nn::Linear<> fc{1, 1};
  };
  struct Stranger : nn::Module<> {
    Stranger() { register_module("fc", &Other::fc); }
  };
  CHECK(has(error_of([] { Stranger(); }), "Other, which"));
  CHECK(has(error_of([] { Stranger(); }), "Stranger is not; register members of the module being constructed"));
  struct Dotted : nn::Module<> {
    Dotted() : w(ad::param(weft::zeros<float>({1}))) { register_parameter("a.b", &Dotted::w); }
    ad::Var<float> w;
  };
  CHECK(has(error_of([] { Dotted(); }), "a name must be non-empty and hold no '.'"));
}

TEST_CASE("nn::Module: weft's files for the Python check (WEFT_IO_ROUNDTRIP_DIR)") {
  // tests/golden/check_module_roundtrip.py loads these into torch's same architectures with
  // load_state_dict(strict=True): sequential.safetensors holds the golden's values (torch -> weft
  // -> torch), net.safetensors weft's own initialization.
  const char* out = std::getenv("WEFT_IO_ROUNDTRIP_DIR");
  if (!out) return;
  const fs::path dir = fs::path(out) / "nn";
  fs::create_directories(dir);
  nn::Sequential<> seq = sequential_model(14);
  seq.load_state_dict(io::SafeTensors(kGolden + "sequential.safetensors"));
  io::save_safetensors((dir / "sequential.safetensors").string(), seq.state_dict());
  Net net(15);
  io::save_safetensors((dir / "net.safetensors").string(), net.state_dict());
}
