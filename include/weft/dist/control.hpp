// SPDX-License-Identifier: MIT
/// @file The control channel: a rank that leaves tells every other rank why, on a private communicator.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "weft/dist/state.hpp"

namespace weft::dist::detail {

// A departure message: [n, (id, exchanges) x n] as int64, then the reason's bytes.
constexpr int kDepartureTag = 7;

/// The pending sends of this rank's own departure (completed before MPI_Finalize).
struct Announcement {
  std::vector<std::byte> message;
  std::vector<MPI_Request> requests;
};

inline Announcement& announcement() {
  static Announcement a;
  return a;
}

/// Sends this rank's departure to every other rank (nonblocking; complete_announcement waits).
inline void announce_departure(const std::string& reason) {
  RuntimeState& s = state();
  std::vector<std::int64_t> head = {std::int64_t(s.communicators.size())};
  for (const auto& c : s.communicators) {
    head.push_back(c->id);
    head.push_back(c->exchanges);
  }
  Announcement& a = announcement();
  a.message.resize(head.size() * sizeof(std::int64_t) + reason.size());
  std::memcpy(a.message.data(), head.data(), head.size() * sizeof(std::int64_t));
  std::memcpy(a.message.data() + head.size() * sizeof(std::int64_t), reason.data(), reason.size());
  for (int r = 0; r < s.world_size; ++r) {
    if (r == s.world_rank) continue;
    a.requests.emplace_back();
    MPI_Isend(a.message.data(), int(a.message.size()), MPI_BYTE, r, kDepartureTag, s.control, &a.requests.back());
  }
}

inline void complete_announcement() {
  Announcement& a = announcement();
  MPI_Waitall(int(a.requests.size()), a.requests.data(), MPI_STATUSES_IGNORE);
  a = Announcement{};
}

/// Receives the departure that `status` (from a probe) describes and records it.
inline void receive_departure(const MPI_Status& status) {
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  std::vector<std::byte> message(std::size_t(bytes) + sizeof(std::int64_t) * 2);
  MPI_Recv(message.data(), bytes, MPI_BYTE, status.MPI_SOURCE, kDepartureTag, state().control, MPI_STATUS_IGNORE);
  auto word = [&](std::size_t i) {
    std::int64_t v;
    std::memcpy(&v, message.data() + i * sizeof(std::int64_t), sizeof v);
    return v;
  };
  Departure d;
  const std::int64_t n = word(0);
  for (std::int64_t i = 0; i < n; ++i) d.exchanges[word(std::size_t(1 + 2 * i))] = word(std::size_t(2 + 2 * i));
  const std::size_t head = std::size_t(1 + 2 * n) * sizeof(std::int64_t);
  d.reason.assign(reinterpret_cast<const char*>(message.data()) + head, std::size_t(bytes) - head);
  state().departed[status.MPI_SOURCE] = std::move(d);
}

/// Records every departure that has arrived, without waiting.
inline void poll_departures() {
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kDepartureTag, state().control, &arrived, &status);
    if (!arrived) return;
    receive_departure(status);
  }
}

/// Waits until every other rank has left (each one's message received).
inline void await_departures() {
  RuntimeState& s = state();
  while (int(s.departed.size()) < s.world_size - 1) {
    MPI_Status status;
    MPI_Probe(MPI_ANY_SOURCE, kDepartureTag, s.control, &status);
    receive_departure(status);
  }
}

}  // namespace weft::dist::detail
