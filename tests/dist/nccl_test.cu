// SPDX-License-Identifier: MIT
/// @file Collectives on CUDA tensors through NCCL (nvcc with WEFT_DIST_NCCL, under mpirun with one GPU per rank): lists (packed and in place; also through the transport directly, which one rank alone skips) and single tensors (strided views too), against references of every rank's inputs; skipped without a GPU.
#include <doctest/doctest.h>

#include "cuda_support.hpp"

#include <weft/dist.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#if !defined(WEFT_DIST_NCCL)
#error "nccl_test.cu tests the NCCL path: compile it with -DWEFT_DIST_NCCL"
#endif

using weft::Device;
using weft::Shape;
using weft::Tensor;
using weft::TensorList;
using weft::TensorView;
using weft::dist::BucketOptions;
using weft::dist::ReduceOp;
using weft::test::cuda_available;

// The helpers call into weft's backend-ABI namespace from inline templates: they live in it too
// (scripts/check-odr), as the shared test support does.
namespace nccl_test {
inline namespace WEFT_BACKEND_ABI {

/// This rank's GPU: NCCL needs a distinct device per rank of a communicator.
inline Device rank_device() {
  return Device::cuda(weft::dist::world().rank() % weft::detail::cuda_device_count());
}

/// Rank r's element i of tensor k: small integers, exact in every dtype and in any sum order.
inline double input_of(int rank, std::size_t k, std::int64_t i) {
  return double((rank * 7 + int(k) * 5 + int(i) * 3) % 23 - 11);
}

inline const std::vector<Shape> kShapes = {Shape{3, 4}, Shape{0}, Shape{17}, Shape{}, Shape{130}, Shape{2, 0, 3}};

/// A list of kShapes-like shapes on `device` holding rank r's inputs: separate tensors, or views
/// of one buffer (the in-place path).
template <class T>
TensorList<T> device_list(const std::vector<Shape>& shapes, int rank, Device device, bool one_buffer) {
  std::vector<T> all;
  for (std::size_t k = 0; k < shapes.size(); ++k)
    for (std::int64_t i = 0; i < shapes[k].numel(); ++i) all.push_back(T(float(input_of(rank, k, i))));
  TensorList<T> list;
  const Tensor<T> flat = weft::from_vector<T>(all, Shape{std::int64_t(all.size())}, device);
  std::int64_t at = 0;
  for (const Shape& s : shapes) {
    const TensorView<T> part(flat.storage(), s, weft::contiguous_strides(s), at);
    list.push_back(one_buffer ? part : TensorView<T>(Tensor<T>(part)));
    at += s.numel();
  }
  return list;
}

/// Tensor k of a list, on the host, as doubles.
template <class T>
std::vector<double> host_values(const TensorView<T>& t) {
  std::vector<double> out;
  for (const T& v : t.to_vector()) out.push_back(double(float(v)));
  return out;
}

/// op over the ranks' inputs (exact: small integers).
inline double reduce_inputs(ReduceOp op, int ranks, std::size_t k, std::int64_t i) {
  double sum = 0, hi = -1e300, lo = 1e300;
  for (int r = 0; r < ranks; ++r) {
    const double x = input_of(r, k, i);
    sum += x;
    hi = std::max(hi, x);
    lo = std::min(lo, x);
  }
  return op == ReduceOp::sum ? sum : op == ReduceOp::avg ? sum / ranks : op == ReduceOp::max ? hi : lo;
}

/// The list collectives as the public calls make them.
struct Public {
  template <class T>
  static void all_reduce(const TensorList<T>& xs, const weft::dist::Group& g, ReduceOp op, BucketOptions b) {
    weft::dist::all_reduce(xs, g, op, b);
  }
  template <class T>
  static void broadcast(const TensorList<T>& xs, int root, const weft::dist::Group& g, BucketOptions b) {
    weft::dist::broadcast(xs, root, g, b);
  }
  template <class T>
  static void all_gather(const TensorList<T>& outs, const TensorList<T>& ins, const weft::dist::Group& g,
                         BucketOptions b) {
    weft::dist::all_gather(outs, ins, g, b);
  }
  template <class T>
  static void reduce_scatter(const TensorList<T>& outs, const TensorList<T>& ins, const weft::dist::Group& g,
                             ReduceOp op) {
    weft::dist::reduce_scatter(outs, ins, g, op);
  }
};

/// The same through the NCCL transport itself, whatever the number of ranks: over one rank the
/// public calls return after the agreement, and a machine with one GPU runs one rank.
struct ThroughTransport {
  template <class T>
  static void all_reduce(const TensorList<T>& xs, const weft::dist::Group& g, ReduceOp op, BucketOptions b) {
    const Device d = xs[0].device();
    weft::dist::detail::with_transport(
        g, d, [&](const auto& wire) { weft::dist::detail::all_reduce_list(wire, xs, op, b, d, g.size(), false); });
  }
  template <class T>
  static void broadcast(const TensorList<T>& xs, int root, const weft::dist::Group& g, BucketOptions b) {
    const Device d = xs[0].device();
    weft::dist::detail::with_transport(g, d, [&](const auto& wire) {
      weft::dist::detail::broadcast_list(wire, xs, root, b, d, g.rank() == root, false);
    });
  }
  template <class T>
  static void all_gather(const TensorList<T>& outs, const TensorList<T>& ins, const weft::dist::Group& g,
                         BucketOptions b) {
    const Device d = ins[0].device();
    weft::dist::detail::with_transport(g, d, [&](const auto& wire) {
      weft::dist::detail::all_gather_list(wire, outs, ins, b, d, g.size(), g.rank());
    });
  }
  template <class T>
  static void reduce_scatter(const TensorList<T>& outs, const TensorList<T>& ins, const weft::dist::Group& g,
                             ReduceOp op) {
    const Device d = ins[0].device();
    weft::dist::detail::with_transport(g, d, [&](const auto& wire) {
      weft::dist::detail::reduce_scatter_list(wire, outs, ins, op, BucketOptions{}, d, g.size());
    });
  }
};

template <class T, class Api>
void all_reduce_case() {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const std::vector<ReduceOp> ops = weft::is_floating_v<T>
                                        ? std::vector<ReduceOp>{ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min}
                                        : std::vector<ReduceOp>{ReduceOp::sum, ReduceOp::max, ReduceOp::min};
  for (ReduceOp op : ops)
    for (bool one_buffer : {false, true})
      for (BucketOptions buckets : {BucketOptions{std::int64_t(sizeof(T)) * 13}, BucketOptions{}}) {
        CAPTURE(int(op));
        CAPTURE(one_buffer);
        CAPTURE(buckets.bucket_bytes);
        const TensorList<T> xs = device_list<T>(kShapes, world.rank(), rank_device(), one_buffer);
        Api::all_reduce(xs, world, op, buckets);
        for (std::size_t k = 0; k < kShapes.size(); ++k) {
          const std::vector<double> got = host_values(xs[k]);
          for (std::int64_t i = 0; i < kShapes[k].numel(); ++i) {
            const double want = reduce_inputs(op, n, k, i);
            // avg of integers is not always representable: one rounding of T
            const double tol = op == ReduceOp::avg ? std::fabs(want) * 0x1p-7 : 0.0;
            REQUIRE(std::fabs(got[std::size_t(i)] - want) <= tol);
          }
        }
      }
}

template <class T, class Api>
void gather_scatter_case() {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const Device device = rank_device();
  // broadcast from the last rank
  const TensorList<T> xs = device_list<T>(kShapes, world.rank(), device, false);
  Api::broadcast(xs, n - 1, world, BucketOptions{std::int64_t(sizeof(T)) * 13});
  for (std::size_t k = 0; k < kShapes.size(); ++k) {
    const std::vector<double> got = host_values(xs[k]);
    for (std::int64_t i = 0; i < kShapes[k].numel(); ++i) REQUIRE(got[std::size_t(i)] == input_of(n - 1, k, i));
  }
  // all_gather: outs[k] holds every rank's ins[k] along dim 0
  const std::vector<Shape> in_shapes = {Shape{3, 4}, Shape{0}, Shape{17}, Shape{130}};
  const TensorList<T> ins = device_list<T>(in_shapes, world.rank(), device, true);
  TensorList<T> outs;
  for (Shape s : in_shapes) {
    s[0] *= n;
    outs.push_back(weft::empty<T>(s, device));
  }
  Api::all_gather(outs, ins, world, BucketOptions{std::int64_t(sizeof(T)) * 10});
  for (std::size_t k = 0; k < in_shapes.size(); ++k) {
    const std::vector<double> got = host_values(outs[k]);
    const std::int64_t m = in_shapes[k].numel();
    for (int r = 0; r < n; ++r)
      for (std::int64_t i = 0; i < m; ++i) REQUIRE(got[std::size_t(r * m + i)] == input_of(r, k, i));
  }
  // reduce_scatter: rank r gets chunk r of the sum of outs (now every rank's gathered lists)
  TensorList<T> chunks;
  for (const Shape& s : in_shapes) chunks.push_back(weft::empty<T>(s, device));
  Api::reduce_scatter(chunks, outs, world, ReduceOp::sum);
  for (std::size_t k = 0; k < in_shapes.size(); ++k) {
    const std::vector<double> got = host_values(chunks[k]);
    for (std::int64_t i = 0; i < in_shapes[k].numel(); ++i)
      REQUIRE(got[std::size_t(i)] == double(n) * input_of(world.rank(), k, i));
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace nccl_test

TEST_SUITE("dist") {

TEST_CASE_TEMPLATE("dist nccl: list all_reduce on CUDA tensors, packed and in place" *
                       doctest::skip(!cuda_available()),
                   T, float, double, weft::half, weft::bfloat16, std::int32_t, std::int64_t) {
  nccl_test::all_reduce_case<T, nccl_test::Public>();
  nccl_test::all_reduce_case<T, nccl_test::ThroughTransport>();
}

TEST_CASE_TEMPLATE("dist nccl: list broadcast, all_gather and reduce_scatter on CUDA tensors" *
                       doctest::skip(!cuda_available()),
                   T, float, weft::bfloat16, std::int32_t) {
  nccl_test::gather_scatter_case<T, nccl_test::Public>();
  nccl_test::gather_scatter_case<T, nccl_test::ThroughTransport>();
}

TEST_CASE_TEMPLATE("dist nccl: single CUDA tensors and strided views" * doctest::skip(!cuda_available()), T, float,
                   weft::half, std::int64_t) {
  const weft::dist::Group world = weft::dist::world();
  const int n = world.size();
  const Device device = nccl_test::rank_device();
  const weft::dist::ReduceOp op = weft::is_floating_v<T> ? ReduceOp::avg : ReduceOp::sum;
  const TensorList<T> mine = nccl_test::device_list<T>({Shape{6, 5}}, world.rank(), device, false);
  Tensor<T> x(mine[0]);
  weft::dist::all_reduce(x, world, op);
  // a strided view: the transpose of a [5, 6] tensor
  Tensor<T> base(mine[0].transpose(0, 1));
  weft::dist::all_reduce(base.transpose(0, 1), world, op);
  const std::vector<double> got = nccl_test::host_values<T>(x), strided = nccl_test::host_values<T>(base.transpose(0, 1));
  for (std::int64_t i = 0; i < 30; ++i) {
    const double want = nccl_test::reduce_inputs(op, n, 0, i);
    CHECK(std::fabs(got[std::size_t(i)] - want) <= std::fabs(want) * 0x1p-10);
    CHECK(std::fabs(strided[std::size_t(i)] - want) <= std::fabs(want) * 0x1p-10);
  }
  Tensor<T> gathered = weft::empty<T>(Shape{6 * std::int64_t(n), 5}, device);
  weft::dist::all_gather(gathered, mine[0], world);
  const std::vector<double> all = nccl_test::host_values<T>(gathered);
  for (int r = 0; r < n; ++r)
    for (std::int64_t i = 0; i < 30; ++i) CHECK(all[std::size_t(r * 30 + i)] == nccl_test::input_of(r, 0, i));
  Tensor<T> chunk = weft::empty<T>(Shape{6, 5}, device);
  weft::dist::reduce_scatter(chunk, gathered, world, ReduceOp::max);
  const std::vector<double> top = nccl_test::host_values<T>(chunk);
  for (std::int64_t i = 0; i < 30; ++i) CHECK(top[std::size_t(i)] == nccl_test::input_of(world.rank(), 0, i));
  weft::dist::broadcast(chunk, 0, world);
  const std::vector<double> from_root = nccl_test::host_values<T>(chunk);
  for (std::int64_t i = 0; i < 30; ++i) CHECK(from_root[std::size_t(i)] == nccl_test::input_of(0, 0, i));
}

TEST_CASE("dist nccl: a CUDA list and a CPU list do not meet" * doctest::skip(!cuda_available())) {
  const weft::dist::Group world = weft::dist::world();
  if (world.size() < 2) return;
  const Device device = world.rank() == 0 ? Device::cpu() : nccl_test::rank_device();
  const TensorList<float> xs = nccl_test::device_list<float>({Shape{4}}, world.rank(), device, false);
  std::string text;
  try {
    weft::dist::all_reduce(xs, world);
  } catch (const weft::Error& e) {
    text = e.what();
  }
  INFO(text);
  CHECK(text.find("the ranks disagree") != std::string::npos);
  CHECK(text.find("on cuda:") != std::string::npos);
}

}  // TEST_SUITE
