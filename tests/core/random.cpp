// SPDX-License-Identifier: MIT
/// @file core: rand / randn / randint: determinism per seed, counter-based values, ranges, moments.
#include "reference.hpp"

#include <array>

using namespace weft_test;

TEST_SUITE("core") {

TEST_CASE("factories: rand / randn / randint are deterministic per seed and differ across seeds") {
  const std::uint64_t s = seed() ^ 0x5eed;
  INFO("factory seed ", s);
  auto equal_fraction = [](const std::vector<double>& a, const std::vector<double>& b) {
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
    return double(same) / double(a.size());
  };
  auto check_one = [&](auto make) {
    auto a = values_of(make(s)), b = values_of(make(s)), c = values_of(make(s + 1));
    CHECK(a == b);
    CHECK(equal_fraction(a, c) < 0.05);
    std::size_t zeros = std::size_t(std::count(a.begin(), a.end(), 0.0));
    CHECK(zeros < a.size() / 2);
  };
  const Shape shape{50, 41};
  check_one([&](std::uint64_t k) { return weft::rand<float>(shape, k); });
  check_one([&](std::uint64_t k) { return weft::rand<double>(shape, k); });
  check_one([&](std::uint64_t k) { return weft::rand<half>(shape, k); });
  check_one([&](std::uint64_t k) { return weft::rand<bfloat16>(shape, k); });
  check_one([&](std::uint64_t k) { return weft::randn<float>(shape, k); });
  check_one([&](std::uint64_t k) { return weft::randn<double>(shape, k); });
  check_one([&](std::uint64_t k) { return weft::randn<half>(shape, k); });
  check_one([&](std::uint64_t k) { return weft::randint<std::int64_t>(-1000000, 1000000, shape, k); });
  check_one([&](std::uint64_t k) { return weft::randint<std::int32_t>(0, 1 << 30, shape, k); });

  // Counter-based: element i depends only on (seed, i), not on the shape.
  auto small = values_of(weft::rand<float>(Shape{10}, s));
  auto big = values_of(weft::rand<float>(Shape{3, 100}, s));
  CHECK(std::equal(small.begin(), small.end(), big.begin()));
  auto n1 = values_of(weft::randn<double>(Shape{7}, s)), n2 = values_of(weft::randn<double>(Shape{70000}, s));
  CHECK(std::equal(n1.begin(), n1.end(), n2.begin()));  // also across the OpenMP threshold
  // Lower precision is the rounded float/double value.
  auto rf = values_of(weft::rand<float>(shape, s)), rh = values_of(weft::rand<half>(shape, s));
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < rf.size(); ++i) wrong += rh[i] != round_half(rf[i]);
  CHECK(wrong == 0);
}

TEST_CASE("factories: ranges of rand and randint") {
  const std::uint64_t s = seed() ^ 0xabc;
  INFO("factory seed ", s);
  auto in_range = [](const std::vector<double>& v, double lo, double hi, bool hi_inclusive) {
    return std::all_of(v.begin(), v.end(), [&](double x) { return x >= lo && (hi_inclusive ? x <= hi : x < hi); });
  };
  CHECK(in_range(values_of(weft::rand<float>(Shape{100000}, s)), 0, 1, false));
  CHECK(in_range(values_of(weft::rand<double>(Shape{100000}, s)), 0, 1, false));
  // A 16-bit float can round a value just below 1 up to 1 (as torch.rand in half can).
  CHECK(in_range(values_of(weft::rand<half>(Shape{100000}, s)), 0, 1, true));
  CHECK(in_range(values_of(weft::rand<bfloat16>(Shape{100000}, s)), 0, 1, true));
  auto ri = values_of(weft::randint<std::int32_t>(-3, 4, Shape{5000}, s));
  CHECK(in_range(ri, -3, 4, false));
  for (int k = -3; k < 4; ++k) CHECK(std::count(ri.begin(), ri.end(), double(k)) > 500);  // each value ~714 times
  auto rb = values_of(weft::randint<bool>(0, 2, Shape{4000}, s));
  CHECK(std::count(rb.begin(), rb.end(), 1.0) > 1700);
  CHECK(std::count(rb.begin(), rb.end(), 0.0) > 1700);
  CHECK_THROWS_WITH_AS(weft::randint<std::int32_t>(5, 5, Shape{3}, s), doctest::Contains("weft::randint: needs low < high"),
                       weft::Error);
}

TEST_CASE("factories: moments of rand and randn within 5 standard errors") {
  // For n independent samples the sample mean has standard error sigma / sqrt(n) and the sample
  // variance (normal data) sqrt(2 / n) sigma^2; a 5-standard-error band fails a correct
  // generator with probability ~6e-7 per check, while a wrong transform (e.g. uniform instead of
  // normal, a missing sqrt(2), a biased u1) is off by many standard errors at n = 400000.
  const std::uint64_t s = seed() ^ 0x777;
  INFO("factory seed ", s);
  const double n = 400000;
  auto moments = [](const std::vector<double>& v) {
    double m = 0, m2 = 0, m4 = 0, inside1 = 0;
    for (double x : v) m += x;
    m /= double(v.size());
    for (double x : v) {
      m2 += (x - m) * (x - m);
      m4 += std::pow(x - m, 4);
      inside1 += std::fabs(x) < 1;
    }
    return std::array<double, 4>{m, m2 / double(v.size()), m4 / double(v.size()), inside1 / double(v.size())};
  };
  auto normal = moments(values_of(weft::randn<double>(Shape{400000}, s)));
  CHECK(std::fabs(normal[0]) < 5 / std::sqrt(n));
  CHECK(std::fabs(normal[1] - 1) < 5 * std::sqrt(2 / n));
  CHECK(std::fabs(normal[2] - 3) < 5 * std::sqrt(96 / n));  // Var(x^4) = E x^8 - 9 = 96
  const double p1 = 0.682689492137086;                       // P(|x| < 1)
  CHECK(std::fabs(normal[3] - p1) < 5 * std::sqrt(p1 * (1 - p1) / n));
  auto normal_f = moments(values_of(weft::randn<float>(Shape{400000}, s + 1)));
  CHECK(std::fabs(normal_f[0]) < 5 / std::sqrt(n));
  CHECK(std::fabs(normal_f[1] - 1) < 5 * std::sqrt(2 / n));
  auto uni = moments(values_of(weft::rand<float>(Shape{400000}, s + 2)));
  CHECK(std::fabs(uni[0] - 0.5) < 5 * std::sqrt(1.0 / 12 / n));
  CHECK(std::fabs(uni[1] - 1.0 / 12) < 5 * std::sqrt(1.0 / 180 / n));  // Var((x-1/2)^2) = 1/80 - 1/144 = 1/180
  auto uni_d = moments(values_of(weft::rand<double>(Shape{400000}, s + 3)));
  CHECK(std::fabs(uni_d[0] - 0.5) < 5 * std::sqrt(1.0 / 12 / n));
  CHECK(std::fabs(uni_d[1] - 1.0 / 12) < 5 * std::sqrt(1.0 / 180 / n));
}

}  // TEST_SUITE
