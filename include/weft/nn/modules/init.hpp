// SPDX-License-Identifier: MIT
/// @file The random initial values of module parameters (torch's uniform and normal inits) and the seeds they are drawn from.
///
/// weft's random factories take an explicit seed (`rand<T>(shape, seed)`: element i depends only
/// on (seed, i)). Until a global generator exists, a module's constructor takes an optional seed:
/// given, the module's values depend on it alone (its k-th random parameter draws stream k of the
/// seed), whatever was built before; omitted, each random parameter takes the next seed of one
/// process-wide counter-based stream, so a program that builds the same modules in the same order
/// gets the same values on every run, and two modules never share values.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "weft/core/random.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"

namespace weft::nn::detail {

/// A 64-bit seed from Philox's output for (key, index): distinct indices give unrelated seeds.
inline std::uint64_t philox_seed(std::uint64_t key, std::uint64_t index) {
  const weft::detail::random::Philox4x32 r(key, index);
  return (std::uint64_t(r.w[0]) << 32) | r.w[1];
}

/// The seeds of one module's random parameters, in the order the module draws them.
class InitSeeds {
 public:
  explicit InitSeeds(std::optional<std::uint64_t> seed) : seed_(seed) {}

  std::uint64_t next() {
    // The process-wide stream's key: any constant apart from the small seeds callers pick.
    constexpr std::uint64_t kProcessStream = 0x6E6E2E696E697421;  // "nn.init!"
    static std::atomic<std::uint64_t> process_counter{0};
    return seed_ ? philox_seed(*seed_, drawn_++) : philox_seed(kProcessStream, process_counter++);
  }

 private:
  std::optional<std::uint64_t> seed_;
  std::uint64_t drawn_ = 0;
};

// The process-wide counter above is one for every file; these call the factories, which differ
// between nvcc and host files (core/config.hpp, docs/architecture.md "ODR safety").
inline namespace WEFT_BACKEND_ABI {

/// U(-bound, bound), torch's `nn.init.uniform_(t, -bound, bound)`.
template <class T>
Tensor<T> uniform_init(const Shape& shape, double bound, std::uint64_t seed) {
  Tensor<T> t = rand<T>(shape, seed);
  t = (t * 2.0 - 1.0) * bound;
  return t;
}

/// N(0, 1), torch's `nn.init.normal_(t)`.
template <class T>
Tensor<T> normal_init(const Shape& shape, std::uint64_t seed) {
  return randn<T>(shape, seed);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn::detail
