// SPDX-License-Identifier: MIT
/// @file Prints an expression tree as readable pseudo-source (for WEFT_LOGS=output_code and fusion logs).
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "weft/expr/nodes.hpp"

namespace weft::detail {

/// Names the tensors of a kernel (in0, in1, ... / out0, ...) and the shared
/// subexpressions (t0, t1, ...) while printing its statements.
struct PrintContext {
  struct Named {
    const void* data;
    Shape shape;
    Strides strides;
    std::string name;
    std::string dtype;
    bool output;
    bool read;
  };
  std::vector<Named> tensors;
  std::vector<std::string> lets;               // "t0 = ..." lines, in evaluation order
  std::vector<const void*> shared_first;       // first occurrence per shared slot
  std::vector<std::string> shared_name;
  std::vector<int> shared_uses;                // occurrences equal to the first, per slot
  bool counting = false;                       // first pass: count uses, print nothing

  std::vector<const void*> scalar_lists;

  std::string scalar_list_name(const void* id) {
    auto it = std::find(scalar_lists.begin(), scalar_lists.end(), id);
    if (it == scalar_lists.end()) it = scalar_lists.insert(it, id);
    return cat("s", it - scalar_lists.begin());
  }

  /// A list is named like a tensor; its shape reads [number of tensors].
  template <class T>
  std::string name(const TensorList<T>& list, bool output) {
    for (auto& n : tensors)
      if (n.data == list.id() && n.strides.rank() == 0 && n.shape == Shape{std::int64_t(list.size())}) {
        n.read |= !output;
        return n.name;
      }
    int count = 0;
    for (auto& n : tensors) count += n.output == output;
    tensors.push_back({list.id(), Shape{std::int64_t(list.size())}, Strides{}, cat(output ? "out" : "in", count),
                       cat("list of ", dtype_name<T>()), output, !output});
    return tensors.back().name;
  }

  template <class T>
  std::string name(const Tensor<T>& t, bool output) {
    for (auto& n : tensors)
      if (n.data == t.data() && n.shape == t.shape() && n.strides == t.strides()) {
        n.read |= !output;
        return n.name;
      }
    int count = 0;
    for (auto& n : tensors) count += n.output == output;
    tensors.push_back(
        {t.data(), t.shape(), t.strides(), cat(output ? "out" : "in", count), dtype_name<T>(), output, !output});
    return tensors.back().name;
  }
};

template <class Shared, class T>
std::string print_expr(const Leaf<T>& leaf, PrintContext& ctx) {
  return ctx.name(leaf.tensor, false) + "[i]";
}

template <class Shared, class S>
std::string print_expr(const Scalar<S>& s, PrintContext&) {
  return cat(s.value);
}

template <class Shared, class T>
std::string print_expr(const ListLeaf<T>& leaf, PrintContext& ctx) {
  return ctx.name(leaf.list, false) + "[k][i]";
}

template <class Shared, class S>
std::string print_expr(const ListScalar<S>& s, PrintContext& ctx) {
  return ctx.scalar_list_name(s.values.id()) + "[k]";
}

inline std::string strip_parens(const std::string& s);

/// "(a op b)", "op a" or "op(a, b, ...)".
[[gnu::cold]] inline std::string format_op(const char* name, ops::Notation notation, const std::vector<std::string>& a) {
  if (notation == ops::Notation::infix) return cat("(", a[0], " ", name, " ", a[1], ")");
  if (notation == ops::Notation::prefix) return cat(name, a[0]);
  std::string body = cat(name, "(");
  for (std::size_t i = 0; i < a.size(); ++i) body += (i ? ", " : "") + strip_parens(a[i]);
  return body + ")";
}

template <class Shared, class Op, class... Args>
std::string print_expr(const Map<Op, Args...>& node, PrintContext& ctx) {
  constexpr int slot = index_in<Map<Op, Args...>, Shared>;
  if constexpr (slot >= 0) {
    ctx.shared_first.resize(Shared::size, nullptr);
    ctx.shared_name.resize(Shared::size);
    ctx.shared_uses.resize(Shared::size, 0);
    const void* first = ctx.shared_first[slot];
    if (first && same_tree(*static_cast<const Map<Op, Args...>*>(first), node)) {
      ++ctx.shared_uses[slot];
      return ctx.shared_name[slot];  // evaluation loads it too: its operands are not visited
    }
  }
  std::vector<std::string> a;
  for_each_in(node.args, [&](const auto& child) { a.push_back(print_expr<Shared>(child, ctx)); });
  std::string body = format_op(Op::name, Op::notation, a);
  if constexpr (slot >= 0) {
    if (!ctx.shared_first[slot]) {
      ctx.shared_first[slot] = &node;
      if (ctx.counting || ctx.shared_uses[slot] == 0) return body;  // used once: print inline
      ctx.shared_name[slot] = cat("t", ctx.lets.size());
      ctx.lets.push_back(cat(ctx.shared_name[slot], " = ", strip_parens(body)));
      return ctx.shared_name[slot];
    }
  }
  return body;
}

template <class Shared, class U, class E>
std::string print_expr(const Cast<U, E>& node, PrintContext& ctx) {
  return cat("cast<", dtype_name<U>(), ">(", print_expr<Shared>(node.arg, ctx), ")");
}

/// Drops one pair of outer parentheses: "(a + b)" -> "a + b".
inline std::string strip_parens(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0) return s;
  }
  return s.substr(1, s.size() - 2);
}

}  // namespace weft::detail
