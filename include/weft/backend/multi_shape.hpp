// SPDX-License-Identifier: MIT
/// @file Runs fused statements whatever their shapes: one pointwise kernel when they share one shape, else ONE multi-shape kernel (horizontal fusion) on the executor of their device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weft/backend/cpu/multi_shape.hpp"
#include "weft/backend/dense_statements.hpp"
#include "weft/backend/run.hpp"
#include "weft/plan/multi_shape.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/multi_shape.cuh"
#endif

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// Statements of different shapes after check_statement_operands: their checks, then (all passed)
/// Tensor destinations take their shapes and inputs overlapping another statement's output are
/// copied. Returns each statement's iteration space.
template <class... Stmts>
std::vector<IterationSpace> plan_multi_shape_statements(const char* op, KernelOperands& k, Device device,
                                                        Stmts&... stmts) {
  const std::vector<Shape> shapes = check_multi_shape_statements(op, k);
  std::size_t s = 0;
  ((give_shape(k, s, stmts, shapes[s], device), ++s), ...);
  read_overlaps_per_statement(op, k, shapes);
  std::vector<IterationSpace> spaces;
  for (s = 0; s < k.statements(); ++s) spaces.push_back(plan_statements(k, shapes[s], false, s, s + 1).space);
  return spaces;
}

/// Which statements the CPU writes with non-temporal stores (as one large pointwise kernel does,
/// plan_statements: outputs that would not stay in cache anyway, written without reading each
/// line first): when the statements write at least kStreamingBytes together, each one's size is
/// a multiple of cpu::kStreamGranule (so the threads' pieces start on packet boundaries), and the
/// statement's destination rows are runs of whole granules from aligned addresses (rows_aligned)
/// that nothing the statement reads overlaps.
inline std::vector<bool> multi_shape_streaming(const KernelOperands& k, const std::vector<IterationSpace>& spaces) {
  std::vector<bool> stream(spaces.size(), false);
  std::int64_t bytes = 0;
  for (std::size_t s = 0; s < spaces.size(); ++s) {
    if (spaces[s].numel % cpu::kStreamGranule != 0) return stream;
    bytes += spaces[s].numel * k.tensor(k.outputs[s]).element_bytes;
  }
  if (bytes < kStreamingBytes) return stream;
  for (std::size_t s = 0; s < spaces.size(); ++s) {
    const TensorRef& dst = k.tensor(k.outputs[s]);
    bool ok = spaces[s].inner() % cpu::kStreamGranule == 0 && rows_aligned(spaces[s], dst);
    k.for_each_in_statement(s, ExprNode::Kind::tensor, [&](const ExprNode& n) {
      ok = ok && !overlaps(byte_range(k.tensor(n)), byte_range(dst));
    });
    stream[s] = ok;
  }
  return stream;
}

/// Evaluates statements `*dst_k = rhs_k` of different shapes in one kernel (docs/dense.md,
/// "Horizontal fusion"). Every check runs before anything is allocated or written.
template <class... Stmts>
void run_multi_shape_statements(const char* op, KernelOperands& k, const Device device, Stmts&... stmts) {
  const std::vector<IterationSpace> spaces = plan_multi_shape_statements(op, k, device, stmts...);
  std::int64_t total = 0;
  for (const IterationSpace& space : spaces) total += space.numel;
  if (total == 0) return;
  using Kernel = MultiShapeKernel<Stmts...>;
#if defined(__CUDA_ARCH__)
  (void)device;
  cuda::compile_multi_shape_kernels<Kernel>();
#else
  const bool cpu = device.is_cpu();
  const int threads = cpu::threads_for(total);
  const std::vector<bool> stream = cpu ? multi_shape_streaming(k, spaces) : std::vector<bool>();
  if (log_enabled(LogComponent::fusion) || log_enabled(LogComponent::output_code)) {
    const auto streamed = std::count(stream.begin(), stream.end(), true);
    log_multi_shape_kernel<Kernel>(
        spaces,
        cpu ? cat("cpu, ", total, " elements, ", simd::kIsaName, " packets per statement, ", threads, " thread(s)",
                  streamed ? cat(", streaming stores for ", streamed, " statement(s)") : std::string())
            : cat("cuda:", device.index(), ", ", total, " elements, grid-stride blocks shared by statement"),
        stmts...);
  }
  const Kernel kernel = build_multi_shape_kernel(spaces, stmts...);
  if (cpu) return cpu::run_multi_shape(kernel, spaces, threads, stream);
#if defined(__CUDACC__)
  cuda::run_multi_shape(kernel, spaces, device);
#else
  fail_no_cuda(op);
#endif
#endif
}

/// weft::fuse of statements into tensors: one pointwise kernel when every statement writes one
/// shape (shared subexpressions computed once per element), else one multi-shape kernel. Dense
/// nodes (matmul) of several statements are evaluated first, all before anything is written, as
/// run_statements does (backend/dense_statements.hpp).
template <class... Stmts>
void run_fused_statements(const char* op, Stmts&... stmts) {
  if constexpr (sizeof...(Stmts) == 1) {
    run_statements(op, stmts...);
  } else if constexpr ((dense_nodes_v<typename Stmts::expr_type> + ... + 0) > 0) {
    auto staged = staged_statements(stmts...);
    [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      run_fused_statements(op, get<Is>(staged)...);
    }(std::index_sequence_for<Stmts...>{});
  } else {
    OperandStorage<Stmts...> operands;
    KernelOperands k = kernel_operands(operands, false, stmts...);
    const Device device = check_statement_operands(op, k);
    if (statements_share_shape(k)) return run_statements(op, stmts...);
    run_multi_shape_statements(op, k, device, stmts...);
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
