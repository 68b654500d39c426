// SPDX-License-Identifier: MIT
/// @file RuntimeState: the process-wide state of weft::dist (communicators, departed ranks, the broken flag).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/core/error.hpp"
#include "weft/dist/communicator.hpp"

namespace weft::dist::detail {

/// What a rank that left the job told the others: why, and how many header exchanges it had
/// begun on each communicator (by id).
struct Departure {
  std::string reason;
  std::map<std::int64_t, std::int64_t> exchanges;
};

/// The state between init() and finalize(). MPI communicators are freed at finalize (a Group
/// handle kept past it still answers rank() and size(), but its collectives throw).
struct RuntimeState {
  bool active = false;     // between init and finalize
  bool owns_mpi = false;   // init called MPI_Init_thread, so finalize calls MPI_Finalize
  bool finalized = false;  // finalize ran (MPI cannot be initialized again)
  std::string broken;      // non-empty: the failure that left an exchange abandoned
  MPI_Comm control = MPI_COMM_NULL;  // a dup of MPI_COMM_WORLD that carries only departures
  int world_rank = 0;
  int world_size = 1;
  std::shared_ptr<Communicator> world;
  std::vector<std::shared_ptr<Communicator>> communicators;  // every one created; id = index
  std::map<int, Departure> departed;                          // by world rank
  // Buffers an abandoned MPI_Iallgather may still read or write: kept until the process ends.
  std::vector<std::shared_ptr<void>> abandoned;
  std::terminate_handler previous_terminate = nullptr;
};

inline RuntimeState& state() {
  static RuntimeState s;
  return s;
}

/// Registers a new communicator of the runtime (freed at finalize).
inline std::shared_ptr<Communicator> adopt_communicator(MPI_Comm comm, std::vector<int> world_ranks) {
  RuntimeState& s = state();
  auto c = std::make_shared<Communicator>();
  c->comm = comm;
  c->id = std::int64_t(s.communicators.size());
  c->world_ranks = std::move(world_ranks);
  MPI_Comm_rank(comm, &c->rank);
  s.communicators.push_back(c);
  return c;
}

/// Throws unless init() ran and finalize() has not.
inline void require_active(const char* op) {
  const RuntimeState& s = state();
  if (!s.active)
    weft::detail::fail(op, s.finalized ? "the runtime was finalized" : "the runtime is not initialized",
         "; call weft::dist::init(argc, argv) (or construct a weft::dist::Runtime) first, finalize last");
}

}  // namespace weft::dist::detail
