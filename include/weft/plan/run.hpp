// SPDX-License-Identifier: MIT
/// @file Runs fused statements: checks shapes, devices and aliasing, plans the iteration, dispatches to a backend.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/expr/print.hpp"
#include "weft/log/log.hpp"
#include "weft/plan/kernel.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/multi_tensor.cuh"
#include "weft/backend/cuda/pointwise.cuh"
#endif

namespace weft::detail {

/// Destinations at least this large are written with non-temporal stores on
/// the CPU: they would not stay in cache anyway, and streaming skips reading
/// each line before overwriting it (DESIGN.md section 5: ~1.15x).
inline constexpr std::int64_t kStreamingBytes = std::int64_t(8) << 20;

/// The bytes a view can touch: [lo, hi) within its storage.
struct ByteRange {
  const Storage* storage;
  std::int64_t lo, hi;
};

template <class T>
ByteRange byte_range(const Tensor<T>& t) {
  std::int64_t lo = t.offset(), hi = t.offset();
  for (int d = 0; d < t.dim(); ++d) {
    if (t.shape()[d] == 0) return {t.storage().get(), 0, 0};
    std::int64_t reach = (t.shape()[d] - 1) * t.strides()[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return {t.storage().get(), lo * std::int64_t(sizeof(T)), (hi + 1) * std::int64_t(sizeof(T))};
}

inline bool overlaps(const ByteRange& a, const ByteRange& b) {
  return a.storage && a.storage == b.storage && a.lo < b.hi && b.lo < a.hi;
}

/// True when `t`, broadcast to `shape`, reads exactly the element `dst` writes at every index.
template <class T, class U>
bool elementwise_identical(const Tensor<T>& t, const Tensor<U>& dst, const Shape& shape) {
  if (sizeof(T) != sizeof(U) || t.data() != static_cast<const void*>(dst.data())) return false;
  if (!broadcasts_to(t.shape(), shape)) return false;
  Strides s = broadcast_strides(t.shape(), t.strides(), shape);
  for (int d = 0; d < shape.rank(); ++d)
    if (shape[d] != 1 && s[d] != dst.strides()[d]) return false;
  return true;
}

/// Shapes of all tensors an expression reads, left to right.
template <class E>
std::vector<Shape> leaf_shapes(E& e) {
  std::vector<Shape> shapes;
  for_each_leaf(e, [&](auto& leaf) { shapes.push_back(leaf.tensor.shape()); });
  return shapes;
}

inline std::string join_shapes(const std::vector<Shape>& shapes) {
  std::string s;
  for (std::size_t i = 0; i < shapes.size(); ++i) s += (i ? ", " : "") + shapes[i].str();
  return s;
}

/// Lays out a printed kernel: one line for `fusion`, a block for `output_code`.
/// Not a template, so each translation unit compiles the string work once.
[[gnu::cold]] inline std::string format_kernel(const PrintContext& ctx, const std::vector<std::string>& lines,
                                               const IterationSpace& space, const std::string& where,
                                               std::size_t shared, bool one_line) {
  std::string body;
  for (auto& l : ctx.lets) body += (one_line ? "" : "    ") + l + (one_line ? "; " : ";\n");
  for (std::size_t i = 0; i < lines.size(); ++i)
    body += (one_line ? "" : "    ") + lines[i] + (one_line ? (i + 1 < lines.size() ? "; " : "") : ";\n");
  if (one_line) return body;
  std::int64_t read = 0, written = 0;
  std::string ins, outs;
  for (auto& t : ctx.tensors) {
    auto is = [&](const char* d) { return t.dtype.ends_with(d); };
    std::int64_t bytes = is("float64") || is("int64") ? 8 : is("float32") || is("int32") ? 4 : is("bool") ? 1 : 2;
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
             " written); ", shared, " shared subexpression(s)\n", "  // iteration: ", iteration, "\n",
             "  for each i {\n", body, "  }");
}

/// Pseudo-source of a kernel, for WEFT_LOGS=output_code (and a one-line form for fusion).
template <class Kernel, class... Stmts>
[[gnu::cold]] std::string describe_kernel(const IterationSpace& space, const std::string& where, bool one_line,
                                          const Stmts&... stmts) {
  using Shared = typename Kernel::Shared;
  PrintContext ctx;
  ctx.counting = true;  // first pass: which shared subexpressions are really reused
  (print_expr<Shared>(stmts.rhs, ctx), ...);
  std::vector<int> uses = ctx.shared_uses;
  ctx = PrintContext{};
  ctx.shared_uses = uses;
  (ctx.name(*stmts.dst, true), ...);
  std::vector<std::string> lines;
  auto index = [](const auto& dst) { return is_tensor_list_v<std::remove_cvref_t<decltype(dst)>> ? "[k][i] = " : "[i] = "; };
  (lines.push_back(ctx.name(*stmts.dst, true) + index(*stmts.dst) + strip_parens(print_expr<Shared>(stmts.rhs, ctx))),
   ...);
  return format_kernel(ctx, lines, space, where, ctx.lets.size(), one_line);
}

inline namespace WEFT_BACKEND_ABI {

/// Logs a kernel: the first run of each kernel type at info level (fusion,
/// output_code), every run at debug level (+fusion).
template <class Kernel, class... Stmts>
[[gnu::cold]] void log_kernel(const IterationSpace& space, const std::string& where, const Stmts&... stmts) {
  static std::atomic<bool> seen{false};
  bool first = !seen.exchange(true, std::memory_order_relaxed);
  if (log_enabled(LogComponent::fusion, first ? LogLevel::info : LogLevel::debug))
    log_write(LogComponent::fusion, cat("fused ", sizeof...(Stmts), " statement(s) into 1 kernel: ",
                                        describe_kernel<Kernel>(space, where, true, stmts...), "  [", where, "]"));
  if (first && log_enabled(LogComponent::output_code))
    log_write(LogComponent::output_code, describe_kernel<Kernel>(space, where, false, stmts...));
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
template <class... Stmts>
void dispatch_cuda(const IterationSpace& space, Device device, Stmts&... stmts) {
  std::string where;
  if (log_enabled(LogComponent::fusion) || log_enabled(LogComponent::output_code))
    where = cat("cuda:", device.index(), ", ", space.linear ? "contiguous" : "strided", ", ", space.numel,
                " elements, ", cuda::describe_launch(space, device));
  if (space.linear) cuda::run_pointwise(build_kernel<true>(space, where, stmts...), space, device);
  else cuda::run_pointwise(build_kernel<false>(space, where, stmts...), space, device);
}
#endif

/// Evaluates statements `*dst_k = rhs_k` in one kernel (see DESIGN.md: fuse).
/// Every check runs before anything is allocated or written.
template <class... Stmts>
void run_statements(const char* op, Stmts&... stmts) {
  // Devices and shapes.
  Device device = Device::cpu();
  bool have_device = false;
  auto use_device = [&](Device d, const char* what, const Shape& shape) {
    if (!have_device) device = d, have_device = true;
    else if (d != device)
      fail(op, what, " of shape ", shape, " is on ", d, " but the kernel runs on ", device,
           "; move operands with .to(device) first");
  };
  ((stmts.dst->defined() ? use_device(stmts.dst->device(), "destination", stmts.dst->shape()) : void()), ...);
  auto check_leaves = [&](auto& rhs) {
    for_each_leaf(rhs, [&](auto& leaf) {
      if (!leaf.tensor.defined()) fail(op, "an operand is an empty (default-constructed) tensor");
      use_device(leaf.tensor.device(), "an operand", leaf.tensor.shape());
    });
  };
  (check_leaves(stmts.rhs), ...);

  auto expr_shape = [&](auto& rhs) {
    Shape s;
    for (const Shape& leaf : leaf_shapes(rhs))
      if (!broadcast_into(s, leaf))
        fail(op, "operands of shapes ", join_shapes(leaf_shapes(rhs)),
             " cannot be broadcast together (numpy rule: trailing dims must be equal or 1)");
    return s;
  };
  Shape exprs[] = {expr_shape(stmts.rhs)...};
  Shape shape;
  bool have_shape = false;
  ((stmts.dst->defined() && !have_shape ? (shape = stmts.dst->shape(), have_shape = true) : false), ...);
  if (!have_shape) shape = exprs[0];
  int k = 0;
  auto check_statement = [&](auto& s) {
    if (s.dst->defined() && !(s.dst->shape() == shape))
      fail(op, "outputs of one kernel must have one shape, got ", shape, " and ", s.dst->shape());
    if (!broadcasts_to(exprs[k], shape))
      fail(op, "cannot write an expression of shape ", exprs[k], " into a destination of shape ", shape,
           "; the expression must broadcast to the destination (PyTorch's copy_ rule)");
    ++k;
  };
  (check_statement(stmts), ...);

  // Destinations must not overlap each other.
  std::vector<ByteRange> dst_ranges = {(stmts.dst->defined() ? byte_range(*stmts.dst) : ByteRange{nullptr, 0, 0})...};
  for (std::size_t a = 0; a < dst_ranges.size(); ++a)
    for (std::size_t b = a + 1; b < dst_ranges.size(); ++b)
      if (overlaps(dst_ranges[a], dst_ranges[b]))
        fail(op, "outputs ", a, " and ", b, " overlap in memory; each output of a fused kernel needs its own storage");

  // All checks passed: allocate empty destinations.
  auto allocate_empty = [&](auto& s) {
    using T = typename std::remove_cvref_t<decltype(s)>::dest_type;
    if (!s.dst->defined())
      *s.dst = Tensor<T>(allocate(std::size_t(shape.numel()) * sizeof(T), device), shape, contiguous_strides(shape), 0);
  };
  (allocate_empty(stmts), ...);
  if (shape.numel() == 0) return;

  // An input that overlaps a destination without reading exactly the element
  // being written (y = transpose(y), y = y[0] broadcast) is copied first.
  bool destination_read = false;
  auto make_safe = [&](auto& rhs) {
    for_each_leaf(rhs, [&](auto& leaf) {
      auto check_against = [&](auto& s) {
        if (!overlaps(byte_range(leaf.tensor), byte_range(*s.dst))) return;
        destination_read = true;
        if (elementwise_identical(leaf.tensor, *s.dst, shape)) return;
        log(LogComponent::fusion, LogLevel::info, op, ": an input of shape ", leaf.tensor.shape(),
            " overlaps the output of shape ", shape, " without matching it elementwise; reading a copy");
        // Rebind the leaf to the copy: Tensor's operator= would write the
        // copy's values back into the overlapping view instead.
        auto copy = leaf.tensor.clone();
        std::destroy_at(&leaf.tensor);
        std::construct_at(&leaf.tensor, std::move(copy));
      };
      (check_against(stmts), ...);
    });
  };
  (make_safe(stmts.rhs), ...);

  // Plan the iteration over every operand's strides.
  std::vector<Strides> strides = {stmts.dst->strides()...};
  auto add_leaf_strides = [&](auto& rhs) {
    for_each_leaf(rhs, [&](auto& leaf) {
      strides.push_back(broadcast_strides(leaf.tensor.shape(), leaf.tensor.strides(), shape));
    });
  };
  (add_leaf_strides(stmts.rhs), ...);
  IterationSpace space = plan_iteration(shape, strides);

  bool aligned = ((reinterpret_cast<std::uintptr_t>(stmts.dst->data()) % kHostAlignment == 0) && ...);
  std::int64_t dst_bytes = (std::int64_t(sizeof(typename Stmts::dest_type)) + ...) * space.numel;
  bool contiguous = (stmts.dst->is_contiguous() && ...);
  bool stream = contiguous && aligned && !destination_read && dst_bytes >= kStreamingBytes;
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
