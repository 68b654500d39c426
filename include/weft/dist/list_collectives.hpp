// SPDX-License-Identifier: MIT
/// @file all_reduce, broadcast, all_gather and reduce_scatter on TensorLists: each bucket of the list travels as one flat buffer, packed and unpacked by one foreach kernel each, or in place when the tensors already lie back to back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "weft/core/dtype.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/ops/factories.hpp"
#include "weft/dist/agreement.hpp"
#include "weft/dist/bucket.hpp"
#include "weft/dist/collectives.hpp"
#include "weft/dist/group.hpp"
#include "weft/dist/reduce_op.hpp"
#include "weft/dist/transport.hpp"

namespace weft::dist {

namespace detail {

// How a list travels (bucket.hpp): a member of 256 KiB or more (1 MiB on a GPU; a bucket's worth
// when that is less) travels from its own memory in pieces of at most bucket_bytes; the smaller
// members, concatenated, are cut into shared buckets of bucket_bytes. When every rank's list lies back to back in one storage
// (all_reduce and broadcast learn it in the agreement), the whole concatenation is cut into
// buckets instead. A bucket whose pieces lie back to back in one storage travels from its own
// memory, any other is packed into a staging buffer by one foreach kernel, moved by one MPI (or
// NCCL) call, and unpacked by one more kernel (avg's 1/size scale rides in the unpack). Strided
// members go through contiguous copies.
//
// Buckets run one after another. Overlapping them (MPI_Iallreduce on bucket i while packing
// bucket i+1, two staging buffers) was measured and dropped: MPI progresses a nonblocking
// collective only inside MPI calls, so the transfer waited for the pack anyway (GPT-2's 148
// gradients, 124M floats, 25 MB buckets, 2 ranks on 2 cores: 265 ms blocking, 314 ms overlapped;
// 4 ranks: 1172 and 1176 ms).

/// The Call of a list collective: one dtype, the list's length, total elements, and a hash of every
/// shape, of the device kind (MPI and NCCL ranks cannot meet) and of the bucket size (every rank
/// must cut the same buckets).
template <Element T>
Call list_call(Collective collective, const TensorList<T>& xs, Device device, std::int64_t bucket_bytes) {
  Call call{collective};
  call.dtype = int(dtype_of<T>);
  call.list_length = std::int64_t(xs.size());
  std::uint64_t h = kHashStart;
  for (const TensorView<T>& x : xs) {
    call.numel += x.defined() ? x.numel() : 0;
    h = hash_shape(x.shape(), h);
  }
  h = hash_word(h, std::uint64_t(device.kind()));
  call.shape_hash = hash_word(h, std::uint64_t(bucket_bytes));
  return call;
}

/// "a list of 3 float32 tensors [4, 8], [3], [0] (on cuda:0) in buckets of N bytes": how the
/// disagreement message shows one rank's list.
template <Element T>
std::string describe_list(const TensorList<T>& xs, Device device, std::int64_t bucket_bytes) {
  std::string s = weft::detail::cat("a list of ", xs.size(), " ", dtype_name<T>(), xs.size() == 1 ? " tensor" : " tensors");
  for (std::size_t k = 0; k < xs.size(); ++k) s += weft::detail::cat(k ? ", " : " ", xs[k].shape());
  if (!device.is_cpu()) s += weft::detail::cat(" on ", device);
  s += weft::detail::cat(" in buckets of ", bucket_bytes, " bytes");
  return s;
}

inline std::string bucket_error(const BucketOptions& options) {
  if (options.bucket_bytes > 0) return "";
  return weft::detail::cat("BucketOptions::bucket_bytes must be positive, got ", options.bucket_bytes);
}

/// The error of outs against ins for a collective along dim 0 over `ranks` ranks ("" when they
/// fit): all_gather's (`gather`) outs[k] has ranks times ins[k]'s rows (a 0-d ins[k] gathers into
/// [ranks]); reduce_scatter's ins[k] has ranks times outs[k]'s rows.
template <Element T>
std::string chunk_error(bool gather, const TensorList<T>& outs, const TensorList<T>& ins, int ranks) {
  if (outs.size() != ins.size())
    return weft::detail::cat("outs has ", outs.size(), " tensors and ins ", ins.size(), "; they pair index by index");
  for (std::size_t k = 0; k < ins.size(); ++k) {
    const Shape& in = ins[k].shape();
    const Shape& out = outs[k].shape();
    Shape want = gather ? in : out;  // the shape of the other list's tensor k
    if (gather) {
      if (want.rank() == 0) want.push_back(ranks);
      else want[0] *= ranks;
      if (!(out == want))
        return weft::detail::cat("tensor ", k, " of outs has shape ", out, ", but ", ranks, " ranks' ", in,
                                 " of ins gather into ", want);
      continue;
    }
    if (in.rank() == 0 || in[0] % ranks != 0)
      return weft::detail::cat("tensor ", k, " of ins has shape ", in, "; it needs a dim 0 that the ", ranks,
                               " ranks divide");
    want = in;
    want[0] /= ranks;
    if (!(out == want))
      return weft::detail::cat("tensor ", k, " of outs has shape ", out, ", but ins' ", in, " scatters over ", ranks,
                               " ranks into ", want);
  }
  return "";
}

inline namespace WEFT_BACKEND_ABI {

/// Why this rank's list cannot take part ("" when it can): a default-constructed member, members
/// on different devices, or a device this file cannot move. Sets `device` to the members' device.
template <Element T>
std::string list_error(const char* what, const TensorList<T>& xs, const Group& group, Device& device) {
  device = xs.empty() || !xs[0].defined() ? Device::cpu() : xs[0].device();
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (!xs[k].defined()) return weft::detail::cat("tensor ", k, " of ", what, " is empty (default-constructed)");
    if (xs[k].device() != device)
      return weft::detail::cat(what, " mixes devices: tensor 0 is on ", device, ", tensor ", k, " on ", xs[k].device(),
                               "; a list lives on one device");
  }
  return transport_error(what, device, group);
}

/// A staging buffer on one device, allocated on first use, reused by every bucket of a call and
/// grown when a bucket needs more. (Kept for the call only: a buffer kept between calls measured no
/// faster, docs/benchmarks.md "Distributed".)
template <Element T>
class BucketBuffer {
 public:
  explicit BucketBuffer(Device device) : device_(device) {}
  /// The first n elements, as a 1-D view.
  TensorView<T> get(std::int64_t n) {
    if (!buffer_.defined() || buffer_.numel() < n) buffer_ = empty<T>(Shape{n}, device_);
    return flat_range<T>(buffer_.view(), 0, n);
  }

 private:
  Device device_;
  Tensor<T> buffer_;
};

/// run *= scale in place (avg's division when the bucket travelled from its own memory).
template <Element T>
void scale_run(TensorView<T> run, double scale) {
  if constexpr (is_floating_v<T>)
    if (scale != 1.0) run *= scale;
}

/// outs[k] = ins[k] for every k, but where they are one tensor: what all_gather and
/// reduce_scatter do over one rank (one kernel a member; any layout, any overlap).
template <Element T>
void copy_pairs(const TensorList<T>& outs, const TensorList<T>& ins) {
  for (std::size_t k = 0; k < outs.size(); ++k)
    if (!same_elements(outs[k], ins[k])) outs[k] = ins[k];
}

template <class Transport, Element T>
void all_reduce_list(const Transport& wire, const TensorList<T>& xs, ReduceOp op, const BucketOptions& options,
                     Device device, int ranks, bool every_list_back_to_back) {
  const ContiguousList<T> list(xs);
  const double scale = op == ReduceOp::avg && !Transport::kAverages ? 1.0 / ranks : 1.0;
  BucketBuffer<T> buffer(device);
  for (const Bucket& b : plan_buckets(list.list, options, device, every_list_back_to_back)) {
    if (const std::optional<TensorView<T>> run = in_place_view(list.list, b)) {
      wire.all_reduce(run->data(), b.numel, op);
      scale_run(*run, scale);
      continue;
    }
    const TensorView<T> flat = buffer.get(b.numel);
    pack_bucket(flat, list.list, b);
    wire.all_reduce(flat.data(), b.numel, op);
    unpack_bucket(list.list, flat, b, 1, scale);
  }
  list.write_back(xs);
}

template <class Transport, Element T>
void broadcast_list(const Transport& wire, const TensorList<T>& xs, int root, const BucketOptions& options,
                    Device device, bool sends, bool every_list_back_to_back) {
  const ContiguousList<T> list(xs);
  BucketBuffer<T> buffer(device);
  for (const Bucket& b : plan_buckets(list.list, options, device, every_list_back_to_back)) {
    if (const std::optional<TensorView<T>> run = in_place_view(list.list, b)) {
      wire.broadcast(run->data(), b.numel, root);
      continue;
    }
    const TensorView<T> flat = buffer.get(b.numel);
    if (sends) pack_bucket(flat, list.list, b);
    wire.broadcast(flat.data(), b.numel, root);
    if (!sends) unpack_bucket(list.list, flat, b);
  }
  if (!sends) list.write_back(xs);
}

/// Bucket by bucket of ins: the send side from ins' own memory or packed, the receive side (the
/// ranks' blocks of outs) straight into outs when a bucket holds one whole tensor whose output is
/// contiguous, else staged and unpacked. Gathered in place (MPI_IN_PLACE) when in is exactly this
/// rank's block of out.
template <class Transport, Element T>
void all_gather_list(const Transport& wire, const TensorList<T>& outs, const TensorList<T>& ins,
                     const BucketOptions& options, Device device, int ranks, int rank) {
  const ContiguousList<T> in(ins), out(outs);
  BucketBuffer<T> send_buffer(device), receive_buffer(device);
  for (const Bucket& b : plan_buckets(in.list, options, device)) {
    const std::optional<TensorView<T>> sent = in_place_view(in.list, b);
    std::optional<TensorView<T>> received = in_place_view(out.list, b, ranks);
    // MPI and NCCL take overlapping buffers only gathered in place: in is this rank's block of out.
    bool gathered_in_place = false;
    if (sent && received && runs_overlap(*sent, *received)) {
      gathered_in_place = sent->data() == received->data() + std::int64_t(rank) * b.numel;
      if (!gathered_in_place) received.reset();
    }
    const T* source = nullptr;  // stays null when gathered in place
    if (sent && !gathered_in_place) {
      source = sent->data();
    } else if (!sent) {
      const TensorView<T> flat = send_buffer.get(b.numel);
      pack_bucket(flat, in.list, b);
      source = flat.data();
    }
    const TensorView<T> target = received ? *received : receive_buffer.get(ranks * b.numel);
    wire.all_gather(target.data(), source, b.numel);
    if (!received) unpack_bucket(out.list, target, b, ranks);
  }
  out.write_back(outs);
}

/// Bucket by bucket of outs: the send side (the ranks' blocks of ins) from ins' own memory when a
/// bucket holds one whole tensor, else packed; the receive side straight into outs when its
/// bucket lies back to back there (and does not overlap what is sent), else staged and unpacked.
template <class Transport, Element T>
void reduce_scatter_list(const Transport& wire, const TensorList<T>& outs, const TensorList<T>& ins, ReduceOp op,
                         const BucketOptions& options, Device device, int ranks) {
  const ContiguousList<T> in(ins), out(outs);
  const double scale = op == ReduceOp::avg && !Transport::kAverages ? 1.0 / ranks : 1.0;
  BucketBuffer<T> send_buffer(device), receive_buffer(device);
  for (const Bucket& b : plan_buckets(out.list, options, device)) {
    const std::optional<TensorView<T>> sent = in_place_view(in.list, b, ranks);
    std::optional<TensorView<T>> received = in_place_view(out.list, b);
    if (sent && received && runs_overlap(*sent, *received)) received.reset();
    const T* source = nullptr;
    if (sent) {
      source = sent->data();
    } else {
      const TensorView<T> flat = send_buffer.get(ranks * b.numel);
      pack_bucket(flat, in.list, b, ranks);
      source = flat.data();
    }
    const TensorView<T> target = received ? *received : receive_buffer.get(b.numel);
    wire.reduce_scatter(target.data(), source, b.numel, op);
    if (received) scale_run(*received, scale);
    else unpack_bucket(out.list, target, b, 1, scale);
  }
  out.write_back(outs);
}

/// The agreement of a list all_gather or reduce_scatter (`collective`; reduce_op -1 for a
/// gather), with the checks both make: outs and ins each defined and on one device, the same,
/// shaped as the ranks' chunks along dim 0. Returns the device.
template <Element T>
Device agree_on_pairs(Collective collective, const TensorList<T>& outs, const TensorList<T>& ins, const Group& group,
                      const BucketOptions& options, int reduce_op = -1) {
  Device device = Device::cpu(), in_device = Device::cpu();
  const std::string out_error = list_error("outs", outs, group, device);
  const std::string in_error = list_error("ins", ins, group, in_device);
  Call call = list_call(collective, ins, in_device, options.bucket_bytes);
  call.reduce_op = reduce_op;
  call.error = join_errors(
      {out_error, in_error,
       out_error.empty() && in_error.empty() && device != in_device && !outs.empty() && !ins.empty()
           ? weft::detail::cat("outs are on ", device, " and ins on ", in_device)
           : std::string(),
       chunk_error(collective == Collective::list_all_gather, outs, ins, group.size()),
       reduce_op >= 0 ? avg_error<T>(ReduceOp(reduce_op)) : std::string(), bucket_error(options)});
  agree(group, call, [&] { return describe_list(ins, in_device, options.bucket_bytes); });
  return in_device;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// xs[k] = reduce(op) over the group's ranks of xs[k], for every tensor, in place. Every rank
/// passes a list of the same length, dtype and shapes (empty tensors are fine) and the same
/// bucket size; avg needs a floating dtype. Each bucket of bucket_bytes travels as one message.
template <Element T>
void all_reduce(const TensorList<T>& xs, const Group& group, ReduceOp op = ReduceOp::sum, BucketOptions options = {}) {
  Device device = Device::cpu();
  const std::string error = detail::list_error("the list", xs, group, device);
  detail::Call call = detail::list_call(detail::Collective::list_all_reduce, xs, device, options.bucket_bytes);
  call.reduce_op = int(op);
  call.error = detail::join_errors({error, detail::avg_error<T>(op), detail::bucket_error(options)});
  call.back_to_back = detail::back_to_back(xs);
  const bool every_list_back_to_back =
      detail::agree(group, call, [&] { return detail::describe_list(xs, device, options.bucket_bytes); });
  if (group.size() == 1) return;  // op over one rank's list is the list (avg: x / 1)
  detail::with_transport(group, device, [&](const auto& wire) {
    detail::all_reduce_list(wire, xs, op, options, device, group.size(), every_list_back_to_back);
  });
}

/// xs[k] = group rank `root`'s xs[k], for every tensor, on every rank.
template <Element T>
void broadcast(const TensorList<T>& xs, int root, const Group& group, BucketOptions options = {}) {
  Device device = Device::cpu();
  const std::string error = detail::list_error("the list", xs, group, device);
  detail::Call call = detail::list_call(detail::Collective::list_broadcast, xs, device, options.bucket_bytes);
  call.root = root;
  const bool root_ok = root >= 0 && root < group.size();
  call.error = detail::join_errors(
      {error, detail::bucket_error(options),
       root_ok ? std::string()
               : weft::detail::cat("root ", root, " is not a rank of the group (0 to ", group.size() - 1, ")")});
  call.back_to_back = detail::back_to_back(xs);
  const bool every_list_back_to_back =
      detail::agree(group, call, [&] { return detail::describe_list(xs, device, options.bucket_bytes); });
  if (group.size() == 1) return;  // one rank is the root
  detail::with_transport(group, device, [&](const auto& wire) {
    detail::broadcast_list(wire, xs, root, options, device, group.rank() == root, every_list_back_to_back);
  });
}

/// outs[k] = the ranks' ins[k] concatenated along dim 0 in group-rank order, for every k:
/// outs[k].shape(0) == size * ins[k].shape(0), the other dims equal (a 0-d ins[k] gathers into
/// [size]). ins[k] may be this rank's own block of outs[k] (gathered in place). A bucket holds
/// bucket_bytes of ins (its staging buffer for outs: size times that).
template <Element T>
void all_gather(const TensorList<T>& outs, const TensorList<T>& ins, const Group& group, BucketOptions options = {}) {
  const Device device = detail::agree_on_pairs(detail::Collective::list_all_gather, outs, ins, group, options);
  if (group.size() == 1) return detail::copy_pairs(outs, ins);
  detail::with_transport(group, device, [&](const auto& wire) {
    detail::all_gather_list(wire, outs, ins, options, device, group.size(), group.rank());
  });
}

/// outs[k] = the group rank's chunk of reduce(op) over the ranks' ins[k], for every k:
/// ins[k].shape(0) == size * outs[k].shape(0), the other dims equal; rank r gets rows
/// [r * outs[k].shape(0), (r + 1) * outs[k].shape(0)). outs[k] may be this rank's own chunk of
/// ins[k]. A bucket holds bucket_bytes of outs (its staging buffer for ins: size times that).
template <Element T>
void reduce_scatter(const TensorList<T>& outs, const TensorList<T>& ins, const Group& group,
                    ReduceOp op = ReduceOp::sum, BucketOptions options = {}) {
  const Device device =
      detail::agree_on_pairs(detail::Collective::list_reduce_scatter, outs, ins, group, options, int(op));
  if (group.size() == 1) return detail::copy_pairs(outs, ins);  // avg over one rank: x / 1
  detail::with_transport(group, device, [&](const auto& wire) {
    detail::reduce_scatter_list(wire, outs, ins, op, options, device, group.size());
  });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::dist
