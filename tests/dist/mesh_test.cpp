// SPDX-License-Identifier: MIT
/// @file weft::dist device meshes (run on 4 ranks): layout and sub-meshes of a {2, 2} ("dp", "tp") mesh, collectives over sub-meshes, mesh errors, and a tensor-parallel MLP checked against the single-process computation in double.
#include <doctest/doctest.h>

#include <weft/dist.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dist/dist_reference.hpp"
#include "error_check.hpp"

namespace dist_mesh_test {

using namespace dist_test;
using weft::Device;
using weft::dist::DeviceMesh;
using weft::dist::Group;

DeviceMesh mesh_2x2() {
  REQUIRE(weft::dist::world().size() == 4);
  return weft::dist::init_device_mesh(Device::cpu(), {2, 2}, {"dp", "tp"});
}

TEST_CASE("dist: a {2, 2} mesh lays the ranks out row-major; its sub-meshes are made once") {
  const DeviceMesh mesh = mesh_2x2();
  const int me = weft::dist::world().rank();
  CHECK(mesh.rank() == me);
  CHECK(mesh.size() == 4);
  CHECK(mesh.name() == "dp,tp");
  CHECK(mesh.device() == Device::cpu());
  CHECK(mesh.shape() == std::vector<std::int64_t>{2, 2});
  CHECK(mesh.dim_names() == std::vector<std::string>{"dp", "tp"});
  CHECK(mesh.coordinate() == std::vector<std::int64_t>{me / 2, me % 2});

  const std::size_t communicators = weft::dist::detail::state().communicators.size();
  const DeviceMesh dp = mesh["dp"];
  const DeviceMesh tp = mesh["tp"];
  CHECK(weft::dist::detail::communicator_of(mesh["dp"]) == weft::dist::detail::communicator_of(dp));
  CHECK(weft::dist::detail::state().communicators.size() == communicators);  // no new split
  CHECK(dp.name() == "dp");
  CHECK(dp.size() == 2);
  CHECK(dp.rank() == me / 2);
  CHECK(dp.world_ranks() == std::vector<int>{me % 2, 2 + me % 2});
  CHECK(dp.shape() == std::vector<std::int64_t>{2});
  CHECK(dp.dim_names() == std::vector<std::string>{"dp"});
  CHECK(dp.coordinate() == std::vector<std::int64_t>{me / 2});
  CHECK(tp.rank() == me % 2);
  CHECK(tp.world_ranks() == std::vector<int>{me - me % 2, me - me % 2 + 1});
  CHECK(weft::dist::detail::communicator_of(tp["tp"]) == weft::dist::detail::communicator_of(tp));
}

TEST_CASE("dist: 1-D and 3-D meshes") {
  REQUIRE(weft::dist::world().size() == 4);
  const int me = weft::dist::world().rank();
  const std::size_t communicators = weft::dist::detail::state().communicators.size();
  const DeviceMesh line = weft::dist::init_device_mesh(Device::cpu(), {4}, {"dp"});
  CHECK(weft::dist::detail::state().communicators.size() == communicators);  // the world's communicator
  CHECK(line.name() == "dp");
  CHECK(line["dp"].rank() == me);
  CHECK(line.coordinate() == std::vector<std::int64_t>{me});
  const DeviceMesh cube = weft::dist::init_device_mesh(Device::cpu(), {1, 2, 2}, {"pp", "dp", "tp"});
  CHECK(cube.coordinate() == std::vector<std::int64_t>{0, me / 2, me % 2});
  CHECK(cube["pp"].size() == 1);
  CHECK(cube["pp"].world_ranks() == std::vector<int>{me});
  CHECK(cube["dp"].world_ranks() == std::vector<int>{me % 2, 2 + me % 2});
  Tensor<float> x = weft::ones<float>({2});
  weft::dist::all_reduce(x, cube["pp"]);
  CHECK(x.data()[1] == 1.0f);
}

TEST_CASE("dist: collectives over sub-meshes and over the mesh as a group") {
  const DeviceMesh mesh = mesh_2x2();
  const int me = weft::dist::world().rank();
  for (const char* dim : {"dp", "tp"}) {
    const DeviceMesh sub = mesh[dim];
    INFO("dim ", std::string(dim));
    Tensor<double> x = rank_tensor<double>({3, 4}, me, 800);
    weft::dist::all_reduce(x, sub, ReduceOp::avg);
    check_reduced(x.to_vector(), group_values<double>(sub, 12, 800), ReduceOp::avg);

    Tensor<std::int32_t> out = poisoned<std::int32_t>({2, 3});
    weft::dist::reduce_scatter(out, rank_tensor<std::int32_t>({4, 3}, me, 801), sub, ReduceOp::min);
    check_reduced(out.to_vector(), group_values<std::int32_t>(sub, 12, 801), ReduceOp::min, 6 * sub.rank());

    Tensor<half> gathered = poisoned<half>({4, 3});
    weft::dist::all_gather(gathered, rank_tensor<half>({2, 3}, me, 802), sub);
    const std::vector<half> got = gathered.to_vector();
    for (int k = 0; k < 2; ++k)
      CHECK(same_bits(std::vector<half>(got.begin() + 6 * k, got.begin() + 6 * (k + 1)),
                      rank_values<half>(6, sub.world_ranks()[std::size_t(k)], 802)));

    Tensor<std::int64_t> y = rank_tensor<std::int64_t>({5}, me, 803);
    weft::dist::broadcast(y, 1, sub);
    CHECK(same_bits(y.to_vector(), rank_values<std::int64_t>(5, sub.world_ranks()[1], 803)));
  }
  Tensor<float> x = rank_tensor<float>({6}, me, 804);
  weft::dist::all_reduce(x, mesh, ReduceOp::max);
  check_reduced(x.to_vector(), group_values<float>(mesh, 6, 804), ReduceOp::max);
}

TEST_CASE("dist: mesh errors are the same on every rank") {
  REQUIRE(weft::dist::world().size() == 4);
  const Group world = weft::dist::world();
  const int me = world.rank();
  const std::string head = "weft::dist::init_device_mesh over " + group_text(world) + ": ";
  const std::size_t communicators = weft::dist::detail::state().communicators.size();
  auto expect = [&](const std::string& want, auto&& make) { check_every_rank_throws(world, want, make); };
  expect(head + "ranks 0, 1, 2, 3: the shape's 6 ranks differ from the job's 4; the extents must multiply to the "
                "world size (mpirun -np)",
         [] { weft::dist::init_device_mesh(Device::cpu(), {3, 2}, {"dp", "tp"}); });
  expect(head + "ranks 0, 1, 2, 3: the shape has 2 dims but 1 names are given; name every dim once",
         [] { weft::dist::init_device_mesh(Device::cpu(), {2, 2}, {"dp"}); });
  expect(head + "ranks 0, 1, 2, 3: the dim name 'dp' appears twice; names must be unique",
         [] { weft::dist::init_device_mesh(Device::cpu(), {2, 2}, {"dp", "dp"}); });
  expect(head + "the ranks disagree: rank 0 has mesh [4] (dp) on cpu, rank 1 has mesh [2, 2] (dp, tp) on cpu, rank 2 "
                "has mesh [2, 2] (dp, tp) on cpu, rank 3 has mesh [2, 2] (dp, tp) on cpu; every rank must pass the same "
                "dtype and shapes",
         [&] {
           if (me == 0) weft::dist::init_device_mesh(Device::cpu(), {4}, {"dp"});
           else weft::dist::init_device_mesh(Device::cpu(), {2, 2}, {"dp", "tp"});
         });
  CHECK(weft::dist::detail::state().communicators.size() == communicators);  // nothing was split
  const DeviceMesh mesh = mesh_2x2();
  CHECK(weft_test::error_of([&] { (void)mesh["pp"]; }) ==
        "weft::dist::DeviceMesh::operator[]: the mesh has no dim named 'pp'; its dims are (dp, tp)");
}

// ---- a tensor-parallel MLP: y = gelu(x W1 + b1) W2 + b2 over a {2, 2} ("dp", "tp") mesh ----------

constexpr std::int64_t kBatch = 6, kIn = 5, kHidden = 8, kOut = 3;

/// The single-process computation in double: forward y, and for loss = sum(y * g) the gradients
/// dW1, dW2 and dx.
struct MlpReference {
  std::vector<double> y, dw1, dw2, dx;
};

double gelu_reference(double a) { return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0))); }
// d/da gelu(a) = Phi(a) + a phi(a)
double gelu_slope_reference(double a) {
  return 0.5 * (1.0 + std::erf(a / std::sqrt(2.0))) + a * std::exp(-0.5 * a * a) / std::sqrt(2.0 * M_PI);
}

MlpReference mlp_reference(const std::vector<float>& x, const std::vector<float>& w1, const std::vector<float>& b1,
                           const std::vector<float>& w2, const std::vector<float>& b2, const std::vector<float>& g) {
  MlpReference r{std::vector<double>(kBatch * kOut), std::vector<double>(kIn * kHidden),
                 std::vector<double>(kHidden * kOut), std::vector<double>(kBatch * kIn)};
  for (std::int64_t b = 0; b < kBatch; ++b) {
    std::vector<double> a(kHidden), h(kHidden), da(kHidden, 0.0);
    for (std::int64_t j = 0; j < kHidden; ++j) {
      a[j] = b1[j];
      for (std::int64_t i = 0; i < kIn; ++i) a[j] += double(x[b * kIn + i]) * w1[i * kHidden + j];
      h[j] = gelu_reference(a[j]);
    }
    for (std::int64_t o = 0; o < kOut; ++o) {
      double y = b2[o];
      for (std::int64_t j = 0; j < kHidden; ++j) y += h[j] * w2[j * kOut + o];
      r.y[b * kOut + o] = y;
    }
    for (std::int64_t j = 0; j < kHidden; ++j) {
      double dh = 0;
      for (std::int64_t o = 0; o < kOut; ++o) {
        dh += double(g[b * kOut + o]) * w2[j * kOut + o];
        r.dw2[j * kOut + o] += h[j] * g[b * kOut + o];
      }
      da[j] = dh * gelu_slope_reference(a[j]);
      for (std::int64_t i = 0; i < kIn; ++i) {
        r.dw1[i * kHidden + j] += double(x[b * kIn + i]) * da[j];
        r.dx[b * kIn + i] += da[j] * w1[i * kHidden + j];
      }
    }
  }
  return r;
}

/// got (a [rows, cols] tensor) against want[row0 + r][col0 + c] of a [*, want_cols] matrix. float
/// sums of at most kIn + kHidden O(1) terms err by ~13 eps ~ 2e-6 per unit of magnitude; the
/// bound is 10x that, while a wrong shard or a missing reduction is off by O(0.1).
void check_block(const Tensor<float>& got, const std::vector<double>& want, std::int64_t want_cols, std::int64_t row0,
                 std::int64_t col0, const char* what) {
  const std::vector<float> v = got.to_vector();
  const std::int64_t rows = got.shape()[0], cols = got.shape()[1];
  std::int64_t wrong = 0;
  double worst = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const double w = want[std::size_t((row0 + r) * want_cols + col0 + c)];
      const double err = std::abs(double(v[std::size_t(r * cols + c)]) - w);
      worst = std::max(worst, err);
      wrong += !(err <= 2e-5 * (1.0 + std::abs(w)));
    }
  INFO(std::string(what), ": worst error ", worst);
  CHECK(wrong == 0);
}

TEST_CASE("dist: a tensor-parallel MLP over tp, data parallel over dp, equals the single-process one") {
  const DeviceMesh mesh = mesh_2x2();
  const DeviceMesh dp = mesh["dp"], tp = mesh["tp"];
  // Every rank builds the same full parameters and batch, and takes its shards.
  const Tensor<float> x = rank_tensor<float>({kBatch, kIn}, 0, 900);
  const Tensor<float> w1 = rank_tensor<float>({kIn, kHidden}, 0, 901);
  const Tensor<float> b1 = rank_tensor<float>({kHidden}, 0, 902);
  const Tensor<float> w2 = rank_tensor<float>({kHidden, kOut}, 0, 903);
  const Tensor<float> b2 = rank_tensor<float>({kOut}, 0, 904);
  const Tensor<float> g = rank_tensor<float>({kBatch, kOut}, 0, 905);  // dloss/dy
  const MlpReference want = mlp_reference(x.to_vector(), w1.to_vector(), b1.to_vector(), w2.to_vector(),
                                          b2.to_vector(), g.to_vector());
  const std::int64_t rows = kBatch / dp.size(), row0 = dp.rank() * rows;
  const std::int64_t half_hidden = kHidden / tp.size(), col0 = tp.rank() * half_hidden;
  const auto x_mine = x.narrow(0, row0, rows);             // this dp rank's batch rows
  const auto g_mine = g.narrow(0, row0, rows);
  const auto w1_mine = w1.narrow(1, col0, half_hidden);    // column-parallel: W1's output columns
  const auto b1_mine = b1.narrow(0, col0, half_hidden);
  const auto w2_mine = w2.narrow(0, col0, half_hidden);    // row-parallel: W2's input rows

  // Forward: each tp rank has half of the hidden units; its half of y's sum is completed by one
  // all_reduce over tp.
  const Tensor<float> a = weft::matmul(x_mine, w1_mine) + b1_mine;
  const Tensor<float> h = weft::gelu(a);
  Tensor<float> y = weft::matmul(h, w2_mine);
  weft::dist::all_reduce(y, tp);
  const Tensor<float> y_out = y + b2;
  check_block(y_out, want.y, kOut, row0, 0, "y");

  // Backward: the weight gradients of the shard sum over the batch, split over dp; dx sums over
  // the hidden units, split over tp.
  Tensor<float> dw2 = weft::matmul(h.transpose(0, 1), g_mine);
  weft::dist::all_reduce(dw2, dp);
  check_block(dw2, want.dw2, kOut, col0, 0, "dW2");
  const Tensor<float> da = weft::nn::gelu_backward(weft::matmul(g_mine, w2_mine.transpose(0, 1)), a);
  Tensor<float> dw1 = weft::matmul(x_mine.transpose(0, 1), da);
  weft::dist::all_reduce(dw1, dp);
  check_block(dw1, want.dw1, kHidden, 0, col0, "dW1");
  Tensor<float> dx = weft::matmul(da, w1_mine.transpose(0, 1));
  weft::dist::all_reduce(dx, tp);
  check_block(dx, want.dx, kIn, row0, 0, "dx");
}

}  // namespace dist_mesh_test
