// SPDX-License-Identifier: MIT
/// @file FlashAttention-2 on CUDA, the host side: tile traits per head dim, the supported head dims, and which key blocks a query block visits under a causal mask (plain C++: the cuda suite tests it on the host).
#pragma once

#include <cstdint>
#include <string>

#include "weft/core/config.hpp"

namespace weft::detail::cuda {

/// The head dims (E = Ev) the flash kernel is compiled for.
inline constexpr int kFlashHeadDims[] = {32, 64, 96, 128, 256};

/// "32, 64, 96, 128, 256": for error messages.
inline std::string flash_head_dims_text() {
  std::string s;
  for (int e : kFlashHeadDims) s += (s.empty() ? "" : ", ") + std::to_string(e);
  return s;
}

inline constexpr bool is_flash_head_dim(std::int64_t e) {
  for (int d : kFlashHeadDims)
    if (d == e) return true;
  return false;
}

/// The tile shape of the forward kernel for head dim E. One CTA owns kBlockM query rows of one
/// (batch, head); each warp owns 16 of them (one m16 row of mma tiles), so a row's softmax never
/// leaves its warp. Keys stream through shared memory kBlockN at a time, two tiles of K and V in
/// flight (cp.async double buffering). Rows are padded by 16 bytes: a row of E halves is 2E bytes,
/// (2E + 16) / 16 = E/8 + 1 chunks is odd, so the 8 rows one ldmatrix phase reads fall in 8
/// different 16-byte bank groups (no swizzle needed, any E that is a multiple of 8).
/// Provisional sizes, not yet measured on a GPU (docs/attention.md): kBlockM = 128 (8 warps)
/// except E = 256, where kBlockN = 32 keeps Q + 2 x (K + V) under A100's 163 KB.
template <int E>
struct FlashForwardTraits {
  static_assert(E % 16 == 0, "the mma k step is 16");
  static constexpr int kHeadDim = E;
  static constexpr int kBlockM = 128;
  static constexpr int kBlockN = E == 256 ? 32 : 64;
  static constexpr int kWarps = kBlockM / 16;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kStages = 2;
  static constexpr int kRowElems = E + 8;  // the padded smem row, in 16-bit elements
  static constexpr int kChunksPerRow = E / 8;  // 16-byte cp.async chunks in one row of E halves
  static constexpr int kQElems = kBlockM * kRowElems;
  static constexpr int kKVElems = kBlockN * kRowElems;  // one K or one V tile
  static constexpr int kSmemBytes = 2 * (kQElems + 2 * kStages * kKVElems);
  static constexpr int kNTilesS = kBlockN / 8;  // n8 tiles of a warp's scores S = Q K^T
  static constexpr int kNTilesO = E / 8;        // n8 tiles of a warp's output O = P V
};

/// The key blocks a query block [m0, m0 + block_m) visits: blocks [0, count); blocks from
/// first_masked on need an element-wise mask (the causal diagonal crosses them, or they run past S).
struct KeyBlockRange {
  std::int64_t count = 0;
  std::int64_t first_masked = 0;
};

/// Query i sees key j when j < S and, if causal, j <= i + offset (offset 0: upper_left, S - L:
/// lower_right). The block's last valid row, min(m0 + block_m, L) - 1, sees keys
/// < min(S, min(m0 + block_m, L) + offset), so later blocks are skipped; a block is unmasked when
/// its first row m0 sees its last key: n0 + block_n - 1 <= m0 + offset, and n0 + block_n <= S
/// (later rows see more: the unmasked blocks are a prefix).
WEFT_HOST_DEVICE constexpr KeyBlockRange key_block_range(std::int64_t m0, std::int64_t block_m, std::int64_t block_n,
                                                         std::int64_t L, std::int64_t S, bool causal,
                                                         std::int64_t offset) {
  const std::int64_t rows_end = m0 + block_m < L ? m0 + block_m : L;
  std::int64_t end = S, unmasked = S / block_n;
  if (causal) {
    end = rows_end + offset < S ? rows_end + offset : S;
    if (end < 0) end = 0;
    const std::int64_t seen = m0 + offset + 1 > 0 ? (m0 + offset + 1) / block_n : 0;
    if (seen < unmasked) unmasked = seen;
  }
  KeyBlockRange r;
  r.count = (end + block_n - 1) / block_n;
  r.first_masked = unmasked < r.count ? unmasked : r.count;
  return r;
}

}  // namespace weft::detail::cuda
