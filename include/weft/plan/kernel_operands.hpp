// SPDX-License-Identifier: MIT
/// @file KernelOperands: the statements of one kernel as plain data (destinations, tensors, lists and
/// every right-hand side's nodes in preorder), recorded by ONE walk over the expression types.
///
/// Why: the checks, the iteration plan and the log read operands only through their shapes,
/// strides, devices and addresses. Written against the typed nodes, each of them walked every
/// expression type again and compiled once per kernel type; against KernelOperands they are
/// ordinary functions, compiled once per translation unit, and a kernel type adds only this walk
/// and its evaluators (docs/architecture.md: AdamW 13.3 -> 9.2 s at -O2, a unit of random
/// expression-tree tests 5.4 -> 3.9 s at -O0).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>

#include "weft/core/config.hpp"
#include "weft/core/tensor.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/expr/tree.hpp"
#include "weft/plan/kernel.hpp"

namespace weft::detail {

/// A tensor without its dtype: what checks and plans read. It points into the Tensor's own shape
/// and strides (valid while the tensor object lives; rebinding a leaf keeps its address).
struct TensorRef {
  const char* dtype = "";
  std::int64_t element_bytes = 0;
  bool defined = false;
  Device device = Device::cpu();
  const Shape* shape_ptr = nullptr;
  const Strides* strides_ptr = nullptr;
  std::int64_t offset = 0;
  const Storage* storage = nullptr;

  const Shape& shape() const { return *shape_ptr; }
  /// Address of element (0, ..., 0), as Tensor::data.
  const void* data() const {
    return storage ? static_cast<const char*>(storage->data()) + offset * element_bytes : nullptr;
  }
  const Strides& strides() const { return *strides_ptr; }
  bool contiguous() const { return weft::is_contiguous(shape(), strides()); }
};

template <class T>
TensorRef tensor_ref(const TensorBase<T>& t) {
  TensorRef r;
  r.dtype = dtype_name<T>();
  r.element_bytes = std::int64_t(sizeof(T));
  r.shape_ptr = &t.shape();
  r.strides_ptr = &t.strides();
  if (!t.defined()) return r;
  r.defined = true;
  r.device = t.device();
  r.offset = t.offset();
  r.storage = t.storage().get();
  return r;
}

/// A TensorList without its dtype; for_each_member(context, f) calls f(context, i, tensor i) for
/// every member (the loop is typed, the callback is not: one callback serves every dtype).
struct ListRef {
  using MemberFn = void (*)(void* context, std::size_t i, const TensorRef& member);
  const void* list = nullptr;  // the TensorList<T>
  const void* id = nullptr;    // its identity (TensorList::id)
  std::size_t size = 0;
  const char* dtype = "";
  void (*visit)(const void* list, void* context, MemberFn f) = nullptr;
  const ListMembers* members = nullptr;  // TensorList::member_table

  void for_each_member(void* context, MemberFn f) const { visit(list, context, f); }
};

template <class T>
ListRef list_ref(const TensorList<T>& list) {
  return {&list, list.id(), list.size(), dtype_name<T>(), [](const void* l, void* context, ListRef::MemberFn f) {
            const auto& tensors = *static_cast<const TensorList<T>*>(l);
            for (std::size_t i = 0; i < tensors.size(); ++i) f(context, i, tensor_ref(tensors[i]));
          },
          &list.member_table()};
}

/// A tensor operand, or a destination (tensor == nullptr).
struct TensorOperand {
  TensorRef ref;
  void* tensor = nullptr;  // the Leaf's TensorView<const T>
  void (*rebind_to_copy)(void* tensor, TensorRef& ref) = nullptr;
};

inline namespace WEFT_BACKEND_ABI {
/// Rebinds a Leaf's view to a copy of its values (a view's operator= would write into it).
template <class T>
void rebind_to_copy(void* tensor, TensorRef& ref) {
  auto& t = *static_cast<TensorView<const T>*>(tensor);
  TensorView<const T> copy = t.clone();
  std::destroy_at(&t);
  std::construct_at(&t, std::move(copy));
  ref = tensor_ref(t);
}
}  // namespace WEFT_BACKEND_ABI

/// One node of a right-hand side (or a destination).
struct ExprNode {
  enum class Kind : unsigned char { tensor, list, number, number_list, op, cast };
  Kind kind = Kind::number;
  const char* name = "";  // op: its name; cast: the dtype it converts to
  functors::Notation notation = functors::Notation::call;
  int arity = 0;          // operands that follow in preorder
  int slot = -1;          // op: its shared-subexpression slot, -1 if none
  bool repeat = false;    // op: the same tree as its slot's first occurrence (the kernel loads it)
  bool resizable = false; // output: a Tensor that takes its right-hand side's shape (y = e)
  int index = -1;         // tensor: into KernelOperands::tensors; list: into lists
  const void* id = nullptr;   // number list: its identity
  std::size_t count = 0;      // number list: its length
  char number_type = 'd';     // number: 'b' bool, 'i' int64 (in integer), 'd' double (in real)
  std::int64_t integer = 0;
  double real = 0;
};

/// Nodes in an expression tree.
template <class N>
inline constexpr std::size_t node_count_v = tree_sum<N>([](auto) { return 1; });

/// The statements of one kernel, statement s writing outputs[s] from nodes [rhs_begin[s],
/// rhs_begin[s+1]). It views arrays the caller holds (OperandStorage, on the stack: a kernel call
/// allocates nothing for its checks).
struct KernelOperands {
  std::span<ExprNode> outputs;
  std::span<ExprNode> nodes;
  std::span<std::size_t> rhs_begin;
  std::span<TensorOperand> tensors;
  std::span<ListRef> lists;
  std::span<const void*> shared_first;  // per shared slot: its first occurrence (while recording)
  std::span<Shape> rhs_shapes;          // per statement: its operands broadcast (set by the checks)
  std::span<Strides> planned;           // room for every operand's strides (plan_statements writes them)

  std::size_t statements() const { return outputs.size(); }
  const TensorRef& tensor(const ExprNode& n) const { return tensors[std::size_t(n.index)].ref; }
  const ListRef& list(const ExprNode& n) const { return lists[std::size_t(n.index)]; }
  /// Calls f(node) for each node of statement s's right-hand side of this kind.
  template <class F>
  void for_each_in_statement(std::size_t s, ExprNode::Kind kind, F&& f) const {
    for (std::size_t i = rhs_begin[s]; i < rhs_begin[s + 1]; ++i)
      if (nodes[i].kind == kind) f(nodes[i]);
  }

  // Recording (kernel_operands): per statement its destination, then its right-hand side's nodes.
  std::size_t node_count = 0, output_count = 0, tensor_count = 0, list_count = 0;
  bool find_repeats = false;  // same_tree against each shared slot's first occurrence (the log only)
  ExprNode& add(ExprNode::Kind kind) {
    ExprNode& n = nodes[node_count++];
    n = ExprNode{};
    n.kind = kind;
    return n;
  }
  void add_tensor(ExprNode& n, const TensorRef& ref, void* tensor, void (*rebind)(void*, TensorRef&)) {
    n.index = int(tensor_count);
    tensors[tensor_count++] = {ref, tensor, rebind};
  }
  void add_list(ExprNode& n, const ListRef& ref) {
    n.index = int(list_count);
    lists[list_count++] = ref;
  }
  /// Statement output_count writes `dst` (a tensor or list node); its nodes start here.
  ExprNode& add_output(ExprNode::Kind kind) {
    rhs_begin[output_count] = node_count;
    ExprNode& n = outputs[output_count++];
    n = ExprNode{};
    n.kind = kind;
    return n;
  }
};

/// N slots for T, left uninitialized: a kernel call writes only what its statements record (T is
/// trivially destructible).
template <class T, std::size_t N>
struct Slots {
  static_assert(std::is_trivially_destructible_v<T>);
  union {
    T items[N];
  };
  Slots() {}
};

/// The arrays a KernelOperands views, sized for statements Stmts at compile time.
template <class... Stmts>
struct OperandStorage {
  static constexpr std::size_t kStatements = sizeof...(Stmts);
  static constexpr std::size_t kNodes = (0 + ... + node_count_v<typename Stmts::expr_type>);
  static constexpr std::size_t kShared = shared_nodes_t<typename Stmts::expr_type...>::size;

  Slots<ExprNode, kStatements> outputs;
  Slots<ExprNode, kNodes> nodes;
  Slots<std::size_t, kStatements + 1> rhs_begin;
  Slots<TensorOperand, kStatements + kNodes> tensors;
  Slots<ListRef, kStatements + kNodes> lists;
  const void* shared_first[kShared + 1] = {};  // (+1: no zero-length array)
  Slots<Shape, kStatements> rhs_shapes;
  Slots<Strides, kStatements + kNodes> planned;
};

inline namespace WEFT_BACKEND_ABI {  // the recorded tensors carry rebind_to_copy<T>

/// Records each node of a right-hand side. One type per set of shared slots (most kernels have
/// none), so a subtree's walk is compiled once per translation unit, whatever kernel holds it.
template <class Shared>
struct ExprRecorder {
  KernelOperands& k;

  template <class N>
  void operator()(N& n) const {
    if constexpr (is_map_v<N>) {
      constexpr int slot = index_in<N, Shared>;
      bool repeat = false;
      if constexpr (slot >= 0) {
        if (k.find_repeats) repeat = cache_role(k.shared_first[slot], n) == CacheRole::load;
      }
      using Op = decltype(n.op);
      ExprNode& e = k.add(ExprNode::Kind::op);
      e.name = Op::name, e.notation = Op::notation, e.arity = int(decltype(n.args)::size), e.slot = slot;
      e.repeat = repeat;
    } else if constexpr (is_cast_v<N>) {
      ExprNode& e = k.add(ExprNode::Kind::cast);
      e.name = dtype_name<typename N::value_type>(), e.arity = 1;
    } else if constexpr (requires { n.tensor; }) {
      k.add_tensor(k.add(ExprNode::Kind::tensor), tensor_ref(n.tensor), &n.tensor,
                   &rebind_to_copy<typename N::value_type>);
    } else if constexpr (requires { n.list; }) {
      k.add_list(k.add(ExprNode::Kind::list), list_ref(n.list));
    } else if constexpr (requires { n.values; }) {
      ExprNode& e = k.add(ExprNode::Kind::number_list);
      e.id = n.values.id(), e.count = n.values.size();
    } else {
      using S = typename N::value_type;
      ExprNode& e = k.add(ExprNode::Kind::number);
      e.number_type = std::is_same_v<S, bool> ? 'b' : std::is_same_v<S, double> ? 'd' : 'i';
      if constexpr (std::is_same_v<S, double>) e.real = n.value;
      else e.integer = std::int64_t(n.value);
    }
  }
};

template <class T, class E>
void record_destination(const Assignment<T, E>& stmt, KernelOperands& k) {
  ExprNode& out = k.add_output(ExprNode::Kind::tensor);
  out.resizable = stmt.owner != nullptr;
  k.add_tensor(out, tensor_ref(stmt.dst), nullptr, nullptr);
}
template <class T, class E>
void record_destination(const ListAssignment<T, E>& stmt, KernelOperands& k) {
  k.add_list(k.add_output(ExprNode::Kind::list), list_ref(*stmt.dst));
}

/// The operands of statements (Assignment or ListAssignment), by one walk over their types, in
/// `storage`; with find_repeats, which shared subexpressions repeat their slot's first occurrence
/// (what the printer needs; the kernel's evaluators decide that for themselves).
template <class... Stmts>
KernelOperands kernel_operands(OperandStorage<Stmts...>& storage, bool find_repeats, Stmts&... stmts) {
  using Shared = shared_nodes_t<typename Stmts::expr_type...>;
  KernelOperands k{storage.outputs.items, storage.nodes.items, storage.rhs_begin.items, storage.tensors.items,
                   storage.lists.items, std::span<const void*>(storage.shared_first, Shared::size),
                   storage.rhs_shapes.items, storage.planned.items};
  k.find_repeats = find_repeats;
  ExprRecorder<Shared> record{k};
  ((record_destination(stmts, k), visit_nodes(stmts.rhs, record)), ...);
  k.rhs_begin[k.output_count] = k.node_count;
  k.tensors = k.tensors.first(k.tensor_count);
  k.lists = k.lists.first(k.list_count);
  return k;
}

}  // namespace WEFT_BACKEND_ABI

/// The bytes a view can touch: [lo, hi) within its storage.
struct ByteRange {
  const Storage* storage;
  std::int64_t lo, hi;
};

inline ByteRange byte_range(const TensorRef& t) {
  if (!t.defined) return {nullptr, 0, 0};
  std::int64_t lo = t.offset, hi = t.offset;
  for (int d = 0; d < t.shape().rank(); ++d) {
    if (t.shape()[d] == 0) return {t.storage, 0, 0};
    std::int64_t reach = (t.shape()[d] - 1) * t.strides()[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return {t.storage, lo * t.element_bytes, (hi + 1) * t.element_bytes};
}

inline bool overlaps(const ByteRange& a, const ByteRange& b) {
  return a.storage && a.storage == b.storage && a.lo < b.hi && b.lo < a.hi;
}

/// Whether two views with the same strides are disjoint boxes of one coordinate system whose
/// addresses are unique (the slices of one tensor along a dim, e.g. cat's outputs), where their
/// byte ranges may interleave. b's offset from a is decomposed greedily over the strides, largest
/// first, into coordinates c; if every stride exceeds the reach of the smaller ones over the union
/// of both boxes, an address has one coordinate tuple there, so the views share an element iff
/// their boxes [0, extent_a) and [c, c + extent_b) intersect in every dim. False when unsure.
WEFT_SHARED bool disjoint_boxes(const TensorRef& a, const TensorRef& b)
#if WEFT_SHARED_BODIES
{
  if (a.offset == b.offset || a.element_bytes != b.element_bytes || a.shape().rank() != b.shape().rank() ||
      !(a.strides() == b.strides()))
    return false;
  const TensorRef& lo = a.offset < b.offset ? a : b;
  const TensorRef& hi = a.offset < b.offset ? b : a;
  int dims[kMaxRank];
  std::int64_t c[kMaxRank];
  int n = 0;
  for (int d = 0; d < lo.shape().rank(); ++d) {
    if (lo.strides()[d] > 0) dims[n++] = d;
    else if (lo.shape()[d] > 1 || hi.shape()[d] > 1) return false;
  }
  // Largest stride first: an insertion sort of n <= kMaxRank dims (std::sort's unguarded insertion
  // step tripped GCC 12's -Warray-bounds here: it cannot see that n <= kMaxRank).
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && lo.strides()[dims[j - 1]] < lo.strides()[dims[j]]; --j) std::swap(dims[j - 1], dims[j]);
  std::int64_t delta = hi.offset - lo.offset;
  for (int i = 0; i < n; ++i) c[i] = delta / lo.strides()[dims[i]], delta -= c[i] * lo.strides()[dims[i]];
  if (delta != 0) return false;
  std::int64_t reach = 0;  // of the smaller strides over the union box
  bool apart = false;
  for (int i = n; i-- > 0;) {
    const std::int64_t stride = lo.strides()[dims[i]], a_extent = lo.shape()[dims[i]], b_extent = hi.shape()[dims[i]];
    if (stride <= reach) return false;
    reach += stride * (std::max(a_extent, c[i] + b_extent) - 1);
    apart = apart || c[i] >= a_extent;
  }
  return apart;
}
#else
;
#endif

/// Whether two views may share an element: overlapping byte ranges, unless disjoint_boxes.
inline bool share_elements(const TensorRef& a, const TensorRef& b) {
  return overlaps(byte_range(a), byte_range(b)) && !disjoint_boxes(a, b);
}

}  // namespace weft::detail
