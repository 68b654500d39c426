// SPDX-License-Identifier: MIT
/// @file KernelOperands: the statements of one kernel as plain data (destinations, tensors, lists and
/// every right-hand side's nodes in preorder), recorded by ONE walk over the expression types.
///
/// Why: the checks, the iteration plan and the log read operands only through their shapes,
/// strides, devices and addresses. Written against the typed nodes, each of them walked every
/// expression type again and compiled once per kernel type (at -O0 a random expression tree spent
/// 40% of its compile time there); against KernelOperands they are ordinary functions, compiled
/// once per translation unit, and a kernel type adds only this walk and its evaluators.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "weft/core/tensor.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/plan/kernel.hpp"

namespace weft::detail {

/// A tensor without its dtype: what checks and plans read.
struct TensorRef {
  const char* dtype = "";
  std::int64_t element_bytes = 0;
  bool defined = false;
  bool contiguous = false;
  Device device = Device::cpu();
  Shape shape;
  Strides strides;
  std::int64_t offset = 0;
  const Storage* storage = nullptr;
  const void* data = nullptr;
};

template <class T>
TensorRef tensor_ref(const Tensor<T>& t) {
  TensorRef r;
  r.dtype = dtype_name<T>();
  r.element_bytes = std::int64_t(sizeof(T));
  if (!t.defined()) return r;
  r.defined = true;
  r.contiguous = t.is_contiguous();
  r.device = t.device();
  r.shape = t.shape();
  r.strides = t.strides();
  r.offset = t.offset();
  r.storage = t.storage().get();
  r.data = t.data();
  return r;
}

/// A TensorList without its dtype; at(k) describes its tensor k.
struct ListRef {
  const void* list = nullptr;  // the TensorList<T>
  const void* id = nullptr;    // its identity (TensorList::id)
  std::size_t size = 0;
  const char* dtype = "";
  TensorRef (*member)(const void* list, std::size_t k) = nullptr;

  TensorRef at(std::size_t k) const { return member(list, k); }
};

template <class T>
ListRef list_ref(const TensorList<T>& list) {
  return {&list, list.id(), list.size(), dtype_name<T>(),
          [](const void* l, std::size_t k) { return tensor_ref((*static_cast<const TensorList<T>*>(l))[k]); }};
}

/// A tensor operand, or a destination (tensor == nullptr).
struct TensorOperand {
  TensorRef ref;
  void* tensor = nullptr;  // the Leaf's Tensor<T>
  void (*rebind_to_copy)(void* tensor, TensorRef& ref) = nullptr;
};

/// Rebinds a Leaf's tensor to a copy of its values (a Tensor's operator= would write into the view).
template <class T>
void rebind_to_copy(void* tensor, TensorRef& ref) {
  auto& t = *static_cast<Tensor<T>*>(tensor);
  Tensor<T> copy = t.clone();
  std::destroy_at(&t);
  std::construct_at(&t, std::move(copy));
  ref = tensor_ref(t);
}

/// One node of a right-hand side (or a destination).
struct ExprNode {
  enum class Kind : unsigned char { tensor, list, number, number_list, op, cast };
  Kind kind = Kind::number;
  const char* name = "";  // op: its name; cast: the dtype it converts to
  ops::Notation notation = ops::Notation::call;
  int arity = 0;          // operands that follow in preorder
  int slot = -1;          // op: its shared-subexpression slot, -1 if none
  bool repeat = false;    // op: the same tree as its slot's first occurrence (the kernel loads it)
  int index = -1;         // tensor: into KernelOperands::tensors; list: into lists
  const void* id = nullptr;   // number list: its identity
  std::size_t count = 0;      // number list: its length
  char number_type = 'd';     // number: 'b' bool, 'i' int64 (in integer), 'd' double (in real)
  std::int64_t integer = 0;
  double real = 0;
};

/// The statements of one kernel, statement s writing outputs[s] from nodes [rhs_begin[s], rhs_begin[s+1]).
struct KernelOperands {
  std::vector<ExprNode> outputs;
  std::vector<ExprNode> nodes;
  std::vector<std::size_t> rhs_begin;
  std::vector<TensorOperand> tensors;
  std::vector<ListRef> lists;
  std::vector<const void*> shared_first;  // per shared slot: its first occurrence (while recording)

  explicit KernelOperands(int shared_slots) : shared_first(std::size_t(shared_slots), nullptr) {
    nodes.reserve(16);
    tensors.reserve(8);
  }

  std::size_t statements() const { return outputs.size(); }
  const TensorRef& tensor(const ExprNode& n) const { return tensors[std::size_t(n.index)].ref; }
  const ListRef& list(const ExprNode& n) const { return lists[std::size_t(n.index)]; }
  /// Calls f(node) for each node of statement s's right-hand side of this kind.
  template <class F>
  void for_each_in_statement(std::size_t s, ExprNode::Kind kind, F&& f) const {
    for (std::size_t i = rhs_begin[s]; i < rhs_begin[s + 1]; ++i)
      if (nodes[i].kind == kind) f(nodes[i]);
  }

  [[gnu::noinline]] ExprNode& add(ExprNode::Kind kind) {
    nodes.push_back({});
    nodes.back().kind = kind;
    return nodes.back();
  }
  [[gnu::noinline]] void add_tensor(const TensorRef& ref, void* tensor, void (*rebind)(void*, TensorRef&)) {
    add(ExprNode::Kind::tensor).index = int(tensors.size());
    tensors.push_back({ref, tensor, rebind});
  }
  [[gnu::noinline]] void add_list(const ListRef& ref) {
    add(ExprNode::Kind::list).index = int(lists.size());
    lists.push_back(ref);
  }
  /// Starts a statement: its destination was the last node added; the nodes after it are its rhs.
  [[gnu::noinline]] void begin_statement() {
    outputs.push_back(nodes.back());
    nodes.pop_back();
    rhs_begin.push_back(nodes.size());
  }
  void end() { rhs_begin.push_back(nodes.size()); }
};

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
        const void*& first = k.shared_first[slot];
        if (!first) first = &n;
        else repeat = same_tree(*static_cast<const N*>(first), n);
      }
      using Op = decltype(n.op);
      ExprNode& e = k.add(ExprNode::Kind::op);
      e.name = Op::name, e.notation = Op::notation, e.arity = int(decltype(n.args)::size), e.slot = slot;
      e.repeat = repeat;
    } else if constexpr (is_cast_v<N>) {
      ExprNode& e = k.add(ExprNode::Kind::cast);
      e.name = dtype_name<typename N::value_type>(), e.arity = 1;
    } else if constexpr (requires { n.tensor; }) {
      k.add_tensor(tensor_ref(n.tensor), &n.tensor, &rebind_to_copy<typename N::value_type>);
    } else if constexpr (requires { n.list; }) {
      k.add_list(list_ref(n.list));
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

template <class T>
void record_destination(Tensor<T>& dst, KernelOperands& k) {
  k.add_tensor(tensor_ref(dst), nullptr, nullptr);
  k.begin_statement();
}
template <class T>
void record_destination(TensorList<T>& dst, KernelOperands& k) {
  k.add_list(list_ref(dst));
  k.begin_statement();
}

/// The operands of statements (Assignment or ListAssignment), by one walk over their types.
template <class... Stmts>
KernelOperands kernel_operands(Stmts&... stmts) {
  using Shared = shared_nodes_t<typename Stmts::expr_type...>;
  KernelOperands k(Shared::size);
  ExprRecorder<Shared> record{k};
  ((record_destination(*stmts.dst, k), visit_nodes(stmts.rhs, record)), ...);
  k.end();
  return k;
}

/// The bytes a view can touch: [lo, hi) within its storage.
struct ByteRange {
  const Storage* storage;
  std::int64_t lo, hi;
};

inline ByteRange byte_range(const TensorRef& t) {
  if (!t.defined) return {nullptr, 0, 0};
  std::int64_t lo = t.offset, hi = t.offset;
  for (int d = 0; d < t.shape.rank(); ++d) {
    if (t.shape[d] == 0) return {t.storage, 0, 0};
    std::int64_t reach = (t.shape[d] - 1) * t.strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return {t.storage, lo * t.element_bytes, (hi + 1) * t.element_bytes};
}

inline bool overlaps(const ByteRange& a, const ByteRange& b) {
  return a.storage && a.storage == b.storage && a.lo < b.hi && b.lo < a.hi;
}

}  // namespace weft::detail
