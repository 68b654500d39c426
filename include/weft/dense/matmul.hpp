// SPDX-License-Identifier: MIT
/// @file matmul with PyTorch's semantics: 1-D operands promote, batch dims broadcast; Eigen GEMM (bfloat16: AMX tiles or Arm BFMMLA where built for them and permitted) on the CPU, cuBLAS on CUDA.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "weft/backend/cpu/gemm.hpp"
#include "weft/backend/cpu/gemm_bf16.hpp"
#include "weft/backend/cpu/gemm_fma.hpp"
#include "weft/dense/factories.hpp"
#include "weft/dense/operand.hpp"
#include "weft/dense/fuse.hpp"
#include "weft/expr/dense.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/gemm.cuh"
#endif

namespace weft {
namespace detail {

/// The shapes of one matmul: C (batch..., n, m) = A (batch..., n, k) B (batch..., k, m).
struct MatmulShapes {
  Shape batch;
  std::int64_t n = 1, k = 1, m = 1;
  Shape out;
};

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

/// An operand as a batch of matrices: `view` has shape (batch..., rows, cols) (expanded, so
/// broadcast batch dims have stride 0), row-major with rows `ld` elements apart (ld >= cols), or,
/// with col_major, column-major with columns ld apart (ld >= rows): a transposed view, as the
/// backward of a linear layer passes, is read in place (both GEMMs take either order). Other
/// layouts (a broadcast row, a slice with both strides > 1) are copied into a contiguous tensor.
template <class T>
struct MatrixOperand {
  TensorView<const T> view;
  std::int64_t ld = 1;
  Strides batch_strides;
  bool col_major = false;
};

inline namespace WEFT_BACKEND_ABI {  // matrix_operand copies (contiguous)

/// `allow_col_major`: whether the GEMM that follows reads column-major operands (the packed
/// bfloat16 GEMMs read rows only).
template <class T>
MatrixOperand<T> matrix_operand(const TensorView<const T>& x, bool vector_is_row, const Shape& batch,
                                std::int64_t rows, std::int64_t cols, bool allow_col_major) {
  const TensorView<const T> matrix = x.dim() != 1 ? x : vector_is_row ? x.unsqueeze(0) : x.unsqueeze(1);
  const std::int64_t rs = matrix.strides()[matrix.dim() - 2], cs = matrix.strides()[matrix.dim() - 1];
  const bool row_major = (cols == 1 || cs == 1) && (rows == 1 || rs >= cols);
  const bool col_major = !row_major && allow_col_major && (rows == 1 || rs == 1) && (cols == 1 || cs >= rows);
  Shape target = batch;
  target.push_back(rows);
  target.push_back(cols);
  const TensorView<const T> view = (row_major || col_major ? matrix : matrix.contiguous()).expand(target);
  const std::int64_t ld = col_major ? (cols == 1 ? std::max<std::int64_t>(rows, 1) : view.strides()[view.dim() - 1])
                          : rows == 1 ? std::max<std::int64_t>(cols, 1)
                                      : view.strides()[view.dim() - 2];
  return MatrixOperand<T>{view, ld, Shape(view.strides().begin(), view.strides().end() - 2), col_major};
}

/// The single stride that steps every batch index of `batch` (true), or false
/// when the batch dims do not form one arithmetic progression.
inline bool uniform_batch_stride(const Shape& batch, const Strides& strides, std::int64_t& stride) {
  stride = 0;
  std::int64_t span = 0;  // batch indices covered by the dims seen so far (innermost first)
  for (int d = batch.rank() - 1; d >= 0; --d) {
    if (batch[d] == 1) continue;
    if (span == 0) stride = strides[d], span = batch[d];
    else if (strides[d] != stride * span) return false;
    else span *= batch[d];
  }
  return true;
}

/// Whether CPU matmul of T runs a native bfloat16 GEMM (cpu::gemm_bf16_batched: AMX tiles where
/// built for them and permitted by the OS, AVX512-BF16 vdpbf16ps or Arm BFMMLA where built for
/// them; see gemm_bf16.hpp),
/// else 16-bit floats multiply in float.
template <class T>
bool matmul_bf16_native() {
#if !defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, bfloat16>) return cpu::bf16_gemm_native();
#endif
  return false;
}

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
#if !defined(__CUDACC__)
  if (device.is_cuda()) fail_no_cuda(op);
#endif
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

  if constexpr (is_16bit_float_v<T>) {
    // Eigen has no 16-bit GEMM kernels: multiply in float, round once.
    if (device.is_cpu() && !matmul_bf16_native<T>()) {
      Tensor<float> c = matmul_impl<float>(eval(cast<float>(a)), eval(cast<float>(b)));
      if (!into) return eval(cast<T>(c));
      *into = cast<T>(c);
      return {};
    }
  }

  Tensor<T> out = into ? Tensor<T>() : empty<T>(s.out, device);
  T* const out_data = into ? into->data() : out.data();
  if (s.out.numel() == 0) return out;
  if (s.k == 0) {  // an empty sum: all zeros
    const T zero{};
    fill_bytes(out_data, device, &zero, sizeof(T), std::size_t(s.out.numel()));
    return out;
  }
  const bool rows_only = device.is_cpu() && is_16bit_float_v<T>;  // the packed bfloat16 GEMMs
  const MatrixOperand<T> ma = matrix_operand(a, true, s.batch, s.n, s.k, !rows_only);
  const MatrixOperand<T> mb = matrix_operand(b, false, s.batch, s.k, s.m, !rows_only);
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
#if WEFT_GEMM_BF16_NATIVE
    if constexpr (std::is_same_v<T, bfloat16>) {  // exact products, fp32 sums, one rounding
      cpu::gemm_bf16_batched(ma.view.data(), ma.ld, ma.batch_strides, mb.view.data(), mb.ld, mb.batch_strides,
                             out_data, s.batch, s.n, s.k, s.m);
    }
#endif
    if constexpr (!is_16bit_float_v<T>) {
      cpu::gemm_batched(ma.view.data(), ma.ld, ma.batch_strides, mb.view.data(), mb.ld, mb.batch_strides, out_data,
                        s.batch, s.n, s.k, s.m, ma.col_major, mb.col_major);
    }
#endif
  } else {
#if defined(__CUDACC__)
    if constexpr (is_floating_v<T>) {
      // cuBLAS steps each operand through the batch with one stride; other
      // broadcast patterns are copied into a contiguous batch first.
      auto flatten = [&](const MatrixOperand<T>& mo, std::int64_t rows, std::int64_t cols, std::int64_t& stride) {
        if (uniform_batch_stride(s.batch, mo.batch_strides, stride)) return mo;
        Tensor<T> dense(mo.view);  // writes the broadcast batch out, row-major
        stride = rows * cols;
        return MatrixOperand<T>{std::move(dense), cols, contiguous_strides(mo.view.shape()), false};
      };
      std::int64_t stride_a = 0, stride_b = 0;
      const MatrixOperand<T> fa = flatten(ma, s.n, s.k, stride_a);
      const MatrixOperand<T> fb = flatten(mb, s.k, s.m, stride_b);
      cuda::gemm_strided_batched(fa.view.data(), fa.ld, stride_a, fb.view.data(), fb.ld, stride_b, out_data,
                                 s.batch.numel(), s.n, s.k, s.m, device, fa.col_major, fb.col_major);
    }
#endif
  }
  return out;
}

/// A product on the CPU whose GEMM hands out finished output blocks (the epilogue path of
/// backend/dense_statements.hpp): the operands expanded to (batch..., n, k) and (batch..., k, m);
/// float and double read in place through their strides by the FMA GEMM (cpu/gemm_fma.hpp),
/// bfloat16 row-major (rows lda / ldb apart) by the native bfloat16 GEMM (cpu/gemm_bf16.hpp).
template <class T>
struct MatmulBlocks {
  TensorView<const T> a, b;
  MatmulShapes s;
  std::int64_t lda = 0, ldb = 0;  // row strides of a and b, for the bfloat16 GEMMs (which read rows)

  Shape shape() const { return s.out; }
  /// Whether the GEMM reads bytes of `range` (then it cannot write them while it runs).
  bool reads(const ByteRange& range) const {
    return overlaps(byte_range(tensor_ref(a)), range) || overlaps(byte_range(tensor_ref(b)), range);
  }
  std::string describe() const {
    std::string gemm = cat(cpu::gemm_fma_isa(), " FMA");
    if constexpr (std::is_same_v<T, bfloat16>) gemm = cpu::bf16_gemm_path();
    return cat("GEMM ", s.batch.rank() ? cat(s.batch, " x ") : std::string(), s.n, " x ", s.k, " x ", s.m, " (", gemm,
               ")");
  }
  /// f(batch coords, i0, i1, j0, j1, block, ld) for every finished block of the product.
  template <class F>
  void run(const F& f) const {
#if !defined(__CUDA_ARCH__)
    const int r = a.dim();
    auto matrix = [&](const TensorView<const T>& v) {
      return cpu::StridedMatrix<T>{v.data(), v.strides()[r - 2], v.strides()[r - 1]};
    };
    auto batch_strides = [&](const TensorView<const T>& v) { return Strides(v.strides().begin(), v.strides().end() - 2); };
    auto finish = [&](std::int64_t bi, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                      const T* block, std::int64_t ld) {
      std::int64_t coords[kMaxRank] = {};
      unravel(bi, s.batch.begin(), s.batch.rank(), coords);
      f(coords, i0, i1, j0, j1, block, ld);
    };
    if constexpr (std::is_same_v<T, bfloat16>) {
#if WEFT_GEMM_BF16_NATIVE
      cpu::gemm_bf16_blocks(a.data(), lda, batch_strides(a), b.data(), ldb, batch_strides(b), s.batch, s.n, s.k, s.m,
                            finish);
#endif
    } else {
      cpu::gemm_fma_blocks<T>(matrix(a), batch_strides(a), matrix(b), batch_strides(b), s.batch, s.n, s.k, s.m, finish);
    }
#else
    (void)f;
#endif
  }
};

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
  /// The product as finished blocks for an epilogue, on the CPU, both operands of 2+ dims (no dim
  /// dropped): float and double on the FMA GEMM (operands read through their strides) where that
  /// pays (cpu::gemm_fma_epilogue_pays); bfloat16 on the native GEMM (AMX, BFMMLA: the same GEMM
  /// as without the epilogue, so it always pays; operands with rows not contiguous are copied, as
  /// there). Empty elsewhere (other dtypes have no epilogue_blocks, so no epilogue is
  /// instantiated). Evaluates operand expressions, checks.
  std::optional<detail::MatmulBlocks<value_type>> epilogue_blocks() const
    requires(std::is_same_v<value_type, float> || std::is_same_v<value_type, double> ||
             std::is_same_v<value_type, bfloat16>)
  {
    const TensorView<const value_type> va = detail::materialize(a), vb = detail::materialize(b);
    const detail::MatmulShapes s = detail::checked_matmul_shapes(va, vb);
    if (!va.device().is_cpu() || va.dim() < 2 || vb.dim() < 2) return std::nullopt;
    if constexpr (std::is_same_v<value_type, bfloat16>) {
      if (!detail::matmul_bf16_native<value_type>()) return std::nullopt;
      const detail::MatrixOperand<value_type> ma = detail::matrix_operand(va, true, s.batch, s.n, s.k, false);
      const detail::MatrixOperand<value_type> mb = detail::matrix_operand(vb, false, s.batch, s.k, s.m, false);
      return detail::MatmulBlocks<value_type>{ma.view, mb.view, s, ma.ld, mb.ld};
    } else {
#if !defined(__CUDA_ARCH__)
      if (!detail::cpu::gemm_fma_epilogue_pays(s.n, s.k, s.m)) {
        log(LogComponent::fusion, LogLevel::debug, "matmul ", s.n, " x ", s.k, " x ", s.m,
            ": the product runs first (Eigen's GEMM), then the expression around it");
        return std::nullopt;
      }
#endif
      Shape ta = s.batch, tb = s.batch;
      ta.push_back(s.n), ta.push_back(s.k), tb.push_back(s.k), tb.push_back(s.m);
      return detail::MatmulBlocks<value_type>{va.expand(ta), vb.expand(tb), s};
    }
  }
};

/// torch.matmul: (…, n, k) x (…, k, m) -> (…, n, m) with broadcast batch dims;
/// a 1-D operand is a row (first) or a column (second) and its dim is dropped
/// (1-D x 1-D is a dot product, a rank-0 tensor). Both operands have one
/// dtype (not bool); 16-bit floats multiply in float and round once. CPU:
/// Eigen's GEMM; bfloat16 in a build for AMX-BF16 where the OS permits it:
/// AMX tiles (cpu/gemm_amx.hpp: the same math, except that denormals read and
/// sum to zero), in an aarch64 build with FEAT_BF16: BFMMLA (cpu/gemm_bfmmla.hpp:
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
