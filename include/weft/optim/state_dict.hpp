// SPDX-License-Identifier: MIT
/// @file StateDict: an optimizer's state as named tensors (torch's state_dict, flattened), and the checks that load it.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "weft/core/tensor.hpp"
#include "weft/io/safetensors.hpp"
#include "weft/ops/factories.hpp"

namespace weft::optim {

/// An optimizer's state as a flat list of named tensors, which `io::save_safetensors` writes as it
/// is. The names flatten torch's nested state_dict:
///   step                          int64 [1]     steps taken (one count for every parameter)
///   param_groups.<g>.params       int64 [n]     the parameters of group g (their indices)
///   param_groups.<g>.<option>     float64 [1]   each option (bools as 0 / 1; "betas.0", "betas.1")
///   state.<i>.<name>              state dtype   parameter i's state ("exp_avg", ...), once made
///   state.<i>.master_param        state dtype   parameter i's float32 master copy, once made
using StateDict = std::vector<io::NamedTensor>;

inline namespace WEFT_BACKEND_ABI {
namespace detail {

/// A one-element tensor holding v.
template <Element T>
io::NamedTensor scalar_entry(std::string name, T v) {
  return {std::move(name), weft::full<T>(Shape{1}, v)};
}

/// Copies an entry (host bytes of dst's dtype and shape, checked by StateDictReader) into dst (contiguous).
template <Element T>
void copy_entry(const TensorView<T>& dst, const io::NamedTensor& src) {
  if (dst.device().is_cpu()) {
    std::memcpy(static_cast<void*>(dst.data()), src.tensor.bytes().data(), src.tensor.bytes().size());
    dst.storage()->count_write();
  } else {
    Tensor<T> host = weft::empty<T>(dst.shape());
    std::memcpy(static_cast<void*>(host.data()), src.tensor.bytes().data(), src.tensor.bytes().size());
    TensorView<T> into = dst;  // assigning to a view writes its elements
    into = host.to(dst.device());
  }
}

/// The entries of a state dict being loaded, and what is wrong with them: an optimizer takes the
/// entries it expects, then finish() throws one weft::Error listing every missing, unexpected or
/// mis-shaped entry, before the optimizer writes anything.
class StateDictReader {
 public:
  StateDictReader(const char* op, const StateDict& dict) : op_(op), dict_(dict), used_(dict.size(), false) {
    for (std::size_t k = 0; k < dict.size(); ++k)
      if (!index_.emplace(dict[k].name, k).second) repeated_.push_back(dict[k].name);
  }

  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  /// The entry `name` if it has this dtype and shape (else nullptr, and the problem is noted).
  const io::NamedTensor* take(const std::string& name, DType dtype, const Shape& shape) {
    auto at = index_.find(name);
    if (at == index_.end()) {
      missing_.push_back(name);
      return nullptr;
    }
    used_[at->second] = true;
    const io::NamedTensor& e = dict_[at->second];
    if (e.tensor.dtype() != dtype || !(e.tensor.shape() == shape)) {
      misshaped_.push_back(weft::detail::cat(name, " (", dtype_name(e.tensor.dtype()), " ", e.tensor.shape(),
                                             ", expected ", dtype_name(dtype), " ", shape, ")"));
      return nullptr;
    }
    return &e;
  }
  /// Element k of a checked entry.
  template <Element T>
  static T element(const io::NamedTensor& e, std::size_t k) {
    T v;
    std::memcpy(&v, e.tensor.bytes().data() + k * sizeof(T), sizeof(T));
    return v;
  }
  /// A value that does not fit (the entry's shape and dtype did).
  void bad_value(std::string what) { misshaped_.push_back(std::move(what)); }

  void finish() const {
    std::vector<std::string> unexpected;
    for (std::size_t k = 0; k < dict_.size(); ++k)
      if (!used_[k]) unexpected.push_back(dict_[k].name);
    if (missing_.empty() && unexpected.empty() && misshaped_.empty() && repeated_.empty()) return;
    auto list = [](const char* what, const std::vector<std::string>& names) {
      if (names.empty()) return std::string();
      std::string s = weft::detail::cat("\n  ", what, " (", names.size(), "):");
      for (const std::string& n : names) s += " " + n + ";";
      s.pop_back();
      return s;
    };
    weft::detail::fail(op_, "load_state_dict: the state dict does not fit this optimizer; nothing was loaded",
                       list("missing", missing_), list("unexpected", unexpected), list("mis-shaped", misshaped_),
                       list("given twice", repeated_),
                       "\n  (a state dict fits an optimizer of the same kind, parameter shapes, groups and dtypes)");
  }

 private:
  const char* op_;
  const StateDict& dict_;
  std::vector<bool> used_;
  std::map<std::string, std::size_t> index_;
  std::vector<std::string> missing_, misshaped_, repeated_;
};

/// Every tensor of a safetensors file as a state dict entry (zero-copy views of the mapping).
inline StateDict read_state_dict(const char* op, const io::SafeTensors& file) {
  StateDict dict;
  for (const std::string& name : file.keys()) {
    switch (file.dtype(name)) {
      case DType::float32: dict.push_back({name, file.get<float>(name)}); break;
      case DType::float64: dict.push_back({name, file.get<double>(name)}); break;
      case DType::int64: dict.push_back({name, file.get<std::int64_t>(name)}); break;
      default:
        weft::detail::fail(op, "load_state_dict: tensor '", name, "' has dtype ", dtype_name(file.dtype(name)),
                           "; an optimizer's state dict holds float32, float64 and int64 tensors");
    }
  }
  return dict;
}

}  // namespace detail
}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::optim
