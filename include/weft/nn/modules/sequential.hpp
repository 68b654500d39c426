// SPDX-License-Identifier: MIT
/// @file nn::Sequential: an ordered list of modules it owns, named "0", "1", ... as torch's.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/nn/modules/module.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// torch.nn.Sequential: owns its modules (each moved in, kept on the heap so that it keeps its
/// dynamic type) and registers the i-th as the child "i", so that its parameters are named
/// "0.weight", "1.bias", ... in the order they run. One Sequential argument is moved, not nested (`Sequential(std::move(other))` is the move constructor): nest it with push_back.
///
///   nn::Sequential seq(nn::Linear(5, 7), nn::LayerNorm(7), nn::Linear(7, 3, false));
template <class T = float>
class Sequential : public Module<T> {
 public:
  Sequential() = default;
  template <class... Ms>
    requires(sizeof...(Ms) > 0 && (std::derived_from<std::remove_cvref_t<Ms>, Module<T>> && ...))
  explicit Sequential(Ms&&... modules) {
    (push_back(std::forward<Ms>(modules)), ...);
  }

  /// Appends `module` (moved in) as the child named by its index; returns the stored module.
  template <class M>
    requires std::derived_from<std::remove_cvref_t<M>, Module<T>>
  std::remove_cvref_t<M>& push_back(M&& module) {
    static_assert(!std::is_lvalue_reference_v<M>,
                  "modules are not copyable: move the module into the Sequential (std::move(m)), or build it in place");
    using Stored = std::remove_cvref_t<M>;
    auto owned = std::make_unique<Stored>(std::move(module));
    Stored& stored = *owned;
    const std::size_t index = modules_.size();
    modules_.push_back(std::move(owned));
    this->register_module(std::to_string(index),
                          [index](Module<T>& self) -> Module<T>& { return *static_cast<Sequential&>(self).modules_[index]; });
    return stored;
  }

  /// Each module's forward in order, on the previous one's output.
  ad::Var<T> forward(const ad::Var<T>& x) override {
    ad::Var<T> y = x;
    for (auto& m : modules_) y = m->forward(y);
    return y;
  }
  using Module<T>::operator();

  std::size_t size() const { return modules_.size(); }
  /// The i-th module; an index out of range is a weft::Error.
  Module<T>& operator[](std::size_t i) { return checked(i, "nn::Sequential::operator[]"); }
  const Module<T>& operator[](std::size_t i) const { return checked(i, "nn::Sequential::operator[]"); }

  /// The i-th module as its own type (`seq.at<nn::Linear<>>(0).weight`); an index out of range or
  /// another type is a weft::Error.
  template <class M>
    requires std::derived_from<M, Module<T>>
  M& at(std::size_t i) {
    M* m = dynamic_cast<M*>(&checked(i, "nn::Sequential::at"));
    if (!m)
      weft::detail::fail("nn::Sequential::at", "module ", i, " is a ", detail::type_name(typeid(*modules_[i])), ", not a ",
                         detail::type_name(typeid(M)));
    return *m;
  }

 private:
  Module<T>& checked(std::size_t i, const char* op) const {
    if (i >= modules_.size())
      weft::detail::fail(op, "index ", i, " is out of range: the Sequential holds ", modules_.size(), " module(s)");
    return *modules_[i];
  }

  std::vector<std::unique_ptr<Module<T>>> modules_;
};

/// `nn::Sequential seq(nn::Linear(5, 7), ...)` takes its element type from its first module.
template <class M, class... Ms>
Sequential(M&&, Ms&&...) -> Sequential<typename std::remove_cvref_t<M>::value_type>;

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
