// SPDX-License-Identifier: MIT
/// @file The payload of each collective on contiguous host buffers (one MPI call, in chunks where MPI's int counts need it).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"
#include "weft/dist/group.hpp"
#include "weft/dist/mpi_types.hpp"
#include "weft/dist/reduce_op.hpp"

namespace weft::dist::detail {

// MPI counts are ints: all_reduce and broadcast go in chunks of this many elements; all_gather
// and reduce_scatter move at most INT_MAX elements per rank (per_rank_count_error).
constexpr std::int64_t kChunkElements = std::int64_t(1) << 30;

/// Why `n` elements per rank are too many for one MPI call ("" when they are not).
inline std::string per_rank_count_error(const char* what, std::int64_t n) {
  if (n <= INT_MAX) return "";
  return weft::detail::cat(what, " has ", n, " elements per rank; MPI moves at most ", INT_MAX,
                           " per rank in one call: split it along dim 0");
}

/// data[i] = reduce over ranks of data[i] (avg reduces as sum: the caller divides).
template <Element T>
void all_reduce_buffer(T* data, std::int64_t n, ReduceOp op, const Group& group) {
  for (std::int64_t at = 0; at < n; at += kChunkElements)
    MPI_Allreduce(MPI_IN_PLACE, data + at, int(std::min(kChunkElements, n - at)), mpi_datatype<T>(), mpi_op<T>(op),
                  communicator_of(group)->comm);
}

/// data = root's data.
template <Element T>
void broadcast_buffer(T* data, std::int64_t n, int root, const Group& group) {
  for (std::int64_t at = 0; at < n; at += kChunkElements)
    MPI_Bcast(data + at, int(std::min(kChunkElements, n - at)), mpi_datatype<T>(), root, communicator_of(group)->comm);
}

/// out[k * n + i] = rank k's in[i]; in == nullptr: this rank's part is already at out + rank * n.
template <Element T>
void all_gather_buffer(T* out, const T* in, std::int64_t n, const Group& group) {
  MPI_Allgather(in ? static_cast<const void*>(in) : MPI_IN_PLACE, int(n), mpi_datatype<T>(), out, int(n),
                mpi_datatype<T>(), communicator_of(group)->comm);
}

/// out[i] = reduce over ranks of in[rank * n + i] (avg reduces as sum: the caller divides).
template <Element T>
void reduce_scatter_buffer(T* out, const T* in, std::int64_t n, ReduceOp op, const Group& group) {
  MPI_Reduce_scatter_block(in, out, int(n), mpi_datatype<T>(), mpi_op<T>(op), communicator_of(group)->comm);
}

}  // namespace weft::dist::detail
