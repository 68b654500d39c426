// SPDX-License-Identifier: MIT
/// @file PointwiseKernel: the statements of one fused kernel (destinations + evaluators) over one iteration space.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "weft/plan/evaluator.hpp"

namespace weft {

/// One statement of a fused kernel: `dst = rhs` (built by weft::assign). A view destination keeps
/// its shape; a Tensor destination (`owner`) is reallocated first when the right-hand side's
/// shape differs (plan/run.hpp), and `dst` then views the new elements.
template <Element T, class E>
struct Assignment {
  using dest_type = T;
  using expr_type = E;
  TensorView<T> dst;
  Tensor<T>* owner = nullptr;  // a Tensor destination of `=`: it takes the right-hand side's shape
  E rhs;

  template <bool kLinear, class Context>
  detail::Cursor<T, kLinear> make_cursor(const detail::IterationSpace& space, Context&) const {
    return {dst.data(), dst.strides(), space};
  }
};

/// One statement of a foreach kernel: every tensor k of `*dst` gets rhs at k.
template <Element T, class E>
struct ListAssignment {
  using dest_type = T;
  using expr_type = E;
  TensorList<T>* dst;
  E rhs;

  template <bool kLinear, class Context>
  detail::ListCursor<T> make_cursor(const detail::IterationSpace&, Context& ctx) const {
    static_assert(!kLinear, "foreach kernels run in the strided layout");
    return detail::ListCursor<T>(ctx.lists->add_list(*dst));
  }
};

namespace detail {

/// A Map that costs less to compute again than to keep: one add, subtract, multiply or negation
/// of operands read straight from memory or numbers (`g * scale` in an optimizer). Its occurrences
/// are recomputed: a cache slot would cost a store and loads per element (measured: AdamW with a
/// cached `g * 1` ran 1.4x slower than with it recomputed).
template <class N>
inline constexpr bool recompute_cheaper_v = false;
template <class Op, class... Args>
inline constexpr bool recompute_cheaper_v<Map<Op, Args...>> =
    (std::is_same_v<Op, ops::Add> || std::is_same_v<Op, ops::Sub> || std::is_same_v<Op, ops::Mul> ||
     std::is_same_v<Op, ops::Neg>) &&
    ((is_leaf_v<Args> || is_scalar_node_v<Args>) && ...);

template <class All, class Pending, class Acc>
struct select_shared;
template <class All, class Acc>
struct select_shared<All, TypeList<>, Acc> {
  using type = Acc;
};
template <class All, class T, class... Rest, class... Acc>
struct select_shared<All, TypeList<T, Rest...>, TypeList<Acc...>> {
  static constexpr bool take = count_in<T, All> >= 2 && count_in<T, TypeList<Acc...>> == 0 && !recompute_cheaper_v<T>;
  using type = typename select_shared<All, TypeList<Rest...>,
                                      std::conditional_t<take, TypeList<Acc..., T>, TypeList<Acc...>>>::type;
};

/// Map node types that occur more than once across the statements: these get
/// a per-element cache slot, so a subexpression named once in C++ and used in
/// several outputs is computed once (unless recompute_cheaper_v).
template <class... Exprs>
using shared_nodes_t = typename select_shared<concat_t<typename map_types_in<Exprs>::type...>,
                                              concat_t<typename map_types_in<Exprs>::type...>, TypeList<>>::type;

/// The value a statement computes for a destination of dtype T.
template <class T>
using dest_value_t = std::conditional_t<std::is_same_v<T, bool>, bool, math_t<T>>;

template <class N>
using node_value_t = std::conditional_t<std::is_same_v<typename N::value_type, bool>, bool, typename N::compute_type>;

template <class List>
struct scalar_cache;
template <class... Ns>
struct scalar_cache<TypeList<Ns...>> {
  using type = Tuple<node_value_t<Ns>...>;
};

/// The vector path's cache: V lanes per shared node.
template <class List, int V>
struct vector_cache;
template <class... Ns, int V>
struct vector_cache<TypeList<Ns...>, V> {
  using type = Tuple<Lanes<node_value_t<Ns>, V>...>;
};

#if !defined(__CUDA_ARCH__)
template <class List, int L>
struct packet_cache;
template <class... Ns, int L>
struct packet_cache<TypeList<Ns...>, L> {
  using type = Tuple<Packet<node_value_t<Ns>, L>...>;
};
#endif

/// Destinations and right-hand sides of the statements of one kernel. Each
/// element is computed in two phases: every right-hand side first, then every
/// store, so each statement reads the values from before the kernel.
template <bool kLinear, class... Stmts>
struct PointwiseKernel {
  using Shared = shared_nodes_t<typename Stmts::expr_type...>;
  static constexpr int kStatements = sizeof...(Stmts);
  static constexpr bool kPacketCapable = (packet_capable_v<typename Stmts::expr_type> && ...);
  static constexpr std::size_t kLaneBytes =
      std::max({lane_bytes_v<typename Stmts::expr_type>..., sizeof(lane_t<typename Stmts::dest_type>)...});
  /// Widest element any operand (input or output) moves, in bytes.
  static constexpr std::size_t kElementBytes =
      std::max({element_bytes_v<typename Stmts::expr_type>..., sizeof(typename Stmts::dest_type)...});

  Tuple<decltype(std::declval<const Stmts&>().template make_cursor<kLinear>(
      std::declval<const IterationSpace&>(), std::declval<BuildContext<Shared>&>()))...>
      dests;
  Tuple<Evaluator<typename Stmts::expr_type, dest_value_t<typename Stmts::dest_type>, kLinear, Shared>...> rhs;

  PointwiseKernel(const IterationSpace& space, BuildContext<Shared>&& ctx, const Stmts&... stmts)
      : dests{stmts.template make_cursor<kLinear>(space, ctx)...},
        rhs{Evaluator<typename Stmts::expr_type, dest_value_t<typename Stmts::dest_type>, kLinear, Shared>(
            stmts.rhs, ctx)...} {}

  WEFT_HOST_DEVICE void seek(const std::int64_t* outer) {
    for_each_in(dests, [&](auto& d) { d.seek(outer); });
    for_each_in(rhs, [&](auto& e) { e.seek(outer); });
  }

  /// Moves every list operand to tensor k (foreach kernels).
  template <class Table>
  WEFT_HOST_DEVICE void select(std::int64_t k, const Table& table) {
    for_each_in(dests, [&](auto& d) { d.select(k, table); });
    for_each_in(rhs, [&](auto& e) { e.select(k, table); });
  }

  /// Element j of the current row (the linear index in the linear layout).
  WEFT_HOST_DEVICE void run_scalar(std::int64_t j) {
    typename scalar_cache<Shared>::type cache{};
    run_scalar_impl(j, cache, std::index_sequence_for<Stmts...>{});
  }

  /// Elements j .. j+V-1 as arrays of V lanes (the CUDA vector path): every
  /// operand must be contiguous from j and aligned, see vec_aligned<V>().
  template <int V>
  WEFT_HOST_DEVICE void run_vector(std::int64_t j) {
    typename vector_cache<Shared, V>::type cache{};
    run_vector_impl<V>(j, cache, std::index_sequence_for<Stmts...>{});
  }

  /// Whether every operand's first element is aligned to V of its elements,
  /// so that run_vector<V> at multiples of V uses aligned vector accesses.
  template <int V>
  bool vec_aligned() const {
    bool aligned = true;
    for_each_in(dests, [&](const auto& d) { aligned = aligned && lanes_aligned<V>(d.data); });
    for_each_in(rhs, [&](const auto& e) { aligned = aligned && e.template vec_aligned<V>(); });
    return aligned;
  }

#if !defined(__CUDA_ARCH__)
  /// Elements j .. j+L-1 of the current row as packets.
  template <int L>
  void run_packet(std::int64_t j, bool stream) {
    typename packet_cache<Shared, L>::type cache{};
    run_packet_impl<L>(j, stream, cache, std::index_sequence_for<Stmts...>{});
  }
#endif

 private:
  template <class Cache, std::size_t... Is>
  WEFT_HOST_DEVICE void run_scalar_impl(std::int64_t j, Cache& cache, std::index_sequence<Is...>) {
    Tuple<dest_value_t<typename Stmts::dest_type>...> values{get<Is>(rhs).coeff(j, cache)...};
    ((*get<Is>(dests).at(j) = typename Stmts::dest_type(get<Is>(values))), ...);
  }
  template <int V, class Cache, std::size_t... Is>
  WEFT_HOST_DEVICE void run_vector_impl(std::int64_t j, Cache& cache, std::index_sequence<Is...>) {
    Tuple<Lanes<dest_value_t<typename Stmts::dest_type>, V>...> values{get<Is>(rhs).template vec<V>(j, cache)...};
    (store_lanes<typename Stmts::dest_type, V>(get<Is>(dests).at(j), get<Is>(values)), ...);
  }
#if !defined(__CUDA_ARCH__)
  template <int L, class Cache, std::size_t... Is>
  void run_packet_impl(std::int64_t j, bool stream, Cache& cache, std::index_sequence<Is...>) {
    Tuple<Packet<typename Stmts::dest_type, L>...> values{get<Is>(rhs).template packet<L>(j, cache)...};
    (store_packet<typename Stmts::dest_type, L>(get<Is>(dests).at(j), get<Is>(dests).step(), get<Is>(values), stream),
     ...);
  }
#endif
};

/// Distinct kernel types run so far in this process (see kernel_types_run).
inline std::atomic<std::int64_t>& kernel_type_counter() {
  static std::atomic<std::int64_t> count{0};
  return count;
}

/// Counts Kernel the first time it is built; later builds cost one guard check.
template <class Kernel>
void count_kernel_type() {
  static const bool counted = (kernel_type_counter().fetch_add(1, std::memory_order_relaxed), true);
  (void)counted;
}

}  // namespace detail

/// How many distinct kernel types have run in this process. Every kernel is a
/// type compiled into the program and its numbers (a learning rate, a bias
/// correction) are runtime arguments, so running one again with new numbers
/// leaves this count unchanged: nothing is planned or compiled per call.
inline std::int64_t kernel_types_run() { return detail::kernel_type_counter().load(std::memory_order_relaxed); }

}  // namespace weft
