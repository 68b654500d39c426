// SPDX-License-Identifier: MIT
/// @file weft::dist collectives on the world group: every collective on every dtype against references built from every rank's input, strided views, empty tensors, and the errors every rank must throw alike.
#include <doctest/doctest.h>

#include <weft/dist.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "dist/dist_reference.hpp"

namespace dist_collectives_test {

using namespace dist_test;
using weft::Element;
using weft::dist::Group;

/// The ops that apply to T (avg: floating dtypes only).
template <Element T>
std::vector<ReduceOp> ops_of() {
  if constexpr (weft::is_floating_v<T>) return {ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min};
  else return {ReduceOp::sum, ReduceOp::max, ReduceOp::min};
}

/// The rows [first, first + count) of a flat [rows, cols] vector.
template <Element T>
std::vector<T> rows_of(const std::vector<T>& v, std::int64_t cols, std::int64_t first, std::int64_t count) {
  return {v.begin() + first * cols, v.begin() + (first + count) * cols};
}

TEST_CASE("dist: the runtime and the world group") {
  CHECK(weft::dist::initialized());
  const Group world = weft::dist::world();
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(world.rank() == rank);
  CHECK(world.size() == size);
  CHECK(world.name() == "world");
  std::vector<int> ranks;
  for (int r = 0; r < size; ++r) ranks.push_back(r);
  CHECK(world.world_ranks() == ranks);
}

TEST_CASE_TEMPLATE("dist: all_reduce of every dtype and op matches the ranks' reduction", T, float, double, half,
                   bfloat16, std::int32_t, std::int64_t, bool) {
  const Group world = weft::dist::world();
  const Shape shape{3, 7};
  for (ReduceOp op : ops_of<T>()) {
    const std::uint64_t salt = 100 + std::uint64_t(op);
    Tensor<T> x = rank_tensor<T>(shape, world.rank(), salt);
    weft::dist::all_reduce(x, world, op);
    CHECK(x.shape() == shape);
    check_reduced(x.to_vector(), group_values<T>(world, shape.numel(), salt), op);
  }
}

TEST_CASE_TEMPLATE("dist: broadcast of every dtype from every root", T, float, double, half, bfloat16, std::int32_t,
                   std::int64_t, bool) {
  const Group world = weft::dist::world();
  const Shape shape{4, 5};
  for (int root = 0; root < world.size(); ++root) {
    Tensor<T> x = rank_tensor<T>(shape, world.rank(), 200);
    weft::dist::broadcast(x, root, world);
    CHECK(same_bits(x.to_vector(), rank_values<T>(shape.numel(), root, 200)));
  }
}

TEST_CASE_TEMPLATE("dist: all_gather of every dtype concatenates the ranks' inputs in rank order", T, float, double,
                   half, bfloat16, std::int32_t, std::int64_t, bool) {
  const Group world = weft::dist::world();
  const int n = world.size();
  Tensor<T> out = poisoned<T>({2 * n, 3});
  weft::dist::all_gather(out, rank_tensor<T>({2, 3}, world.rank(), 300), world);
  const std::vector<T> got = out.to_vector();
  for (int k = 0; k < n; ++k) CHECK(same_bits(rows_of(got, 3, 2 * k, 2), rank_values<T>(6, k, 300)));
  // A 0-d input gathers into [size].
  Tensor<T> flat = poisoned<T>({n});
  weft::dist::all_gather(flat, rank_tensor<T>({}, world.rank(), 301), world);
  for (int k = 0; k < n; ++k) CHECK(same_bits(rows_of(flat.to_vector(), 1, k, 1), rank_values<T>(1, k, 301)));
}

TEST_CASE_TEMPLATE("dist: reduce_scatter of every dtype and op gives each rank its chunk of the reduction", T, float,
                   double, half, bfloat16, std::int32_t, std::int64_t, bool) {
  const Group world = weft::dist::world();
  const int n = world.size();
  for (ReduceOp op : ops_of<T>()) {
    const std::uint64_t salt = 400 + std::uint64_t(op);
    Tensor<T> out = poisoned<T>({2, 3});
    weft::dist::reduce_scatter(out, rank_tensor<T>({2 * n, 3}, world.rank(), salt), world, op);
    check_reduced(out.to_vector(), group_values<T>(world, 6 * n, salt), op, 6 * world.rank());
  }
}

TEST_CASE("dist: collectives on strided views write the view's elements and nothing else") {
  const Group world = weft::dist::world();
  const int n = world.size();
  SUBCASE("all_reduce (sum and avg) of every other column, and of a transpose") {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg}) {
      Tensor<float> big = poisoned<float>({4, 8});
      auto columns = big.slice(1, 1, 8, 2);  // [4, 4], strides [8, 2]
      columns = rank_tensor<float>({4, 4}, world.rank(), 500);
      weft::dist::all_reduce(columns, world, op);
      check_reduced(Tensor<float>(columns).to_vector(), group_values<float>(world, 16, 500), op);
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = 0; j < 8; j += 2) CHECK(std::isnan(big.data()[i * 8 + j]));
    }
    Tensor<half> square = rank_tensor<half>({5, 5}, world.rank(), 501);
    weft::dist::all_reduce(square.transpose(0, 1), world, ReduceOp::max);
    check_reduced(square.to_vector(), group_values<half>(world, 25, 501), ReduceOp::max);
  }
  SUBCASE("broadcast into a strided view") {
    Tensor<std::int64_t> big = poisoned<std::int64_t>({6, 3});
    auto rows = big.slice(0, 0, 6, 2);  // [3, 3]
    rows = rank_tensor<std::int64_t>({3, 3}, world.rank(), 502);
    weft::dist::broadcast(rows, n - 1, world);
    CHECK(same_bits(Tensor<std::int64_t>(rows).to_vector(), rank_values<std::int64_t>(9, n - 1, 502)));
    for (std::int64_t i = 1; i < 6; i += 2)
      for (std::int64_t j = 0; j < 3; ++j) CHECK(big.data()[i * 3 + j] == -12345);
  }
  SUBCASE("all_gather from a strided view into a transposed view") {
    Tensor<double> source = rank_tensor<double>({3, 4}, world.rank(), 503);
    Tensor<double> big = poisoned<double>({3, 2 * n});
    weft::dist::all_gather(big.transpose(0, 1), source.slice(1, 0, 4, 2).transpose(0, 1), world);  // in: [2, 3]
    for (int k = 0; k < n; ++k) {
      const std::vector<double> theirs = rank_values<double>(12, k, 503);
      for (std::int64_t r = 0; r < 2; ++r)
        for (std::int64_t c = 0; c < 3; ++c) CHECK(big.data()[c * 2 * n + 2 * k + r] == theirs[std::size_t(c * 4 + 2 * r)]);
    }
  }
  SUBCASE("reduce_scatter from a strided view into a strided view") {
    Tensor<float> source = rank_tensor<float>({2 * n, 6}, world.rank(), 504);
    Tensor<float> big = poisoned<float>({2, 6});
    auto out = big.slice(1, 0, 6, 2);  // [2, 3]
    weft::dist::reduce_scatter(out, source.slice(1, 0, 6, 2), world, ReduceOp::avg);
    std::vector<std::vector<float>> inputs;  // each rank's strided columns, packed
    for (const std::vector<float>& v : group_values<float>(world, 12 * n, 504)) {
      inputs.emplace_back();
      for (std::int64_t r = 0; r < 2 * n; ++r)
        for (std::int64_t c = 0; c < 6; c += 2) inputs.back().push_back(v[std::size_t(r * 6 + c)]);
    }
    check_reduced(Tensor<float>(out).to_vector(), inputs, ReduceOp::avg, 6 * world.rank());
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 1; j < 6; j += 2) CHECK(std::isnan(big.data()[i * 6 + j]));
  }
  SUBCASE("all_gather in place: in is this rank's chunk of out") {
    Tensor<bfloat16> out = poisoned<bfloat16>({2 * n, 3});
    out.narrow(0, 2 * world.rank(), 2) = rank_tensor<bfloat16>({2, 3}, world.rank(), 505);
    weft::dist::all_gather(out, out.narrow(0, 2 * world.rank(), 2), world);
    for (int k = 0; k < n; ++k) CHECK(same_bits(rows_of(out.to_vector(), 3, 2 * k, 2), rank_values<bfloat16>(6, k, 505)));
  }
  SUBCASE("reduce_scatter into the first chunk of its own input") {
    Tensor<std::int32_t> in = rank_tensor<std::int32_t>({2 * n, 3}, world.rank(), 506);
    weft::dist::reduce_scatter(in.narrow(0, 0, 2), in, world);
    check_reduced(rows_of(in.to_vector(), 3, 0, 2), group_values<std::int32_t>(world, 6 * n, 506), ReduceOp::sum,
                  6 * world.rank());
  }
}

TEST_CASE("dist: empty tensors and barrier") {
  const Group world = weft::dist::world();
  Tensor<float> empty = weft::zeros<float>({0, 3});
  weft::dist::all_reduce(empty, world);
  weft::dist::broadcast(empty, 0, world);
  Tensor<float> gathered = weft::zeros<float>({0, 3});
  weft::dist::all_gather(gathered, empty, world);
  weft::dist::reduce_scatter(gathered, empty, world, ReduceOp::max);
  CHECK(empty.shape() == Shape{0, 3});
  weft::dist::barrier(world);
  weft::dist::barrier(world);
}

TEST_CASE("dist: inputs that differ between ranks throw the same error on every rank and write nothing") {
  const Group world = weft::dist::world();
  const int n = world.size();
  const int me = world.rank();
  const std::string head = "weft::dist::all_reduce over " + group_text(world) + ": ";
  auto has_list = [&](const std::function<std::string(int)>& has) {
    std::string s = "the ranks disagree: ";
    for (int k = 0; k < n; ++k) s += (k ? ", rank " : "rank ") + std::to_string(k) + " has " + has(k);
    return s;
  };
  SUBCASE("shapes") {
    Tensor<float> x = rank_tensor<float>({4, me == 1 ? 9 : 8}, me, 600);
    check_rejected(x, world,
                   head + has_list([](int k) { return k == 1 ? "float32 [4, 9]" : "float32 [4, 8]"; }) +
                       "; every rank must pass the same dtype and shapes",
                   [&] { weft::dist::all_reduce(x, world); });
  }
  SUBCASE("dtypes") {
    Tensor<float> f = rank_tensor<float>({4, 8}, me, 601);
    Tensor<double> d = rank_tensor<double>({4, 8}, me, 601);
    const std::vector<float> f_before = f.to_vector();
    const std::vector<double> d_before = d.to_vector();
    check_every_rank_throws(world,
                            head + has_list([](int k) { return k == 2 ? "float64 [4, 8]" : "float32 [4, 8]"; }) +
                                "; every rank must pass the same dtype and shapes",
                            [&] {
                              if (me == 2) weft::dist::all_reduce(d, world);
                              else weft::dist::all_reduce(f, world);
                            });
    CHECK(same_bits(f.to_vector(), f_before));
    CHECK(same_bits(d.to_vector(), d_before));
  }
  SUBCASE("reduce ops") {
    Tensor<float> y = rank_tensor<float>({4, 8}, me, 602);
    check_rejected(
        y, world,
        head + has_list([&](int k) { return k == n - 1 ? "all_reduce(max) float32 [4, 8]" : "all_reduce(sum) float32 [4, 8]"; }) +
            "; every rank must pass the same reduce op",
        [&] { weft::dist::all_reduce(y, world, me == n - 1 ? ReduceOp::max : ReduceOp::sum); });
  }
  SUBCASE("collectives") {
    Tensor<float> y = rank_tensor<float>({4}, me, 603);
    check_rejected(
        y, world,
        "weft::dist::broadcast / all_reduce over " + group_text(world) + ": " +
            has_list([](int k) { return k == 0 ? "broadcast(root 0) float32 [4]" : "all_reduce(sum) float32 [4]"; }) +
            "; every rank must call the same collective",
        [&] {
          if (me == 0) weft::dist::broadcast(y, 0, world);
          else weft::dist::all_reduce(y, world);
        });
  }
  SUBCASE("roots") {
    Tensor<float> y = rank_tensor<float>({4}, me, 604);
    check_rejected(y, world,
                   "weft::dist::broadcast over " + group_text(world) + ": " +
                       has_list([](int k) { return "broadcast(root " + std::to_string(k % 2) + ") float32 [4]"; }) +
                       "; every rank must pass the same root",
                   [&] { weft::dist::broadcast(y, me % 2, world); });
  }
  // The runtime still works after these errors.
  Tensor<float> ok = weft::ones<float>({3});
  weft::dist::all_reduce(ok, world);
  CHECK(ok.data()[2] == float(n));
}

TEST_CASE("dist: bad input on some ranks throws on every rank and writes nothing") {
  const Group world = weft::dist::world();
  const int n = world.size();
  const int me = world.rank();
  SUBCASE("all_gather: a wrong out shape on rank 1 only") {
    Tensor<float> out = poisoned<float>({me == 1 ? 2 * n - 1 : 2 * n, 3});
    check_every_rank_throws(world,
                            "weft::dist::all_gather over " + group_text(world) + ": rank 1: out has shape [" +
                                std::to_string(2 * n - 1) + ", 3], but " + std::to_string(n) +
                                " ranks' in [2, 3] gather into [" + std::to_string(2 * n) + ", 3]",
                            [&] { weft::dist::all_gather(out, rank_tensor<float>({2, 3}, me, 700), world); });
    for (float v : out.to_vector()) CHECK(std::isnan(v));
  }
  SUBCASE("avg of integers") {
    Tensor<std::int32_t> x = rank_tensor<std::int32_t>({5}, me, 701);
    check_rejected(x, world,
                   "weft::dist::all_reduce over " + group_text(world) + ": ranks " + all_ranks(n) +
                       ": ReduceOp::avg needs a floating-point dtype, not int32; reduce with sum and divide",
                   [&] { weft::dist::all_reduce(x, world, ReduceOp::avg); });
  }
  SUBCASE("reduce_scatter: dim 0 not a multiple of the group size, and a root outside the group") {
    Tensor<float> out = poisoned<float>({1, 2});
    check_every_rank_throws(world,
                            "weft::dist::reduce_scatter over " + group_text(world) + ": ranks " + all_ranks(n) +
                                ": in has shape [" + std::to_string(n + 1) +
                                ", 2]; its dim 0 must be a multiple of the group's " + std::to_string(n) + " ranks",
                            [&] { weft::dist::reduce_scatter(out, weft::ones<float>({n + 1, 2}), world); });
    for (float v : out.to_vector()) CHECK(std::isnan(v));
    Tensor<float> y = weft::ones<float>({2});
    check_rejected(y, world,
                   "weft::dist::broadcast over " + group_text(world) + ": ranks " + all_ranks(n) + ": root " +
                       std::to_string(n) + " is not a rank of the group (0 to " + std::to_string(n - 1) + ")",
                   [&] { weft::dist::broadcast(y, n, world); });
  }
}

}  // namespace dist_collectives_test
