// SPDX-License-Identifier: MIT
/// @file What the cpu suite's attention tests share: golden files, the exponent-rounding floors and
/// the random-case check, on top of sdpa_rule.hpp (the naive run and FlashAttention's 2x rule).
#pragma once

#include <unistd.h>

#include <optional>

#include "sdpa_rule.hpp"

namespace weft_test {

/// tests/golden/sdpa: $WEFT_SDPA_GOLDEN_DIR, else found from this header's path as the compiler saw
/// it (absolute, or relative to the build directory, which is the test executable's directory or
/// one of its parents).
inline std::string sdpa_golden_dir() {
  if (const char* env = std::getenv("WEFT_SDPA_GOLDEN_DIR"); env && *env) return env;
  const std::string file = __FILE__;  // .../tests/nn/sdpa_suite.hpp
  const std::string rel = file.substr(0, file.rfind('/') + 1) + "../golden/sdpa";
  std::vector<std::string> bases = {""};
  if (rel[0] != '/') {
    char exe[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    std::string dir = n > 0 ? std::string(exe, std::size_t(n)) : std::string();
    for (int up = 0; up < 4 && dir.rfind('/') != std::string::npos; ++up)
      dir = dir.substr(0, dir.rfind('/')), bases.push_back(dir + "/");
  }
  for (const std::string& b : bases)
    if (std::ifstream(b + rel + "/basic_f32.txt").good()) return b + rel;
  return rel;  // read_golden reports the missing file
}

/// The golden cases' file names (without .txt), as the generator writes them.
inline const std::vector<std::string>& sdpa_golden_names() {
  static const std::vector<std::string> names = {
      "basic_f32",           "basic_f64_rank5",           "causal_upper_left_L_lt_S", "causal_upper_left_L_gt_S",
      "causal_lower_right_L_lt_S", "causal_lower_right_L_gt_S", "mask_bool_broadcast", "mask_float_broadcast",
      "gqa",                 "gqa_causal_lower_right",    "custom_scale",            "ev_ne_e",
      "half_causal",         "bfloat16_mask",             "long_blocks"};
  return names;
}

/// The rounding error of flash's exponents, relative to a weight: each weight is 2^(s - m) of a
/// score computed in the compute precision (a dot product, scaled, shifted in log2 units), whose
/// error is ~eps times the size of its terms X = |scale| sum_e |q_e k_e| + |bias| (the dot can
/// cancel to far less); s - m and lse = m + log l carry up to twice that: eps (2 max X + log S).
/// A naive run rounds each score once and can be far more accurate by luck: flash measured 4-20x
/// a naive float32 run on large scores (E = 130, custom scales 0.6-0.9), failing the 2x-naive rule
/// in 1-2% of random cases (WEFT_TEST_SEED=4756474071414738112 is one), and in float64 the naive
/// run computes in the reference's own precision (no yardstick at all). These floors bound it.
template <class T>
double exponent_error(const AttnProblem& p, const AttnResult& ref) {
  return eps_of<weft::math_t<T>>() * (2 * ref.max_score_terms + std::log(std::max(double(p.S), 1.0)));
}

inline double max_magnitude(const std::vector<double>& x) {
  double most = 0;
  for (double v : x) most = std::max(most, std::fabs(v));
  return most;
}

/// The largest dropout factor: 1 / (1 - p) for a kept weight.
inline double max_keep(double dropout_p) { return dropout_p > 0 ? 1 / (1 - dropout_p) : 1.0; }

/// out = sum_j p_j keep_j v_j: off by up to exponent_error max|v keep|.
template <class T>
double output_floor(const AttnProblem& p, const AttnResult& ref, double dropout_p) {
  return exponent_error<T>(p, ref) * max_magnitude(p.v) * max_keep(dropout_p);
}

/// FlashAttention-2's backward uses D = rowsum(dO out) with out rounded to T, where a naive run
/// uses rowsum(dP p) from its own weights: D is off by ~eps sum_e |dO_e out_e|, and every
/// dS = p (dP - D) of the row with it. That term is the whole error where the true gradient is
/// ~0 (one key: p = 1 and dS = 0 exactly in a naive run). Returns the extra bounds for dq
/// (scale max|k| dD per query) and dk (scale max|q| dD summed over up to L Hq/H queries, as a
/// random walk), both 4x that, from the reference's out.
///
/// Flash also recomputes p = exp(scale s - lse) from the forward's lse, each off by a factor
/// 1 + exponent_error (above): dV = sum_i p_i dO_i is off by up to that times max|dO| per query,
/// summed over the L Hq/H queries of a key head (a random walk); dQ = scale sum_j dS_j k_j with
/// dS = p (dP - D) by that times 2 max|dP| scale max|k| (dK alike with max|q|, per query).
struct GradientFloors {
  double dq = 0, dk = 0, dv = 0;
};
template <class T>
GradientFloors gradient_floors(const AttnProblem& p, const AttnResult& ref, const std::vector<double>& dout,
                               double dropout_p) {
  double dD = 0;
  for (std::int64_t row = 0; row < p.B * p.Hq * p.L; ++row) {
    double sum = 0;
    for (std::int64_t e = 0; e < p.Ev; ++e)
      sum += std::fabs(dout[std::size_t(row * p.Ev + e)] * ref.out[std::size_t(row * p.Ev + e)]);
    dD = std::max(dD, eps_of<T>() * sum);
  }
  const double qmax = max_magnitude(p.q), kmax = max_magnitude(p.k);
  const double queries = double(p.L * (p.Hq / p.H));
  const double exponent = exponent_error<T>(p, ref), ds = exponent * 2 * ref.max_dp * std::fabs(p.scale);
  return {4 * p.scale * kmax * dD + ds * kmax, (4 * p.scale * qmax * dD + ds * qmax) * std::sqrt(queries),
          exponent * max_magnitude(dout) * max_keep(dropout_p) * std::sqrt(queries)};
}

/// Runs one golden case in T: flash (forward and backward) and the math backend against
/// PyTorch's float64 results by the 2x-naive rule; the double reference of sdpa_reference.hpp
/// against PyTorch to 1e-12 (both read the options the same way).
template <class T>
void check_golden(const GoldenCase& g) {
  INFO("golden case ", g.name, " (", g.dtype, ")");
  const Tensor<T> q = tensor_of<T>(g.values("q"), g.shape("q")), k = tensor_of<T>(g.values("k"), g.shape("k")),
                  v = tensor_of<T>(g.values("v"), g.shape("v")), dout = tensor_of<T>(g.values("dout"), g.shape("dout"));
  nn::SdpaOptions o;
  o.is_causal = g.causal != "none";
  if (g.causal == "lower_right") o.causal_variant = nn::CausalVariant::lower_right;
  if (g.scale != "default") o.scale = std::stod(g.scale);
  o.enable_gqa = g.enable_gqa;
  if (g.has("mask_bool")) {
    std::vector<bool> bits;
    for (double x : g.values("mask_bool")) bits.push_back(x != 0);
    Tensor<bool> m = weft::empty<bool>(g.shape("mask_bool"));
    for (std::size_t i = 0; i < bits.size(); ++i) m.data()[i] = bits[i];
    o.attn_mask = m;
  } else if (g.has("mask_float")) {
    o.attn_mask = tensor_of<T>(g.values("mask_float"), g.shape("mask_float"));
  }
  std::vector<double> lse_want = g.values("lse");
  for (double& x : lse_want)
    if (x == -INFINITY) x = INFINITY;  // weft's convention for a row that sees no key

  // The double reference reads the same options: it must agree with PyTorch.
  const int r = q.dim();
  AttnProblem p;
  p.L = q.shape()[r - 2], p.E = q.shape()[r - 1], p.S = k.shape()[r - 2], p.Ev = v.shape()[r - 1];
  p.Hq = q.shape()[r - 3], p.H = k.shape()[r - 3], p.B = q.numel() / (p.Hq * p.L * std::max<std::int64_t>(p.E, 1));
  p.scale = o.scale ? *o.scale : 1 / std::sqrt(double(p.E));
  p.q = g.values("q"), p.k = g.values("k"), p.v = g.values("v");
  const std::int64_t L = p.L, S = p.S, Hq = p.Hq;
  if (o.is_causal) {
    const std::int64_t off = g.causal == "lower_right" ? S - L : 0;
    p.bias = [off](std::int64_t, std::int64_t, std::int64_t i, std::int64_t j) { return j <= i + off ? 0.0 : -INFINITY; };
  } else if (g.has("mask_bool") || g.has("mask_float")) {
    const bool is_bool = g.has("mask_bool");
    const std::string name = is_bool ? "mask_bool" : "mask_float";
    const Shape ms = g.shape(name);
    const std::vector<double> mv = g.values(name);
    p.bias = [=](std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
      // Broadcast (b, h, i, j) (b the flattened batch, one batch dim in every golden with a mask) onto the mask's shape.
      const std::int64_t full[4] = {b, h, i, j};
      std::int64_t flat = 0;
      for (int d = 0; d < ms.rank(); ++d) flat = flat * ms[d] + (ms[d] == 1 ? 0 : full[4 - ms.rank() + d]);
      const double x = mv[std::size_t(flat)];
      return is_bool ? (x != 0 ? 0.0 : -INFINITY) : x;
    };
  }
  const std::vector<double> dout_v = g.values("dout");
  const AttnResult ref = attention_reference(p, &dout_v);
  CHECK(max_abs_error(ref.out, g.values("out")) < 1e-12);
  CHECK(max_abs_error(ref.lse, lse_want) < 1e-12);
  CHECK(max_abs_error(ref.dq, g.values("dq")) < 1e-12);
  CHECK(max_abs_error(ref.dk, g.values("dk")) < 1e-12);
  CHECK(max_abs_error(ref.dv, g.values("dv")) < 1e-12);
  (void)Hq;

  const NaiveRun<T> naive = naive_run(q, k, v, dout, o);
  for (nn::SdpaBackend backend : {nn::SdpaBackend::flash, nn::SdpaBackend::math}) {
    INFO("backend ", std::string(nn::backend_name(backend)));
    nn::SdpaBackendGuard guard({backend});
    const nn::SdpaOutput<T> f = nn::sdpa_forward(q, k, v, o);
    REQUIRE(f.out.shape() == g.shape("out"));
    REQUIRE(f.lse.shape() == g.shape("lse"));
    check_rule<T>("out", values_of(f.out), naive.out, g.values("out"));
    check_rule<weft::math_t<T>>("lse", values_of(f.lse), naive.lse, lse_want);
    const nn::SdpaGradients<T> gr = nn::sdpa_backward(dout, q, k, v, f.out, f.lse, o);
    const GradientFloors floors = gradient_floors<T>(p, ref, dout_v, 0.0);
    check_rule<T>("dq", values_of(gr.dq), naive.dq, g.values("dq"), floors.dq);
    check_rule<T>("dk", values_of(gr.dk), naive.dk, g.values("dk"), floors.dk);
    check_rule<T>("dv", values_of(gr.dv), naive.dv, g.values("dv"), floors.dv);
  }
}

/// Runs every golden case stored in dtype T; returns how many there were.
template <class T>
int check_goldens_of() {
  int ran = 0;
  for (const std::string& name : sdpa_golden_names()) {
    const GoldenCase g = read_golden(sdpa_golden_dir() + "/" + name + ".txt");
    if (g.dtype == type_name<T>()) check_golden<T>(g), ++ran;
  }
  return ran;
}

/// Element `flat` of the row-major `full` shape, read from `values` of a shape that broadcasts to it.
inline double broadcast_value(const std::vector<double>& values, const Shape& from, const Shape& full, std::int64_t flat) {
  std::int64_t at = 0, stride = 1;
  for (int d = full.rank() - 1; d >= 0; --d) {
    const std::int64_t c = flat % full[d];
    flat /= full[d];
    const int fd = d - (full.rank() - from.rank());
    if (fd < 0) continue;
    if (from[fd] != 1) at += c * stride;
    stride *= from[fd];
  }
  return values[std::size_t(at)];
}

/// One random attention problem in T: shapes (any rank 2-5, blocks crossing the kernels' 96),
/// GQA, causal variants, bool or float masks of random broadcast shapes, scale, dropout, and a
/// transposed (head, sequence) layout for q. Flash and math, forward and backward, are checked
/// against attention_reference by the 2x-naive rule.
/// Sizes that check_random_case takes instead of drawing them: rank 3, one key/value head and one
/// or two query heads (the cost of a case grows with its heads); the rest stays random.
struct CaseSizes {
  std::int64_t L, S, E, Ev;
};

template <class T>
void check_random_case(Rng& rng, std::optional<CaseSizes> sizes = {}) {
  const int rank = sizes ? 3 : int(rng.integer(2, 5));
  static const std::int64_t lengths[] = {0, 1, 2, 5, 17, 95, 96, 97, 150};
  // Head dims past 64 cross the 64-column panels of the packed K^T, V and the backward's operands
  // (130: two full panels and a 2-column one).
  static const std::int64_t dims[] = {1, 3, 8, 16, 33, 64, 80, 130};
  std::int64_t L = rng.pick(lengths), S = rng.pick(lengths), E = rng.pick(dims);
  std::int64_t Ev = rng.chance(0.5) ? E : rng.pick(dims);
  if (sizes) L = sizes->L, S = sizes->S, E = sizes->E, Ev = sizes->Ev;
  Shape batch;
  for (int d = 0; d < rank - 3; ++d) batch.push_back(rng.integer(1, 2));
  std::int64_t H = 1, Hq = 1;
  nn::SdpaOptions o;
  if (rank >= 3) {
    H = sizes ? 1 : rng.integer(1, 2);
    Hq = H;
    if (rng.chance(0.4)) o.enable_gqa = true, Hq = H * (sizes ? 2 : rng.integer(2, 3));
  }
  // Keep each case around 1e5 multiply-adds per head pair so a run of cases stays fast.
  while (!sizes && batch.numel() * Hq * L * S * std::max(E, Ev) > 400000) (L > S ? L : S) /= 2;
  auto with = [&](std::int64_t heads, std::int64_t rows, std::int64_t cols) {
    Shape sh = batch;
    if (rank >= 3) sh.push_back(heads);
    sh.push_back(rows);
    sh.push_back(cols);
    return sh;
  };
  const Shape qs = with(Hq, L, E), ks = with(H, S, E), vs = with(H, S, Ev), os = with(Hq, L, Ev), ss = with(Hq, L, S);
  const std::vector<double> qv = random_values<T>(rng, qs.numel()), kv = random_values<T>(rng, ks.numel()),
                            vv = random_values<T>(rng, vs.numel()), dv = random_values<T>(rng, os.numel());
  Tensor<T> q = tensor_of<T>(qv, qs);
  if (rank >= 3 && rng.chance(0.5)) {  // the same values, stored as (..., L, Hq, E) and viewed transposed
    Shape t = qs;
    std::swap(t[rank - 3], t[rank - 2]);
    q = tensor_of<T>(values_of(tensor_of<T>(qv, qs).transpose(-3, -2)), t).transpose(-3, -2);
  }
  const Tensor<T> k = tensor_of<T>(kv, ks), v = tensor_of<T>(vv, vs), dout = tensor_of<T>(dv, os);

  AttnProblem p;
  p.B = batch.numel(), p.Hq = Hq, p.H = H, p.L = L, p.S = S, p.E = E, p.Ev = Ev;
  p.scale = 1 / std::sqrt(double(E));
  if (rng.chance(0.3)) o.scale = p.scale = rng.uniform(0.05, 1.0);
  p.q = qv, p.k = kv, p.v = vv;
  const int kind = int(rng.integer(0, 4));  // none, upper_left, lower_right, bool mask, float mask
  std::string what = "no mask";
  if (kind == 1 || kind == 2) {
    o.is_causal = true;
    o.causal_variant = kind == 2 ? nn::CausalVariant::lower_right : nn::CausalVariant::upper_left;
    const std::int64_t off = kind == 2 ? S - L : 0;
    p.bias = [off](std::int64_t, std::int64_t, std::int64_t i, std::int64_t j) { return j <= i + off ? 0.0 : -INFINITY; };
    what = kind == 2 ? "causal lower_right" : "causal upper_left";
  } else if (kind >= 3) {
    const Shape ms = broadcastable_to(rng, ss);
    std::vector<double> mv(std::size_t(ms.numel()));
    for (auto& x : mv) x = kind == 3 ? double(rng.chance(0.7)) : round_to<T>(rng.uniform(-3, 3));
    if (kind == 3) {
      Tensor<bool> m = weft::empty<bool>(ms);
      for (std::size_t i = 0; i < mv.size(); ++i) m.data()[i] = mv[i] != 0;
      o.attn_mask = m;
    } else {
      o.attn_mask = tensor_of<T>(mv, ms);
    }
    p.bias = [=](std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
      const double x = broadcast_value(mv, ms, ss, ((b * Hq + h) * L + i) * S + j);
      return kind == 3 ? (x != 0 ? 0.0 : -INFINITY) : x;
    };
    what = (kind == 3 ? "bool mask " : "float mask ") + shape_str(ms);
  }
  if (rng.chance(0.3)) {
    o.dropout_p = rng.chance(0.5) ? 0.1 : 0.5;
    o.seed = rng.bits();
    p.keep = [seed = o.seed, dp = o.dropout_p](std::int64_t f) { return dropout_factor(seed, dp, f); };
  }
  INFO(type_name<T>(), " q ", shape_str(q.shape()), " k ", shape_str(ks), " v ", shape_str(vs), ", ", what,
       ", gqa ", o.enable_gqa, ", scale ", p.scale, ", dropout ", o.dropout_p, ", q strides ", shape_str(q.strides()));
  const AttnResult ref = attention_reference(p, &dv);
  const NaiveRun<T> naive = naive_run(q, k, v, dout, o);
  for (nn::SdpaBackend backend : {nn::SdpaBackend::flash, nn::SdpaBackend::math}) {
    INFO("backend ", std::string(nn::backend_name(backend)));
    nn::SdpaBackendGuard guard({backend});
    const nn::SdpaOutput<T> f = nn::sdpa_forward(q, k, v, o);
    REQUIRE(f.out.shape() == os);
    check_rule<T>("out", values_of(f.out), naive.out, ref.out, output_floor<T>(p, ref, o.dropout_p));
    check_rule<weft::math_t<T>>("lse", values_of(f.lse), naive.lse, ref.lse, exponent_error<T>(p, ref));
    const nn::SdpaGradients<T> g = nn::sdpa_backward(dout, q, k, v, f.out, f.lse, o);
    REQUIRE(g.dq.shape() == qs);
    REQUIRE(g.dk.shape() == ks);
    REQUIRE(g.dv.shape() == vs);
    const GradientFloors floors = gradient_floors<T>(p, ref, dv, o.dropout_p);
    check_rule<T>("dq", values_of(g.dq), naive.dq, ref.dq, floors.dq);
    check_rule<T>("dk", values_of(g.dk), naive.dk, ref.dk, floors.dk);
    check_rule<T>("dv", values_of(g.dv), naive.dv, ref.dv, floors.dv);
  }
}

}  // namespace weft_test
