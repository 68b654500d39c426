// SPDX-License-Identifier: MIT
/// @file operator<< for tensors and views, in PyTorch's repr format (torch/_tensor_str.py, default print options).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/core/tensor.hpp"

namespace weft {
namespace detail {

// torch.set_printoptions' defaults (weft has no print options to change).
inline constexpr int kPrintLineWidth = 80;
inline constexpr std::int64_t kPrintThreshold = 1000;  // more elements than this: summarize
inline constexpr std::int64_t kPrintEdgeItems = 3;     // what a summarized dim keeps at each end
inline constexpr std::int64_t kPrintIndent = 7;        // the width of "tensor("

/// An element as Python sees it when torch prints: floats as double, integers as int64 (exact
/// past 2^53), bool as bool.
template <class T>
using printed_t = std::conditional_t<is_floating_v<T>, double,
                                     std::conditional_t<std::is_same_v<T, bool>, bool, std::int64_t>>;

/// The indices a dim of `extent` shows: all, or when summarizing a dim longer than two edges,
/// the first and last kPrintEdgeItems (a gap between two shown indices prints as "...").
inline std::vector<std::int64_t> shown_indices(std::int64_t extent, bool summarize) {
  const bool cut = summarize && extent > 2 * kPrintEdgeItems;
  std::vector<std::int64_t> shown;
  for (std::int64_t i = 0; i < extent; ++i)
    if (!cut || i < kPrintEdgeItems || i >= extent - kPrintEdgeItems) shown.push_back(i);
  return shown;
}

/// Calls f(i) for the row-major index i of each shown element, in order.
template <class F>
void for_each_shown(const Shape& shape, bool summarize, int d, std::int64_t prefix, F&& f) {
  if (d == shape.rank()) return f(prefix);
  for (std::int64_t i : shown_indices(shape[d], summarize))
    for_each_shown(shape, summarize, d + 1, prefix * shape[d] + i, f);
}

/// snprintf into a string: glibc rounds the exact binary value, as Python's format does.
inline std::string printf_text(const char* format, double v) {
  std::string s(std::size_t(std::snprintf(nullptr, 0, format, v)), '\0');
  std::snprintf(s.data(), s.size() + 1, format, v);
  return s;
}

/// torch's _Formatter for floating dtypes: one notation and width for all shown elements, chosen
/// from their finite nonzero magnitudes.
class FloatFormat {
 public:
  explicit FloatFormat(const std::vector<double>& shown) {
    double lo = INFINITY, hi = 0;
    for (double v : shown) {
      if (!std::isfinite(v) || v == 0) continue;
      lo = std::min(lo, std::abs(v));
      hi = std::max(hi, std::abs(v));
      integral_ = integral_ && v == std::ceil(v);
    }
    if (hi == 0) return;  // nothing finite and nonzero: "0.", "nan", "inf" in width 1
    scientific_ = hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4;
    // Zeros and non-finite values do not widen the column (torch: [1., inf] has no padding).
    for (double v : shown)
      if (std::isfinite(v) && v != 0) width_ = std::max(width_, text(v).size());
  }

  std::size_t width() const { return width_; }
  /// Python's formatting of v: "{:.4e}", "{:.0f}." for a float tensor of whole numbers, or "{:.4f}".
  std::string text(double v) const {
    if (std::isnan(v)) return "nan";  // C's printf would write "-nan" for a negative NaN
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (scientific_) return printf_text("%.4e", v);
    if (integral_) return printf_text("%.0f", v) + ".";
    return printf_text("%.4f", v);
  }

 private:
  bool integral_ = true;
  bool scientific_ = false;
  std::size_t width_ = 1;
};

/// torch's _Formatter for integers and bool: Python's str() of each, in the widest one's width.
class PlainFormat {
 public:
  template <class V>
  explicit PlainFormat(const std::vector<V>& shown) {
    for (V v : shown) width_ = std::max(width_, text(v).size());
  }
  std::size_t width() const { return width_; }
  static std::string text(std::int64_t v) { return std::to_string(v); }
  static std::string text(bool v) { return v ? "True" : "False"; }

 private:
  std::size_t width_ = 1;
};

/// torch's _tensor_str_with_formatter: the nested brackets of the elements (row-major `values`)
/// of `shape`, each right-aligned to the format's width.
template <class V, class Format>
class TensorText {
 public:
  TensorText(const std::vector<V>& values, const Shape& shape, bool summarize, const Format& format)
      : values_(values), shape_(shape), summarize_(summarize), format_(format) {}

  /// The sub-tensor of dims d.. at row-major `prefix` (its index over dims ..d-1), printed
  /// `indent` columns from the line's start.
  std::string str(int d, std::int64_t prefix, std::int64_t indent) const {
    if (shape_.rank() == 0) return element(0);
    if (d == shape_.rank() - 1) return vector(prefix, indent);
    // The rows of a matrix break once, the matrices of a 3-D tensor twice, ...
    const std::string separator = "," + std::string(std::size_t(shape_.rank() - 1 - d), '\n') +
                                  std::string(std::size_t(indent + 1), ' ');
    std::string s = "[";
    std::int64_t previous = -1;
    for (std::int64_t i : shown_indices(shape_[d], summarize_)) {
      if (previous >= 0) s += separator;
      if (previous >= 0 && i != previous + 1) s += "..." + separator;
      s += str(d + 1, prefix * shape_[d] + i, indent + 1);
      previous = i;
    }
    return s + "]";
  }

 private:
  std::string element(std::int64_t i) const {
    std::string text = format_.text(values_[std::size_t(i)]);
    return std::string(format_.width() - std::min(format_.width(), text.size()), ' ') + text;
  }

  /// The last dim: as many elements (", "-separated) per line as fit the line width.
  std::string vector(std::int64_t prefix, std::int64_t indent) const {
    const std::int64_t per_line =
        std::max<std::int64_t>(1, (kPrintLineWidth - indent) / std::int64_t(format_.width() + 2));
    std::vector<std::string> items;
    std::int64_t previous = -1;
    for (std::int64_t i : shown_indices(shape_[shape_.rank() - 1], summarize_)) {
      if (previous >= 0 && i != previous + 1) items.push_back(" ...");  // an item of the line too
      items.push_back(element(prefix * shape_[shape_.rank() - 1] + i));
      previous = i;
    }
    std::string s = "[";
    for (std::size_t k = 0; k < items.size(); ++k) {
      if (k > 0) s += k % std::size_t(per_line) == 0 ? ",\n" + std::string(std::size_t(indent + 1), ' ') : ", ";
      s += items[k];
    }
    return s + "]";
  }

  const std::vector<V>& values_;
  const Shape& shape_;
  bool summarize_;
  const Format& format_;
};

/// The bracketed elements of a non-empty tensor (torch's _tensor_str).
template <class V>
std::string elements_text(const std::vector<V>& values, const Shape& shape) {
  const bool summarize = shape.numel() > kPrintThreshold;
  // As torch, the notation and width come from the shown elements only.
  std::vector<V> shown;
  for_each_shown(shape, summarize, 0, 0, [&](std::int64_t i) { shown.push_back(values[std::size_t(i)]); });
  using Format = std::conditional_t<std::is_same_v<V, double>, FloatFormat, PlainFormat>;
  const Format format(shown);
  return TensorText<V, Format>(values, shape, summarize, format).str(0, 0, kPrintIndent);
}

/// torch's _add_suffixes: ", suffix" after the elements, or on a new line where it would pass
/// the line width. The last line counts two characters longer than it is, as in torch, so that
/// the line breaks where torch's does.
inline std::string with_suffixes(std::string s, const std::vector<std::string>& suffixes) {
  const std::size_t newline = s.rfind('\n');
  std::int64_t last_line = std::int64_t(s.size()) - (newline == std::string::npos ? -1 : std::int64_t(newline)) + 1;
  for (const std::string& suffix : suffixes) {
    const std::int64_t length = std::int64_t(suffix.size());
    if (last_line + length + 2 > kPrintLineWidth) {
      s += ",\n" + std::string(std::size_t(kPrintIndent), ' ') + suffix;
      last_line = kPrintIndent + length;
    } else {
      s += ", " + suffix;
      last_line += length + 2;
    }
  }
  return s + ")";
}

}  // namespace detail

inline namespace WEFT_BACKEND_ABI {  // to_vector may copy from a device or gather a strided view

/// Prints as PyTorch's repr with its default print options: 4 decimals, scientific notation for
/// a wide range of magnitudes, summaries ("...") past 1000 elements. One deliberate difference:
/// dtype= is always printed, in weft's names (`dtype=float32`), where torch omits it for its
/// default dtypes (float32, int64, bool) and writes `dtype=torch.float16`; the line breaks
/// before the dtype where weft's shorter name passes 80 columns, not torch's. device='cuda:0'
/// comes first for non-CPU tensors, as in torch; `tensor(undefined)` is a tensor without
/// elements or shape.
template <class T>
std::ostream& operator<<(std::ostream& os, const TensorBase<T>& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  std::vector<std::string> suffixes;
  if (!t.device().is_cpu()) suffixes.push_back("device='" + detail::cat(t.device()) + "'");
  std::string s = "tensor(";
  if (t.numel() == 0) {
    s += "[]";
    if (t.dim() != 1) {  // torch shows the shape unless it is (0,)
      std::string size = "size=(";
      for (int d = 0; d < t.dim(); ++d) size += (d ? ", " : "") + std::to_string(t.shape()[d]);
      suffixes.push_back(size + ")");
    }
  } else {
    const std::vector<T> elements = t.to_vector();
    std::vector<detail::printed_t<T>> values;
    values.reserve(elements.size());
    for (T v : elements) values.push_back(detail::printed_t<T>(math_t<T>(v)));
    s += detail::elements_text(values, t.shape());
  }
  suffixes.push_back(std::string("dtype=") + dtype_name<T>());
  return os << detail::with_suffixes(std::move(s), suffixes);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
