// SPDX-License-Identifier: MIT
/// @file TensorBytes: a tensor's elements as contiguous little-endian host bytes with their dtype and shape, what the file writers take.
#pragma once

#include <bit>
#include <cstddef>
#include <memory>
#include <string_view>

#include "weft/core/dtype.hpp"
#include "weft/core/shape.hpp"
#include "weft/core/storage.hpp"
#include "weft/core/tensor.hpp"
#include "weft/ops/fuse.hpp"

namespace weft::io {

// The file formats store little-endian elements, which weft's are on every host it builds for.
static_assert(std::endian::native == std::endian::little, "weft::io reads and writes little-endian hosts only");

/// The elements of a tensor or view of any dtype, row-major and contiguous on the host: the
/// tensor's own storage when it already is (no copy), else a contiguous host copy that this
/// object keeps. Type-erased, so that one writer serves every dtype.
class TensorBytes {
 public:
  /// WEFT_ABI_INLINE: it reaches the backend (the copy of a view), and nvcc and host files both
  /// compile it (core/config.hpp, ODR safety).
  template <Element T>
  WEFT_ABI_INLINE TensorBytes(const TensorBase<T>& t) : dtype_(dtype_of<T>), shape_(t.shape()) {  // NOLINT: implicit, as a view
    if (!t.defined()) weft::detail::fail("io", "cannot write an undefined tensor (one that has no elements)");
    if (t.device().is_cpu() && t.is_contiguous()) {
      keep_ = t.storage();
      data_ = t.data();
    } else {
      Tensor<T> host = t.to(Device::cpu());  // contiguous copy (a device copy needs nvcc)
      keep_ = host.storage();
      data_ = host.data();
    }
    size_ = std::size_t(t.numel()) * sizeof(T);
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  DType dtype_;
  Shape shape_;
  std::shared_ptr<Storage> keep_;
  const void* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Bytes of one element of dtype d.
constexpr std::size_t element_size(DType d) {
  switch (d) {
    case DType::bool_:
    case DType::uint8:
    case DType::int8: return 1;
    case DType::int16:
    case DType::float16:
    case DType::bfloat16: return 2;
    case DType::int32:
    case DType::float32: return 4;
    case DType::int64:
    case DType::float64: return 8;
  }
  return 0;
}

}  // namespace weft::io
