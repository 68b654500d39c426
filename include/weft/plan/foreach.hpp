// SPDX-License-Identifier: MIT
/// @file Runs foreach statements (expressions over lists of tensors) as ONE multi-tensor kernel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
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

/// Evaluates list statements `*dst_k = rhs_k` for every tensor index in one
/// kernel. Every check runs before anything is written.
template <class... Stmts>
void run_list_statements(const char* op, Stmts&... stmts) {
  std::size_t size = 0;
  bool have_size = false;
  auto use_size = [&](std::size_t n, const char* what) {
    if (!have_size) size = n, have_size = true;
    else if (n != size)
      fail(op, "lists of lengths ", size, " and ", n, " (", what,
           ") in one foreach expression; every list needs one entry per tensor");
  };
  (use_size(stmts.dst->size(), "an output"), ...);
  auto list_sizes = [&](auto& rhs) {
    visit_nodes(rhs, [&](auto& node) {
      if constexpr (requires { node.list; }) use_size(node.list.size(), "an input list");
      else if constexpr (requires { node.values; }) use_size(node.values.size(), "a ScalarList");
    });
  };
  (list_sizes(stmts.rhs), ...);

  // Per tensor index: one device, one shape, contiguous members.
  Device device = Device::cpu();
  bool have_device = false;
  auto use_device = [&](Device d, std::size_t k) {
    if (!have_device) device = d, have_device = true;
    else if (d != device)
      fail(op, "tensor ", k, " is on ", d, " but the kernel runs on ", device, "; move the lists with .to(device)");
  };
  auto check_member = [&](const auto& t, std::size_t k, const Shape& shape, const char* what) {
    if (!t.defined()) fail(op, what, " tensor ", k, " is empty (default-constructed)");
    use_device(t.device(), k);
    if (!(t.shape() == shape))
      fail(op, "tensor ", k, " has shape ", shape, " in the first output but ", t.shape(), " in ", what,
           "; list operands must match shapes index by index");
    if (!t.is_contiguous())
      fail(op, what, " tensor ", k, " of shape ", t.shape(), " has strides ", t.strides(),
           "; foreach kernels need contiguous tensors: call .contiguous() first");
  };
  // Each distinct input list is checked once per index: a list named several
  // times (g in g * g) or also written (p in p - lr * g) adds no work.
  std::vector<const void*> seen = {stmts.dst->id()...};
  std::vector<char> distinct;  // per list leaf, in visit order
  auto mark = [&](auto& rhs) {
    visit_nodes(rhs, [&](auto& node) {
      if constexpr (requires { node.list; }) {
        bool fresh = std::find(seen.begin(), seen.end(), node.list.id()) == seen.end();
        if (fresh) seen.push_back(node.list.id());
        distinct.push_back(fresh);
      }
    });
  };
  (mark(stmts.rhs), ...);
  auto for_each_distinct_input = [&](auto&& f) {
    std::size_t i = 0;
    auto visit = [&](auto& rhs) {
      visit_nodes(rhs, [&](auto& node) {
        if constexpr (requires { node.list; }) if (distinct[i++]) f(node.list);
      });
    };
    (visit(stmts.rhs), ...);
  };
  auto& first = *std::get<0>(std::tie(stmts...)).dst;
  std::vector<std::int64_t> sizes(size);
  for (std::size_t k = 0; k < size; ++k) {
    const Shape shape = first[k].defined() ? first[k].shape() : Shape{};
    sizes[k] = shape.numel();
    (check_member((*stmts.dst)[k], k, shape, "an output"), ...);
    for_each_distinct_input([&](auto& list) { check_member(list[k], k, shape, "an input list"); });
  }
  auto check_single = [&](auto& rhs) {
    for_each_leaf(rhs, [&](auto& leaf) {
      if (!leaf.tensor.defined()) fail(op, "an operand is an empty (default-constructed) tensor");
      if (leaf.tensor.numel() != 1)
        fail(op, "a single tensor in a foreach expression must hold one element (a number kept on the device), "
                 "got shape ", leaf.tensor.shape(), "; use a TensorList for per-tensor operands");
      if (have_device && leaf.tensor.device() != device)
        fail(op, "a tensor on ", leaf.tensor.device(), " meets lists on ", device, "; move it with .to(device)");
    });
  };
  (check_single(stmts.rhs), ...);

  // Outputs must not overlap each other; an input overlapping an output
  // must be that output itself (params = params - lr * grads).
  for (std::size_t k = 0; k < size; ++k) {
    const ByteRange outs[] = {byte_range((*stmts.dst)[k])...};
    constexpr std::size_t kOuts = sizeof...(Stmts);
    for (std::size_t a = 0; a < kOuts; ++a)
      for (std::size_t b = a + 1; b < kOuts; ++b)
        if (overlaps(outs[a], outs[b]))
          fail(op, "outputs ", a, " and ", b, " overlap at tensor ", k, "; each output needs its own storage");
    for_each_distinct_input([&](auto& list) {
      auto& in = list[k];
      const ByteRange range = byte_range(in);
      std::size_t o = 0;
      auto check = [&](auto& s) {
        const ByteRange& out = outs[o++];
        if (overlaps(range, out) && static_cast<const void*>(in.data()) != (*s.dst)[k].data())
          fail(op, "input tensor ", k, " overlaps output tensor ", k,
               " without being the same tensor; foreach reads and writes element by element");
      };
      (check(stmts), ...);
    });
  }

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
