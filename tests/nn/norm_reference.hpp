// SPDX-License-Identifier: MIT
/// @file Double-precision references of the normalization ops (batch_norm, group_norm) with their error bounds, and their [N, C, *] inputs in either memory layout.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include <doctest/doctest.h>

#include "reference.hpp"

namespace weft_test {

/// An [N, C, *] input of random values in offset +- 2 (so that the mean matters), contiguous or
/// channels-last: the same shape over NHWC memory, a permuted view.
template <class T>
TensorView<T> channel_input(Rng& rng, const Shape& s, bool channels_last, double offset) {
  Domain d;
  d.lo = offset - 2, d.hi = offset + 2;
  if (!channels_last || s.rank() < 3) return random_contiguous<T>(rng, s, d);
  std::vector<std::int64_t> nhwc{s[0]}, to_nchw{0, s.rank() - 1};
  for (int k = 2; k < s.rank(); ++k) nhwc.push_back(s[k]), to_nchw.push_back(k - 1);
  nhwc.push_back(s[1]);
  return TensorView<T>(random_contiguous<T>(rng, Shape(nhwc), d)).permute(to_nchw);
}

/// The statistics of one set of values normalized together, and their error bounds in a run of
/// precision eps: a sum of M terms errs by up to gamma = (M / 4 + 20) eps relative to the sum of
/// |terms| (a few packet accumulators per thread, then the partial sums), so the mean by dmean =
/// gamma mean|x|; var sums squared deviations from the computed mean, which adds dmean^2 (the
/// cross term sums to zero): var_err = (gamma + 2 eps) var + dmean^2.
struct Moments {
  double mean = 0, var = 0, dmean = 0, var_err = 0;
};

inline Moments moments(const std::vector<double>& v, const std::vector<std::size_t>& set, double eps) {
  const double m = double(set.size()), gamma = (m / 4 + 20) * eps;
  double sum = 0, sum_abs = 0, sq = 0;
  for (std::size_t at : set) sum += v[at], sum_abs += std::fabs(v[at]);
  const double mean = sum / m;
  for (std::size_t at : set) sq += (v[at] - mean) * (v[at] - mean);
  const double var = sq / m, dmean = gamma * sum_abs / m;
  return {mean, var, dmean, (gamma + 2 * eps) * var + dmean * dmean};
}

/// The flat indices (row-major [N, C, S]) of each channel over N and S (batch_norm's sets), or of
/// each sample's group of C / groups channels over S (group_norm's).
inline std::vector<std::vector<std::size_t>> channel_sets(std::int64_t n, std::int64_t c, std::int64_t s) {
  std::vector<std::vector<std::size_t>> sets(static_cast<std::size_t>(c));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t q = 0; q < s; ++q) sets[std::size_t(ch)].push_back(std::size_t((i * c + ch) * s + q));
  return sets;
}
inline std::vector<std::vector<std::size_t>> group_sets(std::int64_t n, std::int64_t c, std::int64_t s,
                                                        std::int64_t groups) {
  std::vector<std::vector<std::size_t>> sets(static_cast<std::size_t>(n * groups));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t q = 0; q < s; ++q)
        sets[std::size_t(i * groups + ch / (c / groups))].push_back(std::size_t((i * c + ch) * s + q));
  return sets;
}

/// What a normalization over `sets` of x [N, C, S] (values xv, gradient dyv) gives, per channel
/// weight w and bias b, with the statistics `stats` (one per set: the sets' own, or constants as
/// batch_norm's running ones in eval, `constant_stats`):
///   y = xhat w + b,  xhat = (x - mean) rstd,  rstd = 1 / sqrt(var + norm_eps),
///   dx = rstd (g - mean(g) - xhat mean(g xhat)) with g = dy w (means over the set), or rstd g
///   with constant statistics; dweight = sum dy xhat, dbias = sum dy per channel.
/// Bounds: the statistics' errors (Moments), the sums' gamma, a few roundings, then T's.
template <class T>
struct NormReference {
  std::vector<Expect> y, dx, dweight, dbias;
};
template <class T>
NormReference<T> norm_reference(const std::vector<double>& xv, const std::vector<double>& dyv,
                                const std::vector<std::vector<std::size_t>>& sets, const std::vector<Moments>& stats,
                                bool constant_stats, std::int64_t c, std::int64_t s, const std::vector<double>& w,
                                const std::vector<double>& b, double norm_eps) {
  constexpr double eps = compute_eps<T>();
  NormReference<T> out{std::vector<Expect>(xv.size()), std::vector<Expect>(xv.size()), {}, {}};
  const std::size_t uc = static_cast<std::size_t>(c);
  std::vector<double> dw(uc, 0.0), dw_abs(uc, 0.0), dw_err(uc, 0.0), db(uc, 0.0), db_abs(uc, 0.0), count(uc, 0.0);
  auto channel = [&](std::size_t at) { return std::size_t((std::int64_t(at) / s) % c); };
  for (std::size_t k = 0; k < sets.size(); ++k) {
    const Moments& st = stats[k];
    const double m = double(sets[k].size()), gamma = (m / 4 + 20) * eps;
    const double rstd = 1 / std::sqrt(st.var + norm_eps), rstd_rel = st.var_err / (2 * (st.var + norm_eps)) + 4 * eps;
    double sg = 0, sgx = 0, sg_abs = 0, sgx_abs = 0;
    for (std::size_t at : sets[k]) {
      const double g = dyv[at] * w[channel(at)], xhat = (xv[at] - st.mean) * rstd;
      sg += g, sgx += g * xhat, sg_abs += std::fabs(g), sgx_abs += std::fabs(g * xhat);
    }
    for (std::size_t at : sets[k]) {
      const std::size_t ch = channel(at);
      const double xhat = (xv[at] - st.mean) * rstd, g = dyv[at] * w[ch];
      // the mean's error moves x - mean; var's moves rstd
      const double xhat_err = st.dmean * rstd + std::fabs(xhat) * rstd_rel;
      Expect& y = out.y[at];
      y.want = xhat * w[ch] + b[ch];
      y.tol = std::fabs(w[ch]) * xhat_err + 4 * eps * (std::fabs(xhat * w[ch]) + std::fabs(b[ch])) + ulp_of<T>(y.want);
      Expect& dx = out.dx[at];
      if (constant_stats) {
        dx.want = rstd * g;
        dx.tol = std::fabs(dx.want) * (rstd_rel + 4 * eps) + ulp_of<T>(dx.want);
      } else {
        dx.want = rstd * (g - sg / m - xhat * sgx / m);
        const double terms = std::fabs(g) + sg_abs / m + std::fabs(xhat) * sgx_abs / m;
        dx.tol = rstd * ((gamma + 2 * rstd_rel + 8 * eps) * terms + st.dmean * rstd * (sgx_abs / m + std::fabs(xhat) * sg_abs / m)) +
                 ulp_of<T>(dx.want);
      }
      dw[ch] += dyv[at] * xhat, dw_abs[ch] += std::fabs(dyv[at] * xhat), dw_err[ch] += std::fabs(dyv[at]) * xhat_err;
      db[ch] += dyv[at], db_abs[ch] += std::fabs(dyv[at]), count[ch] += 1;
    }
  }
  for (std::size_t ch = 0; ch < uc; ++ch) {
    const double gamma = (count[ch] / 4 + 20) * eps;
    out.dweight.push_back({dw[ch], dw_err[ch] + (gamma + 4 * eps) * dw_abs[ch] + ulp_of<T>(dw[ch])});
    out.dbias.push_back({db[ch], gamma * db_abs[ch] + ulp_of<T>(db[ch])});
  }
  return out;
}

/// Checks a backward's gradients (dx, dweight, dbias) against the reference's, every element.
template <class T, class Gradients>
void check_gradients(const Gradients& g, const NormReference<T>& want) {
  const Report rdx = check_output(g.dx, want.dx), rdw = check_output(g.dweight, want.dweight),
               rdb = check_output(g.dbias, want.dbias);
  CHECK_MESSAGE(rdx.ok(), "dx: ", rdx.text);
  CHECK_MESSAGE(rdw.ok(), "dweight: ", rdw.text);
  CHECK_MESSAGE(rdb.ok(), "dbias: ", rdb.text);
}

}  // namespace weft_test
