// SPDX-License-Identifier: MIT
/// @file Runs statements that read a dense node (matmul, nn::conv2d): `y = matmul(a, b)` is the product itself, `y = gelu(matmul(a, b) + bias)` the product's epilogue, run on each output block as the GEMM completes it; anything else evaluates the dense nodes first.
///
/// The epilogue path (CPU; a node with `epilogue_blocks()`, which says whether its GEMM can hand
/// out finished blocks): the statement is checked once, whole, with a placeholder for the result
/// (a broadcast scalar of its shape), then the GEMM runs and each finished block of the result,
/// still in cache, goes through the statement restricted to that block: the destination, every
/// other operand (broadcast to the result's shape) and the result block are views of the block,
/// and one single-threaded pointwise kernel writes it on the thread that computed it. A block is
/// a box of the result seen in the node's block shape (backend/result_block.hpp: matmul's result
/// as it is, a convolution's [N, C, H' W']), so every view is first seen in that shape. The output
/// is written once; the result never goes to memory. The statement runs this way when its shape
/// is the result's (the result is not broadcast further), nothing it reads overlaps the
/// destination except elementwise, the destination does not overlap the GEMM's operands, and
/// every view can be seen in the block shape without a copy (a convolution's destination or
/// operand whose H and W strides do not chain cannot: then the node is evaluated first).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/backend/result_block.hpp"
#include "weft/expr/dense.hpp"
#include "weft/log/log.hpp"
#include "weft/plan/statements.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

template <class... Stmts>
void run_statements(const char* op, Stmts&... stmts);  // backend/run.hpp
template <class Stmt>
bool run_as_row_epilogue(const char* op, Stmt& stmt);  // backend/row_epilogue.hpp

/// A dense node's result as its epilogue's check sees it: the shape, the node's op, and whether
/// it is a reduction that dropped its reduced dims (keepdim false).
struct DenseResult {
  Shape shape;
  const char* op;
  bool dropped_dims = false;
};

/// The DenseResult of `node`, whose result has `shape`.
template <class Node>
DenseResult dense_result(const Node& node, const Shape& shape) {
  if constexpr (requires { node.keepdim; }) return {shape, node.op_name(), !node.keepdim};
  else return {shape, node.op_name()};
}

/// Every operand of the expression around a dense node (the statement's tensors, the other dense
/// nodes) broadcasts with the node's result, else a weft::Error in the node's words, raised before
/// the statement's own checks: `matmul(a, b) + bias` names the bias against the product's shape
/// rather than among the statement's operands.
inline void check_epilogue_shapes(const std::vector<DenseResult>& dense, const std::vector<Shape>& tensors) {
  for (const DenseResult& node : dense) {
    auto check = [&](const Shape& operand) {
      Shape both = node.shape;
      if (!broadcast_into(both, operand)) {
        const std::string op = cat(node.op, " epilogue");
        const int r = node.shape.rank();
        const std::string examples =
            r < 2 ? std::string()
                  : cat(", such as ", Shape{node.shape[r - 1]}, " (one value per column) or ",
                        Shape{node.shape[r - 2], 1}, " (one per row)");
        fail(op.c_str(), "an operand of shape ", operand, " cannot be broadcast with ", node.op, "'s result of shape ",
             node.shape, " (numpy rule: trailing dims must be equal or 1); the expression around ", node.op,
             " reads every operand at the result's elements: give it a shape that broadcasts with ", node.shape,
             examples, node.dropped_dims ? ", or keep the reduced dims as size 1 (keepdim = true)" : "");
      }
    };
    for (const Shape& t : tensors) check(t);
    for (const DenseResult& other : dense)
      if (&other != &node) check(other.shape);
  }
}

/// check_epilogue_shapes for a statement whose dense nodes' results are `dense`.
template <class Stmt>
void check_epilogue_operands(const Stmt& stmt, const std::vector<DenseResult>& dense) {
  std::vector<Shape> tensors;
  for_each_leaf(stmt.rhs, [&](const auto& leaf) {
    if (leaf.tensor.defined()) tensors.push_back(leaf.tensor.shape());
  });
  check_epilogue_shapes(dense, tensors);
}

/// The statement with its dense nodes evaluated (as expr/dense.hpp's stage_dense), each result's
/// shape and op appended to `results`.
template <class Stmt>
auto staged_statement(const Stmt& stmt, std::vector<DenseResult>& results) {
  auto rhs = rewrite_leaves(
      stmt.rhs, [](const auto& view) { return view; },
      [&](const auto& node) {
        auto value = node.evaluate();
        results.push_back(dense_result(node, value.shape()));
        return value;
      });
  return Assignment<typename Stmt::dest_type, decltype(rhs)>{stmt.dst, stmt.owner, std::move(rhs)};
}

/// Every statement staged (its dense nodes evaluated, all before anything is written), then the
/// operands around each dense node checked against its result's shape, in the dense op's words.
template <class... Stmts>
auto staged_statements(const Stmts&... stmts) {
  std::vector<DenseResult> results[sizeof...(Stmts)];
  std::size_t s = 0;
  Tuple<decltype(staged_statement(stmts, results[0]))...> staged{{{staged_statement(stmts, results[s++])}...}};
  s = 0;
  (check_epilogue_operands(stmts, results[s++]), ...);
  return staged;
}

/// `y = matmul(a, b)`: a Tensor that takes a new shape becomes the product's new tensor (no
/// copy); a contiguous destination of the product's shape gets the GEMM's output directly (a
/// destination of any strides where the node says its evaluate_into writes them: `kWritesAnyLayout`,
/// a convolution's store). Returns whether it ran (not where the destination overlaps an operand,
/// or is laid out otherwise).
template <class Stmt>
bool write_dense_result(Stmt& stmt) {
  using E = typename Stmt::expr_type;
  if constexpr (DenseNode<E> && std::is_same_v<typename E::value_type, typename Stmt::dest_type>) {
    const Shape shape = stmt.rhs.shape();
    if (stmt.owner != nullptr && !(stmt.owner->defined() && stmt.owner->shape() == shape)) {
      *stmt.owner = stmt.rhs.evaluate();
      return true;
    }
    constexpr bool any_layout = requires { requires E::kWritesAnyLayout; };
    if (!stmt.dst.defined() || !(stmt.dst.shape() == shape) || !(any_layout || stmt.dst.is_contiguous())) return false;
    return stmt.rhs.evaluate_into(stmt.dst);
  } else {
    return false;
  }
}

/// The first dense node type in a list of node types (void: none).
template <class List>
struct first_dense {
  using type = void;
};
template <class M, class... Rest>
struct first_dense<TypeList<M, Rest...>> {
  using type = std::conditional_t<DenseNode<M>, M, typename first_dense<TypeList<Rest...>>::type>;
};

/// The first dense node of a tree (it has one).
template <class E>
const auto& the_dense_node(const E& e) {
  using Node = typename first_dense<preorder_t<E>>::type;
  const Node* found = nullptr;
  visit_nodes(e, [&](const auto& n) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(n)>, Node>)
      if (found == nullptr) found = &n;
  });
  return *found;
}

// nvcc's device pass has no CPU executor (backend/run.hpp): there every statement is staged.
#if !defined(__CUDA_ARCH__)
/// One statement over a block, on the calling thread: no checks (the whole statement passed
/// them), no log. `stream`: non-temporal stores (a block of a destination too large to stay in
/// cache), where the block's rows are whole aligned packets (rows_aligned).
template <class Stmt>
void run_block_statement(Stmt& stmt, bool stream = false) {
  OperandStorage<Stmt> operands;
  KernelOperands k = kernel_operands(operands, false, stmt);
  const StatementPlan plan = plan_statements(k, stmt.dst.shape(), true);
  const IterationSpace& space = plan.space;
  auto run = [&]<bool kLinear>() {
    using Kernel = PointwiseKernel<kLinear, Stmt>;
    const bool streaming =
        stream && space.inner() % cpu::lanes_v<Kernel> == 0 && rows_aligned(space, k.tensor(k.outputs[0]));
    cpu::run_pointwise(construct_kernel<kLinear>(space, plan.strides.data(), stmt), space, 1, streaming);
  };
  if (space.linear) run.template operator()<true>();
  else run.template operator()<false>();
}

/// Runs the statement as the epilogue of its dense node's GEMM where it can (see the file
/// comment); returns whether it did. Throws what the node's and the statement's checks throw.
template <class Stmt>
bool run_as_epilogue(const char* op, Stmt& stmt) {
  using E = typename Stmt::expr_type;
  if constexpr (dense_nodes_v<E> != 1 || DenseNode<E>) {
    return false;
  } else {
    const auto& node = the_dense_node(stmt.rhs);
    using Node = std::remove_cvref_t<decltype(node)>;
    using T = typename Node::value_type;
    if constexpr (!requires { node.epilogue_blocks(); }) {
      return false;
    } else {
      const auto blocks = node.epilogue_blocks();  // checks the operands; empty where it cannot
      if (!blocks) return false;
      const Shape full = blocks->shape();
      check_epilogue_operands(stmt, {dense_result(node, full)});
      // The whole statement checked once, the product a placeholder of its shape: one element,
      // never read, broadcast (no allocation: it borrows a local).
      T placeholder_element{};
      const TensorView<const T> placeholder =
          TensorView<const T>(borrow(&placeholder_element, sizeof(T), Device::cpu(), [](void*) {}), Shape{1},
                              Strides{1}, 0)
              .expand(full);
      auto whole_rhs = rewrite_leaves(
          stmt.rhs, [](const auto& view) { return view; }, [&](const auto&) { return placeholder; });
      Assignment<typename Stmt::dest_type, decltype(whole_rhs)> whole{stmt.dst, stmt.owner, whole_rhs};
      OperandStorage<decltype(whole)> operands;
      KernelOperands k = kernel_operands(operands, false, whole);
      const auto [device, shape] = check_statements(op, k);
      if (!device.is_cpu() || !(shape == full)) return false;
      give_shape(k, 0, whole, shape, device);
      std::destroy_at(&stmt.dst);
      std::construct_at(&stmt.dst, whole.dst);
      const TensorRef dst = tensor_ref(stmt.dst);
      if (blocks->reads(byte_range(dst))) return false;
      for (const ExprNode& n : k.nodes)
        if (n.kind == ExprNode::Kind::tensor && overlaps(byte_range(k.tensor(n)), byte_range(dst)) &&
            !elementwise_identical(k.tensor(n), dst, shape))
          return false;
      // Every operand and the destination seen in the node's block shape (a convolution's
      // positions merged), else the blocks are no boxes of them: evaluate first.
      const Shape block_space = blocks->block_shape();
      bool boxes = bool(in_block_shape(stmt.dst, full, block_space));
      for_each_leaf(stmt.rhs, [&](const auto& leaf) {
        boxes = boxes && (!leaf.tensor.defined() || in_block_shape(leaf.tensor, full, block_space));
      });
      if (!boxes) {
        log_message(LogComponent::fusion, LogLevel::debug, node.op_name(), " ", full,
                    ": an operand's strides do not merge into the blocks' shape ", block_space,
                    "; the result runs first, then the expression around it");
        return false;
      }
      if (log_enabled(LogComponent::fusion) || log_enabled(LogComponent::output_code)) {
        const IterationSpace space = plan_statements(k, shape, true).space;
        const std::vector<const void*> seen = printed_inputs(k);  // say which input is the product
        const auto product_index = std::find(seen.begin(), seen.end(), placeholder.data()) - seen.begin();
        const std::string where = cat("cpu, ", node.op_name(), ": ", blocks->describe(),
                                      ", epilogue on each output block; in", product_index, " = ", node.op_name(),
                                      "'s block");
        log_kernel<PointwiseKernel<false, decltype(whole)>>(space, where, whole);
      }
      if (shape.numel() == 0) return true;
      // A destination too large to stay in cache takes non-temporal stores: its lines are not read
      // before being overwritten (fp32 4096 x 4096 GELU epilogue: see docs/dense.md).
      const bool stream = shape.numel() * std::int64_t(sizeof(typename Stmt::dest_type)) >= kStreamingBytes;
      blocks->run([&](const ResultBlock<T>& block) {
        std::int64_t last = 0;  // the block's last element, from its first
        for (int d = 0; d < block.size.rank(); ++d) last += (block.size[d] - 1) * block.strides[d];
        const TensorView<const T> result(
            borrow(const_cast<T*>(block.data), std::size_t(last + 1) * sizeof(T), Device::cpu(), [](void*) {}),
            block.size, block.strides, 0);
        auto block_rhs = rewrite_leaves(
            stmt.rhs, [&](const auto& view) { return block_of(view, full, block_space, block); },
            [&](const auto&) { return result; });
        Assignment<typename Stmt::dest_type, decltype(block_rhs)> part{block_of(stmt.dst, full, block_space, block), nullptr,
                                                                        block_rhs};
        run_block_statement(part, stream);
      }, in_block_shape(stmt.dst, full, block_space)->strides());
      return true;
    }
  }
}

#endif  // !defined(__CUDA_ARCH__)

/// Statements that read dense nodes: `y = dense` is the product itself, one statement runs as
/// its dense node's epilogue where it can, and otherwise every dense node is evaluated first (all
/// of them before anything is written: each right-hand side reads the values from before the
/// call) and the statements run as one pointwise kernel.
template <class... Stmts>
void run_dense_statements(const char* op, Stmts&... stmts) {
  if constexpr (sizeof...(Stmts) == 1) {
    if ((write_dense_result(stmts) && ...)) return;
#if !defined(__CUDA_ARCH__)
    if ((run_as_epilogue(op, stmts) && ...)) return;
    if ((run_as_row_epilogue(op, stmts) && ...)) return;
#endif
  }
  auto staged = staged_statements(stmts...);
  [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    run_statements(op, get<Is>(staged)...);
  }(std::index_sequence_for<Stmts...>{});
  // A Tensor destination that took a new shape is the staged statement's owner: already updated.
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
