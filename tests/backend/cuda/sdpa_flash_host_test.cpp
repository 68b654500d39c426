// SPDX-License-Identifier: MIT
/// @file The cuda suite for attention, host side: the flash kernel's plan (tile traits, causal block
/// skipping, refusals, operand strides), plain C++ that g++ compiles and that runs without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include <weft/backend/cuda/attention/flash_plan.hpp>
#include <weft/nn/sdpa_cuda.hpp>

namespace {

namespace wc = weft::detail::cuda;
namespace nnd = weft::nn::detail;
using weft::Shape;

// ------------------------------------------------------------- host side

/// 16-byte bank group (of 8 per 128 bytes) that chunk c of smem row `row` falls in.
int bank_group(int row, int c, int row_elems) { return (row * row_elems * 2 / 16 + c) % 8; }

template <int E>
void check_traits() {
  using Tr = wc::FlashForwardTraits<E>;
  INFO("head dim ", E);
  CHECK(Tr::kWarps * 16 == Tr::kBlockM);  // one m16 mma row per warp
  CHECK(Tr::kThreads <= 1024);
  CHECK(Tr::kBlockN % 16 == 0);            // P V's k steps; ldmatrix x4 loads n8 tile pairs
  CHECK(E % 16 == 0);
  CHECK(Tr::kRowElems * 2 % 16 == 0);      // every smem row starts 16-byte aligned (cp.async, ldmatrix)
  CHECK(Tr::kSmemBytes == 2 * (Tr::kBlockM + 2 * Tr::kStages * Tr::kBlockN) * (E + 8));
  CHECK(Tr::kSmemBytes <= 163 * 1024);     // A100's opt-in maximum per block (H100: 227 KB)
  CHECK(Tr::kSmemBytes > 48 * 1024 - (E <= 32 ? 48 * 1024 : 0));  // above 48 KB except E = 32: the opt-in is exercised
  // The per-thread accumulators (S and O tiles, 4 floats each) leave registers for addresses
  // and fragments under the 255 limit.
  CHECK(4 * (Tr::kNTilesS + Tr::kNTilesO) <= 160);
  // Each 8-row ldmatrix phase hits 8 distinct bank groups at every chunk column.
  for (int row0 = 0; row0 < Tr::kBlockM; row0 += 8)
    for (int c = 0; c < Tr::kChunksPerRow; ++c) {
      unsigned seen = 0;
      for (int r = 0; r < 8; ++r) seen |= 1u << bank_group(row0 + r, c, Tr::kRowElems);
      CHECK(seen == 0xFFu);
    }
}

/// Brute force over the mask: the key blocks a query block needs (up to the last block holding a
/// key some valid row sees) and the prefix of blocks every valid row sees entirely.
wc::KeyBlockRange brute_range(std::int64_t m0, std::int64_t bm, std::int64_t bn, std::int64_t L, std::int64_t S,
                              bool causal, std::int64_t off) {
  auto sees = [&](std::int64_t i, std::int64_t j) { return j < S && (!causal || j <= i + off); };
  wc::KeyBlockRange r;
  const std::int64_t rows_end = std::min(m0 + bm, L);
  for (std::int64_t n0 = 0; n0 < S; n0 += bn)
    for (std::int64_t i = m0; i < rows_end; ++i)
      for (std::int64_t j = n0; j < n0 + bn; ++j)
        if (sees(i, j)) r.count = n0 / bn + 1;
  for (std::int64_t n0 = 0; n0 < r.count * bn; n0 += bn) {
    bool all = true;
    for (std::int64_t i = m0; i < rows_end; ++i)
      for (std::int64_t j = n0; j < n0 + bn; ++j) all = all && sees(i, j);
    if (!all) break;
    r.first_masked = n0 / bn + 1;
  }
  return r;
}

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("flash attention: tile traits of every head dim are consistent") {
  check_traits<32>();
  check_traits<64>();
  check_traits<96>();
  check_traits<128>();
  check_traits<256>();
  std::string listed;
  for (int e : wc::kFlashHeadDims) listed += (listed.empty() ? "" : ", ") + std::to_string(e);
  CHECK(wc::flash_head_dims_text() == listed);
  for (int e : {32, 64, 96, 128, 256}) CHECK(wc::is_flash_head_dim(e));
  for (int e : {0, 8, 16, 48, 80, 160, 512}) CHECK(!wc::is_flash_head_dim(e));
}

TEST_CASE("flash attention: causal block skipping matches a brute-force mask (L != S, both alignments)") {
  const std::int64_t lengths[] = {1, 31, 64, 65, 127, 128, 129, 200, 300};
  const std::int64_t tiles[][2] = {{128, 64}, {128, 32}, {64, 64}, {16, 16}};
  int checked = 0;
  for (const auto& tile : tiles)
    for (std::int64_t L : lengths)
      for (std::int64_t S : lengths)
        for (int variant = 0; variant < 3; ++variant) {  // none, upper_left, lower_right
          const bool causal = variant > 0;
          const std::int64_t off = variant == 2 ? S - L : 0;
          for (std::int64_t m0 = 0; m0 < L; m0 += tile[0]) {
            const wc::KeyBlockRange got = wc::key_block_range(m0, tile[0], tile[1], L, S, causal, off);
            const wc::KeyBlockRange want = brute_range(m0, tile[0], tile[1], L, S, causal, off);
            INFO("tile ", tile[0], "x", tile[1], ", L ", L, ", S ", S, ", variant ", variant, ", m0 ", m0);
            CHECK(got.count == want.count);
            CHECK(got.first_masked == want.first_masked);
            ++checked;
          }
        }
  CHECK(checked > 1000);
}

TEST_CASE("flash attention: refusals name what the CUDA kernel supports") {
  weft::detail::FlashCudaRequest ok{"bfloat16", true, 128, 128, false, 0, true, {64, 128}};
  CHECK(weft::detail::flash_cuda_refusal(ok).empty());
  auto refusal = [&](auto change) {
    weft::detail::FlashCudaRequest r = ok;
    change(r);
    return weft::detail::flash_cuda_refusal(r);
  };
  CHECK(refusal([](auto& r) { r.flash_allowed = false; }).find("SdpaBackendGuard excludes") != std::string::npos);
  CHECK(refusal([](auto& r) { r.dtype = "float32", r.is_16bit = false; }).find("float32 inputs: the CUDA flash kernel takes float16 and bfloat16") != std::string::npos);
  CHECK(refusal([](auto& r) { r.Ev = 64; }).find("E = 128 != Ev = 64") != std::string::npos);
  CHECK(refusal([](auto& r) { r.E = r.Ev = 80; }).find("head dim 80: the CUDA flash kernel supports 64, 128; pad E") != std::string::npos);
  CHECK(refusal([](auto& r) { r.E = r.Ev = 256; }).find("supports 64, 128 in this translation unit (WEFT_CUDA_FLASH_HEAD_DIMS)") != std::string::npos);
  CHECK(refusal([](auto& r) { r.has_mask = true; }).find("attn_mask: the CUDA flash kernel has no masks") != std::string::npos);
  CHECK(refusal([](auto& r) { r.dropout_p = 0.1; }).find("no dropout") != std::string::npos);
}

TEST_CASE("flash attention: operand strides merge batch dims or refuse") {
  const Shape s{2, 3, 4, 16, 64};
  const weft::detail::FlashStrides c = weft::detail::flash_strides(s, weft::contiguous_strides(s));
  CHECK(c.ok);
  CHECK(c.row == 64);
  CHECK(c.head == 16 * 64);
  CHECK(c.batch == 4 * 16 * 64);
  // (N, L, H, E) viewed as (N, H, L, E): heads step by E, rows by H E.
  const weft::detail::FlashStrides t = weft::detail::flash_strides(Shape{2, 4, 16, 64}, weft::Strides{16 * 4 * 64, 64, 4 * 64, 1});
  CHECK(t.ok);
  CHECK(t.head == 64);
  CHECK(t.row == 4 * 64);
  CHECK(t.batch == 16 * 4 * 64);
  // Batch dims swapped: no single stride walks both.
  CHECK(!weft::detail::flash_strides(s, weft::Strides{4 * 16 * 64, 3 * 4 * 16 * 64, 16 * 64, 64, 1}).ok);
}

}  // TEST_SUITE("cuda")
