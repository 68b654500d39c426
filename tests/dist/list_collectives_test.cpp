// SPDX-License-Identifier: MIT
/// @file List collectives under mpirun (any rank count): all_reduce, broadcast, all_gather and reduce_scatter over mixed shapes and every dtype against a reference of every rank's inputs, in several buckets, packed, in place and strided; members of 256 KiB and more travel from their own memory (strided on one rank only too), and nothing is packed when every rank's list lies back to back; one-rank groups copy nothing they need not; disagreements and bad input throw the same weft::Error on every rank with nothing written.
#include <doctest/doctest.h>

#include "dist/dist_reference.hpp"
#include "log_capture.hpp"
#include "reference.hpp"

#include <weft/dist.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

using namespace weft_test;
using weft::TensorList;
using weft::dist::BucketOptions;
using weft::dist::ReduceOp;

namespace dist_list_test {

/// How a test list's tensors are laid out: separate tensors (packed), views of one flat buffer
/// (the zero-copy path), or a mix with strided members (transposed or stepped views).
enum class ListLayout { separate, one_buffer, strided };

constexpr ListLayout kLayouts[] = {ListLayout::separate, ListLayout::one_buffer, ListLayout::strided};

inline std::string layout_label(ListLayout l) {
  return l == ListLayout::separate ? "separate tensors" : l == ListLayout::one_buffer ? "one buffer" : "strided members";
}

/// Mixed shapes: empty tensors, a 0-d one, sizes that straddle the small buckets.
inline std::vector<Shape> mixed_shapes() {
  return {Shape{3, 4}, Shape{0}, Shape{17}, Shape{2, 0, 3}, Shape{1}, Shape{5, 7}, Shape{}, Shape{130}, Shape{2, 3, 2}};
}

/// Three members of 400 KB to 1.3 MB in float32 (more in float64): they travel alone in the
/// default buckets (from 256 KiB on the host); the six small ones (1,035 elements) share a bucket.
inline std::vector<Shape> large_and_small_shapes() {
  return {Shape{5},      Shape{512, 640}, Shape{7, 3},   Shape{},    Shape{0},
          Shape{300000}, Shape{1000},     Shape{100000}, Shape{2, 4}};
}

/// A list of `shapes` laid out as `layout`, every storage poisoned (the elements around views too).
template <class T>
TensorList<T> laid_out_list(const std::vector<Shape>& shapes, ListLayout layout) {
  TensorList<T> list;
  if (layout == ListLayout::one_buffer) {
    std::int64_t total = 3;  // the views start at element 3 of their storage
    for (const Shape& s : shapes) total += s.numel();
    Tensor<T> flat = weft::empty<T>(Shape{total});
    poison(flat);
    std::int64_t at = 3;
    for (const Shape& s : shapes) {
      list.push_back(flat.narrow(0, at, s.numel()).view(s));
      at += s.numel();
    }
    return list;
  }
  for (const Shape& s : shapes) {
    // (assigning to a view writes its elements: each view is constructed, never reassigned)
    const TensorView<T> t = [&]() -> TensorView<T> {
      if (layout == ListLayout::strided && s.rank() >= 2 && s.numel() > 0) {
        Shape swapped = s;
        std::swap(swapped[0], swapped[1]);
        return weft::empty<T>(swapped).transpose(0, 1);
      }
      if (layout == ListLayout::strided && s.rank() == 1 && s[0] > 1)
        return weft::empty<T>(Shape{2 * s[0] + 1}).slice(0, 1, 2 * s[0] + 1, 2);
      return weft::empty<T>(s);
    }();
    poison(t);
    list.push_back(t);
  }
  return list;
}

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Rank `rank`'s input element i of tensor k: a pure function, so that every rank computes every
/// rank's inputs for the reference. Floats in [-4, 4) rounded to T, integers in [-1000, 1000].
template <class T>
double input_value(std::uint64_t salt, int rank, std::size_t k, std::int64_t i) {
  const std::uint64_t h = mix(salt ^ mix(std::uint64_t(rank) * 1000003u + k * 7919u) ^ mix(std::uint64_t(i)));
  if constexpr (weft::is_floating_v<T>) return round_to<T>(double(h >> 11) * 0x1p-53 * 8.0 - 4.0);
  else return double(std::int64_t(h % 2001) - 1000);
}

/// Rank `rank`'s inputs, tensor by tensor (row-major).
template <class T>
std::vector<std::vector<double>> inputs_of(std::uint64_t salt, int rank, const std::vector<Shape>& shapes) {
  std::vector<std::vector<double>> v;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    v.emplace_back();
    for (std::int64_t i = 0; i < shapes[k].numel(); ++i) v.back().push_back(input_value<T>(salt, rank, k, i));
  }
  return v;
}

template <class T>
void write_list(const TensorList<T>& list, const std::vector<std::vector<double>>& values) {
  for (std::size_t k = 0; k < list.size(); ++k) write_values(list[k], values[k]);
}

/// A number every rank agrees on (mixed from the run's shared seed), so that inputs are fresh each run.
inline std::uint64_t shared_salt(std::uint64_t site) { return mix(dist_test::run_seed() ^ site); }

/// op over the ranks' values in double, with the error bound of the same reduction in T: each of
/// the n - 1 combining steps rounds once (n eps sum|x| covers any order), avg one more rounding.
struct Reduced {
  double value;
  double tolerance;
};

template <class T>
Reduced reduction_of(ReduceOp op, const std::vector<double>& xs) {
  double sum = 0, abs_sum = 0, hi = xs[0], lo = xs[0];
  for (double x : xs) {
    sum += x;
    abs_sum += std::fabs(x);
    hi = std::max(hi, x);
    lo = std::min(lo, x);
  }
  const double n = double(xs.size());
  const double bound = n * eps_of<T>() * abs_sum;
  switch (op) {
    case ReduceOp::sum: return {sum, bound};
    case ReduceOp::avg: return {sum / n, bound / n + eps_of<T>() * std::fabs(sum / n)};
    case ReduceOp::max: return {hi, 0};
    default: return {lo, 0};
  }
}

/// got (this rank's list) == want element by element within tolerance.
template <class T>
void check_against(const TensorList<T>& got, const std::vector<std::vector<Reduced>>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    const std::vector<double> g = values_of(got[k]);
    REQUIRE(g.size() == want[k].size());
    for (std::size_t i = 0; i < g.size(); ++i)
      if (!(std::fabs(g[i] - want[k][i].value) <= want[k][i].tolerance)) {
        INFO("tensor ", k, " element ", i, ": got ", g[i], ", want ", want[k][i].value, " within ",
             want[k][i].tolerance);
        CHECK(false);
        return;
      }
  }
}

inline std::vector<std::vector<Reduced>> exact(const std::vector<std::vector<double>>& values) {
  std::vector<std::vector<Reduced>> out;
  for (const auto& v : values) {
    out.emplace_back();
    for (double x : v) out.back().push_back({x, 0});
  }
  return out;
}

/// want[k][i] = op over the ranks of inputs[r][k][chunk * counts[k] + i], i < counts[k]: tensor k's
/// reduction (chunk 0, counts = the numels), or chunk `chunk` of it (a reduce_scatter's).
template <class T>
std::vector<std::vector<Reduced>> reduce_over_ranks(ReduceOp op,
                                                    const std::vector<std::vector<std::vector<double>>>& inputs,
                                                    const std::vector<std::int64_t>& counts, int chunk) {
  std::vector<std::vector<Reduced>> want(counts.size());
  for (std::size_t k = 0; k < counts.size(); ++k)
    for (std::int64_t i = 0; i < counts[k]; ++i) {
      std::vector<double> xs;
      for (const auto& rank_inputs : inputs) xs.push_back(rank_inputs[k][std::size_t(chunk * counts[k] + i)]);
      want[k].push_back(reduction_of<T>(op, xs));
    }
  return want;
}

inline std::vector<std::int64_t> numels_of(const std::vector<Shape>& shapes) {
  std::vector<std::int64_t> n;
  for (const Shape& s : shapes) n.push_back(s.numel());
  return n;
}

/// The ops a dtype takes: avg only on floating dtypes.
template <class T>
std::vector<ReduceOp> ops_of() {
  if constexpr (weft::is_floating_v<T>) return {ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min};
  else return {ReduceOp::sum, ReduceOp::max, ReduceOp::min};
}

inline std::string op_label(ReduceOp op) { return weft::dist::reduce_op_name(op); }

/// Bucket sizes: a few elements (many buckets, tensors cut across them) and the default (one).
template <class T>
std::vector<BucketOptions> bucket_choices() {
  return {BucketOptions{std::int64_t(sizeof(T)) * 13}, BucketOptions{std::int64_t(sizeof(T)) * 64}, BucketOptions{}};
}

/// Calls f(in_layout, out_layout, buckets) for every layout of the input list, every layout of
/// the output list when `two_lists` (else the output's is the input's) and every bucket size.
template <class T, class F>
void for_each_case(bool two_lists, F&& f) {
  for (ListLayout in : kLayouts)
    for (ListLayout out : kLayouts)
      for (const BucketOptions& buckets : bucket_choices<T>()) {
        if (!two_lists && out != in) continue;
        CAPTURE(layout_label(in));
        CAPTURE(layout_label(out));
        CAPTURE(buckets.bucket_bytes);
        f(in, out, buckets);
      }
}

/// Whether `call` throws a weft::Error whose text is the same on every rank of `group` and
/// contains every piece of `pieces`. Returns the text.
inline std::string same_error_everywhere(const weft::dist::Group& group, const std::function<void()>& call,
                                         const std::vector<std::string>& pieces) {
  std::string text;
  try {
    call();
  } catch (const weft::Error& e) {
    text = e.what();
  }
  CHECK(!text.empty());
  for (const std::string& p : pieces) {
    INFO("message: ", text);
    INFO("expected to contain: ", p);
    CHECK(text.find(p) != std::string::npos);
  }
  dist_test::check_same_text_on_every_rank(text, group);
  return text;
}

/// Every storage byte of a list, to show that a failed call wrote nothing.
template <class T>
std::vector<std::vector<unsigned char>> snapshot_list(const TensorList<T>& list) {
  std::vector<std::vector<unsigned char>> s;
  for (const auto& t : list) s.push_back(t.storage() ? storage_snapshot(t) : std::vector<unsigned char>());
  return s;
}

}  // namespace dist_list_test

using namespace dist_list_test;

TEST_SUITE("dist") {

TEST_CASE_TEMPLATE("dist lists: all_reduce over mixed shapes, every op, packed, in place and strided", T, float,
                   double, weft::half, weft::bfloat16, std::int32_t, std::int64_t) {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const std::uint64_t salt = shared_salt(1);
  const std::vector<Shape> shapes = mixed_shapes();
  std::vector<std::vector<std::vector<double>>> inputs;  // [rank][tensor][element]
  for (int r = 0; r < n; ++r) inputs.push_back(inputs_of<T>(salt, r, shapes));
  for (ReduceOp op : ops_of<T>()) {
    CAPTURE(op_label(op));
    const auto want = reduce_over_ranks<T>(op, inputs, numels_of(shapes), 0);
    for_each_case<T>(false, [&](ListLayout layout, ListLayout, const BucketOptions& buckets) {
      const TensorList<T> xs = laid_out_list<T>(shapes, layout);
      write_list(xs, inputs[std::size_t(world.rank())]);
      const std::int64_t allocations = weft::detail::tensor_counters().allocations.load();
      weft::dist::all_reduce(xs, world, op, buckets);
      // Views of one buffer on every rank travel from their own memory: nothing staged, nothing copied.
      if (layout == ListLayout::one_buffer) CHECK(weft::detail::tensor_counters().allocations.load() == allocations);
      check_against(xs, want);
    });
  }
}

TEST_CASE("dist lists: a packed bucket costs one foreach kernel to pack and one to unpack") {
  const weft::dist::Group world = weft::dist::world();
  const std::vector<Shape> shapes = mixed_shapes();
  const TensorList<float> xs = laid_out_list<float>(shapes, ListLayout::separate);
  write_list(xs, inputs_of<float>(7, world.rank(), shapes));
  // Buckets of 64 elements: the 130-element tensor travels alone, in 3 pieces of its own memory;
  // the others (78 elements) share 2 buckets, packed.
  const BucketOptions buckets{4 * 64};
  std::int64_t count = 0;
  const auto plan = weft::dist::detail::plan_buckets(xs, buckets, weft::Device::cpu());
  for (const auto& b : plan) count += b.pieces.size() > 1 ? 1 : 0;
  CHECK(plan.size() == 5);
  CHECK(count == 2);
  LogCapture capture;
  weft::set_logs("+foreach");
  weft::dist::all_reduce(xs, world, ReduceOp::avg, buckets);  // avg: the scale rides in the unpack
  weft::set_logs("");
  // (one rank alone packs nothing: its group's collectives return after the agreement)
  CHECK(LogCapture::count(capture.text(), "[weft:foreach]") == (world.size() > 1 ? 2 * count : 0));
  capture.restore();
}

TEST_CASE_TEMPLATE("dist lists: members of 256 KiB and more travel from their own memory, the small ones share a bucket",
                   T, float, double) {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const std::uint64_t salt = shared_salt(5);
  const std::vector<Shape> shapes = large_and_small_shapes();
  std::vector<std::vector<std::vector<double>>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(inputs_of<T>(salt, r, shapes));
  // Default buckets (the large members each one message), and 64 KiB buckets (the large members
  // cut into pieces of their own memory; the small ones still fit one bucket).
  for (const BucketOptions& buckets : {BucketOptions{}, BucketOptions{64 << 10}})
    for (ListLayout layout : kLayouts)
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg}) {
        CAPTURE(buckets.bucket_bytes);
        CAPTURE(layout_label(layout));
        CAPTURE(op_label(op));
        const TensorList<T> xs = laid_out_list<T>(shapes, layout);
        write_list(xs, inputs[std::size_t(world.rank())]);
        std::int64_t strided = 0;
        for (const auto& x : xs) strided += x.is_contiguous() ? 0 : 1;
        const std::int64_t allocations = weft::detail::tensor_counters().allocations.load();
        LogCapture capture;
        weft::set_logs("+foreach");
        weft::dist::all_reduce(xs, world, op, buckets);
        weft::set_logs("");
        // Separate or strided: one staging buffer and one pack and unpack for the small members,
        // a contiguous copy of each strided member. Views of one buffer on every rank: the list's
        // concatenation cut into buckets, each a run of that buffer: nothing staged or packed.
        const bool packs = layout != ListLayout::one_buffer && n > 1;  // (one rank alone: nothing moves)
        CHECK(weft::detail::tensor_counters().allocations.load() - allocations == (packs ? 1 + strided : 0));
        CHECK(LogCapture::count(capture.text(), "[weft:foreach]") == (packs ? 2 : 0));
        capture.restore();
        check_against(xs, reduce_over_ranks<T>(op, inputs, numels_of(shapes), 0));
      }
  // Only large members: nothing staged, nothing packed.
  const std::vector<Shape> large = {Shape{300000}, Shape{512, 640}};
  const TensorList<T> xs = laid_out_list<T>(large, ListLayout::separate);
  write_list(xs, inputs_of<T>(salt, world.rank(), large));
  const std::int64_t allocations = weft::detail::tensor_counters().allocations.load();
  weft::dist::all_reduce(xs, world, ReduceOp::max);
  CHECK(weft::detail::tensor_counters().allocations.load() == allocations);
  std::vector<std::vector<std::vector<double>>> large_inputs;
  for (int r = 0; r < n; ++r) large_inputs.push_back(inputs_of<T>(salt, r, large));
  check_against(xs, reduce_over_ranks<T>(ReduceOp::max, large_inputs, numels_of(large), 0));
}

TEST_CASE("dist lists: large members strided on one rank, back to back on another: every rank cuts the same buckets") {
  // The plan depends on the shapes, and on whether every rank's list lies back to back (not so
  // here): rank 0's strided members travel through contiguous copies of themselves, the other
  // ranks' from their own memory; rank 1's views of one buffer pack their small members like
  // the separate tensors of the others.
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const std::uint64_t salt = shared_salt(6);
  const std::vector<Shape> shapes = {Shape{512, 640}, Shape{33}, Shape{300000}, Shape{4, 2}};
  std::vector<std::vector<std::vector<double>>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(inputs_of<float>(salt, r, shapes));
  const ListLayout mine = world.rank() == 0   ? ListLayout::strided
                          : world.rank() == 1 ? ListLayout::one_buffer
                                              : ListLayout::separate;
  for (const BucketOptions& buckets : {BucketOptions{}, BucketOptions{256 << 10}}) {
    CAPTURE(buckets.bucket_bytes);
    const TensorList<float> xs = laid_out_list<float>(shapes, mine);
    write_list(xs, inputs[std::size_t(world.rank())]);
    const std::int64_t allocations = weft::detail::tensor_counters().allocations.load();
    weft::dist::all_reduce(xs, world, ReduceOp::sum, buckets);
    // rank 0: copies of its 4 strided members and the staging buffer; the others: the staging buffer
    CHECK(weft::detail::tensor_counters().allocations.load() - allocations == (n == 1 ? 0 : world.rank() == 0 ? 5 : 1));
    check_against(xs, reduce_over_ranks<float>(ReduceOp::sum, inputs, numels_of(shapes), 0));
    for (int root : {0, n - 1}) {
      CAPTURE(root);
      const TensorList<float> ys = laid_out_list<float>(shapes, mine);
      if (world.rank() == root) write_list(ys, inputs[std::size_t(root)]);
      weft::dist::broadcast(ys, root, world, buckets);
      check_against(ys, exact(inputs[std::size_t(root)]));
    }
  }
}

TEST_CASE("dist lists: all_gather and reduce_scatter with members of 256 KiB and more, strided on one rank only") {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const std::uint64_t salt = shared_salt(7);
  const std::vector<Shape> chunks = {Shape{300000}, Shape{5}, Shape{256, 1100}, Shape{3, 2}};  // one rank's part
  std::vector<Shape> whole;                                                                     // n parts
  for (Shape s : chunks) {
    s[0] *= n;
    whole.push_back(s);
  }
  const ListLayout in_layout = world.rank() == 0 ? ListLayout::strided : ListLayout::separate;
  const ListLayout out_layout = world.rank() == n - 1 ? ListLayout::strided : ListLayout::separate;
  // all_gather: ins are the chunks
  std::vector<std::vector<std::vector<double>>> parts;
  for (int r = 0; r < n; ++r) parts.push_back(inputs_of<float>(salt, r, chunks));
  std::vector<std::vector<double>> gathered(chunks.size());
  for (std::size_t k = 0; k < chunks.size(); ++k)
    for (const auto& part : parts) gathered[k].insert(gathered[k].end(), part[k].begin(), part[k].end());
  // reduce_scatter: ins are the wholes
  std::vector<std::vector<std::vector<double>>> wholes;
  for (int r = 0; r < n; ++r) wholes.push_back(inputs_of<float>(salt + 1, r, whole));
  const auto scattered = reduce_over_ranks<float>(ReduceOp::sum, wholes, numels_of(chunks), world.rank());
  for (const BucketOptions& buckets : {BucketOptions{}, BucketOptions{256 << 10}}) {
    CAPTURE(buckets.bucket_bytes);
    {
      const TensorList<float> ins = laid_out_list<float>(chunks, in_layout);
      write_list(ins, parts[std::size_t(world.rank())]);
      const TensorList<float> outs = laid_out_list<float>(whole, out_layout);
      weft::dist::all_gather(outs, ins, world, buckets);
      check_against(outs, exact(gathered));
    }
    {
      const TensorList<float> ins = laid_out_list<float>(whole, in_layout);
      write_list(ins, wholes[std::size_t(world.rank())]);
      const TensorList<float> outs = laid_out_list<float>(chunks, out_layout);
      weft::dist::reduce_scatter(outs, ins, world, ReduceOp::sum, buckets);
      check_against(outs, scattered);
    }
  }
}

TEST_CASE("dist lists and tensors: over a one-rank group nothing is packed, staged or sent; out = in") {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  // A {n, 1} mesh: its "one" dim is a group of this rank alone.
  const weft::dist::DeviceMesh mesh = weft::dist::init_device_mesh(weft::Device::cpu(), {n, 1}, {"all", "one"});
  const weft::dist::Group one = mesh["one"];
  REQUIRE(one.size() == 1);
  const std::uint64_t salt = shared_salt(8);
  const std::vector<Shape> shapes = mixed_shapes();
  const auto mine = inputs_of<float>(salt, world.rank(), shapes);
  std::vector<Shape> pair_shapes;  // all_gather's and reduce_scatter's: a dim 0 (0-d below)
  for (const Shape& s : shapes)
    if (s.rank() > 0) pair_shapes.push_back(s);
  const auto pair_values = inputs_of<float>(salt + 1, world.rank(), pair_shapes);
  auto counters = [] {
    return std::pair(weft::detail::tensor_counters().allocations.load(), weft::detail::tensor_counters().copies.load());
  };
  for (ListLayout layout : kLayouts) {
    CAPTURE(layout_label(layout));
    LogCapture capture;
    weft::set_logs("+foreach");
    for (ReduceOp op : ops_of<float>()) {
      CAPTURE(op_label(op));
      const TensorList<float> xs = laid_out_list<float>(shapes, layout);
      write_list(xs, mine);
      const auto before = counters();
      weft::dist::all_reduce(xs, one, op, BucketOptions{4 * 13});
      weft::dist::broadcast(xs, 0, one, BucketOptions{4 * 13});
      CHECK(counters() == before);  // no staging buffer, no contiguous copy of a strided member
      check_against(xs, exact(mine));
    }
    // all_gather and reduce_scatter copy ins into poisoned outs of any layout, one kernel a member.
    const TensorList<float> ins = laid_out_list<float>(pair_shapes, layout);
    write_list(ins, pair_values);
    for (ListLayout out_layout : kLayouts) {
      CAPTURE(layout_label(out_layout));
      const TensorList<float> gathered = laid_out_list<float>(pair_shapes, out_layout);
      weft::dist::all_gather(gathered, ins, one);
      check_against(gathered, exact(pair_values));
      const TensorList<float> reduced = laid_out_list<float>(pair_shapes, out_layout);
      weft::dist::reduce_scatter(reduced, ins, one, ReduceOp::avg);
      check_against(reduced, exact(pair_values));
    }
    check_against(ins, exact(pair_values));  // only read
    // In place (outs are ins): nothing moves.
    const auto before = counters();
    weft::dist::reduce_scatter(ins, ins, one, ReduceOp::sum);
    weft::dist::all_gather(ins, ins, one);
    CHECK(counters() == before);
    check_against(ins, exact(pair_values));
    weft::set_logs("");
    CHECK(LogCapture::count(capture.text(), "[weft:foreach]") == 0);  // nothing was packed
    capture.restore();
  }
  // One tensor: all_reduce and broadcast leave it as it is, strided or not; all_gather and
  // reduce_scatter copy in to out (0-d in: out [1]).
  const std::vector<double> values = inputs_of<float>(salt, world.rank(), {Shape{6, 5}})[0];
  const TensorList<float> strided = laid_out_list<float>({Shape{6, 5}}, ListLayout::strided);
  write_list(strided, {values});
  const auto before = counters();
  weft::dist::all_reduce(strided[0], one, ReduceOp::avg);
  weft::dist::broadcast(strided[0], 0, one);
  CHECK(counters() == before);
  check_against(strided, exact({values}));
  Tensor<float> out = weft::empty<float>(Shape{6, 5});
  poison(out);
  weft::dist::all_gather(out, strided[0], one);
  check_against(TensorList<float>{out}, exact({values}));
  poison(out);
  weft::dist::reduce_scatter(out, strided[0], one, ReduceOp::avg);
  check_against(TensorList<float>{out}, exact({values}));
  Tensor<float> scalar = weft::full<float>(Shape{}, 2.5f), row = weft::empty<float>(Shape{1});
  poison(row);
  weft::dist::all_gather(row, scalar, one);
  CHECK(row.data()[0] == 2.5f);
  // Bad input still throws (the group's one rank agrees with itself), nothing written.
  const TensorList<float> xs = laid_out_list<float>({Shape{3}}, ListLayout::separate);
  write_list(xs, {{1.0, 2.0, 3.0}});
  same_error_everywhere(one, [&] { weft::dist::broadcast(xs, 1, one); },
                        {"root 1 is not a rank of the group (0 to 0)"});
  same_error_everywhere(one, [&] { weft::dist::all_reduce(xs, one, ReduceOp::sum, BucketOptions{0}); },
                        {"BucketOptions::bucket_bytes must be positive"});
  check_against(xs, exact({{1.0, 2.0, 3.0}}));
}

TEST_CASE_TEMPLATE("dist lists: broadcast from every root, packed, in place and strided", T, float, double, weft::half,
                   weft::bfloat16, std::int32_t, std::int64_t) {
  const weft::dist::Group world = weft::dist::world();
  const std::uint64_t salt = shared_salt(2);
  const std::vector<Shape> shapes = mixed_shapes();
  for (int root = 0; root < world.size(); ++root) {
    const auto want = inputs_of<T>(salt, root, shapes);
    CAPTURE(root);
    for_each_case<T>(false, [&](ListLayout layout, ListLayout, const BucketOptions& buckets) {
      const TensorList<T> xs = laid_out_list<T>(shapes, layout);
      if (world.rank() == root) write_list(xs, want);  // the others keep their poison until it arrives
      weft::dist::broadcast(xs, root, world, buckets);
      check_against(xs, exact(want));
    });
  }
}

TEST_CASE_TEMPLATE("dist lists: all_gather concatenates the ranks' tensors along dim 0", T, float, double, weft::half,
                   weft::bfloat16, std::int32_t, std::int64_t) {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const std::uint64_t salt = shared_salt(3);
  const std::vector<Shape> shapes = mixed_shapes();  // ins; the 0-d one gathers into [n]
  std::vector<Shape> out_shapes;
  for (Shape s : shapes) {
    if (s.rank() == 0) s.push_back(n);
    else s[0] *= n;
    out_shapes.push_back(s);
  }
  std::vector<std::vector<std::vector<double>>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(inputs_of<T>(salt, r, shapes));
  std::vector<std::vector<double>> want(shapes.size());
  for (std::size_t k = 0; k < shapes.size(); ++k)
    for (int r = 0; r < n; ++r) want[k].insert(want[k].end(), inputs[std::size_t(r)][k].begin(), inputs[std::size_t(r)][k].end());
  for_each_case<T>(true, [&](ListLayout in_layout, ListLayout out_layout, const BucketOptions& buckets) {
    const TensorList<T> ins = laid_out_list<T>(shapes, in_layout);
    write_list(ins, inputs[std::size_t(world.rank())]);
    const TensorList<T> outs = laid_out_list<T>(out_shapes, out_layout);
    weft::dist::all_gather(outs, ins, world, buckets);
    check_against(outs, exact(want));
    check_against(ins, exact(inputs[std::size_t(world.rank())]));  // ins are only read
  });
  // In place: in is this rank's own block of out (torch's all_gather_into_tensor idiom); one
  // bucket (gathered in place) or several (parts of in sent, the blocks received and unpacked).
  std::vector<double> all;
  for (int r = 0; r < n; ++r) {
    const auto v = inputs_of<T>(salt, r, {Shape{6, 2}})[0];
    all.insert(all.end(), v.begin(), v.end());
  }
  for (const BucketOptions& buckets : {BucketOptions{}, BucketOptions{std::int64_t(sizeof(T)) * 5}}) {
    CAPTURE(buckets.bucket_bytes);
    const TensorList<T> outs = laid_out_list<T>({Shape{std::int64_t(n) * 6, 2}}, ListLayout::separate);
    const TensorList<T> ins = {outs[0].narrow(0, 6 * world.rank(), 6)};
    write_list(ins, {inputs_of<T>(salt, world.rank(), {Shape{6, 2}})[0]});
    weft::dist::all_gather(outs, ins, world, buckets);
    check_against(outs, exact({all}));
  }
}

TEST_CASE_TEMPLATE("dist lists: reduce_scatter gives each rank its chunk of the reduction", T, float, double,
                   weft::half, weft::bfloat16, std::int32_t, std::int64_t) {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const std::uint64_t salt = shared_salt(4);
  const std::vector<Shape> out_shapes = {Shape{3, 4}, Shape{0}, Shape{17}, Shape{1}, Shape{5, 7}, Shape{130}, Shape{0, 2}};
  std::vector<Shape> shapes;  // ins: n times the rows
  for (Shape s : out_shapes) {
    s[0] *= n;
    shapes.push_back(s);
  }
  std::vector<std::vector<std::vector<double>>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(inputs_of<T>(salt, r, shapes));
  for (ReduceOp op : ops_of<T>()) {
    CAPTURE(op_label(op));
    const auto want = reduce_over_ranks<T>(op, inputs, numels_of(out_shapes), world.rank());
    for_each_case<T>(true, [&](ListLayout in_layout, ListLayout out_layout, const BucketOptions& buckets) {
      const TensorList<T> ins = laid_out_list<T>(shapes, in_layout);
      write_list(ins, inputs[std::size_t(world.rank())]);
      const TensorList<T> outs = laid_out_list<T>(out_shapes, out_layout);
      weft::dist::reduce_scatter(outs, ins, world, op, buckets);
      check_against(outs, want);
    });
  }
  // One tensor whose input is one flat buffer: sent and received without staging.
  const Shape flat_shape{std::int64_t(n) * 40};
  std::vector<std::vector<std::vector<double>>> flat_inputs;
  for (int r = 0; r < n; ++r) flat_inputs.push_back(inputs_of<T>(salt, r, {flat_shape}));
  const auto want = reduce_over_ranks<T>(ReduceOp::max, flat_inputs, {40}, world.rank());
  {
    const TensorList<T> ins = laid_out_list<T>({flat_shape}, ListLayout::one_buffer);
    write_list(ins, inputs_of<T>(salt, world.rank(), {flat_shape}));
    const TensorList<T> outs = laid_out_list<T>({Shape{40}}, ListLayout::one_buffer);
    const std::int64_t allocations = weft::detail::tensor_counters().allocations.load();
    weft::dist::reduce_scatter(outs, ins, world, ReduceOp::max);
    CHECK(weft::detail::tensor_counters().allocations.load() == allocations);
    check_against(outs, want);
  }
  // In place: out is this rank's own chunk of in (one bucket, or several).
  for (const BucketOptions& buckets : {BucketOptions{}, BucketOptions{std::int64_t(sizeof(T)) * 7}}) {
    CAPTURE(buckets.bucket_bytes);
    const TensorList<T> ins = laid_out_list<T>({flat_shape}, ListLayout::separate);
    write_list(ins, inputs_of<T>(salt, world.rank(), {flat_shape}));
    const TensorList<T> outs = {ins[0].narrow(0, 40 * world.rank(), 40)};
    weft::dist::reduce_scatter(outs, ins, world, ReduceOp::max, buckets);
    check_against(outs, want);
  }
}

TEST_CASE("dist lists: bool lists reduce as or (sum, max) and and (min)") {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const std::vector<Shape> shapes = {Shape{5, 3}, Shape{0}, Shape{40}};
  auto bit = [](int rank, std::size_t k, std::int64_t i) { return (std::int64_t(rank) + std::int64_t(k) + i) % 3 == 0; };
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min})
    for (const BucketOptions& buckets : {BucketOptions{7}, BucketOptions{}}) {
      CAPTURE(op_label(op));
      CAPTURE(buckets.bucket_bytes);
      const TensorList<bool> xs = laid_out_list<bool>(shapes, ListLayout::separate);
      std::vector<std::vector<double>> mine(shapes.size()), want(shapes.size());
      for (std::size_t k = 0; k < shapes.size(); ++k)
        for (std::int64_t i = 0; i < shapes[k].numel(); ++i) {
          mine[k].push_back(bit(world.rank(), k, i));
          bool any = false, all = true;
          for (int r = 0; r < n; ++r) any |= bit(r, k, i), all &= bit(r, k, i);
          want[k].push_back(op == ReduceOp::min ? all : any);
        }
      write_list(xs, mine);
      weft::dist::all_reduce(xs, world, op, buckets);
      check_against(xs, exact(want));
    }
}

TEST_CASE("dist lists: disagreements and bad input throw the same weft::Error on every rank, nothing written") {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const int last = n - 1;
  // Shapes differ on the last rank.
  {
    const TensorList<float> xs = laid_out_list<float>({Shape{4, 8}, Shape{3}}, ListLayout::separate);
    const TensorList<float> odd = laid_out_list<float>({Shape{4, 9}, Shape{3}}, ListLayout::separate);
    const TensorList<float>& mine = world.rank() == last ? odd : xs;
    const auto before = snapshot_list(mine);
    std::vector<std::string> pieces = {"weft::dist::all_reduce over group 'world' (world ranks 0",
                                       "rank 0 has a list of 2 float32 tensors [4, 8], [3]",
                                       "the ranks disagree", "every rank must pass the same dtype and shapes"};
    if (n > 1) pieces.push_back("rank " + std::to_string(last) + " has a list of 2 float32 tensors [4, 9], [3]");
    if (n > 1) same_error_everywhere(world, [&] { weft::dist::all_reduce(mine, world); }, pieces);
    CHECK(snapshot_list(mine) == before);
  }
  // The list length differs on rank 0.
  if (n > 1) {
    TensorList<double> xs = laid_out_list<double>({Shape{2}, Shape{0}}, ListLayout::separate);
    if (world.rank() == 0) xs.push_back(weft::empty<double>(Shape{5}));
    const auto before = snapshot_list(xs);
    same_error_everywhere(world, [&] { weft::dist::broadcast(xs, 0, world); },
                          {"weft::dist::broadcast over group 'world'", "rank 0 has a list of 3 float64 tensors [2], [0], [5]",
                           "rank 1 has a list of 2 float64 tensors [2], [0]"});
    CHECK(snapshot_list(xs) == before);
  }
  // The dtype differs: rank 0 passes float, the others double.
  if (n > 1) {
    const TensorList<float> f = laid_out_list<float>({Shape{6}}, ListLayout::separate);
    const TensorList<double> d = laid_out_list<double>({Shape{6}}, ListLayout::separate);
    const auto before_f = snapshot_list(f), before_d = snapshot_list(d);
    same_error_everywhere(
        world,
        [&] {
          if (world.rank() == 0) weft::dist::all_reduce(f, world);
          else weft::dist::all_reduce(d, world);
        },
        {"rank 0 has a list of 1 float32 tensor [6]", "rank 1 has a list of 1 float64 tensor [6]"});
    CHECK(snapshot_list(f) == before_f);
    CHECK(snapshot_list(d) == before_d);
  }
  // The bucket size differs: the ranks would cut different buckets.
  if (n > 1) {
    const TensorList<float> xs = laid_out_list<float>({Shape{100}}, ListLayout::separate);
    const auto before = snapshot_list(xs);
    const BucketOptions mine{world.rank() == last ? 64 : 128};
    same_error_everywhere(world, [&] { weft::dist::all_reduce(xs, world, ReduceOp::sum, mine); },
                          {"in buckets of 128 bytes", "in buckets of 64 bytes"});
    CHECK(snapshot_list(xs) == before);
  }
  // Bad input on one rank only: every rank throws, naming that rank and the problem.
  {
    const TensorList<std::int32_t> xs = laid_out_list<std::int32_t>({Shape{5}}, ListLayout::separate);
    const auto before = snapshot_list(xs);
    same_error_everywhere(world, [&] { weft::dist::all_reduce(xs, world, ReduceOp::avg); },
                          {"ReduceOp::avg needs a floating-point dtype, not int32"});
    CHECK(snapshot_list(xs) == before);
  }
  {
    const TensorList<float> ins = laid_out_list<float>({Shape{2, 3}, Shape{4}}, ListLayout::separate);
    const TensorList<float> outs = laid_out_list<float>(
        {Shape{2 * std::int64_t(n), 3}, Shape{world.rank() == last ? 4 * std::int64_t(n) + 1 : 4 * std::int64_t(n)}},
        ListLayout::separate);
    const auto before = snapshot_list(outs);
    same_error_everywhere(world, [&] { weft::dist::all_gather(outs, ins, world); },
                          {"weft::dist::all_gather over group 'world'", "rank " + std::to_string(last) + ": tensor 1 of outs has shape [" +
                                                                            std::to_string(4 * n + 1) + "]"});
    CHECK(snapshot_list(outs) == before);
  }
  {
    const TensorList<float> ins = laid_out_list<float>({Shape{3 * std::int64_t(n) + (n > 1 ? 1 : 0)}}, ListLayout::separate);
    const TensorList<float> outs = laid_out_list<float>({Shape{3}}, ListLayout::separate);
    const auto before = snapshot_list(outs);
    if (n > 1)
      same_error_everywhere(world, [&] { weft::dist::reduce_scatter(outs, ins, world); },
                            {"weft::dist::reduce_scatter", "it needs a dim 0 that the " + std::to_string(n) + " ranks divide"});
    CHECK(snapshot_list(outs) == before);
  }
  {
    const TensorList<float> xs = laid_out_list<float>({Shape{5}}, ListLayout::separate);
    const auto before = snapshot_list(xs);
    same_error_everywhere(world, [&] { weft::dist::broadcast(xs, world.rank() == 0 ? n : 0, world); },
                          {"root " + std::to_string(n) + " is not a rank of the group"});
    same_error_everywhere(world, [&] { weft::dist::all_reduce(xs, world, ReduceOp::sum, BucketOptions{world.rank() == last ? 0 : 64}); },
                          {"BucketOptions::bucket_bytes must be positive, got 0"});
    const TensorList<float> with_hole = {xs[0], TensorView<float>()};
    same_error_everywhere(world, [&] { weft::dist::all_reduce(world.rank() == 0 ? with_hole : xs, world); },
                          {"rank 0: tensor 1 of the list is empty (default-constructed)"});
    CHECK(snapshot_list(xs) == before);
  }
  // The runtime still works after these errors.
  const TensorList<float> ok = laid_out_list<float>({Shape{3}}, ListLayout::separate);
  write_list(ok, {{1.0, 2.0, 3.0}});
  weft::dist::all_reduce(ok, world);
  check_against(ok, exact({{double(n), 2.0 * n, 3.0 * n}}));
}

}  // TEST_SUITE
