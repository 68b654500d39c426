// SPDX-License-Identifier: MIT
/// @file NCCL for CUDA tensors (nvcc with WEFT_DIST_NCCL only): a group's NCCL communicator, made on its first CUDA collective and kept with its MPI communicator, and the transport that moves flat device buffers.
#pragma once

#if defined(__CUDACC__) && defined(WEFT_DIST_NCCL)

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdint>
#include <string>

#include "weft/core/cuda_device.hpp"
#include "weft/core/device.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"
#include "weft/dist/group.hpp"
#include "weft/dist/reduce_op.hpp"

namespace weft::dist::detail {

/// Throws weft::Error naming the NCCL call, NCCL's text for the code and its last error message.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_nccl_error(ncclResult_t result, const char* call,
                                                                    ncclComm_t comm) {
  const char* last = ncclGetLastError(comm);
  throw Error(weft::detail::cat("weft::dist: NCCL call ", call, " failed: ", ncclGetErrorString(result),
                                last && *last ? std::string(" (") + last + ")" : std::string()));
}

inline void check_nccl(ncclResult_t result, const char* call, ncclComm_t comm = nullptr) {
  if (result != ncclSuccess) [[unlikely]] throw_nccl_error(result, call, comm);
}

/// NCCL's datatype of T; bool travels as bytes (sum and max reduce it as a logical or, min as and).
template <Element T>
ncclDataType_t nccl_datatype() {
  if constexpr (std::is_same_v<T, float>) return ncclFloat32;
  else if constexpr (std::is_same_v<T, double>) return ncclFloat64;
  else if constexpr (std::is_same_v<T, half>) return ncclFloat16;
  else if constexpr (std::is_same_v<T, bfloat16>) return ncclBfloat16;
  else if constexpr (std::is_same_v<T, std::int32_t>) return ncclInt32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return ncclInt64;
  else return ncclUint8;
}

/// NCCL's op: avg is NCCL's own (it divides by the rank count, no pass of ours).
template <Element T>
ncclRedOp_t nccl_op(ReduceOp op) {
  if constexpr (std::is_same_v<T, bool>) return op == ReduceOp::min ? ncclMin : ncclMax;
  switch (op) {
    case ReduceOp::avg: return ncclAvg;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
    default: return ncclSum;
  }
}

/// A group's NCCL communicator and the device it was made for. It lives as an attribute of the
/// group's MPI communicator: finalize frees that communicator, and MPI's delete callback
/// (release_nccl_attribute) destroys this one with it, on every rank in the same order.
struct NcclCommunicator {
  ncclComm_t comm = nullptr;
  Device device = Device::cpu();
};

inline int release_nccl_attribute(MPI_Comm, int, void* value, void*) {
  auto* nccl = static_cast<NcclCommunicator*>(value);
  ncclCommFinalize(nccl->comm);  // flushes what is still queued, then frees the peers' connections
  ncclCommDestroy(nccl->comm);
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
inline ncclComm_t nccl_communicator(const Group& group, Device device) {
  if (NcclCommunicator* nccl = cached_nccl(group)) return nccl->comm;
  ncclUniqueId id{};
  if (group.rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, communicator_of(group)->comm);
  weft::detail::CudaDeviceGuard guard(device.index());
  auto* nccl = new NcclCommunicator{nullptr, device};
  const ncclResult_t made = ncclCommInitRank(&nccl->comm, group.size(), id, group.rank());
  if (made != ncclSuccess) {
    delete nccl;
    throw_nccl_error(made, "ncclCommInitRank", nullptr);
  }
  MPI_Comm_set_attr(communicator_of(group)->comm, nccl_attribute_key(), nccl);
  return nccl->comm;
}

/// Moves a collective's flat buffers in device memory through NCCL, on the legacy default stream
/// where weft's kernels run: the pack before and the unpack after are ordered with it, and a
/// host read of the result (a copy to the host) waits for it.
struct NcclTransport {
  ncclComm_t comm = nullptr;
  Device device = Device::cpu();
  int rank = 0;
  static constexpr bool kAverages = true;  // ncclAvg

  template <Element T>
  void all_reduce(T* data, std::int64_t n, ReduceOp op) const {
    weft::detail::CudaDeviceGuard guard(device.index());
    check_nccl(ncclAllReduce(data, data, std::size_t(n), nccl_datatype<T>(), nccl_op<T>(op), comm, nullptr),
               "ncclAllReduce", comm);
  }
  template <Element T>
  void broadcast(T* data, std::int64_t n, int root) const {
    weft::detail::CudaDeviceGuard guard(device.index());
    check_nccl(ncclBroadcast(data, data, std::size_t(n), nccl_datatype<T>(), root, comm, nullptr), "ncclBroadcast", comm);
  }
  /// out[k * n + i] = rank k's in[i]; in == nullptr: this rank's part is already at out + rank * n.
  template <Element T>
  void all_gather(T* out, const T* in, std::int64_t n) const {
    weft::detail::CudaDeviceGuard guard(device.index());
    const T* source = in ? in : out + std::int64_t(rank) * n;
    check_nccl(ncclAllGather(source, out, std::size_t(n), nccl_datatype<T>(), comm, nullptr), "ncclAllGather", comm);
  }
  /// out[i] = reduce over ranks of in[rank * n + i].
  template <Element T>
  void reduce_scatter(T* out, const T* in, std::int64_t n, ReduceOp op) const {
    weft::detail::CudaDeviceGuard guard(device.index());
    check_nccl(ncclReduceScatter(in, out, std::size_t(n), nccl_datatype<T>(), nccl_op<T>(op), comm, nullptr),
               "ncclReduceScatter", comm);
  }
};

}  // namespace weft::dist::detail

#endif  // __CUDACC__ && WEFT_DIST_NCCL
