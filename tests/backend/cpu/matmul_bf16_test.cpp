// SPDX-License-Identifier: MIT
/// @file cpu: bfloat16 matmul against a float64 reference within the fp32-accumulation bound, on
/// whichever path the build and the OS allow (AMX-BF16 tiles, Arm BFMMLA, or float + Eigen and one
/// rounding); which path runs, and what TDPBF16PS / BFMMLA do with denormals and roundings.
#include <weft/ops/matmul.hpp>

#include <cstring>
#include <string>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "matmul_reference.hpp"

using namespace weft_test;

namespace {

/// Operand values: |x| log-uniform in [1/64, 4], either sign (never zero, never denormal).
Domain bf16_domain() {
  Domain d;
  d.lo = 1.0 / 64;
  d.hi = 4;
  d.log_magnitude = true;
  return d;
}

/// Checks c against a (batch..., n, k) x b (batch..., k, m) (both at least 2-D, broadcast to the
/// batch), element by element in the row-major order of c. All paths multiply exactly (8-bit
/// significands) and add k products in fp32 in some order (TDPBF16PS, BFMMLA: pairs first, see
/// backend/cpu/gemm/amx.hpp, backend/cpu/gemm/bfmmla.hpp), each addition rounded: |sum - exact| <= gamma_k sum |a b|
/// with gamma_k = k u / (1 - k u), u = 2^-24 for round to nearest, 2^-23 for BFMMLA's round to
/// odd (an error below one ulp); then one rounding to bfloat16, at most half an ulp of the fp32
/// sum (whose magnitude is at most |exact| + that bound).
void check_product(const weft::TensorBase<bfloat16>& a, const weft::TensorBase<bfloat16>& b, const weft::TensorBase<bfloat16>& c,
                   const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m) {
  Shape sa = batch, sb = batch;
  sa.push_back(n), sa.push_back(k);
  sb.push_back(k), sb.push_back(m);
  const std::vector<double> av = broadcast_values(a, sa), bv = broadcast_values(b, sb);
  const bool round_to_odd = std::strcmp(weft::detail::cpu::bf16_gemm_path(), "neon-bfmmla") == 0;
  const double u = round_to_odd ? 0x1p-23 : 0x1p-24, gamma = double(k) * u / (1 - double(k) * u);
  std::vector<Expect> expect;
  expect.reserve(std::size_t(batch.numel() * n * m));
  for (std::int64_t bi = 0; bi < batch.numel(); ++bi)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        // Plain double sums (cheap under qemu): every product is exact in double, and the sum errs
        // by at most k 2^-53 sum |a b|, added to the tolerance (2^-29 of the fp32 bound).
        double dot = 0, mag = 0;
        for (std::int64_t kk = 0; kk < k; ++kk) {
          const double x = av[std::size_t((bi * n + i) * k + kk)] * bv[std::size_t((bi * k + kk) * m + j)];
          dot += x;
          mag += std::fabs(x);
        }
        Expect e;
        e.want = dot;
        const double sum_error = (gamma + double(k) * 0x1p-53) * mag;
        e.tol = sum_error + 0.5 * ulp_of<bfloat16>(std::fabs(e.want) + sum_error);
        expect.push_back(e);
      }
  INFO("a ", shape_str(a.shape()), ", b ", shape_str(b.shape()), ", path: ", weft::detail::cpu::bf16_gemm_path());
  WEFT_CHECK_REPORT(check_output(c, expect));
}

/// matmul(a, b) against the reference (1-D operands as a row / a column).
void check_matmul_bf16(const weft::TensorBase<bfloat16>& a, const weft::TensorBase<bfloat16>& b) {
  Shape want_shape, batch;
  std::int64_t n, k, m;
  REQUIRE(matmul_shape(a.shape(), b.shape(), want_shape, n, k, m, batch));
  const Tensor<bfloat16> c = weft::matmul(a, b);
  REQUIRE(c.shape() == want_shape);
  check_product(a.dim() == 1 ? a.view().unsqueeze(0) : a.view(), b.dim() == 1 ? b.view().unsqueeze(1) : b.view(), c, batch, n, k, m);
}

/// A random operand of `shape`: contiguous, strided rows, or a transposed (column-major) view.
TensorView<bfloat16> bf16_operand(Rng& rng, const Shape& shape, int layout) {
  if (layout == 2 && shape.rank() >= 2) {
    Shape t = shape;
    std::swap(t[t.rank() - 1], t[t.rank() - 2]);
    return make_view<bfloat16>(rng, t, bf16_domain(), Layout::contiguous).transpose(-1, -2);
  }
  return make_view<bfloat16>(rng, shape, bf16_domain(), layout == 1 ? Layout::strided : Layout::contiguous);
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("matmul bfloat16: tile edges, odd and large k, within the fp32-accumulation bound") {
  WEFT_TEST_RNG(rng);
  // (n, k, m): k = 1, k off the 32-k step (zero-padded pairs and steps), n and m off the 16 x 16
  // tiles, the 32 x 32 register block and the 256 x 256 output block, k past the 512-k slice
  // (partial sums between slices), and k = 4099.
  const std::int64_t shapes[][3] = {{1, 1, 1},      {7, 1, 5},      {2, 2, 1},       {13, 3, 70},   {16, 32, 16},
                                    {32, 64, 32},   {97, 33, 257},  {100, 513, 130}, {5, 4099, 19}, {33, 4099, 70},
                                    {1, 300, 65},   {65, 257, 1},   {17, 31, 47},    {48, 96, 80}};
  for (const auto& s : shapes)
    for (int layout = 0; layout < 3; ++layout)
      check_matmul_bf16(bf16_operand(rng, Shape{s[0], s[1]}, layout), bf16_operand(rng, Shape{s[1], s[2]}, 2 - layout));
#if WEFT_GEMM_BF16_NATIVE
  // Two output blocks of the native kernel that runs in both directions and three k slices, once
  // (sized by the kernel: the reference is most of the time under qemu).
  if (weft::detail::cpu::bf16_gemm_native()) {
    using K = weft::detail::cpu::GemmBf16Kernel;
    check_matmul_bf16(bf16_operand(rng, Shape{K::kBlockRows + 34, 1100}, 0),
                      bf16_operand(rng, Shape{1100, K::kBlockCols + 14}, 0));
    // An output of 8 MiB and more streams through the block buffer (rows of 2051: off the lines).
    check_matmul_bf16(bf16_operand(rng, Shape{2048, 2}, 0), bf16_operand(rng, Shape{2, 2051}, 0));
  }
#endif
}

TEST_CASE("matmul bfloat16: random sizes and layouts") {
  WEFT_TEST_RNG(rng);
  static const std::int64_t rows[] = {1, 2, 3, 5, 6, 7, 13, 17, 31, 63, 64, 65, 97};
  static const std::int64_t depths[] = {1, 2, 3, 4, 5, 31, 32, 33, 255, 256, 257};
  for (int iter = 0; iter < 24; ++iter) {
    const std::int64_t n = rng.pick(rows), k = rng.pick(depths), m = rng.pick(rows);
    check_matmul_bf16(bf16_operand(rng, Shape{n, k}, int(rng.integer(0, 2))),
                      bf16_operand(rng, Shape{k, m}, int(rng.integer(0, 2))));
  }
}

TEST_CASE("matmul bfloat16: batched, broadcast batch dims and 1-D operands") {
  WEFT_TEST_RNG(rng);
  check_matmul_bf16(bf16_operand(rng, Shape{12, 7, 33}, 0), bf16_operand(rng, Shape{12, 33, 20}, 1));  // one per thread
  check_matmul_bf16(bf16_operand(rng, Shape{2, 70, 301}, 2), bf16_operand(rng, Shape{2, 301, 90}, 0));  // threaded inside
  check_matmul_bf16(bf16_operand(rng, Shape{3, 1, 9, 17}, 0), bf16_operand(rng, Shape{4, 17, 70}, 2));  // broadcast
  check_matmul_bf16(bf16_operand(rng, Shape{9, 17}, 1), bf16_operand(rng, Shape{5, 17, 3}, 0));         // a broadcast
  check_matmul_bf16(bf16_operand(rng, Shape{5, 9, 17}, 0), bf16_operand(rng, Shape{17}, 0));            // matrix-vector
  check_matmul_bf16(bf16_operand(rng, Shape{301}, 0), bf16_operand(rng, Shape{301}, 0));                // dot
  check_matmul_bf16(bf16_operand(rng, Shape{33}, 0), bf16_operand(rng, Shape{2, 33, 65}, 2));            // vector-matrix
}

TEST_CASE("matmul bfloat16: the native GEMM runs exactly when the build targets AMX-BF16 (and Linux permits it), AVX512-BF16 or BFMMLA") {
  namespace cpu = weft::detail::cpu;
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__linux__)
  CHECK(cpu::kGemmAmx);
  // The answer cached at the first request is the kernel's: ARCH_GET_XCOMP_PERM (0x1022) lists
  // the permitted state components, XTILEDATA is bit 18.
  const bool permitted = cpu::amx_permitted();
  unsigned long long features = 0;
  REQUIRE(syscall(SYS_arch_prctl, 0x1022, &features) == 0);
  CHECK(permitted == ((features >> 18 & 1) != 0));
  MESSAGE("AMX tile data " << std::string(permitted ? "permitted" : "refused") << ": bf16 matmul runs "
                           << std::string(cpu::bf16_gemm_path()));
#else
  CHECK_FALSE(cpu::kGemmAmx);
  CHECK_FALSE(cpu::amx_permitted());
#endif
#if defined(__aarch64__) && defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC)
  CHECK(cpu::kGemmBfmmla);
#else
  CHECK_FALSE(cpu::kGemmBfmmla);
#endif
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    !(defined(__AMX_TILE__) && defined(__AMX_BF16__))
  CHECK(cpu::kGemmDpbf16);
#else
  CHECK_FALSE(cpu::kGemmDpbf16);
#endif
  const std::string path = cpu::bf16_gemm_path();
  const bool amx = path == "amx-bf16", dpbf16 = path == "avx512-bf16", bfmmla = path == "neon-bfmmla";
  CHECK(amx == (cpu::kGemmAmx && cpu::amx_permitted()));
  CHECK(dpbf16 == cpu::kGemmDpbf16);
  CHECK(bfmmla == cpu::kGemmBfmmla);
  CHECK((amx || dpbf16 || bfmmla || path == "float"));
  CHECK(cpu::bf16_gemm_native() == (amx || dpbf16 || bfmmla));
  // The paths differ on denormals: TDPBF16PS, VDPBF16PS and BFMMLA read the bf16 denormal 2^-127 as zero,
  // float + Eigen (IEEE, no DAZ) multiplies it exactly: 2^-127 * 2^100 = 2^-27.
  const Tensor<bfloat16> a = weft::from_vector<bfloat16>({bfloat16::from_bits(0x0040), bfloat16(1.0f)}, Shape{1, 2});
  const Tensor<bfloat16> b = weft::from_vector<bfloat16>({bfloat16(0x1p100f), bfloat16(0.0f)}, Shape{2, 1});
  REQUIRE(value_at(a, {0, 0}) == 0x1p-127);
  CHECK(value_at(weft::eval(weft::matmul(a, b)), {0, 0}) == (amx || dpbf16 || bfmmla ? 0.0 : 0x1p-27));
  // And on rounding: 1 + 2^-8 + 2^-30 is 1 + 2^-8 in fp32 by nearest even (2^-30 is below half an
  // ulp), which rounds to the bfloat16 1 (a tie, to even); BFMMLA rounds that sum to odd,
  // 1 + 2^-8 + 2^-23, which rounds up to 1 + 2^-7. (k = 3: BFMMLA pads the step with a zero.)
  const Tensor<bfloat16> x = weft::from_vector<bfloat16>({bfloat16(1.0f), bfloat16(0x1p-8f), bfloat16(0x1p-30f)}, Shape{1, 3});
  const Tensor<bfloat16> ones = weft::from_vector<bfloat16>({bfloat16(1.0f), bfloat16(1.0f), bfloat16(1.0f)}, Shape{3, 1});
  CHECK(value_at(weft::eval(weft::matmul(x, ones)), {0, 0}) == (bfmmla ? 1 + 0x1p-7 : 1.0));
}

#if WEFT_GEMM_BF16_NATIVE
/// The product of the packed driver with kernel K against the reference: k = 0, 3 (a padded
/// step), and across the kernel's output blocks and k slices with row and column edges.
template <class K>
void check_native_kernel() {
  namespace cpu = weft::detail::cpu;
  WEFT_TEST_RNG(rng);
  const std::int64_t shapes[][3] = {{1, 1, 1},      {3, 0, 5},       {7, 3, 65}, {97, 257, 257}, {13, 4099, 33},
                                    {K::kBlockRows + 14, 600, K::kBlockCols + 44}};
  for (const auto& s : shapes) {
    const std::int64_t n = s[0], k = s[1], m = s[2];
    // Row strides beyond the row length; the output a view of a poisoned, wider tensor.
    const TensorView<bfloat16> a = random_contiguous<bfloat16>(rng, Shape{n, k + 3}, bf16_domain()).narrow(1, 1, k);
    const TensorView<bfloat16> b = random_contiguous<bfloat16>(rng, Shape{k, m + 5}, bf16_domain()).narrow(1, 2, m);
    Tensor<bfloat16> base = weft::empty<bfloat16>(Shape{n, m + 7});
    const TensorView<bfloat16> c = base.narrow(1, 3, m);
    for (int run = 0; run < 4; ++run) {
      const int threads = 1 + run % 2;
      const bool streamed = run >= 2;  // GemmStreamStore: rows start off 64-byte lines here
      poison(base);
      auto product = [&](const auto& out) {
        cpu::gemm_packed<K>(
            [&](std::int64_t i0, std::int64_t steps, auto* dst) { K::pack_a(a.data(), a.strides()[0], n, k, i0, steps, dst); },
            [&](std::int64_t j0, std::int64_t steps, auto* dst) { K::pack_b(b.data(), b.strides()[0], k, m, j0, steps, dst); },
            n, k, m, threads, out);
      };
      if (streamed) product(cpu::GemmStreamStore<bfloat16>{c.data(), c.strides()[0]});
      else product(cpu::GemmStore<bfloat16>{c.data(), c.strides()[0]});
      INFO("n ", n, ", k ", k, ", m ", m, ", threads ", threads, ", streamed ", streamed);
      check_product(a, b, c, Shape{}, n, k, m);
      // The poisoned columns around c are untouched.
      bool outside_untouched = true;
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j : {std::int64_t(0), std::int64_t(1), std::int64_t(2), m + 3, m + 4, m + 5, m + 6})
          outside_untouched &= is_poison<bfloat16>(reinterpret_cast<const unsigned char*>(base.data() + i * (m + 7) + j));
      CHECK(outside_untouched);
    }
  }
}

TEST_CASE("gemm_packed with the native kernel: strided operands, 1 and 2 threads, stored directly or streamed through the block buffer, writes exactly the elements of a poisoned output") {
  if (!weft::detail::cpu::bf16_gemm_native()) return;  // the OS refuses AMX tile data: matmul runs float
  check_native_kernel<weft::detail::cpu::GemmBf16Kernel>();
}
#endif

}  // TEST_SUITE
