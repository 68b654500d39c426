// SPDX-License-Identifier: MIT
/// @file from_blob: a TensorView over memory weft does not own (a caller's buffer), with an optional deleter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "weft/core/device.hpp"
#include "weft/core/error.hpp"
#include "weft/core/shape.hpp"
#include "weft/core/storage.hpp"
#include "weft/core/tensor_view.hpp"

namespace weft {

/// What from_blob runs on its pointer when the last handle to the elements dies.
template <class E>
using BlobDeleter = std::function<void(E*)>;

namespace detail {

/// Bytes from element (0, ..., 0) to one past the last element of a view with non-negative
/// strides: (1 + sum_d (shape[d] - 1) * strides[d]) * element_bytes; 0 without elements.
inline std::size_t spanned_bytes(const Shape& shape, const Strides& strides, std::size_t element_bytes) {
  if (shape.numel() == 0) return 0;
  std::int64_t last = 0;
  for (int d = 0; d < shape.rank(); ++d) last += (shape[d] - 1) * strides[d];
  return std::size_t(last + 1) * element_bytes;
}

/// The checks from_blob and from_dlpack share: strides of the shape's rank, no negative extent or
/// stride (weft's views never walk backwards), an address when there are elements.
inline void check_blob(const char* op, const void* data, const Shape& shape, const Strides& strides) {
  if (strides.rank() != shape.rank())
    fail(op, "strides ", strides, " do not match shape ", shape,
         " (one stride per dim, in elements; omit the strides for a contiguous row-major buffer)");
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] < 0) fail(op, "shape ", shape, " has a negative extent at dim ", d);
    if (strides[d] < 0)
      fail(op, "strides ", strides, " have a negative stride at dim ", d,
           "; weft views walk forwards only: make a copy with positive strides first");
  }
  if (!data && shape.numel() > 0) fail(op, "the pointer is null but shape ", shape, " has ", shape.numel(), " elements");
}

}  // namespace detail

/// A view of the `shape.numel()` elements at `data`, `strides[d]` ELEMENTS apart along dim d (as
/// every weft stride), on `device` (a CUDA device address for Device::cuda). weft does not own
/// the memory: it must stay valid while any handle to it lives (the view, its copies, views of
/// it, expressions that read it). `deleter(data)` runs exactly once, when the last handle dies;
/// it must not throw. Writes through the view write the caller's memory; `from_blob<const T>`
/// gives a read-only view. Bad arguments throw weft::Error, and the deleter is then not called:
/// the caller still owns the memory.
template <class E>
  requires Element<std::remove_const_t<E>>
TensorView<E> from_blob(E* data, const Shape& shape, const Strides& strides, Device device = Device::cpu(),
                        std::type_identity_t<BlobDeleter<E>> deleter = nullptr) {
  detail::check_blob("from_blob", data, shape, strides);
  void* bytes = const_cast<std::remove_const_t<E>*>(data);
  const std::size_t n = detail::spanned_bytes(shape, strides, sizeof(E));
  auto storage = deleter ? detail::borrow(bytes, n, device, [d = std::move(deleter), data](void*) { d(data); })
                         : detail::borrow(bytes, n, device, [](void*) {});
  return TensorView<E>(std::move(storage), shape, strides, 0);
}

/// A contiguous row-major view of `shape` at `data` (the strides are contiguous_strides(shape)).
template <class E>
  requires Element<std::remove_const_t<E>>
TensorView<E> from_blob(E* data, const Shape& shape, Device device = Device::cpu(),
                        std::type_identity_t<BlobDeleter<E>> deleter = nullptr) {
  return from_blob(data, shape, contiguous_strides(shape), device, std::move(deleter));
}

}  // namespace weft
