// SPDX-License-Identifier: MIT
/// @file Helpers of the weft::dist tests: the run's seed (agreed by all ranks), each rank's deterministic random input, double references of the reductions, and same-text checks.
///
/// Every rank can rebuild every other rank's input (rank_values depends only on the run's seed,
/// the rank and a salt), so each rank checks its result against a reference it computes alone.
#pragma once

#include <doctest/doctest.h>

#include <weft/dist.hpp>

#include "error_check.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace dist_test {

using weft::bfloat16;
using weft::half;
using weft::Shape;
using weft::Tensor;
using weft::dist::ReduceOp;

/// The run's seed: $WEFT_TEST_SEED, else fresh entropy on rank 0; broadcast so that every rank
/// uses rank 0's. Rank 0 prints it once.
inline std::uint64_t run_seed() {
  static const std::uint64_t value = [] {
    const weft::dist::Group world = weft::dist::world();
    Tensor<std::int64_t> s = weft::zeros<std::int64_t>({1});
    const char* env = std::getenv("WEFT_TEST_SEED");
    if (env && *env) {
      s.data()[0] = std::int64_t(std::strtoull(env, nullptr, 0));
    } else {
      std::random_device rd;
      s.data()[0] = std::int64_t((std::uint64_t(rd()) << 32) ^ rd() ^
                                 std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()));
    }
    weft::dist::broadcast(s, 0, world);
    if (world.rank() == 0)
      std::fprintf(stderr, "[weft dist tests] WEFT_TEST_SEED=%llu (set it to replay the run)\n",
                   static_cast<unsigned long long>(s.data()[0]));
    return std::uint64_t(s.data()[0]);
  }();
  return value;
}

/// World rank `rank`'s input number `salt` (n elements). Integers in [-1000, 1000]; half and
/// bfloat16 multiples of 1/8 in [-4, 4] (their sums over a few ranks are exact in both formats,
/// so a reduction computed in float and rounded once per step must match exactly); float and
/// double uniform in [-1, 1).
template <weft::Element T>
std::vector<T> rank_values(std::int64_t n, int rank, std::uint64_t salt) {
  std::mt19937_64 gen(run_seed() ^ (salt * 0x9e3779b97f4a7c15ull) ^ (std::uint64_t(rank) * 0xbf58476d1ce4e5b9ull));
  std::vector<T> v;
  v.reserve(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) v.push_back(gen() % 2 == 1);
    else if constexpr (std::is_integral_v<T>) v.push_back(T(std::int64_t(gen() % 2001) - 1000));
    else if constexpr (weft::is_16bit_float_v<T>) v.push_back(T(float(std::int64_t(gen() % 65) - 32) / 8.0f));
    else v.push_back(T(std::uniform_real_distribution<double>(-1.0, 1.0)(gen)));
  }
  return v;
}

template <weft::Element T>
Tensor<T> rank_tensor(const Shape& shape, int rank, std::uint64_t salt) {
  return weft::from_vector<T>(rank_values<T>(shape.numel(), rank, salt), shape);
}

/// The inputs of a group's ranks, in group-rank order.
template <weft::Element T>
std::vector<std::vector<T>> group_values(const weft::dist::Group& group, std::int64_t n, std::uint64_t salt) {
  std::vector<std::vector<T>> all;
  for (int world_rank : group.world_ranks()) all.push_back(rank_values<T>(n, world_rank, salt));
  return all;
}

/// reduce(op) of xs in double (bool: sum and max are or, min is and).
inline double reduce_reference(const std::vector<double>& xs, ReduceOp op, bool logical) {
  double r = xs[0];
  for (std::size_t k = 1; k < xs.size(); ++k) {
    if (op == ReduceOp::max || (logical && op != ReduceOp::min)) r = std::max(r, xs[k]);
    else if (op == ReduceOp::min) r = std::min(r, xs[k]);
    else r += xs[k];
  }
  return op == ReduceOp::avg ? r / double(xs.size()) : r;
}

/// Checks got[i] == reduce(op) over inputs[k][offset + i]. Exact except float and double sums:
/// n ranks' sum in any order is within (n - 1) eps sum|x| of the exact one, avg adds one
/// rounding of the quotient.
template <weft::Element T>
void check_reduced(const std::vector<T>& got, const std::vector<std::vector<T>>& inputs, ReduceOp op,
                   std::int64_t offset = 0) {
  const double eps = std::is_same_v<T, float> ? double(std::numeric_limits<float>::epsilon())
                     : std::is_same_v<T, double> ? std::numeric_limits<double>::epsilon()
                                                 : 0.0;
  std::int64_t wrong = 0, first = -1;
  double first_got = 0, first_want = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    std::vector<double> xs;
    double magnitude = 0;
    for (const std::vector<T>& in : inputs) {
      xs.push_back(double(in[std::size_t(offset) + i]));
      magnitude += std::abs(xs.back());
    }
    const double want = reduce_reference(xs, op, std::is_same_v<T, bool>);
    const bool sums = op == ReduceOp::sum || op == ReduceOp::avg;
    double bound = sums ? double(inputs.size() - 1) * eps * magnitude : 0.0;
    if (op == ReduceOp::avg) bound = bound / double(inputs.size()) + eps * std::abs(want);
    if (!(std::abs(double(got[i]) - want) <= bound)) {
      if (wrong++ == 0) {
        first = std::int64_t(i);
        first_got = double(got[i]);
        first_want = want;
      }
    }
  }
  INFO("dtype ", std::string(weft::dtype_name<T>()), ", op ", std::string(weft::dist::reduce_op_name(op)),
       ": first wrong element ", first,
       " is ", first_got, ", want ", first_want);
  CHECK(wrong == 0);
}

/// Whether a and b hold the same bits (NaN poison compares equal to itself).
template <weft::Element T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if constexpr (std::is_same_v<T, bool>) return a == b;  // std::vector<bool> packs its bits
  else return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// A tensor of NaN (floats) or a sentinel (integers, bool true): what a collective must overwrite.
template <weft::Element T>
Tensor<T> poisoned(const Shape& shape) {
  if constexpr (std::is_same_v<T, bool>) return weft::full<T>(shape, true);
  else if constexpr (std::is_integral_v<T>) return weft::full<T>(shape, T(-12345));
  else return weft::full<T>(shape, T(std::numeric_limits<float>::quiet_NaN()));
}

/// "group 'world' (world ranks 0, 1, 2, 3)", as the errors name a group.
inline std::string group_text(const weft::dist::Group& group) {
  std::string s = "group '" + group.name() + "' (world ranks ";
  for (std::size_t k = 0; k < group.world_ranks().size(); ++k)
    s += (k ? ", " : "") + std::to_string(group.world_ranks()[k]);
  return s + ")";
}

/// "0, 1, 2, 3": the group ranks 0 to size - 1.
inline std::string all_ranks(int size) {
  std::string s;
  for (int k = 0; k < size; ++k) s += (k ? ", " : "") + std::to_string(k);
  return s;
}

/// Checks that every rank of the group holds the same text (by hash and length).
inline void check_same_text_on_every_rank(const std::string& text, const weft::dist::Group& group) {
  Tensor<std::int64_t> mine = weft::from_vector<std::int64_t>(
      {std::int64_t(std::hash<std::string>{}(text)), std::int64_t(text.size())}, Shape{2});
  Tensor<std::int64_t> all = weft::zeros<std::int64_t>({2 * group.size()});
  weft::dist::all_gather(all, mine, group);
  bool same = true;
  for (int k = 0; k < group.size(); ++k)
    same &= all.data()[2 * k] == mine.data()[0] && all.data()[2 * k + 1] == mine.data()[1];
  INFO("this rank's text: ", text);
  CHECK(same);
}

/// Runs f, which must throw weft::Error on every rank of `group` with the text `want`.
template <class F>
void check_every_rank_throws(const weft::dist::Group& group, const std::string& want, F&& f) {
  const std::string got = weft_test::error_of(f);
  CHECK(got == want);
  check_same_text_on_every_rank(got, group);
}

/// check_every_rank_throws, and then x, which the failed call could have written, is unchanged.
template <weft::Element T, class F>
void check_rejected(const Tensor<T>& x, const weft::dist::Group& group, const std::string& want, F&& f) {
  const std::vector<T> before = x.to_vector();
  check_every_rank_throws(group, want, f);
  CHECK(same_bits(x.to_vector(), before));
}

}  // namespace dist_test
