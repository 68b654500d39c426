// SPDX-License-Identifier: MIT
/// @file The buckets of list collectives without MPI: the plan (large members alone, the small ones sharing buckets), pack and unpack (one foreach kernel each, every dtype), the ranks' block layout, strided members and the zero-copy test.
#include "list_reference.hpp"
#include "log_capture.hpp"

#include <weft/dist/bucket.hpp>
#include <weft/log/log.hpp>

#include <climits>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace weft_test;
using weft::dist::BucketOptions;
using weft::dist::detail::Bucket;
using weft::dist::detail::Piece;

namespace dist_bucket_test {

/// What bucket b holds, element by element: values[p.tensor][block * numels[p.tensor] + p.start + i]
/// for each piece p, block after block (the layout of pack_bucket's flat buffer; numels: one
/// block's elements of each member).
std::vector<double> bucket_values(const std::vector<std::vector<double>>& values, const std::vector<std::int64_t>& numels,
                                  const Bucket& b, std::int64_t blocks = 1) {
  std::vector<double> v;
  for (std::int64_t r = 0; r < blocks; ++r)
    for (const Piece& p : b.pieces)
      for (std::int64_t i = 0; i < p.count; ++i)
        v.push_back(values[p.tensor][std::size_t(r * numels[p.tensor] + p.start + i)]);
  return v;
}

/// Checks the invariants of a plan: every bucket holds 1 to `capacity` elements, its pieces add up
/// to its numel; a tensor of at least `alone` elements has buckets of its own, its pieces in
/// order, all full but its last; the smaller tensors' pieces, walked bucket by bucket, visit
/// their concatenation (list order, row-major) once, in full buckets but the last; every element
/// of every tensor is in exactly one piece.
void check_plan(const std::vector<Bucket>& buckets, const std::vector<std::int64_t>& numels, std::int64_t capacity,
                std::int64_t alone) {
  std::vector<std::int64_t> next(numels.size(), 0);  // the element of tensor k its next piece must start at
  std::size_t small = 0;                              // the small tensor whose piece comes next
  auto skip_done_small = [&] {
    while (small < numels.size() && (numels[small] >= alone || next[small] == numels[small])) ++small;
  };
  skip_done_small();
  std::size_t partial_shared = 0;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    CAPTURE(b);
    const Bucket& bucket = buckets[b];
    REQUIRE(!bucket.pieces.empty());
    CHECK(bucket.numel >= 1);
    CHECK(bucket.numel <= capacity);
    std::int64_t sum = 0;
    for (const Piece& p : bucket.pieces) sum += p.count;
    CHECK(sum == bucket.numel);
    const std::size_t first = bucket.pieces[0].tensor;
    REQUIRE(first < numels.size());
    if (numels[first] >= alone) {  // a bucket of its own: one piece, the next of that tensor
      REQUIRE(bucket.pieces.size() == 1);
      const Piece& p = bucket.pieces[0];
      CHECK(p.start == next[first]);
      next[first] += p.count;
      REQUIRE(next[first] <= numels[first]);
      if (next[first] < numels[first]) CHECK(p.count == capacity);  // all full but the last
      continue;
    }
    if (bucket.numel < capacity) ++partial_shared;
    for (const Piece& p : bucket.pieces) {
      REQUIRE(small < numels.size());
      CHECK(p.tensor == small);
      CHECK(p.start == next[small]);
      CHECK(p.count > 0);
      next[small] += p.count;
      REQUIRE(next[small] <= numels[small]);
      skip_done_small();
    }
  }
  CHECK(partial_shared <= 1);
  if (partial_shared == 1) CHECK(buckets.back().numel < capacity);  // the last shared bucket closes the plan
  for (std::size_t k = 0; k < numels.size(); ++k) {
    CAPTURE(k);
    CHECK(next[k] == numels[k]);  // every element is in a bucket
  }
}

std::vector<std::int64_t> numels_of(const std::vector<Shape>& shapes) {
  std::vector<std::int64_t> n;
  for (const Shape& s : shapes) n.push_back(s.numel());
  return n;
}

/// Packs bucket `index` of xs (blocks as in piece_views) into a poisoned flat buffer, checks that
/// it holds bucket_values (and, when `count_kernels`, that packing ran one foreach kernel), and
/// returns the buffer.
template <class T>
Tensor<T> pack_checked(const TensorList<T>& xs, const std::vector<std::vector<double>>& values,
                       const std::vector<std::int64_t>& numels, const Bucket& b, std::size_t index,
                       std::int64_t blocks, bool count_kernels) {
  Tensor<T> flat = weft::empty<T>(Shape{blocks * b.numel});
  poison(flat);
  if (count_kernels) {
    LogCapture capture;
    weft::set_logs("+foreach");
    weft::dist::detail::pack_bucket<T>(flat, xs, b, blocks);
    weft::set_logs("");
    CHECK(LogCapture::count(capture.text(), "[weft:foreach]") == 1);
  } else {
    weft::dist::detail::pack_bucket<T>(flat, xs, b, blocks);
  }
  const std::vector<double> got = values_of(flat);
  const std::vector<double> want = bucket_values(values, numels, b, blocks);
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      INFO("block ", std::int64_t(i) / b.numel, " element ", std::int64_t(i) % b.numel, " of bucket ", index, ": got ",
           got[i], ", want ", want[i]);
      CHECK(got[i] == want[i]);
      break;
    }
  return flat;
}

/// A row of one contiguous Tensor of `n` elements holding 0, 1, ..., n - 1 (exact in every dtype used).
Tensor<float> counting_floats(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  return weft::from_vector<float>(v, Shape{n});
}

struct LogsQuiet {
  ~LogsQuiet() { weft::set_logs(""); }
};

}  // namespace dist_bucket_test

using namespace dist_bucket_test;

TEST_SUITE("cpu") {

TEST_CASE("dist bucket: the plan gives large tensors buckets of their own and cuts the small ones' concatenation") {
  using weft::dist::detail::plan_buckets;
  auto same = [](const Piece& p, std::size_t k, std::int64_t s, std::int64_t c) {
    return p.tensor == k && p.start == s && p.count == c;
  };
  // The worked example of bucket.hpp: capacity 6, alone from 4 elements.
  const std::vector<Bucket> b = plan_buckets({2, 0, 3, 9, 3}, 6, 4);
  REQUIRE(b.size() == 4);
  REQUIRE(b[0].pieces.size() == 1);
  CHECK(same(b[0].pieces[0], 3, 0, 6));
  REQUIRE(b[1].pieces.size() == 1);
  CHECK(same(b[1].pieces[0], 3, 6, 3));
  REQUIRE(b[2].pieces.size() == 3);
  CHECK(same(b[2].pieces[0], 0, 0, 2));
  CHECK(same(b[2].pieces[1], 2, 0, 3));
  CHECK(same(b[2].pieces[2], 4, 0, 1));
  REQUIRE(b[3].pieces.size() == 1);
  CHECK(same(b[3].pieces[0], 4, 1, 2));
  CHECK((b[0].numel == 6 && b[1].numel == 3 && b[2].numel == 6 && b[3].numel == 2));

  // Nothing alone: the concatenation cut at the capacity, tensors cut across buckets.
  const std::int64_t never = std::int64_t(1) << 62;
  const std::vector<Bucket> c = plan_buckets({5, 0, 3, 9}, 6, never);
  REQUIRE(c.size() == 3);
  REQUIRE(c[0].pieces.size() == 2);
  CHECK((same(c[0].pieces[0], 0, 0, 5) && same(c[0].pieces[1], 2, 0, 1)));
  REQUIRE(c[1].pieces.size() == 2);
  CHECK((same(c[1].pieces[0], 2, 1, 2) && same(c[1].pieces[1], 3, 0, 4)));
  REQUIRE(c[2].pieces.size() == 1);
  CHECK(same(c[2].pieces[0], 3, 4, 5));

  CHECK(plan_buckets({}, 4, 2).empty());
  CHECK(plan_buckets({0, 0, 0}, 4, 1).empty());
  CHECK(plan_buckets({3, 3}, 6, never).size() == 1);  // exactly full: one bucket
  CHECK(plan_buckets({3, 3}, 6, 3).size() == 2);      // each alone
  CHECK(plan_buckets({6, 6}, 6, never).size() == 2);  // a tensor per bucket, no empty third
  CHECK(plan_buckets({4, 0, 3}, 1, 1).size() == 7);
  CHECK(plan_buckets({1, 9, 1}, 100, 5).size() == 2);  // the two small ones share a bucket after the large one

  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::int64_t> numels(std::size_t(rng.integer(0, 12)));
    for (auto& n : numels) n = rng.chance(0.2) ? 0 : rng.integer(1, 40);
    const std::int64_t capacity = rng.integer(1, 50);
    const std::int64_t alone = rng.chance(0.2) ? never : rng.integer(1, 60);
    CAPTURE(trial);
    CAPTURE(capacity);
    CAPTURE(alone);
    check_plan(plan_buckets(numels, capacity, alone), numels, capacity, alone);
  }

  // Elements per bucket: bucket_bytes / sizeof(T), at least one, at most an MPI count.
  using weft::dist::detail::bucket_capacity;
  CHECK(bucket_capacity<float>(BucketOptions{}) == (25 << 20) / 4);
  CHECK(bucket_capacity<double>(BucketOptions{100}) == 12);
  CHECK(bucket_capacity<double>(BucketOptions{3}) == 1);
  CHECK(bucket_capacity<weft::half>(BucketOptions{std::int64_t(1) << 40}) == INT_MAX);
  // Alone from 256 KiB on the host, 1 MiB on a GPU, or from a bucket's worth when buckets are smaller.
  using weft::dist::detail::alone_numel;
  const weft::Device cpu = weft::Device::cpu(), cuda = weft::Device::cuda(0);
  CHECK(alone_numel<float>(BucketOptions{}, cpu) == (256 << 10) / 4);
  CHECK(alone_numel<float>(BucketOptions{}, cuda) == (1 << 20) / 4);
  CHECK(alone_numel<weft::bfloat16>(BucketOptions{}, cpu) == (256 << 10) / 2);
  CHECK(alone_numel<double>(BucketOptions{100}, cpu) == 12);
  CHECK(alone_numel<double>(BucketOptions{100}, cuda) == 12);
  CHECK(alone_numel<std::int64_t>(BucketOptions{3}, cpu) == 1);
  CHECK(alone_numel<bool>(BucketOptions{std::int64_t(1) << 40}, cpu) == 256 << 10);

  // GPT-2 small's gradients in the default buckets: every weight matrix (2.4 MB and up) travels
  // alone, the 98 biases and norm weights (12 KB at most, 121,344 floats) share one bucket; the
  // same on a GPU.
  std::vector<std::int64_t> gpt2{50304 * 768, 1024 * 768};
  for (int layer = 0; layer < 12; ++layer)
    for (std::int64_t n : {768, 768, 3 * 768 * 768, 3 * 768, 768 * 768, 768, 768, 768, 4 * 768 * 768, 4 * 768,
                           4 * 768 * 768, 768})
      gpt2.push_back(n);
  gpt2.push_back(768);
  gpt2.push_back(768);
  const std::int64_t capacity = bucket_capacity<float>(BucketOptions{});
  for (weft::Device device : {cpu, cuda}) {
    CAPTURE(device);
    const std::vector<Bucket> g = plan_buckets(gpt2, capacity, alone_numel<float>(BucketOptions{}, device));
    check_plan(g, gpt2, capacity, alone_numel<float>(BucketOptions{}, device));
    std::size_t shared = 0;
    for (const Bucket& bucket : g) shared += bucket.pieces.size() > 1 ? 1 : 0;
    CHECK(shared == 1);
    CHECK(g.back().pieces.size() == 98);
    CHECK(g.back().numel == 121344);
    CHECK(g.size() == 6 + 1 + 12 * 4 + 1);  // wte in 6 pieces, wpe, 4 matrices a layer, the shared bucket
  }
}

TEST_CASE_TEMPLATE("dist bucket: pack and unpack move every element, one foreach kernel each", T, float, double,
                   weft::half, weft::bfloat16, std::int32_t, std::int64_t) {
  WEFT_TEST_RNG(rng);
  LogsQuiet quiet;
  for (std::size_t length : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(37)}) {
    std::vector<Shape> shapes;
    for (std::size_t k = 0; k < length; ++k) shapes.push_back(member_shape(rng, length));
    if (length == 37) shapes[5] = Shape{0, 3};  // an empty member in the middle, for sure
    const TensorList<T> xs = random_list<T>(rng, shapes, -100, 100);
    const std::vector<std::vector<double>> values = values_of_list(xs);
    const std::vector<std::int64_t> numels = numels_of(shapes);
    std::int64_t total = 0;
    for (std::int64_t n : numels) total += n;
    for (std::int64_t capacity : {std::int64_t(1), std::int64_t(7), std::int64_t(64), total + 5}) {
      // a kernel per element or per few (thousands of buckets where a member of 20000+ is cut in
      // pieces of 7): slow, the sanitizer build's slowest case, and the same splits as the small
      // lists take
      if (capacity < 64 && total > 3000) continue;
      CAPTURE(length);
      CAPTURE(capacity);
      const BucketOptions options{capacity * std::int64_t(sizeof(T))};
      const auto buckets = weft::dist::detail::plan_buckets(xs, options, weft::Device::cpu());
      check_plan(buckets, numels, capacity, weft::dist::detail::alone_numel<T>(options, weft::Device::cpu()));
      TensorList<T> out;
      for (const Shape& s : shapes) {
        out.push_back(weft::empty<T>(s));
        poison(out[out.size() - 1]);
      }
      for (std::size_t index = 0; index < buckets.size(); ++index) {
        // the first buckets' logs: one kernel each
        Tensor<T> flat = pack_checked(xs, values, numels, buckets[index], index, 1, index < 3);
        weft::dist::detail::unpack_bucket<T>(out, flat, buckets[index]);
      }
      check_list(out, values, 0, 0);  // exact: a copy (every element was in a bucket)

      if constexpr (weft::is_floating_v<T>) {
        // avg's unpack: out = scale * flat in the same kernel, one rounding to T (0.25 is exact
        // but for values that it takes below T's normal range).
        std::vector<std::vector<double>> want = values;
        for (auto& v : want)
          for (double& x : v) x = round_to<T>(x * 0.25);
        for (std::size_t k = 0; k < out.size(); ++k) poison(out[k]);
        for (const Bucket& b : buckets) {
          Tensor<T> flat = weft::empty<T>(Shape{b.numel});
          weft::dist::detail::pack_bucket<T>(flat, xs, b);
          weft::dist::detail::unpack_bucket<T>(out, flat, b, 1, 0.25);
        }
        check_list(out, want, 0, 0);
      }
    }
  }
}

TEST_CASE_TEMPLATE("dist bucket: blocks lay out the ranks' dim-0 chunks rank by rank", T, float, weft::bfloat16,
                   std::int64_t) {
  // An all_gather's output member k holds `ranks` chunks of the input's shape along dim 0; the flat
  // buffer of one bucket holds rank 0's pieces, then rank 1's, ... (a reduce_scatter's input alike).
  WEFT_TEST_RNG(rng);
  const std::int64_t ranks = 3;
  const std::vector<Shape> chunk_shapes = {Shape{4, 3}, Shape{0}, Shape{5}, Shape{2, 2, 2}, Shape{1}};
  std::vector<Shape> shapes;
  for (Shape s : chunk_shapes) {
    s[0] *= ranks;
    shapes.push_back(s);
  }
  const TensorList<T> outs = random_list<T>(rng, shapes, -50, 50);
  std::vector<std::int64_t> chunk_numels;
  for (const Shape& s : chunk_shapes) chunk_numels.push_back(s.numel());
  const auto values = values_of_list(outs);
  for (std::int64_t capacity : {1, 4, 7, 100})
    for (std::int64_t alone : {std::int64_t(3), capacity, std::int64_t(1000)}) {
      CAPTURE(capacity);
      CAPTURE(alone);
      const auto buckets = weft::dist::detail::plan_buckets(chunk_numels, capacity, alone);
      TensorList<T> back;
      for (const Shape& s : shapes) {
        back.push_back(weft::empty<T>(s));
        poison(back[back.size() - 1]);
      }
      for (std::size_t index = 0; index < buckets.size(); ++index) {
        // rank r's block: each piece's elements of rank r's chunk of its tensor
        Tensor<T> flat = pack_checked(outs, values, chunk_numels, buckets[index], index, ranks, false);
        weft::dist::detail::unpack_bucket<T>(back, flat, buckets[index], ranks);
      }
      check_list(back, values, 0, 0);
    }
}

TEST_CASE("dist bucket: strided members travel through contiguous copies, written back into their views only") {
  WEFT_TEST_RNG(rng);
  const std::vector<Shape> shapes = {Shape{3, 4}, Shape{5, 2}, Shape{2, 3, 2}, Shape{7}, Shape{0, 4}};
  const Layout layouts[] = {Layout::contiguous, Layout::strided, Layout::permuted, Layout::selected, Layout::strided};
  TensorList<float> xs;
  for (std::size_t k = 0; k < shapes.size(); ++k) xs.push_back(make_destination<float>(rng, shapes[k], layouts[k]));
  std::vector<std::vector<double>> before;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    std::vector<double> v(std::size_t(shapes[k].numel()));
    for (double& x : v) x = double(rng.integer(-1000, 1000));
    write_values(xs[k], v);
    before.push_back(v);
  }
  std::vector<std::vector<unsigned char>> snapshots;
  for (const auto& x : xs) snapshots.push_back(storage_snapshot(x));

  const weft::dist::detail::ContiguousList<float> staged(xs);
  std::vector<std::size_t> strided;
  for (std::size_t k = 0; k < xs.size(); ++k)
    if (!xs[k].is_contiguous()) strided.push_back(k);
  CHECK(staged.copied == strided);
  CHECK(!strided.empty());
  for (const auto& x : staged.list) CHECK(x.is_contiguous());
  check_list(staged.list, before, 0, 0);
  for (std::size_t k = 0; k < xs.size(); ++k)
    if (xs[k].is_contiguous()) CHECK(staged.list[k].data() == xs[k].data());  // not copied

  // New values arrive through a flat buffer into the copies, then go back into the views.
  // Buckets of 11: the 12-element members alone (in pieces of 11 and 1), the others shared.
  const auto buckets = weft::dist::detail::plan_buckets(staged.list, BucketOptions{11 * 4}, weft::Device::cpu());
  std::vector<std::vector<double>> after;
  for (const Shape& s : shapes) {
    after.emplace_back();
    for (std::int64_t i = 0; i < s.numel(); ++i) after.back().push_back(double(rng.integer(-1000, 1000)));
  }
  for (const Bucket& b : buckets) {
    Tensor<float> flat = weft::empty<float>(Shape{b.numel});
    write_values(flat, bucket_values(after, numels_of(shapes), b));
    weft::dist::detail::unpack_bucket<float>(staged.list, flat, b);
  }
  staged.write_back(xs);
  check_list(xs, after, 0, 0);
  // Outside each view its storage is as it was (the write-back wrote the view's elements only).
  for (std::size_t k = 0; k < xs.size(); ++k) {
    std::set<std::int64_t> inside;
    for_each_index(xs[k].shape(), [&](const std::vector<std::int64_t>& idx) { inside.insert(storage_index(xs[k], idx)); });
    const std::vector<unsigned char> now = storage_snapshot(xs[k]);
    for (std::int64_t e = 0; e < storage_elements(xs[k]); ++e)
      if (!inside.count(e)) REQUIRE(std::memcmp(&now[std::size_t(e) * 4], &snapshots[k][std::size_t(e) * 4], 4) == 0);
  }
}

TEST_CASE("dist bucket: zero copy only when the pieces lie back to back in one storage, in list order") {
  using weft::dist::detail::in_place_view;
  Tensor<float> flat = counting_floats(103);
  // Views of one flat buffer from element 3 on, an empty one among them: every bucket, whatever
  // the capacity, is that buffer's own memory (a tensor alone, or small ones next to each other).
  const TensorList<float> views = {flat.narrow(0, 3, 6).view(Shape{2, 3}), flat.narrow(0, 9, 0),
                                   flat.narrow(0, 9, 10), flat.narrow(0, 19, 84).view(Shape{4, 21})};
  for (std::int64_t capacity : {1, 5, 6, 7, 100, 1000}) {
    CAPTURE(capacity);
    std::int64_t covered = 0;
    for (const Bucket& b : weft::dist::detail::plan_buckets(views, BucketOptions{capacity * 4}, weft::Device::cpu())) {
      const std::optional<TensorView<float>> run = in_place_view(views, b);
      REQUIRE(run.has_value());
      const Piece& first = b.pieces[0];
      CHECK(run->data() == views[first.tensor].data() + first.start);
      CHECK(run->shape() == Shape{b.numel});
      CHECK(run->storage() == flat.storage());
      covered += b.numel;
    }
    CHECK(covered == 100);
  }
  // Rows of a matrix in order are back to back too.
  Tensor<float> matrix = weft::zeros<float>(Shape{4, 5});
  CHECK(in_place_view(TensorList<float>{matrix.select(0, 0), matrix.select(0, 1), matrix.select(0, 2)},
                      weft::dist::detail::plan_buckets({5, 5, 5}, 15, 15)[0])
            ->data() == matrix.data());

  // Not back to back: each of these must be packed.
  auto packed = [](const TensorList<float>& xs) {
    const auto buckets = weft::dist::detail::plan_buckets(xs, BucketOptions{1 << 20}, weft::Device::cpu());
    REQUIRE(buckets.size() == 1);
    return !in_place_view(xs, buckets[0]).has_value();
  };
  Tensor<float> other = counting_floats(10);
  CHECK(packed({flat.narrow(0, 0, 6), flat.narrow(0, 7, 5)}));                     // a gap of one element
  CHECK(packed({flat.narrow(0, 0, 6), flat.narrow(0, 5, 5)}));                     // overlapping by one
  CHECK(packed({flat.narrow(0, 6, 4), flat.narrow(0, 0, 6)}));                     // out of order
  CHECK(packed({flat.narrow(0, 0, 6), flat.narrow(0, 0, 6)}));                     // the same tensor twice
  CHECK(packed({flat.narrow(0, 0, 10), other.view()}));                           // two storages
  CHECK(packed({matrix.select(0, 1), matrix.select(0, 0)}));                      // rows out of order
  CHECK(packed({matrix.select(1, 0), matrix.select(1, 1)}));                      // strided columns
  CHECK(packed({matrix.transpose(0, 1)}));                                         // one strided member
  CHECK(packed({flat.narrow(0, 0, 4).view(Shape{2, 2}).transpose(0, 1), flat.narrow(0, 4, 4)}));
  CHECK(!packed({flat.narrow(0, 0, 10), weft::empty<float>(Shape{0}).view(), flat.narrow(0, 10, 3)}));

  // A list that lies back to back in one storage: when every rank's does, the plan needs nothing
  // alone, the concatenation cut at the capacity, every bucket a run of the storage.
  using weft::dist::detail::back_to_back;
  CHECK(back_to_back(views));
  CHECK(back_to_back(TensorList<float>{}));
  CHECK(back_to_back(TensorList<float>{flat.narrow(0, 0, 6), flat.narrow(0, 50, 0), flat.narrow(0, 6, 4)}));
  CHECK(!back_to_back(TensorList<float>{flat.narrow(0, 0, 6), flat.narrow(0, 7, 4)}));   // a gap
  CHECK(!back_to_back(TensorList<float>{flat.narrow(0, 6, 4), flat.narrow(0, 0, 6)}));   // out of order
  CHECK(!back_to_back(TensorList<float>{flat.narrow(0, 0, 10), other.narrow(0, 0, 3)})); // two storages
  CHECK(!back_to_back(TensorList<float>{matrix.transpose(0, 1)}));                         // strided
  for (std::int64_t capacity : {5, 7, 40}) {
    CAPTURE(capacity);
    const auto plan = weft::dist::detail::plan_buckets(views, BucketOptions{capacity * 4}, weft::Device::cpu(), true);
    check_plan(plan, {6, 0, 10, 84}, capacity, weft::dist::detail::kNeverAlone);
    std::int64_t begin = 3;
    for (const Bucket& b : plan) {
      CHECK(in_place_view(views, b)->data() == flat.data() + begin);
      begin += b.numel;
    }
    CHECK(begin == 103);
  }

  // Per bucket: a bucket that holds one piece is always in place; a shared bucket spanning the two
  // storages is packed.
  const TensorList<float> mixed = {flat.narrow(0, 0, 8), other.narrow(0, 0, 8)};
  const auto halves = weft::dist::detail::plan_buckets(mixed, BucketOptions{8 * 4}, weft::Device::cpu());
  REQUIRE(halves.size() == 2);
  CHECK(in_place_view(mixed, halves[0])->data() == flat.data());
  CHECK(in_place_view(mixed, halves[1])->data() == other.data());
  // each alone, in 2 pieces
  const auto pieces = weft::dist::detail::plan_buckets(mixed, BucketOptions{6 * 4}, weft::Device::cpu());
  REQUIRE(pieces.size() == 4);
  for (const Bucket& b : pieces) CHECK(in_place_view(mixed, b).has_value());
  const auto thirds = weft::dist::detail::plan_buckets({8, 8}, 6, 100);  // shared: cut at 6 and 12
  REQUIRE(thirds.size() == 3);
  CHECK(in_place_view(mixed, thirds[0]).has_value());
  CHECK(!in_place_view(mixed, thirds[1]).has_value());
  CHECK(in_place_view(mixed, thirds[2])->data() == other.data() + 4);

  // A small member next to a large one in the same buffer: the large one travels alone, in place;
  // the small ones around it share a bucket, which is not back to back, so it is packed.
  const TensorList<float> around = {flat.narrow(0, 0, 2), flat.narrow(0, 2, 50), flat.narrow(0, 52, 3)};
  const auto split = weft::dist::detail::plan_buckets(around, BucketOptions{40 * 4}, weft::Device::cpu());  // alone: 40
  REQUIRE(split.size() == 3);
  CHECK(in_place_view(around, split[0])->data() == flat.data() + 2);
  CHECK(in_place_view(around, split[1])->data() == flat.data() + 42);
  CHECK(split[2].pieces.size() == 2);
  CHECK(!in_place_view(around, split[2]).has_value());

  // With the ranks' blocks (an all_gather output, a reduce_scatter input): a bucket holding one
  // whole tensor is in place, block after block; a part of it, or two tensors, are not ([rank][piece]
  // is not their memory order).
  const TensorList<float> one = {flat.narrow(0, 3, 12).view(Shape{6, 2})};
  const auto whole = weft::dist::detail::plan_buckets(std::vector<std::int64_t>{4}, 4, 4);
  CHECK(in_place_view(one, whole[0], 3)->data() == flat.data() + 3);
  CHECK(in_place_view(one, whole[0], 3)->numel() == 12);
  CHECK(!in_place_view(one, weft::dist::detail::plan_buckets(std::vector<std::int64_t>{4}, 3, 3)[0], 3).has_value());
  const TensorList<float> two = {flat.narrow(0, 0, 6), flat.narrow(0, 6, 6)};
  CHECK(!in_place_view(two, weft::dist::detail::plan_buckets(std::vector<std::int64_t>{2, 2}, 4, 4)[0], 3).has_value());
  CHECK(in_place_view(two, weft::dist::detail::plan_buckets(std::vector<std::int64_t>{6, 6}, 12, 12)[0], 1).has_value());

  using weft::dist::detail::runs_overlap;
  CHECK(runs_overlap<float>(flat.narrow(0, 0, 6), flat.narrow(0, 5, 2)));
  CHECK(!runs_overlap<float>(flat.narrow(0, 0, 6), flat.narrow(0, 6, 2)));
  CHECK(!runs_overlap<float>(flat.narrow(0, 0, 6), other.narrow(0, 0, 6)));
  CHECK(!runs_overlap<float>(flat.narrow(0, 3, 0), flat.narrow(0, 0, 6)));
}

}  // TEST_SUITE
