// SPDX-License-Identifier: MIT
/// @file cpu: weft never deep-copies a tensor it was given. An AdamW step, a fused statement and an
/// attention call copy no element of their inputs and allocate only their outputs, counted by
/// weft's own counters (every Storage allocation, every Tensor copy / clone / contiguous copy).
#include <vector>

#include "reference.hpp"

using namespace weft_test;
using weft::TensorList;

namespace {

/// Allocations and element copies made while f runs.
struct Counts {
  std::int64_t allocations = 0, copies = 0, elements = 0;
};
template <class F>
Counts counted(F&& f) {
  auto& c = weft::detail::tensor_counters();
  const Counts before{c.allocations.load(), c.copies.load(), c.elements_copied.load()};
  f();
  return {c.allocations.load() - before.allocations, c.copies.load() - before.copies,
          c.elements_copied.load() - before.elements};
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("zero copies: an AdamW step updates the caller's tensors in place") {
  WEFT_TEST_RNG(rng);
  std::vector<Tensor<float>> params, grads;
  for (const Shape& s : {Shape{64, 33}, Shape{33}, Shape{7, 5, 3}}) {
    params.push_back(random_contiguous<float>(rng, s, Domain{}));
    grads.push_back(random_contiguous<float>(rng, s, Domain{}));
  }
  std::vector<float*> addresses;
  for (auto& p : params) addresses.push_back(p.data());
  weft::optim::AdamW<float> opt(params, {.lr = 1e-2, .weight_decay = 0.1});
  const Counts first = counted([&] { opt.step(grads); });
  CHECK(first.copies == 0);
  CHECK(first.allocations <= 2 * 3);  // the state (exp_avg, exp_avg_sq), made at the first step
  const std::vector<double> before = values_of(params[0]);
  const Counts second = counted([&] {
    opt.step(grads);
    opt.step(TensorList<float>(grads));
  });
  CHECK(second.copies == 0);
  CHECK(second.allocations == 0);
  for (std::size_t k = 0; k < params.size(); ++k) CHECK(params[k].data() == addresses[k]);
  CHECK(values_of(params[0]) != before);  // the step wrote the caller's tensors
}

TEST_CASE("zero copies: a fused statement writes its destinations and reads its inputs in place") {
  WEFT_TEST_RNG(rng);
  Tensor<float> m = random_contiguous<float>(rng, Shape{300, 40}, Domain{});
  Tensor<float> p = random_contiguous<float>(rng, Shape{300, 40}, Domain{});
  const Tensor<float> g = random_contiguous<float>(rng, Shape{300, 40}, Domain{});
  const TensorView<const float> bias = random_contiguous<float>(rng, Shape{40}, Domain{});
  const Counts c = counted([&] {
    auto m1 = 0.9f * m + 0.1f * (g + bias);
    weft::fuse(weft::assign(m, m1), weft::assign(p, p - 1e-3f * m1));
    m += g.transpose(0, 1).transpose(0, 1);  // a strided read of a non-overlapping input: no copy
    p.slice(0, 0, 300, 2) = g.slice(0, 1, 300, 2);
  });
  CHECK(c.copies == 0);
  CHECK(c.allocations == 0);
  // An input that overlaps its destination in a non-elementwise way IS copied (and logged).
  Tensor<float> sq = random_contiguous<float>(rng, Shape{8, 8}, Domain{});
  const Counts t = counted([&] { sq = sq.transpose(0, 1); });
  CHECK(t.copies == 1);
  CHECK(t.elements == 64);
}

TEST_CASE("zero copies: attention reads q, k, v and the mask in place and allocates only its outputs") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> q = random_contiguous<float>(rng, Shape{2, 3, 17, 16}, Domain{});
  const Tensor<float> kv = random_contiguous<float>(rng, Shape{2, 21, 3, 16}, Domain{});
  const TensorView<const float> k = kv.transpose(1, 2);  // (2, 3, 21, 16), strided: read as it is
  const Tensor<bool> mask = weft::eval(random_contiguous<float>(rng, Shape{17, 21}, Domain{}) > -0.8f);
  weft::nn::SdpaOptions o;
  o.attn_mask = mask;
  weft::nn::SdpaOutput<float> fwd;
  const Counts f = counted([&] { fwd = weft::nn::sdpa_forward(q, k, k, o); });
  CHECK(f.copies == 0);
  CHECK(f.allocations == 2 + 1);  // out, lse, and the mask's additive bias
  const Tensor<float> dout = random_contiguous<float>(rng, fwd.out.shape(), Domain{});
  const Counts b = counted([&] { weft::nn::sdpa_backward(dout, q, k, k, fwd.out, fwd.lse, o); });
  CHECK(b.copies == 0);
  CHECK(b.allocations == 3 + 1);  // dq, dk, dv, and the mask's additive bias
}

}  // TEST_SUITE
