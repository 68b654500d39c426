// SPDX-License-Identifier: MIT
/// @file Matrix products handed to the GEMM of the data's device and the CPU's ISA: the one place a product chooses a kernel (ops/matmul.hpp checks shapes and builds the expression node).
///
/// CPU: float and double on weft's packed FMA GEMM (cpu/gemm/fma.hpp) from 2^21 multiply-adds,
/// where it beats Eigen's (cpu::gemm_fma_pays), smaller ones and integers through Eigen's GEMM
/// (cpu/gemm/eigen.hpp; integers as a plain loop); bfloat16 on the build's native kernel (AMX-BF16 tiles where the OS permits them,
/// AVX512-BF16 vdpbf16ps, Arm BFMMLA: cpu/gemm/bf16.hpp), else, like half, converted to float and
/// rounded once. A product with a pointwise epilogue runs on the packed driver (cpu/gemm/packed.hpp):
/// float and double on FMA packets where that pays, bfloat16 on the native kernel. CUDA: cuBLAS (floating dtypes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/backend/cpu/gemm/bf16.hpp"
#include "weft/backend/cpu/gemm/eigen.hpp"
#include "weft/backend/cpu/gemm/fma.hpp"
#include "weft/backend/result_block.hpp"
#include "weft/core/storage.hpp"
#include "weft/core/tensor.hpp"
#include "weft/expr/operators.hpp"
#include "weft/log/log.hpp"
#include "weft/plan/kernel_operands.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/gemm.cuh"
#endif

namespace weft::detail {

/// The shapes of one matmul: C (batch..., n, m) = A (batch..., n, k) B (batch..., k, m).
struct MatmulShapes {
  Shape batch;
  std::int64_t n = 1, k = 1, m = 1;
  Shape out;
};

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

/// Whether CPU matmul of T runs a native bfloat16 GEMM (cpu::gemm_bf16_batched: AMX tiles where
/// built for them and permitted by the OS, AVX512-BF16 vdpbf16ps or Arm BFMMLA where built for
/// them), else 16-bit floats multiply in float.
template <class T>
bool gemm_bf16_native() {
#if !defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, bfloat16>) return cpu::bf16_gemm_native();
#endif
  return false;
}

/// out = a b for the checked shapes `s` (n, k, m > 0): a (batch..., n, k) or 1-D, b likewise,
/// out contiguous of shape s.out on a's device, overlapping neither.
template <class T>
void run_matmul(const TensorView<const T>& a, const TensorView<const T>& b, const MatmulShapes& s,
                const TensorView<T>& out) {
  const Device device = a.device();
  if constexpr (is_16bit_float_v<T>) {
    // No 16-bit GEMM here: multiply in float, round once.
    if (device.is_cpu() && !gemm_bf16_native<T>()) {
      const Tensor<float> fa(cast<float>(a)), fb(cast<float>(b));
      Tensor<float> c(AdoptStorage{}, allocate(std::size_t(s.out.numel()) * sizeof(float), device), s.out);
      run_matmul<float>(fa, fb, s, c);
      TensorView<T> dst = out;
      dst = cast<T>(c);
      return;
    }
  }
  const bool rows_only = device.is_cpu() && is_16bit_float_v<T>;  // the packed bfloat16 GEMMs
  const MatrixOperand<T> ma = matrix_operand(a, true, s.batch, s.n, s.k, !rows_only);
  const MatrixOperand<T> mb = matrix_operand(b, false, s.batch, s.k, s.m, !rows_only);
  T* const c = out.data();
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
#if WEFT_GEMM_BF16_NATIVE
    if constexpr (std::is_same_v<T, bfloat16>) {  // exact products, fp32 sums, one rounding
      cpu::gemm_bf16_batched(ma.view.data(), ma.ld, ma.batch_strides, mb.view.data(), mb.ld, mb.batch_strides, c,
                             s.batch, s.n, s.k, s.m);
    }
#endif
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (cpu::gemm_fma_pays<T>(s.n, s.k, s.m)) {
        // (i, j) at data[i rs + j cs]: a column-major operand steps rows by 1 and columns by ld
        auto strided = [](const MatrixOperand<T>& mo) {
          return cpu::StridedMatrix<T>{mo.view.data(), mo.col_major ? 1 : mo.ld, mo.col_major ? mo.ld : 1};
        };
        cpu::gemm_fma_batched(strided(ma), ma.batch_strides, strided(mb), mb.batch_strides, c, s.batch, s.n, s.k, s.m);
        return;
      }
    }
    if constexpr (!is_16bit_float_v<T>) {
      cpu::gemm_batched(ma.view.data(), ma.ld, ma.batch_strides, mb.view.data(), mb.ld, mb.batch_strides, c, s.batch,
                        s.n, s.k, s.m, ma.col_major, mb.col_major);
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
      cuda::gemm_strided_batched(fa.view.data(), fa.ld, stride_a, fb.view.data(), fb.ld, stride_b, c,
                                 s.batch.numel(), s.n, s.k, s.m, device, fa.col_major, fb.col_major);
    }
#else
    fail_no_cuda("matmul");
#endif
  }
}

/// The right operand b (k x m) of products a b kept in the panels of the packed GEMM that CPU
/// matmul runs for T (float and double: the FMA kernel; bfloat16: the native kernel), packed once
/// (a linear layer's weight for inference: each product then reads the panels instead of packing
/// b). No panels (null) where T has no packed kernel here: integers, 16-bit floats computed in
/// float, CUDA tensors. The panels are the kernel's Packed elements in one aligned host buffer.
template <class T>
struct PrepackedMatmul {
  std::shared_ptr<const void> panels;
  std::int64_t k = 0, m = 0;
};

#if !defined(__CUDA_ARCH__)
/// The packed kernel whose panels PrepackedMatmul<T> holds in this build (void: none).
template <class T>
struct PrepackedKernel {
  using type = void;
};
template <class T>
  requires std::is_same_v<T, float> || std::is_same_v<T, double>
struct PrepackedKernel<T> {
  using type = cpu::GemmFmaKernel<T>;
};
#if WEFT_GEMM_BF16_NATIVE
template <>
struct PrepackedKernel<bfloat16> {
  using type = cpu::GemmBf16Kernel;
};
#endif
#endif

/// b (k x m on any device, any strides: a weight [out, in] transposed) as a PrepackedMatmul.
template <class T>
PrepackedMatmul<T> prepack_matmul_b(const TensorView<const T>& b) {
  PrepackedMatmul<T> p;
  p.k = b.shape()[0], p.m = b.shape()[1];
#if !defined(__CUDA_ARCH__)
  using K = typename PrepackedKernel<T>::type;
  if constexpr (!std::is_void_v<K>) {
    if (!b.device().is_cpu() || (std::is_same_v<T, bfloat16> && !gemm_bf16_native<T>())) return p;
    using Packed = typename K::Packed;
    const std::size_t bytes = (std::size_t(cpu::packed_panels_size<K>(p.k, p.m)) * sizeof(Packed) + 63) / 64 * 64;
    void* panels = cpu::packed_gemm_kept_alloc(std::max<std::size_t>(bytes, 64));
    if (!panels) throw std::bad_alloc();
    p.panels = std::shared_ptr<const void>(panels, [](const void* q) { std::free(const_cast<void*>(q)); });
    if constexpr (std::is_same_v<T, bfloat16>) {
      // the native kernel reads rows, as matmul hands it b: a copy where b's rows are not contiguous
      const TensorView<const T> rows = b.strides()[1] == 1 ? b : b.contiguous();
      const std::int64_t ldb = rows.strides()[0];
      auto pack_b = [&](std::int64_t j0, std::int64_t steps, Packed* dst) {
        K::pack_b(rows.data(), ldb, p.k, p.m, j0, steps, dst);
      };
      cpu::pack_all_panels<K>(pack_b, p.k, p.m, static_cast<Packed*>(panels));
    } else {
      const cpu::StridedMatrix<T> strided{b.data(), b.strides()[0], b.strides()[1]};
      auto pack_b = [&](std::int64_t j0, std::int64_t steps, Packed* dst) {
        K::pack_b(strided, p.k, p.m, j0, steps, dst);
      };
      cpu::pack_all_panels<K>(pack_b, p.k, p.m, static_cast<Packed*>(panels));
    }
  }
#endif
  return p;
}

/// Whether the product of an n x k operand on `device` and b reads b's panels
/// (matmul_prepacked): where matmul itself (with or without a bias in its epilogue) runs the same
/// packed kernel, so that the result has its bits: every output is the same sum in the same order,
/// whatever the blocking. float and double where the FMA GEMM pays (cpu::gemm_fma_pays),
/// bfloat16 on the native kernel. Elsewhere (small float products run on Eigen's GEMM) the
/// caller runs the unpacked product.
template <class T>
bool matmul_prepacked_applies(const PrepackedMatmul<T>& b, std::int64_t n, Device device) {
  if (!b.panels || !device.is_cpu() || n == 0) return false;
#if !defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, bfloat16>) return gemm_bf16_native<T>();
  else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) return cpu::gemm_fma_pays<T>(n, b.k, b.m);
#endif
  return false;
}

/// out (n x m, contiguous) = a b + bias for a (n x k, contiguous) and b's panels, where
/// matmul_prepacked_applies. `bias`: m contiguous elements, or null for none.
template <class T>
void matmul_prepacked(const TensorView<const T>& a, const PrepackedMatmul<T>& b, const T* bias, T* out) {
#if !defined(__CUDA_ARCH__)
  using K = typename PrepackedKernel<T>::type;
  if constexpr (!std::is_void_v<K>) {
    using Packed = typename K::Packed;
    const std::int64_t n = a.shape()[0], k = b.k, m = b.m;
    const cpu::PrepackedPanels<Packed> panels{static_cast<const Packed*>(b.panels.get())};
    const T* const x = a.data();
    if constexpr (std::is_same_v<K, cpu::GemmFmaKernel<T>>) {
      if (n < K::kRows) {  // fewer rows than the tile's: the panels streamed once (a decoding step's)
        cpu::gemm_fma_few_rows_prepacked<T>(x, k, n, k, m, panels.panels, bias, out);
        return;
      }
    }
    auto pack_a = [&](std::int64_t, std::int64_t i0, std::int64_t steps, Packed* dst) {
      if constexpr (std::is_same_v<T, bfloat16>) K::pack_a(x, k, n, k, i0, steps, dst);
      else K::pack_a(cpu::StridedMatrix<T>{x, k, 1}, n, k, i0, steps, dst);
    };
    if (!bias) {
      cpu::gemm_packed_batched<K>(Shape{}, n, k, m, pack_a, panels, out);
      return;
    }
    // the epilogue of matmul(a, b) + bias: each output rounded from the product, plus the bias
    // (16-bit floats: added in float, rounded once, as the expression computes them)
    auto add_bias = [&](std::int64_t, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                        const T* block, std::int64_t ld) {
      for (std::int64_t i = i0; i < i1; ++i)
        for (std::int64_t j = j0; j < j1; ++j)
          out[i * m + j] = T(math_t<T>(block[(i - i0) * ld + j - j0]) + math_t<T>(bias[j]));
    };
    cpu::gemm_packed_blocks<K>(Shape{}, n, k, m, pack_a, panels, add_bias);
  }
#else
  (void)a, (void)b, (void)bias, (void)out;
#endif
}

/// c[b] = a[b] b[b] for b < batch on host buffers: a (n x k), b (k x m), c (n x m), each dense and
/// row-major, batches back to back (the math attention backend's products, in its own precision).
template <class S>
void gemm_host_dense(const S* a, const S* b, S* c, std::int64_t batch, std::int64_t n, std::int64_t k,
                     std::int64_t m) {
#if !defined(__CUDA_ARCH__)
  cpu::gemm_batched(a, k, Strides{n * k}, b, m, Strides{k * m}, c, Shape{batch}, n, k, m);
#else
  (void)a, (void)b, (void)c, (void)batch, (void)n, (void)k, (void)m;
#endif
}

/// A product on the CPU whose GEMM hands out finished output blocks (the epilogue path of
/// backend/dense_statements.hpp): the operands expanded to (batch..., n, k) and (batch..., k, m);
/// float and double read in place through their strides by the FMA GEMM (cpu/gemm/fma.hpp),
/// bfloat16 row-major (rows lda / ldb apart) by the native bfloat16 GEMM (cpu/gemm/bf16.hpp).
template <class T>
struct MatmulBlocks {
  TensorView<const T> a, b;
  MatmulShapes s;
  std::int64_t lda = 0, ldb = 0;  // row strides of a and b, for the bfloat16 GEMMs (which read rows)

  Shape shape() const { return s.out; }
  /// The shape whose boxes the blocks are (backend/result_block.hpp): the product's own.
  Shape block_shape() const { return s.out; }
  /// Whether the GEMM reads bytes of `range` (then it cannot write them while it runs).
  bool reads(const ByteRange& range) const {
    return overlaps(byte_range(tensor_ref(a)), range) || overlaps(byte_range(tensor_ref(b)), range);
  }
  std::string describe() const {
    std::string gemm;
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, bfloat16>) gemm = cpu::bf16_gemm_path();
    else gemm = cat(cpu::gemm_fma_isa(), " FMA");
#endif
    return cat("GEMM ", s.batch.rank() ? cat(s.batch, " x ") : std::string(), s.n, " x ", s.k, " x ", s.m, " (", gemm,
               ")");
  }
  /// f(ResultBlock) for every finished block of the product: one batch index, rows [i0, i1),
  /// columns [j0, j1), rows ld apart (whatever the destination's strides).
  template <class F>
  void run(const F& f, const Strides& /*destination*/) const {
#if !defined(__CUDA_ARCH__)
    const int r = a.dim();
    auto matrix = [&](const TensorView<const T>& v) {
      return cpu::StridedMatrix<T>{v.data(), v.strides()[r - 2], v.strides()[r - 1]};
    };
    auto batch_strides = [&](const TensorView<const T>& v) { return Strides(v.strides().begin(), v.strides().end() - 2); };
    auto finish = [&](std::int64_t bi, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                      const T* block, std::int64_t ld) {
      const int batch_dims = s.batch.rank();
      ResultBlock<T> box{block, s.out, s.out, contiguous_strides(s.out)};
      std::int64_t coords[kMaxRank] = {};
      unravel(bi, s.batch.begin(), batch_dims, coords);
      for (int d = 0; d < batch_dims; ++d) box.start[d] = coords[d], box.size[d] = 1, box.strides[d] = 0;
      box.start[batch_dims] = i0, box.size[batch_dims] = i1 - i0, box.strides[batch_dims] = ld;
      box.start[batch_dims + 1] = j0, box.size[batch_dims + 1] = j1 - j0, box.strides[batch_dims + 1] = 1;
      f(box);
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

/// The product a b (checked shapes `s`, both operands of 2+ dims) as finished blocks for an
/// epilogue, on the CPU: float and double on the FMA GEMM (operands read through their strides)
/// where that pays (cpu::gemm_fma_pays); bfloat16 on the native GEMM (the same GEMM as
/// without the epilogue, so it always pays; operands with rows not contiguous are copied, as
/// there). Empty elsewhere: the product then runs first and the expression after it.
template <class T>
std::optional<MatmulBlocks<T>> gemm_epilogue_blocks(const TensorView<const T>& a, const TensorView<const T>& b,
                                                    const MatmulShapes& s) {
  if (!a.device().is_cpu() || a.dim() < 2 || b.dim() < 2) return std::nullopt;
  if constexpr (std::is_same_v<T, bfloat16>) {
    if (!gemm_bf16_native<T>()) return std::nullopt;
    const MatrixOperand<T> ma = matrix_operand(a, true, s.batch, s.n, s.k, false);
    const MatrixOperand<T> mb = matrix_operand(b, false, s.batch, s.k, s.m, false);
    return MatmulBlocks<T>{ma.view, mb.view, s, ma.ld, mb.ld};
  } else {
#if !defined(__CUDA_ARCH__)
    if (!cpu::gemm_fma_pays<T>(s.n, s.k, s.m)) {
      log_message(LogComponent::fusion, LogLevel::debug, "matmul ", s.n, " x ", s.k, " x ", s.m,
          ": the product runs first (Eigen's GEMM), then the expression around it");
      return std::nullopt;
    }
#endif
    Shape ta = s.batch, tb = s.batch;
    ta.push_back(s.n), ta.push_back(s.k), tb.push_back(s.k), tb.push_back(s.m);
    return MatmulBlocks<T>{a.expand(ta), b.expand(tb), s};
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
