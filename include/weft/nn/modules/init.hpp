// SPDX-License-Identifier: MIT
/// @file The random initial values of module parameters (torch's uniform and normal inits) and where they are drawn from.
///
/// A module's constructor takes an optional seed. Omitted, every random parameter is drawn from
/// the global generator (weft::manual_seed), as torch's modules are: `manual_seed(s)` then the
/// same modules built in the same order give the same values on every run, and two modules never
/// share values. Given, the module's values depend on that seed alone (its k-th random parameter
/// draws from a Generator seeded with stream k of the seed), whatever was drawn before, and the
/// global generator does not move.
#pragma once

#include <cstdint>
#include <optional>

#include "weft/core/generator.hpp"
#include "weft/core/random.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"

namespace weft::nn::detail {

/// A 64-bit seed from Philox's output for (key, index): distinct indices give unrelated seeds.
inline std::uint64_t philox_seed(std::uint64_t key, std::uint64_t index) {
  const weft::detail::random::Philox4x32 r(key, index);
  return (std::uint64_t(r.w[0]) << 32) | r.w[1];
}

/// The seeds of one module's random parameters, in the order the module draws them: with the
/// module's seed, one seed per parameter from its stream; without, none (the global generator).
class InitSeeds {
 public:
  explicit InitSeeds(std::optional<std::uint64_t> seed) : seed_(seed) {}

  std::optional<std::uint64_t> next() {
    if (!seed_) return std::nullopt;
    return philox_seed(*seed_, drawn_++);
  }

 private:
  std::optional<std::uint64_t> seed_;
  std::uint64_t drawn_ = 0;
};

// These call the factories, which differ between nvcc and host files (core/config.hpp,
// docs/architecture.md "ODR safety").
inline namespace WEFT_BACKEND_ABI {

/// U(-bound, bound), torch's `nn.init.uniform_(t, -bound, bound)`, from `seed`'s generator or
/// the global one.
template <class T>
Tensor<T> uniform_init(const Shape& shape, double bound, std::optional<std::uint64_t> seed) {
  Tensor<T> t = seed ? rand<T>(shape, *seed) : rand<T>(shape);
  t = (t * 2.0 - 1.0) * bound;
  return t;
}

/// N(0, 1), torch's `nn.init.normal_(t)`, from `seed`'s generator or the global one.
template <class T>
Tensor<T> normal_init(const Shape& shape, std::optional<std::uint64_t> seed) {
  return seed ? randn<T>(shape, *seed) : randn<T>(shape);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn::detail
