// SPDX-License-Identifier: MIT
/// @file einsum of two operands: the spec parsed into batch, contracted and free letters, and the operands viewed (diagonals, permuted, merged dims) as one batched matmul.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/log/log.hpp"
#include "weft/ops/matmul.hpp"
#include "weft/ops/reduce.hpp"

namespace weft {
namespace detail {

/// A subscript's label: A-Z are 0..25 and a-z 26..51 (ASCII order, which the implicit output's
/// sort follows); the ellipsis's dims are kEllipsisLabel + t, t counted from the leftmost dim that
/// any operand's ellipsis covers (operands' ellipses align on the right and broadcast).
inline constexpr int kEllipsisLabel = 52;
/// Where a term holds its ellipsis before the operand's rank says how many dims it covers.
inline constexpr int kEllipsisMark = -1;

/// The label's letter; '.' for a dim under the ellipsis.
inline char einsum_label_letter(int label) {
  return label >= kEllipsisLabel ? '.' : char(label < 26 ? 'A' + label : 'a' + label - 26);
}
inline std::string einsum_label_name(int label) {
  if (label >= kEllipsisLabel) return cat("ellipsis dim ", label - kEllipsisLabel);
  return cat("letter '", einsum_label_letter(label), "'");
}

/// One operand's (or the output's) subscripts: labels, with kEllipsisMark where "..." stood.
struct EinsumTerm {
  std::vector<int> labels;
  bool ellipsis = false;
};

/// The spec's terms: two inputs and the output when "->" gives one.
struct EinsumSpec {
  EinsumTerm inputs[2];
  std::optional<EinsumTerm> output;
};

inline EinsumTerm parse_einsum_term(std::string_view spec, std::size_t begin, std::size_t end) {
  EinsumTerm term;
  for (std::size_t i = begin; i < end; ++i) {
    const char c = spec[i];
    if (c == ' ') continue;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      term.labels.push_back(c >= 'a' ? 26 + (c - 'a') : c - 'A');
    } else if (c == '.' && spec.substr(i, 3) == "..." && i + 3 <= end) {
      if (term.ellipsis)
        fail("einsum", "spec '", spec, "' has a second ellipsis in one term at position ", i, "; one per term");
      term.ellipsis = true;
      term.labels.push_back(kEllipsisMark);
      i += 2;
    } else {
      fail("einsum", "spec '", spec, "' has '", c, "' at position ", i,
           "; subscripts are letters a-z, A-Z and at most one '...' per term, terms split by ',' and '->'");
    }
  }
  return term;
}

/// "ab,bc->ac" split into terms: exactly two operands (a comma), at most one "->".
inline EinsumSpec parse_einsum(std::string_view spec) {
  const std::size_t arrow = spec.find("->");
  if (arrow != std::string_view::npos && spec.find("->", arrow + 2) != std::string_view::npos)
    fail("einsum", "spec '", spec, "' has more than one '->'");
  const std::size_t inputs_end = arrow == std::string_view::npos ? spec.size() : arrow;
  const std::size_t comma = spec.find(',');
  if (comma == std::string_view::npos || comma > inputs_end || spec.find(',', comma + 1) < inputs_end)
    fail("einsum", "spec '", spec, "' needs exactly two operand terms split by one ',' (weft's einsum takes two "
         "operands), e.g. 'ij,jk->ik'");
  if (arrow != std::string_view::npos && spec.find(',', arrow) != std::string_view::npos)
    fail("einsum", "spec '", spec, "' has a ',' after '->'; the output is one term");
  EinsumSpec s;
  s.inputs[0] = parse_einsum_term(spec, 0, comma);
  s.inputs[1] = parse_einsum_term(spec, comma + 1, inputs_end);
  if (arrow != std::string_view::npos) s.output = parse_einsum_term(spec, arrow + 2, spec.size());
  return s;
}

/// A view by its labels, one label per dim, each label once. Held as its layout (assigning a
/// TensorView writes elements, so views are made, never rebound).
template <class T>
struct LabeledView {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Strides strides;
  std::int64_t offset = 0;
  std::vector<int> labels;

  static LabeledView of(const TensorView<const T>& v, std::vector<int> labels) {
    return {v.storage(), v.shape(), v.strides(), v.offset(), std::move(labels)};
  }
  TensorView<const T> view() const { return TensorView<const T>(storage, shape, strides, offset); }
  int find(int label) const {
    const auto it = std::find(labels.begin(), labels.end(), label);
    return it == labels.end() ? -1 : int(it - labels.begin());
  }
  /// Dim d dropped (its index 0 kept): the operand does not vary along it.
  void drop(int d) {
    shape.erase(d);
    strides.erase(d);
    labels.erase(labels.begin() + d);
  }
};

/// Operand k's labels with its ellipsis expanded over `ellipsis_dims` of `total` ellipsis dims, its
/// rank checked, and every repeated label folded into one dim with the strides summed (the
/// diagonal, a view).
template <class T>
LabeledView<T> label_operand(std::string_view spec, int k, const TensorView<const T>& x, const EinsumTerm& term,
                             int total) {
  const int rank = x.dim(), letters = int(term.labels.size()) - (term.ellipsis ? 1 : 0);
  const int ellipsis_dims = rank - letters;
  std::vector<int> labels;
  for (int label : term.labels) {
    if (label != kEllipsisMark) labels.push_back(label);
    else
      for (int t = 0; t < ellipsis_dims; ++t) labels.push_back(kEllipsisLabel + total - ellipsis_dims + t);
  }
  LabeledView<T> out{x.storage(), {}, {}, x.offset(), {}};
  Shape& shape = out.shape;
  Strides& strides = out.strides;
  for (int d = 0; d < rank; ++d) {
    const int at = out.find(labels[std::size_t(d)]);
    if (at < 0) {
      out.labels.push_back(labels[std::size_t(d)]);
      shape.push_back(x.shape()[d]);
      strides.push_back(x.strides()[d]);
    } else if (shape[at] != x.shape()[d]) {
      fail("einsum", einsum_label_name(labels[std::size_t(d)]), " repeats in operand ", k, " of shape ", x.shape(),
           " (spec '", spec, "') with sizes ", shape[at], " and ", x.shape()[d], "; a diagonal needs equal sizes");
    } else {
      strides[at] += x.strides()[d];
    }
  }
  return out;
}

/// The dims of `v` in [begin, end) merged into one when their strides let one stride walk them
/// (extent-1 dims ignored); nullopt when they do not. An empty range gives an extent-1 dim.
template <class T>
std::optional<TensorView<const T>> merge_view_dims(const TensorView<const T>& v, int begin, int end) {
  Shape shape, strides;
  for (int d = 0; d < begin; ++d) shape.push_back(v.shape()[d]), strides.push_back(v.strides()[d]);
  std::int64_t extent = 1, stride = 1;
  bool first = true;
  for (int d = begin; d < end; ++d) {
    extent *= v.shape()[d];
    if (v.shape()[d] == 1) continue;
    if (!first && stride != v.strides()[d] * v.shape()[d]) return std::nullopt;
    stride = v.strides()[d];
    first = false;
  }
  shape.push_back(extent);
  strides.push_back(stride);
  for (int d = end; d < v.dim(); ++d) shape.push_back(v.shape()[d]), strides.push_back(v.strides()[d]);
  return TensorView<const T>(v.storage(), shape, strides, v.offset());
}

// From here on the helpers run kernels (a copy where a view cannot merge): backend ABI namespace.
inline namespace WEFT_BACKEND_ABI {

/// `op` permuted to [batch..., first..., second...] and each of first and second merged into one
/// dim: a view when the strides allow it, else (`copied` set) a contiguous copy of the permuted view.
template <class T>
TensorView<const T> matmul_operand(const LabeledView<T>& op, const std::vector<int>& batch,
                                   const std::vector<int>& first, const std::vector<int>& second, bool& copied) {
  std::vector<std::int64_t> perm;
  for (const std::vector<int>* group : {&batch, &first, &second})
    for (int label : *group) perm.push_back(op.find(label));
  const TensorView<const T> permuted = op.view().permute(perm);
  const int b = int(batch.size()), m = int(first.size());
  auto merged = [&](const TensorView<const T>& v) -> std::optional<TensorView<const T>> {
    const auto once = merge_view_dims(v, b, b + m);
    return once ? merge_view_dims(*once, b + 1, once->dim()) : std::nullopt;
  };
  if (auto view = merged(permuted)) return *view;
  copied = true;
  return *merged(TensorView<const T>(Tensor<T>(permuted)));
}

inline std::string einsum_labels_str(const std::vector<int>& labels) {
  std::string s;
  for (int label : labels) s += einsum_label_letter(label);
  return s;
}

/// The output's labels: as written (each letter once, and in an operand), else the ellipsis's
/// dims then the letters that occur once in the spec, sorted (torch's implicit output).
template <class T>
std::vector<int> einsum_output(std::string_view spec, const EinsumSpec& parsed, const LabeledView<T> (&ops)[2],
                               int total) {
  const char* op = "einsum";
  std::vector<int> out;
  if (parsed.output) {
    for (int label : parsed.output->labels) {
      if (label == kEllipsisMark) {
        for (int t = 0; t < total; ++t) out.push_back(kEllipsisLabel + t);
        continue;
      }
      if (ops[0].find(label) < 0 && ops[1].find(label) < 0)
        fail(op, "the output of '", spec, "' names ", einsum_label_name(label), ", which no operand has");
      if (std::count(out.begin(), out.end(), label))
        fail(op, "the output of '", spec, "' names ", einsum_label_name(label), " twice; each output letter once");
      out.push_back(label);
    }
    return out;
  }
  for (int t = 0; t < total; ++t) out.push_back(kEllipsisLabel + t);
  for (int label = 0; label < kEllipsisLabel; ++label) {
    long count = 0;
    for (const EinsumTerm& term : parsed.inputs) count += std::count(term.labels.begin(), term.labels.end(), label);
    if (count == 1) out.push_back(label);
  }
  return out;
}

/// A letter of both operands with extent 1 in one of them broadcasts (torch's rule): that operand
/// does not vary along it, so its dim is dropped. Other unequal extents are an error naming the
/// letter and both sizes.
template <class T>
void drop_broadcast_letters(std::string_view spec, LabeledView<T> (&ops)[2], const Shape& a, const Shape& b) {
  for (std::size_t i = 0; i < ops[0].labels.size();) {
    const int label = ops[0].labels[i], j = ops[1].find(label);
    const std::int64_t n0 = ops[0].shape[int(i)], n1 = j < 0 ? n0 : ops[1].shape[j];
    if (n0 == n1) {
      ++i;
    } else if (n1 == 1) {
      ops[1].drop(j);
      ++i;
    } else if (n0 == 1) {
      ops[0].drop(int(i));
    } else {
      fail("einsum", einsum_label_name(label), " has size ", n0, " in operand 0 (shape ", a, ") but ", n1,
           " in operand 1 (shape ", b, ") in '", spec, "'; a shared letter needs one size (or 1, which broadcasts)");
    }
  }
}

inline bool einsum_has_label(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

/// sum over l of x[..., l, ...] for every letter l of one operand that neither the other operand
/// nor the output has: summed out of that operand first (weft::sum's kernel, in T's sum dtype,
/// rounded back to T).
template <class T>
void sum_lone_letters(LabeledView<T> (&ops)[2], const std::vector<int>& out) {
  for (int k = 0; k < 2; ++k) {
    std::vector<std::int64_t> dims;
    std::vector<int> kept;
    for (std::size_t d = 0; d < ops[k].labels.size(); ++d) {
      const int label = ops[k].labels[d];
      if (!einsum_has_label(out, label) && ops[1 - k].find(label) < 0) dims.push_back(std::int64_t(d));
      else kept.push_back(label);
    }
    if (dims.empty()) continue;
    const auto sums = reduce_sum(as_expr(ops[k].view()), &dims, false, "einsum");
    if constexpr (std::is_same_v<typename decltype(sums)::value_type, T>) ops[k] = LabeledView<T>::of(sums.view(), kept);
    else ops[k] = LabeledView<T>::of(Tensor<T>(cast<T>(sums)).view(), kept);
  }
}

template <class T>
Tensor<T> einsum_impl(std::string_view spec, const TensorView<const T>& a, const TensorView<const T>& b) {
  const char* op = "einsum";
  const EinsumSpec parsed = parse_einsum(spec);
  const TensorView<const T>* xs[2] = {&a, &b};
  int total = 0;  // dims under the ellipsis: the most any operand's covers
  for (int k = 0; k < 2; ++k) {
    const EinsumTerm& term = parsed.inputs[k];
    if (!xs[k]->defined()) fail(op, "operand ", k, " is an empty (default-constructed) tensor");
    const int letters = int(term.labels.size()) - (term.ellipsis ? 1 : 0);
    if (term.ellipsis ? letters > xs[k]->dim() : letters != xs[k]->dim())
      fail(op, "operand ", k, " has shape ", xs[k]->shape(), " of rank ", xs[k]->dim(), " but its subscripts in '",
           spec, "' name ", letters, " dims", term.ellipsis ? " besides the ellipsis" : "",
           "; give one letter per dim (or '...' for the leading ones)");
    if (term.ellipsis) total = std::max(total, xs[k]->dim() - letters);
  }
  if (a.device() != b.device())
    fail(op, "operand 0 (shape ", a.shape(), ") is on ", a.device(), " but operand 1 (shape ", b.shape(), ") is on ",
         b.device(), "; move them to one device with .to(device)");
  LabeledView<T> ops[2] = {label_operand(spec, 0, a, parsed.inputs[0], total),
                           label_operand(spec, 1, b, parsed.inputs[1], total)};
  const std::vector<int> out = einsum_output(spec, parsed, ops, total);
  drop_broadcast_letters(spec, ops, a.shape(), b.shape());
  sum_lone_letters(ops, out);
  // batch: in both and the output; contracted: in both, not the output; free: one operand's, in the output.
  std::vector<int> batch, contracted, free[2];
  for (int label : out) {
    const bool in0 = ops[0].find(label) >= 0, in1 = ops[1].find(label) >= 0;
    (in0 && in1 ? batch : free[in0 ? 0 : 1]).push_back(label);
  }
  for (int label : ops[0].labels)
    if (!einsum_has_label(out, label) && ops[1].find(label) >= 0) contracted.push_back(label);
  // The product's dims are [batch, free of the left operand, free of the right one]: the operand
  // whose free letters come first in the output goes left, so that no copy reorders the result.
  std::vector<int> natural[2];
  for (int left = 0; left < 2; ++left) {
    natural[left] = batch;
    natural[left].insert(natural[left].end(), free[left].begin(), free[left].end());
    natural[left].insert(natural[left].end(), free[1 - left].begin(), free[1 - left].end());
  }
  const int left = natural[0] == out ? 0 : natural[1] == out ? 1 : 0;
  bool copied[2] = {false, false};
  const TensorView<const T> lhs = matmul_operand(ops[left], batch, free[left], contracted, copied[0]);
  const TensorView<const T> rhs = matmul_operand(ops[1 - left], batch, contracted, free[1 - left], copied[1]);
  Tensor<T> product = matmul_impl<T>(lhs, rhs);
  Shape natural_shape;
  for (int label : natural[left]) {
    const int k = ops[0].find(label) >= 0 ? 0 : 1;
    natural_shape.push_back(ops[k].shape[ops[k].find(label)]);
  }
  const bool reorder = natural[left] != out;
  log_message(LogComponent::fusion, LogLevel::info, "einsum '", spec, "': matmul ", lhs.shape(), " x ", rhs.shape(),
              " (batch '", einsum_labels_str(batch), "', rows '", einsum_labels_str(free[left]), "', contracted '",
              einsum_labels_str(contracted), "', columns '", einsum_labels_str(free[1 - left]), "')",
              copied[0] || copied[1] ? cat(", operand(s) copied to merge dims:", copied[0] ? " left" : "",
                                           copied[1] ? " right" : "")
                                     : std::string(),
              reorder ? ", the result copied into the output order" : "");
  Tensor<T> result(AdoptStorage{}, product.storage(), natural_shape);  // the product's elements, no copy
  if (!reorder) return result;
  std::vector<std::int64_t> perm;
  for (int label : out) perm.push_back(std::int64_t(std::find(natural[left].begin(), natural[left].end(), label) - natural[left].begin()));
  return Tensor<T>(result.view().permute(perm));
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// einsum(spec, a, b) (torch.einsum with two operands): the sum over every letter the output lacks
/// of the products a[letters of a] * b[letters of b], e.g. "ij,jk->ik" (matmul), "bij,bkj->bik",
/// "i,j->ij" (outer), "i,i->" (dot), "ii->i"-style diagonals ("ii,j->ij"), "...ij,jk->...ik". Without
/// "->" the output is the ellipsis's dims then the letters that occur once, sorted (A-Z before a-z).
/// Runs as ONE batched matmul over views: letters in both operands and the output are batch dims,
/// in both but not the output are contracted (k), in one operand and the output are its free dims
/// (m or n), merged into one dim each where the strides allow (else that operand is copied); a
/// letter of one operand only, absent from the output, is summed out of it first; a letter of
/// extent 1 in one operand broadcasts. The product is returned without a copy when the output
/// order is [batch, free of one operand, free of the other] (the operands are swapped to match
/// either), else copied once into the output order. WEFT_LOGS=fusion prints the matmul. Both
/// operands have one dtype (not bool); a malformed spec, a rank that does not match a term, a
/// letter with two sizes (names the letter and both) or a repeated letter of unequal extents is a
/// weft::Error.
template <SingleTensor A, SingleTensor B>
Tensor<typename A::value_type> einsum(std::string_view spec, const A& a, const B& b) {
  using T = typename A::value_type;
  static_assert(std::is_same_v<T, typename B::value_type>,
                "weft::einsum: both operands need the same dtype; cast one with weft::cast<T>(x)");
  static_assert(!std::is_same_v<T, bool>, "weft::einsum: bool operands cannot be multiplied; cast to a number type");
  return detail::einsum_impl<T>(spec, a.view(), b.view());
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
