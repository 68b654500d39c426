// SPDX-License-Identifier: MIT
/// @file Attention in plain double-precision loops (forward and backward, any mask and dropout), the
/// PyTorch golden-file reader, and the error measures the attention tests compare with.
#pragma once

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <weft/core/random.hpp>

#include "reference.hpp"

namespace weft_test {

/// One attention problem with contiguous double inputs: q (B, Hq, L, E), k (B, H, S, E), v (B, H, S, Ev),
/// B the product of the batch dims. `bias(b, h, i, j)`: added to the scaled score (-inf masks);
/// `keep(f)`: the dropout factor of weight f = ((b Hq + h) L + i) S + j (0 or 1 / (1 - p)).
struct AttnProblem {
  std::int64_t B = 1, Hq = 1, H = 1, L = 1, S = 1, E = 1, Ev = 1;
  double scale = 1;
  std::vector<double> q, k, v;
  std::function<double(std::int64_t, std::int64_t, std::int64_t, std::int64_t)> bias;
  std::function<double(std::int64_t)> keep;
};

struct AttnResult {
  std::vector<double> out, lse, dq, dk, dv;
  /// Largest |scale| sum_e |q_e k_e| + |bias| over finite scores: the size of the terms that a
  /// score's rounding errors scale with (its dot product can cancel to far less).
  double max_score_terms = 0;
  double max_dp = 0;  // largest |dP| = |dO_i . v_j keep_ij| (with dout)
};

/// softmax(q k^T scale + bias) (keep) v and, with dout, the gradients, by the textbook formulas:
/// dV = (P keep)^T dO, dP = (dO V^T) keep, dS = P (dP - rowsum(P dP)), dQ = dS K scale, dK = dS^T Q scale.
/// A row whose scores are all -inf gets out 0 and lse +inf (weft's convention).
inline AttnResult attention_reference(const AttnProblem& p, const std::vector<double>* dout = nullptr) {
  const std::int64_t group = p.Hq / p.H;
  AttnResult r;
  r.out.assign(std::size_t(p.B * p.Hq * p.L * p.Ev), 0.0);
  r.lse.assign(std::size_t(p.B * p.Hq * p.L), 0.0);
  if (dout) {
    r.dq.assign(p.q.size(), 0.0);
    r.dk.assign(p.k.size(), 0.0);
    r.dv.assign(p.v.size(), 0.0);
  }
  std::vector<double> s(std::size_t(p.S)), w(std::size_t(p.S)), dp(std::size_t(p.S));
  for (std::int64_t b = 0; b < p.B; ++b)
    for (std::int64_t h = 0; h < p.Hq; ++h) {
      const std::int64_t kvh = b * p.H + h / group;
      for (std::int64_t i = 0; i < p.L; ++i) {
        const std::int64_t row = (b * p.Hq + h) * p.L + i;
        const double* qi = &p.q[std::size_t(row * p.E)];
        double m = -INFINITY;
        for (std::int64_t j = 0; j < p.S; ++j) {
          const double* kj = &p.k[std::size_t((kvh * p.S + j) * p.E)];
          double dot = 0, terms = 0;
          for (std::int64_t e = 0; e < p.E; ++e) dot += qi[e] * kj[e], terms += std::fabs(qi[e] * kj[e]);
          const double bias = p.bias ? p.bias(b, h, i, j) : 0.0;
          s[std::size_t(j)] = dot * p.scale + bias;
          m = std::max(m, s[std::size_t(j)]);
          if (std::isfinite(s[std::size_t(j)]))
            r.max_score_terms = std::max(r.max_score_terms, std::fabs(p.scale) * terms + std::fabs(bias));
        }
        if (m == -INFINITY) {
          r.lse[std::size_t(row)] = INFINITY;
          continue;  // no weights: out and every gradient contribution stay 0
        }
        double sum = 0;
        for (std::int64_t j = 0; j < p.S; ++j) sum += std::exp(s[std::size_t(j)] - m);
        r.lse[std::size_t(row)] = m + std::log(sum);
        for (std::int64_t j = 0; j < p.S; ++j) {
          w[std::size_t(j)] = std::exp(s[std::size_t(j)] - m) / sum;  // P
          const double kept = w[std::size_t(j)] * (p.keep ? p.keep(row * p.S + j) : 1.0);
          const double* vj = &p.v[std::size_t((kvh * p.S + j) * p.Ev)];
          for (std::int64_t e = 0; e < p.Ev; ++e) r.out[std::size_t(row * p.Ev + e)] += kept * vj[e];
        }
        if (!dout) continue;
        const double* doi = &(*dout)[std::size_t(row * p.Ev)];
        double D = 0;
        for (std::int64_t j = 0; j < p.S; ++j) {
          const double* vj = &p.v[std::size_t((kvh * p.S + j) * p.Ev)];
          const double f = p.keep ? p.keep(row * p.S + j) : 1.0;
          double dot = 0;
          for (std::int64_t e = 0; e < p.Ev; ++e) dot += doi[e] * vj[e];
          dp[std::size_t(j)] = dot * f;
          r.max_dp = std::max(r.max_dp, std::fabs(dp[std::size_t(j)]));
          D += w[std::size_t(j)] * dp[std::size_t(j)];
          double* dvj = &r.dv[std::size_t((kvh * p.S + j) * p.Ev)];
          for (std::int64_t e = 0; e < p.Ev; ++e) dvj[e] += w[std::size_t(j)] * f * doi[e];
        }
        for (std::int64_t j = 0; j < p.S; ++j) {
          const double ds = w[std::size_t(j)] * (dp[std::size_t(j)] - D) * p.scale;
          const double* kj = &p.k[std::size_t((kvh * p.S + j) * p.E)];
          double* dkj = &r.dk[std::size_t((kvh * p.S + j) * p.E)];
          for (std::int64_t e = 0; e < p.E; ++e) {
            r.dq[std::size_t(row * p.E + e)] += ds * kj[e];
            dkj[e] += ds * qi[e];
          }
        }
      }
    }
  return r;
}

/// Dropout's factor for weight f, from the Philox stream as documented in backend/attention/dropout.hpp
/// (word f mod 4 of counter f / 4; kept when its top 24 bits / 2^24 >= p).
inline double dropout_factor(std::uint64_t seed, double p, std::int64_t f) {
  const weft::detail::random::Philox4x32 r(seed, std::uint64_t(f) >> 2);
  const double u = double(r.w[std::uint64_t(f) & 3] >> 8) * 0x1p-24;
  return u >= p ? 1 / (1 - p) : 0.0;
}

/// Largest |a - b| over two vectors, treating equal infinities as 0 apart.
inline double max_abs_error(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    const double d = std::fabs(a[i] - b[i]);
    m = std::max(m, std::isnan(d) ? INFINITY : d);
  }
  return m;
}

/// One golden case written by tests/golden/make_sdpa_golden.py: options as text, tensors as
/// (shape, values) in double (bool masks as 0/1).
struct GoldenCase {
  std::string name, dtype, causal = "none", scale = "default";
  bool enable_gqa = false;
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<double>>> tensors;
  std::map<std::string, std::string> kinds;

  bool has(const std::string& t) const { return tensors.count(t) != 0; }
  const std::vector<double>& values(const std::string& t) const { return tensors.at(t).second; }
  Shape shape(const std::string& t) const {
    const auto& d = tensors.at(t).first;
    return Shape(d.begin(), d.end());
  }
};

/// Reads a golden file; a malformed one fails the test with its name.
inline GoldenCase read_golden(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open golden file ", path);
  GoldenCase g;
  std::string line;
  bool ended = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key == "case") ls >> g.name;
    else if (key == "dtype") ls >> g.dtype;
    else if (key == "causal") ls >> g.causal;
    else if (key == "scale") ls >> g.scale;
    else if (key == "enable_gqa") ls >> g.enable_gqa;
    else if (key == "end") ended = true;
    else if (key == "tensor") {
      std::string name, kind;
      int rank = 0;
      ls >> name >> kind >> rank;
      std::vector<std::int64_t> dims(static_cast<std::size_t>(rank));
      std::int64_t n = 1;
      for (auto& d : dims) ls >> d, n *= d;
      std::string values;
      std::getline(in, values);
      std::istringstream vs(values);
      std::vector<double> v(static_cast<std::size_t>(n));
      for (auto& x : v) {
        std::string tok;
        vs >> tok;
        x = tok == "inf" ? INFINITY : tok == "-inf" ? -INFINITY : std::stod(tok);
      }
      REQUIRE_MESSAGE(!vs.fail(), "golden ", path, ": tensor ", name, " has fewer than ", n, " values");
      g.tensors[name] = {dims, v};
      g.kinds[name] = kind;
    } else {
      FAIL("golden ", path, ": unknown line '", line, "'");
    }
  }
  REQUIRE_MESSAGE(ended, "golden ", path, " has no 'end' line (truncated?)");
  return g;
}

}  // namespace weft_test
