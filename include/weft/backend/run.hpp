// SPDX-License-Identifier: MIT
/// @file Runs statements: checks and plans them (plan/), then hands the kernel to the executor of their device.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "weft/backend/cpu/foreach.hpp"
#include "weft/backend/cpu/simd/isa_hint.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/backend/dense_statements.hpp"
#include "weft/backend/row_epilogue.hpp"
#include "weft/log/log.hpp"
#include "weft/plan/foreach.hpp"
#include "weft/plan/statements.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/foreach.cuh"
#include "weft/backend/cuda/pointwise.cuh"
#endif

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

// nvcc's device pass parses host code too, but sees no CPU executor (the
// SIMD layer is host-only): the CPU dispatch exists in host passes only.
#if !defined(__CUDA_ARCH__)
/// The CPU runs a contiguous statement in the linear layout (no stride
/// arithmetic in the packet loop: measured ~10% faster in cache than the
/// strided layout's rank-1 case) and everything else in the strided layout.
/// Non-temporal stores need every packet store aligned: the outputs are
/// contiguous from an aligned base and each row holds whole packets.
/// `k`: the statements' operands, recorded for the log when `logging`.
template <class... Stmts>
void dispatch_cpu(const StatementPlan& plan, const KernelOperands& k, bool logging, Stmts&... stmts) {
  cpu::hint_isa_once();
  const IterationSpace& space = plan.space;
  auto run = [&]<bool kLinear>() {
    using Kernel = PointwiseKernel<kLinear, Stmts...>;
    count_kernel_type<Kernel>();
    const int threads = cpu::threads_for(space.numel);
    const bool streaming = plan.stream && space.inner() % cpu::lanes_v<Kernel> == 0;
    if (logging)
      log_kernel<Kernel>(k, space,
                         cat("cpu, ", kLinear ? "contiguous" : "strided", ", ", space.numel, " elements, ",
                             KernelPackets<Kernel>::capable ? cat(simd::kIsaName, " x", cpu::lanes_v<Kernel>, " packets")
                                                            : std::string("scalar loop"),
                             ", ", threads, " thread(s)", streaming ? ", streaming stores" : ""));
    cpu::run_pointwise(construct_kernel<kLinear>(space, plan.strides.data(), stmts...), space, threads, streaming);
  };
  if (space.linear) run.template operator()<true>();
  else run.template operator()<false>();
}
#endif

#if defined(__CUDACC__)
/// CUDA keeps the linear layout: it is what lets every thread issue 16-byte vector loads.
/// nvcc's device pass compiles the kernels only (compile_kernels).
template <class... Stmts>
void dispatch_cuda(const StatementPlan& plan, const KernelOperands& k, bool logging, Device device, Stmts&... stmts) {
#if defined(__CUDA_ARCH__)
  cuda::compile_pointwise_kernels<PointwiseKernel<true, Stmts...>>();
  cuda::compile_pointwise_kernels<PointwiseKernel<false, Stmts...>>();
  (void)plan, (void)k, (void)logging, (void)device, ((void)stmts, ...);
#else
  const IterationSpace& space = plan.space;
  auto run = [&]<bool kLinear>() {
    using Kernel = PointwiseKernel<kLinear, Stmts...>;
    count_kernel_type<Kernel>();
    if (logging)
      log_kernel<Kernel>(k, space,
                         cat("cuda:", device.index(), ", ", kLinear ? "contiguous" : "strided", ", ", space.numel,
                             " elements, ", cuda::describe_launch(space, device)));
    cuda::run_pointwise(construct_kernel<kLinear>(space, plan.strides.data(), stmts...), space, device);
  };
  if (space.linear) run.template operator()<true>();
  else run.template operator()<false>();
#endif
}
#endif

/// After the checks: statement s's Tensor destination, when it takes the right-hand side's shape,
/// gets new elements of `shape` on `device` unless its own already have that shape and device
/// (then they are written in place).
template <class Stmt>
void give_shape(KernelOperands& k, std::size_t s, Stmt& stmt, const Shape& shape, Device device) {
  using T = typename Stmt::dest_type;
  if (keeps_destination_shape(k, s) ||
      (stmt.owner->defined() && stmt.owner->shape() == shape && stmt.owner->device() == device))
    return;
  *stmt.owner = Tensor<T>(AdoptStorage{}, allocate(std::size_t(shape.numel()) * sizeof(T), device), shape);
  std::destroy_at(&stmt.dst);
  std::construct_at(&stmt.dst, stmt.owner->view());
  k.tensors[std::size_t(k.outputs[s].index)].ref = tensor_ref(stmt.dst);
}

/// Evaluates statements `*dst_k = rhs_k` in one kernel (docs/api.md: fuse). Every check runs
/// before anything is allocated or written. The statements' types are walked once, to record
/// their operands (kernel_operands); checks, plan and log read that record, and the kernel's
/// evaluators take the planned strides.
template <class... Stmts>
void run_pointwise_statements(const char* op, Stmts&... stmts) {
  const bool logging = kernel_logs_enabled();
  OperandStorage<Stmts...> operands;
  KernelOperands k = kernel_operands(operands, logging, stmts...);
  const std::pair<Device, Shape> checked = check_statements(op, k);
  const Device device = checked.first;
  const Shape& shape = checked.second;
  // All checks passed.
  std::size_t s = 0;
  (give_shape(k, s++, stmts, shape, device), ...);
  if (shape.numel() == 0) return;
  const bool destination_read = read_overlaps_safely(op, k, shape);
  const StatementPlan plan = plan_statements(k, shape, destination_read);
#if !defined(__CUDA_ARCH__)
  if (device.is_cpu()) return dispatch_cpu(plan, k, logging, stmts...);
#endif
#if defined(__CUDACC__)
  dispatch_cuda(plan, k, logging, device, stmts...);
#else
  fail_no_cuda(op);
#endif
}

/// Runs statements: pointwise ones as one kernel (run_pointwise_statements); one that reads a
/// dense node (matmul) through it, as its epilogue or after it (backend/dense_statements.hpp).
template <class... Stmts>
void run_statements(const char* op, Stmts&... stmts) {
  if constexpr ((dense_nodes_v<typename Stmts::expr_type> + ... + 0) > 0) run_dense_statements(op, stmts...);
  else run_pointwise_statements(op, stmts...);
}

#if !defined(__CUDA_ARCH__)
/// The CPU executor: ONE parallel region over all elements of all tensors
/// (cpu::for_each_list_piece); each piece of a tensor is one row of the
/// packet loop (cpu::run_row, after select(k): a list member is contiguous and
/// a single tensor is read at stride 0, so the row needs no iteration space),
/// while the members of a later tensor are prefetched.
template <class Kernel>
void run_foreach_cpu(const Kernel& kernel, const ListTable& table, std::span<const std::int64_t> start, int threads) {
  cpu::hint_isa_once();
  cpu::for_each_list_piece(start, threads, [&](int) {
    return [&, local = kernel](std::int64_t k, std::int64_t begin, std::int64_t end) mutable {
      cpu::prefetch_list_tensor(table, start, k + cpu::kPrefetchTensorsAhead);
      local.select(k, table);
      cpu::run_row(local, begin, end, false);
    };
  });
}
#endif

/// Evaluates list statements `*dst_k = rhs_k` for every tensor index in one
/// kernel. Every check runs before anything is written.
template <ForeachBackends kBackends = ForeachBackends::cpu_and_cuda, class... Stmts>
void run_foreach_statements(const char* op, Stmts&... stmts) {
  const bool logging = kernel_logs_enabled() || log_enabled(LogComponent::foreach);
  OperandStorage<Stmts...> operands;
  KernelOperands k = kernel_operands(operands, logging, stmts...);
  const CheckedLists checked = check_foreach_statements(op, k);
  const Device device = checked.device;
  const std::span<const std::int64_t> start = checked.start;
#if defined(__CUDA_ARCH__)
  // nvcc's device pass: the kernels only (compile_kernels). The checks above stay: what they
  // instantiate can launch kernels too (a copy of an input that overlaps an output).
  if constexpr (kBackends != ForeachBackends::cpu_only)
    cuda::compile_foreach_kernels<PointwiseKernel<false, Stmts...>>();
  (void)device, (void)start, (void)logging;
#else
  const std::size_t size = start.size() - 1;

  // Build the kernel: single tensors read element 0 (stride 0).
  const std::int64_t total = start.back();
  const IterationSpace space = foreach_space(total);
  using Kernel = PointwiseKernel<false, Stmts...>;
  if (logging) {
    std::string where = cat(device, ", ", size, " tensors, ", total, " elements");
    if (device.is_cpu())
      where += cat(", ", KernelPackets<Kernel>::capable ? cat(simd::kIsaName, " x", cpu::lanes_v<Kernel>, " packets") : "scalar",
                   ", ", cpu::threads_for(total), " thread(s)");
    log_kernel<Kernel>(k, space, where);
    log_message(LogComponent::foreach, LogLevel::info, op, ": ", sizeof...(Stmts), " output list(s) x ", size,
        " tensors, ", total, " elements, 1 kernel [", where, "]");
  }
  ListTable table;
  const Kernel kernel = build_foreach_kernel(space, table, stmts...);
  if (device.is_cpu()) {
    if constexpr (kBackends == ForeachBackends::cuda_only)
      fail(op, "internal error: lists on ", device, " reached a call compiled for CUDA only");
    else return run_foreach_cpu(kernel, table, start, cpu::threads_for(total));
  }
  if constexpr (kBackends == ForeachBackends::cpu_only)
    fail(op, "internal error: lists on ", device, " reached a call compiled for the CPU only");
#if defined(__CUDACC__)
  else {
    std::vector<std::int64_t> sizes(size);
    for (std::size_t i = 0; i < size; ++i) sizes[i] = start[i + 1] - start[i];
    cuda::run_foreach(kernel, table, sizes, device);
  }
#else
  fail_no_cuda(op);
#endif
#endif  // __CUDA_ARCH__
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
