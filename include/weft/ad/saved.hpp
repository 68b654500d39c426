// SPDX-License-Identifier: MIT
/// @file The tensors a recorded op saved for its backward, with the version each had when saved: a backward refuses to run on a tensor modified since (torch's version counter).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "weft/core/error.hpp"
#include "weft/core/storage.hpp"
#include "weft/expr/tree.hpp"

namespace weft::ad {
inline namespace WEFT_BACKEND_ABI {
namespace detail {

/// (storage, version) of every tensor an op's backward reads again. A write into a saved tensor
/// between the forward and the backward (an optimizer step, `x += 1`, loading weights) would make
/// the backward use values the forward did not see: check() turns that into an error instead.
class SavedTensors {
 public:
  SavedTensors() = default;
  /// The tensors an expression reads (its Leafs).
  template <class E>
  explicit SavedTensors(const E& expr) {
    weft::detail::for_each_leaf(expr, [&](const auto& leaf) { add(leaf.tensor); });
  }
  template <class View>
  void add(const View& t) {
    if (t.defined()) saved_.push_back({t.storage(), t.storage()->version(), t.shape()});
  }
  /// weft::Error naming `op` when a saved tensor was written since it was saved.
  void check(const char* op) const {
    for (const Saved& s : saved_)
      if (s.storage->version() != s.version)
        weft::detail::fail("ad::backward", "a tensor of shape ", s.shape, " that '", op,
                           "' saved for its backward was modified in place after the forward (version ", s.version,
                           " when saved, ", s.storage->version(), " now); compute the forward again after modifying "
                           "it, or modify a copy (torch: \"one of the variables needed for gradient computation has "
                           "been modified by an inplace operation\")");
  }

 private:
  struct Saved {
    std::shared_ptr<Storage> storage;
    std::uint64_t version;
    Shape shape;
  };
  std::vector<Saved> saved_;
};

}  // namespace detail
}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::ad
