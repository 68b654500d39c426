// SPDX-License-Identifier: MIT
/// @file The methods of tensors and expressions: TensorMethods (those that mirror weft's free functions, `t.sum(1)` is `sum(t, 1)`: a base of TensorBase and of every expression node) and InPlaceMethods (fill_, zero_, normal_, uniform_ of Tensor and TensorView).
///
/// Each method calls its free function and returns exactly what that returns (a Tensor, or a lazy
/// expression node). The ops live in layers above core (ops/, expr/), which core cannot include:
/// a method names its op through a helper of `detail::methods` whose body calls the op
/// unqualified, so that argument-dependent lookup finds it where the method is used, in namespace
/// weft (or an operand's own namespace: `weights.matmul(v)` on a lazy softmax finds nn's
/// attention overload as `matmul(weights, v)` does). The op's header must be included there;
/// <weft/weft.hpp> includes them all. Nothing here includes or instantiates an op before a method
/// is called, so core stays as cheap to compile as before.
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/core/config.hpp"
#include "weft/core/error.hpp"

namespace weft {

/// The dims a reduction runs over (ops/reduce.hpp): one dim, a braced list or a std::vector.
class DimList;
/// Where a random op draws from (core/generator.hpp): the global generator, a Generator or a seed.
class RandomSource;

// Every op a method forwards to, as X(name).
#define WEFT_UNARY_METHOD_OPS(X)                                                                                     \
  X(exp) X(log) X(log1p) X(expm1) X(sqrt) X(rsqrt) X(abs) X(sin) X(cos) X(tanh) X(sigmoid) X(relu) X(gelu) X(silu) \
      X(erf) X(square) X(reciprocal) X(sign) X(floor) X(ceil) X(trunc) X(round) X(isnan) X(isinf) X(isfinite)       \
          X(logical_not)
#define WEFT_BINARY_METHOD_OPS(X) \
  X(pow) X(maximum) X(minimum) X(fmod) X(remainder) X(logical_and) X(logical_or) X(logical_xor) X(matmul)
#define WEFT_REDUCTION_METHOD_OPS(X) X(sum) X(mean) X(prod) X(max) X(min) X(amax) X(amin) X(all) X(any)
#define WEFT_WRITING_METHOD_OPS(X) X(normal_) X(uniform_)
#define WEFT_OTHER_METHOD_OPS(X) \
  X(norm) X(var) X(std) X(logsumexp) X(argmax) X(argmin) X(softmax) X(log_softmax) X(cumsum) X(clamp)

namespace detail {
inline namespace WEFT_BACKEND_ABI {
namespace methods {

// call_name(x, args...) = name(x, args...), found by argument-dependent lookup where a method is
// instantiated. The deleted name() stops ordinary lookup in this namespace, so that it finds no
// other declaration of that name that happened to come first (the ranges library's "poison pill").
#define WEFT_METHOD_CALL(name)                \
  void name() = delete;                       \
  template <class... Args>                    \
  auto call_##name(const Args&... args) {     \
    return name(args...);                     \
  }
WEFT_UNARY_METHOD_OPS(WEFT_METHOD_CALL)
WEFT_BINARY_METHOD_OPS(WEFT_METHOD_CALL)
WEFT_REDUCTION_METHOD_OPS(WEFT_METHOD_CALL)
WEFT_OTHER_METHOD_OPS(WEFT_METHOD_CALL)
#undef WEFT_METHOD_CALL

// The same for the ops that write their tensor (Tensor and TensorView call them on themselves):
// `self` is passed as the writable lvalue it is, and the op's reference to it returned.
#define WEFT_WRITING_METHOD_CALL(name)                               \
  void name() = delete;                                              \
  template <class Self, class... Args>                               \
  decltype(auto) call_##name(Self& self, const Args&... args) {      \
    return name(self, args...);                                      \
  }
WEFT_WRITING_METHOD_OPS(WEFT_WRITING_METHOD_CALL)
#undef WEFT_WRITING_METHOD_CALL

}  // namespace methods
}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

/// The methods of tensors, views and expressions that mirror free functions: `x.name(args...)` is
/// the same as `name(x, args...)` (same value, same type: lazy where the function is lazy).
/// Derived is the class that inherits them (TensorBase<T>, or an expression node).
template <class Derived>
class TensorMethods {
 public:
  // ---- pointwise: lazy expressions ----------------------------------------------------------
#define WEFT_UNARY_METHOD(name) \
  WEFT_ABI_INLINE auto name() const { return detail::methods::call_##name(derived()); }
  WEFT_UNARY_METHOD_OPS(WEFT_UNARY_METHOD)
#undef WEFT_UNARY_METHOD
  /// pow(x, e), maximum(x, o), ..., and matmul(x, b): the other operand a tensor, expression or
  /// number.
#define WEFT_BINARY_METHOD(name) \
  template <class Other>         \
  WEFT_ABI_INLINE auto name(const Other& other) const { return detail::methods::call_##name(derived(), other); }
  WEFT_BINARY_METHOD_OPS(WEFT_BINARY_METHOD)
#undef WEFT_BINARY_METHOD
  template <class Lo, class Hi>
  WEFT_ABI_INLINE auto clamp(const Lo& lo, const Hi& hi) const {
    return detail::methods::call_clamp(derived(), lo, hi);
  }

  // ---- reductions: over everything (a 0-dim Tensor), or over dims (lazy where the function is) -
#define WEFT_REDUCTION_METHOD(name)                                                    \
  WEFT_ABI_INLINE auto name() const { return detail::methods::call_##name(derived()); } \
  WEFT_ABI_INLINE auto name(const DimList& dim, bool keepdim = false) const {           \
    return detail::methods::call_##name(derived(), dim, keepdim);                       \
  }
  WEFT_REDUCTION_METHOD_OPS(WEFT_REDUCTION_METHOD)
#undef WEFT_REDUCTION_METHOD
  WEFT_ABI_INLINE auto norm(double p = 2) const { return detail::methods::call_norm(derived(), p); }
  WEFT_ABI_INLINE auto norm(double p, const DimList& dim, bool keepdim = false) const {
    return detail::methods::call_norm(derived(), p, dim, keepdim);
  }
  WEFT_ABI_INLINE auto var() const { return detail::methods::call_var(derived()); }
  WEFT_ABI_INLINE auto var(const DimList& dim, double correction = 1, bool keepdim = false) const {
    return detail::methods::call_var(derived(), dim, correction, keepdim);
  }
  WEFT_ABI_INLINE auto std() const { return detail::methods::call_std(derived()); }
  WEFT_ABI_INLINE auto std(const DimList& dim, double correction = 1, bool keepdim = false) const {
    return detail::methods::call_std(derived(), dim, correction, keepdim);
  }
  WEFT_ABI_INLINE auto logsumexp(const DimList& dim, bool keepdim = false) const {
    return detail::methods::call_logsumexp(derived(), dim, keepdim);
  }
  WEFT_ABI_INLINE auto argmax() const { return detail::methods::call_argmax(derived()); }
  WEFT_ABI_INLINE auto argmax(std::int64_t dim, bool keepdim = false) const {
    return detail::methods::call_argmax(derived(), dim, keepdim);
  }
  WEFT_ABI_INLINE auto argmin() const { return detail::methods::call_argmin(derived()); }
  WEFT_ABI_INLINE auto argmin(std::int64_t dim, bool keepdim = false) const {
    return detail::methods::call_argmin(derived(), dim, keepdim);
  }

  // ---- along one dim -----------------------------------------------------------------------
  WEFT_ABI_INLINE auto softmax(std::int64_t dim) const { return detail::methods::call_softmax(derived(), dim); }
  WEFT_ABI_INLINE auto log_softmax(std::int64_t dim) const { return detail::methods::call_log_softmax(derived(), dim); }
  WEFT_ABI_INLINE auto cumsum(std::int64_t dim) const { return detail::methods::call_cumsum(derived(), dim); }

 private:
  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

namespace detail {
/// The number 0 as a tensor of T can be assigned it (false for bool: no integer casts to bool).
template <class T>
constexpr auto zero_number() {
  if constexpr (std::is_same_v<T, bool>) return false;
  else return 0;
}
}  // namespace detail

/// The methods that write a Tensor's or a TensorView's elements in place and return it (torch's
/// trailing underscore). Derived is Tensor<T> or TensorView<E>; a read-only view refuses them at
/// compile time, as it refuses `view = value`.
template <class Derived>
class InPlaceMethods {
 public:
  /// Every element `value` (a number): the same as `t = value`, on a defined tensor or view.
  template <class V>
    requires std::is_arithmetic_v<V>
  WEFT_ABI_INLINE Derived& fill_(V value) {
    if (!derived().defined())
      detail::fail("fill_", "the tensor is undefined (default-constructed); give it a shape first");
    return derived() = value;
  }
  /// Every element 0 (false for bool).
  WEFT_ABI_INLINE Derived& zero_() { return fill_(detail::zero_number<typename Derived::value_type>()); }
  /// Random elements in place: the same as weft::normal_(t, mean, std[, source]) and
  /// weft::uniform_(t, from, to[, source]) (ops/random.hpp; without a source, the global
  /// generator). RandomSource is only declared here: no default argument can construct it.
  WEFT_ABI_INLINE Derived& normal_(double mean = 0, double std = 1) {
    return detail::methods::call_normal_(derived(), mean, std);
  }
  WEFT_ABI_INLINE Derived& normal_(double mean, double std, const RandomSource& source) {
    return detail::methods::call_normal_(derived(), mean, std, source);
  }
  WEFT_ABI_INLINE Derived& uniform_(double from = 0, double to = 1) {
    return detail::methods::call_uniform_(derived(), from, to);
  }
  WEFT_ABI_INLINE Derived& uniform_(double from, double to, const RandomSource& source) {
    return detail::methods::call_uniform_(derived(), from, to, source);
  }

 private:
  Derived& derived() { return static_cast<Derived&>(*this); }
};

#undef WEFT_UNARY_METHOD_OPS
#undef WEFT_BINARY_METHOD_OPS
#undef WEFT_REDUCTION_METHOD_OPS
#undef WEFT_WRITING_METHOD_OPS
#undef WEFT_OTHER_METHOD_OPS

}  // namespace weft
