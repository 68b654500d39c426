// SPDX-License-Identifier: MIT
/// @file Eigen: as_eigen maps a 1-D or 2-D host view as an Eigen::Map, from_eigen views an Eigen matrix's elements (no copies).
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <type_traits>

#include "weft/core/error.hpp"
#include "weft/core/from_blob.hpp"
#include "weft/core/tensor.hpp"

namespace weft {

/// The Eigen::Map as_eigen<Rank> returns for a view of element type E (`const T` maps read-only):
/// a column vector for Rank 1, a row-major matrix for Rank 2; strides are kept at run time.
template <class E, int Rank>
using EigenMap = Eigen::Map<
    std::conditional_t<std::is_const_v<E>,
                       const Eigen::Matrix<std::remove_const_t<E>, Eigen::Dynamic, Rank == 1 ? 1 : Eigen::Dynamic,
                                           Rank == 1 ? Eigen::ColMajor : Eigen::RowMajor>,
                       Eigen::Matrix<E, Eigen::Dynamic, Rank == 1 ? 1 : Eigen::Dynamic,
                                     Rank == 1 ? Eigen::ColMajor : Eigen::RowMajor>>,
    Eigen::Unaligned, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

/// The elements of a host view as an Eigen::Map (no copy): `as_eigen<1>(v)` maps a 1-D view as a
/// column vector, `as_eigen(v)` (Rank 2) a 2-D view as a row-major matrix whose outer stride is
/// v.strides()[0] and inner stride v.strides()[1]. Writes through the Map write the view's
/// elements; a TensorView<const T> (or a const Tensor) maps read-only. The Map does not keep the
/// elements alive: their owner (a tensor, or a view) must outlive it. half and bfloat16 have no
/// Eigen arithmetic here: map a float copy (`cast<float>(x)`).
template <int Rank = 2, class E>
EigenMap<E, Rank> as_eigen(const TensorView<E>& v) {
  static_assert(Rank == 1 || Rank == 2, "weft::as_eigen: Rank is 1 (a column vector) or 2 (a row-major matrix)");
  static_assert(std::is_arithmetic_v<std::remove_const_t<E>>,
                "weft::as_eigen: Eigen has no arithmetic for weft::half / weft::bfloat16; map a float copy "
                "(Tensor<float> f = cast<float>(x);)");
  if (!v.defined()) detail::fail("as_eigen", "the view is undefined");
  if (!v.device().is_cpu())
    detail::fail("as_eigen", "the view is on ", v.device(), "; Eigen maps host memory: use .to(Device::cpu()) first");
  if (v.dim() != Rank)
    detail::fail("as_eigen", "as_eigen<", Rank, "> needs a ", Rank, "-D view, got shape ", v.shape(),
                 "; as_eigen<1> maps 1-D views, as_eigen<2> (the default) 2-D ones; reshape or select first");
  using Stride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
  if constexpr (Rank == 1) {
    const std::int64_t n = v.shape()[0], inner = v.strides()[0];
    return EigenMap<E, 1>(v.data(), n, 1, Stride(n * inner, inner));
  } else {
    return EigenMap<E, 2>(v.data(), v.shape()[0], v.shape()[1], Stride(v.strides()[0], v.strides()[1]));
  }
}
template <int Rank = 2, Element T>
EigenMap<T, Rank> as_eigen(Tensor<T>& t) {
  return as_eigen<Rank>(t.view());
}
template <int Rank = 2, Element T>
EigenMap<const T, Rank> as_eigen(const Tensor<T>& t) {
  return as_eigen<Rank>(t.view());
}
template <int Rank = 2, Element T>
EigenMap<T, Rank> as_eigen(Tensor<T>&& t) {
  static_assert(Rank == 0, "weft::as_eigen: the Map would outlive a temporary tensor's elements, which die at the "
                           "end of the statement; name the tensor first");
  return as_eigen<Rank>(t.view());
}

/// A view of an Eigen matrix's (or Map's, Block's, Ref's) elements, no copy: a compile-time
/// vector gives a 1-D view, anything else a 2-D view [rows, cols] with the matrix's strides
/// (column-major storage gives strides [1, outer stride]: a transposed layout, read and written
/// in place). Read-only for a const matrix. The view does NOT keep the matrix alive: the matrix
/// must outlive the view and every handle to it, and must not be resized meanwhile; a temporary
/// matrix is rejected at compile time.
template <class X>
auto from_eigen(X&& m) {
  using M = std::remove_cvref_t<X>;
  static_assert(std::is_lvalue_reference_v<X> || !std::is_base_of_v<Eigen::PlainObjectBase<M>, M>,
                "weft::from_eigen: the view does not own the elements, and a temporary matrix's die at the end "
                "of the statement; name the matrix (an lvalue) that outlives the view");
  constexpr bool direct = bool(M::Flags & Eigen::DirectAccessBit);
  static_assert(direct, "weft::from_eigen: needs an Eigen object with direct memory access (a Matrix, Array, Map, "
                        "Block or Ref), not an expression; evaluate it into a matrix first");
  static_assert(Element<typename M::Scalar>,
                "weft::from_eigen: the scalar type is not a weft dtype (float, double, int8_t, uint8_t, int16_t, "
                "int32_t, int64_t, bool)");
  if constexpr (!direct || !Element<typename M::Scalar>) {
    return;  // the static_asserts above said why
  } else {
    using E = std::remove_pointer_t<decltype(m.data())>;
    const std::int64_t inner = m.innerStride(), outer = m.outerStride();
    if constexpr (M::IsVectorAtCompileTime) {
      return from_blob<E>(m.data(), Shape{std::int64_t(m.size())}, Strides{inner});
    } else {
      const Strides strides = M::IsRowMajor ? Strides{outer, inner} : Strides{inner, outer};
      return from_blob<E>(m.data(), Shape{std::int64_t(m.rows()), std::int64_t(m.cols())}, strides);
    }
  }
}

}  // namespace weft
