// SPDX-License-Identifier: MIT
/// @file Prints a kernel's statements as readable pseudo-source (WEFT_LOGS=output_code and fusion),
/// from its KernelOperands: apart from describe_kernel's one line, nothing here is a template.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "weft/core/config.hpp"
#include "weft/plan/iteration.hpp"
#include "weft/plan/kernel_operands.hpp"

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
  const KernelOperands* operands = nullptr;
  std::vector<Named> tensors;
  std::vector<std::string> lets;         // "t0 = ..." lines, in evaluation order
  std::vector<std::string> shared_name;  // per slot, once its first occurrence is printed
  std::vector<int> shared_uses;          // repeats per slot
  std::vector<const void*> scalar_lists;

  /// The name of a tensor or list node; a list is named like a tensor, its shape reading
  /// [number of tensors].
  [[gnu::cold]] std::string name(const ExprNode& n, bool output) {
    const void* data;
    Shape shape;
    Strides strides;
    std::string dtype;
    if (n.kind == ExprNode::Kind::list) {
      const ListRef& l = operands->list(n);
      data = l.id, shape = Shape{std::int64_t(l.size)}, dtype = cat("list of ", l.dtype);
    } else {
      const TensorRef& t = operands->tensor(n);
      data = t.data(), shape = t.shape(), strides = t.strides(), dtype = t.dtype;
    }
    for (auto& t : tensors)
      if (t.data == data && t.shape == shape && t.strides == strides) {
        t.read |= !output;
        return t.name;
      }
    int count = 0;
    for (auto& t : tensors) count += t.output == output;
    tensors.push_back({data, shape, strides, cat(output ? "out" : "in", count), dtype, output, !output});
    return tensors.back().name;
  }

  [[gnu::cold]] std::string scalar_list_name(const void* id) {
    auto it = std::find(scalar_lists.begin(), scalar_lists.end(), id);
    if (it == scalar_lists.end()) it = scalar_lists.insert(it, id);
    return cat("s", it - scalar_lists.begin());
  }
};

/// Drops one pair of outer parentheses: "(a + b)" -> "a + b".
[[gnu::cold]] inline std::string strip_parens(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0) return s;
  }
  return s.substr(1, s.size() - 2);
}

/// "(a op b)", "op a" or "op(a, b, ...)".
[[gnu::cold]] inline std::string format_op(const char* name, functors::Notation notation, const std::vector<std::string>& a) {
  if (notation == functors::Notation::infix) return cat("(", a[0], " ", name, " ", a[1], ")");
  if (notation == functors::Notation::prefix) return cat(name, a[0]);
  std::string body = cat(name, "(");
  for (std::size_t i = 0; i < a.size(); ++i) body += (i ? ", " : "") + strip_parens(a[i]);
  return body + ")";
}

/// The index after the `arity` subtrees that start at nodes[i].
inline std::size_t skip_operands(std::span<const ExprNode> nodes, std::size_t i, int arity) {
  for (std::size_t pending = std::size_t(arity); pending > 0; --pending) pending += std::size_t(nodes[i++].arity);
  return i;
}

/// Prints the subtree at nodes[i] and moves i past it. A shared slot's first occurrence becomes
/// a "tN = ..." line when the slot is used again, and every repeat prints as tN.
[[gnu::cold]] inline std::string render_expr(std::span<const ExprNode> nodes, std::size_t& i, PrintContext& ctx) {
  const ExprNode& n = nodes[i++];
  switch (n.kind) {
    case ExprNode::Kind::tensor: return ctx.name(n, false) + "[i]";
    case ExprNode::Kind::list: return ctx.name(n, false) + "[k][i]";
    case ExprNode::Kind::number:
      return n.number_type == 'b' ? cat(n.integer != 0) : n.number_type == 'i' ? cat(n.integer) : cat(n.real);
    case ExprNode::Kind::number_list: return ctx.scalar_list_name(n.id) + "[k]";
    case ExprNode::Kind::cast: return cat("cast<", n.name, ">(", render_expr(nodes, i, ctx), ")");
    case ExprNode::Kind::op: break;
  }
  if (n.repeat) {  // the kernel loads it: its operands are not evaluated again
    i = skip_operands(nodes, i, n.arity);
    return ctx.shared_name[std::size_t(n.slot)];
  }
  std::vector<std::string> args;
  for (int a = 0; a < n.arity; ++a) args.push_back(render_expr(nodes, i, ctx));
  std::string body = format_op(n.name, n.notation, args);
  if (n.slot < 0 || ctx.shared_uses[std::size_t(n.slot)] == 0) return body;  // used once: inline
  std::string& name = ctx.shared_name[std::size_t(n.slot)];
  name = cat("t", ctx.lets.size());
  ctx.lets.push_back(cat(name, " = ", strip_parens(body)));
  return name;
}

/// Lays out a printed kernel: one line for `fusion`, a block for `output_code`.
[[gnu::cold]] WEFT_SHARED std::string format_kernel(const PrintContext& ctx, const std::vector<std::string>& lines,
                                               const IterationSpace& space, const std::string& where, bool one_line)
#if WEFT_SHARED_BODIES
{
  std::string body;
  for (auto& l : ctx.lets) body += (one_line ? "" : "    ") + l + (one_line ? "; " : ";\n");
  for (std::size_t i = 0; i < lines.size(); ++i)
    body += (one_line ? "" : "    ") + lines[i] + (one_line ? (i + 1 < lines.size() ? "; " : "") : ";\n");
  if (one_line) return body;
  std::int64_t read = 0, written = 0;
  std::string ins, outs;
  for (auto& t : ctx.tensors) {
    auto is = [&](const char* d) { return t.dtype.ends_with(d); };
    std::int64_t bytes = is("float64") || is("int64") ? 8 : is("float32") || is("int32") ? 4 : is("bool") || is("int8") ? 1 : 2;
    if (t.output) written += bytes;
    if (t.read) read += bytes;
    std::string& list = t.output ? outs : ins;
    list += cat(list.empty() ? "" : ", ", t.name, ": ", t.dtype, t.shape,
                t.strides.rank() == 0 || t.strides == contiguous_strides(t.shape) ? "" : " strided");
  }
  std::string iteration = space.foreach  ? std::string("for every tensor k of the lists, i in [0, numel(k))")
                          : space.linear ? cat("contiguous, i in [0, ", space.numel, ")")
                                         : cat("strided rows over collapsed shape ", space.shape);
  return cat("kernel pointwise (", where, ")\n", "  // inputs:  ", ins.empty() ? "none" : ins, "\n",
             "  // outputs: ", outs, "\n", "  // bytes per element: ", read + written, " (", read, " read, ", written,
             " written); ", ctx.lets.size(), " shared subexpression(s)\n", "  // iteration: ", iteration, "\n",
             "  for each i {\n", body, "  }");
}
#else
;
#endif

/// The tensors a kernel reads, by data pointer, in the order the printer names them in0, in1, ...
/// (first appearance), so that a caller can say what an input stands for.
[[gnu::cold]] inline std::vector<const void*> printed_inputs(const KernelOperands& k) {
  std::vector<const void*> seen;
  for (const ExprNode& n : k.nodes)
    if (n.kind == ExprNode::Kind::tensor && std::find(seen.begin(), seen.end(), k.tensor(n).data()) == seen.end())
      seen.push_back(k.tensor(n).data());
  return seen;
}

/// Pseudo-source of a kernel's statements: "outN[i] = ..." ("[k][i]" for lists) per statement,
/// after the shared subexpressions' "tN = ..." lines.
[[gnu::cold]] WEFT_SHARED std::string print_kernel(const KernelOperands& k, const IterationSpace& space,
                                              const std::string& where, bool one_line)
#if WEFT_SHARED_BODIES
{
  PrintContext ctx;
  ctx.operands = &k;
  ctx.shared_name.assign(k.shared_first.size(), std::string());
  ctx.shared_uses.assign(k.shared_first.size(), 0);
  for (std::size_t i = 0; i < k.nodes.size();) {  // a repeat's operands are not evaluated: skip them
    const ExprNode& n = k.nodes[i++];
    if (!n.repeat) continue;
    ++ctx.shared_uses[std::size_t(n.slot)];
    i = skip_operands(k.nodes, i, n.arity);
  }
  for (const ExprNode& out : k.outputs) ctx.name(out, true);  // outputs are out0, out1, ... in order
  std::vector<std::string> lines;
  for (std::size_t s = 0; s < k.statements(); ++s) {
    const bool is_list = k.outputs[s].kind == ExprNode::Kind::list;
    std::size_t i = k.rhs_begin[s];
    lines.push_back(ctx.name(k.outputs[s], true) + (is_list ? "[k][i] = " : "[i] = ") +
                    strip_parens(render_expr(k.nodes, i, ctx)));
  }
  return format_kernel(ctx, lines, space, where, one_line);
}
#else
;
#endif

inline namespace WEFT_BACKEND_ABI {  // it records the operands (kernel_operands)

/// Pseudo-source of a kernel, for WEFT_LOGS=output_code (and a one-line form for fusion).
template <class... Stmts>
[[gnu::cold]] std::string describe_kernel(const IterationSpace& space, const std::string& where, bool one_line,
                                          Stmts&... stmts) {
  OperandStorage<Stmts...> operands;
  return print_kernel(kernel_operands(operands, true, stmts...), space, where, one_line);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
