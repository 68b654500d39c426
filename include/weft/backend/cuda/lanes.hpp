// SPDX-License-Identifier: MIT
/// @file The CUDA executor's vector path: a thread evaluates V consecutive elements at once as arrays of lanes, and moves each operand's V elements with one aligned vector access (LaneTarget). Plain C++: host tests run it too.
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/core/config.hpp"
#include "weft/plan/evaluator.hpp"

namespace weft::detail {

/// V values of one node, one per element (registers once the lane loops are unrolled).
template <class T, int V>
struct Lanes {
  T v[V];
};

/// V consecutive elements of T in memory, aligned to their size, so a
/// 16-byte group is one 128-bit load or store (ld/st.global.v4).
template <class T, int V>
struct alignas(sizeof(T) * V) AlignedLanes {
  T v[V];
};

/// Lanes of one math type as lanes of another (convert_value lane by lane).
template <class Want, class From, int V>
WEFT_HOST_DEVICE inline Lanes<Want, V> convert_lanes(const Lanes<From, V>& x) {
  if constexpr (std::is_same_v<Want, From>) {
    return x;
  } else {
    Lanes<Want, V> out;
    WEFT_UNROLL
    for (int l = 0; l < V; ++l) out.v[l] = convert_value<Want>(x.v[l]);
    return out;
  }
}

/// V elements of T at p (aligned to sizeof(T) * V) as lanes of Want.
template <class Want, int V, class T>
WEFT_HOST_DEVICE inline Lanes<Want, V> load_lanes(const T* p) {
  const AlignedLanes<T, V> raw = *reinterpret_cast<const AlignedLanes<T, V>*>(p);
  Lanes<Want, V> out;
  WEFT_UNROLL
  for (int l = 0; l < V; ++l) out.v[l] = convert_value<Want>(math_t<T>(raw.v[l]));
  return out;
}

/// Stores lanes of T's math values to V elements at p (aligned to sizeof(T) * V).
template <class T, int V, class From>
WEFT_HOST_DEVICE inline void store_lanes(T* p, const Lanes<From, V>& x) {
  AlignedLanes<T, V> raw;
  WEFT_UNROLL
  for (int l = 0; l < V; ++l) raw.v[l] = T(x.v[l]);
  *reinterpret_cast<AlignedLanes<T, V>*>(p) = raw;
}

/// The math value of dtype T in a lane (bool stays bool).
template <class T>
using lane_value_t = std::conditional_t<std::is_same_v<T, bool>, bool, math_t<T>>;

namespace cuda {

/// The CUDA vector path through an evaluator (Evaluator::vector<LaneTarget, V>). A contiguous
/// operand (the linear layout, list members) moves V elements with one aligned access; in the
/// strided layout the vector path runs only in foreach kernels, where a single tensor holds one
/// element (stride 0): it is read once and broadcast.
struct LaneTarget {
  template <class T, int V>
  using Value = Lanes<lane_value_t<T>, V>;

  template <class Want, int V, class Cursor>
  WEFT_HOST_DEVICE static Value<Want, V> load(const Cursor& c, std::int64_t j) {
    if constexpr (Cursor::kContiguous) {
      return load_lanes<Want, V>(c.at(j));
    } else {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(c.at(j))>>;
      return broadcast<Want, V>(convert_value<Want>(math_t<T>(*c.at(j))));
    }
  }
  template <class Want, int V, class S>
  WEFT_HOST_DEVICE static Value<Want, V> broadcast(S value) {
    Value<Want, V> out;
    WEFT_UNROLL
    for (int l = 0; l < V; ++l) out.v[l] = Want(value);
    return out;
  }
  template <class Want, class From, int V>
  WEFT_HOST_DEVICE static Value<Want, V> convert(const Lanes<From, V>& x) {
    return convert_lanes<lane_value_t<Want>>(x);
  }
  /// op lane by lane, each result as R (D, the op's dtype, picks nothing here).
  template <class R, class C, int V, class D, class Op, class... Vs>
  WEFT_HOST_DEVICE static Lanes<R, V> apply(const Op& op, const Vs&... v) {
    Lanes<R, V> out;
    WEFT_UNROLL
    for (int l = 0; l < V; ++l) out.v[l] = R(op(v.v[l]...));
    return out;
  }
  /// Each lane rounded to dtype U (cast<U>), kept as U's math value.
  template <class U, class From, int V>
  WEFT_HOST_DEVICE static Value<U, V> round_to(const Lanes<From, V>& x) {
    Value<U, V> out;
    WEFT_UNROLL
    for (int l = 0; l < V; ++l) out.v[l] = lane_value_t<U>(U(convert_value<lane_value_t<U>>(x.v[l])));
    return out;
  }
  template <class T, int V, class Cursor, class From>
  WEFT_HOST_DEVICE static void store(const Cursor& c, std::int64_t j, const Lanes<From, V>& x, bool) {
    store_lanes<T, V>(c.at(j), x);
  }
};

}  // namespace cuda
}  // namespace weft::detail
