// SPDX-License-Identifier: MIT
/// @file cpu: float32 flash attention gradients on peaked softmax rows (one key holding most of a row's weight) within 2x a naive float run's error, with no allowance for flash's D = rowsum(dO out).
///
/// On such a row dS = p (dP - D) cancels to ~(1 - p) dP. A naive run computes D = sum_k p_k dP_k
/// from its own dP, so the rounding they share cancels; flash's D (a sum over out) and dP (a GEMM)
/// round apart, and before dominant_ds (backend/cpu/attention/flash.hpp) dq and dk measured 3-7x a
/// naive run's error on problems like these (the random cases of sdpa_suite.hpp allow that term).
#include "sdpa_suite.hpp"

using namespace weft_test;

namespace {

/// One problem whose rows are mostly dominated by one key: a float mask that adds 6-10 to one
/// random key of each row (the rest in [-1, 1]), so p ~ 1 - S e^-6 there, with scores q k scale of
/// order 1 (larger ones round to eps |q k|, an error in every weight that would set the bound
/// instead, see exponent_error in sdpa_suite.hpp); or sparse bool masks and causal
/// rows, where some rows see a single key (p = 1, the true dS is 0). Small shapes, L != S, GQA.
/// Returns the largest of dq, dk and dv's error / (2 naive error + 8 eps max(|ref|, 1)), the
/// 2x-naive rule of sdpa_rule.hpp (check_rule), and checks that it is at most 2.
double check_peaked_case(Rng& rng) {
  // No single query: a naive run then takes Eigen's GEMV path, whose differently split sums made
  // its dq and dk 3-6x more accurate than flash's by luck in ~1 case in 400 (the float scores'
  // rounding, not D: the rows' other weights carry it).
  static const std::int64_t queries[] = {5, 17, 40, 70}, keys[] = {1, 5, 17, 40, 70};
  static const std::int64_t dims[] = {16, 32, 64};
  const std::int64_t L = rng.pick(queries), S = rng.pick(keys), E = rng.pick(dims);
  const std::int64_t Ev = rng.chance(0.7) ? E : rng.pick(dims);
  const std::int64_t H = rng.integer(1, 2);
  nn::SdpaOptions o;
  std::int64_t Hq = H;
  if (rng.chance(0.4)) o.enable_gqa = true, Hq = H * rng.integer(2, 3);
  const Shape qs{1, Hq, L, E}, ks{1, H, S, E}, vs{1, H, S, Ev}, os{1, Hq, L, Ev}, ss{1, Hq, L, S};
  const std::vector<double> qv = random_values<float>(rng, qs.numel()), kv = random_values<float>(rng, ks.numel()),
                            vv = random_values<float>(rng, vs.numel()), dv = random_values<float>(rng, os.numel());
  AttnProblem p;
  p.Hq = Hq, p.H = H, p.L = L, p.S = S, p.E = E, p.Ev = Ev;
  p.scale = rng.uniform(0.5, 1.0) / std::sqrt(double(E));
  o.scale = p.scale;
  p.q = qv, p.k = kv, p.v = vv;
  const double pick = rng.uniform(0, 1);
  const int kind = pick < 0.7 ? 0 : pick < 0.85 ? 1 : 2;  // peaked float mask, sparse bool mask, causal
  if (kind == 2) {
    o.is_causal = true;
    const bool lower_right = rng.chance(0.5);
    if (lower_right) o.causal_variant = nn::CausalVariant::lower_right;
    const std::int64_t off = lower_right ? S - L : 0;
    p.bias = [off](std::int64_t, std::int64_t, std::int64_t i, std::int64_t j) { return j <= i + off ? 0.0 : -INFINITY; };
  } else {
    std::vector<double> mv(std::size_t(ss.numel()));
    for (std::int64_t row = 0; row < Hq * L; ++row) {
      double* m = mv.data() + row * S;
      for (std::int64_t j = 0; j < S; ++j) m[j] = kind == 1 ? double(rng.chance(0.15)) : round_to<float>(rng.uniform(-1, 1));
      if (kind == 0) m[rng.integer(0, S - 1)] = round_to<float>(rng.uniform(6, 10));
    }
    if (kind == 1) {
      Tensor<bool> m = weft::empty<bool>(ss);
      for (std::size_t i = 0; i < mv.size(); ++i) m.data()[i] = mv[i] != 0;
      o.attn_mask = m;
    } else {
      o.attn_mask = tensor_of<float>(mv, ss);
    }
    p.bias = [=](std::int64_t, std::int64_t h, std::int64_t i, std::int64_t j) {
      const double x = mv[std::size_t((h * L + i) * S + j)];
      return kind == 1 ? (x != 0 ? 0.0 : -INFINITY) : x;
    };
  }
  const Tensor<float> q = tensor_of<float>(qv, qs), k = tensor_of<float>(kv, ks), v = tensor_of<float>(vv, vs),
                      dout = tensor_of<float>(dv, os);
  INFO("q ", shape_str(qs), " k ", shape_str(ks), " v ", shape_str(vs), ", kind ", kind, ", scale ", p.scale);
  const AttnResult ref = attention_reference(p, &dv);
  const NaiveRun<float> naive = naive_run(q, k, v, dout, o);
  nn::SdpaBackendGuard guard({nn::SdpaBackend::flash});
  const nn::SdpaOutput<float> f = nn::sdpa_forward(q, k, v, o);
  const nn::SdpaGradients<float> g = nn::sdpa_backward(dout, q, k, v, f.out, f.lse, o);
  const char* names[] = {"dq", "dk", "dv"};
  const std::vector<double> got[] = {values_of(g.dq), values_of(g.dk), values_of(g.dv)};
  const std::vector<double>* want[] = {&ref.dq, &ref.dk, &ref.dv};
  const std::vector<double>* naive_got[] = {&naive.dq, &naive.dk, &naive.dv};
  double worst = 0;
  for (int t = 0; t < 3; ++t) {
    const double err = max_abs_error(got[t], *want[t]), naive_err = max_abs_error(*naive_got[t], *want[t]);
    const double ratio = err / (2 * naive_err + 8 * eps_of<float>() * std::max(max_magnitude(*want[t]), 1.0));
    INFO(names[t], ": error ", err, ", naive float32 error ", naive_err, ", error / 2x-naive bound ", ratio);
    CHECK(ratio <= 2);
    worst = std::max(worst, ratio);
  }
  return worst;
}

}  // namespace

TEST_SUITE("cpu") {

// The rule's max errors are noise on problems this small: with dominant_ds, 1 case in ~1300
// still measured 1.0-1.5x the bound (a naive run lucky in its scores' rounding); without it, 1 in
// ~30 did, up to 3.5x. Hence at most two cases of 100 beyond the rule (three at 1 in 1300: about
// 1 run in 10^5; two came up once, WEFT_TEST_SEED=7723444337733568485 under the sanitizers),
// none beyond twice it; the code before dominant_ds had about 3 beyond the rule per 100.
TEST_CASE("sdpa: float32 flash gradients on peaked rows within 2x a naive float run") {
  WEFT_TEST_RNG(rng);
  int beyond = 0;
  for (int iter = 0; iter < 100; ++iter) beyond += check_peaked_case(rng) > 1;
  CHECK(beyond <= 2);
}

}
