// SPDX-License-Identifier: MIT
/// @file init, finalize and Runtime: the MPI runtime's lifetime, and how a rank that leaves tells the others.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numeric>
#include <string>
#include <vector>

#include "weft/core/error.hpp"
#include "weft/dist/control.hpp"
#include "weft/dist/mpi_types.hpp"
#include "weft/dist/state.hpp"

namespace weft::dist {

namespace detail {

/// Leaving the job, on every path (finalize, an exception through a Runtime, std::terminate):
/// tell every other rank why, wait until every other rank has left too (so no message is left
/// unmatched), then free the communicators and finalize MPI. A rank whose runtime is broken
/// ends the job with MPI_Abort(MPI_COMM_WORLD, 1) instead: MPI cannot cancel the exchange it
/// abandoned. Waiting for the others first lets every rank report its error before the abort.
inline void leave(const std::string& reason) {
  RuntimeState& s = state();
  if (!s.active) return;
  s.active = false;
  announce_departure(reason);
  await_departures();
  complete_announcement();
  if (!s.broken.empty()) MPI_Abort(MPI_COMM_WORLD, 1);
  for (auto& c : s.communicators) MPI_Comm_free(&c->comm);
  s.communicators.clear();
  s.world.reset();
  MPI_Comm_free(&s.control);
  free_float16_ops();
  std::set_terminate(s.previous_terminate);
  s.finalized = true;
  if (s.owns_mpi) MPI_Finalize();
}

/// Installed by init(): an uncaught exception on this rank still tells the others (with its
/// what()) before the process ends, so that no rank waits for it forever.
[[noreturn]] inline void on_terminate() {
  RuntimeState& s = state();
  std::terminate_handler previous = s.previous_terminate;
  if (s.active) {
    std::string reason = "it terminated";
    if (std::exception_ptr e = std::current_exception()) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        reason += std::string(" on an uncaught exception: ") + x.what();
      } catch (...) {
        reason += " on an uncaught exception";
      }
    }
    std::fprintf(stderr, "weft::dist: rank %d: %s\n", s.world_rank, reason.c_str());
    leave(reason);
  }
  if (previous) previous();
  std::abort();
}

}  // namespace detail

/// Starts the runtime: MPI_Init_thread(MPI_THREAD_FUNNELED) unless MPI is already initialized
/// (then finalize leaves MPI to its owner), the world communicator and the control channel.
/// Every rank calls it once; a second call does nothing.
inline void init(int& argc, char**& argv) {
  detail::RuntimeState& s = detail::state();
  if (s.active) return;
  if (s.finalized) weft::detail::fail("dist::init", "the runtime was finalized, and MPI cannot start twice");
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    s.owns_mpi = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &s.world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.world_size);
  MPI_Comm_dup(MPI_COMM_WORLD, &s.control);
  MPI_Comm world;
  MPI_Comm_dup(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(std::size_t(s.world_size));
  std::iota(ranks.begin(), ranks.end(), 0);
  s.world = detail::adopt_communicator(world, std::move(ranks));
  detail::create_float16_ops();
  s.departed.clear();
  s.previous_terminate = std::set_terminate(&detail::on_terminate);
  s.active = true;
}

/// Ends the runtime; idempotent. Collective in effect: it returns once every rank has left. A
/// rank that leaves while others wait for it in a collective makes them throw (see agree); if
/// this rank's runtime is broken, the job ends here with MPI_Abort(MPI_COMM_WORLD, 1).
inline void finalize() {
  detail::leave(std::uncaught_exceptions() > 0 ? "an exception propagated through its weft::dist::Runtime"
                                                : "it called finalize");
}

/// Whether init() ran and finalize() has not.
inline bool initialized() { return detail::state().active; }

/// init() in the constructor, finalize() in the destructor (also while an exception unwinds).
class Runtime {
 public:
  Runtime(int& argc, char**& argv) { init(argc, argv); }
  ~Runtime() { finalize(); }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
};

}  // namespace weft::dist
