// SPDX-License-Identifier: MIT
/// @file Runs fused statements: checks shapes, devices and aliasing, plans the iteration, dispatches to a backend.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/log/log.hpp"
#include "weft/plan/kernel.hpp"
#include "weft/plan/print.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/multi_tensor.cuh"
#include "weft/backend/cuda/pointwise.cuh"
#endif

namespace weft::detail {

/// Destinations at least this large are written with non-temporal stores on
/// the CPU: they would not stay in cache anyway, and streaming skips reading
/// each line before overwriting it (DESIGN.md section 5: ~1.15x).
inline constexpr std::int64_t kStreamingBytes = std::int64_t(8) << 20;

/// True when `t`, broadcast to `shape`, reads exactly the element `dst` writes at every index.
inline bool elementwise_identical(const TensorRef& t, const TensorRef& dst, const Shape& shape) {
  if (t.element_bytes != dst.element_bytes || t.data() != dst.data()) return false;
  if (!broadcasts_to(t.shape(), shape)) return false;
  Strides s = broadcast_strides(t.shape(), t.strides(), shape);
  for (int d = 0; d < shape.rank(); ++d)
    if (shape[d] != 1 && s[d] != dst.strides()[d]) return false;
  return true;
}

inline std::string join_shapes(const std::vector<Shape>& shapes) {
  std::string s;
  for (std::size_t i = 0; i < shapes.size(); ++i) s += (i ? ", " : "") + shapes[i].str();
  return s;
}

inline namespace WEFT_BACKEND_ABI {

/// Logs a kernel: the first run of each kernel type at info level (fusion,
/// output_code), every run at debug level (+fusion).
template <class Kernel, class... Stmts>
[[gnu::cold]] void log_kernel(const IterationSpace& space, const std::string& where, Stmts&... stmts) {
  static std::atomic<bool> seen{false};
  bool first = !seen.exchange(true, std::memory_order_relaxed);
  if (log_enabled(LogComponent::fusion, first ? LogLevel::info : LogLevel::debug))
    log_write(LogComponent::fusion, cat("fused ", sizeof...(Stmts), " statement(s) into 1 kernel: ",
                                        describe_kernel(space, where, true, stmts...), "  [", where, "]"));
  if (first && log_enabled(LogComponent::output_code))
    log_write(LogComponent::output_code, describe_kernel(space, where, false, stmts...));
}

/// Builds the kernel for one layout over `space` and logs it.
template <bool kLinear, class... Stmts>
PointwiseKernel<kLinear, Stmts...> build_kernel(const IterationSpace& space, const std::string& where,
                                                Stmts&... stmts) {
  using Kernel = PointwiseKernel<kLinear, Stmts...>;
  count_kernel_type<Kernel>();
  BuildContext<typename Kernel::Shared> ctx;
  ctx.space = &space;
  if (log_enabled(LogComponent::fusion) || log_enabled(LogComponent::output_code))
    log_kernel<Kernel>(space, where, stmts...);
  return Kernel(space, std::move(ctx), stmts...);
}

// nvcc's device pass parses host code too, but sees no CPU executor (the
// SIMD layer is host-only): the CPU dispatch exists in host passes only.
#if !defined(__CUDA_ARCH__)
/// The CPU runs a contiguous statement in the linear layout (no stride
/// arithmetic in the packet loop: measured ~10% faster in cache than the
/// strided layout's rank-1 case) and everything else in the strided layout.
/// Non-temporal stores need every packet store aligned: the outputs are
/// contiguous from an aligned base and each row holds whole packets.
template <class... Stmts>
void dispatch_cpu(const IterationSpace& space, bool stream, Stmts&... stmts) {
  auto run = [&]<bool kLinear>() {
    using Kernel = PointwiseKernel<kLinear, Stmts...>;
    const int threads = cpu::threads_for(space.numel);
    const bool streaming = stream && space.inner() % cpu::lanes_v<Kernel> == 0;
    std::string where;
    if (log_enabled(LogComponent::fusion) || log_enabled(LogComponent::output_code))
      where = cat("cpu, ", kLinear ? "contiguous" : "strided", ", ", space.numel, " elements, ",
                  Kernel::kPacketCapable ? cat(simd::kIsaName, " x", cpu::lanes_v<Kernel>, " packets")
                                         : std::string("scalar loop"),
                  ", ", threads, " thread(s)", streaming ? ", streaming stores" : "");
    cpu::run_pointwise(build_kernel<kLinear>(space, where, stmts...), space, threads, streaming);
  };
  if (space.linear) run.template operator()<true>();
  else run.template operator()<false>();
}
#endif

#if defined(__CUDACC__)
/// CUDA keeps the linear layout: it is what lets every thread issue 16-byte vector loads.
/// nvcc's device pass compiles the kernels only (compile_kernels).
template <class... Stmts>
void dispatch_cuda(const IterationSpace& space, Device device, Stmts&... stmts) {
#if defined(__CUDA_ARCH__)
  cuda::compile_pointwise_kernels<PointwiseKernel<true, Stmts...>>();
  cuda::compile_pointwise_kernels<PointwiseKernel<false, Stmts...>>();
  (void)space, (void)device, ((void)stmts, ...);
#else
  std::string where;
  if (log_enabled(LogComponent::fusion) || log_enabled(LogComponent::output_code))
    where = cat("cuda:", device.index(), ", ", space.linear ? "contiguous" : "strided", ", ", space.numel,
                " elements, ", cuda::describe_launch(space, device));
  if (space.linear) cuda::run_pointwise(build_kernel<true>(space, where, stmts...), space, device);
  else cuda::run_pointwise(build_kernel<false>(space, where, stmts...), space, device);
#endif
}
#endif

/// Whether statement s writes into its destination as it is: a view, a compound assignment, or a
/// number filling a Tensor. Otherwise (`tensor = e` with e reading tensors) the destination takes
/// the right-hand side's shape.
inline bool keeps_destination_shape(KernelOperands& k, std::size_t s) {
  const ExprNode& out = k.outputs[s];
  if (!out.resizable) return true;
  bool reads_tensor = false;
  k.for_each_in_statement(s, ExprNode::Kind::tensor, [&](const ExprNode&) { reads_tensor = true; });
  k.for_each_in_statement(s, ExprNode::Kind::list, [&](const ExprNode&) { reads_tensor = true; });
  return !reads_tensor && k.tensor(out).defined;
}

/// Checks pointwise statements' devices and shapes and that their destinations do not overlap;
/// returns the device and shape of the kernel.
inline std::pair<Device, Shape> check_statements(const char* op, KernelOperands& k) {
  Device device = Device::cpu();
  bool have_device = false;
  auto use_device = [&](Device d, const char* what, const Shape& shape) {
    if (!have_device) device = d, have_device = true;
    else if (d != device)
      fail(op, what, " of shape ", shape, " is on ", d, " but the kernel runs on ", device,
           "; move operands with .to(device) first");
  };
  for (std::size_t s = 0; s < k.statements(); ++s) {
    const TensorRef& t = k.tensor(k.outputs[s]);
    if (keeps_destination_shape(k, s)) {
      if (!t.defined)
        fail(op, "the destination is an empty view (default-constructed); views write into a tensor's elements");
      use_device(t.device, "destination", t.shape());
    }
  }
  for (const ExprNode& n : k.nodes) {
    if (n.kind != ExprNode::Kind::tensor) continue;
    const TensorRef& t = k.tensor(n);
    if (!t.defined) fail(op, "an operand is an empty (default-constructed) tensor");
    use_device(t.device, "an operand", t.shape());
  }
  // A Tensor that takes its right-hand side's shape keeps its device when nothing else names one.
  for (const ExprNode& out : k.outputs)
    if (const TensorRef& t = k.tensor(out); !have_device && t.defined) device = t.device, have_device = true;

  for (std::size_t s = 0; s < k.statements(); ++s) {
    Shape& shape = k.rhs_shapes[s] = Shape{};
    bool ok = true;
    k.for_each_in_statement(s, ExprNode::Kind::tensor, [&](const ExprNode& n) { ok = ok && broadcast_into(shape, k.tensor(n).shape()); });
    if (!ok) {
      std::vector<Shape> leaves;
      k.for_each_in_statement(s, ExprNode::Kind::tensor, [&](const ExprNode& n) { leaves.push_back(k.tensor(n).shape()); });
      fail(op, "operands of shapes ", join_shapes(leaves),
           " cannot be broadcast together (numpy rule: trailing dims must be equal or 1)");
    }
  }
  auto target = [&](std::size_t s) -> const Shape& {
    return keeps_destination_shape(k, s) ? k.tensor(k.outputs[s]).shape() : k.rhs_shapes[s];
  };
  Shape shape = target(0);
  for (std::size_t s = 0; s < k.statements(); ++s) {
    if (!(target(s) == shape))
      fail(op, "outputs of one kernel must have one shape, got ", shape, " and ", target(s));
    if (!broadcasts_to(k.rhs_shapes[s], shape))
      fail(op, "cannot write an expression of shape ", k.rhs_shapes[s], " into a destination of shape ", shape,
           "; the expression must broadcast to the destination (PyTorch's copy_ rule)");
  }

  for (std::size_t a = 0; a < k.statements(); ++a)
    for (std::size_t b = a + 1; b < k.statements(); ++b)
      if (overlaps(byte_range(k.tensor(k.outputs[a])), byte_range(k.tensor(k.outputs[b]))))
        fail(op, "outputs ", a, " and ", b, " overlap in memory; each output of a fused kernel needs its own storage");
  return {device, shape};
}

/// An input that overlaps a destination without reading exactly the element being written
/// (y = transpose(y), y = y[0] broadcast) is rebound to a copy. Returns whether any destination
/// is read.
inline bool read_overlaps_safely(const char* op, KernelOperands& k, const Shape& shape) {
  bool destination_read = false;
  for (const ExprNode& n : k.nodes) {
    if (n.kind != ExprNode::Kind::tensor) continue;
    TensorOperand& in = k.tensors[std::size_t(n.index)];
    for (const ExprNode& out : k.outputs) {
      const TensorRef& dst = k.tensor(out);
      if (!overlaps(byte_range(in.ref), byte_range(dst))) continue;
      destination_read = true;
      if (elementwise_identical(in.ref, dst, shape)) continue;
      log(LogComponent::fusion, LogLevel::info, op, ": an input of shape ", in.ref.shape(),
          " overlaps the output of shape ", shape, " without matching it elementwise; reading a copy");
      in.rebind_to_copy(in.tensor, in.ref);
    }
  }
  return destination_read;
}

/// The iteration space over every operand's strides, and whether the CPU streams the stores.
inline std::pair<IterationSpace, bool> plan_statements(const KernelOperands& k, const Shape& shape,
                                                        bool destination_read) {
  std::vector<Strides> strides;
  bool aligned = true, contiguous = true;
  std::int64_t dst_bytes = 0;
  for (const ExprNode& out : k.outputs) {
    const TensorRef& dst = k.tensor(out);
    strides.push_back(dst.strides());
    aligned = aligned && reinterpret_cast<std::uintptr_t>(dst.data()) % kHostAlignment == 0;
    contiguous = contiguous && dst.contiguous();
    dst_bytes += dst.element_bytes;
  }
  for (const ExprNode& n : k.nodes)
    if (n.kind == ExprNode::Kind::tensor) {
      const TensorRef& t = k.tensor(n);
      strides.push_back(broadcast_strides(t.shape(), t.strides(), shape));
    }
  IterationSpace space = plan_iteration(shape, strides);
  dst_bytes *= space.numel;
  return {space, contiguous && aligned && !destination_read && dst_bytes >= kStreamingBytes};
}

/// Evaluates statements `*dst_k = rhs_k` in one kernel (see DESIGN.md: fuse).
/// Every check runs before anything is allocated or written.
template <class... Stmts>
void run_statements(const char* op, Stmts&... stmts) {
  OperandStorage<Stmts...> operands;
  KernelOperands k = kernel_operands(operands, false, stmts...);
  const std::pair<Device, Shape> checked = check_statements(op, k);
  const Device device = checked.first;
  const Shape& shape = checked.second;
  // All checks passed: a Tensor destination that takes the right-hand side's shape gets new
  // elements unless its own already have that shape and device (then they are written in place).
  std::size_t s = 0;
  auto reallocate = [&](auto& stmt) {
    using T = typename std::remove_cvref_t<decltype(stmt)>::dest_type;
    if (!keeps_destination_shape(k, s) &&
        !(stmt.owner->defined() && stmt.owner->shape() == shape && stmt.owner->device() == device)) {
      *stmt.owner = Tensor<T>(AdoptStorage{}, allocate(std::size_t(shape.numel()) * sizeof(T), device), shape);
      std::destroy_at(&stmt.dst);
      std::construct_at(&stmt.dst, stmt.owner->view());
      k.tensors[std::size_t(k.outputs[s].index)].ref = tensor_ref(stmt.dst);
    }
    ++s;
  };
  (reallocate(stmts), ...);
  if (shape.numel() == 0) return;
  const bool destination_read = read_overlaps_safely(op, k, shape);
  const auto [space, stream] = plan_statements(k, shape, destination_read);
#if !defined(__CUDA_ARCH__)
  if (device.is_cpu()) return dispatch_cpu(space, stream, stmts...);
#else
  (void)stream;  // the device pass has no CPU dispatch
#endif
#if defined(__CUDACC__)
  dispatch_cuda(space, device, stmts...);
#else
  fail_no_cuda(op);
#endif
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
