// SPDX-License-Identifier: MIT
/// @file Plans fused statements: checks shapes, devices and aliasing, plans the iteration space, builds and logs the kernel.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "weft/core/config.hpp"
#include "weft/log/log.hpp"
#include "weft/plan/kernel.hpp"
#include "weft/plan/print.hpp"


namespace weft::detail {

/// Destinations at least this large are written with non-temporal stores on
/// the CPU: they would not stay in cache anyway, and streaming skips reading
/// each line before overwriting it (measured ~1.15x: docs/benchmarks.md).
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

inline namespace WEFT_BACKEND_ABI {

/// Logs a kernel from its recorded operands (kernel_operands with find_repeats): the first run of
/// each kernel type at info level (fusion, output_code), every run at debug level (+fusion).
template <class Kernel>
[[gnu::cold]] void log_kernel(const KernelOperands& k, const IterationSpace& space, const std::string& where) {
  static std::atomic<bool> seen{false};
  bool first = !seen.exchange(true, std::memory_order_relaxed);
  if (log_enabled(LogComponent::fusion, first ? LogLevel::info : LogLevel::debug))
    log_write(LogComponent::fusion, cat("fused ", k.statements(), " statement(s) into 1 kernel: ",
                                        print_kernel(k, space, where, true), "  [", where, "]"));
  if (first && log_enabled(LogComponent::output_code))
    log_write(LogComponent::output_code, print_kernel(k, space, where, false));
}

/// Logs a kernel whose operands were not recorded for the log: records them first.
template <class Kernel, class... Stmts>
[[gnu::cold]] void log_kernel(const IterationSpace& space, const std::string& where, Stmts&... stmts) {
  OperandStorage<Stmts...> operands;
  log_kernel<Kernel>(kernel_operands(operands, true, stmts...), space, where);
}

/// Whether the fusion or output_code log is on: then kernels record their operands for it.
inline bool kernel_logs_enabled() {
  return log_enabled(LogComponent::fusion) || log_enabled(LogComponent::output_code);
}

/// The kernel of statements for one layout over `space`; `planned`: plan_statements' strides (or
/// null: each operand's own, broadcast and collapsed).
template <bool kLinear, class... Stmts>
PointwiseKernel<kLinear, Stmts...> construct_kernel(const IterationSpace& space, const Strides* planned,
                                                    Stmts&... stmts) {
  using Kernel = PointwiseKernel<kLinear, Stmts...>;
  BuildContext<typename Kernel::Shared> ctx;
  ctx.space = &space;
  ctx.planned = planned;
  return Kernel(space, std::move(ctx), stmts...);
}

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

/// Checks pointwise statements' devices and operands (destinations, leaves) and broadcasts each
/// right-hand side's operands into k.rhs_shapes; returns the device of the kernel.
WEFT_SHARED Device check_statement_operands(const char* op, KernelOperands& k)
#if WEFT_SHARED_BODIES
{
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

  // Broadcast in place: every kernel launch passes here, so the shapes are gathered only to fail.
  for (std::size_t s = 0; s < k.statements(); ++s) {
    Shape& shape = k.rhs_shapes[s] = Shape{};
    bool ok = true;
    k.for_each_in_statement(s, ExprNode::Kind::tensor,
                            [&](const ExprNode& n) { ok = ok && broadcast_into(shape, k.tensor(n).shape()); });
    if (!ok) {
      std::vector<Shape> leaves;
      k.for_each_in_statement(s, ExprNode::Kind::tensor, [&](const ExprNode& n) { leaves.push_back(k.tensor(n).shape()); });
      fail_broadcast(op, leaves);
    }
  }
  return device;
}
#else
;
#endif

/// The shape statement s writes: its destination's (a view, a compound assignment), else its
/// right-hand side's (after check_statement_operands).
WEFT_SHARED const Shape& statement_shape(KernelOperands& k, std::size_t s)
#if WEFT_SHARED_BODIES
{
  return keeps_destination_shape(k, s) ? k.tensor(k.outputs[s]).shape() : k.rhs_shapes[s];
}
#else
;
#endif

/// Statement s's right-hand side broadcasts to `shape` (PyTorch's copy_ rule), else a weft::Error.
inline void check_broadcasts_to(const char* op, const KernelOperands& k, std::size_t s, const Shape& shape) {
  if (!broadcasts_to(k.rhs_shapes[s], shape))
    fail(op, "cannot write an expression of shape ", k.rhs_shapes[s], " into a destination of shape ", shape,
         "; the expression must broadcast to the destination (PyTorch's copy_ rule)");
}

/// No two destinations share an element.
inline void check_outputs_apart(const char* op, const KernelOperands& k) {
  for (std::size_t a = 0; a < k.statements(); ++a)
    for (std::size_t b = a + 1; b < k.statements(); ++b)
      if (share_elements(k.tensor(k.outputs[a]), k.tensor(k.outputs[b])))
        fail(op, "outputs ", a, " and ", b, " overlap in memory; each output of a fused kernel needs its own storage");
}

/// Checks pointwise statements' devices and shapes and that their destinations do not overlap;
/// returns the device and shape of the kernel.
WEFT_SHARED std::pair<Device, Shape> check_statements(const char* op, KernelOperands& k)
#if WEFT_SHARED_BODIES
{
  const Device device = check_statement_operands(op, k);
  Shape shape = statement_shape(k, 0);
  for (std::size_t s = 0; s < k.statements(); ++s) {
    if (!(statement_shape(k, s) == shape))
      fail(op, "outputs of one kernel must have one shape, got ", shape, " and ", statement_shape(k, s));
    check_broadcasts_to(op, k, s, shape);
  }
  check_outputs_apart(op, k);
  return {device, shape};
}
#else
;
#endif

/// Rebinds to a copy every input that overlaps a destination unless `safe(input, s, t)`: input
/// of statement s, destination of statement t. Returns whether any destination is read.
template <class Safe>
bool rebind_overlapping_reads(const char* op, KernelOperands& k, Safe&& safe) {
  bool destination_read = false;
  for (std::size_t s = 0; s < k.statements(); ++s)
    for (std::size_t i = k.rhs_begin[s]; i < k.rhs_begin[s + 1]; ++i) {
      if (k.nodes[i].kind != ExprNode::Kind::tensor) continue;
      TensorOperand& in = k.tensors[std::size_t(k.nodes[i].index)];
      for (std::size_t t = 0; t < k.statements(); ++t) {
        const TensorRef& dst = k.tensor(k.outputs[t]);
        if (!share_elements(in.ref, dst)) continue;
        destination_read = true;
        if (safe(in.ref, s, t)) continue;
        log_message(LogComponent::fusion, LogLevel::info, op, ": an input of shape ", in.ref.shape(),
            " overlaps the output of shape ", dst.shape(), " without matching it elementwise; reading a copy");
        in.rebind_to_copy(in.tensor, in.ref);
      }
    }
  return destination_read;
}

/// An input that overlaps a destination without reading exactly the element being written
/// (y = transpose(y), y = y[0] broadcast) is rebound to a copy. Returns whether any destination
/// is read.
inline bool read_overlaps_safely(const char* op, KernelOperands& k, const Shape& shape) {
  return rebind_overlapping_reads(op, k, [&](const TensorRef& in, std::size_t, std::size_t t) {
    return elementwise_identical(in, k.tensor(k.outputs[t]), shape);
  });
}

/// Whether every row of `dst` in `space` is a unit-stride run starting on a kHostAlignment
/// boundary, what non-temporal packet stores need (with rows of whole packets, which the CPU
/// executor checks): a contiguous destination from an aligned base, and a slice of every row
/// such as cat along the last dim writes.
inline bool rows_aligned(const IterationSpace& space, const TensorRef& dst) {
  const Strides strides = space.collapse(dst.strides());
  const int r = space.rank();
  bool ok = strides[r - 1] == 1 && reinterpret_cast<std::uintptr_t>(dst.data()) % kHostAlignment == 0;
  for (int d = 0; d + 1 < r; ++d)
    ok = ok && strides[d] != 0 && (strides[d] * dst.element_bytes) % std::int64_t(kHostAlignment) == 0;
  return ok;
}

/// How statements run: their iteration space, whether the CPU streams the stores, and every
/// operand's strides in that space: the destinations', then each tensor leaf's in preorder, the
/// order the kernel's evaluators take them in (BuildContext::planned). They lie in the recorded
/// operands' storage (KernelOperands::planned; the next plan over the same operands reuses it)
/// and are collapsed to the space only in the strided layout: the linear one reads no strides.
struct StatementPlan {
  IterationSpace space;
  bool stream = false;
  std::span<const Strides> strides;
};

/// The plan of statements [first, last) (default: all) over `shape`. Allocates nothing: every
/// assignment plans.
WEFT_SHARED StatementPlan plan_statements(const KernelOperands& k, const Shape& shape, bool destination_read,
                                     std::size_t first = 0, std::size_t last = std::size_t(-1))
#if WEFT_SHARED_BODIES
{
  last = std::min(last, k.statements());
  StatementPlan plan;
  std::size_t n = 0;
  std::int64_t dst_bytes = 0;
  for (std::size_t s = first; s < last; ++s) {
    const TensorRef& dst = k.tensor(k.outputs[s]);
    k.planned[n++] = dst.strides();
    dst_bytes += dst.element_bytes;
  }
  for (std::size_t i = k.rhs_begin[first]; i < k.rhs_begin[last]; ++i)
    if (k.nodes[i].kind == ExprNode::Kind::tensor) {
      const TensorRef& t = k.tensor(k.nodes[i]);
      k.planned[n++] = broadcast_strides(t.shape(), t.strides(), shape);
    }
  plan.strides = k.planned.first(n);
  plan.space = plan_iteration(shape, plan.strides);
  if (!plan.space.linear)
    for (Strides& s : k.planned.first(n)) s = plan.space.collapse(s);
  dst_bytes *= plan.space.numel;
  bool aligned_rows = true;
  for (std::size_t s = first; s < last; ++s) aligned_rows = aligned_rows && rows_aligned(plan.space, k.tensor(k.outputs[s]));
  plan.stream = aligned_rows && !destination_read && dst_bytes >= kStreamingBytes;
  return plan;
}
#else
;
#endif

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
