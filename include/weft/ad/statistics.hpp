// SPDX-License-Identifier: MIT
/// @file The other reductions over Vars (amax, amin, max, min, logsumexp, var, std, norm) and their backward, each one pointwise statement over the input and the kept-dim result.
///
/// With y the result viewed with the reduced dims kept as 1 (so that it broadcasts over x):
///   amax, max:   dx = g [x == y] / count(x == y)   (ties share the gradient evenly, as torch's amax)
///   logsumexp:   dx = g exp(x - y)
///   var:         dx = g 2 (x - mean) / (n - correction)
///   std:         dx = g (x - mean) / ((n - correction) y)
///   norm p:      dx = g sign(x) |x|^(p-1) / y^(p-1)  (0 where y = 0; p = 0: no gradient;
///                p = +-inf: as amax / amin of |x|, times sign(x))
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "weft/ad/record.hpp"
#include "weft/ad/reduce.hpp"
#include "weft/ops/statistics.hpp"

namespace weft {
namespace ad {
inline namespace WEFT_BACKEND_ABI {
namespace detail {

/// The reduction `forward(x, dims or null, keepdim)` of a Var, recorded with the backward
/// `gradient(g_kept, x, y_kept, count, reduced)`: an expression of x's shape, given g and y with
/// the reduced dims kept (count: the number of elements reduced into each output; reduced: the
/// reduced dims).
template <class X, class Forward, class Gradient>
auto statistic_recorded(const char* op, const X& x, const std::vector<std::int64_t>* dims, bool keepdim,
                        Forward forward, Gradient gradient) {
  using T = input_dtype_t<X>;
  static_assert(is_floating_v<T>, "weft::ad: reductions of Vars need a floating-point dtype");
  const Input<T> in = input<T>(x);
  Tensor<T> value = forward(in.value, dims, keepdim);
  Shape kept = in.value.shape();
  std::int64_t count = 1;
  std::vector<std::int64_t> reduced;
  for (int d : reduced_dims(op, dims ? *dims : std::vector<std::int64_t>{}, kept.rank())) {
    count *= kept[d];
    kept[d] = 1;
    reduced.push_back(d);
  }
  const TensorView<const T> y = value.view().view(kept);
  SavedTensors saved;
  saved.add(in.value);
  return record_op<T>(op, std::move(value), std::array{in.node}, std::move(saved),
                      [xv = in.value, y, kept, count, reduced, node = in.node, gradient](const Tensor<T>& g) {
                        const TensorView<const T> gk = g.view().view(kept);
                        accumulate<T>(node, gradient(gk, xv, y, count, reduced));
                      });
}

/// The gradient of amax (kMax) or amin: shared evenly by the elements equal to the result.
template <bool kMax>
struct ExtremumGradient {
  template <class G, class V, class Y>
  auto operator()(const G& g, const V& x, const Y& y, std::int64_t, const std::vector<std::int64_t>& dims) const {
    using T = typename V::value_type;
    // The expression holds the count's storage (a Leaf's view keeps it alive).
    const Tensor<T> ties = weft::eval(weft::sum(weft::cast<T>(x == y), dims, true));
    return weft::where(x == y, g / ties, 0.0);
  }
};

template <bool kMax, class X>
auto extremum_recorded(const char* op, const X& x, const std::vector<std::int64_t>* dims, bool keepdim) {
  using T = input_dtype_t<X>;
  return statistic_recorded(
      op, x, dims, keepdim,
      [](const TensorView<const T>& v, const std::vector<std::int64_t>* ds, bool kd) {
        Tensor<T> out;
        if constexpr (kMax) {
          if (ds) out = weft::amax(v, *ds, kd);
          else out = weft::amax(v);
        } else {
          if (ds) out = weft::amin(v, *ds, kd);
          else out = weft::amin(v);
        }
        return out;
      },
      ExtremumGradient<kMax>{});
}

}  // namespace detail
}  // namespace WEFT_BACKEND_ABI
}  // namespace ad

inline namespace WEFT_BACKEND_ABI {

/// amax over every element or `dim` of a Var; the gradient goes to the largest elements (shared
/// evenly by ties).
template <class X>
  requires ad::detail::AdOperands<X>
auto amax(const X& x) {
  return ad::detail::extremum_recorded<true>("amax", x, nullptr, false);
}
template <class X>
  requires ad::detail::AdOperands<X>
auto amax(const X& x, const DimList& dim, bool keepdim = false) {
  return ad::detail::extremum_recorded<true>("amax", x, &dim.dims(), keepdim);
}
template <class X>
  requires ad::detail::AdOperands<X>
auto amin(const X& x) {
  return ad::detail::extremum_recorded<false>("amin", x, nullptr, false);
}
template <class X>
  requires ad::detail::AdOperands<X>
auto amin(const X& x, const DimList& dim, bool keepdim = false) {
  return ad::detail::extremum_recorded<false>("amin", x, &dim.dims(), keepdim);
}
/// max and min of Vars are amax and amin (weft::max returns the values only).
template <class X>
  requires ad::detail::AdOperands<X>
auto max(const X& x) {
  return ad::detail::extremum_recorded<true>("max", x, nullptr, false);
}
template <class X>
  requires ad::detail::AdOperands<X>
auto max(const X& x, const DimList& dim, bool keepdim = false) {
  return ad::detail::extremum_recorded<true>("max", x, &dim.dims(), keepdim);
}
template <class X>
  requires ad::detail::AdOperands<X>
auto min(const X& x) {
  return ad::detail::extremum_recorded<false>("min", x, nullptr, false);
}
template <class X>
  requires ad::detail::AdOperands<X>
auto min(const X& x, const DimList& dim, bool keepdim = false) {
  return ad::detail::extremum_recorded<false>("min", x, &dim.dims(), keepdim);
}

/// logsumexp over `dim` of a Var; dx = g softmax(x) along dim.
template <class X>
  requires ad::detail::AdOperands<X>
auto logsumexp(const X& x, const DimList& dim, bool keepdim = false) {
  using T = ad::detail::input_dtype_t<X>;
  return ad::detail::statistic_recorded(
      "logsumexp", x, &dim.dims(), keepdim,
      [](const TensorView<const T>& v, const std::vector<std::int64_t>* ds, bool kd) {
        return weft::logsumexp(v, *ds, kd);
      },
      [](const auto& g, const auto& xv, const auto& y, std::int64_t, const auto&) { return g * weft::exp(xv - y); });
}

}  // namespace WEFT_BACKEND_ABI

namespace ad {
inline namespace WEFT_BACKEND_ABI {
namespace detail {

template <bool kStd, class X>
auto variance_recorded(const X& x, const std::vector<std::int64_t>* dims, double correction, bool keepdim) {
  using T = input_dtype_t<X>;
  return statistic_recorded(
      kStd ? "std" : "var", x, dims, keepdim,
      [correction](const TensorView<const T>& v, const std::vector<std::int64_t>* ds, bool kd) {
        Tensor<T> out;
        if constexpr (kStd) {
          if (ds) out = weft::std(v, *ds, correction, kd);
          else out = weft::std(v);
        } else {
          if (ds) out = weft::var(v, *ds, correction, kd);
          else out = weft::var(v);
        }
        return out;
      },
      [correction](const auto& g, const auto& xv, const auto& y, std::int64_t n,
                   const std::vector<std::int64_t>& reduced) {
        // The expression holds the mean's storage (a Leaf's view keeps it alive).
        const Tensor<T> mean = weft::eval(weft::mean(xv, reduced, true));
        const double scale = 1.0 / (double(n) - correction);
        if constexpr (kStd) return g * (xv - mean) * scale / y;
        else return g * (xv - mean) * (2.0 * scale);
      });
}

}  // namespace detail
}  // namespace WEFT_BACKEND_ABI
}  // namespace ad

inline namespace WEFT_BACKEND_ABI {

/// var over every element (correction 1) or over `dim` of a Var; dx = 2 g (x - mean) / (n - correction).
template <class X>
  requires ad::detail::AdOperands<X>
auto var(const X& x) {
  return ad::detail::variance_recorded<false>(x, nullptr, 1.0, false);
}
template <class X>
  requires ad::detail::AdOperands<X>
auto var(const X& x, const DimList& dim, double correction = 1, bool keepdim = false) {
  return ad::detail::variance_recorded<false>(x, &dim.dims(), correction, keepdim);
}
/// std = sqrt(var); dx = g (x - mean) / ((n - correction) std).
template <class X>
  requires ad::detail::AdOperands<X>
auto std(const X& x) {
  return ad::detail::variance_recorded<true>(x, nullptr, 1.0, false);
}
template <class X>
  requires ad::detail::AdOperands<X>
auto std(const X& x, const DimList& dim, double correction = 1, bool keepdim = false) {
  return ad::detail::variance_recorded<true>(x, &dim.dims(), correction, keepdim);
}

}  // namespace WEFT_BACKEND_ABI

namespace ad {
inline namespace WEFT_BACKEND_ABI {
namespace detail {

template <class X>
auto norm_recorded(const X& x, double p, const std::vector<std::int64_t>* dims, bool keepdim) {
  using T = input_dtype_t<X>;
  if (std::isinf(p)) {
    // The largest (smallest) |x| gets the gradient, times its sign: amax / amin of |x|.
    const Var<T> v = input<T>(x).var;
    Var<T> magnitude = weft::abs(v);
    return p > 0 ? extremum_recorded<true>("norm", magnitude, dims, keepdim)
                 : extremum_recorded<false>("norm", magnitude, dims, keepdim);
  }
  return statistic_recorded(
      "norm", x, dims, keepdim,
      [p](const TensorView<const T>& v, const std::vector<std::int64_t>* ds, bool kd) {
        return ds ? weft::norm(v, p, *ds, kd) : weft::norm(v, p);
      },
      [p](const auto& g, const auto& xv, const auto& y, std::int64_t, const auto&) {
        // p = 0 counts nonzeros: a step function, no gradient.
        const double q = p == 0 ? 0.0 : p - 1.0;
        return weft::where(y == 0.0 || p == 0.0, 0.0,
                           g * weft::sign(xv) * weft::pow(weft::abs(xv), q) / weft::pow(y, q));
      });
}

}  // namespace detail
}  // namespace WEFT_BACKEND_ABI
}  // namespace ad

inline namespace WEFT_BACKEND_ABI {

/// The p-norm of a Var over every element or over `dim` (torch.linalg.vector_norm's p).
template <class X>
  requires ad::detail::AdOperands<X>
auto norm(const X& x, double p = 2) {
  return ad::detail::norm_recorded(x, p, nullptr, false);
}
template <class X>
  requires ad::detail::AdOperands<X>
auto norm(const X& x, double p, const DimList& dim, bool keepdim = false) {
  return ad::detail::norm_recorded(x, p, &dim.dims(), keepdim);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
