// SPDX-License-Identifier: MIT
/// @file NCCL collectives on flat CUDA buffers, handed to the CUDA backend where this file is compiled for it (nvcc with WEFT_DIST_NCCL) and refused elsewhere: the one place weft::dist's transports depend on how a file is compiled.
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/core/device.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"

#if defined(__CUDACC__) && defined(WEFT_DIST_NCCL)
#include "weft/backend/cuda/nccl.cuh"
#endif

namespace weft::detail {

/// A communicator as an opaque handle (an ncclComm_t where NCCL is compiled in).
using NcclHandle = void*;

/// The id every rank of a communicator joins with (an ncclUniqueId: NCCL_UNIQUE_ID_BYTES).
struct NcclUniqueId {
  char bytes[128] = {};
};

/// How a collective combines the ranks' elements (weft::dist::ReduceOp maps to it).
enum class NcclOp { sum, avg, max, min };

// Which of these run depends on how the file is compiled: in the backend's namespace
// (docs/architecture.md, ODR safety). WEFT_DIST_NCCL must be defined alike in every nvcc file.
inline namespace WEFT_BACKEND_ABI {

/// Whether this translation unit moves CUDA memory through NCCL.
inline constexpr bool kNcclCompiled =
#if defined(__CUDACC__) && defined(WEFT_DIST_NCCL)
    true;
#else
    false;
#endif

[[noreturn, gnu::cold]] inline void fail_no_nccl(const char* call) {
  fail(call, "this file was not compiled with NCCL: CUDA tensors travel by NCCL from files compiled by nvcc with "
             "-DWEFT_DIST_NCCL (else move them with .to(Device::cpu()))");
}

// The collectives run on the legacy default stream where weft's kernels run: the pack before and
// the unpack after are ordered with them, and a host read of the result waits for them.
#if defined(__CUDACC__) && defined(WEFT_DIST_NCCL)
static_assert(sizeof(ncclUniqueId) == sizeof(NcclUniqueId), "NcclUniqueId must hold an ncclUniqueId");

namespace nccl_impl {
inline ncclComm_t comm(NcclHandle h) { return static_cast<ncclComm_t>(h); }
/// NCCL's op: avg is NCCL's own (it divides by the rank count, no pass of ours); bool reduces as
/// a logical or (sum, max) or and (min).
template <Element T>
ncclRedOp_t op(NcclOp o) {
  if constexpr (std::is_same_v<T, bool>) return o == NcclOp::min ? ncclMin : ncclMax;
  switch (o) {
    case NcclOp::avg: return ncclAvg;
    case NcclOp::max: return ncclMax;
    case NcclOp::min: return ncclMin;
    default: return ncclSum;
  }
}
/// Runs call(comm) on `device` and checks what NCCL returned.
template <class Call>
void run(const char* name, NcclHandle handle, Device device, Call call) {
  CudaDeviceGuard guard(device.index());
  cuda::nccl::check_nccl(call(comm(handle)), name, comm(handle));
}
}  // namespace nccl_impl

/// A new unique id (drawn by one rank, which sends it to the others).
inline NcclUniqueId nccl_unique_id() {
  ncclUniqueId raw{};
  cuda::nccl::check_nccl(ncclGetUniqueId(&raw), "ncclGetUniqueId");
  NcclUniqueId id;
  __builtin_memcpy(id.bytes, &raw, sizeof raw);
  return id;
}

/// This rank's communicator of `size` ranks joined with `id`, on `device` (collective).
inline NcclHandle nccl_join(int size, const NcclUniqueId& id, int rank, Device device) {
  ncclUniqueId raw;
  __builtin_memcpy(&raw, id.bytes, sizeof raw);
  CudaDeviceGuard guard(device.index());
  ncclComm_t comm = nullptr;
  cuda::nccl::check_nccl(ncclCommInitRank(&comm, size, raw, rank), "ncclCommInitRank");
  return comm;
}

/// Flushes what is still queued on `comm`, frees its peers' connections and destroys it.
inline void nccl_release(NcclHandle comm) {
  ncclCommFinalize(nccl_impl::comm(comm));
  ncclCommDestroy(nccl_impl::comm(comm));
}

/// data = data (op) over the ranks, n elements.
template <Element T>
void nccl_all_reduce(NcclHandle comm, Device device, T* data, std::int64_t n, NcclOp op) {
  nccl_impl::run("ncclAllReduce", comm, device, [&](ncclComm_t c) {
    return ncclAllReduce(data, data, std::size_t(n), cuda::nccl::datatype<T>(), nccl_impl::op<T>(op), c, nullptr);
  });
}

/// data = rank root's data, n elements.
template <Element T>
void nccl_broadcast(NcclHandle comm, Device device, T* data, std::int64_t n, int root) {
  nccl_impl::run("ncclBroadcast", comm, device, [&](ncclComm_t c) {
    return ncclBroadcast(data, data, std::size_t(n), cuda::nccl::datatype<T>(), root, c, nullptr);
  });
}

/// out[k * n + i] = rank k's in[i].
template <Element T>
void nccl_all_gather(NcclHandle comm, Device device, T* out, const T* in, std::int64_t n) {
  nccl_impl::run("ncclAllGather", comm, device, [&](ncclComm_t c) {
    return ncclAllGather(in, out, std::size_t(n), cuda::nccl::datatype<T>(), c, nullptr);
  });
}

/// out[i] = (op) over ranks of in[rank * n + i].
template <Element T>
void nccl_reduce_scatter(NcclHandle comm, Device device, T* out, const T* in, std::int64_t n, NcclOp op) {
  nccl_impl::run("ncclReduceScatter", comm, device, [&](ncclComm_t c) {
    return ncclReduceScatter(in, out, std::size_t(n), cuda::nccl::datatype<T>(), nccl_impl::op<T>(op), c, nullptr);
  });
}

#else  // no NCCL in this file: every entry refuses (transport_error names the fix first)

inline NcclUniqueId nccl_unique_id() { fail_no_nccl("ncclGetUniqueId"); }
inline NcclHandle nccl_join(int, const NcclUniqueId&, int, Device) { fail_no_nccl("ncclCommInitRank"); }
inline void nccl_release(NcclHandle) {}
template <Element T>
void nccl_all_reduce(NcclHandle, Device, T*, std::int64_t, NcclOp) {
  fail_no_nccl("ncclAllReduce");
}
template <Element T>
void nccl_broadcast(NcclHandle, Device, T*, std::int64_t, int) {
  fail_no_nccl("ncclBroadcast");
}
template <Element T>
void nccl_all_gather(NcclHandle, Device, T*, const T*, std::int64_t) {
  fail_no_nccl("ncclAllGather");
}
template <Element T>
void nccl_reduce_scatter(NcclHandle, Device, T*, const T*, std::int64_t, NcclOp) {
  fail_no_nccl("ncclReduceScatter");
}

#endif

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
