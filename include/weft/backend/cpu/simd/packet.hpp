// SPDX-License-Identifier: MIT
/// @file Packets of expression values on the CPU: a dtype's lanes, packet loads and stores through strides, the packet forms of comparisons, and PacketTarget (the CPU's vector path through an evaluator).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "weft/backend/cpu/simd/bf16_math.hpp"
#include "weft/backend/cpu/simd/narrow_int.hpp"
#include "weft/backend/cpu/simd/vec.hpp"
#include "weft/expr/tree.hpp"
#include "weft/plan/kernel.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

// Comparisons and where() on packets, found by argument-dependent lookup from the op functors'
// unqualified calls (expr/functors.hpp): a comparison gives int32 lanes holding 0 or 1 (the packet
// form of a bool value), nonzero a mask.
namespace weft::detail::simd {

#define WEFT_PACKET_COMPARISON(name, simd_cmp)                                         \
  template <class T, int N>                                                            \
  inline Vec<std::int32_t, N> name(Vec<T, N> a, Vec<T, N> b) {                         \
    return convert<std::int32_t>(mask_to_ones<T>(simd_cmp(a, b)));                    \
  }
WEFT_PACKET_COMPARISON(lt, cmp_lt)
WEFT_PACKET_COMPARISON(le, cmp_le)
WEFT_PACKET_COMPARISON(gt, cmp_gt)
WEFT_PACKET_COMPARISON(ge, cmp_ge)
WEFT_PACKET_COMPARISON(eq, cmp_eq)
WEFT_PACKET_COMPARISON(ne, cmp_ne)
#undef WEFT_PACKET_COMPARISON

// fmod and remainder lane by lane through the scalar definitions (expr/math.hpp): C's fmod is
// exact, which a quotient computed in packets is not; integer lanes keep the zero-divisor rule.
template <class T, int N>
inline Vec<T, N> fmod(Vec<T, N> a, Vec<T, N> b) {
  return detail::map_lanes(a, b, [](T x, T y) { return math::fmod(x, y); });
}
template <class T, int N>
inline Vec<T, N> floor_mod(Vec<T, N> a, Vec<T, N> b) {
  return detail::map_lanes(a, b, [](T x, T y) { return math::floor_mod(x, y); });
}

/// where()'s truth test: c != 0, lane by lane.
template <class T, int N>
inline Mask<T, N> nonzero(Vec<T, N> c) {
  return cmp_ne(c, Vec<T, N>::broadcast(T(0)));
}

}  // namespace weft::detail::simd

namespace weft::detail {

// Values flow through a CPU kernel as packets of lane_t<dtype>: a 16-bit float is float lanes,
// a bool packet is int32 lanes holding 0 or 1, so comparisons and where() vectorize too, and an
// int8, uint8 or int16 packet is int32 lanes holding values of that dtype (simd/narrow_int.hpp).
template <class T>
using lane_t = std::conditional_t<std::is_same_v<T, bool> || is_narrow_int_v<T>, std::int32_t, math_t<T>>;

template <class T, int L>
using Packet = simd::Vec<lane_t<T>, L>;

/// A packet of lanes as the packet of another dtype. A narrow integer keeps the low bits of the
/// value converted to int32 (floats truncate toward zero first: PyTorch's CPU casts, defined for
/// |x| < 2^31).
template <class Want, class Lane, int L>
inline Packet<Want, L> convert_packet(simd::Vec<Lane, L> v) {
  if constexpr (std::is_same_v<Want, bool>) return simd::ne(v, simd::Vec<Lane, L>::broadcast(Lane(0)));
  else if constexpr (is_narrow_int_v<Want>) return simd::wrap_to<Want>(simd::convert<std::int32_t>(v));
  else if constexpr (std::is_same_v<lane_t<Want>, Lane>) return v;
  else return simd::convert<lane_t<Want>>(v);
}

/// L elements of dtype T, `stride` apart (not 1), as a packet of Want.
/// Kept out of line: it is the cold path of every kernel, and inlining it
/// into each leaf of each kernel multiplies compile time.
template <class Want, int L, class T>
[[gnu::noinline]] Packet<Want, L> gather_packet(const T* p, std::int64_t stride) {
  using Lane = lane_t<Want>;
  if (stride == 0) return Packet<Want, L>::broadcast(Lane(convert_value<Want>(math_t<T>(*p))));
  alignas(64) Lane lanes[L];
  for (int l = 0; l < L; ++l) lanes[l] = Lane(convert_value<Want>(math_t<T>(p[l * stride])));
  return Packet<Want, L>::load(lanes);
}

/// L elements of dtype T, `stride` apart, as a packet of Want.
template <class Want, int L, class T>
inline Packet<Want, L> load_packet(const T* p, std::int64_t stride) {
  if constexpr (!std::is_same_v<T, bool>) {
    if (stride == 1) {
      if constexpr (is_16bit_float_v<T>) {
        return convert_packet<Want>(simd::load_float<L>(p));
      } else if constexpr (is_narrow_int_v<T>) {
        const simd::Vec<std::int32_t, L> widened = simd::load_widened<L>(p);
        if constexpr (std::is_same_v<Want, T>) return widened;  // in T's range already
        else return convert_packet<Want>(widened);
      } else {
        return convert_packet<Want>(simd::Vec<T, L>::load(p));
      }
    }
  }
  // A value broadcast along the row (a row epilogue's row values): one load, inline.
  if (stride == 0) return Packet<Want, L>::broadcast(lane_t<Want>(convert_value<Want>(math_t<T>(*p))));
  return gather_packet<Want, L>(p, stride);
}

/// Scatter counterpart of gather_packet, out of line for the same reason.
template <class T, int L>
[[gnu::noinline]] void scatter_packet(T* p, std::int64_t stride, Packet<T, L> v) {
  for (int l = 0; l < L; ++l) p[l * stride] = T(v[l]);
}

/// Stores a packet of T's lanes to L elements `stride` apart.
template <class T, int L>
inline void store_packet(T* p, std::int64_t stride, Packet<T, L> v, bool stream) {
  if (stride == 1) {
    if constexpr (is_16bit_float_v<T>) return stream ? simd::stream_float(p, v) : simd::store_float(p, v);
    else if constexpr (is_narrow_int_v<T>) return simd::store_narrowed(p, v);  // no narrowing streams
    else if constexpr (!std::is_same_v<T, bool>) return stream ? v.stream(p) : v.store(p);
  }
  scatter_packet<T, L>(p, stride, v);
}

/// Whether every op in the tree has a packet form for its lane type.
template <class N>
inline constexpr bool packet_capable_v = tree_all<N>([]<class M>(std::type_identity<M>) {
  if constexpr (is_map_v<M>)
    return std::is_floating_point_v<typename M::compute_type> || functors::has_integer_packets<typename M::op_type>;
  else return true;
});

/// Widest lane (bytes) a tree's values take; sets the kernel's packet length.
/// Numbers adopt their parent's lane; a cast computes through float.
template <class N>
inline constexpr std::size_t lane_bytes_v = tree_max<N>([]<class M>(std::type_identity<M>) {
  if constexpr (is_instance_v<M, Leaf>) return sizeof(lane_t<typename M::value_type>);
  else if constexpr (is_map_v<M>)
    return std::max(sizeof(lane_t<typename M::compute_type>), sizeof(lane_t<typename M::value_type>));
  else if constexpr (is_cast_v<M>) return std::max(sizeof(lane_t<typename M::value_type>), sizeof(float));
  else return std::size_t(0);
});

/// How a pointwise kernel runs in packets: whether every statement has a packet form, and the
/// widest lane of its values and destinations.
template <class Kernel>
struct KernelPackets;
template <bool kLinear, class... Stmts>
struct KernelPackets<PointwiseKernel<kLinear, Stmts...>> {
  static constexpr bool capable = (packet_capable_v<typename Stmts::expr_type> && ...);
  static constexpr std::size_t lane_bytes =
      std::max({lane_bytes_v<typename Stmts::expr_type>..., sizeof(lane_t<typename Stmts::dest_type>)...});
};

namespace cpu {

/// The CPU's vector path through an evaluator (Evaluator::vector<PacketTarget, L>): values are
/// packets of L lanes, operands move through their strides.
struct PacketTarget {
  template <class T, int L>
  using Value = Packet<T, L>;

  template <class Want, int L, class Cursor>
  static Value<Want, L> load(const Cursor& c, std::int64_t j) {
    return load_packet<Want, L>(c.at(j), c.step());
  }
  template <class Want, int L, class S>
  static Value<Want, L> broadcast(S value) {
    return Value<Want, L>::broadcast(lane_t<Want>(value));
  }
  template <class Want, class Lane, int L>
  static Value<Want, L> convert(simd::Vec<Lane, L> v) {
    return convert_packet<Want>(v);
  }
  /// op on packets of compute type C, as a packet of R; D is the op's dtype (Map::value_type).
  /// Bool arithmetic runs on int32 lanes of 0 / 1, where true + true is 2: back to 0 / 1, as
  /// bool(a + b) in the scalar path (a float op reading the sum would otherwise see 2). Narrow
  /// integer results wrap to their dtype, as R(a + b) in the scalar path. A
  /// bfloat16 exp, sigmoid, silu or tanh takes its form to bfloat16's precision (bf16_math.hpp).
  template <class R, class C, int L, class D, class Op, class... Vs>
  static Value<R, L> apply(const Op& op, Vs... v) {
    if constexpr (std::is_same_v<C, bool>) return convert_packet<bool>(op(v...));
    else if constexpr (is_narrow_int_v<R>) return simd::wrap_to<R>(op(v...));
    else if constexpr (std::is_same_v<D, bfloat16> && requires { bfloat16_precision(op, v...); })
      return bfloat16_precision(op, v...);
    else return op(v...);
  }
  /// v rounded to dtype U (cast<U>): a 16-bit float rounds through memory, the rest by conversion.
  template <class U, class Lane, int L>
  static Value<U, L> round_to(simd::Vec<Lane, L> v) {
    Value<U, L> u = convert_packet<U>(v);
    if constexpr (is_16bit_float_v<U>) {
      alignas(64) U rounded[L];
      simd::store_float(rounded, u);
      u = simd::load_float<L>(rounded);
    }
    return u;
  }
  template <class T, int L, class Cursor, class Lane>
  static void store(const Cursor& c, std::int64_t j, simd::Vec<Lane, L> v, bool stream) {
    store_packet<T, L>(c.at(j), c.step(), v, stream);
  }
};

/// PacketTarget for a kernel whose every tensor operand walks its rows with stride 1 (a row
/// epilogue's row path, backend/row_epilogue.hpp): plain packet loads and stores, with no stride
/// test per packet.
struct ContiguousRowTarget : PacketTarget {
  template <class Want, int L, class Cursor>
  static Value<Want, L> load(const Cursor& c, std::int64_t j) {
    return load_packet<Want, L>(c.unit(j), 1);
  }
  template <class T, int L, class Cursor, class Lane>
  static void store(const Cursor& c, std::int64_t j, simd::Vec<Lane, L> v, bool stream) {
    store_packet<T, L>(c.unit(j), 1, v, stream);
  }
};

/// One element through Target's packet arithmetic: element j broadcast into a packet, lane 0
/// stored. A row's last elements (fewer than the narrowest tail packet) run this instead of
/// the kernel's scalar path, so an element's value never depends on where it falls in a row: the
/// scalar path calls the C library (erff, tanhf), whose results can differ from the packet
/// polynomials by an ulp, which a 16-bit destination can turn into one bfloat16 ulp between a
/// statement and the same statement fused elsewhere (a GEMM epilogue's blocks end rows at other
/// places than the unfused pass). run_row uses one 16-byte register (4 float lanes): rows of 3
/// floats through tanh(x) * 0.5 + gelu(x), every element a row's last, took 8.6-9.0 ms against
/// 10.4-10.8 for the scalar calls (600k elements, one thread), where 2 lanes (8 bytes, which
/// GCC's vectors handle poorly on x86) took 13-15 ms.
template <class Target>
struct SingleLaneTarget : Target {
  template <class Want, int L, class Cursor>
  static typename Target::template Value<Want, L> load(const Cursor& c, std::int64_t j) {
    return load_packet<Want, L>(c.at(j), 0);
  }
  template <class T, int L, class Cursor, class Lane>
  static void store(const Cursor& c, std::int64_t j, simd::Vec<Lane, L> v, bool) {
    *c.at(j) = T(v[0]);
  }
};

}  // namespace cpu
}  // namespace weft::detail

#endif  // !defined(__CUDA_ARCH__)
