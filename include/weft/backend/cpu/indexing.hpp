// SPDX-License-Identifier: MIT
/// @file The CPU indexing executors: chunk copies (cat, index_select), gather, and a scatter-add whose order of accumulation does not depend on the thread count (index_add, scatter_add); OpenMP over output ranges or target columns.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/shape.hpp"

// Host code only, like the other CPU executors.
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Walks a shape in row-major order from any position, keeping the offset (in elements) of K
/// operands through their own strides: one compare per step, a carry at the end of a row.
template <int K>
class StridedWalk {
 public:
  StridedWalk(const Shape& shape, const std::array<const Strides*, K>& strides) : shape_(shape), strides_(strides) {}

  /// Moves to flat row-major position i.
  void seek(std::int64_t i) {
    unravel(i, shape_.begin(), shape_.rank(), coords_);
    for (int k = 0; k < K; ++k) {
      at_[k] = 0;
      for (int d = 0; d < shape_.rank(); ++d) at_[k] += coords_[d] * (*strides_[k])[d];
    }
  }
  /// Moves to the next position (past the last one, the offsets are meaningless).
  void next() {
    for (int d = shape_.rank() - 1; d >= 0; --d) {
      for (int k = 0; k < K; ++k) at_[k] += (*strides_[k])[d];
      if (++coords_[d] < shape_[d]) return;
      for (int k = 0; k < K; ++k) at_[k] -= coords_[d] * (*strides_[k])[d];
      coords_[d] = 0;
    }
  }
  std::int64_t offset(int k) const { return at_[k]; }

 private:
  const Shape& shape_;
  std::array<const Strides*, K> strides_;
  std::int64_t coords_[kMaxRank] = {};
  std::int64_t at_[K] = {};
};

/// A strided block of a source: the elements a chunk of a contiguous output copies, row-major.
template <class T>
struct Chunk {
  std::int64_t begin;  // the chunk's first position in the output
  const T* source;     // the block's element (0, ..., 0)
  const Shape* shape;
  const Strides* strides;
  std::int64_t size;   // shape->numel()
};

/// dst[0, end - begin) = elements [begin, end) of the block, row-major; one memcpy when the block
/// is contiguous.
template <class T>
void copy_block_range(T* dst, const Chunk<T>& c, std::int64_t begin, std::int64_t end) {
  if (is_contiguous(*c.shape, *c.strides)) {
    std::memcpy(dst, c.source + begin, std::size_t(end - begin) * sizeof(T));
    return;
  }
  StridedWalk<1> walk(*c.shape, {c.strides});
  walk.seek(begin);
  for (std::int64_t i = 0; i < end - begin; ++i, walk.next()) dst[i] = c.source[walk.offset(0)];
}

/// out[0, n) when the output is back-to-back chunks, each a strided block of some source;
/// locate(p) gives the chunk that holds position p. Each thread copies an equal range of the
/// output, so a few large chunks spread over the threads as well as many small ones.
template <class T, class Locate>
void copy_chunks(T* out, std::int64_t n, Locate locate) {
  const int threads = threads_for(n);
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (int t = 0; t < threads; ++t) {
    const std::int64_t end = n * (t + 1) / threads;
    for (std::int64_t p = n * t / threads; p < end;) {
      const Chunk<T> c = locate(p);
      const std::int64_t stop = std::min(end, c.begin + c.size);
      copy_block_range(out + p, c, p - c.begin, stop - c.begin);
      p = stop;
    }
  }
}

/// One operand of a cat, seen from an output row (one outer index): its block is the operand's
/// dims from the cat dim on, placed at [row_begin, row_begin + block.numel()) of each row.
template <class T>
struct CatPart {
  const T* data;
  Strides outer_strides;  // the operand's strides over the dims before the cat dim
  Shape block;
  Strides block_strides;
  std::int64_t row_begin;
};

/// cat: out (contiguous, `outer` x `row`) row o = the parts' blocks at outer index o, in order.
/// The part holding a position is the last one starting at or before it (empty parts start where
/// the next one does).
template <class T>
void run_cat(T* out, const Shape& outer, std::int64_t row, const std::vector<CatPart<T>>& parts) {
  copy_chunks(out, outer.numel() * row, [&](std::int64_t p) {
    const std::int64_t o = p / row, q = p % row;
    const auto after = std::upper_bound(parts.begin(), parts.end(), q,
                                         [](std::int64_t v, const CatPart<T>& part) { return v < part.row_begin; });
    const CatPart<T>& part = *(after - 1);
    const T* source = part.data + strided_offset(o, outer, part.outer_strides);
    return Chunk<T>{o * row + part.row_begin, source, &part.block, &part.block_strides, part.block.numel()};
  });
}

/// index_select: out (contiguous, outer x n x block) [o, i, :] = x[o, index[i * index_stride], :],
/// where x has `outer_shape` / `outer_strides` before the dim, `dim_stride` along it and the
/// block (its dims after the dim) after it. Indices are valid (checked by the caller).
template <class T, class I>
void run_index_select(T* out, const T* x, const Shape& outer_shape, const Strides& outer_strides,
                      std::int64_t dim_stride, const Shape& block, const Strides& block_strides, const I* index,
                      std::int64_t index_stride, std::int64_t n) {
  const std::int64_t size = block.numel();
  copy_chunks(out, outer_shape.numel() * n * size, [&](std::int64_t p) {
    const std::int64_t chunk = p / size, o = chunk / n, i = chunk % n;
    const T* source =
        x + strided_offset(o, outer_shape, outer_strides) + std::int64_t(index[i * index_stride]) * dim_stride;
    return Chunk<T>{chunk * size, source, &block, &block_strides, size};
  });
}

/// gather over `shape` (the index's): out[p] = x[c with c[dim] = index[c]] for the multi-index c of
/// row-major position p; `x_strides` has 0 at dim, where `dim_stride` applies to the index value.
template <class T, class I>
void run_gather(T* out, const T* x, const Strides& x_strides, std::int64_t dim_stride, const I* index,
                const Strides& index_strides, const Shape& shape) {
  const std::int64_t n = shape.numel();
  const int threads = threads_for(n);
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (int t = 0; t < threads; ++t) {
    const std::int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    StridedWalk<2> walk(shape, {&x_strides, &index_strides});
    walk.seek(begin);
    for (std::int64_t p = begin; p < end; ++p, walk.next())
      out[p] = x[walk.offset(0) + std::int64_t(index[walk.offset(1)]) * dim_stride];
  }
}

/// target[c with c[dim] = index[c]] += alpha * source[c] for every multi-index c of `shape`
/// (index_add and scatter_add; each operand's strides are over `shape`, and target's at dim
/// applies to the index value). A column (c without its dim coordinate) belongs to one thread,
/// which adds its elements in increasing c[dim]: the order of the additions into any element is
/// the index order, whatever the thread count, so the result is bitwise reproducible. Distinct
/// columns write distinct elements. 16-bit floats add in float and round at every addition.
template <class T, class I>
void run_scatter_add(T* target, const Strides& target_strides, const T* source, const Strides& source_strides,
                     const I* index, const Strides& index_strides, const Shape& shape, int dim, T alpha) {
  using Acc = math_t<T>;
  Shape columns = shape;
  Strides tc = target_strides, sc = source_strides, ic = index_strides;
  for (Shape* s : {&columns, &tc, &sc, &ic}) s->erase(dim);
  const std::int64_t n = shape[dim], n_columns = columns.numel();
  if (n * n_columns == 0) return;
  const std::int64_t t_dim = target_strides[dim], s_dim = source_strides[dim], i_dim = index_strides[dim];
  const Acc a = Acc(alpha);
  const int threads = int(std::min<std::int64_t>(threads_for(n * n_columns), n_columns));
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (int t = 0; t < threads; ++t) {
    const std::int64_t begin = n_columns * t / threads, end = n_columns * (t + 1) / threads;
    StridedWalk<3> walk(columns, {&tc, &sc, &ic});
    // Rows outside, columns inside: a thread's columns are usually neighbours in memory.
    for (std::int64_t j = 0; j < n; ++j) {
      walk.seek(begin);
      for (std::int64_t q = begin; q < end; ++q, walk.next()) {
        T& into = target[walk.offset(0) + std::int64_t(index[walk.offset(2) + j * i_dim]) * t_dim];
        into = T(Acc(into) + a * Acc(source[walk.offset(1) + j * s_dim]));
      }
    }
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
