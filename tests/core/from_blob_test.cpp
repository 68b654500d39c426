// SPDX-License-Identifier: MIT
/// @file cpu: from_blob views a caller's buffer in place (same addresses, writes in both
/// directions, no allocation), with any strides, and runs its deleter exactly once, when the last
/// handle dies; bad arguments throw and leave the buffer to the caller.
#include <memory>
#include <vector>

#include <weft/core/from_blob.hpp>

#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

/// Row-major values of `shape` read from `buffer` through `strides`, without weft.
std::vector<double> blob_values(const std::vector<float>& buffer, const Shape& shape, const weft::Strides& strides) {
  std::vector<double> out;
  for_each_index(shape, [&](const std::vector<std::int64_t>& idx) {
    std::int64_t at = 0;
    for (int d = 0; d < shape.rank(); ++d) at += idx[std::size_t(d)] * strides[d];
    out.push_back(buffer[std::size_t(at)]);
  });
  return out;
}

std::vector<float> blob_buffer(Rng& rng, std::size_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = random_value<float>(rng, Domain{});
  return v;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("from_blob: a contiguous view of the caller's buffer, read and written in place, no allocation") {
  WEFT_TEST_RNG(rng);
  std::vector<float> buffer = blob_buffer(rng, 24);
  const std::int64_t allocations = weft::detail::tensor_counters().allocations.load();
  TensorView<float> v = weft::from_blob<float>(buffer.data(), {4, 6});
  CHECK(weft::detail::tensor_counters().allocations.load() == allocations);
  CHECK(v.data() == buffer.data());
  CHECK(v.shape() == Shape{4, 6});
  CHECK(v.strides() == weft::Strides{6, 1});
  CHECK(v.device() == weft::Device::cpu());
  CHECK(values_of(v) == blob_values(buffer, {4, 6}, {6, 1}));

  buffer[7] = 123.0f;  // the caller writes: the view sees it
  CHECK(v.select(0, 1).to_vector()[1] == 123.0f);
  const Tensor<float> src = random_contiguous<float>(rng, Shape{6}, Domain{});
  const std::int64_t before_write = weft::detail::tensor_counters().allocations.load();
  v.select(0, 2) = src;  // weft writes: the caller's buffer changes, in place
  CHECK(weft::detail::tensor_counters().allocations.load() == before_write);
  for (int j = 0; j < 6; ++j) CHECK(buffer[std::size_t(12 + j)] == src.to_vector()[std::size_t(j)]);

  const std::vector<float> constant = blob_buffer(rng, 6);
  auto ro = weft::from_blob<const float>(constant.data(), {2, 3});
  static_assert(std::is_same_v<decltype(ro), TensorView<const float>>);
  CHECK(ro.data() == constant.data());
  CHECK(values_of(ro) == blob_values(constant, {2, 3}, {3, 1}));
}

TEST_CASE("from_blob: strides in elements (column-major, gaps, broadcast), views of it and kernels through it") {
  WEFT_TEST_RNG(rng);
  std::vector<float> buffer = blob_buffer(rng, 64);
  const Shape shape{3, 4};
  for (const weft::Strides& strides : {weft::Strides{1, 3}, weft::Strides{10, 2}, weft::Strides{0, 1}}) {
    CAPTURE(shape_str(strides));
    TensorView<float> v = weft::from_blob(buffer.data() + 1, shape, strides);
    CHECK(v.data() == buffer.data() + 1);
    CHECK(v.strides() == strides);
    const std::vector<float> tail(buffer.begin() + 1, buffer.end());
    CHECK(values_of(v) == blob_values(tail, shape, strides));
    CHECK(v.transpose(0, 1).to_vector() == Tensor<float>(v).transpose(0, 1).to_vector());
  }
  // A kernel reads and writes the caller's strided buffer in place: y = 2 * x over column-major x.
  std::vector<float> out(12, std::numeric_limits<float>::quiet_NaN());
  TensorView<float> y = weft::from_blob(out.data(), shape, weft::Strides{1, 3});
  TensorView<const float> x = weft::from_blob<const float>(buffer.data(), shape, weft::Strides{1, 3});
  y = 2 * x;
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == 2 * buffer[i]);
}

TEST_CASE("from_blob: the deleter runs exactly once, when the last handle dies") {
  WEFT_TEST_RNG(rng);
  auto* owned = new float[12];
  for (int i = 0; i < 12; ++i) owned[i] = random_value<float>(rng, Domain{});
  int deleted = 0;
  auto deleter = [&deleted](float* p) {
    ++deleted;
    delete[] p;
  };
  Tensor<float> copied, assigned;
  std::optional<weft::TensorList<float>> list;
  {
    TensorView<float> v = weft::from_blob<float>(owned, {3, 4}, weft::Device::cpu(), deleter);
    std::optional<TensorView<float>> copy = v;                              // a copy of the handle
    std::optional<TensorView<float>> inner = v.transpose(0, 1).slice(0, 1, 3);  // a view of a view
    copied = Tensor<float>(v);                                                 // owns a copy
    assigned = v;                                                              // too
    list.emplace();
    list->push_back(v.select(0, 2));
    auto expression = v * 2 + 1;  // reads v through a handle of its own
    v = v + 1;
    CHECK(deleted == 0);
    Tensor<float> evaluated = expression;
    CHECK(evaluated.to_vector()[0] == 2 * owned[0] + 1);
    copy.reset();
    inner.reset();
    CHECK(deleted == 0);
  }
  CHECK(deleted == 0);  // the list still holds a view
  CHECK((*list)[0].to_vector()[0] == copied.to_vector()[8] + 1);
  list.reset();
  CHECK(deleted == 1);
  CHECK(copied.to_vector() == assigned.to_vector());  // the copies outlive the buffer
}

TEST_CASE("from_blob: bad arguments throw weft::Error and the deleter is not called") {
  float buffer[8] = {};
  int deleted = 0;
  const weft::BlobDeleter<float> deleter = [&deleted](float*) { ++deleted; };
  CHECK(has(error_of([&] { weft::from_blob<float>(nullptr, {2, 3}, weft::Device::cpu(), deleter); }), "null"));
  CHECK(has(error_of([&] { weft::from_blob<float>(buffer, {2, -1}); }), "negative extent"));
  CHECK(has(error_of([&] { weft::from_blob<float>(buffer, {2, 2}, {-1, 1}); }), "negative stride"));
  CHECK(has(error_of([&] { weft::from_blob<float>(buffer, {2, 2}, {1}, weft::Device::cpu(), deleter); }),
            "do not match shape"));
  CHECK(deleted == 0);
  // No elements need no address; the deleter still runs when the view dies.
  { TensorView<float> empty = weft::from_blob<float>(nullptr, {0, 3}, weft::Device::cpu(), deleter); }
  CHECK(deleted == 1);
}

}  // TEST_SUITE
