// SPDX-License-Identifier: MIT
/// @file NCCL for CUDA tensors: a group's NCCL communicator, made on its first CUDA collective and kept with its MPI communicator, and the transport that moves flat device buffers through backend/nccl.hpp (which refuses, in a file not compiled for NCCL).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "weft/backend/nccl.hpp"
#include "weft/core/device.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"
#include "weft/dist/group.hpp"
#include "weft/dist/reduce_op.hpp"

namespace weft::dist::detail {

// What runs depends on how the file is compiled (backend/nccl.hpp): in the backend's namespace
// (docs/architecture.md, ODR safety).
inline namespace WEFT_BACKEND_ABI {

/// A group's NCCL communicator and the device it was made for. It lives as an attribute of the
/// group's MPI communicator: finalize frees that communicator, and MPI's delete callback
/// (release_nccl_attribute) destroys this one with it, on every rank in the same order.
struct NcclCommunicator {
  weft::detail::NcclHandle comm = nullptr;
  Device device = Device::cpu();
};

inline int release_nccl_attribute(MPI_Comm, int, void* value, void*) {
  auto* nccl = static_cast<NcclCommunicator*>(value);
  weft::detail::nccl_release(nccl->comm);
  delete nccl;
  return MPI_SUCCESS;
}

/// The MPI attribute key of the NCCL communicator (made once per process).
inline int nccl_attribute_key() {
  static const int key = [] {
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &release_nccl_attribute, &k, nullptr);
    return k;
  }();
  return key;
}

/// The group's NCCL communicator if one was made, else null.
inline NcclCommunicator* cached_nccl(const Group& group) {
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(communicator_of(group)->comm, nccl_attribute_key(), &value, &found);
  return found ? static_cast<NcclCommunicator*>(value) : nullptr;
}

/// Why a CUDA list on `device` cannot use the group's NCCL communicator ("" when it can): a
/// communicator belongs to the device it was made on.
inline std::string nccl_device_error(const char* what, Device device, const Group& group) {
  const NcclCommunicator* nccl = communicator_of(group) ? cached_nccl(group) : nullptr;
  if (!nccl || nccl->device == device) return "";
  return weft::detail::cat(what, " is on ", device, ", but this rank's NCCL communicator of group '", group.name(),
                           "' was made on ", nccl->device, "; keep each rank's CUDA tensors on one device");
}

/// The group's NCCL communicator on `device`, made on first use: group rank 0 draws an
/// ncclUniqueId, MPI broadcasts it over the group, and every rank joins (collective: every rank
/// of the group calls it at the same collective, after the agreement).
inline weft::detail::NcclHandle nccl_communicator(const Group& group, Device device) {
  if (NcclCommunicator* nccl = cached_nccl(group)) return nccl->comm;
  weft::detail::NcclUniqueId id;
  if (group.rank() == 0) id = weft::detail::nccl_unique_id();
  MPI_Bcast(id.bytes, int(sizeof id.bytes), MPI_BYTE, 0, communicator_of(group)->comm);
  auto* nccl = new NcclCommunicator{weft::detail::nccl_join(group.size(), id, group.rank(), device), device};
  MPI_Comm_set_attr(communicator_of(group)->comm, nccl_attribute_key(), nccl);
  return nccl->comm;
}

/// NCCL's combination of `op` (the same four).
constexpr weft::detail::NcclOp nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::avg: return weft::detail::NcclOp::avg;
    case ReduceOp::max: return weft::detail::NcclOp::max;
    case ReduceOp::min: return weft::detail::NcclOp::min;
    default: return weft::detail::NcclOp::sum;
  }
}

/// Moves a collective's flat buffers in device memory through NCCL (backend/nccl.hpp), on the
/// stream where weft's kernels run.
struct NcclTransport {
  weft::detail::NcclHandle comm = nullptr;
  Device device = Device::cpu();
  int rank = 0;
  static constexpr bool kAverages = true;  // NCCL's avg

  template <Element T>
  void all_reduce(T* data, std::int64_t n, ReduceOp op) const {
    weft::detail::nccl_all_reduce(comm, device, data, n, nccl_op(op));
  }
  template <Element T>
  void broadcast(T* data, std::int64_t n, int root) const {
    weft::detail::nccl_broadcast(comm, device, data, n, root);
  }
  /// out[k * n + i] = rank k's in[i]; in == nullptr: this rank's part is already at out + rank * n.
  template <Element T>
  void all_gather(T* out, const T* in, std::int64_t n) const {
    weft::detail::nccl_all_gather(comm, device, out, in ? in : out + std::int64_t(rank) * n, n);
  }
  /// out[i] = reduce over ranks of in[rank * n + i].
  template <Element T>
  void reduce_scatter(T* out, const T* in, std::int64_t n, ReduceOp op) const {
    weft::detail::nccl_reduce_scatter(comm, device, out, in, n, nccl_op(op));
  }
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::dist::detail
