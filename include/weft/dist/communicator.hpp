// SPDX-License-Identifier: MIT
/// @file Communicator: one MPI communicator of the runtime, its ranks and its count of header exchanges.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace weft::dist::detail {

/// A group's MPI communicator, shared by every Group handle of it. The runtime creates them (world
/// at init, the sub-meshes in init_device_mesh) on every rank in the same order, so `id`, the
/// creation index, names the same communicator on every member. `exchanges` counts the header
/// exchanges begun on it; a rank that leaves sends its counts, so that a rank waiting in an
/// exchange knows whether the one that left had entered it (then the exchange completes) or not
/// (then it never will).
struct Communicator {
  MPI_Comm comm = MPI_COMM_NULL;
  std::int64_t id = 0;
  std::vector<int> world_ranks;  // group rank -> world rank
  int rank = 0;                  // this process's rank in the group
  std::int64_t exchanges = 0;
  std::shared_ptr<void> header_buffer;  // the agreement's, reused by the next exchange
};

}  // namespace weft::dist::detail
