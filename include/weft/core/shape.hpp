// SPDX-License-Identifier: MIT
/// @file Shape (extents, also used for strides), broadcasting and contiguous strides.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "weft/core/config.hpp"
#include "weft/core/error.hpp"

namespace weft {

/// Up to kMaxRank int64 extents stored inline, so that a tensor handle and
/// every kernel argument derived from it stays a flat, copyable value.
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> extents) : Shape(extents.begin(), extents.end()) {}
  explicit Shape(const std::vector<std::int64_t>& extents) : Shape(extents.begin(), extents.end()) {}
  template <std::input_iterator It>
  Shape(It first, It last) {
    for (; first != last; ++first) push_back(std::int64_t(*first));
  }

  static Shape filled(int rank, std::int64_t value) {
    Shape s;
    for (int d = 0; d < rank; ++d) s.push_back(value);
    return s;
  }

  int rank() const { return rank_; }
  std::int64_t operator[](int d) const { return v_[d]; }
  std::int64_t& operator[](int d) { return v_[d]; }
  const std::int64_t* begin() const { return v_; }
  const std::int64_t* end() const { return v_ + rank_; }
  std::int64_t* begin() { return v_; }
  std::int64_t* end() { return v_ + rank_; }

  void push_back(std::int64_t x) {
    if (rank_ == kMaxRank) detail::fail("Shape", "rank above the maximum of ", kMaxRank);
    v_[rank_++] = x;
  }
  void insert(int d, std::int64_t x) {
    push_back(0);
    for (int i = rank_ - 1; i > d; --i) v_[i] = v_[i - 1];
    v_[d] = x;
  }
  void erase(int d) {
    for (int i = d; i + 1 < rank_; ++i) v_[i] = v_[i + 1];
    --rank_;
  }

  /// Product of the extents (1 for rank 0).
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int d = 0; d < rank_; ++d) n *= v_[d];
    return n;
  }

  std::vector<std::int64_t> to_vector() const { return {begin(), end()}; }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.rank_ == b.rank_ && std::equal(a.begin(), a.end(), b.begin());
  }

  friend std::ostream& operator<<(std::ostream& os, const Shape& s) {
    os << '[';
    for (int d = 0; d < s.rank_; ++d) os << (d ? ", " : "") << s.v_[d];
    return os << ']';
  }

  std::string str() const { return detail::cat(*this); }

 private:
  std::int64_t v_[kMaxRank] = {};
  int rank_ = 0;
};

/// Element strides of a tensor: the same inline storage as a Shape.
using Strides = Shape;

/// Row-major strides of a dense tensor of this shape.
inline Strides contiguous_strides(const Shape& shape) {
  Strides s = Shape::filled(shape.rank(), 1);
  for (int d = shape.rank() - 2; d >= 0; --d) s[d] = s[d + 1] * std::max<std::int64_t>(shape[d + 1], 1);
  return s;
}

/// Whether `strides` walk `shape` row-major without gaps (size-1 dims may have any stride; no
/// elements: any strides, as PyTorch; else [3, 0] would not be).
inline bool is_contiguous(const Shape& shape, const Strides& strides) {
  if (shape.numel() == 0) return true;
  std::int64_t expected = 1;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

/// numpy broadcasting: align trailing dims; each pair equal or one of them 1.
inline bool broadcast_into(Shape& acc, const Shape& s) {
  Shape out;
  int rank = std::max(acc.rank(), s.rank());
  for (int d = 0; d < rank; ++d) {
    int da = d - (rank - acc.rank()), ds = d - (rank - s.rank());
    std::int64_t a = da >= 0 ? acc[da] : 1, b = ds >= 0 ? s[ds] : 1;
    if (a != b && a != 1 && b != 1) return false;
    out.push_back(a == 1 ? b : a);
  }
  acc = out;
  return true;
}

/// "[2, 3], [3]": shapes for messages.
inline std::string join_shapes(const std::vector<Shape>& shapes) {
  std::string s;
  for (std::size_t i = 0; i < shapes.size(); ++i) s += (i ? ", " : "") + shapes[i].str();
  return s;
}

/// The weft::Error of shapes that do not broadcast together: `op`, what the shapes are, the shapes.
/// Callers on hot paths broadcast with broadcast_into and gather the shapes only to fail.
[[noreturn, gnu::cold]] inline void fail_broadcast(const char* op, const std::vector<Shape>& shapes,
                                                   const std::string& what = "operands") {
  detail::fail(op, what, " of shapes ", join_shapes(shapes),
               " cannot be broadcast together (numpy rule: trailing dims must be equal or 1)");
}

/// The shape `shapes` broadcast to together (numpy's rule); fail_broadcast when they do not.
inline Shape broadcast_shapes(const char* op, const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes)
    if (!broadcast_into(out, s)) fail_broadcast(op, shapes);
  return out;
}

/// True when `from` broadcasts to exactly `to` (PyTorch's expand / copy_ rule).

inline bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.rank() > to.rank()) return false;
  for (int d = 0; d < from.rank(); ++d) {
    std::int64_t f = from[d], t = to[d + to.rank() - from.rank()];
    if (f != t && f != 1) return false;
  }
  return true;
}

/// Strides that read a tensor of `shape`/`strides` as if expanded to `to`
/// (stride 0 on broadcast dims). Requires broadcasts_to(shape, to).
inline Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& to) {
  Strides out = Shape::filled(to.rank(), 0);
  int lead = to.rank() - shape.rank();
  for (int d = 0; d < shape.rank(); ++d) out[d + lead] = shape[d] == 1 ? 0 : strides[d];
  return out;
}

/// Normalizes a possibly negative dim index against a rank, or fails naming the op.
inline int wrap_dim(const char* op, std::int64_t dim, int rank) {
  int r = std::max(rank, 1);
  if (dim < -r || dim >= r) detail::fail(op, "dim ", dim, " is out of range for a tensor of rank ", rank);
  return int(dim < 0 ? dim + r : dim);
}

namespace detail {

/// coords[0..n) of flat row-major index `i` over `extents[0..n)`.
WEFT_HOST_DEVICE inline void unravel(std::int64_t i, const std::int64_t* extents, int n, std::int64_t* coords) {
  for (int d = n - 1; d >= 0; --d) {
    coords[d] = i % extents[d];
    i /= extents[d];
  }
}

/// Where flat row-major index `i` of `shape` lies through `strides` (the first shape.rank() of them).
inline std::int64_t strided_offset(std::int64_t i, const Shape& shape, const Strides& strides) {
  std::int64_t coords[kMaxRank];
  unravel(i, shape.begin(), shape.rank(), coords);
  std::int64_t at = 0;
  for (int d = 0; d < shape.rank(); ++d) at += coords[d] * strides[d];
  return at;
}

/// `dim` wrapped into [0, rank) (a rank-0 tensor takes 0 and -1, like PyTorch),
/// or a weft::Error naming the op, the dim and the input's shape.
inline int wrap_dim_of(const char* op, std::int64_t dim, const Shape& shape) {
  const std::int64_t r = std::max(shape.rank(), 1);
  if (dim < -r || dim >= r)
    fail(op, "dim ", dim, " is out of range for an input of shape ", shape, "; dims go from ", -r, " to ", r - 1);
  return int(dim < 0 ? dim + r : dim);
}

}  // namespace detail
}  // namespace weft
