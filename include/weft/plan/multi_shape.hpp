// SPDX-License-Identifier: MIT
/// @file Plans statements of different shapes as ONE kernel (horizontal fusion): per-statement checks, iteration spaces and kernels, and the index switch that runs statement s.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weft/plan/statements.hpp"

namespace weft::detail {

/// The kernel of statements of different shapes: statement s keeps its own kernel type
/// (PointwiseKernel<false, Stmt_s>, the strided layout, of which a contiguous space is the rank-1
/// case) over its own iteration space. An executor cuts the statements' elements into pieces and
/// runs each piece through visit(s, f), a compile-time index switch: one kernel type per call, where
/// choosing a layout per statement would instantiate 2^N. Statements share no subexpression cache:
/// their elements are not computed at one index.
template <class... Stmts>
struct MultiShapeKernel {
  static constexpr int kStatements = int(sizeof...(Stmts));
  Tuple<PointwiseKernel<false, Stmts>...> kernels;

  /// f(kernel of statement s).
  template <class F>
  WEFT_HOST_DEVICE void visit(int s, F&& f) {
    visit_in(kernels, s, f, std::index_sequence_for<Stmts...>{});
  }
  template <class F>
  WEFT_HOST_DEVICE void visit(int s, F&& f) const {
    visit_in(kernels, s, f, std::index_sequence_for<Stmts...>{});
  }

 private:
  template <class Kernels, class F, std::size_t... Is>
  WEFT_HOST_DEVICE static void visit_in(Kernels& kernels, int s, F& f, std::index_sequence<Is...>) {
    (void)((s == int(Is) ? (f(get<Is>(kernels)), true) : false) || ...);
  }
};

inline namespace WEFT_BACKEND_ABI {

/// Whether every statement writes one shape (after check_statement_operands): then they run as one
/// pointwise kernel that computes their shared subexpressions once per element.
inline bool statements_share_shape(KernelOperands& k) {
  for (std::size_t s = 1; s < k.statements(); ++s)
    if (!(statement_shape(k, s) == statement_shape(k, 0))) return false;
  return true;
}

/// Checks statements of different shapes: each right-hand side broadcasts to its own destination,
/// and no two destinations overlap (after check_statement_operands). Returns each statement's shape.
inline std::vector<Shape> check_multi_shape_statements(const char* op, KernelOperands& k) {
  std::vector<Shape> shapes;
  for (std::size_t s = 0; s < k.statements(); ++s) {
    shapes.push_back(statement_shape(k, s));
    check_broadcasts_to(op, k, s, shapes.back());
  }
  check_outputs_apart(op, k);
  return shapes;
}

/// Statements of different shapes run in no order relative to each other (other threads, other
/// blocks), so an input may overlap a destination only as its own statement's destination read
/// at the element being written; any other overlap reads a copy (every right-hand side reads the
/// values from before the call).
inline void read_overlaps_per_statement(const char* op, KernelOperands& k, const std::vector<Shape>& shapes) {
  rebind_overlapping_reads(op, k, [&](const TensorRef& in, std::size_t s, std::size_t t) {
    return s == t && elementwise_identical(in, k.tensor(k.outputs[t]), shapes[s]);
  });
}

/// The kernel of statements of different shapes, statement s over spaces[s].
template <class... Stmts>
MultiShapeKernel<Stmts...> build_multi_shape_kernel(const std::vector<IterationSpace>& spaces, Stmts&... stmts) {
  using Kernel = MultiShapeKernel<Stmts...>;
  count_kernel_type<Kernel>();
  return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    return Kernel{{{{construct_kernel<false>(spaces[Is], nullptr, stmts)}...}}};
  }(std::index_sequence_for<Stmts...>{});
}

/// Logs a kernel of statements of different shapes, as log_kernel: one fusion line naming the
/// statements and their shapes, and for output_code each statement's pseudo-source over its own
/// iteration space.
template <class Kernel, class... Stmts>
[[gnu::cold]] void log_multi_shape_kernel(const std::vector<IterationSpace>& spaces, const std::string& where,
                                          Stmts&... stmts) {
  static std::atomic<bool> seen{false};
  const bool first = !seen.exchange(true, std::memory_order_relaxed);
  const bool line = log_enabled(LogComponent::fusion, first ? LogLevel::info : LogLevel::debug);
  const bool code = first && log_enabled(LogComponent::output_code);
  if (!line && !code) return;
  constexpr std::size_t n = sizeof...(Stmts);
  std::string summary, blocks;
  std::size_t s = 0;
  auto describe = [&](auto& stmt) {
    const IterationSpace& space = spaces[s];
    if (line)
      summary += cat(s ? "; " : "", "[", s, "] ", describe_kernel(space, where, true, stmt), " over ", space.full);
    if (code)
      blocks += cat("\n", describe_kernel(space, cat("statement ", s, " of ", n, ", ", space.numel, " elements"),
                                          false, stmt));
    ++s;
  };
  (describe(stmts), ...);
  if (line)
    log_write(LogComponent::fusion,
              cat("fused ", n, " statements of different shapes into 1 kernel: ", summary, "  [", where, "]"));
  if (code)
    log_write(LogComponent::output_code,
              cat("kernel multi-shape (", where, "): ", n, " statements of different shapes, each over its own "
                  "iteration space, in 1 kernel", blocks));
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
