// SPDX-License-Identifier: MIT
/// @file matmul with PyTorch's semantics: 1-D operands promote, batch dims broadcast; the product is an expression node whose GEMM (and whether a pointwise epilogue runs on its blocks) backend/gemm.hpp chooses.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "weft/backend/gemm.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/materialize.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/expr/dense.hpp"

namespace weft {
namespace detail {

/// torch.matmul's shape rules: a 1-D a is a row (1, k) and a 1-D b a column
/// (k, 1), and the added dim is dropped from the result; dims before the last
/// two are batch dims and broadcast.
inline MatmulShapes matmul_shapes(const Shape& a, const Shape& b) {
  const char* op = "matmul";
  if (a.rank() == 0 || b.rank() == 0)
    fail(op, "both operands need at least 1 dim, got shapes ", a, " and ", b,
         "; multiply by a number with * instead");
  MatmulShapes s;
  const int ra = a.rank(), rb = b.rank();
  s.n = ra == 1 ? 1 : a[ra - 2];
  s.k = a[ra - 1];
  const std::int64_t kb = rb == 1 ? b[0] : b[rb - 2];
  s.m = rb == 1 ? 1 : b[rb - 1];
  if (s.k != kb)
    fail(op, "shapes ", a, " and ", b, " cannot be multiplied: a's last dim (", s.k, ") must equal b's ",
         rb == 1 ? "only" : "second-to-last", " dim (", kb, ")");
  Shape ba(a.begin(), a.end() - std::min(ra, 2)), bb(b.begin(), b.end() - std::min(rb, 2));
  if (!broadcast_into(s.batch, ba) || !broadcast_into(s.batch, bb))
    fail_broadcast(op, {ba, bb}, cat("the batch dims (all but the last two) of a ", a, " and b ", b, ","));
  s.out = s.batch;
  if (ra > 1) s.out.push_back(s.n);
  if (rb > 1) s.out.push_back(s.m);
  return s;
}

inline namespace WEFT_BACKEND_ABI {

/// matmul's checks of its operands (defined, one device, shapes that multiply, what cuBLAS
/// takes); returns the product's shapes.
template <class T>
MatmulShapes checked_matmul_shapes(const TensorView<const T>& a, const TensorView<const T>& b) {
  const char* op = "matmul";
  if (!a.defined() || !b.defined()) fail(op, "an operand is an empty (default-constructed) tensor");
  if (a.device() != b.device())
    fail(op, "a (shape ", a.shape(), ") is on ", a.device(), " but b (shape ", b.shape(), ") is on ", b.device(),
         "; move them to one device with .to(device)");
  const MatmulShapes s = matmul_shapes(a.shape(), b.shape());
  const Device device = a.device();
  check_device_compiled(op, device);
  if (device.is_cuda() && !is_floating_v<T>)
    fail(op, "integer matmul (", dtype_name<T>(), ", shapes ", a.shape(), " and ", b.shape(),
         ") is not supported on CUDA: cuBLAS has no integer GEMM; cast to a floating dtype or compute on the CPU");
  if (device.is_cuda() &&
      (s.n > INT_MAX || s.k > INT_MAX || s.m > INT_MAX || s.batch.numel() > INT_MAX || s.n * s.m > LLONG_MAX / 2))
    fail(op, "shapes ", a.shape(), " and ", b.shape(), " exceed cuBLAS's 32-bit matrix sizes; split the product");
  return s;
}

/// The product, into `into` where given (contiguous, of the product's shape, on the operands'
/// device, overlapping neither: the caller checks) and then an empty tensor is returned, else
/// into a new tensor.
template <class T>
Tensor<T> matmul_impl(const TensorView<const T>& a, const TensorView<const T>& b,
                      std::optional<TensorView<T>> into = std::nullopt) {
  const MatmulShapes s = checked_matmul_shapes(a, b);
  const Device device = a.device();
  Tensor<T> out = into ? Tensor<T>() : empty<T>(s.out, device);
  const TensorView<T> dst = into ? *into : out.view();
  if (s.out.numel() == 0) return out;
  if (s.k == 0) {  // an empty sum: all zeros
    const T zero{};
    fill_bytes(dst.data(), device, &zero, sizeof(T), std::size_t(s.out.numel()));
    return out;
  }
  run_matmul(a, b, s, dst);
  return out;
}

/// The shape of an operand node: a leaf's view's, a dense node's, the broadcast of a pointwise
/// expression's leaves and dense nodes (their shape() runs no product).
template <class X>
Shape operand_shape(const X& x) {
  if constexpr (is_instance_v<X, Leaf>) {
    if (!x.tensor.defined()) fail("matmul", "an operand is an empty (default-constructed) tensor");
    return x.tensor.shape();
  } else if constexpr (DenseNode<X>) {
    return x.shape();
  } else {
    Shape shape;
    bool ok = true;
    visit_nodes(x, [&](const auto& n) {
      if constexpr (DenseNode<std::remove_cvref_t<decltype(n)>>) ok = ok && broadcast_into(shape, n.shape());
      else if constexpr (requires { n.tensor.shape(); }) ok = ok && broadcast_into(shape, n.tensor.shape());
    });
    return ok ? shape : materialize(x).shape();  // eval's checks name the shapes that do not broadcast
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

// In the backend ABI namespace: its members run the backend (host and nvcc translation units
// compile them differently), so each kind of file has a Matmul type of its own
// (docs/architecture.md, "ODR safety").
inline namespace WEFT_BACKEND_ABI {

/// matmul(a, b) as an expression node (weft::matmul builds it): A and B are expression nodes of
/// one dtype (leaves, or pointwise expressions: those are evaluated once, when the node runs).
/// Assigned alone it is one GEMM; inside a pointwise expression (`gelu(matmul(x, w) + b)`) the CPU
/// runs float and double statements as the GEMM's epilogue, on each output block as it completes
/// (backend/dense_statements.hpp), and everything else evaluates the product first.
template <class A, class B>
struct Matmul : Expr<Matmul<A, B>> {
  static_assert(std::is_same_v<typename A::value_type, typename B::value_type>,
                "weft::matmul: both operands need the same dtype; cast one with weft::cast<T>(x)");
  static_assert(!std::is_same_v<typename A::value_type, bool>,
                "weft::matmul: bool tensors cannot be multiplied; cast to a number type");
  using value_type = typename A::value_type;
  using children = detail::TypeList<>;  // one operand to pointwise kernels (expr/dense.hpp)
  static constexpr bool kDense = true;
  A a;
  B b;

  const char* op_name() const { return "matmul"; }
  /// The product's shape; a weft::Error for operands that cannot be multiplied.
  Shape shape() const { return detail::matmul_shapes(detail::operand_shape(a), detail::operand_shape(b)).out; }
  /// The product as a new tensor.
  Tensor<value_type> evaluate() const {
    return detail::matmul_impl<value_type>(detail::materialize(a), detail::materialize(b));
  }
  /// The product written into `out` (a contiguous view of its shape); false, with nothing
  /// written, where `out` is on another device or overlaps an operand (the caller then copies
  /// the product in).
  bool evaluate_into(const TensorView<value_type>& out) const {
    const TensorView<const value_type> va = detail::materialize(a), vb = detail::materialize(b);
    const detail::ByteRange range = detail::byte_range(detail::tensor_ref(out));
    if (va.device() != out.device() || detail::overlaps(detail::byte_range(detail::tensor_ref(va)), range) ||
        detail::overlaps(detail::byte_range(detail::tensor_ref(vb)), range))
      return false;
    detail::matmul_impl<value_type>(va, vb, out);
    return true;
  }
  /// The product as finished blocks for an epilogue where the backend runs it so
  /// (backend/gemm.hpp: gemm_epilogue_blocks: the CPU, float and double where the FMA GEMM pays,
  /// bfloat16 on the native GEMM); empty elsewhere (other dtypes have no epilogue_blocks, so no
  /// epilogue is instantiated). Evaluates operand expressions, checks.
  std::optional<detail::MatmulBlocks<value_type>> epilogue_blocks() const
    requires(std::is_same_v<value_type, float> || std::is_same_v<value_type, double> ||
             std::is_same_v<value_type, bfloat16>)
  {
    const TensorView<const value_type> va = detail::materialize(a), vb = detail::materialize(b);
    return detail::gemm_epilogue_blocks(va, vb, detail::checked_matmul_shapes(va, vb));
  }
};

/// torch.matmul: (…, n, k) x (…, k, m) -> (…, n, m) with broadcast batch dims;
/// a 1-D operand is a row (first) or a column (second) and its dim is dropped
/// (1-D x 1-D is a dot product, a rank-0 tensor). Both operands have one
/// dtype (not bool); 16-bit floats multiply in float and round once. CPU:
/// Eigen's GEMM; bfloat16 in a build for AMX-BF16 where the OS permits it:
/// AMX tiles (cpu/gemm/amx.hpp: the same math, except that denormals read and
/// sum to zero), in an aarch64 build with FEAT_BF16: BFMMLA (cpu/gemm/bfmmla.hpp:
/// also denormals to zero, and sums rounded to odd); CUDA: cuBLAS (floating dtypes only).
/// Returns an expression node (weft::Matmul): nothing runs until it is assigned or evaluated, and
/// a pointwise expression around it can run as the GEMM's epilogue. Operand expressions are
/// evaluated once, when it runs.
template <Operand A, Operand B>
  requires HasTensorOperand<A> && HasTensorOperand<B>
Matmul<detail::expr_t<A>, detail::expr_t<B>> matmul(const A& a, const B& b) {
  return {{}, detail::as_expr(a), detail::as_expr(b)};
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
