// SPDX-License-Identifier: MIT
/// @file Plans foreach statements (expressions over lists of tensors): member checks, the iteration space and the ONE foreach kernel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "weft/core/config.hpp"
#include "weft/plan/statements.hpp"

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
PointwiseKernel<false, Stmts...> build_foreach_kernel(const IterationSpace& space, ListTable& table,
                                                   const Stmts&... stmts) {
  using Kernel = PointwiseKernel<false, Stmts...>;
  count_kernel_type<Kernel>();
  BuildContext<typename Kernel::Shared> ctx;
  ctx.space = &space;
  ctx.lists = &table;
  return Kernel(space, std::move(ctx), stmts...);
}

inline namespace WEFT_BACKEND_ABI {

/// The member checks of one foreach call, list by list (ListRef::for_each_member calls member()).
struct ListMemberCheck {
  /// Where a member lies: its bytes and its first element (data() without reading the storage).
  struct Span {
    ByteRange range;
    std::int64_t first;
  };
  const char* op = "";
  const char* what = "an output";        // the list being checked: "an output" or "an input list"
  std::vector<const Shape*> shapes;      // per tensor index: the first output's shape
  Span* spans = nullptr;                 // the list's row of spans, per tensor index
  Device device = Device::cpu();
  bool have_device = false;

  static void member(void* context, std::size_t i, const TensorRef& t) {
    auto& c = *static_cast<ListMemberCheck*>(context);
    static const Shape kNone;
    if (c.shapes.size() < i + 1) c.shapes.push_back(t.defined ? &t.shape() : &kNone);  // the first output
    if (!t.defined) fail(c.op, c.what, " tensor ", i, " is empty (default-constructed)");
    if (!c.have_device) c.device = t.device, c.have_device = true;
    else if (t.device != c.device)
      fail(c.op, "tensor ", i, " is on ", t.device, " but the kernel runs on ", c.device,
           "; move the lists with .to(device)");
    const Shape& shape = *c.shapes[i];
    if (!(t.shape() == shape))
      fail(c.op, "tensor ", i, " has shape ", shape, " in the first output but ", t.shape(), " in ", c.what,
           "; list operands must match shapes index by index");
    if (!t.contiguous())
      fail(c.op, c.what, " tensor ", i, " of shape ", t.shape(), " has strides ", t.strides(),
           "; foreach kernels need contiguous tensors: call .contiguous() first");
    c.spans[i] = {byte_range(t), t.offset * t.element_bytes};
  }
};

/// The member checks of list statements over `lists` (the outputs, then each distinct input
/// list) of `size` tensors each, by walking every member: per tensor index one device, one shape
/// (the first output's) and contiguous members; no overlaps between outputs, and inputs
/// overlapping an output only as that very tensor. Returns the device (`have_device`: false when
/// the lists are empty).
WEFT_SHARED Device check_list_members(const char* op, const std::vector<const ListRef*>& lists, std::size_t outputs,
                                 std::size_t size, bool& have_device)
#if WEFT_SHARED_BODIES
{
  ListMemberCheck check;
  check.op = op;
  check.shapes.reserve(size);
  // [list][tensor index], left uninitialized: every slot is written by the check of its member
  const std::unique_ptr<ListMemberCheck::Span[]> spans(new ListMemberCheck::Span[lists.size() * size]);
  for (std::size_t l = 0; l < lists.size(); ++l) {
    check.what = l < outputs ? "an output" : "an input list";
    check.spans = spans.get() + l * size;
    lists[l]->for_each_member(&check, &ListMemberCheck::member);
  }

  // Outputs must not overlap each other; an input overlapping an output must be that output
  // itself (params = params - lr * grads).
  auto span = [&](std::size_t l, std::size_t i) -> const ListMemberCheck::Span& { return spans[l * size + i]; };
  for (std::size_t i = 0; i < size; ++i) {
    for (std::size_t b = 1; b < outputs; ++b)
      for (std::size_t a = 0; a < b; ++a)
        if (overlaps(span(a, i).range, span(b, i).range))
          fail(op, "outputs ", a, " and ", b, " overlap at tensor ", i, "; each output needs its own storage");
    for (std::size_t l = outputs; l < lists.size(); ++l)
      for (std::size_t o = 0; o < outputs; ++o)
        if (overlaps(span(l, i).range, span(o, i).range) && span(l, i).first != span(o, i).first)
          fail(op, "input tensor ", i, " overlaps output tensor ", i,
               " without being the same tensor; foreach reads and writes element by element");
  }
  have_device = check.have_device;
  return check.device;
}
#else
;
#endif

/// The member checks these lists passed before, at this length, if the first output's memo holds
/// them (core/list_members.hpp: same serials and length, same members).
inline const PassedListCheck* find_passed_check(const std::vector<const ListRef*>& lists, std::size_t outputs,
                                                std::size_t size) {
  const ListMembers& first = *lists[0]->members;
  for (std::size_t m = 0; m < std::min(first.passed_count, ListMembers::kMemo); ++m) {
    const PassedListCheck& p = first.passed[m];
    if (p.size == size && p.outputs == outputs && p.serials.size() == lists.size() &&
        std::equal(lists.begin(), lists.end(), p.serials.begin(),
                   [](const ListRef* l, std::uint64_t serial) { return l->members->serial == serial; }))
      return &p;
  }
  return nullptr;
}

inline void remember_passed_check(const std::vector<const ListRef*>& lists, std::size_t outputs, std::size_t size,
                                  Device device) {
  const ListMembers& first = *lists[0]->members;
  PassedListCheck& p = first.passed[first.passed_count++ % ListMembers::kMemo];
  p.serials.clear();
  for (const ListRef* l : lists) p.serials.push_back(l->members->serial);
  p.outputs = outputs;
  p.size = size;
  p.device = device;
}

/// What the checks of list statements return: the lists' device and where each tensor index's
/// elements lie in the call's concatenated range, [start[k], start[k+1]) (the first output's
/// ListMembers::start: every list has its shapes).
struct CheckedLists {
  Device device;
  std::span<const std::int64_t> start;
};

/// Checks list statements: one length for every list, single tensors of one element, and the
/// member checks (check_list_members), which a call over the same lists as a call that passed
/// them skips (find_passed_check).
WEFT_SHARED CheckedLists check_foreach_statements(const char* op, const KernelOperands& k)
#if WEFT_SHARED_BODIES
{
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

  // The outputs, then each distinct input list once: a list named several times (g in g * g) or
  // also written (p in p - lr * g) adds no work.
  std::vector<const ListRef*> lists;
  for (const ExprNode& out : k.outputs) lists.push_back(&k.list(out));
  const std::size_t outputs = lists.size();
  for (const ExprNode& n : k.nodes)
    if (n.kind == ExprNode::Kind::list &&
        std::none_of(lists.begin(), lists.end(), [&](const ListRef* l) { return l->id == k.list(n).id; }))
      lists.push_back(&k.list(n));
  Device device = Device::cpu();
  bool have_device = false;
  if (const PassedListCheck* passed = find_passed_check(lists, outputs, size)) {
    device = passed->device;
    have_device = true;
  } else {
    device = check_list_members(op, lists, outputs, size, have_device);
    if (have_device) remember_passed_check(lists, outputs, size, device);
  }

  for (const ExprNode& n : k.nodes) {
    if (n.kind != ExprNode::Kind::tensor) continue;
    const TensorRef& t = k.tensor(n);
    if (!t.defined) fail(op, "an operand is an empty (default-constructed) tensor");
    if (t.shape().numel() != 1)
      fail(op, "a single tensor in a foreach expression must hold one element (a number kept on the device), "
               "got shape ", t.shape(), "; use a TensorList for per-tensor operands");
    if (have_device && t.device != device)
      fail(op, "a tensor on ", t.device, " meets lists on ", device, "; move it with .to(device)");
  }
  return {device, lists[0]->members->start};
}
#else
;
#endif

/// The executors a call of run_foreach_statements compiles: both (the lists' device is known at run
/// time only), or one, for callers that send the other device's lists down another path (an
/// optimizer: its step count on the host for CPU lists, on the device for CUDA lists;
/// docs/optimizers.md). A CUDA executor is two __global__ instantiations (the launch tables) and
/// their launch code, a CPU executor the vectorized loop: each one left out is compile time saved.
enum class ForeachBackends { cpu_and_cuda, cpu_only, cuda_only };

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
