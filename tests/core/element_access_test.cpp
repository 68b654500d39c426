// SPDX-License-Identifier: MIT
/// @file core: host element access t(i, j, ...) (read and write, negative indices, bounds checks),
/// t[i] (select along dim 0), t() (torch's matrix transpose), fill_ and zero_, on tensors and on
/// views with strides and offsets. Every element is checked against the raw storage read through
/// the view's own strides (reference.hpp: value_at), every write against a snapshot of the storage.
#include "error_check.hpp"
#include "reference.hpp"

#include <weft/core/from_blob.hpp>

using namespace weft_test;
using weft::Device;
using weft::Error;

namespace {

/// x(idx[0], ..., idx[rank - 1]): the element access under test at a run-time rank.
template <class X>
decltype(auto) element(const X& x, const std::vector<std::int64_t>& i) {
  switch (i.size()) {
    case 0: return x();
    case 1: return x(i[0]);
    case 2: return x(i[0], i[1]);
    case 3: return x(i[0], i[1], i[2]);
    default: return x(i[0], i[1], i[2], i[3]);
  }
}

/// The same index with every coordinate counted from the end (i - n).
std::vector<std::int64_t> from_end(const Shape& shape, std::vector<std::int64_t> idx) {
  for (std::size_t d = 0; d < idx.size(); ++d) idx[d] -= shape[int(d)];
  return idx;
}

/// Every element of views of every layout read through t(i, ...) and t(i - n, ...), and written
/// one at a time through t(i, ...): exactly that storage element changes, to the value written.
template <class T>
void check_layouts() {
  WEFT_TEST_RNG(rng);
  const Domain domain;
  for (int round = 0; round < 40; ++round) {
    const Shape shape = random_shape(rng, 0, 4, 300);
    for (Layout layout : {Layout::contiguous, Layout::strided, Layout::permuted, Layout::permuted_strided,
                          Layout::expanded, Layout::selected}) {
      CAPTURE(shape_str(shape));
      CAPTURE(layout_name(layout));
      const TensorView<T> v = make_view<T>(rng, shape, domain, layout);
      const TensorView<const T> ro = v;
      for_each_index(shape, [&](const std::vector<std::int64_t>& idx) {
        CAPTURE(index_str(idx));
        CHECK(double(element(v, idx)) == value_at(v, idx));
        CHECK(double(element(ro, idx)) == value_at(v, idx));
        CHECK(&element(v, from_end(shape, idx)) == &element(v, idx));
      });
      if (layout == Layout::expanded) continue;  // elements shared by several indices
      for_each_index(shape, [&](const std::vector<std::int64_t>& idx) {
        CAPTURE(index_str(idx));
        const std::vector<unsigned char> before = storage_snapshot(v);
        const T fresh = random_value<T>(rng, domain);
        element(v, idx) = fresh;
        const std::vector<unsigned char> after = storage_snapshot(v);
        const std::size_t at = std::size_t(storage_index(v, idx)) * sizeof(T);
        CHECK(std::memcmp(after.data() + at, &fresh, sizeof(T)) == 0);
        std::size_t changed = 0;
        for (std::size_t b = 0; b < before.size(); ++b) changed += (before[b] != after[b]) && (b < at || b >= at + sizeof(T));
        CHECK(changed == 0);
      });
    }
  }
}

}  // namespace

TEST_CASE("element access t(i, ...) reads and writes every layout, negative indices from the end") {
  check_layouts<float>();
  check_layouts<std::int64_t>();
  check_layouts<half>();
  check_layouts<bfloat16>();
  check_layouts<std::int32_t>();
  check_layouts<bool>();
}

TEST_CASE("element access: writable on tensors and views, read-only when const") {
  Tensor<float> t = weft::zeros<float>({2, 3});
  const Tensor<float>& ct = t;
  static_assert(std::is_same_v<decltype(t(0, 1)), float&>);
  static_assert(std::is_same_v<decltype(ct(0, 1)), const float&>);
  static_assert(std::is_same_v<decltype(t.view()(0, 1)), float&>);
  static_assert(std::is_same_v<decltype(ct.view()(0, 1)), const float&>);
  static_assert(std::is_same_v<decltype(static_cast<const weft::TensorBase<float>&>(t)(0, 1)), const float&>);
  static_assert(!std::is_invocable_v<Tensor<float>&, double>);  // indices are integers
  static_assert(!std::is_invocable_v<Tensor<float>&, bool>);
  t(1, -1) = 2.5f;
  CHECK(ct(1, 2) == 2.5f);
  CHECK(&ct(-1, -1) == t.data() + 5);
  Tensor<float> scalar = weft::full<float>({}, 4.0f);
  CHECK(scalar() == 4.0f);  // a 0-dim tensor: no index
}

TEST_CASE("element access errors name the index, the dim and the shape") {
  Tensor<float> t = weft::zeros<float>({3, 4});
  const std::string high = error_of([&] { (void)t(1, 4); });
  CHECK(has(high, "weft::operator(): index 4 is out of range for dim 1 of shape [3, 4]"));
  CHECK(has(high, "dim 1 takes indices from -4 to 3"));
  CHECK(has(error_of([&] { (void)t(-4, 0); }), "index -4 is out of range for dim 0 of shape [3, 4]"));
  CHECK(has(error_of([&] { (void)t.select(1, 2)(3); }), "index 3 is out of range for dim 0 of shape [3]"));
  CHECK(has(error_of([&] { (void)t(1); }), "got 1 index for a tensor of shape [3, 4]; give one index per dim (2)"));
  CHECK(has(error_of([&] { (void)t(0, 0, 0); }), "got 3 indices"));
  CHECK(has(error_of([] { (void)Tensor<float>()(0); }), "undefined"));
}

TEST_CASE("element access of a CUDA tensor is an error that names the fix") {
  float storage[4] = {1, 2, 3, 4};
  // A view that says its elements are on a GPU: element access must refuse before reading them.
  const TensorView<float> on_gpu = weft::from_blob<float>(storage, Shape{2, 2}, weft::contiguous_strides(Shape{2, 2}),
                                                          Device::cuda(0));
  const std::string message = error_of([&] { (void)on_gpu(0, 1); });
  CHECK(has(message, "weft::operator(): element access reads host memory, but this tensor of shape [2, 2] is on cuda:0"));
  CHECK(has(message, ".to(Device::cpu())"));
  CHECK(has(message, "t[i][j].item()"));
}

TEST_CASE("t[i] is select(0, i): t[i][j] is a 0-dim view of element (i, j)") {
  WEFT_TEST_RNG(rng);
  const TensorView<double> v = make_view<double>(rng, Shape{3, 5, 2}, Domain{}, Layout::permuted_strided);
  for (std::int64_t i = -3; i < 3; ++i)
    for (std::int64_t j = -5; j < 5; ++j) {
      const TensorView<double> e = v[i][j];
      CHECK(e.shape() == Shape{2});
      CHECK(e.data() == &v(i, j, 0));
      CHECK(e.strides()[0] == v.strides()[2]);
      CHECK(v[i][j][1].item() == v(i, j, 1));
    }
  Tensor<float> t = weft::zeros<float>({2, 3});
  t[1][2] = 7;  // assigning to the 0-dim view writes the element
  CHECK(t(1, 2) == 7);
  const Tensor<float>& ct = t;
  static_assert(std::is_same_v<decltype(ct[0]), TensorView<const float>>);
  static_assert(std::is_same_v<decltype(t[0]), TensorView<float>>);
  CHECK(has(error_of([&] { (void)t[2]; }), "weft::select: index 2 is out of range for dim 0 of shape [2, 3]"));
}

TEST_CASE("t() transposes a matrix and leaves 0-D and 1-D tensors as they are") {
  WEFT_TEST_RNG(rng);
  const TensorView<float> m = make_view<float>(rng, Shape{4, 3}, Domain{}, Layout::strided);
  const TensorView<float> mt = m.t();
  CHECK(mt.shape() == Shape{3, 4});
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 3; ++j) CHECK(&mt(j, i) == &m(i, j));
  Tensor<float> row = weft::zeros<float>({5});
  CHECK(row.t().shape() == Shape{5});
  CHECK(row.t().data() == row.data());
  const Tensor<float> three = weft::zeros<float>({2, 3, 4});
  CHECK(has(error_of([&] { (void)three.t(); }),
            "weft::t: needs a tensor of at most 2 dims, got shape [2, 3, 4]; use transpose(-2, -1)"));
}

TEST_CASE("fill_ and zero_ write every viewed element and nothing else") {
  WEFT_TEST_RNG(rng);
  Tensor<float> base = random_contiguous<float>(rng, Shape{6, 7}, Domain{});
  const std::vector<float> before = base.to_vector();
  const float value = float(rng.uniform(1, 2));
  base.slice(0, 1, 6, 2).narrow(1, 2, 4).fill_(value);  // rows 1, 3, 5; columns 2..5
  const std::vector<float> filled = base.to_vector();
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 7; ++j) {
      const bool inside = i % 2 == 1 && j >= 2 && j < 6;
      CHECK(filled[std::size_t(i * 7 + j)] == (inside ? value : before[std::size_t(i * 7 + j)]));
    }
  CHECK(&base.zero_() == &base);
  for (float x : base.to_vector()) CHECK(x == 0.0f);
  Tensor<bool> mask = weft::full<bool>({3}, true);
  mask.zero_();
  CHECK(mask.to_vector() == std::vector<bool>(3, false));
  Tensor<half> h = weft::zeros<half>({2});
  h.fill_(1.5);
  CHECK(float(h(1)) == 1.5f);
  Tensor<float> undefined;
  CHECK(has(error_of([&] { undefined.fill_(1); }), "weft::fill_: the tensor is undefined"));
}
