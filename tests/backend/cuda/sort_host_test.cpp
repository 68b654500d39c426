// SPDX-License-Identifier: MIT
/// @file The CUDA sort's per-thread bodies (cuda::write_sort_key, cuda::write_sorted_element) and its batching of
/// rows (cuda::sort_batch_rows), run on the host for every thread of every batch, with CUB's stable radix sort of each
/// row's (key, index) pairs emulated by std::stable_sort on the key: the result equals the CPU's sort exactly (itself
/// checked against a reference in tests/ops/sort_test.cpp), on every dtype, dims 0 and -1, both directions, batches
/// of one row, of several, and of all rows. Plain C++: g++ compiles it, and it runs without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <weft/backend/cuda/sort_thread.hpp>
#include <weft/ops/sort.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

namespace wc = weft::detail::cuda;

/// What cuda::run_sort computes, with each kernel's threads run in a loop and CUB's sort of each row's
/// pairs replaced by a stable sort on the key; at most max_items elements per batch.
template <class T>
weft::Sorted<T> sort_emulated(const weft::Tensor<T>& x, int d, bool descending, std::int64_t max_items) {
  using K = weft::detail::radix_key_t<T>;
  const weft::detail::DimRows r = weft::detail::rows_along(x.shape(), d);
  weft::Sorted<T> out{weft::full<T>(x.shape(), T(1)), weft::full<std::int64_t>(x.shape(), -1)};  // poisoned
  const std::int64_t rows = r.outer * r.inner, per_batch = wc::sort_batch_rows(r.n, max_items);
  for (std::int64_t first = 0; first < rows; first += per_batch) {
    const wc::SortBatch batch{first, std::min(per_batch, rows - first), r.n, r.inner};
    const std::int64_t total = batch.rows * batch.n;
    std::vector<K> keys(std::size_t(total), K(0x5a));
    std::vector<std::int32_t> order(std::size_t(total), -7);
    for (std::int64_t t = 0; t < total; ++t)
      wc::write_sort_key(x.data(), keys.data(), order.data(), batch, t, descending);
    for (std::int64_t s = 0; s < batch.rows; ++s) {
      const auto begin = order.begin() + s * batch.n;
      std::vector<std::int32_t> row(begin, begin + batch.n);
      std::stable_sort(row.begin(), row.end(), [&](std::int32_t a, std::int32_t b) {
        return keys[std::size_t(s * batch.n + a)] < keys[std::size_t(s * batch.n + b)];
      });
      std::copy(row.begin(), row.end(), begin);
    }
    for (std::int64_t t = 0; t < total; ++t)
      wc::write_sorted_element(x.data(), order.data(), out.values.data(), out.indices.data(), batch, t);
  }
  return out;
}

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("cuda sort batches: at least one row, at most max_items elements") {
  CHECK(wc::sort_batch_rows(256) == 2147483647 / 256);
  CHECK(wc::sort_batch_rows(5, 12) == 2);
  CHECK(wc::sort_batch_rows(20, 12) == 1);  // a row longer than a batch goes alone
  CHECK(wc::sort_batch_rows(0, 12) == 12);
}

TEST_CASE_TEMPLATE("cuda sort's thread bodies on the host: the CPU's sort, bit for bit", T, float, double, half,
                   bfloat16, std::int32_t, std::int64_t, bool, std::int8_t, std::uint8_t, std::int16_t) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 12; ++iter) {
    const Shape shape = random_shape(rng, 1, 3, 2000);
    const Tensor<T> x = random_contiguous<T>(rng, shape, tie_domain<T>(0.05));
    const int d = rng.chance(0.5) ? 0 : shape.rank() - 1;
    const bool descending = rng.chance(0.5);
    const std::int64_t max_items = rng.chance(0.3) ? 1 : rng.integer(1, 3 * std::max<std::int64_t>(shape[d], 1));
    INFO("dtype ", type_name<T>(), ", shape ", shape_str(shape), ", dim ", d, ", descending ", descending,
         ", batches of up to ", max_items, " elements");
    const weft::Sorted<T> got = sort_emulated(x, d, descending, max_items), want = weft::sort(x, d, descending);
    CHECK(values_of(got.indices) == values_of(want.indices));
    const std::vector<double> gv = values_of(got.values), wv = values_of(want.values);
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < gv.size(); ++i) wrong += !(gv[i] == wv[i] || (std::isnan(gv[i]) && std::isnan(wv[i])));
    CHECK(wrong == 0);
  }
}

}  // TEST_SUITE
