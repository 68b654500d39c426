// SPDX-License-Identifier: MIT
/// @file cpu: DLPack without copies. to_dlpack hands out weft's elements (its storage lives until
/// the consumer's deleter call), from_dlpack views a producer's (whose deleter runs exactly once,
/// when the last handle dies), for every dtype, with strides, NULL strides and byte_offset; a
/// mismatch throws weft::Error naming what was passed and what was expected, and takes nothing over.
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include <weft/interop/dlpack.hpp>

#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

/// A producer as another framework would be: it owns `elements` bytes and a shape, and counts
/// the calls of its deleter (which frees nothing: the test owns the Producer).
struct Producer {
  std::vector<unsigned char> elements;
  std::vector<std::int64_t> shape, strides;
  DLManagedTensor managed{};
  int deleted = 0;

  Producer(DLDataType dtype, std::vector<std::int64_t> shape_, std::vector<std::int64_t> strides_,
           std::size_t bytes, std::uint64_t byte_offset = 0)
      : elements(bytes), shape(std::move(shape_)), strides(std::move(strides_)) {
    DLTensor& t = managed.dl_tensor;
    t.data = elements.data();
    t.device = {kDLCPU, 0};
    t.ndim = int(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = byte_offset;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
  }
};

constexpr DLDataType kFloat32{kDLFloat, 32, 1};

/// DLPack's (code, bits) of each dtype, written out independently of weft's table.
template <class T>
DLDataType expected_dl_dtype() {
  if constexpr (std::is_same_v<T, float>) return {2, 32, 1};
  else if constexpr (std::is_same_v<T, double>) return {2, 64, 1};
  else if constexpr (std::is_same_v<T, half>) return {2, 16, 1};
  else if constexpr (std::is_same_v<T, bfloat16>) return {4, 16, 1};
  else if constexpr (std::is_same_v<T, std::int8_t>) return {0, 8, 1};
  else if constexpr (std::is_same_v<T, std::uint8_t>) return {1, 8, 1};
  else if constexpr (std::is_same_v<T, std::int16_t>) return {0, 16, 1};
  else if constexpr (std::is_same_v<T, std::int32_t>) return {0, 32, 1};
  else if constexpr (std::is_same_v<T, std::int64_t>) return {0, 64, 1};
  else return {6, 8, 1};
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("to_dlpack / from_dlpack: every dtype, same addresses, both round trips", T, float, double,
                   half, bfloat16, std::int8_t, std::uint8_t, std::int16_t, std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  DLManagedTensor* again = nullptr;
  std::vector<double> column_want;
  {
    Tensor<T> x = random_contiguous<T>(rng, Shape{5, 7}, Domain{});
    const std::vector<double> want = values_of(x);
    for (int i = 0; i < 5; ++i) column_want.push_back(want[std::size_t(i * 7 + 3)]);
    TensorView<T> column = x.transpose(0, 1).select(0, 3);  // shape [5], stride 7, offset 3
    DLManagedTensor* m = weft::to_dlpack(column);
    const DLTensor& t = m->dl_tensor;
    const DLDataType dt = expected_dl_dtype<T>();
    CHECK(int(t.dtype.code) == int(dt.code));
    CHECK(int(t.dtype.bits) == int(dt.bits));
    CHECK(int(t.dtype.lanes) == 1);
    CHECK(t.device.device_type == kDLCPU);
    CHECK(t.data == static_cast<void*>(x.data()));
    CHECK(t.byte_offset == 3 * sizeof(T));
    REQUIRE(t.ndim == 1);
    CHECK(t.shape[0] == 5);
    CHECK(t.strides[0] == 7);

    // DLPack -> weft -> DLPack: the same elements, described the same way.
    TensorView<T> back = weft::from_dlpack<T>(m);
    CHECK(back.data() == column.data());
    CHECK(back.storage() != column.storage());  // a handle of its own, releasing m when it dies
    again = weft::to_dlpack(back);
    CHECK(again->dl_tensor.data == t.data);
    CHECK(again->dl_tensor.byte_offset == t.byte_offset);
    CHECK(again->dl_tensor.strides[0] == 7);
  }
  // weft's own handles are gone: `again` keeps the elements (and m) alive; ASan checks the reads.
  TensorView<const T> last = weft::from_dlpack<const T>(again);
  CHECK(values_of(last) == column_want);
}

TEST_CASE("from_dlpack: a producer's buffer in place, writes both ways, the deleter once after the last handle") {
  WEFT_TEST_RNG(rng);
  Producer p(kFloat32, {3, 4}, {}, 12 * sizeof(float));  // strides NULL: compact row-major
  std::vector<float> values(12);
  for (float& v : values) v = random_value<float>(rng, Domain{});
  std::memcpy(p.elements.data(), values.data(), 48);
  {
    std::optional<TensorView<float>> v = weft::from_dlpack<float>(&p.managed);
    CHECK(static_cast<void*>(v->data()) == p.elements.data());
    CHECK(v->strides() == weft::Strides{4, 1});
    CHECK(v->to_vector() == values);
    const Tensor<float> row = random_contiguous<float>(rng, Shape{4}, Domain{});
    v->select(0, 1) = row;  // weft writes the producer's memory
    std::memcpy(values.data() + 4, row.data(), 16);
    CHECK(std::memcmp(p.elements.data(), values.data(), 48) == 0);
    reinterpret_cast<float*>(p.elements.data())[11] = 9.0f;  // the producer writes: weft sees it
    CHECK(v->select(0, 2).to_vector()[3] == 9.0f);
    auto expression = v->transpose(0, 1) * 2;  // holds a handle of its own
    v.reset();
    CHECK(p.deleted == 0);
    const Tensor<float> doubled = expression;
    CHECK(doubled.to_vector()[11] == 18.0f);  // element (3, 2) of the transpose
  }
  CHECK(p.deleted == 1);
}

TEST_CASE("from_dlpack: strides, byte_offset and a CUDA device are kept as given") {
  // A [2, 3] view with row stride 5 and column stride 2, starting 3 elements into the buffer.
  Producer p({kDLInt, 64, 1}, {2, 3}, {5, 2}, 20 * sizeof(std::int64_t), 3 * sizeof(std::int64_t));
  auto* e = reinterpret_cast<std::int64_t*>(p.elements.data());
  for (int i = 0; i < 20; ++i) e[i] = 100 + i;
  {
    TensorView<const std::int64_t> v = weft::from_dlpack<const std::int64_t>(&p.managed);
    CHECK(v.data() == e + 3);
    CHECK(v.offset() == 3);
    CHECK(v.to_vector() == std::vector<std::int64_t>{103, 105, 107, 108, 110, 112});
  }
  CHECK(p.deleted == 1);

  // A CUDA tensor becomes a view on Device::cuda(device_id); nothing reads its elements here.
  Producer g(kFloat32, {8}, {}, 8 * sizeof(float));
  g.managed.dl_tensor.device = {kDLCUDA, 1};
  {
    TensorView<float> v = weft::from_dlpack<float>(&g.managed);
    CHECK(v.device() == weft::Device::cuda(1));
    CHECK(static_cast<void*>(v.data()) == g.elements.data());
    DLManagedTensor* out = weft::to_dlpack(v);
    CHECK(out->dl_tensor.device.device_type == kDLCUDA);
    CHECK(out->dl_tensor.device.device_id == 1);
    out->deleter(out);
  }
  CHECK(g.deleted == 1);
}

TEST_CASE("from_dlpack: a mismatch throws weft::Error, says what was passed and expected, and takes nothing over") {
  Producer p(kFloat32, {2, 3}, {}, 6 * sizeof(float));
  std::string e = error_of([&] { weft::from_dlpack<std::int32_t>(&p.managed); });
  CHECK(has(e, "kDLFloat (2), 32 bits"));
  CHECK(has(e, "expected kDLInt (0), 32 bits, 1 lane for int32"));
  p.managed.dl_tensor.dtype = {kDLFloat, 32, 4};
  CHECK(has(error_of([&] { weft::from_dlpack<float>(&p.managed); }), "4 lanes"));
  p.managed.dl_tensor.dtype = {kDLUInt, 8, 1};
  CHECK(has(error_of([&] { weft::from_dlpack<bool>(&p.managed); }), "expected kDLBool (6), 8 bits"));
  // Signedness is part of the dtype: a uint8 tensor is no int8 tensor, and the other way round.
  CHECK(has(error_of([&] { weft::from_dlpack<std::int8_t>(&p.managed); }),
            "kDLUInt (1), 8 bits, 1 lane, expected kDLInt (0), 8 bits, 1 lane for int8"));
  p.managed.dl_tensor.dtype = {kDLInt, 8, 1};
  CHECK(has(error_of([&] { weft::from_dlpack<std::uint8_t>(&p.managed); }), "expected kDLUInt (1), 8 bits, 1 lane for uint8"));
  p.managed.dl_tensor.dtype = {kDLInt, 16, 1};
  CHECK(has(error_of([&] { weft::from_dlpack<std::int8_t>(&p.managed); }), "kDLInt (0), 16 bits"));
  p.managed.dl_tensor.dtype = kFloat32;
  p.managed.dl_tensor.device = {kDLROCM, 0};
  CHECK(has(error_of([&] { weft::from_dlpack<float>(&p.managed); }), "expected kDLCPU (1) or kDLCUDA (2)"));
  p.managed.dl_tensor.device = {kDLCPU, 0};
  p.strides = {-3, 1};
  p.managed.dl_tensor.strides = p.strides.data();
  CHECK(has(error_of([&] { weft::from_dlpack<float>(&p.managed); }), "negative stride"));
  p.managed.dl_tensor.strides = nullptr;
  p.managed.dl_tensor.byte_offset = 2;
  CHECK(has(error_of([&] { weft::from_dlpack<float>(&p.managed); }), "not a multiple of the element size 4"));
  p.managed.dl_tensor.byte_offset = 0;
  p.managed.dl_tensor.data = nullptr;
  CHECK(has(error_of([&] { weft::from_dlpack<float>(&p.managed); }), "null"));
  CHECK(has(error_of([] { weft::from_dlpack<float>(nullptr); }), "null"));
  CHECK(has(error_of([] { weft::to_dlpack(TensorView<float>()); }), "undefined"));
  CHECK(p.deleted == 0);  // every failure left the tensor to its producer
}

}  // TEST_SUITE
