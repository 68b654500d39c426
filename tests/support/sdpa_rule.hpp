// SPDX-License-Identifier: MIT
/// @file What the attention tests share: tensors from double values, the naive same-precision run, and
/// FlashAttention's test rule (error <= 2x the error of a naive same-precision implementation).
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <weft/nn/sdpa.hpp>

#include "sdpa_reference.hpp"

namespace weft_test {
inline namespace WEFT_BACKEND_ABI {  // its helpers reach weft's backends (docs/architecture.md, ODR safety)

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

namespace detail {
/// The math backend's forward state in T, and the shape it ran on.
template <class T>
auto naive_forward_state(const weft::TensorBase<T>& q, const weft::TensorBase<T>& k, const weft::TensorBase<T>& v, const nn::SdpaOptions& o) {
  namespace d = nn::detail;
  const auto s = d::sdpa_shape("naive", q.shape(), k.shape(), v.shape(), o);
  return std::pair{d::sdpa_math_forward<T>(d::sdpa_rows(q), d::sdpa_rows(k), d::sdpa_rows(v),
                                           d::sdpa_bias<weft::math_t<T>>(o.attn_mask, s), s),
                   s};
}
inline std::vector<double> doubles(const auto& x) { return std::vector<double>(x.begin(), x.end()); }
}  // namespace detail

/// The naive forward only (out and lse): what a forward-only test needs, without instantiating
/// the math backward.
template <class T>
NaiveRun<T> naive_forward(const weft::TensorBase<T>& q, const weft::TensorBase<T>& k, const weft::TensorBase<T>& v, const nn::SdpaOptions& o) {
  const auto [st, s] = detail::naive_forward_state(q, k, v, o);
  return {detail::doubles(st.out), detail::doubles(st.lse), {}, {}, {}};
}

/// Forward and backward (dout the output's gradient).
template <class T>
NaiveRun<T> naive_run(const weft::TensorBase<T>& q, const weft::TensorBase<T>& k, const weft::TensorBase<T>& v, const weft::TensorBase<T>& dout,
                      const nn::SdpaOptions& o) {
  const auto [st, s] = detail::naive_forward_state(q, k, v, o);
  const auto g = nn::detail::sdpa_math_backward<T>(nn::detail::sdpa_rows(dout), st, s);
  using detail::doubles;
  return {doubles(st.out), doubles(st.lse), doubles(g.dq), doubles(g.dk), doubles(g.dv)};
}

/// FlashAttention's rule: |got - ref| <= 2 |naive - ref| (max over elements) plus a floor of
/// 8 roundings of T at the largest |ref|. The floor matters only for tiny problems (a handful of
/// elements, a softmax over 1-5 keys), where the max error of two differently ordered
/// computations is noise: there a naive run can be exact by luck, and flash's recomputed weights
/// and D = rowsum(dO out) (FlashAttention-2's backward) measured up to 5x a lucky naive run.
/// `extra` adds a term the algorithm has and a naive run does not (D_noise below).
/// Infinities must match exactly (lse of rows that see no key).
template <class T>
void check_rule(const char* what, const std::vector<double>& got, const std::vector<double>& naive,
                const std::vector<double>& ref, double extra = 0) {
  REQUIRE(got.size() == ref.size());
  double scale = 0;
  for (double r : ref)
    if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::isinf(ref[i])) REQUIRE_MESSAGE(got[i] == ref[i], what, "[", i, "] = ", got[i], ", want ", ref[i]);
  const double err = max_abs_error(got, ref), naive_err = max_abs_error(naive, ref);
  const double bound = 2 * naive_err + 8 * eps_of<T>() * std::max(scale, 1.0) + extra;
  INFO(std::string(what), ": error ", err, ", naive ", std::string(type_name<T>()), " error ", naive_err, ", bound ", bound);
  CHECK(err <= bound);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft_test
