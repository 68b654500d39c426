// SPDX-License-Identifier: MIT
/// @file cpu: normal_, uniform_, bernoulli, multinomial and randperm: their distributions (moments within 5 standard errors, chi-square against exact probabilities), the same values for every thread count and on replay, and their errors.
#include <weft/backend/threads.hpp>
#include <weft/ops/random.hpp>

#include "random_check.hpp"
#include "reference.hpp"

#include <array>
#include <chrono>
#include <map>
#include <numeric>

using namespace weft_test;

namespace {

struct ThreadCountGuard {
  int saved = weft::get_num_threads();
  ~ThreadCountGuard() { weft::set_num_threads(saved); }
};

/// Mean and (population) variance of values.
std::array<double, 2> mean_var(const std::vector<double>& v) {
  double m = 0, m2 = 0;
  for (double x : v) m += x;
  m /= double(v.size());
  for (double x : v) m2 += (x - m) * (x - m);
  return {m, m2 / double(v.size())};
}

/// A tensor of random weights in [lo, hi) from the test's own generator (not weft's).
template <class T>
Tensor<T> weights(Rng& rng, Shape shape, double lo, double hi) {
  std::vector<T> v(std::size_t(shape.numel()));
  for (T& x : v) x = T(rng.uniform(lo, hi));
  return weft::from_vector<T>(v, shape);
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("normal_ and uniform_: moments within 5 standard errors, through strides, every element written") {
  // n samples: the mean's standard error is sigma / sqrt(n), the variance's sqrt(2 / n) sigma^2
  // for normal data and sqrt(1 / 180 / n) (to - from)^2 for uniform data (Var((u - 1/2)^2) = 1/180).
  const std::uint64_t s = seed() ^ 0x40;
  INFO("random seed ", s);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    INFO(std::string(type_name<T>()));
    const double n = 400 * 1000;
    // A transposed view: the draw fills it in row-major order of the view, through its strides.
    Tensor<T> base = weft::empty<T>(Shape{1000, 400});
    poison(base);
    weft::Generator g(s);
    const double mean = -1.5, sd = 2.5;
    weft::normal_(base.transpose(0, 1), mean, sd, g);
    for (double x : values_of(base)) REQUIRE(std::isfinite(x));  // no poison left
    const auto mv = mean_var(values_of(base));
    CHECK(std::fabs(mv[0] - mean) < 5 * sd / std::sqrt(n));
    CHECK(std::fabs(mv[1] - sd * sd) < 5 * std::sqrt(2 / n) * sd * sd);
    // Element (i, j) of the view took counter i * 1000 + j: the values of randn's draw.
    const auto z = values_of(weft::randn<double>(Shape{400, 1000}, s));
    const auto got = values_of(base.transpose(0, 1));
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < z.size(); ++i) wrong += got[i] != double(T(mean + sd * z[i]));
    CHECK(wrong == 0);

    Tensor<T> u = weft::empty<T>(Shape{400000});
    poison(u);
    weft::uniform_(u, -2.0, 6.0, g);
    const auto uv = values_of(u);
    CHECK(std::all_of(uv.begin(), uv.end(), [](double x) { return x >= -2 && x < 6; }));
    const auto um = mean_var(uv);
    CHECK(std::fabs(um[0] - 2) < 5 * 8 / std::sqrt(12 * n));
    CHECK(std::fabs(um[1] - 64.0 / 12) < 5 * 64 * std::sqrt(1.0 / 180 / n));
    // uniform_(t) with the default range gives rand's values.
    weft::Generator h(s);
    Tensor<T> r = weft::empty<T>(Shape{333});
    weft::uniform_(r, 0, 1, h);
    CHECK(r.to_vector() == weft::rand<T>(Shape{333}, s).to_vector());
    // A seed in place of the generator: a fresh Generator(seed). A Tensor comes back by reference.
    Tensor<T> seeded = weft::empty<T>(Shape{400, 1000});
    CHECK(&weft::normal_(seeded, mean, sd, s) == &seeded);
    CHECK(values_of(seeded) == got);
  };
  run(float{});
  run(double{});
}

TEST_CASE("normal_ and uniform_: bad arguments are refused before anything is drawn or written") {
  Tensor<float> t = weft::full<float>(Shape{3, 2}, 7.0f);
  weft::Generator g(11);
  CHECK_THROWS_WITH_AS(weft::normal_(t, 0.0, -1.0, g), doctest::Contains("weft::normal_: expects std >= 0, but got std = -1"),
                       weft::Error);
  CHECK_THROWS_WITH_AS(weft::uniform_(t, 2.0, 1.0, g),
                       doctest::Contains("weft::uniform_: expects a finite range from <= to, but got from = 2, to = 1"),
                       weft::Error);
  CHECK(values_of(t) == std::vector<double>(6, 7.0));
  CHECK(g.offset() == 0);
}

TEST_CASE("bernoulli: each x_i is 1 with probability p_i, of p's dtype; p outside [0, 1] is refused") {
  const std::uint64_t s = seed() ^ 0xbe;
  INFO("random seed ", s);
  WEFT_TEST_RNG(rng);
  // Per-element probabilities: sum x ~ sum p with variance sum p (1 - p) (independent draws).
  const std::int64_t n = 300000;
  Tensor<double> p = weights<double>(rng, Shape{600, 500}, 0, 1);
  weft::Generator g(s);
  const Tensor<double> x = weft::bernoulli(p, g);
  CHECK(x.shape() == p.shape());
  double sum_x = 0, sum_p = 0, var = 0;
  const auto xv = values_of(x), pv = values_of(p);
  for (std::int64_t i = 0; i < n; ++i) {
    REQUIRE((xv[std::size_t(i)] == 0 || xv[std::size_t(i)] == 1));
    sum_x += xv[std::size_t(i)];
    sum_p += pv[std::size_t(i)];
    var += pv[std::size_t(i)] * (1 - pv[std::size_t(i)]);
  }
  CHECK(std::fabs(sum_x - sum_p) < 5 * std::sqrt(var));
  // Where x_i = 1 the draw's u_i < p_i: the elements with large p are ones more often.
  double ones_high = 0, high = 0;
  for (std::int64_t i = 0; i < n; ++i)
    if (pv[std::size_t(i)] > 0.9) high += 1, ones_high += xv[std::size_t(i)];
  CHECK(ones_high / high > 0.9);

  // An expression of probabilities, p = 0 and p = 1 exactly, float.
  Tensor<float> q = weft::from_vector<float>({0, 1, 0, 1, 0.5f, 0.5f});
  const auto qx = values_of(weft::bernoulli(q * 1.0f, g));
  CHECK(qx[0] == 0);
  CHECK(qx[1] == 1);
  CHECK(qx[2] == 0);
  CHECK(qx[3] == 1);
  // A scalar p for a new tensor.
  const auto b = values_of(weft::bernoulli<float>(Shape{200000}, 0.3, g));
  const double mean = mean_var(b)[0];
  CHECK(std::fabs(mean - 0.3) < 5 * std::sqrt(0.3 * 0.7 / 200000));

  const std::uint64_t before = g.offset();
  CHECK_THROWS_WITH_AS(weft::bernoulli(weft::from_vector<float>({0.5f, 1.5f}), g),
                       doctest::Contains("weft::bernoulli: expects every probability in [0, 1], but p [2] holds 1.5 at flat index 1"),
                       weft::Error);
  CHECK_THROWS_WITH_AS(weft::bernoulli(weft::from_vector<double>({-0.25}), g), doctest::Contains("holds -0.25"), weft::Error);
  CHECK_THROWS_WITH_AS(weft::bernoulli(weft::from_vector<double>({NAN}), g), doctest::Contains("holds nan"), weft::Error);
  CHECK_THROWS_WITH_AS(weft::bernoulli<float>(Shape{3}, 1.01, g),
                       doctest::Contains("weft::bernoulli: expects p in [0, 1], but got p = 1.01"), weft::Error);
  CHECK(g.offset() == before);
}

TEST_CASE("multinomial with replacement: category frequencies match the normalized weights (chi-square)") {
  const std::uint64_t s = seed() ^ 0x3a;
  INFO("random seed ", s);
  weft::Generator g(s);
  // Two rows, unnormalized weights with zeros (never drawn).
  const std::vector<double> w0{0, 1, 2, 3, 0, 4}, w1{5, 0, 0, 1, 1, 3};
  std::vector<float> flat(w0.begin(), w0.end());
  flat.insert(flat.end(), w1.begin(), w1.end());
  const Tensor<float> probs = weft::from_vector<float>(flat, Shape{2, 6});
  const std::int64_t draws = 60000;
  const Tensor<std::int64_t> out = weft::multinomial(probs, draws, /*replacement=*/true, g);
  REQUIRE(out.shape() == Shape{2, draws});
  const auto v = out.to_vector();
  for (int r = 0; r < 2; ++r) {
    const std::vector<double>& w = r == 0 ? w0 : w1;
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    std::vector<double> counts(6, 0.0);
    for (std::int64_t j = 0; j < draws; ++j) {
      const std::int64_t k = v[std::size_t(r * draws + j)];
      REQUIRE((k >= 0 && k < 6));
      counts[std::size_t(k)] += 1;
    }
    std::vector<double> observed, expected;
    for (std::size_t k = 0; k < 6; ++k) {
      if (w[k] == 0) {
        CHECK(counts[k] == 0);
        continue;
      }
      observed.push_back(counts[k]);
      expected.push_back(double(draws) * w[k] / total);
    }
    CHECK(chi_square_z(chi_square(observed, expected), double(observed.size() - 1)) < 5);
  }
  // 1-D weights give a 1-D result.
  CHECK(weft::multinomial(weft::from_vector<double>({1, 2}), 5, true, g).shape() == Shape{5});
}

TEST_CASE("multinomial without replacement: ordered pairs and inclusion match successive draws exactly") {
  // Successive draws without replacement: P(first = i, second = j) = w_i / W * w_j / (W - w_i);
  // k's inclusion probability is the sum over the pairs that hold k.
  const std::uint64_t s = seed() ^ 0x3b;
  INFO("random seed ", s);
  weft::Generator g(s);
  const std::vector<double> w{1, 2, 0, 3, 4};
  const double total = 10;
  const std::int64_t rows = 40000;
  std::vector<float> flat;
  for (std::int64_t r = 0; r < rows; ++r) flat.insert(flat.end(), w.begin(), w.end());
  const auto v = weft::multinomial(weft::from_vector<float>(flat, Shape{rows, 5}), 2, /*replacement=*/false, g).to_vector();
  std::map<std::pair<std::int64_t, std::int64_t>, double> pairs;
  std::vector<double> included(5, 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t a = v[std::size_t(2 * r)], b = v[std::size_t(2 * r + 1)];
    REQUIRE(a != b);
    REQUIRE((w[std::size_t(a)] > 0 && w[std::size_t(b)] > 0));
    pairs[{a, b}] += 1;
    included[std::size_t(a)] += 1;
    included[std::size_t(b)] += 1;
  }
  std::vector<double> observed, expected, inclusion(5, 0.0);
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 5; ++j) {
      if (i == j || w[i] == 0 || w[j] == 0) continue;
      const double pij = w[i] / total * w[j] / (total - w[i]);
      observed.push_back(pairs[{std::int64_t(i), std::int64_t(j)}]);
      expected.push_back(double(rows) * pij);
      inclusion[i] += pij;
      inclusion[j] += pij;
    }
  CHECK(chi_square_z(chi_square(observed, expected), double(observed.size() - 1)) < 5);
  for (std::size_t k = 0; k < 5; ++k) {
    INFO("category ", k, " inclusion ", inclusion[k]);
    CHECK(std::fabs(included[k] - double(rows) * inclusion[k]) <= 5 * std::sqrt(double(rows) * inclusion[k] * (1 - inclusion[k])));
  }
  // As many samples as nonzero weights: each positive category exactly once.
  auto all = weft::multinomial(weft::from_vector<double>(w), 4, false, g).to_vector();
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::int64_t>{0, 1, 3, 4});
}

TEST_CASE("multinomial: torch's errors, before anything is drawn") {
  weft::Generator g(5);
  const auto ok = weft::from_vector<float>({1, 2, 3, 0});
  auto refuses = [&](auto call, const char* message) {
    CHECK_THROWS_WITH_AS(call(), doctest::Contains(message), weft::Error);
    CHECK(g.offset() == 0);
  };
  refuses([&] { return weft::multinomial(weft::from_vector<float>({1, -2}), 1, true, g); },
          "weft::multinomial: probs [2] holds -2 in row 0 at 1; weights must be finite and >= 0");
  refuses([&] { return weft::multinomial(weft::from_vector<float>({1, NAN}), 1, true, g); }, "holds nan in row 0 at 1");
  refuses([&] { return weft::multinomial(weft::from_vector<float>({1, INFINITY}), 1, true, g); }, "holds inf in row 0 at 1");
  refuses([&] { return weft::multinomial(weft::from_vector<float>({1, 1, 0, 0}, Shape{2, 2}), 1, true, g); },
          "weft::multinomial: row 1 of probs [2, 2] sums to 0");
  refuses([&] { return weft::multinomial(ok, 0, true, g); }, "cannot sample num_samples = 0 <= 0 samples");
  refuses([&] { return weft::multinomial(ok, 5, false, g); }, "cannot sample num_samples = 5 > 4 categories of probs [4] without replacement");
  refuses([&] { return weft::multinomial(ok, 4, false, g); }, "row 0 of probs [4] has 3 nonzero weights, fewer than num_samples = 4");
  refuses([&] { return weft::multinomial(weft::ones<float>(Shape{2, 2, 2}), 1, true, g); },
          "weft::multinomial: probs must be 1-D [n] or 2-D [rows, n], got shape [2, 2, 2]");
  refuses([&] { return weft::multinomial(weft::ones<float>(Shape{3, 0}), 1, true, g); }, "probs [3, 0] has no categories");
  CHECK(weft::multinomial(ok, 7, true, g).shape() == Shape{7});  // with replacement: more samples than categories
}

TEST_CASE("randperm: a permutation, uniform over the n! orders (chi-square)") {
  const std::uint64_t s = seed() ^ 0x9e;
  INFO("random seed ", s);
  weft::Generator g(s);
  auto p = weft::randperm(1000, g).to_vector();
  std::vector<std::int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  CHECK(sorted == iota);
  CHECK(p != iota);
  // All 24 orders of 4 elements, 24000 permutations.
  std::map<std::vector<std::int64_t>, double> seen;
  const int trials = 24000;
  for (int t = 0; t < trials; ++t) seen[weft::randperm(4, g).to_vector()] += 1;
  CHECK(seen.size() == 24);
  std::vector<double> observed;
  for (const auto& [order, count] : seen) observed.push_back(count);
  CHECK(chi_square_z(chi_square(observed, std::vector<double>(24, trials / 24.0)), 23) < 5);
  CHECK(weft::randperm(0, g).shape() == Shape{0});
  const std::uint64_t before = g.offset();
  CHECK_THROWS_WITH_AS(weft::randperm(-1, g), doctest::Contains("weft::randperm: needs n >= 0, got n = -1"), weft::Error);
  CHECK(g.offset() == before);
}

TEST_CASE("random ops: the same values for 1 and 2 threads, and on replay after manual_seed") {
  ThreadCountGuard guard;
  const std::uint64_t s = seed() ^ 0x77;
  INFO("random seed ", s);
  WEFT_TEST_RNG(rng);
  const Tensor<float> probs = weights<float>(rng, Shape{64, 5000}, 0, 1);
  auto draw_all = [&] {
    weft::manual_seed(s);
    std::vector<std::vector<double>> out;
    out.push_back(values_of(weft::rand<float>(Shape{300, 700})));  // above the parallel threshold
    out.push_back(values_of(weft::randn<double>(Shape{200000})));
    out.push_back(values_of(weft::bernoulli(probs)));
    out.push_back(values_of(weft::multinomial(probs, 3)));
    out.push_back(values_of(weft::multinomial(probs, 50, true)));
    out.push_back(values_of(weft::randperm(100000)));
    Tensor<double> t = weft::empty<double>(Shape{500, 300});
    weft::normal_(t.transpose(0, 1), 1.0, 3.0);
    out.push_back(values_of(t));
    return out;
  };
  weft::set_num_threads(1);
  const auto one = draw_all();
  weft::set_num_threads(2);
  const auto two = draw_all();
  for (std::size_t k = 0; k < one.size(); ++k) {
    INFO("draw ", k);
    CHECK(one[k] == two[k]);
  }
  CHECK(one[0] != values_of(weft::rand<float>(Shape{300, 700})));  // the generator moved on
  // Strided operands are read through their strides: the values of a contiguous copy (a seed as
  // the source: a fresh Generator each call).
  const TensorView<const float> pt = probs.slice(1, 0, 64).transpose(0, 1);  // [64, 64], strided
  const Tensor<float> pc = pt.clone();
  CHECK(values_of(weft::multinomial(pt, 5, false, s)) == values_of(weft::multinomial(pc, 5, false, s)));
  CHECK(values_of(weft::multinomial(pt, 5, true, s)) == values_of(weft::multinomial(pc, 5, true, s)));
  CHECK(values_of(weft::bernoulli(pt, s)) == values_of(weft::bernoulli(pc, s)));
}

TEST_CASE("multinomial over LLM-sized rows: one sample from each of 64 rows of 50257 weights") {
  // Not a timing test: the time is printed for the record; the samples are checked to be
  // categories with positive weight, drawn in proportion (the top-weight half gets most).
  WEFT_TEST_RNG(rng);
  const std::int64_t rows = 64, n = 50257;
  std::vector<float> w(std::size_t(rows * n));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = float(std::exp(rng.uniform(-12, 0)));
  for (std::size_t i = 0; i < w.size(); i += 3) w[i] = 0;
  const Tensor<float> probs = weft::from_vector<float>(w, Shape{rows, n});
  weft::Generator g(seed());
  for (bool replacement : {true, false}) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto v = weft::multinomial(probs, 1, replacement, g).to_vector();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE("multinomial [64, 50257] -> 1 sample a row, replacement = ", replacement, ": ", ms, " ms");
    for (std::int64_t r = 0; r < rows; ++r) CHECK(w[std::size_t(r * n + v[std::size_t(r)])] > 0);
  }
}

}  // TEST_SUITE
