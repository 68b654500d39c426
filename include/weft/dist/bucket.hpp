// SPDX-License-Identifier: MIT
/// @file Buckets of a TensorList for collectives: the plan that cuts the list into buckets, the views that pack a bucket into one flat buffer (one foreach kernel) and unpack it (one more), and the zero-copy test.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "weft/core/device.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/expr/operators.hpp"

namespace weft::dist {

/// How a list collective cuts its list into buckets, like DDP's bucket_cap_mb: each bucket
/// travels as one message of at most bucket_bytes (the staging buffer a packed bucket needs).
struct BucketOptions {
  std::int64_t bucket_bytes = 25 << 20;
};

namespace detail {

// A list travels in buckets of at most `capacity` elements, each one message. A member of at least
// `alone` elements (a weight matrix) travels alone, from its own memory: its row-major elements
// cut into pieces of at most `capacity` (1-D views), a bucket each, never packed. The smaller
// members (biases, norm weights) share buckets: their elements, concatenated in list order, cut
// at `capacity`, each bucket packed into one staging buffer by one foreach kernel. So a packed
// bucket fits one staging buffer of bucket_bytes, one 500 MB embedding gradient pipelines like
// many small tensors, and only the members too small to fill a message on their own are copied.
// The plan depends on the members' element counts (and on the flag below) only: every rank of
// a collective has agreed on the shapes, dtype, device kind and bucket size, so every rank cuts
// the same buckets, whatever the layout of its own tensors (contiguity is local: a strided
// member travels through a contiguous copy of itself, ContiguousList). Worked example, tensors of
// 2, 0, 3, 9 and 3 elements, capacity 6, alone 4:
//
//   t3 (9 >= 4):   bucket 0: (t3, 0, 6)                      6 elements, t3's own memory
//                  bucket 1: (t3, 6, 3)                      3 elements, t3's own memory
//   t0, t2, t4:    bucket 2: (t0, 0, 2) (t2, 0, 3) (t4, 0, 1)  6 elements, packed
//                  bucket 3: (t4, 1, 2)                      2 elements (t1 is empty: no piece)
//
// A member's buckets come where the member stands in the list; a shared bucket comes where it
// fills up (the last one at the end). When every rank's list lies back to back in one storage
// (views of one flat gradient buffer: the ranks tell each other in the agreement), nothing
// travels alone: the whole concatenation is cut at `capacity`, and every bucket is a run of
// that storage.

/// Elements [start, start + count) of list member `tensor`, in row-major order.
struct Piece {
  std::size_t tensor = 0;
  std::int64_t start = 0;
  std::int64_t count = 0;
};

/// One bucket: `numel` consecutive elements of the list's concatenation, held by `pieces`.
struct Bucket {
  std::int64_t numel = 0;
  std::vector<Piece> pieces;
};

/// Cuts tensors of `numels` elements into buckets of at most `capacity` (>= 1) elements: a tensor
/// of at least `alone` (>= 1) elements into buckets of its own, the others into shared buckets
/// (their concatenation cut at capacity); empty tensors take no piece and an empty list no bucket.
inline std::vector<Bucket> plan_buckets(const std::vector<std::int64_t>& numels, std::int64_t capacity,
                                        std::int64_t alone) {
  std::vector<Bucket> buckets;
  Bucket shared;  // the open bucket of the small members
  for (std::size_t k = 0; k < numels.size(); ++k) {
    const bool travels_alone = numels[k] >= alone;
    for (std::int64_t start = 0; start < numels[k];) {
      Bucket& b = travels_alone ? buckets.emplace_back() : shared;
      const std::int64_t count = std::min(numels[k] - start, capacity - b.numel);
      b.pieces.push_back({k, start, count});
      b.numel += count;
      start += count;
      if (shared.numel == capacity) buckets.push_back(std::exchange(shared, Bucket{}));
    }
  }
  if (shared.numel > 0) buckets.push_back(std::move(shared));
  return buckets;
}

/// Elements per bucket for T: bucket_bytes / sizeof(T), at least one element, and at most
/// INT_MAX (an MPI count is an int). bucket_bytes itself is checked by the caller.
template <Element T>
std::int64_t bucket_capacity(const BucketOptions& options) {
  return std::clamp<std::int64_t>(options.bucket_bytes / std::int64_t(sizeof(T)), 1, INT_MAX);
}

// From how many bytes a member travels alone, even in larger buckets. Packing a member costs two
// copies of its bytes (pack and unpack); travelling alone costs one more message (its latency).
// Host memory over MPI: a copy runs at ~8 GB/s and a message between ranks of one host costs a few
// microseconds. Measured on 2 ranks (64 MiB lists of equal members, all packed into 25 MiB buckets
// against each member alone, 3 runs): packing is the faster for 4-16 KiB members (alone takes
// 1.04-1.7x its time), 64 KiB is a toss-up (packed / alone 0.96-2.1x), travelling alone is 1.1-1.5x
// faster at 128-512 KiB and 1.4-2.4x from 1 MiB. 256 KiB keeps the small members' messages few, and
// two copies of 256 KiB (~64 us) also outweigh a network's tens of microseconds. CUDA memory over
// NCCL: a GPU copies ~100x faster while an NCCL call costs ~10 us, so packing stays the cheaper up
// to larger members: 1 MiB (not yet measured on a GPU). GPT-2's weight matrices (2.4 MB and up)
// travel alone either way; its biases and norm weights (12 KB at most, 147 KB stacked over the
// layers) are packed.
constexpr std::int64_t kAloneBytesHost = std::int64_t(256) << 10;
constexpr std::int64_t kAloneBytesCuda = std::int64_t(1) << 20;

/// Elements from which a member of T on `device` travels alone: kAloneBytesHost (or Cuda), or a
/// bucket's worth when that is less (a member that fills a bucket gains nothing from sharing one).
/// The ranks agreed on the device kind, so they agree on this.
template <Element T>
std::int64_t alone_numel(const BucketOptions& options, Device device) {
  const std::int64_t bytes = device.is_cuda() ? kAloneBytesCuda : kAloneBytesHost;
  return std::min(bucket_capacity<T>(options), std::max<std::int64_t>(bytes / std::int64_t(sizeof(T)), 1));
}

/// An `alone` that no member reaches: every member shares buckets.
constexpr std::int64_t kNeverAlone = std::numeric_limits<std::int64_t>::max();

/// Whether the members lie back to back in one storage, in list order (views of one flat
/// buffer; empty members anywhere).
template <Element T>
bool back_to_back(const TensorList<T>& xs) {
  const TensorView<T>* previous = nullptr;
  for (const TensorView<T>& x : xs) {
    if (x.numel() == 0) continue;
    if (!x.is_contiguous()) return false;
    if (previous && (x.storage() != previous->storage() || x.offset() != previous->offset() + previous->numel()))
      return false;
    previous = &x;
  }
  return true;
}

/// The bucket plan of a list whose members are all defined, on `device`. When every rank's list
/// lies back to back in one storage (`every_list_back_to_back`, which the ranks agreed on), no
/// member needs to travel alone: the concatenation cut at the capacity travels from that storage,
/// packing nothing, in the fewest messages.
template <Element T>
std::vector<Bucket> plan_buckets(const TensorList<T>& xs, const BucketOptions& options, Device device,
                                 bool every_list_back_to_back = false) {
  std::vector<std::int64_t> numels;
  numels.reserve(xs.size());
  for (const TensorView<T>& x : xs) numels.push_back(x.numel());
  const std::int64_t capacity = bucket_capacity<T>(options);
  return plan_buckets(numels, capacity, every_list_back_to_back ? kNeverAlone : alone_numel<T>(options, device));
}

/// The 1-D view of elements [start, start + count) of a contiguous member's row-major order.
template <Element T>
TensorView<T> flat_range(const TensorView<T>& x, std::int64_t start, std::int64_t count) {
  return TensorView<T>(x.storage(), Shape{count}, Strides{1}, x.offset() + start);
}

/// Views of a bucket's pieces in the contiguous members of `xs`, `blocks` times: member k is
/// read as `blocks` equal blocks of its elements (the ranks' dim-0 chunks of an all_gather
/// output or a reduce_scatter input; 1 block otherwise), and the piece's view in block r starts
/// at r * numel_k / blocks + start. Block-major order: [block][piece], the layout of the flat
/// buffer of `blocks` ranks (buffer_views).
template <Element T>
TensorList<T> piece_views(const TensorList<T>& xs, const Bucket& bucket, std::int64_t blocks = 1) {
  TensorList<T> views;
  for (std::int64_t r = 0; r < blocks; ++r)
    for (const Piece& p : bucket.pieces) {
      const TensorView<T>& x = xs[p.tensor];
      views.push_back(flat_range(x, r * (x.numel() / blocks) + p.start, p.count));
    }
  return views;
}

/// Views of a flat buffer laid out like piece_views(xs, bucket, blocks): block r's pieces back to
/// back from element r * bucket.numel.
template <Element T>
TensorList<T> buffer_views(const TensorView<T>& flat, const Bucket& bucket, std::int64_t blocks = 1) {
  TensorList<T> views;
  std::int64_t at = 0;
  for (std::int64_t r = 0; r < blocks; ++r)
    for (const Piece& p : bucket.pieces) {
      views.push_back(flat_range(flat, at, p.count));
      at += p.count;
    }
  return views;
}

/// The bucket's elements (blocks as in piece_views) as one 1-D view of the members' own memory
/// when its pieces lie back to back in one storage in that order (views of one flat gradient
/// buffer; with several blocks, a bucket that holds one whole tensor): then the collective runs
/// there and nothing is packed. A gap, an overlap, a repeated tensor or pieces out of order leave
/// the bucket to be packed (nullopt); so does a non-contiguous member.
template <Element T>
std::optional<TensorView<T>> in_place_view(const TensorList<T>& xs, const Bucket& bucket, std::int64_t blocks = 1) {
  if (bucket.pieces.empty()) return std::nullopt;
  for (const Piece& p : bucket.pieces)
    if (!xs[p.tensor].is_contiguous()) return std::nullopt;
  const TensorList<T> views = piece_views(xs, bucket, blocks);
  const TensorView<T>& first = views[0];
  std::int64_t next = first.offset();  // where the next view must start, in elements of the storage
  for (const TensorView<T>& v : views) {
    if (v.storage() != first.storage() || v.offset() != next) return std::nullopt;
    next += v.numel();
  }
  return flat_range(first, 0, blocks * bucket.numel);
}

/// Whether two contiguous runs (1-D views, as in_place_view returns) share an element.
template <Element T>
bool runs_overlap(const TensorView<T>& a, const TensorView<T>& b) {
  return a.storage() == b.storage() && a.numel() > 0 && b.numel() > 0 && a.offset() < b.offset() + b.numel() &&
         b.offset() < a.offset() + a.numel();
}

inline namespace WEFT_BACKEND_ABI {

/// A list whose members are all contiguous: strided members of `xs` replaced by contiguous copies
/// (one kernel each), so that every bucket's pieces are views and pack in one foreach kernel.
/// Strided members are rare (a list of gradients is contiguous); they cost one more copy each way.
template <Element T>
struct ContiguousList {
  TensorList<T> list;
  std::vector<std::size_t> copied;  // the members of `list` that are copies

  explicit ContiguousList(const TensorList<T>& xs) {
    for (std::size_t k = 0; k < xs.size(); ++k) {
      if (!xs[k].is_contiguous()) copied.push_back(k);
      list.push_back(xs[k].contiguous());
    }
  }
  /// Writes the copies back into the strided members of xs (one kernel each).
  void write_back(const TensorList<T>& xs) const {
    for (std::size_t k : copied) xs[k] = list[k];
  }
};

/// Copies the bucket's pieces of `xs` (blocks as in piece_views) into `flat`, in one foreach kernel.
template <Element T>
void pack_bucket(const TensorView<T>& flat, const TensorList<T>& xs, const Bucket& bucket, std::int64_t blocks = 1) {
  buffer_views(flat, bucket, blocks) = piece_views(xs, bucket, blocks);
}

/// xs' pieces = scale * flat (the inverse of pack_bucket), in one foreach kernel; avg's 1/size is
/// the scale, so that averaging costs no pass of its own. Integers only take scale 1.
template <Element T>
void unpack_bucket(const TensorList<T>& xs, const TensorView<T>& flat, const Bucket& bucket, std::int64_t blocks = 1,
                   double scale = 1.0) {
  TensorList<T> dst = piece_views(xs, bucket, blocks);
  if constexpr (is_floating_v<T>) {
    if (scale != 1.0) {
      dst = scale * buffer_views(flat, bucket, blocks);
      return;
    }
  }
  dst = buffer_views(flat, bucket, blocks);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail
}  // namespace weft::dist
