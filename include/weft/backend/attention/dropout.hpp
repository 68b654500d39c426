// SPDX-License-Identifier: MIT
/// @file Attention dropout's keep/drop decision: a pure function of (seed, weight index), so forward, backward and every device agree.
#pragma once

#include <cmath>
#include <cstdint>

#include "weft/core/random.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// Drops weight (bh, i, j) of the (batch * Hq, L, S) attention weights, flat index
/// f = (bh L + i) S + j, when u < p, u = (the top 24 bits of Philox word f mod 4 of counter f / 4)
/// / 2^24: one Philox call serves four neighbouring weights. Kept weights are scaled by 1 / (1 - p).
struct SdpaDropout {
  std::uint64_t seed = 0;
  std::uint32_t threshold = 0;  // keep when (word >> 8) >= threshold = ceil(p 2^24)
  double keep_scale = 1;

  SdpaDropout(double p, std::uint64_t s)
      : seed(s), threshold(std::uint32_t(std::ceil(p * 16777216.0))), keep_scale(1 / (1 - p)) {}

  bool active() const { return threshold > 0; }

  /// out[t] = keep_scale or 0 for the n weights from flat index `first` on.
  template <class Acc>
  void factors(std::uint64_t first, std::int64_t n, Acc* out) const {
    const Acc kept = Acc(keep_scale);
    std::int64_t t = 0;
    while (t < n) {
      const std::uint64_t f = first + std::uint64_t(t);
      const random::Philox4x32 r(seed, f >> 2);
      for (unsigned w = unsigned(f & 3); w < 4 && t < n; ++w, ++t) out[t] = (r.w[w] >> 8) >= threshold ? kept : Acc(0);
    }
  }
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
