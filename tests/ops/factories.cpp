// SPDX-License-Identifier: MIT
/// @file core: the factories zeros/ones/full/arange/empty/from_vector for every dtype, and the *_like factories.
#include "reference.hpp"

#include <array>

using namespace weft_test;

TEST_SUITE("core") {

TEST_CASE("factories: zeros, ones, full, empty, arange for every dtype") {
  auto check_all = [](auto tag) {
    using T = decltype(tag);
    INFO(std::string(type_name<T>()));
    Tensor<T> z = weft::zeros<T>(Shape{2, 3});
    Tensor<T> o = weft::ones<T>(Shape{4});
    CHECK(z.shape() == Shape{2, 3});
    CHECK(z.is_contiguous());
    CHECK(values_of(z) == std::vector<double>(6, 0.0));
    CHECK(values_of(o) == std::vector<double>(4, 1.0));
    double v = std::is_same_v<T, bool> ? 1.0 : 3.0;
    Tensor<T> f = weft::full<T>(Shape{3, 1, 2}, make_value<T>(v));
    CHECK(f.shape() == Shape{3, 1, 2});
    CHECK(values_of(f) == std::vector<double>(6, v));
    Tensor<T> e = weft::empty<T>(Shape{5, 0});
    CHECK(e.numel() == 0);
    CHECK(e.shape() == Shape{5, 0});
    if constexpr (!std::is_same_v<T, bool>) {
      Tensor<T> a = weft::arange<T>(37);
      std::vector<double> want(37);
      std::iota(want.begin(), want.end(), 0.0);
      CHECK(values_of(a) == want);
    }
    CHECK(weft::zeros<T>(Shape{}).dim() == 0);
    CHECK(values_of(weft::ones<T>(Shape{})) == std::vector<double>{1.0});
  };
  check_all(float{});
  check_all(double{});
  check_all(half{});
  check_all(bfloat16{});
  check_all(std::int32_t{});
  check_all(std::int64_t{});
  check_all(bool{});
  CHECK(values_of(weft::full<half>(Shape{2}, half(0.1f))) == std::vector<double>(2, half_bits_value(half(0.1f).bits)));
  CHECK(values_of(weft::arange<half>(4000)).back() == 4000.0);  // 3999 rounds to 4000 in half (spacing 2 here)
  CHECK_THROWS_WITH_AS(weft::empty<float>(Shape{2, -1}), doctest::Contains("weft::empty: negative extent"), weft::Error);
  CHECK_THROWS_WITH_AS(weft::empty<float>(Shape{2}, weft::Device::cuda()), doctest::Contains("nvcc"), weft::Error);
  CHECK_THROWS_WITH_AS(weft::zeros<float>(Shape{2}, weft::Device::cuda(1)), doctest::Contains("weft::empty"), weft::Error);
}

TEST_CASE("factories: from_vector keeps row-major order and checks the shape") {
  std::vector<std::int64_t> v{5, -3, 7, 11, 13, -17};
  Tensor<std::int64_t> t = weft::from_vector<std::int64_t>(v, Shape{2, 3});
  CHECK(t.shape() == Shape{2, 3});
  CHECK(values_of(t) == std::vector<double>{5, -3, 7, 11, 13, -17});
  CHECK(t.to_vector() == v);
  CHECK(weft::from_vector<std::int64_t>(v).shape() == Shape{6});
  Tensor<bool> b = weft::from_vector<bool>({true, false, true});
  CHECK(values_of(b) == std::vector<double>{1, 0, 1});
  CHECK_THROWS_WITH_AS(weft::from_vector<std::int64_t>(v, Shape{4, 2}), doctest::Contains("weft::from_vector: 6 values do not fill shape [4, 2]"),
                       weft::Error);
}

TEST_CASE("factories: *_like take the shape and device of a tensor or view, their dtype unless one is given") {
  const Tensor<float> x = weft::rand<float>(Shape{3, 5}, seed());
  const TensorView<const float> xt = x.transpose(0, 1);  // strided: the result is contiguous anyway
  auto check_like = [](const auto& t, const Shape& shape, std::vector<double> want) {
    CHECK(t.shape() == shape);
    CHECK(t.is_contiguous());
    CHECK(t.device() == weft::Device::cpu());
    if (!want.empty()) CHECK(values_of(t) == want);
  };
  const Tensor<float> z = weft::zeros_like(x);
  check_like(z, Shape{3, 5}, std::vector<double>(15, 0.0));
  const Tensor<double> zd = weft::zeros_like<double>(xt);
  check_like(zd, Shape{5, 3}, std::vector<double>(15, 0.0));
  const Tensor<std::int64_t> o = weft::ones_like<std::int64_t>(x);
  check_like(o, Shape{3, 5}, std::vector<double>(15, 1.0));
  const Tensor<half> f = weft::full_like<half>(xt, 2.5);
  check_like(f, Shape{5, 3}, std::vector<double>(15, 2.5));
  const Tensor<float> f2 = weft::full_like(x, -7);
  check_like(f2, Shape{3, 5}, std::vector<double>(15, -7.0));
  const Tensor<bool> e = weft::empty_like<bool>(xt);
  check_like(e, Shape{5, 3}, {});
  const Tensor<float> empty_ok = weft::zeros_like(Tensor<float>(weft::empty<float>(Shape{0, 4})));
  CHECK(empty_ok.shape() == Shape{0, 4});

  // rand_like / randn_like draw like rand / randn of the shape: from a Generator, or the global one.
  weft::Generator g(seed());
  const Tensor<double> r = weft::rand_like<double>(xt, g);
  check_like(r, Shape{5, 3}, values_of(weft::rand<double>(Shape{5, 3}, seed())));
  const Tensor<float> n = weft::randn_like(x, g);
  check_like(n, Shape{3, 5}, {});
  weft::Generator h(seed());
  h.set_offset(15);
  CHECK(n.to_vector() == weft::randn<float>(Shape{3, 5}, h).to_vector());
  const std::uint64_t offset = weft::default_generator().offset();
  const Tensor<bfloat16> rb = weft::rand_like<bfloat16>(x);
  CHECK(weft::default_generator().offset() == offset + 15);
  check_like(rb, Shape{3, 5}, {});
}

}  // TEST_SUITE
