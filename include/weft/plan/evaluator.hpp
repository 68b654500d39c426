// SPDX-License-Identifier: MIT
/// @file Evaluators: the flat, device-copyable form of an expression tree that a kernel runs, one element (coeff) or one vector value of a backend's Target at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "weft/core/tuple.hpp"
#include "weft/expr/nodes.hpp"
#include "weft/expr/tree.hpp"
#include "weft/plan/iteration.hpp"

namespace weft::detail {

// The vector path is a template over the backend's Target (its load, store, broadcast, convert
// and apply), host-device for CUDA's. The CPU's Target is host code: WEFT_VECTOR_PATH, before the
// template, tells nvcc not to check a host-device template's calls into it.
#if defined(__CUDACC__)
#define WEFT_VECTOR_PATH _Pragma("nv_exec_check_disable")
#else
#define WEFT_VECTOR_PATH
#endif

/// A math value as another dtype's math value; anything to bool tests != 0. A float becomes a
/// narrow integer through int32 (truncated toward zero, then wrapped to the narrow width), as in
/// PyTorch's CPU casts (300.0 -> int8 is 44): defined for |v| < 2^31.
template <class Want, class V>
WEFT_HOST_DEVICE inline Want convert_value(V v) {
  if constexpr (std::is_same_v<Want, bool>) return v != V(0);
  else if constexpr (is_narrow_int_v<Want> && !std::is_integral_v<V>) return static_cast<Want>(static_cast<std::int32_t>(v));
  else return static_cast<Want>(v);
}

// Loops with a constant trip count that a GPU thread must unroll (its indices then stay in
// registers); host compilers decide for themselves.
#if defined(__CUDA_ARCH__)
#define WEFT_UNROLL _Pragma("unroll")
#else
#define WEFT_UNROLL
#endif

/// Whether p is aligned to V of its elements (a vector path moves V elements per access).
template <int V, class T>
inline bool aligned_to(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % (sizeof(T) * V) == 0;
}

/// Where one operand lives in the iteration space. In the linear layout the
/// element index is the offset; otherwise seek() positions a row pointer
/// from the outer coordinates and the inner stride walks the row.
template <class T, bool kLinear>
struct Cursor {
  /// Whether elements j, j+1, ... of a row are adjacent in memory (the linear layout).
  static constexpr bool kContiguous = kLinear;
  T* data = nullptr;
  T* row = nullptr;
  std::int64_t strides[kLinear ? 1 : kMaxRank] = {};
  std::int64_t inner = 1;
  int outer_rank = 0;

  Cursor() = default;
  /// `collapsed`: the operand's strides in the iteration space (IterationSpace::collapse).
  Cursor(T* base, const Strides& collapsed) : data(base), row(base) {
    if constexpr (!kLinear) {
      outer_rank = collapsed.rank() - 1;
      for (int d = 0; d < outer_rank; ++d) strides[d] = collapsed[d];
      inner = collapsed[outer_rank];
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
  WEFT_HOST_DEVICE std::int64_t step() const { return kLinear ? 1 : inner; }
  /// at(j) where the caller knows the row is contiguous (inner is 1): no stride arithmetic.
  WEFT_HOST_DEVICE T* unit(std::int64_t j) const {
    if constexpr (kLinear) return data + j;
    else return row + j;
  }
  /// A single tensor's cursor stays put when a foreach kernel selects tensor k.
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t, const Table&) {}
};

/// The base pointer of every tensor of every list operand (and the numbers of
/// every ScalarList) of a foreach kernel. Evaluators keep an id into it; the
/// executor moves them to tensor k with select(k, table). A list (or
/// ScalarList) read several times gets one id: `p = p - lr * g` has two rows,
/// and an AdamW step that names p, g, m and v fourteen times has four. A list's
/// row is its own array of element pointers (TensorList::member_table), not a
/// copy: building the table costs the same for 10 tensors as for 10,000.
struct ListTable {
  std::vector<std::span<void* const>> pointers;  // [list id][tensor]
  std::vector<std::vector<double>> numbers;      // [ScalarList id][tensor]
  std::vector<int> element_bytes;                // [list id]: sizeof(T)
  std::vector<const void*> list_ids, number_ids;  // TensorList::id / ScalarList::id of each row

  template <class T>
  int add_list(const TensorList<T>& list) {
    for (std::size_t i = 0; i < list_ids.size(); ++i)
      if (list_ids[i] == list.id()) return int(i);
    pointers.push_back(list.member_table().data);
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
  static constexpr bool kContiguous = true;  // list members are contiguous
  T* data = nullptr;
  int id = 0;
  explicit ListCursor(int list_id) : id(list_id) {}
  WEFT_HOST_DEVICE void seek(const std::int64_t*) {}
  WEFT_HOST_DEVICE T* at(std::int64_t j) const { return data + j; }
  WEFT_HOST_DEVICE std::int64_t step() const { return 1; }
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t k, const Table& table) {
    data = static_cast<T*>(table.pointer(id, k));
  }
};

/// How a shared subexpression's occurrence uses the per-element cache.
enum class CacheRole : std::uint8_t { none, store, load };

/// The role of an occurrence of a shared node type: the first one (recorded in `first`) stores its
/// value per element; a later occurrence that is the same tree (same tensors, numbers and ops)
/// loads it; a different tree of the same type computes its own.
template <class Node>
CacheRole cache_role(const void*& first, const Node& node) {
  if (!first) {
    first = &node;
    return CacheRole::store;
  }
  return same_tree(*static_cast<const Node*>(first), node) ? CacheRole::load : CacheRole::none;
}

/// Host-side state while building evaluators: the first occurrence of each
/// shared node type, against which later occurrences are compared.
template <class Shared>
struct BuildContext {
  const void* first[Shared::size == 0 ? 1 : Shared::size] = {};
  const IterationSpace* space = nullptr;
  ListTable* lists = nullptr;  // foreach kernels only
  /// The strides plan_statements computed for the space (collapsed in the strided layout; the
  /// linear one reads none): the destinations', then every tensor leaf's in preorder, the order
  /// the evaluators are built in; each is taken once. Null for kernels planned elsewhere
  /// (reductions, row epilogues).
  const Strides* planned = nullptr;
};

/// An operand's strides in the kernel's iteration space: the next planned ones, or its own
/// broadcast to the space's shape and collapsed.
template <class Shared>
Strides operand_strides(BuildContext<Shared>& ctx, const Shape& shape, const Strides& strides) {
  if (ctx.planned) return *ctx.planned++;
  return ctx.space->collapse(broadcast_strides(shape, strides, ctx.space->full));
}

template <class Node, class Want, bool kLinear, class Shared>
struct Evaluator;

/// Reads an operand's elements of dtype T through a cursor, converted to Want: a tensor's (Cursor)
/// or the current list member's (ListCursor, moved to tensor k by select).
template <class ReadCursor, class T, class Want>
struct CursorRead {
  ReadCursor cursor;

  WEFT_HOST_DEVICE void seek(const std::int64_t* outer) { cursor.seek(outer); }
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t k, const Table& table) {
    cursor.select(k, table);
  }
  template <class Cache>
  WEFT_HOST_DEVICE Want coeff(std::int64_t j, Cache&) const {
    return convert_value<Want>(math_t<T>(*cursor.at(j)));
  }
  /// Elements j .. j+N-1 as one vector value of Target: a CPU packet (backend/cpu/simd/packet.hpp) or
  /// a CUDA thread's lanes (backend/cuda/lanes.hpp). The strided layout runs vectors on CUDA
  /// only in foreach kernels, where a single tensor holds one element (stride 0): it is read
  /// once and broadcast.
  WEFT_VECTOR_PATH
  template <class Target, int N, class Cache>
  WEFT_HOST_DEVICE typename Target::template Value<Want, N> vector(std::int64_t j, Cache&) const {
    return Target::template load<Want, N>(cursor, j);
  }
  /// The CUDA vector path needs every operand aligned to N elements (the foreach launcher
  /// checks list members per tensor).
  template <int V>
  bool vec_aligned() const {
    return aligned_to<V>(cursor.data);
  }
};

/// Reads a tensor (converted to Want).
template <class T, class Want, bool kLinear, class Shared>
struct Evaluator<Leaf<T>, Want, kLinear, Shared> : CursorRead<Cursor<const T, kLinear>, T, Want> {
  Evaluator(const Leaf<T>& leaf, BuildContext<Shared>& ctx)
      : CursorRead<Cursor<const T, kLinear>, T, Want>{
            Cursor<const T, kLinear>(leaf.tensor.data(), operand_strides(ctx, leaf.tensor.shape(), leaf.tensor.strides()))} {}
};

/// A number as every element (the same value at every index), already converted to Want.
template <class Want>
struct NumberRead {
  Want value{};

  WEFT_HOST_DEVICE void seek(const std::int64_t*) {}
  template <class Cache>
  WEFT_HOST_DEVICE Want coeff(std::int64_t, Cache&) const {
    return value;
  }
  WEFT_VECTOR_PATH
  template <class Target, int N, class Cache>
  WEFT_HOST_DEVICE typename Target::template Value<Want, N> vector(std::int64_t, Cache&) const {
    return Target::template broadcast<Want, N>(value);
  }
  template <int V>
  bool vec_aligned() const {
    return true;
  }
};

/// A number, converted once to Want when the kernel is built.
template <class S, class Want, bool kLinear, class Shared>
struct Evaluator<Scalar<S>, Want, kLinear, Shared> : NumberRead<Want> {
  Evaluator(const Scalar<S>& s, BuildContext<Shared>&) : NumberRead<Want>{convert_value<Want>(s.value)} {}
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t, const Table&) {}
};

/// A row epilogue's value for the current row, read from its source when the kernel moves to a row
/// (seek) and broadcast along it: pass 1 has just computed it (backend/row_epilogue.hpp).
template <class T, class Want, bool kLinear, class Shared>
struct Evaluator<RowValue<T>, Want, kLinear, Shared> : NumberRead<Want> {
  const T* source;

  Evaluator(const RowValue<T>& node, BuildContext<Shared>&) : source(node.source) {}
  WEFT_HOST_DEVICE void seek(const std::int64_t*) { this->value = convert_value<Want>(math_t<T>(*source)); }
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t, const Table&) {}
};

/// Reads tensor k of a list (select(k) picks the tensor; members are contiguous).
template <class T, class Want, bool kLinear, class Shared>
struct Evaluator<ListLeaf<T>, Want, kLinear, Shared> : CursorRead<ListCursor<const T>, T, Want> {
  static_assert(!kLinear, "foreach kernels run in the strided layout");
  Evaluator(const ListLeaf<T>& leaf, BuildContext<Shared>& ctx)
      : CursorRead<ListCursor<const T>, T, Want>{ListCursor<const T>(ctx.lists->add_list(leaf.list))} {}
};

/// Number k of a ScalarList, converted to Want when select(k) picks it.
template <class S, class Want, bool kLinear, class Shared>
struct Evaluator<ListScalar<S>, Want, kLinear, Shared> : NumberRead<Want> {
  int id;

  Evaluator(const ListScalar<S>& node, BuildContext<Shared>& ctx) : id(ctx.lists->add_numbers(node.values)) {}
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t k, const Table& table) {
    this->value = convert_value<Want>(table.number(id, k));
  }
};

template <class N>
using node_value_t = std::conditional_t<std::is_same_v<typename N::value_type, bool>, bool, typename N::compute_type>;

/// The scalar path's cache: one value per shared node.
template <class List>
struct scalar_cache;
template <class... Ns>
struct scalar_cache<TypeList<Ns...>> {
  using type = Tuple<node_value_t<Ns>...>;
};

/// Whether a tree's value is the same along a row of a row epilogue: it reads row values and
/// numbers only, no tensor (`rsqrt(var + eps)` in the layer-norm formula).
template <class N>
inline constexpr bool row_invariant_v =
    tree_sum<N>([]<class M>(std::type_identity<M>) { return is_instance_v<M, RowValue> ? 1 : 0; }) > 0 &&
    tree_all<N>([]<class M>(std::type_identity<M>) { return !is_leaf_v<M>; });

/// A row-invariant node's value for the current row; nothing for other nodes (an empty base, so
/// that their evaluators keep their size: a CUDA kernel's parameters are sized on the host).
template <class R, bool kRowInvariant>
struct RowInvariantSlot {};
template <class R>
struct RowInvariantSlot<R, true> {
  R row_value{};
};

/// op(children...) in the op's compute type; a shared node computes once per
/// element and later occurrences read the per-element cache. A row-invariant node
/// (row_invariant_v) computes once per row, when the kernel moves to it, and is broadcast.
template <class Op, class... Args, class Want, bool kLinear, class Shared>
struct Evaluator<Map<Op, Args...>, Want, kLinear, Shared>
    : RowInvariantSlot<std::conditional_t<std::is_same_v<typename Map<Op, Args...>::value_type, bool>, bool,
                                          typename Map<Op, Args...>::compute_type>,
                       row_invariant_v<Map<Op, Args...>>> {
  using Node = Map<Op, Args...>;
  using C = typename Node::compute_type;
  using R = std::conditional_t<std::is_same_v<typename Node::value_type, bool>, bool, C>;
  static constexpr bool kRowInvariant = row_invariant_v<Node>;
  static constexpr int kSlot = kRowInvariant ? -1 : index_in<Node, Shared>;

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
    if constexpr (kRowInvariant) {
      typename scalar_cache<Shared>::type cache{};
      this->row_value = compute(0, cache, std::index_sequence_for<Args...>{});
    }
  }
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t k, const Table& table) {
    for_each_in(children, [&](auto& c) { c.select(k, table); });
  }

  template <class Cache>
  WEFT_HOST_DEVICE Want coeff(std::int64_t j, Cache& cache) const {
    if constexpr (kRowInvariant) {
      return convert_value<Want>(this->row_value);
    } else if constexpr (kSlot >= 0) {
      if (role == CacheRole::load) return convert_value<Want>(get<kSlot>(cache));
      R v = compute(j, cache, std::index_sequence_for<Args...>{});
      if (role == CacheRole::store) get<kSlot>(cache) = v;
      return convert_value<Want>(v);
    } else {
      return convert_value<Want>(compute(j, cache, std::index_sequence_for<Args...>{}));
    }
  }

  /// Elements j .. j+N-1 as one vector value of Target: a CPU packet (backend/cpu/simd/packet.hpp) or
  /// a CUDA thread's lanes (backend/cuda/lanes.hpp).
  /// A shared node's cache slot holds its vector value.
  WEFT_VECTOR_PATH
  template <class Target, int N, class Cache>
  WEFT_HOST_DEVICE typename Target::template Value<Want, N> vector(std::int64_t j, Cache& cache) const {
    if constexpr (kRowInvariant) {
      return Target::template broadcast<Want, N>(convert_value<Want>(this->row_value));
    } else if constexpr (kSlot >= 0) {
      if (role == CacheRole::load) return Target::template convert<Want>(get<kSlot>(cache));
      typename Target::template Value<R, N> v = compute_vector<Target, N>(j, cache, std::index_sequence_for<Args...>{});
      if (role == CacheRole::store) get<kSlot>(cache) = v;
      return Target::template convert<Want>(v);
    } else {
      return Target::template convert<Want>(compute_vector<Target, N>(j, cache, std::index_sequence_for<Args...>{}));
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
      return cache_role(ctx.first[kSlot], node);
    } else {
      return CacheRole::none;
    }
  }

  template <std::size_t... Is>
  static Tuple<Evaluator<Args, C, kLinear, Shared>...> build_children(const Node& node, BuildContext<Shared>& ctx,
                                                                     std::index_sequence<Is...>) {
    return {{{Evaluator<Args, C, kLinear, Shared>(get<Is>(node.args), ctx)}...}};
  }

  // Operands are evaluated left to right (braced initialization), which is
  // the order BuildContext assigned cache roles in.
  template <class Cache, std::size_t... Is>
  WEFT_HOST_DEVICE R compute(std::int64_t j, Cache& cache, std::index_sequence<Is...>) const {
    Tuple<std::conditional_t<true, C, Args>...> v{{{get<Is>(children).coeff(j, cache)}...}};
    return R(op(get<Is>(v)...));
  }
  // Operands left to right, as in compute(); then the op on the vector values (Target::apply).
  WEFT_VECTOR_PATH
  template <class Target, int N, class Cache, std::size_t... Is>
  WEFT_HOST_DEVICE typename Target::template Value<R, N> compute_vector(std::int64_t j, Cache& cache,
                                                                        std::index_sequence<Is...>) const {
    Tuple<std::conditional_t<true, typename Target::template Value<C, N>, Args>...> v{
        {{get<Is>(children).template vector<Target, N>(j, cache)}...}};
    return Target::template apply<R, C, N, typename Node::value_type>(op, get<Is>(v)...);
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
  WEFT_VECTOR_PATH
  template <class Target, int N, class Cache>
  WEFT_HOST_DEVICE typename Target::template Value<Want, N> vector(std::int64_t j, Cache& cache) const {
    return Target::template convert<Want>(Target::template round_to<U>(child.template vector<Target, N>(j, cache)));
  }
  template <int V>
  bool vec_aligned() const {
    return child.template vec_aligned<V>();
  }
};

/// Widest element (bytes) a tree reads from memory; sets the CUDA vector width.
/// Numbers are kernel arguments; lists are read one member at a time, through their own cursors.
template <class N>
inline constexpr std::size_t element_bytes_v = tree_max<N>([]<class M>(std::type_identity<M>) {
  if constexpr (is_instance_v<M, Leaf>) return sizeof(typename M::value_type);
  else return 0;
});

}  // namespace weft::detail
