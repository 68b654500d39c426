// SPDX-License-Identifier: MIT
/// @file Runs a statement that reads reductions with a kept dim (`y = x / sum(x, 1, true)`, the layer-norm formula, softmax) as a row-wise pass pair: pass 1 reduces each row, pass 2 runs the statement over the same row while it is in cache; the reduction's full-size broadcast is never written.
///
/// Every reduction reduces one dim `dim` of the same shape `full` with the dim kept
/// (ops/reduction_node.hpp: weft::Reduced::rows), and the statement's shape is `full` or the
/// reductions' own (`dim` of extent 1: a value per row, `lse = m + log(sum(exp(x - m), 1, true))`,
/// cross_entropy's loss). Then the value a reduction contributes to element i depends only on i's
/// row (i's coordinates except along `dim`), and rows are independent. A statement of a value per
/// row runs pass 2 at the row's one element. Two ways to walk the rows:
///
/// The row path, where the destination and every tensor read step `dim` with stride 1 (softmax,
/// layer_norm, any last-dim statement on contiguous tensors): each thread takes whole rows, and
/// per row runs pass 1, every reduction's value for the row as a scalar (cpu::RowFold, the
/// reduction executor's own fold), innermost first (softmax's sum of exp(x - max) after the max),
/// then pass 2, the statement along the row with each reduction a RowValue node (a number read
/// when the kernel moves to the row; subexpressions of row values and numbers only, such as
/// rsqrt(var + eps), computed once per row). Both passes' evaluators are built once per thread,
/// and a row stays in L1 (L2 for long rows) between them.
///
/// The block path, elsewhere (a reduced dim that is not innermost in memory): blocks of whole
/// rows, every dim but `dim` and the last other dim (`free_dim`) fixed, a range of `free_dim`,
/// `dim` whole; per block, on one thread, pass 1 reduces the block's rows into a buffer of one
/// value per row (the inner reductions' buffers read as stride-0 views along `dim`), and pass 2
/// runs the statement restricted to the block, each reduction a stride-0 view of its buffer, by
/// one single-threaded pointwise kernel (backend/dense_statements.hpp). A block holds about
/// kRowBlockElements elements, so pass 2 finds the rows pass 1 read in L2.
///
/// Reductions that compute the same values (same op, dims and input tensors: softmax's max
/// appears twice; var's mean and the statement's mean) are computed once. The statement is checked
/// once, whole, with placeholders for the reductions; anything it or the reductions read may
/// overlap the destination only elementwise (a row is read before it is written). Elsewhere
/// (several dims, keepdim false, another shape, fewer rows than threads, CUDA) the
/// reductions are evaluated first.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/backend/cpu/reduce/reduce.hpp"
#include "weft/backend/dense_statements.hpp"
#include "weft/expr/dense.hpp"
#include "weft/plan/reduction.hpp"

namespace weft::detail {

/// What a reduction node says for a row epilogue: its input's shape and the dim it reduces (kept).
struct RowReduction {
  Shape full;
  int dim = 0;
  /// The shape of the rows' values: `full` with `dim` of extent 1.
  Shape values_shape() const {
    Shape s = full;
    s[dim] = 1;
    return s;
  }
};

/// A dense node that reduces blocks of rows (ops/reduction_node.hpp: weft::Reduced).
template <class N>
concept RowReductionNode = DenseNode<N> && requires(const N& n) {
  n.input();
  n.same_as(n);
};

/// Elements per row block (the block path): the block's rows stay in L2 between the passes. Half a
/// MiB of floats: smaller blocks pay their per-block planning more often (softmax over dim 0 of
/// 1024 x 4096 floats, 2 threads: 64K-element blocks 1.24x the time of 128K-element ones, 16K
/// 3.1x; 256K ones 0.92x, but an L2 of 1 MiB would no longer hold them).
inline constexpr std::int64_t kRowBlockElements = 131072;

/// How a statement of shape `full` is cut into blocks of whole rows along `dim`.
struct RowBlocks {
  Shape full;
  int dim = 0, free_dim = -1;     // free_dim: the last dim other than dim (-1: a single row)
  std::int64_t per_block = 1;     // rows (along free_dim) per block
  std::int64_t pieces = 1;        // blocks per range of free_dim
  std::int64_t count = 1;         // blocks in all

  /// Blocks of about kRowBlockElements elements, smaller where that gives `threads` a block each.
  RowBlocks(const Shape& shape, int reduced, int threads) : full(shape), dim(reduced) {
    const int r = full.rank();
    free_dim = dim == r - 1 ? r - 2 : r - 1;
    if (free_dim < 0) return;
    const std::int64_t rows = full[free_dim];
    std::int64_t others = 1;  // ranges of free_dim
    for (int d = 0; d < r; ++d)
      if (d != dim && d != free_dim) others *= full[d];
    others = std::max<std::int64_t>(others, 1);
    const std::int64_t wanted_pieces = (threads + others - 1) / others;
    per_block = std::clamp<std::int64_t>(std::min(kRowBlockElements / std::max<std::int64_t>(full[dim], 1),
                                                  (rows + wanted_pieces - 1) / wanted_pieces),
                                         1, std::max<std::int64_t>(rows, 1));
    pieces = (rows + per_block - 1) / per_block;
    count = pieces;
    for (int d = 0; d < r; ++d)
      if (d != dim && d != free_dim) count *= full[d];
  }
  /// Block b's coordinates (free_dim's: its first row; dim's: 0); returns its row count.
  std::int64_t locate(std::int64_t b, std::int64_t* coords) const {
    if (free_dim < 0) {
      coords[0] = 0;
      return 1;
    }
    std::int64_t rest = b / pieces;
    for (int d = full.rank() - 1; d >= 0; --d) {
      if (d == dim || d == free_dim) coords[d] = 0;
      else coords[d] = rest % full[d], rest /= full[d];
    }
    coords[free_dim] = b % pieces * per_block;
    return std::min(per_block, full[free_dim] - coords[free_dim]);
  }
  Shape values_shape() const { return RowReduction{full, dim}.values_shape(); }
  /// The block's shape, or its rows' values' (one per row: `dim` of size 1).
  Shape block_shape(std::int64_t rows, bool values) const {
    Shape s = full;
    for (int d = 0; d < s.rank(); ++d)
      if (d == dim) s[d] = values ? 1 : full[d];
      else s[d] = d == free_dim ? rows : 1;
    return s;
  }
};

/// `view` (broadcast to the full shape, or with `per_row` to the shape of a value per row)
/// restricted to a block.
template <class T>
TensorView<T> row_block_view(const TensorView<T>& view, const RowBlocks& g, const std::int64_t* coords,
                             std::int64_t rows, bool per_row = false) {
  const TensorView<T> e = view.expand(per_row ? g.values_shape() : g.full);
  std::int64_t offset = e.offset();
  for (int d = 0; d < g.full.rank(); ++d) offset += coords[d] * e.strides()[d];
  return TensorView<T>(e.storage(), g.block_shape(rows, per_row), e.strides(), offset);
}

/// A block's row values (one per row, contiguous) as a view of the block's shape (stride 0 along
/// dim), or with `per_row` of its values' shape.
template <class T>
TensorView<const T> row_values_view(const T* values, const RowBlocks& g, std::int64_t rows, bool per_row = false) {
  Strides strides = Shape::filled(g.full.rank(), 0);
  if (g.free_dim >= 0) strides[g.free_dim] = 1;
  return TensorView<const T>(borrow(const_cast<T*>(values), std::size_t(rows) * sizeof(T), Device::cpu(), [](void*) {}),
                             g.block_shape(rows, per_row), strides, 0);
}

/// One block being run: where it is and the row values pass 1 has computed so far.
struct RowBlockContext {
  const RowBlocks* blocks;
  const std::int64_t* coords;
  std::int64_t rows;
  std::vector<double>* values;  // per buffer (doubles: aligned for any element type)
};

namespace cpu {
template <class Red, class E>
struct RowFold;  // backend/cpu/reduce/reduce.hpp (host code: nvcc's device pass never runs a row epilogue)
}  // namespace cpu

/// One thread's state on the row path (one row at a time, see run_as_row_epilogue): the row space,
/// the reduction plan over it (kept dims outer, the reduced dim inner), and the values of the
/// current row that RowValue nodes read.
struct RowFolds {
  const ReducePlan* plan;
  const IterationSpace* space;
  std::deque<double> values;  // per buffer, then the kinds' own (var's mean); stable addresses, aligned for any element

  RowFolds(const ReducePlan& p, const IterationSpace& s, std::size_t buffers) : plan(&p), space(&s), values(buffers) {}
  /// Buffer i's value for the current row.
  template <class T>
  T* value(int i) {
    return reinterpret_cast<T*>(&values[std::size_t(i)]);
  }
  /// A value of the kind's own (var's row mean).
  template <class T>
  T* new_value() {
    values.push_back(0);
    return reinterpret_cast<T*>(&values.back());
  }
  std::int64_t row_length() const { return plan->n_red; }
  /// red over e, one row at a time, its evaluators built now.
  template <class Red, class E>
  cpu::RowFold<Red, E> fold(const Red& red, const E& e) const {
    return {red, e, *plan, *space};
  }
};

// RowPass1's member templates call rewrite_leaves, which is compiled apart for nvcc and the host
// compiler (core/config.hpp, WEFT_BACKEND_ABI): it is two classes, one per kind of file.
inline namespace WEFT_BACKEND_ABI {

template <class N>
inline constexpr char row_node_tag = 0;

/// The reductions of a statement, each computed once per row (or block) in pass 1, innermost first.
struct RowPass1 {
  struct Slot {
    const void* node;  // where it sits in the statement (or in another reduction's input)
    const void* type;  // &row_node_tag<N>
    int values;        // its buffer
  };
  std::vector<Slot> slots;
  std::vector<std::size_t> value_bytes;                          // per buffer: the element size
  std::vector<std::function<void(const RowBlockContext&)>> steps;  // per buffer: reduces a block into it
  // per buffer: a thread's step that computes one row's value into it (the row path)
  std::vector<std::function<std::function<void(const std::int64_t*)>(RowFolds&)>> row_steps;
  std::vector<std::string> names;                                // per buffer: op and input, for the log
  std::vector<TensorRef> reads;                                  // every tensor the reductions read
  std::optional<RowReduction> rows;
  bool ok = true;
  std::deque<double> placeholders;  // per buffer: what the checks' placeholders point at (stable addresses)
  // Reductions of the reductions' own (var's row_mean). The block path computes them too, though
  // var's block reduction computes its mean itself: one more pass over a block for `x / std(x)`.
  std::vector<std::shared_ptr<const void>> owned;

  int values_of(const void* node) const {
    for (const Slot& s : slots)
      if (s.node == node) return s.values;
    return -1;
  }

  /// e with every reduction a placeholder of its output's shape (the checks read shapes only).
  template <class E>
  auto with_placeholders(const E& e) const {
    return rewrite_leaves(
        e, [](const auto& view) { return view; },
        [&](const auto& node) {
          using T = typename std::remove_cvref_t<decltype(node)>::value_type;
          const Shape kept = rows->values_shape();
          // One element, never read, broadcast (no allocation: it borrows the buffer's own
          // placeholder element, so that the log names each buffer apart).
          double* element = const_cast<double*>(&placeholders[std::size_t(values_of(&node))]);
          return TensorView<const T>(borrow(element, sizeof(T), Device::cpu(), [](void*) {}), Shape{1}, Strides{1}, 0)
              .expand(kept);
        });
  }

  /// e restricted to a block, every reduction a view of its buffer; `per_row`: e is of the shape
  /// of a value per row (a statement of that shape).
  template <class E>
  auto at_block(const E& e, const RowBlockContext& c, bool per_row = false) const {
    return rewrite_leaves(
        e, [&](const auto& view) { return row_block_view(view, *c.blocks, c.coords, c.rows, per_row); },
        [&](const auto& node) {
          using T = typename std::remove_cvref_t<decltype(node)>::value_type;
          return row_values_view(reinterpret_cast<const T*>(c.values[values_of(&node)].data()), *c.blocks, c.rows,
                                 per_row);
        });
  }

  /// e with every reduction a RowValue of the thread's value for the current row.
  template <class E>
  auto at_row(const E& e, RowFolds& f) const {
    return rewrite_leaves(
        e, [](const auto& view) { return view; },
        [&](const auto& node) {
          using T = typename std::remove_cvref_t<decltype(node)>::value_type;
          return RowValue<T>{{}, f.template value<T>(values_of(&node))};
        });
  }

  /// Adds every reduction of e (and, first, those of their inputs).
  template <class E>
  void add_all(const E& e) {
    visit_nodes(e, [&](const auto& n) {
      if constexpr (DenseNode<std::remove_cvref_t<decltype(n)>>) add(n);
    });
  }

  template <class N>
  void add(const N& n) {
    if (!ok) return;
    if constexpr (!RowReductionNode<N>) {
      ok = false;  // a matmul: staged
    } else {
      add_all(n.input());
      if (!ok) return;
      for (const Slot& s : slots)
        if (s.type == &row_node_tag<N> && static_cast<const N*>(s.node)->same_as(n)) {
          slots.push_back({&n, s.type, s.values});
          return;
        }
      int mean_values = -1;  // the buffer of the mean its row path reads (var, std)
      if constexpr (requires { n.row_mean(); }) {
        const auto mean = std::make_shared<const decltype(n.row_mean())>(n.row_mean());
        owned.push_back(mean);
        add(*mean);
        if (!ok) return;
        mean_values = values_of(mean.get());
      }
      const auto checked_input = with_placeholders_if_any(n.input());
      const std::optional<RowReduction> r = n.rows(checked_input);
      if (!r || (rows && (!(r->full == rows->full) || r->dim != rows->dim))) {
        ok = false;
        return;
      }
      rows = r;
      for_each_leaf(n.input(), [&](const auto& leaf) { reads.push_back(tensor_ref(leaf.tensor)); });
      const int values = int(value_bytes.size());
      using T = typename N::value_type;
      value_bytes.push_back(sizeof(T));
      slots.push_back({&n, &row_node_tag<N>, values});
      placeholders.push_back(0);
      names.push_back(n.kind.op);
      steps.push_back([this, &n, values, dim = r->dim](const RowBlockContext& c) {
        n.reduce_rows(at_block(n.input(), c), dim, reinterpret_cast<T*>(c.values[values].data()));
      });
      row_steps.push_back([this, &n, values, mean_values](RowFolds& f) -> std::function<void(const std::int64_t*)> {
        T* out = f.template value<T>(values);
        const void* mean = mean_values < 0 ? nullptr : f.template value<const char>(mean_values);
        auto reduce = n.row_reduction(at_row(n.input(), f), f, mean);
        return [reduce, out](const std::int64_t* row) mutable { *out = reduce(row); };
      });
    }
  }

 private:
  template <class E>
  auto with_placeholders_if_any(const E& e) const {
    if constexpr (dense_nodes_v<E> == 0) return e;
    else return with_placeholders(e);
  }
};

}  // namespace WEFT_BACKEND_ABI

// nvcc's device pass has no CPU executor (backend/run.hpp): there every statement is staged.
#if !defined(__CUDA_ARCH__)
inline namespace WEFT_BACKEND_ABI {

/// The row path of run_as_row_epilogue: each thread takes whole rows of `plan` (its outputs) and,
/// per row, runs pass 1 (every reduction's value for the row, innermost first, as a scalar) and
/// pass 2 (the statement along the row, the values broadcast; at its one element for a statement of
/// a value per row, whose operands step the row with stride 0). The evaluators of both passes are
/// built once per thread and moved from row to row (seek); a row stays in L1 (or L2) between the
/// passes, and the destination is written with plain stores, as the row's next pass-1 read goes
/// on meanwhile (non-temporal ones measured up to 10% slower on one thread, 8192 x 768 floats).
template <class Stmt>
void run_rows(const RowPass1& pass1, Stmt& stmt, const ReducePlan& plan, int threads, bool per_row) {
  const IterationSpace space = plan.inner_space();
  const std::int64_t n = plan.n_red;
  std::int64_t kept[kMaxRank] = {};
  for (int d = 0; d < plan.nk(); ++d) kept[d] = plan.kept[std::size_t(d)].extent;
  const int team = int(std::min<std::int64_t>(plan.n_out, threads));
  WEFT_PRAGMA_OMP(omp parallel num_threads(team) if (team > 1))
  {
    RowFolds folds(plan, space, pass1.value_bytes.size());
    std::vector<std::function<void(const std::int64_t*)>> steps;
    for (const auto& make : pass1.row_steps) steps.push_back(make(folds));
    auto row_rhs = pass1.at_row(stmt.rhs, folds);
    using RowStatement = Assignment<typename Stmt::dest_type, decltype(row_rhs)>;
    using Kernel = PointwiseKernel<false, RowStatement>;
    BuildContext<typename Kernel::Shared> ctx;
    ctx.space = &space;
    Kernel kernel(space, std::move(ctx), RowStatement{stmt.dst, nullptr, row_rhs});
    std::int64_t outer[kMaxRank] = {};
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t o = 0; o < plan.n_out; ++o) {
      unravel(o, kept, plan.nk(), outer);
      for (auto& step : steps) step(outer);
      // A copy per row: its row values can live in registers (the kernel's own copy may alias the
      // destination's stores, so every packet would load them again).
      Kernel row = kernel;
      row.seek(outer);
      cpu::run_row<cpu::ContiguousRowTarget>(row, 0, per_row ? 1 : n, false);
    }
  }
}

/// Runs the statement as a row pass pair where it can (see the file comment); returns whether
/// it did. Throws what the reductions' and the statement's checks throw.
template <class Stmt>
bool run_as_row_epilogue(const char* op, Stmt& stmt) {
  using E = typename Stmt::expr_type;
  if constexpr (DenseNode<E> || dense_nodes_v<E> == 0) {
    return false;  // `y = sum(x, 1)` is the reduction itself
  } else {
    RowPass1 pass1;
    pass1.add_all(stmt.rhs);
    if (!pass1.ok || !pass1.rows) return false;
    const RowReduction rows = *pass1.rows;
    auto whole_rhs = pass1.with_placeholders(stmt.rhs);
    Assignment<typename Stmt::dest_type, decltype(whole_rhs)> whole{stmt.dst, stmt.owner, whole_rhs};
    OperandStorage<decltype(whole)> operands;
    KernelOperands k = kernel_operands(operands, false, whole);
    // (members, not a structured binding: a lambda below reads the shape, and clang 16 cannot
    // capture a structured binding under OpenMP)
    const std::pair<Device, Shape> checked = check_statements(op, k);
    const Device device = checked.first;
    const Shape& shape = checked.second;
    const Shape& full = rows.full;
    // A statement of the reductions' input shape, or of a value per row.
    const bool per_row = !(shape == full) && shape == rows.values_shape();
    if (!device.is_cpu() || !(shape == full || per_row)) return false;
    // Too few rows to share among the threads: the eager reductions split rows, pass 2 elements.
    const int threads = cpu::threads_for(full.numel());
    if (full.numel() / std::max<std::int64_t>(full[rows.dim], 1) < threads) return false;
    const RowBlocks blocks(full, rows.dim, threads);
    give_shape(k, 0, whole, shape, device);
    std::destroy_at(&stmt.dst);
    std::construct_at(&stmt.dst, whole.dst);
    const TensorRef dst = tensor_ref(stmt.dst);
    auto aliased = [&](const TensorRef& t) {
      return overlaps(byte_range(t), byte_range(dst)) && !elementwise_identical(t, dst, shape);
    };
    for (const ExprNode& n : k.nodes)
      if (n.kind == ExprNode::Kind::tensor && aliased(k.tensor(n))) return false;
    for (const TensorRef& t : pass1.reads)
      if (aliased(t)) return false;
    // The row path where the destination and every tensor read (but the reductions' placeholders)
    // step the reduced dim with stride 1 (a statement of a value per row: every tensor its
    // reductions read): one row at a time, its values scalars. The statement's operands are
    // broadcast to the full shape (stride 0 along dim for a value per row).
    std::vector<Strides> strides{broadcast_strides(stmt.dst.shape(), stmt.dst.strides(), full)};
    auto placeholder = [&](const TensorRef& t) {
      for (const double& p : pass1.placeholders)
        if (t.data() == static_cast<const void*>(&p)) return true;
      return false;
    };
    for (const ExprNode& n : k.nodes)
      if (n.kind == ExprNode::Kind::tensor && !placeholder(k.tensor(n)))
        strides.push_back(broadcast_strides(k.tensor(n).shape(), k.tensor(n).strides(), full));
    const std::size_t statement_operands = strides.size();
    for (const TensorRef& t : pass1.reads) strides.push_back(broadcast_strides(t.shape(), t.strides(), full));
    std::vector<bool> reduce(std::size_t(full.rank()), false);
    reduce[std::size_t(rows.dim)] = true;
    const ReducePlan plan = plan_reduction(full, reduce, strides, 0);
    const bool by_row = full[rows.dim] == 1 ||  // (rows of one element: any stride, read at j = 0 only)
                        std::all_of(strides.begin() + (per_row ? std::ptrdiff_t(statement_operands) : 0),
                                    strides.end(), [&](const Strides& s) { return s[rows.dim] == 1; });
    if (log_enabled(LogComponent::fusion) || log_enabled(LogComponent::output_code)) {
      const IterationSpace space = plan_statements(k, shape, true).space;
      const std::vector<const void*> seen = printed_inputs(k);  // say which inputs are row values
      std::string reductions;
      for (std::size_t i = 0; i < pass1.names.size(); ++i) {
        const auto at = std::find(seen.begin(), seen.end(), static_cast<const void*>(&pass1.placeholders[i]));
        reductions += cat(i ? ", " : "", at == seen.end() ? std::string("(inner) ") : cat("in", at - seen.begin(), " = "),
                          pass1.names[i]);
      }
      const std::string where =
          cat("cpu, row epilogue: ", by_row ? std::string("one row") : cat("blocks of ", blocks.per_block, " rows"),
              " at a time along dim ", rows.dim, " of ", full, "; pass 1 reduces each row: ", reductions,
              per_row ? "; pass 2 runs this kernel once per row" : "; pass 2 runs this kernel on the same rows");
      log_kernel<PointwiseKernel<false, decltype(whole)>>(space, where, whole);
    }
    if (shape.numel() == 0) return true;
    if (by_row) {
      run_rows(pass1, stmt, plan, threads, per_row);
      return true;
    }
    // A destination too large to stay in cache is written with non-temporal stores, as a plain
    // kernel's is (backend/run.hpp).
    const bool stream = shape.numel() * std::int64_t(sizeof(typename Stmt::dest_type)) >= kStreamingBytes;
    const int team = int(std::min<std::int64_t>(blocks.count, threads));
    WEFT_PRAGMA_OMP(omp parallel num_threads(team) if (team > 1))
    {
      std::vector<std::vector<double>> values(pass1.value_bytes.size());
      for (std::size_t i = 0; i < values.size(); ++i)
        values[i].resize((std::size_t(blocks.per_block) * pass1.value_bytes[i] + sizeof(double) - 1) / sizeof(double));
      std::int64_t coords[kMaxRank] = {};
      WEFT_PRAGMA_OMP(omp for schedule(static))
      for (std::int64_t b = 0; b < blocks.count; ++b) {
        const RowBlockContext c{&blocks, coords, blocks.locate(b, coords), values.data()};
        for (const auto& step : pass1.steps) step(c);
        auto block_rhs = pass1.at_block(stmt.rhs, c, per_row);
        Assignment<typename Stmt::dest_type, decltype(block_rhs)> part{
            row_block_view(stmt.dst, blocks, coords, c.rows, per_row), nullptr, block_rhs};
        run_block_statement(part, stream);
      }
    }
    return true;
  }
}

}  // namespace WEFT_BACKEND_ABI
#endif  // !defined(__CUDA_ARCH__)

}  // namespace weft::detail
