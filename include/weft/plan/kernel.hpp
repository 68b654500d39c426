// SPDX-License-Identifier: MIT
/// @file PointwiseKernel: the statements of one fused kernel (destinations + evaluators) over one iteration space.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "weft/expr/assign.hpp"
#include "weft/expr/tree.hpp"
#include "weft/plan/evaluator.hpp"

namespace weft {

namespace detail {

/// Where statement `stmt` writes: its destination's elements over the kernel's iteration space.
template <bool kLinear, class T, class E, class Context>
Cursor<T, kLinear> dest_cursor(const Assignment<T, E>& stmt, const IterationSpace&, Context& ctx) {
  return {stmt.dst.data(), operand_strides(ctx, stmt.dst.shape(), stmt.dst.strides())};
}
/// A list statement writes tensor k of its list (select(k)); its members are contiguous.
template <bool kLinear, class T, class E, class Context>
ListCursor<T> dest_cursor(const ListAssignment<T, E>& stmt, const IterationSpace&, Context& ctx) {
  static_assert(!kLinear, "foreach kernels run in the strided layout");
  return ListCursor<T>(ctx.lists->add_list(*stmt.dst));
}

/// A Map that costs less to compute again than to keep: one add, subtract, multiply or negation
/// of operands read straight from memory or numbers (`g * scale` in an optimizer). Its occurrences
/// are recomputed: a cache slot would cost a store and loads per element (measured: AdamW with a
/// cached `g * 1` ran 1.4x slower than with it recomputed).
template <class N>
inline constexpr bool recompute_cheaper_v = false;
template <class Op, class... Args>
inline constexpr bool recompute_cheaper_v<Map<Op, Args...>> =
    (std::is_same_v<Op, functors::Add> || std::is_same_v<Op, functors::Sub> || std::is_same_v<Op, functors::Mul> ||
     std::is_same_v<Op, functors::Neg>) &&
    ((is_leaf_v<Args> || is_scalar_node_v<Args>) && ...);

/// kept(i): node Ts[i] occurs more than once, i is its first occurrence, and it is not cheaper to
/// compute again (recompute_cheaper_v).
template <class... Ts>
struct SharedNodes {
  static constexpr bool kept(std::size_t i) {
    constexpr int first[] = {index_in<Ts, TypeList<Ts...>>..., -1};
    constexpr bool repeated[] = {(count_in<Ts, TypeList<Ts...>> >= 2 && !recompute_cheaper_v<Ts>)..., false};
    return repeated[i] && first[i] == int(i);
  }
};
template <class List>
struct shared_nodes;
template <class... Ts>
struct shared_nodes<TypeList<Ts...>> {
  using type = typename select_types<SharedNodes<Ts...>, Ts...>::type;
};

/// Map node types that occur more than once across the statements, in order of first occurrence:
/// these get a per-element cache slot, so a subexpression named once in C++ and used in several
/// outputs is computed once (unless recompute_cheaper_v).
template <class... Exprs>
using shared_nodes_t = typename shared_nodes<concat_t<maps_in_t<Exprs>...>>::type;

/// The value a statement computes for a destination of dtype T.
template <class T>
using dest_value_t = std::conditional_t<std::is_same_v<T, bool>, bool, math_t<T>>;

/// The vector path's cache: one vector value of Target (N elements) per shared node.
template <class Target, class List, int N>
struct vector_cache;
template <class Target, class... Ns, int N>
struct vector_cache<Target, TypeList<Ns...>, N> {
  using type = Tuple<typename Target::template Value<node_value_t<Ns>, N>...>;
};

/// Destinations and right-hand sides of the statements of one kernel. Each
/// element is computed in two phases: every right-hand side first, then every
/// store, so each statement reads the values from before the kernel.
template <bool kLinear, class... Stmts>
struct PointwiseKernel {
  using Shared = shared_nodes_t<typename Stmts::expr_type...>;
  static constexpr int kStatements = sizeof...(Stmts);
  /// Widest element any operand (input or output) moves, in bytes.
  static constexpr std::size_t kElementBytes =
      std::max({element_bytes_v<typename Stmts::expr_type>..., sizeof(typename Stmts::dest_type)...});

  Tuple<decltype(dest_cursor<kLinear>(std::declval<const Stmts&>(), std::declval<const IterationSpace&>(),
                                      std::declval<BuildContext<Shared>&>()))...>
      dests;
  Tuple<Evaluator<typename Stmts::expr_type, dest_value_t<typename Stmts::dest_type>, kLinear, Shared>...> rhs;

  PointwiseKernel(const IterationSpace& space, BuildContext<Shared>&& ctx, const Stmts&... stmts)
      : dests{{{dest_cursor<kLinear>(stmts, space, ctx)}...}},
        rhs{{{Evaluator<typename Stmts::expr_type, dest_value_t<typename Stmts::dest_type>, kLinear, Shared>(
            stmts.rhs, ctx)}...}} {}

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

  /// Elements j .. j+N-1 of the current row as vector values of the backend's Target (CPU
  /// packets, CUDA lanes). CUDA runs it at multiples of N with every operand aligned to N
  /// elements (vec_aligned<N>()); `stream`: non-temporal stores where the Target has them.
  WEFT_VECTOR_PATH
  template <class Target, int N>
  WEFT_HOST_DEVICE void run_vector(std::int64_t j, bool stream) {
    typename vector_cache<Target, Shared, N>::type cache{};
    run_vector_impl<Target, N>(j, stream, cache, std::index_sequence_for<Stmts...>{});
  }

  /// Whether every operand's first element is aligned to V of its elements,
  /// so that run_vector<V> at multiples of V uses aligned vector accesses.
  template <int V>
  bool vec_aligned() const {
    bool aligned = true;
    for_each_in(dests, [&](const auto& d) { aligned = aligned && aligned_to<V>(d.data); });
    for_each_in(rhs, [&](const auto& e) { aligned = aligned && e.template vec_aligned<V>(); });
    return aligned;
  }

 private:
  template <class Cache, std::size_t... Is>
  WEFT_HOST_DEVICE void run_scalar_impl(std::int64_t j, Cache& cache, std::index_sequence<Is...>) {
    Tuple<dest_value_t<typename Stmts::dest_type>...> values{{{get<Is>(rhs).coeff(j, cache)}...}};
    ((*get<Is>(dests).at(j) = typename Stmts::dest_type(get<Is>(values))), ...);
  }
  WEFT_VECTOR_PATH
  template <class Target, int N, class Cache, std::size_t... Is>
  WEFT_HOST_DEVICE void run_vector_impl(std::int64_t j, bool stream, Cache& cache, std::index_sequence<Is...>) {
    Tuple<typename Target::template Value<dest_value_t<typename Stmts::dest_type>, N>...> values{
        {{get<Is>(rhs).template vector<Target, N>(j, cache)}...}};
    (Target::template store<typename Stmts::dest_type, N>(get<Is>(dests), j, get<Is>(values), stream), ...);
  }
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
