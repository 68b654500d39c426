// SPDX-License-Identifier: MIT
/// @file cpu: the normalization modules against torch.nn: BatchNorm2d loads torch's state_dict (int64 num_batches_tracked included), trains to torch's state after three steps (tests/golden/make_norm_golden.py) and evaluates as torch; buffers in state_dict and load_state_dict; momentum None, track_running_stats and affine off; BatchNorm1d, GroupNorm, RMSNorm; every error.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <weft/io.hpp>
#include <weft/nn/modules.hpp>

#include "error_check.hpp"
#include "reference.hpp"

#ifndef WEFT_GOLDEN_DIR
#error "tests/meson.build defines WEFT_GOLDEN_DIR (the tests/golden directory)"
#endif

using namespace weft_test;
namespace ad = weft::ad;
namespace io = weft::io;
namespace nn = weft::nn;

namespace {

const std::string kNormGolden = std::string(WEFT_GOLDEN_DIR) + "/nn/";

std::vector<std::string> keys_of(const nn::StateDict& state) {
  std::vector<std::string> keys;
  for (const io::NamedTensor& t : state) keys.push_back(t.name);
  return keys;
}

std::vector<std::string> split_commas(const std::string& joined) {
  std::vector<std::string> parts;
  std::stringstream in(joined);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

/// The values of a state_dict entry of dtype U.
template <class U>
std::vector<double> entry_values(const io::NamedTensor& t) {
  REQUIRE(t.tensor.dtype() == weft::dtype_of<U>);
  const U* p = reinterpret_cast<const U*>(t.tensor.bytes().data());
  return std::vector<double>(p, p + t.tensor.shape().numel());
}

/// x as channels-last: the same shape over NHWC memory.
Tensor<double> channels_last_copy(const TensorView<const double>& x) {
  Tensor<double> nhwc = weft::eval(x.permute({0, 2, 3, 1}));
  return Tensor<double>(nhwc.view().permute({0, 3, 1, 2}));
}

}  // namespace

TEST_CASE("nn::BatchNorm2d: torch's state_dict loads, three training steps give torch's state, eval gives torch's output") {
  nn::BatchNorm2d<double> bn(3);
  const io::SafeTensors initial(kNormGolden + "batch_norm2d_initial.safetensors"),
      trained(kNormGolden + "batch_norm2d_trained.safetensors"), data(kNormGolden + "batch_norm2d_io.safetensors");
  CHECK(keys_of(bn.state_dict()) == split_commas(trained.metadata().at("keys")));
  const nn::LoadResult loaded = bn.load_state_dict(initial);
  CHECK(loaded.missing_keys.empty());
  CHECK(loaded.unexpected_keys.empty());
  CHECK(values_of(bn.weight.value()) == values_of(initial.get<double>("weight")));
  bn.train();
  for (int step = 0; step < 3; ++step) {
    const TensorView<const double> x = data.get<double>("input." + std::to_string(step));
    // torch's third input is channels-last: so is weft's
    const Tensor<double> input = step == 2 ? channels_last_copy(x) : Tensor<double>(x);
    (void)bn(ad::Var<double>(input));
  }
  // Batch statistics of at most 120 values a channel in double: (120 / 4 + 20) eps relative per
  // sum (the bound of the batch_norm tests), a few sums per step, three steps, values below ~10.
  const double tol = 3 * 4 * (120.0 / 4 + 20) * compute_eps<double>() * 10;
  for (const io::NamedTensor& t : bn.state_dict()) {
    INFO(t.name);
    if (t.name == "num_batches_tracked") {
      CHECK(t.tensor.shape() == Shape{});
      CHECK(entry_values<std::int64_t>(t) == std::vector<double>{3.0});
      CHECK(values_of(trained.get<std::int64_t>(t.name)) == std::vector<double>{3.0});
      continue;
    }
    const std::vector<double> got = entry_values<double>(t), want = values_of(trained.get<double>(t.name));
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(got[i] - want[i]) <= tol);
  }
  bn.eval();
  const std::vector<double> y = values_of(bn(ad::Var<double>(Tensor<double>(data.get<double>("eval_input")))).value());
  const std::vector<double> want = values_of(data.get<double>("eval_output"));
  REQUIRE(y.size() == want.size());
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(std::fabs(y[i] - want[i]) <= tol);

  // the state round-trips into a fresh module, buffers included
  nn::BatchNorm2d<double> copy(3);
  copy.load_state_dict(bn.state_dict());
  CHECK(values_of(copy.running_var) == values_of(bn.running_var));
  CHECK(values_of(copy.num_batches_tracked) == std::vector<double>{3.0});
}

TEST_CASE("nn::BatchNorm2d: momentum None averages the batches; without running stats or affine parameters") {
  WEFT_TEST_RNG(rng);
  Domain d;
  d.lo = -2, d.hi = 3;
  const Tensor<double> a = random_contiguous<double>(rng, {2, 2, 3, 3}, d), b = random_contiguous<double>(rng, {3, 2, 2, 2}, d);
  auto channel_mean = [](const Tensor<double>& x, std::int64_t c) {
    const std::vector<double> v = values_of(x);
    const std::int64_t per = x.numel() / x.shape()[0] / 2;
    double s = 0;
    for (std::int64_t i = 0; i < x.shape()[0]; ++i)
      for (std::int64_t k = 0; k < per; ++k) s += v[std::size_t((i * 2 + c) * per + k)];
    return s / double(x.shape()[0] * per);
  };
  nn::BatchNorm2d<double> cumulative(2, 1e-5, std::nullopt);
  (void)cumulative(ad::Var<double>(a));
  (void)cumulative(ad::Var<double>(b));
  // f = 1 / num_batches_tracked: the first batch replaces the zeros, the second averages with it
  for (std::int64_t c = 0; c < 2; ++c)
    CHECK(std::fabs(values_of(cumulative.running_mean)[std::size_t(c)] - (channel_mean(a, c) + channel_mean(b, c)) / 2) <=
          1e-13);

  nn::BatchNorm2d<double> untracked(2, 1e-5, 0.1, true, false);
  CHECK(keys_of(untracked.state_dict()) == std::vector<std::string>{"weight", "bias"});
  untracked.eval();  // no running statistics: eval normalizes with the batch's too, as torch
  const std::vector<double> y_eval = values_of(untracked(ad::Var<double>(a)).value());
  CHECK(y_eval == values_of(nn::batch_norm(a, Tensor<double>(), Tensor<double>(), untracked.weight.value(),
                                            untracked.bias.value(), true)));

  nn::BatchNorm2d<double> plain(2, 1e-5, 0.1, false);
  CHECK(keys_of(plain.state_dict()) == std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  CHECK(plain.parameters().empty());
}

TEST_CASE("nn::BatchNorm1d, GroupNorm and RMSNorm: torch's names, initial values, forward as the functional op") {
  WEFT_TEST_RNG(rng);
  Domain d;
  d.lo = -2, d.hi = 2;
  nn::BatchNorm1d bn1(4);
  CHECK(keys_of(bn1.state_dict()) ==
        std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
  const Tensor<float> x2 = random_contiguous<float>(rng, {5, 4}, d), x3 = random_contiguous<float>(rng, {2, 4, 6}, d);
  Tensor<float> rm = weft::zeros<float>({4}), rv = weft::ones<float>({4});
  CHECK(values_of(bn1(ad::Var<float>(x2)).value()) == values_of(nn::batch_norm(x2, rm, rv, {}, {}, true)));
  CHECK(values_of(bn1(ad::Var<float>(x3)).value()) == values_of(nn::batch_norm(x3, rm, rv, {}, {}, true)));
  CHECK(values_of(bn1.running_mean) == values_of(rm));

  nn::GroupNorm gn(2, 4);
  CHECK(keys_of(gn.state_dict()) == std::vector<std::string>{"weight", "bias"});
  CHECK(values_of(gn.weight.value()) == std::vector<double>(4, 1.0));
  CHECK(values_of(gn(ad::Var<float>(x3)).value()) == values_of(nn::group_norm(x3, 2, {}, {})));

  nn::RMSNorm rms(Shape{6});
  CHECK(keys_of(rms.state_dict()) == std::vector<std::string>{"weight"});
  CHECK(values_of(rms(ad::Var<float>(x3)).value()) == values_of(nn::rms_norm(x3, {6})));
  nn::RMSNorm<float> bare(Shape{4, 6}, 1e-3, false);
  CHECK(bare.parameters().empty());
  CHECK(values_of(bare(ad::Var<float>(x3)).value()) == values_of(nn::rms_norm(x3, {4, 6}, {}, 1e-3)));
}

TEST_CASE("norm modules: bad input and bad checkpoints are errors that name the module; nothing is written") {
  nn::BatchNorm2d bn(3);
  std::string e = error_of([&] { (void)bn(ad::Var<float>(weft::ones<float>({2, 3, 4}))); });
  CHECK(has(e, "nn::BatchNorm2d"));
  CHECK(has(e, "expected 4D input (got 3D input of shape [2, 3, 4])"));
  CHECK(values_of(bn.num_batches_tracked) == std::vector<double>{0.0});
  nn::BatchNorm1d bn1(3);
  e = error_of([&] { (void)bn1(ad::Var<float>(weft::ones<float>({2, 3, 4, 4}))); });
  CHECK(has(e, "expected 2D or 3D input (got 4D input"));
  e = error_of([&] { (void)bn(ad::Var<float>(weft::ones<float>({1, 3, 1, 1}))); });
  CHECK(has(e, "Expected more than 1 value per channel when training"));
  CHECK(values_of(bn.num_batches_tracked) == std::vector<double>{0.0});

  // a num_batches_tracked of another dtype, a running_mean of another shape: both named, nothing loaded
  nn::StateDict bad = bn.state_dict();
  const Tensor<float> wrong_dtype = weft::zeros<float>(Shape{}), wrong_shape = weft::ones<float>({4});
  for (io::NamedTensor& t : bad) {
    if (t.name == "num_batches_tracked") t.tensor = wrong_dtype;
    if (t.name == "running_mean") t.tensor = wrong_shape;
  }
  e = error_of([&] { bn.load_state_dict(bad); });
  CHECK(has(e, "dtype mismatch for num_batches_tracked: copying a param of dtype float32"));
  CHECK(has(e, "the dtype in current model is int64"));
  CHECK(has(e, "size mismatch for running_mean: copying a param with shape [4]"));
  CHECK(values_of(bn.running_mean) == std::vector<double>(3, 0.0));
  nn::StateDict missing = bn.state_dict();
  missing.pop_back();
  e = error_of([&] { bn.load_state_dict(missing); });
  CHECK(has(e, "Missing key(s) in state_dict: \"num_batches_tracked\""));

  e = error_of([] { nn::GroupNorm gn(4, 6); });
  CHECK(has(e, "num_channels 6 must be a positive multiple of num_groups 4"));
  e = error_of([] { nn::BatchNorm2d b(0); });
  CHECK(has(e, "num_features must be >= 1, got 0"));
  e = error_of([] { nn::RMSNorm r(Shape{4}, -1.0); });
  CHECK(has(e, "eps must be >= 0, got -1"));
}
