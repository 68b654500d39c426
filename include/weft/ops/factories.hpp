// SPDX-License-Identifier: MIT
/// @file Tensor factories: empty, zeros, ones, full, arange, rand, randn, randint, from_vector, and their *_like forms.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/backend/threads.hpp"
#include "weft/core/generator.hpp"
#include "weft/core/random.hpp"
#include "weft/core/tensor.hpp"
#include "weft/ops/fuse.hpp"

namespace weft {
inline namespace WEFT_BACKEND_ABI {

/// Uninitialized contiguous tensor.
template <Element T>
Tensor<T> empty(const Shape& shape, Device device = Device::cpu()) {
  for (std::int64_t e : shape)
    if (e < 0) detail::fail("empty", "negative extent in shape ", shape);
  auto storage = detail::allocate(std::size_t(shape.numel()) * sizeof(T), device);
  return Tensor<T>(detail::AdoptStorage{}, std::move(storage), shape);
}

template <Element T>
Tensor<T> full(const Shape& shape, T value, Device device = Device::cpu()) {
  Tensor<T> t = empty<T>(shape, device);
  t = math_t<T>(value);  // half/bfloat16 are not C++ numbers (Operand); their float value is exact
  return t;
}

template <Element T>
Tensor<T> zeros(const Shape& shape, Device device = Device::cpu()) {
  return full<T>(shape, T(0), device);
}

template <Element T>
Tensor<T> ones(const Shape& shape, Device device = Device::cpu()) {
  return full<T>(shape, T(1), device);
}

}  // namespace WEFT_BACKEND_ABI

namespace detail {
inline namespace WEFT_BACKEND_ABI {
/// p[i] = f(i) for i < n, on the threads of set_num_threads (each element on its own: the values do
/// not depend on the thread count). kVectorize also asks for SIMD lanes (`omp simd`: Philox's
/// integer rounds vectorize, ~3x at -O2), for an f whose value cannot depend on being vectorized;
/// not for libm calls, which -ffast-math may swap for vector versions that round otherwise, so
/// that an element's value would depend on where a thread's chunk ends.
template <bool kVectorize = true, class T, class F>
void fill_host(T* p, std::int64_t n, F f) {
  if constexpr (kVectorize) {
    WEFT_PRAGMA_OMP(omp parallel for simd schedule(static) if (n > 65536) num_threads(get_num_threads()))
    for (std::int64_t i = 0; i < n; ++i) p[i] = f(i);
  } else {
    WEFT_PRAGMA_OMP(omp parallel for schedule(static) if (n > 65536) num_threads(get_num_threads()))
    for (std::int64_t i = 0; i < n; ++i) p[i] = f(i);
  }
}

/// A tensor made on the host, on `device`: itself on the CPU, else one copy.
template <Element T>
Tensor<T> on_device(Tensor<T> host, Device device) {
  if (device.is_cpu()) return host;
  return host.to(device);
}

/// A host tensor filled by f(i) in parallel, then moved to `device`.
template <Element T, class F>
Tensor<T> generate(const Shape& shape, Device device, F f) {
  Tensor<T> host = empty<T>(shape);
  fill_host(host.data(), host.numel(), f);
  return on_device(std::move(host), device);
}

/// A draw from `gen`: element i = value(seed, counter) (or value(seed, counter, i)) with counter
/// i of the counters the draw reserves, taken once the shape and the device are known good (a
/// refused call draws nothing). Filled on the host (kVectorize: as fill_host), then copied to the
/// device: the values are the CPU's on every device.
template <Element T, bool kVectorize = true, class F>
Tensor<T> draw(const char* op, const Shape& shape, Device device, Generator& gen, F value) {
  for (std::int64_t e : shape)
    if (e < 0) fail(op, "negative extent in shape ", shape, "; every extent must be >= 0");
  check_device_compiled(op, device);
  Tensor<T> host = empty<T>(shape);
  const random::Counters c = gen.reserve(std::uint64_t(host.numel()));
  fill_host<kVectorize>(host.data(), host.numel(), [&](std::int64_t i) {
    if constexpr (std::is_invocable_v<F, std::uint64_t, std::uint64_t, std::int64_t>)
      return T(value(c.seed, c.first + std::uint64_t(i), i));
    else
      return T(value(c.seed, c.first + std::uint64_t(i)));
  });
  return on_device(std::move(host), device);
}

/// u ~ U[0, 1) as T draws it: 24 random bits for float and the 16-bit floats, 53 for double.
template <class T>
WEFT_HOST_DEVICE double uniform_of(std::uint64_t seed, std::uint64_t counter) {
  if constexpr (std::is_same_v<T, double>) return random::uniform_double(seed, counter);
  else return random::uniform_float(seed, counter);
}
}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// 0, 1, ..., n-1.
template <Element T>
Tensor<T> arange(std::int64_t n, Device device = Device::cpu()) {
  return detail::generate<T>(Shape{n}, device, [](std::int64_t i) { return T(i); });
}

// Every random factory draws from a RandomSource (core/generator.hpp): a Generator the caller
// owns, a seed (a fresh Generator(seed): element i depends only on (seed, i)), or, when omitted,
// the global generator (default_generator(), reseeded by manual_seed).

/// Uniform in [0, 1): u_i from counter i of the draw (T rounds it: 16-bit floats may give 1).
template <Element T>
Tensor<T> rand(const Shape& shape, const RandomSource& source, Device device = Device::cpu()) {
  static_assert(is_floating_v<T>, "weft::rand makes floating-point tensors; use weft::randint for integers");
  return detail::draw<T>("rand", shape, device, source.generator(),
                         [](std::uint64_t seed, std::uint64_t counter) { return detail::uniform_of<T>(seed, counter); });
}
template <Element T>
Tensor<T> rand(const Shape& shape, Device device = Device::cpu()) {
  return rand<T>(shape, RandomSource(), device);
}

/// Standard normal (Box-Muller in double, rounded to T).
template <Element T>
Tensor<T> randn(const Shape& shape, const RandomSource& source, Device device = Device::cpu()) {
  static_assert(is_floating_v<T>, "weft::randn makes floating-point tensors");
  constexpr bool kVectorize = false;  // log and cos (fill_host)
  return detail::draw<T, kVectorize>("randn", shape, device, source.generator(),
                                     [](std::uint64_t seed, std::uint64_t counter) {
                                       return detail::random::normal_double(seed, counter);
                                     });
}
template <Element T>
Tensor<T> randn(const Shape& shape, Device device = Device::cpu()) {
  return randn<T>(shape, RandomSource(), device);
}

/// Uniform integers in [low, high) (bool: false/true).
template <Element T>
Tensor<T> randint(std::int64_t low, std::int64_t high, const Shape& shape, const RandomSource& source,
                  Device device = Device::cpu()) {
  if (high <= low) detail::fail("randint", "needs low < high, got [", low, ", ", high, ")");
  return detail::draw<T>("randint", shape, device, source.generator(), [=](std::uint64_t seed, std::uint64_t counter) {
    return detail::random::uniform_int(seed, counter, low, high);
  });
}
template <Element T>
Tensor<T> randint(std::int64_t low, std::int64_t high, const Shape& shape, Device device = Device::cpu()) {
  return randint<T>(low, high, shape, RandomSource(), device);
}

/// A tensor holding `values` (row-major) with `shape` (default: 1-D).
template <Element T>
Tensor<T> from_vector(const std::vector<T>& values, Shape shape, Device device = Device::cpu()) {
  if (shape.numel() != std::int64_t(values.size()))
    detail::fail("from_vector", values.size(), " values do not fill shape ", shape);
  return detail::generate<T>(shape, device, [&values](std::int64_t i) { return T(values[std::size_t(i)]); });
}
template <Element T>
Tensor<T> from_vector(const std::vector<T>& values, Device device = Device::cpu()) {
  return from_vector(values, Shape{std::int64_t(values.size())}, device);
}

}  // namespace WEFT_BACKEND_ABI

// The *_like factories (torch's): a new contiguous tensor of x's shape on x's device, of x's dtype
// or of U when given (zeros_like<double>(t)). x is a Tensor or a TensorView; an expression is
// refused: it has no elements of its own to be like, its shape exists only once its operands'
// broadcast is checked, and `zeros_like(a * b)` would not say whether a * b is evaluated
// (use one of its tensors, or eval it).
namespace detail {
template <class U, SingleTensor X>
using like_dtype_t = std::conditional_t<std::is_void_v<U>, std::remove_const_t<typename X::value_type>, U>;

/// true for a Tensor or TensorView; anything else stops the compile here, with one message.
template <class X>
constexpr bool like_operand() {
  static_assert(SingleTensor<X>, "weft::*_like takes a Tensor or a TensorView; evaluate an expression first");
  return SingleTensor<X>;
}
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// Uninitialized, like x.
template <class U = void, class X>
auto empty_like(const X& x) {
  if constexpr (detail::like_operand<X>()) {
    return empty<detail::like_dtype_t<U, X>>(x.shape(), x.device());
  }
}
/// Zeros like x.
template <class U = void, class X>
auto zeros_like(const X& x) {
  if constexpr (detail::like_operand<X>()) {
    return zeros<detail::like_dtype_t<U, X>>(x.shape(), x.device());
  }
}
/// Ones like x.
template <class U = void, class X>
auto ones_like(const X& x) {
  if constexpr (detail::like_operand<X>()) {
    return ones<detail::like_dtype_t<U, X>>(x.shape(), x.device());
  }
}
/// Every element `value` (converted to the dtype), like x.
template <class U = void, class X, class V>
auto full_like(const X& x, const V& value) {
  if constexpr (detail::like_operand<X>()) {
    using R = detail::like_dtype_t<U, X>;
    static_assert(Number<V> || std::is_same_v<V, R>, "weft::full_like: the value is a number or of the result's dtype");
    return full<R>(x.shape(), R(value), x.device());
  }
}
/// rand<T>(x.shape(), source, x.device()): uniform in [0, 1) like x.
template <class U = void, class X>
auto rand_like(const X& x, const RandomSource& source = {}) {
  if constexpr (detail::like_operand<X>()) {
    return rand<detail::like_dtype_t<U, X>>(x.shape(), source, x.device());
  }
}
/// randn<T>(x.shape(), source, x.device()): standard normal like x.
template <class U = void, class X>
auto randn_like(const X& x, const RandomSource& source = {}) {
  if constexpr (detail::like_operand<X>()) {
    return randn<detail::like_dtype_t<U, X>>(x.shape(), source, x.device());
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
