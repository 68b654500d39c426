// SPDX-License-Identifier: MIT
/// @file The CPU reduction executor: pairwise-blocked SIMD accumulation of an expression over a ReducePlan, OpenMP over outputs or over chunks of the reduced range.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/backend/cpu/simd/vec.hpp"
#include "weft/plan/reduction.hpp"
#include "weft/expr/reducers.hpp"
#include "weft/plan/kernel.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Independent accumulators per row run: enough to hide the add latency.
inline constexpr int kReduceAccumulators = 4;
/// Values each accumulator lane folds before its block joins the cascade.
inline constexpr int kReduceBlockSteps = 8;
/// Packets of neighbouring outputs a column reduction carries per row: a row
/// visit reads 8 * 64 bytes (AVX-512), so a column pass over a matrix with a
/// long row pitch touches each page for 8 lines, not 4 (measured ~2x faster
/// than 4 groups on a 4096^2 column sum), and 8 accumulators still leave
/// registers free on AVX2.
inline constexpr int kColumnGroups = 8;
/// Most pieces one output's reduced range is split into across threads.
inline constexpr std::int64_t kMaxChunks = 64;

/// Pairwise summation in streaming form. Block results are pushed in order;
/// level l holds the combination of 2^l blocks, and a push carries like a
/// binary counter, so the total is a balanced tree over the blocks: the
/// rounding error of a sum of n values grows like log2(n), not n. (For max
/// and min the tree changes nothing and costs one combine per block.)
template <class Item>
struct Cascade {
  Item level[64];
  std::uint64_t count = 0;

  template <class Combine>
  void push(Item v, const Combine& combine) {
    int l = 0;
    for (std::uint64_t k = count; k & 1; k >>= 1, ++l) v = combine(level[l], v);
    level[l] = v;
    ++count;
  }
  /// The combination of every pushed block and `rest` (the unfinished block).
  template <class Combine>
  Item total(Item rest, const Combine& combine) const {
    for (int l = 0; (count >> l) != 0; ++l)  // a data-dependent trip count: not unrolled 64 times
      if ((count >> l) & 1) rest = combine(level[l], rest);
    return rest;
  }
};

/// Lanes of a packet type (1 for a scalar).
template <class Item>
inline constexpr int packet_width_v = 1;
template <class T, int N>
inline constexpr int packet_width_v<simd::Vec<T, N>> = N;

/// Everything the reduction loops need besides the evaluator. Target: how packets are read
/// (PacketTarget; ContiguousRowTarget where every operand's row is contiguous).
template <class Red, class Ev, class Shared, class Target = PacketTarget>
struct ReduceContext {
  using Acc = typename Red::acc_type;
  Red red;
  const ReducePlan* plan;

  // One element (scalar) or one packet of W elements at index j of the current row.
  template <class Item>
  static Item load(Ev& ev, std::int64_t j) {
    if constexpr (std::is_same_v<Item, Acc>) {
      typename scalar_cache<Shared>::type cache{};
      return ev.coeff(j, cache);
    } else {
      typename vector_cache<Target, Shared, packet_width_v<Item>>::type cache{};
      return ev.template vector<Target, packet_width_v<Item>>(j, cache);
    }
  }
  template <class Item>
  static constexpr int width() {
    return packet_width_v<Item>;
  }

  /// Folds the lanes of a packet (pairwise).
  template <class Item>
  Acc horizontal(Item v) const {
    if constexpr (std::is_same_v<Item, Acc>) {
      return v;
    } else {
      constexpr int W = packet_width_v<Item>;
      Acc lanes[W];
      for (int l = 0; l < W; ++l) lanes[l] = v[l];
      for (int w = W / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; ++l) lanes[l] = red.combine(lanes[l], lanes[l + w]);
      return lanes[0];
    }
  }

  /// One output's partial fold in the inner layout: kReduceAccumulators packet accumulators whose
  /// blocks of kReduceBlockSteps steps join a Cascade, and the elements left over from packet
  /// rows (row tails) folded into blocks of their own.
  template <class Main>
  struct InnerFold {
    Main acc[kReduceAccumulators];
    int steps = 0;
    Cascade<Main> blocks;
    Acc tail;
    int tail_steps = 0;
    Cascade<Acc> tail_blocks;
  };
  template <class Main>
  InnerFold<Main> start_fold() const {
    InnerFold<Main> f;
    for (Main& a : f.acc) a = splat<Main>(red.identity());
    f.tail = red.identity();
    return f;
  }

  /// Folds elements [j, stop) of the evaluator's current row into f: packets of type Main (or
  /// scalars), then the row's tail as scalars.
  template <class Main>
  void fold_run(Ev& ev, InnerFold<Main>& f, std::int64_t j, std::int64_t stop) const {
    constexpr int W = width<Main>();
    constexpr int K = kReduceAccumulators;
    auto combine = [this](auto a, auto b) { return red.combine(a, b); };
    auto flush = [&] {
      f.blocks.push(combine(combine(f.acc[0], f.acc[1]), combine(f.acc[2], f.acc[3])), combine);
      for (int k = 0; k < K; ++k) f.acc[k] = splat<Main>(red.identity());
      f.steps = 0;
    };
    for (; j + K * W <= stop; j += K * W) {
      for (int k = 0; k < K; ++k) f.acc[k] = red.combine(f.acc[k], red.transform(load<Main>(ev, j + k * W)));
      if (++f.steps == kReduceBlockSteps) flush();
    }
    for (; j + W <= stop; j += W) {
      f.acc[0] = red.combine(f.acc[0], red.transform(load<Main>(ev, j)));
      if (++f.steps == kReduceBlockSteps) flush();
    }
    for (; j < stop; ++j) {
      f.tail = red.combine(f.tail, red.transform(load<Acc>(ev, j)));
      if (++f.tail_steps == kReduceBlockSteps) {
        f.tail_blocks.push(f.tail, combine);
        f.tail = red.identity();
        f.tail_steps = 0;
      }
    }
  }

  /// The total of a fold (not finalized).
  template <class Main>
  Acc fold_total(const InnerFold<Main>& f) const {
    auto combine = [this](auto a, auto b) { return red.combine(a, b); };
    Main last = combine(combine(f.acc[0], f.acc[1]), combine(f.acc[2], f.acc[3]));
    return red.combine(horizontal(f.blocks.total(last, combine)), f.tail_blocks.total(f.tail, combine));
  }

  /// Reduced elements [r0, r1) of output `o` in the inner layout (kept dims
  /// outer, reduced dims inner): rows of the innermost reduced dim, read as
  /// packets of type Main (or scalars) into kReduceAccumulators accumulators.
  template <class Main>
  Acc reduce_inner(Ev& ev, std::int64_t o, std::int64_t r0, std::int64_t r1) const {
    const ReducePlan& p = *plan;
    const int nk = p.nk(), nr = p.nr();
    std::int64_t kept[kMaxRank] = {}, reduced[kMaxRank] = {}, outer[kMaxRank] = {};
    for (int d = 0; d < nk; ++d) kept[d] = p.kept[d].extent;
    for (int d = 0; d < nr; ++d) reduced[d] = p.reduced[d].extent;
    const std::int64_t inner = reduced[nr - 1];
    unravel(o, kept, nk, outer);
    unravel(r0 / inner, reduced, nr - 1, outer + nk);
    std::int64_t j = r0 % inner;
    InnerFold<Main> f = start_fold<Main>();
    for (std::int64_t i = r0; i < r1; j = 0) {
      ev.seek(outer);
      const std::int64_t stop = std::min(inner, j + (r1 - i));
      i += stop - j;
      fold_run(ev, f, j, stop);
      for (int d = nk + nr - 2; d >= nk && ++outer[d] == reduced[d - nk]; --d) outer[d] = 0;
    }
    return fold_total(f);
  }

  /// kColumnGroups column groups of output row `ko`, starting at columns at[],
  /// over reduced rows [r0, r1) in the column layout (outer kept dims,
  /// reduced dims, innermost kept dim): each row adds one Item per group.
  /// Groups may overlap (a narrow row repeats a group); their totals agree.
  /// Writes NP * W totals, group q's at out[q * W ...].
  template <class Item>
  void reduce_columns(Ev& ev, std::int64_t ko, const std::int64_t* at, std::int64_t r0, std::int64_t r1,
                      Acc* out) const {
    constexpr int W = width<Item>();
    constexpr int NP = kColumnGroups;
    const ReducePlan& p = *plan;
    const int nk = p.nk(), nr = p.nr();
    std::int64_t kept[kMaxRank] = {}, reduced[kMaxRank] = {}, outer[kMaxRank] = {};
    for (int d = 0; d < nk; ++d) kept[d] = p.kept[d].extent;
    for (int d = 0; d < nr; ++d) reduced[d] = p.reduced[d].extent;
    unravel(ko, kept, nk - 1, outer);
    unravel(r0, reduced, nr, outer + nk - 1);

    auto combine = [this](Item a, Item b) { return red.combine(a, b); };
    const Item identity = splat<Item>(red.identity());
    Item acc[NP];
    for (int q = 0; q < NP; ++q) acc[q] = identity;
    int steps = 0;
    Cascade<Item> blocks[NP];
    for (std::int64_t r = r0; r < r1; ++r) {
      ev.seek(outer);
      for (int q = 0; q < NP; ++q) acc[q] = red.combine(acc[q], red.transform(load<Item>(ev, at[q])));
      if (++steps == kReduceBlockSteps) {
        for (int q = 0; q < NP; ++q) blocks[q].push(acc[q], combine), acc[q] = identity;
        steps = 0;
      }
      for (int d = nk + nr - 2; d >= nk - 1 && ++outer[d] == reduced[d - nk + 1]; --d) outer[d] = 0;
    }
    for (int q = 0; q < NP; ++q) acc[q] = blocks[q].total(acc[q], combine);
    for (int q = 0; q < NP; ++q)
      for (int l = 0; l < W; ++l) {
        if constexpr (W == 1) out[q] = acc[q];
        else out[q * W + l] = acc[q][l];
      }
  }
};

/// Folds f(x) over n elements of T read as packets of W lanes of Acc, with
/// kReduceAccumulators accumulators and blocks joined by a Cascade (error
/// growing like log2(n)). kRow: a contiguous row of n elements, folded to
/// one value (returned in every lane); otherwise n rows of W neighbouring
/// columns, `stride` elements apart, giving W separate folds. f maps a
/// packet (and, for kRow, a scalar) likewise; combine too. The row passes of
/// softmax and layer_norm use it.
template <class Acc, int W, bool kRow, class T, class F, class Combine>
simd::Vec<Acc, W> fold_packets(const T* x, std::int64_t n, std::int64_t stride, Acc identity, const F& f,
                              const Combine& combine) {
  using P = simd::Vec<Acc, W>;
  constexpr int K = kReduceAccumulators;
  constexpr std::int64_t step = kRow ? W : 1;  // elements of the fold per packet
  if constexpr (kRow) stride = 1;
  const P id = P::broadcast(identity);
  P acc[K] = {id, id, id, id};
  Cascade<P> blocks;
  int steps = 0;
  std::int64_t i = 0;
  for (; i + K * step <= n; i += K * step) {
    for (int k = 0; k < K; ++k) acc[k] = combine(acc[k], f(load_packet<Acc, W>(x + (i + k * step) * stride, 1)));
    if (++steps == kReduceBlockSteps) {
      blocks.push(combine(combine(acc[0], acc[1]), combine(acc[2], acc[3])), combine);
      for (int k = 0; k < K; ++k) acc[k] = id;
      steps = 0;
    }
  }
  for (; i + step <= n; i += step) acc[0] = combine(acc[0], f(load_packet<Acc, W>(x + i * stride, 1)));
  P total = blocks.total(combine(combine(acc[0], acc[1]), combine(acc[2], acc[3])), combine);
  if constexpr (!kRow) {
    return total;
  } else {  // fold the lanes, then the tail of fewer than W elements
    Acc lanes[W];
    for (int l = 0; l < W; ++l) lanes[l] = total[l];
    for (int w = W / 2; w >= 1; w /= 2)
      for (int l = 0; l < w; ++l) lanes[l] = combine(lanes[l], lanes[l + w]);
    Acc rest = identity;
    for (; i < n; ++i) rest = combine(rest, f(Acc(x[i])));
    return P::broadcast(combine(lanes[0], rest));
  }
}

/// How a CPU reduction with packets of W lanes is cut into tasks for the threads. Not a template:
/// compiled once per translation unit, whatever the expression.
struct CpuReduceWork {
  int threads = 1;
  bool columns = false;             // the column layout: a packet holds W neighbouring outputs
  std::int64_t m = 1;               // outputs per row (column layout)
  std::int64_t J = 1;               // outputs per work unit
  std::int64_t blocks_per_row = 1;  // work units per row (column layout)
  std::int64_t units = 1, chunks = 1, tasks = 1;
};

/// The layout (rows of the innermost reduced dim, or columns of the innermost kept dim when only
/// it is unit-stride) and the work units; the reduced range is split into chunks only when there
/// are too few outputs to keep every thread busy.
inline CpuReduceWork plan_cpu_reduce(const ReducePlan& plan, const std::vector<Strides>& strides, int W,
                                     bool single_thread) {
  CpuReduceWork w;
  w.threads = single_thread ? 1 : threads_for(plan.n_out * plan.n_red);
  const ReduceGroup& inner = plan.reduced.back();
  const bool inner_ok = unit_stride_group(inner, strides) && inner.extent >= W;
  const bool column_ok = plan.nk() > 0 && unit_stride_group(plan.kept.back(), strides) && plan.kept.back().extent >= W;
  w.columns = !inner_ok && column_ok;
  w.m = w.columns ? plan.kept.back().extent : 1;
  w.J = w.columns ? kColumnGroups * W : 1;
  w.blocks_per_row = (w.m + w.J - 1) / w.J;
  w.units = w.columns ? (plan.n_out / w.m) * w.blocks_per_row : plan.n_out;
  if (w.threads > 1 && w.units < 4 * std::int64_t(w.threads))
    w.chunks = std::clamp<std::int64_t>((4 * w.threads + w.units - 1) / w.units, 1,
                                        std::clamp<std::int64_t>(plan.n_red * w.J / kMinElementsPerThread, 1, kMaxChunks));
  w.tasks = w.units * w.chunks;
  return w;
}

/// What reducer Red reads expression E as: packets of W lanes (Main) when the expression has them
/// and its lanes are the accumulator's, or are integer lanes that widen into an int64 accumulator
/// (sum and prod of int8 ... int32), else scalars (W = 1).
template <class Red, class E>
struct ReducePackets {
  using Acc = typename Red::acc_type;
  using V = std::conditional_t<std::is_same_v<typename E::value_type, bool>, bool, math_t<typename E::value_type>>;
  static constexpr bool kWidenedIntegers =
      std::is_integral_v<V> && !std::is_same_v<V, bool> && std::is_same_v<Acc, std::int64_t>;
  static constexpr bool kPackets = packet_capable_v<E> && !std::is_same_v<Acc, bool> &&
                                   (std::is_same_v<lane_t<V>, Acc> || kWidenedIntegers);
  static constexpr int L = std::max<int>(1, simd::kBytes / int(std::max(lane_bytes_v<E>, sizeof(Acc))));
  static constexpr int W = kPackets && L > 1 ? L : 1;
  using Main = std::conditional_t<(W > 1), simd::Vec<Acc, W>, Acc>;
};

/// Reducer `red` over expression `e`, one row of `plan` at a time (a row epilogue's pass 1,
/// backend/row_epilogue.hpp): the evaluators are built once, over `space` (plan.inner_space()),
/// and a row (one output of the plan) is folded as run_reduce folds it. Every tensor e reads
/// walks the row with stride 1.
template <class Red, class E>
struct RowFold {
  using Shared = shared_nodes_t<E>;
  using Ev = Evaluator<E, typename Red::acc_type, false, Shared>;
  ReduceContext<Red, Ev, Shared, ContiguousRowTarget> ctx;
  Ev ev;

  RowFold(const Red& red, const E& e, const ReducePlan& plan, const IterationSpace& space)
      : ctx{red, &plan}, ev(build(e, space)) {}
  /// The finalized value of the row at `outer` (its kept coordinates in `space`).
  typename Red::acc_type operator()(const std::int64_t* outer) {
    using Main = typename ReducePackets<Red, E>::Main;
    const std::int64_t n = ctx.plan->n_red;
    ev.seek(outer);
    auto f = ctx.template start_fold<Main>();
    ctx.fold_run(ev, f, 0, n);
    return ctx.red.finalize(ctx.fold_total(f), n);
  }

 private:
  static Ev build(const E& e, const IterationSpace& space) {
    BuildContext<Shared> b;
    b.space = &space;
    return Ev(e, b);
  }
};

/// Runs reducer `red` over expression `expr` as planned and writes
/// out[o] = O(finalize(total_o)) for every output o of the contiguous `out`.
/// `strides`: every operand's strides broadcast to plan.full (layout choice). `single_thread`: on
/// the calling thread only.
template <class O, class Red, class E>
void run_reduce(const Red& red, const E& expr, const ReducePlan& plan, const std::vector<Strides>& strides, O* out,
                bool single_thread = false) {
  using Acc = typename Red::acc_type;
  using Shared = shared_nodes_t<E>;
  using Ev = Evaluator<E, Acc, false, Shared>;
  using Main = typename ReducePackets<Red, E>::Main;
  constexpr int W = ReducePackets<Red, E>::W;
  using Ctx = ReduceContext<Red, Ev, Shared>;
  const Ctx ctx{red, &plan};

  const std::int64_t n_red = plan.n_red;
  const CpuReduceWork work = plan_cpu_reduce(plan, strides, W, single_thread);
  const int threads = work.threads;
  const bool columns = work.columns;
  const std::int64_t m = work.m, J = work.J, blocks_per_row = work.blocks_per_row;
  const std::int64_t units = work.units, chunks = work.chunks, tasks = work.tasks;
  std::vector<Acc> partial(chunks > 1 ? std::size_t(tasks * J) : 0);

  IterationSpace space = columns ? plan.column_space() : plan.inner_space();
  BuildContext<Shared> build;
  build.space = &space;
  const Ev proto(expr, build);

  auto finish = [&](std::int64_t o, Acc total) { out[o] = O(red.finalize(total, n_red)); };

  auto task = [&](Ev& ev, std::int64_t t) {
    const std::int64_t u = t / chunks, ch = t % chunks;
    const std::int64_t r0 = n_red * ch / chunks, r1 = n_red * (ch + 1) / chunks;
    if (!columns) {
      Acc total = ctx.template reduce_inner<Main>(ev, u, r0, r1);
      if (chunks > 1) partial[std::size_t(t)] = total;
      else finish(u, total);
      return;
    }
    // kColumnGroups groups of W columns from c0; in a block narrower than
    // that the groups slide left (overlapping) so every load stays inside the row.
    const std::int64_t ko = u / blocks_per_row, c0 = u % blocks_per_row * J;
    const std::int64_t c1 = std::min(c0 + J, m);
    std::int64_t at[kColumnGroups];
    for (int q = 0; q < kColumnGroups; ++q) at[q] = std::max<std::int64_t>(0, std::min(c0 + q * W, m - W));
    Acc res[kColumnGroups * W];
    ctx.template reduce_columns<Main>(ev, ko, at, r0, r1, res);
    for (int q = 0; q < kColumnGroups; ++q)
      for (std::int64_t l = 0; l < W; ++l) {
        const std::int64_t c = at[q] + l;
        if (c < c0 || c >= c1) continue;  // another unit's column
        if (chunks > 1) partial[std::size_t(t * J + (c - c0))] = res[q * W + l];
        else finish(ko * m + c, res[q * W + l]);
      }
  };
  if (threads == 1) {  // no OpenMP region: a row epilogue's block runs this once per block
    Ev ev = proto;
    for (std::int64_t t = 0; t < tasks; ++t) task(ev, t);
  } else {
    WEFT_PRAGMA_OMP(omp parallel num_threads(threads))
    {
      Ev ev = proto;
      WEFT_PRAGMA_OMP(omp for schedule(static))
      for (std::int64_t t = 0; t < tasks; ++t) task(ev, t);
    }
  }
  if (chunks == 1) return;
  // Few outputs: combine each output's chunk totals pairwise.
  for (std::int64_t u = 0; u < units; ++u) {
    const std::int64_t ko = u / blocks_per_row, c0 = u % blocks_per_row * J;
    const std::int64_t w = columns ? std::min(J, m - c0) : 1;
    for (std::int64_t c = 0; c < w; ++c) {
      Acc vals[kMaxChunks];
      std::int64_t n = 0;
      for (std::int64_t ch = 0; ch < chunks; ++ch) vals[n++] = partial[std::size_t((u * chunks + ch) * J + c)];
      for (std::int64_t width = 1; width < n; width *= 2)
        for (std::int64_t i = 0; i + width < n; i += 2 * width) vals[i] = red.combine(vals[i], vals[i + width]);
      finish(columns ? ko * m + c0 + c : u, vals[0]);
    }
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
