// SPDX-License-Identifier: MIT
/// @file core: rand / randn / randint: determinism per seed, counter-based values, ranges, moments; the global generator and Generator objects, and the values golden file of an independent Philox.
#include "random_check.hpp"
#include "reference.hpp"

#include <array>
#include <fstream>

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

namespace {

std::uint64_t bits_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
std::uint64_t bits_of(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}

/// Reads the hex IEEE bits of floating values or decimal integers after the ':' of a golden line.
std::vector<std::string> golden_values(std::istringstream& in) {
  std::vector<std::string> v;
  for (std::string w; in >> w;) v.push_back(w);
  return v;
}

/// |a - b| in units in the last place of b (both finite, same type).
template <class T>
double ulps_apart(T a, T b) {
  return std::fabs(double(a) - double(b)) / std::fabs(double(std::nextafter(b, T(INFINITY)) - b));
}

}  // namespace

TEST_CASE("generator: the global generator's draws equal tests/golden/make_random_golden.py's independent Philox") {
  // The golden file replays manual_seed, draws and offset jumps (across 2^32, the carry into the
  // counter's second word). rand and randint are exact functions of Philox's bits: compared bit
  // for bit. randn goes through the C library's log and cos, which are not correctly rounded and
  // may differ by an ulp between libraries and ISAs: within 1 ulp of Python's double (the float
  // value, rounded from it, within 1 ulp of the float).
  GlobalGeneratorScope restore;
  std::string path = WEFT_GOLDEN_DIR;
  path += "/random/philox.txt";  // appended, not `std::string + "..."`: GCC 12 -Warray-bounds false positive
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), "cannot open " << path << " (run tests/golden/make_random_golden.py)");
  int calls = 0;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#') continue;
    INFO(line);
    std::istringstream in(line);
    std::string call, dtype, colon;
    in >> call;
    if (call == "seed" || call == "offset") {
      std::uint64_t k;
      in >> k;
      if (call == "seed") weft::manual_seed(k);
      else weft::default_generator().set_offset(k);
      continue;
    }
    std::int64_t n = 0, low = 0, high = 0;
    in >> dtype >> n;
    if (call == "randint") in >> low >> high;
    in >> colon;
    REQUIRE(colon == ":");
    const std::vector<std::string> want = golden_values(in);
    REQUIRE(std::int64_t(want.size()) == n);
    const Shape shape{n};
    auto check_floats = [&](auto t, bool exact) {
      using T = typename decltype(t)::value_type;
      const std::vector<T> got = t.to_vector();
      for (std::int64_t i = 0; i < n; ++i) {
        T w;
        const std::uint64_t wb = std::stoull(want[std::size_t(i)], nullptr, 16);
        std::memcpy(&w, &wb, sizeof(T));
        if (exact) CHECK(bits_of(got[std::size_t(i)]) == wb);
        else CHECK(ulps_apart(got[std::size_t(i)], w) <= 1.0);
      }
    };
    auto check_ints = [&](auto t) {
      const auto got = t.to_vector();
      for (std::int64_t i = 0; i < n; ++i) CHECK(std::int64_t(got[std::size_t(i)]) == std::stoll(want[std::size_t(i)]));
    };
    if (call == "rand" && dtype == "float32") check_floats(weft::rand<float>(shape), true);
    else if (call == "rand" && dtype == "float64") check_floats(weft::rand<double>(shape), true);
    else if (call == "randn" && dtype == "float32") check_floats(weft::randn<float>(shape), false);
    else if (call == "randn" && dtype == "float64") check_floats(weft::randn<double>(shape), false);
    else if (call == "randint" && dtype == "int64") check_ints(weft::randint<std::int64_t>(low, high, shape));
    else if (call == "randint" && dtype == "int32") check_ints(weft::randint<std::int32_t>(low, high, shape));
    else FAIL("unknown golden call " << call << " " << dtype);
    ++calls;
  }
  CHECK(calls == 72);  // 4 seeds x 3 offsets x 6 calls: the whole file was read
}

TEST_CASE("generator: manual_seed replays, consecutive draws differ, the seeded forms are a fresh generator") {
  GlobalGeneratorScope restore;
  const std::uint64_t s = seed() ^ 0x9e1;
  INFO("generator seed ", s);
  const Shape shape{37, 29};
  weft::manual_seed(s);
  CHECK(weft::initial_seed() == s);
  CHECK(weft::default_generator().offset() == 0);
  const auto a = weft::rand<float>(shape).to_vector();
  CHECK(weft::default_generator().offset() == std::uint64_t(shape.numel()));  // one counter per element
  const auto b = weft::randn<double>(shape).to_vector();
  const auto c = weft::randint<std::int64_t>(-5, 1 << 30, shape).to_vector();
  const auto a2 = weft::rand<float>(shape).to_vector();
  // The first draw after manual_seed(s) is rand(shape, s); the next ones continue the counters.
  CHECK(a == weft::rand<float>(shape, s).to_vector());
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == a2[i];
  CHECK(same < a.size() / 100);  // 24-bit values: ~0 coincide by chance
  weft::manual_seed(s);
  CHECK(weft::rand<float>(shape).to_vector() == a);
  CHECK(weft::randn<double>(shape).to_vector() == b);
  CHECK(weft::randint<std::int64_t>(-5, 1 << 30, shape).to_vector() == c);
  CHECK(weft::rand<float>(shape).to_vector() == a2);

  // A Generator the caller owns is independent of the global one and of other Generators.
  weft::Generator g(s), h(s);
  weft::manual_seed(s + 1);
  CHECK(weft::rand<float>(shape, g).to_vector() == a);
  CHECK(weft::default_generator().offset() == 0);  // the global generator did not move
  CHECK(weft::rand<float>(shape, h).to_vector() == a);
  CHECK(weft::randn<double>(shape, g).to_vector() == b);
  CHECK(g.offset() == 2 * std::uint64_t(shape.numel()));
  g.set_offset(0);  // a saved (seed, offset) state restores the stream
  CHECK(weft::rand<float>(shape, g).to_vector() == a);
  g.manual_seed(s + 1);
  CHECK(g.initial_seed() == s + 1);
  CHECK(weft::rand<float>(shape, g).to_vector() == weft::rand<float>(shape).to_vector());

  // A refused call draws nothing: the next draw is the one the call would have made.
  weft::manual_seed(s);
  CHECK_THROWS_WITH_AS(weft::randint<std::int32_t>(3, 3, shape), doctest::Contains("weft::randint: needs low < high"),
                       weft::Error);
  CHECK_THROWS_WITH_AS(weft::rand<float>(Shape{4, -2}), doctest::Contains("weft::rand: negative extent in shape [4, -2]"),
                       weft::Error);
  CHECK_THROWS_WITH_AS(weft::randn<float>(Shape{4}, weft::Device::cuda()), doctest::Contains("nvcc"), weft::Error);
  CHECK(weft::default_generator().offset() == 0);
  CHECK(weft::rand<float>(shape).to_vector() == a);
}

TEST_CASE("generator: a program that never seeds starts from torch's default seed") {
  // A fresh Generator is what the global one is before any manual_seed.
  weft::Generator fresh;
  CHECK(fresh.initial_seed() == 67280421310721ull);
  CHECK(fresh.offset() == 0);
  CHECK(weft::rand<double>(Shape{9}, fresh).to_vector() == weft::rand<double>(Shape{9}, 67280421310721ull).to_vector());
}

TEST_CASE("generator: randint's values are uniform over [low, high) (chi-square)") {
  const std::uint64_t s = seed() ^ 0x1a7;
  INFO("generator seed ", s);
  weft::Generator g(s);
  const std::int64_t k = 7, n = 70000;
  const auto v = weft::randint<std::int64_t>(-3, -3 + k, Shape{n}, g).to_vector();
  std::vector<double> counts(std::size_t(k), 0.0);
  for (std::int64_t x : v) {
    REQUIRE((x >= -3 && x < -3 + k));
    counts[std::size_t(x + 3)] += 1;
  }
  CHECK(chi_square_z(chi_square(counts, std::vector<double>(std::size_t(k), double(n) / double(k))), double(k - 1)) < 5);
}

}  // TEST_SUITE
