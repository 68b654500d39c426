// SPDX-License-Identifier: MIT
/// @file The buckets of list collectives without MPI: the plan, pack and unpack (one foreach kernel each, every dtype), the ranks' block layout, strided members and the zero-copy test.
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

/// The row-major values of every member, concatenated: what the flat buffers must hold.
template <class T>
std::vector<double> concatenation(const TensorList<T>& xs) {
  std::vector<double> all;
  for (const auto& x : xs) {
    std::vector<double> v = values_of(x);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

/// Checks the invariants of a plan: every bucket holds at most `capacity` elements and all but the
/// last exactly `capacity`; its pieces add up to its numel; walking the pieces in order visits
/// every element of every tensor once, in list and row-major order.
void check_plan(const std::vector<Bucket>& buckets, const std::vector<std::int64_t>& numels, std::int64_t capacity) {
  std::size_t k = 0;
  std::int64_t next = 0;  // the next element of tensor k a piece must start at
  auto skip_done = [&] {
    while (k < numels.size() && next == numels[k]) ++k, next = 0;
  };
  skip_done();
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    CAPTURE(b);
    CHECK(buckets[b].numel <= capacity);
    if (b + 1 < buckets.size()) CHECK(buckets[b].numel == capacity);
    std::int64_t sum = 0;
    for (const Piece& p : buckets[b].pieces) {
      REQUIRE(k < numels.size());
      CHECK(p.tensor == k);
      CHECK(p.start == next);
      CHECK(p.count > 0);
      next += p.count;
      sum += p.count;
      REQUIRE(next <= numels[k]);
      skip_done();
    }
    CHECK(sum == buckets[b].numel);
  }
  CHECK(k == numels.size());  // every element is in a bucket
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

TEST_CASE("dist bucket: the plan cuts the concatenation at the capacity, splits large tensors, skips empty ones") {
  // The worked example of bucket.hpp.
  const std::vector<Bucket> b = weft::dist::detail::plan_buckets({5, 0, 3, 9}, 6);
  REQUIRE(b.size() == 3);
  auto same = [](const Piece& p, std::size_t k, std::int64_t s, std::int64_t c) {
    return p.tensor == k && p.start == s && p.count == c;
  };
  REQUIRE(b[0].pieces.size() == 2);
  CHECK(same(b[0].pieces[0], 0, 0, 5));
  CHECK(same(b[0].pieces[1], 2, 0, 1));
  REQUIRE(b[1].pieces.size() == 2);
  CHECK(same(b[1].pieces[0], 2, 1, 2));
  CHECK(same(b[1].pieces[1], 3, 0, 4));
  REQUIRE(b[2].pieces.size() == 1);
  CHECK(same(b[2].pieces[0], 3, 4, 5));
  CHECK((b[0].numel == 6 && b[1].numel == 6 && b[2].numel == 5));

  CHECK(weft::dist::detail::plan_buckets({}, 4).empty());
  CHECK(weft::dist::detail::plan_buckets({0, 0, 0}, 4).empty());
  CHECK(weft::dist::detail::plan_buckets({3, 3}, 6).size() == 1);  // exactly full: one bucket
  CHECK(weft::dist::detail::plan_buckets({6, 6}, 6).size() == 2);  // a tensor per bucket, no empty third
  CHECK(weft::dist::detail::plan_buckets({4, 0, 3}, 1).size() == 7);

  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::int64_t> numels(std::size_t(rng.integer(0, 12)));
    for (auto& n : numels) n = rng.chance(0.2) ? 0 : rng.integer(1, 40);
    const std::int64_t capacity = rng.integer(1, 50);
    CAPTURE(trial);
    CAPTURE(capacity);
    check_plan(weft::dist::detail::plan_buckets(numels, capacity), numels, capacity);
  }

  // Elements per bucket: bucket_bytes / sizeof(T), at least one, at most an MPI count.
  CHECK(weft::dist::detail::bucket_capacity<float>(BucketOptions{}) == (25 << 20) / 4);
  CHECK(weft::dist::detail::bucket_capacity<double>(BucketOptions{100}) == 12);
  CHECK(weft::dist::detail::bucket_capacity<double>(BucketOptions{3}) == 1);
  CHECK(weft::dist::detail::bucket_capacity<weft::half>(BucketOptions{std::int64_t(1) << 40}) == INT_MAX);
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
    const std::vector<double> all = concatenation(xs);
    const std::int64_t total = std::int64_t(all.size());
    for (std::int64_t capacity : {std::int64_t(1), std::int64_t(7), std::int64_t(64), total + 5}) {
      if (capacity == 1 && total > 3000) continue;  // one kernel per element: slow and no new case
      CAPTURE(length);
      CAPTURE(capacity);
      const auto buckets = weft::dist::detail::plan_buckets(xs, BucketOptions{capacity * std::int64_t(sizeof(T))});
      check_plan(buckets, [&] {
        std::vector<std::int64_t> n;
        for (const auto& x : xs) n.push_back(x.numel());
        return n;
      }(), capacity);
      TensorList<T> out;
      for (const Shape& s : shapes) {
        out.push_back(weft::empty<T>(s));
        poison(out[out.size() - 1]);
      }
      std::int64_t begin = 0;
      for (const Bucket& b : buckets) {
        Tensor<T> flat = weft::empty<T>(Shape{b.numel});
        poison(flat);
        if (begin < 3 * capacity) {  // the first buckets' logs: one kernel each
          LogCapture capture;
          weft::set_logs("+foreach");
          weft::dist::detail::pack_bucket<T>(flat, xs, b);
          weft::set_logs("");
          CHECK(LogCapture::count(capture.text(), "[weft:foreach]") == 1);
        } else {
          weft::dist::detail::pack_bucket<T>(flat, xs, b);
        }
        const std::vector<double> got = values_of(flat);
        for (std::int64_t i = 0; i < b.numel; ++i)
          if (got[std::size_t(i)] != all[std::size_t(begin + i)]) {
            INFO("flat element ", i, " of the bucket at ", begin, ": got ", got[std::size_t(i)], ", want ",
                 all[std::size_t(begin + i)]);
            CHECK(false);
            break;
          }
        weft::dist::detail::unpack_bucket<T>(out, flat, b);
        begin += b.numel;
      }
      CHECK(begin == total);
      check_list(out, values_of_list(xs), 0, 0);  // exact: a copy

      if constexpr (weft::is_floating_v<T>) {
        // avg's unpack: out = scale * flat in the same kernel (0.25: exact in every float type here).
        std::vector<std::vector<double>> want = values_of_list(xs);
        for (auto& v : want)
          for (double& x : v) x *= 0.25;
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
  for (std::int64_t capacity : {1, 4, 7, 100}) {
    CAPTURE(capacity);
    const auto buckets = weft::dist::detail::plan_buckets(chunk_numels, capacity);
    TensorList<T> back;
    for (const Shape& s : shapes) {
      back.push_back(weft::empty<T>(s));
      poison(back[back.size() - 1]);
    }
    std::int64_t begin = 0;  // the bucket's first element in the concatenation of one rank's chunks
    for (const Bucket& b : buckets) {
      Tensor<T> flat = weft::empty<T>(Shape{ranks * b.numel});
      poison(flat);
      weft::dist::detail::pack_bucket<T>(flat, outs, b, ranks);
      const std::vector<double> got = values_of(flat);
      for (std::int64_t r = 0; r < ranks; ++r)
        for (std::int64_t j = 0; j < b.numel; ++j) {
          // element begin + j of the chunks' concatenation: tensor k, index i of rank r's chunk
          std::int64_t g = begin + j;
          std::size_t k = 0;
          while (g >= chunk_numels[k]) g -= chunk_numels[k++];
          const double want = values[k][std::size_t(r * chunk_numels[k] + g)];
          if (got[std::size_t(r * b.numel + j)] != want) {
            INFO("rank ", r, " element ", j, " of the bucket at ", begin);
            CHECK(got[std::size_t(r * b.numel + j)] == want);
            r = ranks;
            break;
          }
        }
      weft::dist::detail::unpack_bucket<T>(back, flat, b, ranks);
      begin += b.numel;
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
  const auto buckets = weft::dist::detail::plan_buckets(staged.list, BucketOptions{7 * 4});
  std::vector<double> incoming;
  std::vector<std::vector<double>> after;
  for (const Shape& s : shapes) {
    after.emplace_back();
    for (std::int64_t i = 0; i < s.numel(); ++i) {
      after.back().push_back(double(rng.integer(-1000, 1000)));
      incoming.push_back(after.back().back());
    }
  }
  std::int64_t begin = 0;
  for (const Bucket& b : buckets) {
    Tensor<float> flat = weft::empty<float>(Shape{b.numel});
    write_values(flat, std::vector<double>(incoming.begin() + begin, incoming.begin() + begin + b.numel));
    weft::dist::detail::unpack_bucket<float>(staged.list, flat, b);
    begin += b.numel;
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
  // the capacity, is that buffer's own memory.
  const TensorList<float> views = {flat.narrow(0, 3, 6).view(Shape{2, 3}), flat.narrow(0, 9, 0),
                                   flat.narrow(0, 9, 10), flat.narrow(0, 19, 84).view(Shape{4, 21})};
  for (std::int64_t capacity : {1, 5, 6, 7, 100, 1000}) {
    CAPTURE(capacity);
    std::int64_t begin = 3;
    for (const Bucket& b : weft::dist::detail::plan_buckets(views, BucketOptions{capacity * 4})) {
      const std::optional<TensorView<float>> run = in_place_view(views, b);
      REQUIRE(run.has_value());
      CHECK(run->data() == flat.data() + begin);
      CHECK(run->shape() == Shape{b.numel});
      CHECK(run->storage() == flat.storage());
      begin += b.numel;
    }
    CHECK(begin == 103);
  }
  // Rows of a matrix in order are back to back too.
  Tensor<float> matrix = weft::zeros<float>(Shape{4, 5});
  CHECK(in_place_view(TensorList<float>{matrix.select(0, 0), matrix.select(0, 1), matrix.select(0, 2)},
                      weft::dist::detail::plan_buckets({5, 5, 5}, 15)[0])
            ->data() == matrix.data());

  // Not back to back: each of these must be packed.
  auto packed = [](const TensorList<float>& xs) {
    const auto buckets = weft::dist::detail::plan_buckets(xs, BucketOptions{1 << 20});
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

  // Per bucket: a bucket that holds one piece is always in place; the bucket spanning the two
  // storages is packed.
  const TensorList<float> mixed = {flat.narrow(0, 0, 8), other.narrow(0, 0, 8)};
  const auto halves = weft::dist::detail::plan_buckets(mixed, BucketOptions{8 * 4});
  REQUIRE(halves.size() == 2);
  CHECK(in_place_view(mixed, halves[0])->data() == flat.data());
  CHECK(in_place_view(mixed, halves[1])->data() == other.data());
  const auto thirds = weft::dist::detail::plan_buckets(mixed, BucketOptions{6 * 4});
  REQUIRE(thirds.size() == 3);
  CHECK(in_place_view(mixed, thirds[0]).has_value());
  CHECK(!in_place_view(mixed, thirds[1]).has_value());
  CHECK(in_place_view(mixed, thirds[2])->data() == other.data() + 4);

  // With the ranks' blocks (an all_gather output, a reduce_scatter input): a bucket holding one
  // whole tensor is in place, block after block; a part of it, or two tensors, are not ([rank][piece]
  // is not their memory order).
  const TensorList<float> one = {flat.narrow(0, 3, 12).view(Shape{6, 2})};
  const auto whole = weft::dist::detail::plan_buckets(std::vector<std::int64_t>{4}, 4);
  CHECK(in_place_view(one, whole[0], 3)->data() == flat.data() + 3);
  CHECK(in_place_view(one, whole[0], 3)->numel() == 12);
  CHECK(!in_place_view(one, weft::dist::detail::plan_buckets(std::vector<std::int64_t>{4}, 3)[0], 3).has_value());
  const TensorList<float> two = {flat.narrow(0, 0, 6), flat.narrow(0, 6, 6)};
  CHECK(!in_place_view(two, weft::dist::detail::plan_buckets(std::vector<std::int64_t>{2, 2}, 4)[0], 3).has_value());
  CHECK(in_place_view(two, weft::dist::detail::plan_buckets(std::vector<std::int64_t>{6, 6}, 12)[0], 1).has_value());

  using weft::dist::detail::runs_overlap;
  CHECK(runs_overlap<float>(flat.narrow(0, 0, 6), flat.narrow(0, 5, 2)));
  CHECK(!runs_overlap<float>(flat.narrow(0, 0, 6), flat.narrow(0, 6, 2)));
  CHECK(!runs_overlap<float>(flat.narrow(0, 0, 6), other.narrow(0, 0, 6)));
  CHECK(!runs_overlap<float>(flat.narrow(0, 3, 0), flat.narrow(0, 0, 6)));
}

}  // TEST_SUITE
