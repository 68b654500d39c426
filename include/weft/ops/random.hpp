// SPDX-License-Identifier: MIT
/// @file The random ops beyond the factories: normal_ and uniform_ in place, bernoulli, multinomial and randperm, each drawing from a RandomSource.
///
/// Like the factories, each op reserves its counters from its source's generator (a Generator
/// passed, a fresh Generator(seed), or the global one) after its checks, and element i's value
/// depends only on (seed, the counter the op gives it): the same values for every thread count
/// and on every device. The values are made on the host; a CUDA operand goes there and back (one
/// copy each way).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/backend/threads.hpp"
#include "weft/core/generator.hpp"
#include "weft/core/random.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/materialize.hpp"

namespace weft {
namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// x's elements contiguous on the host (a copy when x is strided or on a device).
template <class T>
TensorView<const T> host_contiguous(const TensorView<const T>& x) {
  if (x.device().is_cpu()) return x.contiguous();
  return x.to(Device::cpu());
}

/// t = draw(t's shape) in place, through t's strides; t a Tensor or a writable TensorView.
template <bool kVectorize, class X, class F>
void draw_into(const char* op, X& t, Generator& gen, F value) {
  using T = typename std::remove_cvref_t<X>::value_type;
  static_assert(is_floating_v<T>, "weft::normal_ and weft::uniform_ fill floating-point tensors");
  static_assert(std::is_convertible_v<X&, TensorView<T>>,
                "weft::normal_ and weft::uniform_ write their tensor: pass a non-const Tensor or a writable TensorView");
  TensorView<T> dst = t;
  if (!dst.defined()) fail(op, "the tensor is empty (default-constructed)");
  const Tensor<T> values = draw<T, kVectorize>(op, dst.shape(), dst.device(), gen, value);
  dst = values;
}

template <class T>
Tensor<T> bernoulli_impl(const TensorView<const T>& p, Generator& gen) {
  static_assert(is_floating_v<T>, "weft::bernoulli takes floating-point probabilities");
  const char* op = "bernoulli";
  check_device_compiled(op, p.device());
  const TensorView<const T> host = host_contiguous(p);
  const T* q = host.data();
  for (std::int64_t i = 0; i < host.numel(); ++i)
    if (!(double(q[i]) >= 0 && double(q[i]) <= 1))
      fail(op, "expects every probability in [0, 1], but p ", p.shape(), " holds ", double(q[i]), " at flat index ",
           i, "; clamp p into [0, 1]");
  // x_i = 1 if u_i < p_i: P(x_i = 1) = p_i (u_i uniform in [0, 1) with 53 bits; p = 1 always gives 1).
  return draw<T>(op, p.shape(), p.device(), gen, [q](std::uint64_t seed, std::uint64_t counter, std::int64_t i) {
    return random::uniform_double(seed, counter) < double(q[i]) ? 1.0 : 0.0;
  });
}

/// Row r's samples with replacement: sample j = the first k with cdf_k > u_j * cdf_{n-1}, the
/// cumulative sum in double found by binary search (a zero weight repeats the cdf before it, so it
/// is never chosen).
template <class T>
void multinomial_row_with_replacement(const T* w, std::int64_t n, std::int64_t samples, random::Counters c,
                                      std::int64_t* out) {
  std::vector<double> cdf(std::size_t(n), 0.0);
  double total = 0;
  std::int64_t last_positive = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    total += double(w[k]);
    cdf[std::size_t(k)] = total;
    if (double(w[k]) > 0) last_positive = k;
  }
  for (std::int64_t j = 0; j < samples; ++j) {
    const double target = random::uniform_double(c.seed, c.first + std::uint64_t(j)) * total;
    const std::int64_t k = std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin();
    out[j] = k < n ? k : last_positive;  // u * total rounded up to total
  }
}

/// Row r's samples without replacement (Efraimidis-Spirakis as exponential races): category k
/// arrives at E_k / w_k, E_k = -log(1 - u_k) ~ Exp(1); the `samples` first arrivals, in arrival
/// order, are distributed as successive draws without replacement. A zero weight never arrives.
template <class T>
void multinomial_row_without_replacement(const T* w, std::int64_t n, std::int64_t samples, random::Counters c,
                                         std::int64_t* out) {
  struct Arrival {
    double time;
    std::int64_t category;
    bool operator<(const Arrival& o) const { return time < o.time || (time == o.time && category < o.category); }
  };
  // The `samples` earliest arrivals so far, in a max-heap on the arrival time: one pass over the
  // row. Since E = -log(1 - u) >= u, a category with u / w above the latest kept arrival arrives
  // later still: most are rejected without the logarithm (the same choice as with it).
  std::vector<Arrival> earliest;
  earliest.reserve(std::size_t(samples));
  for (std::int64_t k = 0; k < n; ++k) {
    const double weight = double(w[k]);
    if (!(weight > 0)) continue;
    const double u = random::uniform_double(c.seed, c.first + std::uint64_t(k));
    const bool full = std::int64_t(earliest.size()) == samples;
    if (full && u / weight > earliest.front().time) continue;
    const Arrival a{-std::log1p(-u) / weight, k};
    if (!full) {
      earliest.push_back(a);
      std::push_heap(earliest.begin(), earliest.end());
    } else if (a < earliest.front()) {
      std::pop_heap(earliest.begin(), earliest.end());
      earliest.back() = a;
      std::push_heap(earliest.begin(), earliest.end());
    }
  }
  std::sort_heap(earliest.begin(), earliest.end());
  for (std::int64_t j = 0; j < samples; ++j) out[j] = earliest[std::size_t(j)].category;
}

template <class T>
Tensor<std::int64_t> multinomial_impl(const TensorView<const T>& probs, std::int64_t num_samples, bool replacement,
                                      Generator& gen) {
  static_assert(is_floating_v<T>, "weft::multinomial takes floating-point weights");
  const char* op = "multinomial";
  if (probs.dim() != 1 && probs.dim() != 2)
    fail(op, "probs must be 1-D [n] or 2-D [rows, n], got shape ", probs.shape());
  const std::int64_t n = probs.shape()[probs.dim() - 1], rows = probs.dim() == 2 ? probs.shape()[0] : 1;
  if (n == 0) fail(op, "probs ", probs.shape(), " has no categories");
  if (num_samples <= 0) fail(op, "cannot sample num_samples = ", num_samples, " <= 0 samples");
  if (!replacement && num_samples > n)
    fail(op, "cannot sample num_samples = ", num_samples, " > ", n, " categories of probs ", probs.shape(),
         " without replacement; pass replacement = true or fewer samples");
  check_device_compiled(op, probs.device());
  const TensorView<const T> host = host_contiguous(probs);
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* w = host.data() + r * n;
    std::int64_t positive = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      const double x = double(w[k]);
      if (!(std::isfinite(x) && x >= 0))
        fail(op, "probs ", probs.shape(), " holds ", x, " in row ", r, " at ", k,
             "; weights must be finite and >= 0 (inf, nan and negative values are refused)");
      positive += x > 0;
    }
    if (positive == 0) fail(op, "row ", r, " of probs ", probs.shape(), " sums to 0; every row needs a positive weight");
    if (!replacement && positive < num_samples)
      fail(op, "row ", r, " of probs ", probs.shape(), " has ", positive, " nonzero weights, fewer than num_samples = ",
           num_samples, " drawn without replacement");
  }
  Tensor<std::int64_t> out = empty<std::int64_t>(probs.dim() == 2 ? Shape{rows, num_samples} : Shape{num_samples});
  // Row r owns the counters [r * per_row, (r + 1) * per_row) of the draw.
  const std::int64_t per_row = replacement ? num_samples : n;
  const random::Counters c = gen.reserve(std::uint64_t(rows * per_row));
  WEFT_PRAGMA_OMP(omp parallel for schedule(dynamic) if (rows > 1) num_threads(get_num_threads()))
  for (std::int64_t r = 0; r < rows; ++r) {
    const random::Counters row{c.seed, c.first + std::uint64_t(r * per_row)};
    if (replacement)
      multinomial_row_with_replacement(host.data() + r * n, n, num_samples, row, out.data() + r * num_samples);
    else
      multinomial_row_without_replacement(host.data() + r * n, n, num_samples, row, out.data() + r * num_samples);
  }
  return on_device(std::move(out), probs.device());
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// t_i = mean + std * z_i, z_i standard normal (randn's Box-Muller draw, in double, rounded to T),
/// in place through t's strides, element i in row-major order (torch.Tensor.normal_). t is a
/// Tensor or a writable TensorView; std >= 0. Returns t (a reference to a Tensor, a view by value).
template <class X>
  requires SingleTensor<X>
X normal_(X&& t, double mean = 0, double std = 1, const RandomSource& source = {}) {
  if (!(std >= 0)) detail::fail("normal_", "expects std >= 0, but got std = ", std);
  constexpr bool kVectorize = false;  // log and cos (detail::fill_host)
  detail::draw_into<kVectorize>("normal_", t, source.generator(), [mean, std](std::uint64_t seed, std::uint64_t counter) {
    return mean + std * detail::random::normal_double(seed, counter);
  });
  return std::forward<X>(t);
}

/// t_i = from + (to - from) * u_i, u_i uniform in [0, 1) as rand<T> draws it (so uniform_(t) gives
/// rand's values), in place through t's strides (torch.Tensor.uniform_). from <= to; rounding to
/// T may give `to` itself. Returns t.
template <class X>
  requires SingleTensor<X>
X uniform_(X&& t, double from = 0, double to = 1, const RandomSource& source = {}) {
  if (!(from <= to) || !std::isfinite(to - from))
    detail::fail("uniform_", "expects a finite range from <= to, but got from = ", from, ", to = ", to);
  using T = typename std::remove_cvref_t<X>::value_type;
  constexpr bool kVectorize = true;  // arithmetic only
  detail::draw_into<kVectorize>("uniform_", t, source.generator(), [from, to](std::uint64_t seed, std::uint64_t counter) {
    return from + (to - from) * detail::uniform_of<T>(seed, counter);
  });
  return std::forward<X>(t);
}

/// x_i = 1 with probability p_i, else 0 (torch.bernoulli(p)), of p's dtype and shape, on p's
/// device. p: a floating tensor, view or expression (evaluated first) with every element in
/// [0, 1] (else weft::Error).
template <Operand P>
  requires HasTensorOperand<P>
Tensor<detail::operand_dtype_t<P>> bernoulli(const P& p, const RandomSource& source = {}) {
  return detail::bernoulli_impl<detail::operand_dtype_t<P>>(detail::materialize(p), source.generator());
}

/// x_i = 1 with probability p, else 0, for a new tensor of `shape` (torch.bernoulli(input, p)
/// with input's shape); p in [0, 1].
template <Element T>
Tensor<T> bernoulli(const Shape& shape, double p, const RandomSource& source, Device device = Device::cpu()) {
  if (!(p >= 0 && p <= 1)) detail::fail("bernoulli", "expects p in [0, 1], but got p = ", p);
  return detail::draw<T>("bernoulli", shape, device, source.generator(), [p](std::uint64_t seed, std::uint64_t counter) {
    return detail::random::uniform_double(seed, counter) < p ? 1.0 : 0.0;
  });
}
template <Element T>
Tensor<T> bernoulli(const Shape& shape, double p, Device device = Device::cpu()) {
  return bernoulli<T>(shape, p, RandomSource(), device);
}

/// Category indices drawn with probability proportional to the weights (torch.multinomial):
/// probs [n] -> int64 [num_samples], probs [rows, n] -> [rows, num_samples], each row on its own
/// (rows in parallel). Weights are finite and >= 0, not necessarily normalized, each row with a
/// positive one. With replacement: a binary search of the row's cumulative sum per sample.
/// Without (the default, as torch): distinct categories in the order successive draws would pick
/// them, num_samples <= the row's nonzero weights. One pass over a row of n: O(n + samples log n)
/// with replacement, O(n log samples) at worst without (a heap of the samples kept so far). CUDA weights go to the host and back.
template <Operand P>
  requires HasTensorOperand<P>
Tensor<std::int64_t> multinomial(const P& probs, std::int64_t num_samples, bool replacement = false,
                                 const RandomSource& source = {}) {
  return detail::multinomial_impl<detail::operand_dtype_t<P>>(detail::materialize(probs), num_samples, replacement,
                                                              source.generator());
}

/// A random permutation of 0, ..., n-1 (torch.randperm), int64: the indices sorted by 64 random
/// key bits each (counter i for index i; a tie, probability ~n^2 / 2^65, keeps index order), so
/// the permutation is uniform and the same for every thread count. n >= 0.
inline Tensor<std::int64_t> randperm(std::int64_t n, const RandomSource& source, Device device = Device::cpu()) {
  if (n < 0) detail::fail("randperm", "needs n >= 0, got n = ", n);
  detail::check_device_compiled("randperm", device);
  const detail::random::Counters c = source.generator().reserve(std::uint64_t(n));
  std::vector<std::pair<std::uint64_t, std::int64_t>> keyed(static_cast<std::size_t>(n));
  detail::fill_host(keyed.data(), n, [c](std::int64_t i) {
    const detail::random::Philox4x32 r(c.seed, c.first + std::uint64_t(i));
    return std::pair<std::uint64_t, std::int64_t>((std::uint64_t(r.w[0]) << 32) | r.w[1], i);
  });
  std::sort(keyed.begin(), keyed.end());
  return detail::generate<std::int64_t>(Shape{n}, device, [&keyed](std::int64_t i) { return keyed[std::size_t(i)].second; });
}
inline Tensor<std::int64_t> randperm(std::int64_t n, Device device = Device::cpu()) {
  return randperm(n, RandomSource(), device);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
