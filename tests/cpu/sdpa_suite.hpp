// SPDX-License-Identifier: MIT
/// @file What the attention tests share: tensors from double values, the naive same-precision run, and
/// FlashAttention's test rule (error <= 2x the error of a naive same-precision implementation).
#pragma once

#include <weft/nn/sdpa.hpp>

#include "sdpa_reference.hpp"

namespace weft_test {

namespace nn = weft::nn;

/// A tensor of T holding `values` (already representable in T) with `shape`.
template <class T>
Tensor<T> tensor_of(const std::vector<double>& values, const Shape& shape) {
  std::vector<T> v(values.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = T(values[i]);
  return weft::from_vector<T>(v, shape);
}

/// `n` standard-normal values rounded to T (so the double reference sees exactly T's inputs).
template <class T>
std::vector<double> random_values(Rng& rng, std::int64_t n) {
  std::normal_distribution<double> normal;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = round_to<T>(normal(rng.gen));
  return v;
}

/// Attention computed by weft's math backend in T itself, every step rounded to T (matmul,
/// scale, softmax, matmul): the naive same-precision implementation whose error sets the bar.
template <class T>
struct NaiveRun {
  std::vector<double> out, lse, dq, dk, dv;
};

template <class T>
NaiveRun<T> naive_run(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const Tensor<T>& dout,
                      const nn::SdpaOptions& o) {
  namespace d = nn::detail;
  const auto s = d::sdpa_shape("naive", q.shape(), k.shape(), v.shape(), o);
  const auto st = d::sdpa_math_forward<T>(d::sdpa_rows(q), d::sdpa_rows(k), d::sdpa_rows(v),
                                          d::sdpa_bias<weft::math_t<T>>(o.attn_mask, s), s);
  const auto g = d::sdpa_math_backward<T>(d::sdpa_rows(dout), st, s);
  auto doubles = [](const auto& x) { return std::vector<double>(x.begin(), x.end()); };
  return {doubles(st.out), doubles(st.lse), doubles(g.dq), doubles(g.dk), doubles(g.dv)};
}

/// FlashAttention's rule: |got - ref| <= 2 |naive - ref| (max over elements) plus a floor of
/// 4 roundings of T at the largest |ref| (a naive run that happens to be exact must not demand
/// exactness). Infinities must match exactly (lse of rows that see no key).
template <class T>
void check_rule(const char* what, const std::vector<double>& got, const std::vector<double>& naive,
                const std::vector<double>& ref) {
  REQUIRE(got.size() == ref.size());
  double scale = 0;
  for (double r : ref)
    if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::isinf(ref[i])) REQUIRE_MESSAGE(got[i] == ref[i], what, "[", i, "] = ", got[i], ", want ", ref[i]);
  const double err = max_abs_error(got, ref), naive_err = max_abs_error(naive, ref);
  const double bound = 2 * naive_err + 4 * eps_of<T>() * std::max(scale, 1.0);
  INFO(std::string(what), ": error ", err, ", naive ", std::string(type_name<T>()), " error ", naive_err, ", bound ", bound);
  CHECK(err <= bound);
}

}  // namespace weft_test

namespace weft_test {

/// tests/golden/sdpa, found from this source file's path (or $WEFT_SDPA_GOLDEN_DIR).
inline std::string sdpa_golden_dir() {
  if (const char* env = std::getenv("WEFT_SDPA_GOLDEN_DIR"); env && *env) return env;
  std::string file = __FILE__;  // .../tests/cpu/sdpa_suite.hpp
  return file.substr(0, file.rfind('/')) + "/../golden/sdpa";
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

/// Runs one golden case in T: flash (forward and backward) and the math backend against
/// PyTorch's float64 results by the 2x-naive rule; the double reference of sdpa_reference.hpp
/// against PyTorch to 1e-12 (both read the options the same way).
template <class T>
void check_golden(const GoldenCase& g) {
  INFO("golden case ", g.name, " (", g.dtype, ")");
  using Acc = weft::math_t<T>;
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
    check_rule<Acc>("lse", values_of(f.lse), naive.lse, lse_want);
    const nn::SdpaGradients<T> gr = nn::sdpa_backward(dout, q, k, v, f.out, f.lse, o);
    check_rule<T>("dq", values_of(gr.dq), naive.dq, g.values("dq"));
    check_rule<T>("dk", values_of(gr.dk), naive.dk, g.values("dk"));
    check_rule<T>("dv", values_of(gr.dv), naive.dv, g.values("dv"));
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

}  // namespace weft_test
