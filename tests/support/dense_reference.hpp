// SPDX-License-Identifier: MIT
/// @file Test helpers for reductions and dense ops: double-precision references computed with
/// plain loops over exact element values, and the error bounds the tests compare against.
///
/// The references use no weft code: element values come in as doubles (from reference.hpp's
/// values_of, which decodes raw storage), and outputs are read back the same way.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <weft/core/shape.hpp>
#include <weft/core/storage.hpp>

#include "error_check.hpp"
#include "reference.hpp"

namespace weft_test {

/// The reduced dims of `rank` as a mask (negative dims wrapped; an empty list: all dims).
inline std::vector<bool> reduce_mask(int rank, const std::vector<std::int64_t>& dims) {
  std::vector<bool> mask(std::size_t(rank), dims.empty());
  for (std::int64_t d : dims)
    if (rank > 0) mask[std::size_t(d < 0 ? d + rank : d)] = true;
  return mask;
}

/// The shape a reduction produces.
inline weft::Shape reduced_shape(const weft::Shape& full, const std::vector<bool>& mask, bool keepdim) {
  weft::Shape out;
  for (int d = 0; d < full.rank(); ++d) {
    if (!mask[std::size_t(d)]) out.push_back(full[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

/// Per output (row-major over the kept dims): the values that reduce into it.
/// The input's index is stepped like an odometer and its output's number moved with it (each
/// dim's step in the output: 0 where reduced), with raw pointers: the -O0 sanitizer build spent a
/// quarter of the reduction tests recomputing the number from every dim through vector<bool>.
struct ReductionReference {
  std::vector<std::vector<double>> groups;

  ReductionReference(const std::vector<double>& values, const weft::Shape& full, const std::vector<bool>& mask) {
    const int rank = full.rank();
    const std::size_t dims = std::size_t(rank);
    std::vector<std::int64_t> size(dims), out_step(dims), idx(dims, 0);
    std::int64_t n_out = 1;
    for (int d = rank - 1; d >= 0; --d) {
      size[std::size_t(d)] = full[d];
      out_step[std::size_t(d)] = mask[std::size_t(d)] ? 0 : n_out;
      if (!mask[std::size_t(d)]) n_out *= full[d];
    }
    groups.resize(std::size_t(n_out));
    if (n_out > 0)
      for (auto& g : groups) g.reserve(values.size() / std::size_t(n_out));
    const std::int64_t *sizes = size.data(), *steps = out_step.data();
    std::int64_t* at = idx.data();
    std::vector<double>* out = groups.data();
    std::int64_t o = 0;
    for (const double v : values) {
      out[o].push_back(v);
      for (int d = rank - 1; d >= 0; --d) {
        o += steps[d];
        if (++at[d] < sizes[d]) break;
        o -= steps[d] * sizes[d];
        at[d] = 0;
      }
    }
  }
};

/// The row-major values of a tensor seen as (outer, n, inner) around dim d: element (o, i, c) is
/// values[(o * n + i) * inner + c] (the independent model of an op along one dim).
struct AlongDim {
  std::int64_t outer = 1, n = 1, inner = 1;
  AlongDim(const weft::Shape& shape, int d) {
    for (int k = 0; k < shape.rank(); ++k) (k < d ? outer : k == d ? n : inner) *= shape[k];
  }
  std::size_t at(std::int64_t o, std::int64_t i, std::int64_t c) const { return std::size_t((o * n + i) * inner + c); }
};

/// A random dim of a tensor of rank `rank` (rank 0 takes 0 and -1), sometimes negative, and its
/// wrapped value. Callers copy the members out rather than bind them (`auto [dim, d] = ...`):
/// clang 16 cannot capture a structured binding in a lambda under OpenMP.
struct RandomDim {
  std::int64_t dim;
  int wrapped;
};
inline RandomDim random_dim(Rng& rng, int rank) {
  const std::int64_t r = std::max(rank, 1);
  const std::int64_t dim = rng.integer(-r, r - 1);
  return {dim, int(dim < 0 ? dim + r : dim)};
}

/// Values of few distinct levels, so that rows hold ties: multiples of 1/2 in [-4, 4], or
/// integers in [-5, 5]; floats are NaN at nan_chance.
template <class T>
Domain tie_domain(double nan_chance) {
  Domain d;
  d.grid = 0.5;
  if constexpr (std::is_integral_v<T>) d.lo = -5, d.hi = 5;
  d.nan_chance = nan_chance;
  return d;
}

/// A view that claims to live on a CUDA device (no memory behind it): a g++ translation unit must
/// refuse it before touching it.
template <class T>
weft::TensorView<T> fake_cuda_view(const weft::Shape& shape) {
  auto storage = std::make_shared<weft::Storage>(nullptr, 0, weft::Device::cuda(), nullptr);
  return weft::TensorView<T>(storage, shape, weft::contiguous_strides(shape), 0);
}

/// Runs f, which must throw weft::Error before allocating anything; returns its message.
template <class F>
std::string error_before_allocation(F&& f) {
  const std::int64_t before = weft::detail::tensor_counters().allocations.load();
  std::string m = error_of(f);
  CHECK(weft::detail::tensor_counters().allocations.load() == before);
  return m;
}

/// Sums in double with Neumaier's compensation: error ~ eps * |sum| + n * eps^2 * sum|x|, far
/// below the error of a float64 reduction under test (a plain double loop would not be).
class CompensatedSum {
 public:
  void add(double x) {
    const double t = s_ + x;
    c_ += std::fabs(s_) >= std::fabs(x) ? (s_ - t) + x : (x - t) + s_;
    s_ = t;
  }
  double value() const { return s_ + c_; }

 private:
  double s_ = 0, c_ = 0;
};

inline double ref_sum(const std::vector<double>& v) {
  CompensatedSum s;
  for (double x : v) s.add(x);
  return s.value();
}
inline double ref_sum_abs(const std::vector<double>& v) {
  CompensatedSum s;
  for (double x : v) s.add(std::fabs(x));
  return s.value();
}
/// max / min with NaN propagation (any NaN gives NaN).
inline double ref_max(const std::vector<double>& v) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::max(m, x);
  }
  return m;
}
inline double ref_min(const std::vector<double>& v) {
  double m = std::numeric_limits<double>::infinity();
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::min(m, x);
  }
  return m;
}
/// The vector p-norm (torch.linalg.vector_norm).
inline double ref_norm(const std::vector<double>& v, double p) {
  if (std::isinf(p)) {
    std::vector<double> a;
    for (double x : v) a.push_back(std::fabs(x));
    return p > 0 ? ref_max(a) : ref_min(a);
  }
  CompensatedSum acc;
  for (double x : v) acc.add(p == 0 ? double(x != 0) : p == 1 ? std::fabs(x) : p == 2 ? x * x : std::pow(std::fabs(x), p));
  const double s = acc.value();
  return p == 0 || p == 1 ? s : p == 2 ? std::sqrt(s) : std::pow(s, 1 / p);
}

/// The error bound of a sum accumulated in a type with machine epsilon `eps`:
/// weft's CPU sum folds at most 8 values per accumulator lane, then joins
/// the partial sums pairwise (accumulators, blocks, lanes, threads: a tree of
/// depth <= log2(n) + a few), so |error| <= (log2(n) + 8 + c) * eps * sum|x|
/// to first order; a naive left-to-right float loop would need n * eps
/// (worst case). c = 8 also covers each element's own rounding when it is
/// an expression (one or two roundings per element, relative to |x_i|).
/// The CUDA kernels fold up to n / (threads per output) values per thread,
/// then a tree: their bound is the sequential length, see sequential_sum_error_bound.
inline double sum_error_bound(std::int64_t n, double eps, double sum_abs) {
  return (std::log2(double(std::max<std::int64_t>(n, 1))) + 16.0) * eps * sum_abs;
}

/// How the code under test adds: weft's CPU kernels join partial sums pairwise (sum_error_bound);
/// the CUDA kernels fold up to n values sequentially in one thread (a thread per output), then a
/// tree (sequential_sum_error_bound).
enum class SumOrder { pairwise, sequential };

/// The worst case of a sequential sum of n values, (n + 16) eps sum|x|: it bounds every path of
/// the CUDA kernels.
inline double sequential_sum_error_bound(double n, double eps, double sum_abs) { return (n + 16) * eps * sum_abs; }

/// logsumexp of a group in double: shift + log sum exp(x - shift), shift = max (0 when infinite).
/// The tolerance: each exp(x - m) in the accumulator is off by ~(|x - m| + 2) eps relative, the
/// sum of positive terms by the pairwise bound, log turns a relative error of s into an absolute
/// one, then one rounding of shift + log s in the accumulator and one to R.
template <class R>
Expect expect_logsumexp(const std::vector<double>& g, double eps) {
  Expect e;
  const double m = ref_max(g);
  if (std::isnan(m)) return {NAN, 0};
  const double shift = std::isinf(m) ? 0.0 : m;
  CompensatedSum s;
  double spread = 0;
  for (double x : g) {
    s.add(std::exp(x - shift));
    if (std::isfinite(x)) spread = std::max(spread, std::fabs(x - shift));
  }
  e.want = shift + std::log(s.value());
  const double rel = sum_error_bound(std::int64_t(g.size()), eps, 1.0) + (spread + 4) * eps;
  e.tol = rel + 2 * eps * std::fabs(e.want) + ulp_of<R>(e.want);
  return e;
}

/// var (std with take_sqrt) of a group in double: mean, then sum (x - mean)^2 / max(0, n - correction).
/// The tolerance of the two-pass computation in the accumulator: the mean is off by e_mu (the
/// pairwise bound / n), which moves the sum of squares by 2 e_mu sum|d| + n e_mu^2; each squared
/// deviation rounds (~3 eps relative) and the pairwise sum adds its bound.
template <class R>
Expect expect_variance(const std::vector<double>& g, double correction, bool take_sqrt, double eps) {
  const double n = double(g.size());
  const double mean = ref_sum(g) / n;
  CompensatedSum ss, dev_abs;
  for (double x : g) ss.add((x - mean) * (x - mean)), dev_abs.add(std::fabs(x - mean));
  const double divisor = std::max(0.0, n - correction);
  Expect e;
  e.want = ss.value() / divisor;  // 0 / 0 = NaN (n = 1, or no elements), x / 0 = inf
  if (!std::isfinite(e.want)) {
    if (take_sqrt) e.want = std::sqrt(e.want);
    return e;
  }
  const double e_mu = sum_error_bound(std::int64_t(n), eps, ref_sum_abs(g)) / n;
  const double tol_ss = sum_error_bound(std::int64_t(n), eps, ss.value()) + 3 * eps * ss.value() +
                        2 * e_mu * dev_abs.value() + n * e_mu * e_mu;
  const double tol_var = tol_ss / divisor;
  if (!take_sqrt) {
    e.tol = tol_var + eps * e.want + ulp_of<R>(e.want);
  } else {
    const double var = e.want;
    e.want = std::sqrt(var);
    e.tol = std::sqrt(var + tol_var) - e.want + 2 * eps * e.want + ulp_of<R>(e.want);
  }
  return e;
}

// ---------------------------------------------------------------------------
// Checking a reduction's output
// ---------------------------------------------------------------------------

enum class Op { sum, mean, max, min, amax, amin, norm, any, all, prod };

inline const char* op_name(Op op) {
  constexpr const char* names[] = {"sum", "mean", "max", "min", "amax", "amin", "norm", "any", "all", "prod"};
  return names[int(op)];
}

/// A random list of distinct dims of `rank`, some negative; sometimes empty (= every dim).
inline std::vector<std::int64_t> random_dims(Rng& rng, int rank) {
  std::vector<std::int64_t> dims;
  for (int d = 0; d < rank; ++d)
    if (rng.chance(0.5)) dims.push_back(rng.chance(0.3) ? d - rank : d);
  std::shuffle(dims.begin(), dims.end(), rng.gen);
  return dims;
}

/// What an output element reducing `group` must be, for a result of dtype R accumulated in a
/// type with machine epsilon eps_acc, its sums added in `order`.
/// `magnitude`, when given, holds per element the sum of the absolute values of the terms that
/// produce it (for an expression input such as x*x + x, whose own rounding error scales with
/// |x*x| + |x|, not with its possibly cancelling result).
template <class R>
Expect expect_reduction(Op op, const std::vector<double>& group, double p, double eps_acc,
                        const std::vector<double>* magnitude = nullptr, SumOrder order = SumOrder::pairwise) {
  const double n = double(group.size());
  const double sum_abs = magnitude ? ref_sum_abs(*magnitude) : ref_sum_abs(group);
  Expect e;
  switch (op) {
    case Op::sum:
      e.want = ref_sum(group);
      e.tol = sum_error_bound(std::int64_t(n), eps_acc, sum_abs) + ulp_of<R>(e.want);
      break;
    case Op::mean:
      e.want = ref_sum(group) / n;  // NaN for n = 0, like 0 / 0
      e.tol = sum_error_bound(std::int64_t(n), eps_acc, sum_abs) / n + 2 * ulp_of<R>(e.want);
      break;
    case Op::max:
    case Op::amax: e.want = ref_max(group); break;  // one of the inputs: exact
    case Op::min:
    case Op::amin: e.want = ref_min(group); break;
    case Op::any:  // a value is true when nonzero (NaN is); of nothing, any is false and all true
      e.want = std::any_of(group.begin(), group.end(), [](double x) { return x != 0; });
      break;
    case Op::all: e.want = std::all_of(group.begin(), group.end(), [](double x) { return x != 0; }); break;
    case Op::prod: {
      if (eps_acc == 0) {  // bool and integers: an int64 product, wrapping modulo 2^64 (as PyTorch)
        std::uint64_t w = 1;
        for (double x : group) w *= std::uint64_t(std::int64_t(x));
        e.want = double(std::int64_t(w));
        break;
      }
      long double exact = 1;  // 64 significant bits: exact enough beside a double accumulator
      for (double x : group) exact *= x;
      // n - 1 multiplies, each rounding once in the accumulator (in any tree order): relative
      // error <= (n - 1) eps to first order; then one rounding to R. Overflow to inf (in the
      // accumulator or in R) must match, unless the bound straddles it.
      const double want = double(exact), rel = (n + 2) * eps_acc;
      e.want = round_to<R>(want);
      e.tol = rel * std::fabs(want) + ulp_of<R>(want);
      e.skip = std::isinf(round_to<R>(want * (1 + rel))) != std::isinf(round_to<R>(want * (1 - rel)));
      break;
    }
    case Op::norm: {
      e.want = ref_norm(group, p);
      if (std::isinf(p)) break;  // a max or a min of |x|: exact
      if (p == 0) {  // a count: exact until it is rounded to R
        e.tol = ulp_of<R>(e.want) / 2;
        break;
      }
      // sum of |x|^p (all terms >= 0, so the bound is relative to the sum
      // itself), pow() accurate to a few ulps, then the 1/p root scales the
      // relative error by 1/p.
      const double rel = (std::log2(std::max(n, 1.0)) + 16.0 + (p == 1 || p == 2 ? 0.0 : 8.0)) * eps_acc;
      e.tol = (rel / std::min(p, 1.0) + 4 * eps_acc) * std::fabs(e.want) + ulp_of<R>(e.want);
      break;
    }
  }
  // A sequential sum may be off by far more than a pairwise one: the bounds of the ops that sum
  // (sum, mean, and the p-norms that add |x|^p) widen to the sequential bound.
  if (order == SumOrder::sequential && (op == Op::sum || op == Op::mean || (op == Op::norm && p != 0 && !std::isinf(p)))) {
    const double slack = sequential_sum_error_bound(n, eps_acc, sum_abs) / (op == Op::mean ? std::max(n, 1.0) : 1.0);
    e.tol = std::max(e.tol, slack + ulp_of<R>(e.want));
  }
  return e;
}

// check_output differs between nvcc and host translation units (reference.hpp): its callers live
// in the same ABI namespace, so that the two compilers never emit one function with two bodies.
inline namespace WEFT_BACKEND_ABI {

/// Checks `out` = op over `mask` of an input with these values and shape (and, optionally, these
/// per-element magnitudes, see expect_reduction). A result on a GPU is read from a copy on the
/// host, within the bounds of the CUDA kernels' sequential sums (SumOrder).
template <class R>
void check_reduction(const weft::TensorBase<R>& out, Op op, const std::vector<double>& values, const Shape& full,
                     const std::vector<bool>& mask, bool keepdim, double p, double eps_acc,
                     const std::vector<double>& magnitudes = {}) {
  INFO("op ", std::string(op_name(op)), " p ", p, ", input shape ", shape_str(full), ", keepdim ", keepdim);
  REQUIRE(out.shape() == reduced_shape(full, mask, keepdim));
  const SumOrder order = out.device().is_cpu() ? SumOrder::pairwise : SumOrder::sequential;
  const Tensor<R> copy = out.device().is_cpu() ? Tensor<R>() : out.to(weft::Device::cpu());
  const weft::TensorBase<R>& host = out.device().is_cpu() ? out : copy;
  const ReductionReference ref(values, full, mask);
  const ReductionReference mag(magnitudes.empty() ? values : magnitudes, full, mask);
  WEFT_CHECK_REPORT(check_output(host, [&](const std::vector<std::int64_t>& idx) {
    std::int64_t o = 0;
    for (int d = 0; d < host.dim(); ++d) o = o * host.shape()[d] + idx[std::size_t(d)];
    return expect_reduction<R>(op, ref.groups[std::size_t(o)], p, eps_acc, &mag.groups[std::size_t(o)], order);
  }));
}
/// A lazy reduction (weft::sum(x, dim) is an expression node) checked as its evaluated tensor.
template <weft::DenseNode N>
void check_reduction(const N& out, Op op, const std::vector<double>& values, const Shape& full,
                     const std::vector<bool>& mask, bool keepdim, double p, double eps_acc,
                     const std::vector<double>& magnitudes = {}) {
  check_reduction(weft::eval(out), op, values, full, mask, keepdim, p, eps_acc, magnitudes);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft_test
