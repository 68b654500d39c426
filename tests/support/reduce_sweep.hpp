// SPDX-License-Identifier: MIT
/// @file Test helpers for reductions, shared by the CPU tests (tests/ops) and the CUDA ones
/// (tests/backend/cuda): one random reduction of an input (dims, keepdim, the reference's groups),
/// prod's input domain, and a random sweep of shapes, layouts, dims and keepdim for one dtype,
/// checked against compensated double-precision references (dense_reference.hpp).
#pragma once

#include <weft/ops/reduce.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

namespace weft_test {

/// Machine epsilon of the type a T reduction accumulates in (float for 16-bit floats, exact for integers).
template <class T>
constexpr double accumulator_eps() {
  return compute_eps<T>();
}

// The helpers below read and reduce tensors: in the backend's namespace (docs/architecture.md, ODR
// safety), since nvcc-compiled and g++-compiled test files instantiate them alike.
inline namespace WEFT_BACKEND_ABI {

/// prod's inputs: magnitudes log-uniform in [0.8, 1.25], or integers of magnitude 1 to 3 (long
/// products wrap). log2 of a product of n is a random walk of standard deviation 0.19 sqrt(n), 13
/// at n = 5000, so products stay far from float's range ends (2^+-126); with [1/2, 2] it is 41, and
/// a product could pass through subnormals, outside the bound.
template <class T>
Domain near_one_domain() {
  Domain d{0.8, 1.25, true};
  if constexpr (std::is_integral_v<T>) d = Domain{-3, 3}, d.avoid = 1;
  return d;
}

/// x's values as exact doubles: read through its strides on the host, or from a host copy of a
/// GPU tensor.
template <class T>
std::vector<double> host_values(const weft::TensorBase<T>& x) {
  return x.device().is_cpu() ? values_of(x) : values_of(x.to(weft::Device::cpu()));
}

/// One random reduction of an input x (on the CPU or a GPU): the dims to reduce (random_dims: some
/// negative, sometimes none listed, which means all), keepdim, and what the double-precision
/// reference needs: x's shape and values, the mask of reduced dims and how many values reduce into
/// each output (0: max, min, amax, amin and the infinity norms have no identity and throw).
struct RandomReduction {
  Shape full;
  std::vector<double> values;
  std::vector<std::int64_t> dims;
  bool keepdim;
  std::vector<bool> mask;
  std::int64_t n_red = 1;
  weft::Device device;

  /// Draws the dims, then keepdim, from rng.
  template <class T>
  RandomReduction(Rng& rng, const weft::TensorBase<T>& x)
      : full(x.shape()),
        values(host_values(x)),
        dims(random_dims(rng, full.rank())),
        keepdim(rng.chance(0.5)),
        mask(reduce_mask(full.rank(), dims)),
        device(x.device()) {
    for (int d = 0; d < full.rank(); ++d)
      if (mask[std::size_t(d)]) n_red *= full[d];
  }

  /// The same reduction of another input of the same shape and device (prod's, near 1).
  template <class T>
  RandomReduction over(const weft::TensorBase<T>& y) const {
    REQUIRE(y.shape() == full);
    RandomReduction c = *this;
    c.values = host_values(y);
    return c;
  }

  /// Checks out = op (p: the norm's order) of the input over these dims, on the input's device,
  /// against the double-precision reference for an accumulator of machine epsilon eps_acc
  /// (check_reduction: the tolerance of the device's summation order).
  template <class R>
  void check(const weft::TensorBase<R>& out, Op op, double p, double eps_acc) const {
    CHECK(out.device() == device);
    check_reduction(out, op, values, full, mask, keepdim, p, eps_acc);
  }
  /// A lazy reduction (weft::sum(x, dims) is an expression node) checked as its evaluated tensor.
  template <weft::DenseNode N>
  void check(const N& out, Op op, double p, double eps_acc) const {
    check(weft::eval(out), op, p, eps_acc);
  }
};

/// Random shapes, layouts, dims and keepdim for one dtype and the ops that apply to it.
template <class T>
void random_sweep(Rng& rng, int iterations) {
  constexpr double eps = accumulator_eps<T>();
  for (int iter = 0; iter < iterations; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 3000);
    const Layout layout = random_layout(rng, false);
    Domain dom;
    if constexpr (std::is_integral_v<T>) dom = Domain{-1000, 1000};
    dom.zero_chance = 0.05;  // zeros decide any and all: some groups have one, some none
    const TensorView<T> x = make_view<T>(rng, full, dom, layout);
    const RandomReduction c(rng, x);
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", layout ", layout_name(layout));
    c.check(weft::sum(x, c.dims, c.keepdim), Op::sum, 0, eps);
    c.check(weft::any(x, c.dims, c.keepdim), Op::any, 0, 0);
    c.check(weft::all(x, c.dims, c.keepdim), Op::all, 0, 0);
    if (c.n_red > 0) {
      c.check(weft::amax(x, c.dims, c.keepdim), Op::amax, 0, eps);
      c.check(weft::min(x, c.dims, c.keepdim), Op::min, 0, eps);
    }
    // prod on its own input, near 1.
    const TensorView<T> xp = make_view<T>(rng, full, near_one_domain<T>(), layout);
    c.over(xp).check(weft::prod(xp, c.dims, c.keepdim), Op::prod, 0, eps);
    if constexpr (is_float_type_v<T>) {
      c.check(weft::mean(x, c.dims, c.keepdim), Op::mean, 0, eps);
      const double p = rng.pick(std::vector<double>{1, 2, 3, 0, INFINITY});
      if (c.n_red > 0 || p != INFINITY) c.check(weft::norm(x, p, c.dims, c.keepdim), Op::norm, p, eps);
    }
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft_test
