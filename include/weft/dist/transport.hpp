// SPDX-License-Identifier: MIT
/// @file How a collective's flat buffers travel: MPI for host memory, NCCL for CUDA memory (in files built by nvcc with WEFT_DIST_NCCL).
#pragma once

#include <cstdint>
#include <string>

#include "weft/core/device.hpp"
#include "weft/core/error.hpp"
#include "weft/dist/group.hpp"
#include "weft/dist/nccl.hpp"
#include "weft/dist/reduce_op.hpp"
#include "weft/dist/transfer.hpp"

namespace weft::dist::detail {

/// Moves a collective's flat buffers in host memory through MPI (transfer.hpp).
struct MpiTransport {
  const Group* group = nullptr;
  static constexpr bool kAverages = false;  // avg travels as a sum: the caller divides

  template <Element T>
  void all_reduce(T* data, std::int64_t n, ReduceOp op) const {
    all_reduce_buffer(data, n, op, *group);
  }
  template <Element T>
  void broadcast(T* data, std::int64_t n, int root) const {
    broadcast_buffer(data, n, root, *group);
  }
  /// out[k * n + i] = rank k's in[i]; in == nullptr: this rank's part is already at out + rank * n.
  template <Element T>
  void all_gather(T* out, const T* in, std::int64_t n) const {
    all_gather_buffer(out, in, n, *group);
  }
  /// out[i] = reduce over ranks of in[rank * n + i].
  template <Element T>
  void reduce_scatter(T* out, const T* in, std::int64_t n, ReduceOp op) const {
    reduce_scatter_buffer(out, in, n, op, *group);
  }
};

// Which transports exist depends on how the file is compiled (nvcc, WEFT_DIST_NCCL): the functions
// below live in the backend's namespace (docs/architecture.md, ODR safety). WEFT_DIST_NCCL must be
// defined alike in every nvcc file of a program.
inline namespace WEFT_BACKEND_ABI {

/// Why tensors on `device` cannot travel over `group` from this file ("" when they can).
inline std::string transport_error(const char* what, Device device, const Group& group) {
  if (device.is_cpu()) return "";
  if (weft::detail::kNcclCompiled) return nccl_device_error(what, device, group);
  return weft::detail::cat(what, " is on ", device,
                           "; CUDA tensors travel by NCCL, from files compiled by nvcc with -DWEFT_DIST_NCCL "
                           "(else move them with .to(Device::cpu()))");
}

/// Calls f with the transport of `device`'s memory over `group` (checked by transport_error
/// first). The first CUDA collective of a group makes its NCCL communicator (collective).
template <class F>
void with_transport(const Group& group, Device device, F&& f) {
  if constexpr (weft::detail::kNcclCompiled)
    if (device.is_cuda()) return f(NcclTransport{nccl_communicator(group, device), device, group.rank()});
  f(MpiTransport{&group});
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::dist::detail
