// SPDX-License-Identifier: MIT
/// @file Runs foreach statements (expressions over lists of tensors) as ONE multi-tensor kernel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weft/backend/cpu/foreach.hpp"
#include "weft/expr/operators.hpp"
#include "weft/plan/run.hpp"

namespace weft::detail {

/// The iteration space of a foreach kernel over `total` elements: single
/// tensors (one element each) are read at stride 0; list members are
/// selected per tensor and walked contiguously.
inline IterationSpace foreach_space(std::int64_t total) {
  IterationSpace space = plan_iteration(Shape{1}, {});
  space.foreach = true;
  space.numel = total;
  return space;
}

/// The kernel of list statements; fills `table` with the base pointers of
/// their lists' tensors and their ScalarLists' numbers. No checks.
template <class... Stmts>
PointwiseKernel<false, Stmts...> build_list_kernel(const IterationSpace& space, ListTable& table,
                                                   const Stmts&... stmts) {
  using Kernel = PointwiseKernel<false, Stmts...>;
  count_kernel_type<Kernel>();
  BuildContext<typename Kernel::Shared> ctx;
  ctx.space = &space;
  ctx.lists = &table;
  return Kernel(space, std::move(ctx), stmts...);
}

inline namespace WEFT_BACKEND_ABI {

#if !defined(__CUDA_ARCH__)
/// The CPU executor: ONE parallel region over all elements of all tensors
/// (cpu::for_each_list_piece); each piece of a tensor is one row of the
/// packet loop.
template <class Kernel>
void run_foreach_cpu(const Kernel& kernel, const ListTable& table, const std::vector<std::int64_t>& sizes,
                     int threads) {
  cpu::for_each_list_piece(sizes, threads, [&](int) {
    return [&, local = kernel](std::int64_t k, std::int64_t begin, std::int64_t end) mutable {
      IterationSpace piece;
      piece.shape = Shape{sizes[k]};
      piece.numel = sizes[k];
      local.select(k, table);
      cpu::run_range(local, piece, begin, end, false);
    };
  });
}
#endif

/// Checks list statements: one length for every list, per tensor index one device, one shape and
/// contiguous members, single tensors of one element, no overlaps between outputs, and inputs
/// overlapping an output only as that very tensor. Returns the device and each index's elements.
inline std::pair<Device, std::vector<std::int64_t>> check_list_statements(const char* op, const KernelOperands& k) {
  std::size_t size = 0;
  bool have_size = false;
  auto use_size = [&](std::size_t n, const char* what) {
    if (!have_size) size = n, have_size = true;
    else if (n != size)
      fail(op, "lists of lengths ", size, " and ", n, " (", what,
           ") in one foreach expression; every list needs one entry per tensor");
  };
  for (const ExprNode& out : k.outputs) use_size(k.list(out).size, "an output");
  for (const ExprNode& n : k.nodes) {
    if (n.kind == ExprNode::Kind::list) use_size(k.list(n).size, "an input list");
    else if (n.kind == ExprNode::Kind::number_list) use_size(n.count, "a ScalarList");
  }

  // Per tensor index: one device, one shape, contiguous members.
  Device device = Device::cpu();
  bool have_device = false;
  auto use_device = [&](Device d, std::size_t i) {
    if (!have_device) device = d, have_device = true;
    else if (d != device)
      fail(op, "tensor ", i, " is on ", d, " but the kernel runs on ", device, "; move the lists with .to(device)");
  };
  auto check_member = [&](const TensorRef& t, std::size_t i, const Shape& shape, const char* what) {
    if (!t.defined) fail(op, what, " tensor ", i, " is empty (default-constructed)");
    use_device(t.device, i);
    if (!(t.shape == shape))
      fail(op, "tensor ", i, " has shape ", shape, " in the first output but ", t.shape, " in ", what,
           "; list operands must match shapes index by index");
    if (!t.contiguous)
      fail(op, what, " tensor ", i, " of shape ", t.shape, " has strides ", t.strides,
           "; foreach kernels need contiguous tensors: call .contiguous() first");
  };
  // Each distinct input list is checked once per index: a list named several times (g in g * g)
  // or also written (p in p - lr * g) adds no work.
  std::vector<const void*> seen;
  for (const ExprNode& out : k.outputs) seen.push_back(k.list(out).id);
  std::vector<const ListRef*> inputs;
  for (const ExprNode& n : k.nodes)
    if (n.kind == ExprNode::Kind::list && std::find(seen.begin(), seen.end(), k.list(n).id) == seen.end()) {
      seen.push_back(k.list(n).id);
      inputs.push_back(&k.list(n));
    }
  // Outputs must not overlap each other; an input overlapping an output must be that output
  // itself (params = params - lr * grads).
  auto check_overlaps = [&](const std::vector<TensorRef>& outs, const TensorRef& in, std::size_t i) {
    for (const TensorRef& out : outs)
      if (overlaps(byte_range(in), byte_range(out)) && in.data != out.data)
        fail(op, "input tensor ", i, " overlaps output tensor ", i,
             " without being the same tensor; foreach reads and writes element by element");
  };
  std::vector<std::int64_t> sizes(size);
  std::vector<TensorRef> outs(k.statements());
  for (std::size_t i = 0; i < size; ++i) {
    for (std::size_t o = 0; o < outs.size(); ++o) outs[o] = k.list(k.outputs[o]).at(i);
    const Shape shape = outs[0].defined ? outs[0].shape : Shape{};
    sizes[i] = shape.numel();
    for (const TensorRef& out : outs) check_member(out, i, shape, "an output");
    for (std::size_t a = 0; a < outs.size(); ++a)
      for (std::size_t b = a + 1; b < outs.size(); ++b)
        if (overlaps(byte_range(outs[a]), byte_range(outs[b])))
          fail(op, "outputs ", a, " and ", b, " overlap at tensor ", i, "; each output needs its own storage");
    for (const ListRef* in : inputs) {
      const TensorRef t = in->at(i);
      check_member(t, i, shape, "an input list");
      check_overlaps(outs, t, i);
    }
  }
  for (const ExprNode& n : k.nodes) {
    if (n.kind != ExprNode::Kind::tensor) continue;
    const TensorRef& t = k.tensor(n);
    if (!t.defined) fail(op, "an operand is an empty (default-constructed) tensor");
    if (t.shape.numel() != 1)
      fail(op, "a single tensor in a foreach expression must hold one element (a number kept on the device), "
               "got shape ", t.shape, "; use a TensorList for per-tensor operands");
    if (have_device && t.device != device)
      fail(op, "a tensor on ", t.device, " meets lists on ", device, "; move it with .to(device)");
  }
  return {device, sizes};
}

/// Evaluates list statements `*dst_k = rhs_k` for every tensor index in one
/// kernel. Every check runs before anything is written.
template <class... Stmts>
void run_list_statements(const char* op, Stmts&... stmts) {
  const std::pair<Device, std::vector<std::int64_t>> checked = check_list_statements(op, kernel_operands(stmts...));
  const Device device = checked.first;
  const std::vector<std::int64_t>& sizes = checked.second;
  const std::size_t size = sizes.size();

  // Build the kernel: single tensors read element 0 (stride 0).
  std::int64_t total = 0;
  for (auto n : sizes) total += n;
  const IterationSpace space = foreach_space(total);
  using Kernel = PointwiseKernel<false, Stmts...>;
  std::string where;
  if (log_enabled(LogComponent::fusion) || log_enabled(LogComponent::output_code) ||
      log_enabled(LogComponent::foreach)) {
    where = cat(device, ", ", size, " tensors, ", total, " elements");
#if !defined(__CUDA_ARCH__)
    if (device.is_cpu())
      where += cat(", ", Kernel::kPacketCapable ? cat(simd::kIsaName, " x", cpu::lanes_v<Kernel>, " packets") : "scalar",
                   ", ", cpu::threads_for(total), " thread(s)");
#endif
    log_kernel<Kernel>(space, where, stmts...);
    log(LogComponent::foreach, LogLevel::info, op, ": ", sizeof...(Stmts), " output list(s) x ", size,
        " tensors, ", total, " elements, 1 kernel [", where, "]");
  }
  ListTable table;
  const Kernel kernel = build_list_kernel(space, table, stmts...);
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    run_foreach_cpu(kernel, table, sizes, cpu::threads_for(total));
#endif
    return;
  }
#if defined(__CUDACC__)
  cuda::run_foreach(kernel, table, sizes, device);
#else
  fail_no_cuda(op);
#endif
}

}  // namespace WEFT_BACKEND_ABI

template <AssignKind kind, class T, class Source>
void assign_list_into(TensorList<T>& dst, const Source& source) {
  static_assert(Operand<Source>, "weft: a TensorList can be assigned a list expression, a TensorList or a number");
  auto run = [&](auto rhs) {
    ListAssignment<T, decltype(rhs)> statement{&dst, rhs};
    run_list_statements("foreach", statement);
  };
  if constexpr (kind == AssignKind::set) run(as_expr(source));
  else if constexpr (kind == AssignKind::add) run(dst + source);
  else if constexpr (kind == AssignKind::sub) run(dst - source);
  else if constexpr (kind == AssignKind::mul) run(dst * source);
  else run(dst / source);
}

}  // namespace weft::detail
