// SPDX-License-Identifier: MIT
/// @file Reducer functors (sum, mean, prod, max/min, norms, variance): identity, per-element transform, combine and finalize, for scalars and packets; the value-then-index orders of argmax, argmin and topk.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "weft/core/config.hpp"
#include "weft/core/dtype.hpp"
#include "weft/expr/math.hpp"

namespace weft::detail {

// A reducer folds transform(x) over the elements with combine, starting from
// identity(), then maps the total with finalize(total, count). transform and
// combine are templates over V: the accumulator type Acc itself (host and
// device) or, on the host, a packet of Acc lanes, so one reducer serves the
// scalar tail, the SIMD loop and the CUDA kernels alike.

/// `x` in every lane of V (V is Acc or a packet of Acc).
template <class V, class Acc>
WEFT_HOST_DEVICE inline V splat(Acc x) {
  if constexpr (math::is_packet_v<V>) return V::broadcast(x);
  else return V(x);
}

/// The smallest value of Acc: -inf for floats.
template <class Acc>
WEFT_HOST_DEVICE constexpr Acc lowest_value() {
  if constexpr (std::is_floating_point_v<Acc>) return -std::numeric_limits<Acc>::infinity();
  else return std::numeric_limits<Acc>::lowest();
}
/// The largest value of Acc: +inf for floats.
template <class Acc>
WEFT_HOST_DEVICE constexpr Acc highest_value() {
  if constexpr (std::is_floating_point_v<Acc>) return std::numeric_limits<Acc>::infinity();
  else return std::numeric_limits<Acc>::max();
}

/// The type a sum or product of V (and a cumulative sum) accumulates in: float for 16-bit floats,
/// the dtype for float and double, int64 for bool and integers (PyTorch).
template <class V>
using sum_acc_t = std::conditional_t<is_floating_v<V>, math_t<V>, std::int64_t>;

/// The type argmax, argmin and topk compare V in: bool as itself, 16-bit floats as float.
template <class V>
using order_t = std::conditional_t<std::is_same_v<V, bool>, bool, math_t<V>>;

/// What a reducer that folds the elements themselves and returns the total as it is (sum, prod)
/// shares: transform and finalize are the identity.
template <class Acc>
struct PlainFold {
  using acc_type = Acc;
  template <class V>
  WEFT_HOST_DEVICE V transform(V x) const {
    return x;
  }
  WEFT_HOST_DEVICE Acc finalize(Acc total, std::int64_t) const { return total; }
};

/// sum = x_0 + x_1 + ...; mean = sum / n (NaN for n = 0, as 0 / 0).
template <class Acc, bool kMean = false>
struct SumReducer : PlainFold<Acc> {
  WEFT_HOST_DEVICE Acc identity() const { return Acc(0); }
  template <class V>
  WEFT_HOST_DEVICE V combine(V a, V b) const {
    return a + b;
  }
  WEFT_HOST_DEVICE Acc finalize(Acc total, std::int64_t n) const {
    if constexpr (kMean) return total / Acc(n);
    else return total;
  }
};

/// prod = x_0 * x_1 * ...; 1 for n = 0. Integers multiply modulo 2^64 (they wrap, as in PyTorch),
/// as uint64: signed overflow is undefined, in a scalar and in a GCC vector's lanes alike, so an
/// integer packet multiplies lane by lane (integer products are not a hot path).
template <class Acc>
struct ProdReducer : PlainFold<Acc> {
  WEFT_HOST_DEVICE Acc identity() const { return Acc(1); }
  template <class V>
  WEFT_HOST_DEVICE V combine(V a, V b) const {
    if constexpr (std::is_integral_v<V>) {
      return V(std::uint64_t(a) * std::uint64_t(b));
    } else if constexpr (math::is_packet_v<V>) {
      using Lane = std::remove_cvref_t<decltype(a[0])>;
      if constexpr (std::is_integral_v<Lane>) {
        Lane lanes[V::size];
        for (int i = 0; i < V::size; ++i) lanes[i] = Lane(std::uint64_t(a[i]) * std::uint64_t(b[i]));
        return V::load(lanes);
      } else {
        return a * b;
      }
    } else {
      return a * b;
    }
  }
};

/// var = sum (x_i - mean)^2 / max(0, n - correction) over elements that arrive as x_i - mean (the
/// second pass of a two-pass variance); std = sqrt(var). A sum of squares: `divisor` is
/// max(0, n - correction), and 0 gives inf, or NaN when every deviation is 0 (as PyTorch).
template <class Acc, bool kStd>
struct VarianceReducer : SumReducer<Acc> {
  Acc divisor = Acc(1);
  template <class V>
  WEFT_HOST_DEVICE V transform(V deviation) const {
    return deviation * deviation;
  }
  WEFT_HOST_DEVICE Acc finalize(Acc total, std::int64_t) const {
    using math::sqrt;
    if constexpr (kStd) return sqrt(total / divisor);
    else return total / divisor;
  }
};

/// max = max(x_0, x_1, ...) (min likewise); a NaN anywhere gives NaN. With
/// kAbs the elements are |x_i| (the inf / -inf norms).
template <class Acc, bool kMax, bool kAbs = false>
struct ExtremumReducer {
  using acc_type = Acc;
  WEFT_HOST_DEVICE Acc identity() const { return kMax ? lowest_value<Acc>() : highest_value<Acc>(); }
  template <class V>
  WEFT_HOST_DEVICE V transform(V x) const {
    if constexpr (kAbs) {
      using math::abs;
      return abs(x);
    } else {
      return x;
    }
  }
  template <class V>
  WEFT_HOST_DEVICE V combine(V a, V b) const {
    using math::max;
    using math::min;
    if constexpr (kMax) return max(a, b);
    else return min(a, b);
  }
  WEFT_HOST_DEVICE Acc finalize(Acc total, std::int64_t) const { return total; }
};

/// The vector p-norms: l1 = sum |x|, l2 = sqrt(sum x^2), l0 = count of
/// x != 0, lp = (sum |x|^p)^(1/p), linf = max |x|, lneginf = min |x|. One
/// reducer with the kind as a runtime member: a norm costs one instantiation
/// per input type, and the per-packet switch is perfectly predicted.
enum class NormKind : std::uint8_t { l1, l2, l0, lp, linf, lneginf };

template <class Acc>
struct NormReducer {
  using acc_type = Acc;
  NormKind kind = NormKind::l2;
  Acc p = Acc(2);

  WEFT_HOST_DEVICE Acc identity() const { return kind == NormKind::lneginf ? highest_value<Acc>() : Acc(0); }
  template <class V>
  WEFT_HOST_DEVICE V transform(V x) const {
    using math::abs;
    using math::pow;
    switch (kind) {
      case NormKind::l2: return x * x;
      case NormKind::l0: return nonzero_as_one(x);
      case NormKind::lp: return pow(abs(x), splat<V>(p));
      default: return abs(x);  // l1, linf, lneginf
    }
  }
  template <class V>
  WEFT_HOST_DEVICE V combine(V a, V b) const {
    using math::max;
    using math::min;
    if (kind == NormKind::linf) return max(a, b);  // NaN propagates
    if (kind == NormKind::lneginf) return min(a, b);
    return a + b;
  }
  WEFT_HOST_DEVICE Acc finalize(Acc total, std::int64_t) const {
    using math::pow;
    using math::sqrt;
    if (kind == NormKind::l2) return sqrt(total);
    if (kind == NormKind::lp) return pow(total, Acc(1) / p);
    return total;
  }

 private:
  // x != 0 ? 1 : 0
  template <class V>
  WEFT_HOST_DEVICE static V nonzero_as_one(V x) {
    using math::nonzero;
    using math::select;
    return select(nonzero(x), splat<V>(Acc(1)), splat<V>(Acc(0)));
  }
};

/// A strict total order on (value, index) pairs: values descending (kDescending) or ascending, NaN
/// before every number (kNanFirst) or after, equal values (NaNs among themselves too) by lower
/// index first. The first pair of a row under it is argmax (descending, NaN first: a NaN is the
/// max, as in PyTorch) or argmin (ascending, NaN first: a NaN is the min too); topk takes its
/// first k (largest: descending, NaN first; smallest: ascending, NaN last, NaN ranking as the
/// largest value).
template <bool kDescending, bool kNanFirst>
struct IndexOrder {
  template <class Acc>
  WEFT_HOST_DEVICE static bool before(Acc a, std::int64_t ia, Acc b, std::int64_t ib) {
    const bool a_nan = a != a, b_nan = b != b;
    if (a_nan != b_nan) return a_nan == kNanFirst;
    if (!a_nan && a != b) return kDescending ? b < a : a < b;
    return ia < ib;
  }
};

/// A value and where it was found (an argmax / argmin candidate).
template <class Acc>
struct IndexedValue {
  Acc value;
  std::int64_t index;
};

/// argmax (kMax) / argmin: keeps the pair that comes first under their IndexOrder, so a NaN wins,
/// and of equal values the first index.
template <class Acc, bool kMax>
struct ArgExtremumReducer {
  using Order = IndexOrder<kMax, true>;
  WEFT_HOST_DEVICE IndexedValue<Acc> combine(IndexedValue<Acc> a, IndexedValue<Acc> b) const {
    return Order::before(b.value, b.index, a.value, a.index) ? b : a;
  }
};

}  // namespace weft::detail
