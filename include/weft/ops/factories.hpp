// SPDX-License-Identifier: MIT
/// @file Tensor factories: empty, zeros, ones, full, arange, rand, randn, randint, from_vector.
#pragma once

#include <cstdint>
#include <vector>

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
/// A host tensor filled by f(i) in parallel, then moved to `device`.
template <Element T, class F>
Tensor<T> generate(const Shape& shape, Device device, F f) {
  Tensor<T> host = empty<T>(shape);
  T* p = host.data();
  const std::int64_t n = shape.numel();
  WEFT_PRAGMA_OMP(omp parallel for schedule(static) if (n > 65536))
  for (std::int64_t i = 0; i < n; ++i) p[i] = f(i);
  if (device.is_cpu()) return host;
  return host.to(device);
}
}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// 0, 1, ..., n-1.
template <Element T>
Tensor<T> arange(std::int64_t n, Device device = Device::cpu()) {
  return detail::generate<T>(Shape{n}, device, [](std::int64_t i) { return T(i); });
}

/// Uniform in [0, 1); element i depends only on (seed, i), so every device gets the same values.
template <Element T>
Tensor<T> rand(const Shape& shape, std::uint64_t seed, Device device = Device::cpu()) {
  static_assert(is_floating_v<T>, "weft::rand makes floating-point tensors; use weft::randint for integers");
  return detail::generate<T>(shape, device, [seed](std::int64_t i) {
    if constexpr (std::is_same_v<T, double>) return detail::random::uniform_double(seed, std::uint64_t(i));
    else return T(detail::random::uniform_float(seed, std::uint64_t(i)));
  });
}

/// Standard normal; element i depends only on (seed, i).
template <Element T>
Tensor<T> randn(const Shape& shape, std::uint64_t seed, Device device = Device::cpu()) {
  static_assert(is_floating_v<T>, "weft::randn makes floating-point tensors");
  return detail::generate<T>(shape, device,
                             [seed](std::int64_t i) { return T(detail::random::normal_double(seed, std::uint64_t(i))); });
}

/// Uniform integers in [low, high) (bool: false/true).
template <Element T>
Tensor<T> randint(std::int64_t low, std::int64_t high, const Shape& shape, std::uint64_t seed,
                  Device device = Device::cpu()) {
  if (high <= low) detail::fail("randint", "needs low < high, got [", low, ", ", high, ")");
  return detail::generate<T>(shape, device, [=](std::int64_t i) {
    return T(detail::random::uniform_int(seed, std::uint64_t(i), low, high));
  });
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
}  // namespace weft
