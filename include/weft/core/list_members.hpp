// SPDX-License-Identifier: MIT
/// @file ListMembers: a TensorList's members as flat arrays (element pointers, element offsets) kept beside its views, and the memo of the member checks its foreach calls passed.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/core/device.hpp"

namespace weft::detail {

/// A number no other list of this process has: a list's identity in the memo (an address could
/// be reused by a later list).
inline std::uint64_t next_list_serial() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

/// The lists of one foreach call whose member checks passed: the serials of its output lists in
/// order, then of each distinct input list, at the length they all had.
struct PassedListCheck {
  std::vector<std::uint64_t> serials;
  std::size_t outputs = 0;
  std::size_t size = 0;
  Device device = Device::cpu();
};

/// What a foreach call reads of a list's members, in arrays of one word per member, so that a
/// call over 10,000 small tensors walks 80 KB per list instead of each member's view and
/// storage (~4 cache lines each, cold after the list sat idle).
///
/// Why it can be kept and not rebuilt per call: a listed view is never rebound (assigning to
/// a TensorView writes its elements; the view keeps its storage alive, whose address never
/// changes), so a list's members change only through push_back, which appends here too. A
/// list of the same serial and length therefore has the same members, and member checks that
/// passed for a set of lists pass again: the first output list of a call keeps the last
/// kMemo such sets (`passed`), and a call that finds its own set there skips the member walk
/// (plan/foreach.hpp: check_foreach_statements). Only calls writing this list touch `passed`:
/// like its elements, it must not be written by two threads at once.
struct ListMembers {
  static constexpr std::size_t kMemo = 4;

  std::uint64_t serial = next_list_serial();
  std::vector<void*> data;             // member k's element 0 (nullptr: an empty view)
  std::vector<std::int64_t> start{0};  // start[k]: the elements of members 0 .. k-1; size() + 1 entries
  mutable std::array<PassedListCheck, kMemo> passed{};
  mutable std::size_t passed_count = 0;  // stores so far; the next one replaces the oldest

  std::size_t size() const { return data.size(); }
  void append(void* element0, std::int64_t numel) {
    data.push_back(element0);
    start.push_back(start.back() + numel);
  }
};

}  // namespace weft::detail
