// SPDX-License-Identifier: MIT
/// @file Evaluators: the flat, device-copyable form of an expression tree that a kernel runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "weft/core/tuple.hpp"
#include "weft/expr/nodes.hpp"
#include "weft/plan/iteration.hpp"

namespace weft::detail {

// Values flow through a kernel as scalars of math_t<dtype> (bool stays bool),
// or on the host as packets of lane_t<dtype>: a bool packet is int32 lanes
// holding 0 or 1, so comparisons and where() vectorize too.
template <class T>
using lane_t = std::conditional_t<std::is_same_v<T, bool>, std::int32_t, math_t<T>>;

/// A math value as another dtype's math value; anything to bool tests != 0.
template <class Want, class V>
WEFT_HOST_DEVICE inline Want convert_value(V v) {
  if constexpr (std::is_same_v<Want, bool>) return v != V(0);
  else return static_cast<Want>(v);
}

#if !defined(__CUDA_ARCH__)
template <class T, int L>
using Packet = simd::Vec<lane_t<T>, L>;

/// A packet of lanes as the packet of another dtype.
template <class Want, class Lane, int L>
inline Packet<Want, L> convert_packet(simd::Vec<Lane, L> v) {
  if constexpr (std::is_same_v<Want, bool>) return math::ne(v, simd::Vec<Lane, L>::broadcast(Lane(0)));
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
      if constexpr (is_16bit_float_v<T>) return convert_packet<Want>(simd::load_float<L>(p));
      else return convert_packet<Want>(simd::Vec<T, L>::load(p));
    }
  }
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
    if constexpr (is_16bit_float_v<T>) return simd::store_float(p, v);
    else if constexpr (!std::is_same_v<T, bool>) return stream ? v.stream(p) : v.store(p);
  }
  scatter_packet<T, L>(p, stride, v);
}
#endif

// The CUDA executor's vector path: a thread evaluates V consecutive elements
// at once, as arrays of lanes (registers once the lane loops are unrolled),
// and moves each operand's V elements with one aligned vector access.
#if defined(__CUDA_ARCH__)
#define WEFT_UNROLL _Pragma("unroll")
#else
#define WEFT_UNROLL
#endif

/// V values of one node, one per element: the vector path's value type.
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

/// Whether p can be accessed V elements at a time by load_lanes/store_lanes.
template <int V, class T>
inline bool lanes_aligned(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % (sizeof(T) * V) == 0;
}

/// Where one operand lives in the iteration space. In the linear layout the
/// element index is the offset; otherwise seek() positions a row pointer
/// from the outer coordinates and the inner stride walks the row.
template <class T, bool kLinear>
struct Cursor {
  T* data = nullptr;
  T* row = nullptr;
  std::int64_t strides[kLinear ? 1 : kMaxRank] = {};
  std::int64_t inner = 1;
  int outer_rank = 0;

  Cursor() = default;
  Cursor(T* base, const Strides& full, const IterationSpace& space) : data(base), row(base) {
    if constexpr (!kLinear) {
      Strides s = space.collapse(full);
      outer_rank = space.rank() - 1;
      for (int d = 0; d < outer_rank; ++d) strides[d] = s[d];
      inner = s[space.rank() - 1];
    }
  }
  WEFT_HOST_DEVICE void seek(const std::int64_t* outer) {
    if constexpr (!kLinear) {
      // A constant trip count with a guard: unrolled, every index is a
      // constant, so a GPU thread keeps strides and coordinates in registers
      // instead of a local-memory copy of the kernel.
      std::int64_t off = 0;
      WEFT_UNROLL
      for (int d = 0; d < kMaxRank - 1; ++d)
        if (d < outer_rank) off += outer[d] * strides[d];
      row = data + off;
    }
  }
  WEFT_HOST_DEVICE T* at(std::int64_t j) const {
    if constexpr (kLinear) return data + j;
    else return row + j * inner;
  }
  std::int64_t step() const { return kLinear ? 1 : inner; }
  /// A single tensor's cursor stays put when a foreach kernel selects tensor k.
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t, const Table&) {}
};

/// The base pointer of every tensor of every list operand (and the numbers of
/// every ScalarList) of a foreach kernel. Evaluators keep an id into it; the
/// executor moves them to tensor k with select(k, table). A list (or
/// ScalarList) read several times gets one id: `p = p - lr * g` has two rows,
/// and an AdamW step that names p, g, m and v fourteen times has four.
struct ListTable {
  std::vector<std::vector<void*>> pointers;  // [list id][tensor]
  std::vector<std::vector<double>> numbers;  // [ScalarList id][tensor]
  std::vector<int> element_bytes;            // [list id]: sizeof(T)
  std::vector<const void*> list_ids, number_ids;  // TensorList::id / ScalarList::id of each row

  template <class T>
  int add_list(const TensorList<T>& list) {
    for (std::size_t i = 0; i < list_ids.size(); ++i)
      if (list_ids[i] == list.id()) return int(i);
    std::vector<void*> p;
    p.reserve(list.size());
    for (const auto& t : list) p.push_back(const_cast<std::remove_const_t<T>*>(t.data()));
    pointers.push_back(std::move(p));
    element_bytes.push_back(int(sizeof(T)));
    list_ids.push_back(list.id());
    return int(pointers.size()) - 1;
  }
  template <class S>
  int add_numbers(const ScalarList<S>& values) {
    for (std::size_t i = 0; i < number_ids.size(); ++i)
      if (number_ids[i] == values.id()) return int(i);
    std::vector<double> v;
    v.reserve(values.size());
    for (std::size_t k = 0; k < values.size(); ++k) v.push_back(double(values[k]));
    numbers.push_back(std::move(v));
    number_ids.push_back(values.id());
    return int(numbers.size()) - 1;
  }
  void* pointer(int id, std::int64_t k) const { return pointers[id][k]; }
  double number(int id, std::int64_t k) const { return numbers[id][k]; }
};

/// A cursor over one tensor of a list operand: its members are contiguous,
/// so a base pointer is all it holds (a foreach kernel's argument carries one
/// per list operand). select(k) points it at tensor k.
template <class T>
struct ListCursor {
  T* data = nullptr;
  int id = 0;
  explicit ListCursor(int list_id) : id(list_id) {}
  WEFT_HOST_DEVICE void seek(const std::int64_t*) {}
  WEFT_HOST_DEVICE T* at(std::int64_t j) const { return data + j; }
  std::int64_t step() const { return 1; }
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t k, const Table& table) {
    data = static_cast<T*>(table.pointer(id, k));
  }
};

/// How a shared subexpression's occurrence uses the per-element cache.
enum class CacheRole : std::uint8_t { none, store, load };

/// Host-side state while building evaluators: the first occurrence of each
/// shared node type, against which later occurrences are compared.
template <class Shared>
struct BuildContext {
  const void* first[Shared::size == 0 ? 1 : Shared::size] = {};
  const IterationSpace* space = nullptr;
  ListTable* lists = nullptr;  // foreach kernels only
};

template <class Node, class Want, bool kLinear, class Shared>
struct Evaluator;

/// Reads a tensor (converted to Want).
template <class T, class Want, bool kLinear, class Shared>
struct Evaluator<Leaf<T>, Want, kLinear, Shared> {
  Cursor<const T, kLinear> cursor;

  Evaluator(const Leaf<T>& leaf, BuildContext<Shared>& ctx)
      : cursor(leaf.tensor.data(), broadcast_strides(leaf.tensor.shape(), leaf.tensor.strides(), ctx.space->full),
               *ctx.space) {}

  WEFT_HOST_DEVICE void seek(const std::int64_t* outer) { cursor.seek(outer); }
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t, const Table&) {}
  template <class Cache>
  WEFT_HOST_DEVICE Want coeff(std::int64_t j, Cache&) const {
    return convert_value<Want>(math_t<T>(*cursor.at(j)));
  }
#if !defined(__CUDA_ARCH__)
  template <int L, class Cache>
  Packet<Want, L> packet(std::int64_t j, Cache&) const {
    return load_packet<Want, L>(cursor.at(j), cursor.step());
  }
#endif

  /// Elements j .. j+V-1 (the vector path). In the linear layout they must be
  /// contiguous and aligned, which the launcher checks with vec_aligned<V>().
  /// The strided layout runs the vector path only in foreach kernels, where a
  /// single tensor holds one element (stride 0): it is read once and broadcast.
  template <int V, class Cache>
  WEFT_HOST_DEVICE Lanes<Want, V> vec(std::int64_t j, Cache&) const {
    if constexpr (kLinear) {
      return load_lanes<Want, V>(cursor.at(j));
    } else {
      const Want v = convert_value<Want>(math_t<T>(*cursor.at(j)));
      Lanes<Want, V> out;
      WEFT_UNROLL
      for (int l = 0; l < V; ++l) out.v[l] = v;
      return out;
    }
  }
  template <int V>
  bool vec_aligned() const {
    return lanes_aligned<V>(cursor.data);
  }
};

/// A number, converted once to Want when the kernel is built.
template <class S, class Want, bool kLinear, class Shared>
struct Evaluator<Scalar<S>, Want, kLinear, Shared> {
  Want value;
  Evaluator(const Scalar<S>& s, BuildContext<Shared>&) : value(convert_value<Want>(s.value)) {}
  WEFT_HOST_DEVICE void seek(const std::int64_t*) {}
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t, const Table&) {}
  template <class Cache>
  WEFT_HOST_DEVICE Want coeff(std::int64_t, Cache&) const {
    return value;
  }
#if !defined(__CUDA_ARCH__)
  template <int L, class Cache>
  Packet<Want, L> packet(std::int64_t, Cache&) const {
    return Packet<Want, L>::broadcast(lane_t<Want>(value));
  }
#endif

  template <int V, class Cache>
  WEFT_HOST_DEVICE Lanes<Want, V> vec(std::int64_t, Cache&) const {
    Lanes<Want, V> out;
    WEFT_UNROLL
    for (int l = 0; l < V; ++l) out.v[l] = value;
    return out;
  }
  template <int V>
  bool vec_aligned() const {
    return true;
  }
};

/// Reads tensor k of a list (select(k) picks the tensor; members are contiguous).
template <class T, class Want, bool kLinear, class Shared>
struct Evaluator<ListLeaf<T>, Want, kLinear, Shared> {
  static_assert(!kLinear, "foreach kernels run in the strided layout");
  ListCursor<const T> cursor;

  Evaluator(const ListLeaf<T>& leaf, BuildContext<Shared>& ctx) : cursor(ctx.lists->add_list(leaf.list)) {}

  WEFT_HOST_DEVICE void seek(const std::int64_t* outer) { cursor.seek(outer); }
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t k, const Table& table) {
    cursor.select(k, table);
  }
  template <class Cache>
  WEFT_HOST_DEVICE Want coeff(std::int64_t j, Cache&) const {
    return convert_value<Want>(math_t<T>(*cursor.at(j)));
  }
#if !defined(__CUDA_ARCH__)
  template <int L, class Cache>
  Packet<Want, L> packet(std::int64_t j, Cache&) const {
    return load_packet<Want, L>(cursor.at(j), 1);
  }
#endif

  /// Elements j .. j+V-1 of tensor k; the CUDA multi-tensor launcher checks
  /// per tensor that every list member is aligned to V elements.
  template <int V, class Cache>
  WEFT_HOST_DEVICE Lanes<Want, V> vec(std::int64_t j, Cache&) const {
    return load_lanes<Want, V>(cursor.at(j));
  }
};

/// Number k of a ScalarList, converted to Want when select(k) picks it.
template <class S, class Want, bool kLinear, class Shared>
struct Evaluator<ListScalar<S>, Want, kLinear, Shared> {
  int id;
  Want value{};

  Evaluator(const ListScalar<S>& node, BuildContext<Shared>& ctx) : id(ctx.lists->add_numbers(node.values)) {}

  WEFT_HOST_DEVICE void seek(const std::int64_t*) {}
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t k, const Table& table) {
    value = convert_value<Want>(table.number(id, k));
  }
  template <class Cache>
  WEFT_HOST_DEVICE Want coeff(std::int64_t, Cache&) const {
    return value;
  }
#if !defined(__CUDA_ARCH__)
  template <int L, class Cache>
  Packet<Want, L> packet(std::int64_t, Cache&) const {
    return Packet<Want, L>::broadcast(lane_t<Want>(value));
  }
#endif

  template <int V, class Cache>
  WEFT_HOST_DEVICE Lanes<Want, V> vec(std::int64_t, Cache&) const {
    Lanes<Want, V> out;
    WEFT_UNROLL
    for (int l = 0; l < V; ++l) out.v[l] = value;
    return out;
  }
};

/// op(children...) in the op's compute type; a shared node computes once per
/// element and later occurrences read the per-element cache.
template <class Op, class... Args, class Want, bool kLinear, class Shared>
struct Evaluator<Map<Op, Args...>, Want, kLinear, Shared> {
  using Node = Map<Op, Args...>;
  using C = typename Node::compute_type;
  using R = std::conditional_t<std::is_same_v<typename Node::value_type, bool>, bool, C>;
  static constexpr int kSlot = index_in<Node, Shared>;

  // Declared first: the role is decided before the children are built, so
  // roles follow evaluation order (a node, then its operands left to right).
  CacheRole role;
  [[no_unique_address]] Op op;
  Tuple<Evaluator<Args, C, kLinear, Shared>...> children;

  Evaluator(const Node& node, BuildContext<Shared>& ctx)
      : role(decide_role(node, ctx)),
        op(node.op),
        children(build_children(node, ctx, std::index_sequence_for<Args...>{})) {}

  WEFT_HOST_DEVICE void seek(const std::int64_t* outer) {
    for_each_in(children, [&](auto& c) { c.seek(outer); });
  }
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t k, const Table& table) {
    for_each_in(children, [&](auto& c) { c.select(k, table); });
  }

  template <class Cache>
  WEFT_HOST_DEVICE Want coeff(std::int64_t j, Cache& cache) const {
    if constexpr (kSlot >= 0) {
      if (role == CacheRole::load) return convert_value<Want>(get<kSlot>(cache));
      R v = compute(j, cache, std::index_sequence_for<Args...>{});
      if (role == CacheRole::store) get<kSlot>(cache) = v;
      return convert_value<Want>(v);
    } else {
      return convert_value<Want>(compute(j, cache, std::index_sequence_for<Args...>{}));
    }
  }

#if !defined(__CUDA_ARCH__)
  template <int L, class Cache>
  Packet<Want, L> packet(std::int64_t j, Cache& cache) const {
    if constexpr (kSlot >= 0) {
      if (role == CacheRole::load) return convert_packet<Want>(get<kSlot>(cache));
      Packet<R, L> v = compute_packet<L>(j, cache, std::index_sequence_for<Args...>{});
      if (role == CacheRole::store) get<kSlot>(cache) = v;
      return convert_packet<Want>(v);
    } else {
      return convert_packet<Want>(compute_packet<L>(j, cache, std::index_sequence_for<Args...>{}));
    }
  }
#endif

  /// Elements j .. j+V-1 as lanes; a shared node's cache slot holds its lanes.
  template <int V, class Cache>
  WEFT_HOST_DEVICE Lanes<Want, V> vec(std::int64_t j, Cache& cache) const {
    if constexpr (kSlot >= 0) {
      if (role == CacheRole::load) return convert_lanes<Want>(get<kSlot>(cache));
      Lanes<R, V> v = compute_vec<V>(j, cache, std::index_sequence_for<Args...>{});
      if (role == CacheRole::store) get<kSlot>(cache) = v;
      return convert_lanes<Want>(v);
    } else {
      return convert_lanes<Want>(compute_vec<V>(j, cache, std::index_sequence_for<Args...>{}));
    }
  }

  template <int V>
  bool vec_aligned() const {
    bool aligned = true;
    for_each_in(children, [&](const auto& c) { aligned = aligned && c.template vec_aligned<V>(); });
    return aligned;
  }

 private:
  // The first occurrence of a shared node type stores its value; later
  // occurrences that are the same tree load it; different trees of the same
  // type just compute.
  static CacheRole decide_role(const Node& node, BuildContext<Shared>& ctx) {
    if constexpr (kSlot >= 0) {
      const void*& first = ctx.first[kSlot];
      if (!first) {
        first = &node;
        return CacheRole::store;
      }
      return same_tree(*static_cast<const Node*>(first), node) ? CacheRole::load : CacheRole::none;
    } else {
      return CacheRole::none;
    }
  }

  template <std::size_t... Is>
  static Tuple<Evaluator<Args, C, kLinear, Shared>...> build_children(const Node& node, BuildContext<Shared>& ctx,
                                                                     std::index_sequence<Is...>) {
    return {Evaluator<Args, C, kLinear, Shared>(get<Is>(node.args), ctx)...};
  }

  // Operands are evaluated left to right (braced initialization), which is
  // the order BuildContext assigned cache roles in.
  template <class Cache, std::size_t... Is>
  WEFT_HOST_DEVICE R compute(std::int64_t j, Cache& cache, std::index_sequence<Is...>) const {
    Tuple<std::conditional_t<true, C, Args>...> v{get<Is>(children).coeff(j, cache)...};
    return R(op(get<Is>(v)...));
  }
#if !defined(__CUDA_ARCH__)
  template <int L, class Cache, std::size_t... Is>
  Packet<R, L> compute_packet(std::int64_t j, Cache& cache, std::index_sequence<Is...>) const {
    Tuple<std::conditional_t<true, Packet<C, L>, Args>...> v{get<Is>(children).template packet<L>(j, cache)...};
    // Bool arithmetic runs on int32 lanes of 0 / 1, where true + true is 2: back to 0 / 1, as
    // bool(a + b) in the scalar path (a float op reading the sum would otherwise see 2).
    if constexpr (std::is_same_v<C, bool>) return convert_packet<bool>(op(get<Is>(v)...));
    else return op(get<Is>(v)...);
  }
#endif
  // Operands left to right, as in compute(); then the op lane by lane.
  template <int V, class Cache, std::size_t... Is>
  WEFT_HOST_DEVICE Lanes<R, V> compute_vec(std::int64_t j, Cache& cache, std::index_sequence<Is...>) const {
    Tuple<std::conditional_t<true, Lanes<C, V>, Args>...> v{get<Is>(children).template vec<V>(j, cache)...};
    Lanes<R, V> out;
    WEFT_UNROLL
    for (int l = 0; l < V; ++l) out.v[l] = R(op(get<Is>(v).v[l]...));
    return out;
  }
};

/// cast<U>(e): e rounded to U, then read as Want.
template <class U, class E, class Want, bool kLinear, class Shared>
struct Evaluator<Cast<U, E>, Want, kLinear, Shared> {
  using From = std::conditional_t<std::is_same_v<typename E::value_type, bool>, bool, math_t<typename E::value_type>>;
  Evaluator<E, From, kLinear, Shared> child;

  Evaluator(const Cast<U, E>& node, BuildContext<Shared>& ctx) : child(node.arg, ctx) {}
  WEFT_HOST_DEVICE void seek(const std::int64_t* outer) { child.seek(outer); }
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t k, const Table& table) {
    child.select(k, table);
  }
  template <class Cache>
  WEFT_HOST_DEVICE Want coeff(std::int64_t j, Cache& cache) const {
    U rounded = U(convert_value<math_t<U>>(child.coeff(j, cache)));
    return convert_value<Want>(math_t<U>(rounded));
  }
#if !defined(__CUDA_ARCH__)
  template <int L, class Cache>
  Packet<Want, L> packet(std::int64_t j, Cache& cache) const {
    Packet<U, L> v = convert_packet<U>(child.template packet<L>(j, cache));
    if constexpr (is_16bit_float_v<U>) {
      alignas(64) U rounded[L];
      simd::store_float(rounded, v);
      v = simd::load_float<L>(rounded);
    }
    return convert_packet<Want>(v);
  }
#endif

  template <int V, class Cache>
  WEFT_HOST_DEVICE Lanes<Want, V> vec(std::int64_t j, Cache& cache) const {
    Lanes<From, V> x = child.template vec<V>(j, cache);
    Lanes<Want, V> out;
    WEFT_UNROLL
    for (int l = 0; l < V; ++l) {
      U rounded = U(convert_value<math_t<U>>(x.v[l]));
      out.v[l] = convert_value<Want>(math_t<U>(rounded));
    }
    return out;
  }
  template <int V>
  bool vec_aligned() const {
    return child.template vec_aligned<V>();
  }
};

/// Whether every op in the tree has a packet form for its lane type.
template <class N>
inline constexpr bool packet_capable_v = true;
template <class Op, class... Args>
inline constexpr bool packet_capable_v<Map<Op, Args...>> =
    (std::is_floating_point_v<typename Map<Op, Args...>::compute_type> || ops::has_integer_packets<Op>) &&
    (packet_capable_v<Args> && ...);
template <class U, class E>
inline constexpr bool packet_capable_v<Cast<U, E>> = packet_capable_v<E>;

/// Widest lane (bytes) a tree's values take; sets the kernel's packet length.
template <class N>
inline constexpr std::size_t lane_bytes_v = 0;  // numbers adopt their parent's lane
template <class T>
inline constexpr std::size_t lane_bytes_v<Leaf<T>> = sizeof(lane_t<T>);
template <class Op, class... Args>
inline constexpr std::size_t lane_bytes_v<Map<Op, Args...>> =
    std::max({sizeof(lane_t<typename Map<Op, Args...>::compute_type>),
              sizeof(lane_t<typename Map<Op, Args...>::value_type>), lane_bytes_v<Args>...});
template <class U, class E>
inline constexpr std::size_t lane_bytes_v<Cast<U, E>> = std::max({sizeof(lane_t<U>), sizeof(float), lane_bytes_v<E>});

/// Widest element (bytes) a tree reads from memory; sets the CUDA vector width.
template <class N>
inline constexpr std::size_t element_bytes_v = 0;  // numbers are kernel arguments
template <class T>
inline constexpr std::size_t element_bytes_v<Leaf<T>> = sizeof(T);
template <class Op, class... Args>
inline constexpr std::size_t element_bytes_v<Map<Op, Args...>> = std::max({std::size_t(0), element_bytes_v<Args>...});
template <class U, class E>
inline constexpr std::size_t element_bytes_v<Cast<U, E>> = element_bytes_v<E>;

}  // namespace weft::detail
