// SPDX-License-Identifier: MIT
/// @file cuda: every random op on CUDA tensors gives the CPU's values, bit for bit, for the same seed and call order (the cpu suite checks the CPU's distributions); a refused call draws nothing. Skipped at run time without a CUDA device.
#include <doctest/doctest.h>

#include <weft/ops/random.hpp>

#include "cuda_support.hpp"
#include "random_check.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::Device;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE("cuda random ops: the CPU's values for the same seed and call order" * doctest::skip(!cuda_available())) {
  GlobalGeneratorScope restore;
  const std::uint64_t s = seed() ^ 0xc0da;
  INFO("random seed ", s);
  // Each body draws from the global generator after manual_seed(s), on one device; the CUDA
  // result, copied back, must equal the CPU's.
  auto same_on_both = [&](const char* what, auto body) {
    INFO(what);
    weft::manual_seed(s);
    const auto cpu = body(Device::cpu());
    weft::manual_seed(s);
    const auto gpu = body(Device::cuda());
    CHECK(gpu.device() == Device::cuda());
    CHECK(gpu.to(Device::cpu()).to_vector() == cpu.to_vector());
    CHECK(weft::default_generator().offset() > 0);
  };
  same_on_both("rand float", [](Device d) { return weft::rand<float>(Shape{300, 301}, d); });
  same_on_both("rand half", [](Device d) { return weft::rand<weft::half>(Shape{1000}, d); });
  same_on_both("randn double", [](Device d) { return weft::randn<double>(Shape{77, 5}, d); });
  same_on_both("randint int64", [](Device d) { return weft::randint<std::int64_t>(-9, 1 << 20, Shape{999}, d); });
  same_on_both("normal_ and uniform_ through a transposed view", [](Device d) {
    Tensor<float> t = weft::zeros<float>(Shape{40, 30}, d);
    weft::normal_(t.transpose(0, 1), 2.0, 0.5);
    weft::uniform_(t.slice(1, 0, 10), -3.0, 3.0);
    return t;
  });
  same_on_both("rand_like and randn_like", [](Device d) {
    const Tensor<float> x = weft::zeros<float>(Shape{8, 9}, d);
    Tensor<double> r = weft::rand_like<double>(x);
    r = r + weft::randn_like<double>(x);
    return r;
  });
  const Tensor<float> probs = weft::rand<float>(Shape{16, 500}, s + 1);
  same_on_both("bernoulli", [&](Device d) { return weft::bernoulli(probs.to(d)); });
  same_on_both("multinomial with replacement", [&](Device d) { return weft::multinomial(probs.to(d), 40, true); });
  same_on_both("multinomial without replacement", [&](Device d) { return weft::multinomial(probs.to(d), 40); });
  same_on_both("randperm", [](Device d) { return weft::randperm(5000, d); });

  weft::manual_seed(s);
  const Tensor<float> bad = weft::full<float>(Shape{3}, 2.0f, Device::cuda());
  CHECK_THROWS_WITH_AS(weft::bernoulli(bad), doctest::Contains("weft::bernoulli: expects every probability in [0, 1]"),
                       weft::Error);
  CHECK_THROWS_WITH_AS(weft::multinomial(weft::eval(-bad), 1), doctest::Contains("weft::multinomial: probs [3] holds -2"),
                       weft::Error);
  CHECK(weft::default_generator().offset() == 0);
}

}  // TEST_SUITE
