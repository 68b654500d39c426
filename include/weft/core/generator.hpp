// SPDX-License-Identifier: MIT
/// @file Generator, the (seed, offset) state of counter-based random draws; the global one that manual_seed sets; RandomSource, the argument that picks one.
///
/// A draw of n values reserves the Philox counters [offset, offset + n) of the generator's seed
/// and advances the offset past them; value i of the draw is a pure function of (seed,
/// offset + i) (core/random.hpp). So what a program draws depends only on the seed and the order
/// of its draws: never on the thread count, the threads' schedule or the device.
#pragma once

#include <concepts>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

namespace weft {

namespace detail::random {
/// The Philox counters one draw owns: key `seed`, value i from counter `first + i`.
struct Counters {
  std::uint64_t seed = 0;
  std::uint64_t first = 0;
};
}  // namespace detail::random

/// A random generator (torch.Generator): a seed and the offset of the next unused counter.
/// Reserving counters is thread-safe; reseeding while another thread draws leaves which seed
/// that draw used unspecified (as torch). Not copyable: pass it by reference.
class Generator {
 public:
  /// torch's default seed (67280421310721), so that a program that never seeds is reproducible.
  static constexpr std::uint64_t kDefaultSeed = 67280421310721ull;

  explicit Generator(std::uint64_t seed = kDefaultSeed) : seed_(seed) {}
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  /// Restart at counter 0 of `seed` (torch.Generator.manual_seed).
  void manual_seed(std::uint64_t seed) {
    std::lock_guard lock(mutex_);
    seed_ = seed;
    offset_ = 0;
  }
  /// The seed of the current stream (torch.Generator.initial_seed).
  std::uint64_t initial_seed() const {
    std::lock_guard lock(mutex_);
    return seed_;
  }
  /// How many counters have been reserved since the last seeding (torch's philox offset).
  std::uint64_t offset() const {
    std::lock_guard lock(mutex_);
    return offset_;
  }
  /// Continue from counter `offset` of the current seed (with offset(), a saved and restored state).
  void set_offset(std::uint64_t offset) {
    std::lock_guard lock(mutex_);
    offset_ = offset;
  }
  /// The next n counters, owned by one draw: [offset, offset + n) of the current seed.
  detail::random::Counters reserve(std::uint64_t n) {
    std::lock_guard lock(mutex_);
    const detail::random::Counters range{seed_, offset_};
    offset_ += n;
    return range;
  }

 private:
  mutable std::mutex mutex_;
  std::uint64_t seed_;
  std::uint64_t offset_ = 0;
};

/// The generator every draw without a seed or a Generator uses (torch.default_generator). One per
/// program: a function, not an inline variable, so that nvcc and host translation units share it.
inline Generator& default_generator() {
  static Generator generator;
  return generator;
}

/// Where a random op takes its counters (torch's `generator=` argument): a Generator the caller
/// owns (`gen`), a fresh Generator(seed) (a number: the values depend on the seed alone), or, by
/// default, the global generator. Made in the call (a parameter type), never stored.
class RandomSource {
 public:
  RandomSource() : generator_(&default_generator()) {}
  // Implicit, so that a call reads rand<float>(shape, gen) or rand<float>(shape, 7).
  RandomSource(Generator& gen) : generator_(&gen) {}
  template <std::integral Seed>
  RandomSource(Seed seed) : own_(std::in_place, std::uint64_t(seed)), generator_(&*own_) {}
  RandomSource(const RandomSource&) = delete;
  RandomSource& operator=(const RandomSource&) = delete;

  Generator& generator() const { return *generator_; }

 private:
  std::optional<Generator> own_;
  Generator* generator_;
};

/// Reseed the global generator and restart its counters (torch.manual_seed).
inline void manual_seed(std::uint64_t seed) { default_generator().manual_seed(seed); }

/// The global generator's seed (torch.initial_seed).
inline std::uint64_t initial_seed() { return default_generator().initial_seed(); }

}  // namespace weft
