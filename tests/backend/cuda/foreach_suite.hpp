// SPDX-License-Identifier: MIT
/// @file The cuda suite's foreach test bodies, shared by its files: each body runs on an executor,
/// OnCuda (weft::fuse on lists of CUDA tensors, foreach_test.cu) or ForeachEmulatedOnHost (every block
/// of every planned launch run on the host, foreach_host_test.cpp), against double-precision references.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <weft/ops/factories.hpp>
#include <weft/core/random.hpp>
#include <weft/ops/fuse.hpp>
#include <weft/expr/operators.hpp>

#include "backend/cuda/error_model.hpp"
#include "cuda_support.hpp"

namespace foreach_suite {
inline namespace WEFT_BACKEND_ABI {  // its helpers reach weft's backends (docs/architecture.md, ODR safety)

using weft::Device;
using weft::ScalarList;
using weft::Shape;
using weft::Tensor;
using weft::TensorList;
namespace wd = weft::detail;
namespace wc = weft::detail::cuda;

using namespace error_model;  // values and tolerances

// ------------------------------------------------------- lists in memory

/// Random member shapes: empty tensors, 0-dim tensors, sizes around every
/// vector width (4 floats, 8 halves, 2 doubles) and not multiples of them,
/// 2-D shapes, and (in short lists) a few tensors of several chunks.
inline std::vector<Shape> random_shapes(std::mt19937_64& rng, std::size_t length) {
  static const std::int64_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 257, 1000, 4099};
  std::vector<Shape> shapes;
  for (std::size_t k = 0; k < length; ++k) {
    const std::int64_t n = sizes[rng() % std::size(sizes)];
    switch (rng() % 10) {
      case 0: shapes.push_back(Shape{}); break;
      case 1: case 2: shapes.push_back(Shape{n, std::int64_t(1 + rng() % 5)}); break;
      case 3:
        if (length < 50) {
          shapes.push_back(Shape{std::int64_t(20000 + rng() % 50000)});
          break;
        }
        [[fallthrough]];
      default: shapes.push_back(Shape{n});
    }
  }
  return shapes;
}

/// Where each member of a list lives in one storage: after a random gap of
/// 0-3 elements, so that some members are aligned for 16-byte vectors and
/// others are not, and a write past a member lands in a gap the checks see.
struct ListLayout {
  std::vector<Shape> shapes;
  std::vector<std::int64_t> offsets;
  std::int64_t elements = 0;
};

inline ListLayout plan_layout(const std::vector<Shape>& shapes, std::mt19937_64& rng) {
  ListLayout layout;
  layout.shapes = shapes;
  std::int64_t at = 0;
  for (const Shape& s : shapes) {
    at += std::int64_t(rng() % 4);
    layout.offsets.push_back(at);
    at += s.numel();
  }
  layout.elements = at + 1 + std::int64_t(rng() % 4);
  return layout;
}

template <class T>
TensorList<T> list_views(weft::TensorView<T> base, const ListLayout& layout) {
  TensorList<T> list;
  for (std::size_t k = 0; k < layout.shapes.size(); ++k)
    list.push_back(base.narrow(0, layout.offsets[k], layout.shapes[k].numel()).view(layout.shapes[k]));
  return list;
}

/// One list operand: random values (uniform in [lo, hi), exact in T) on the
/// host, read by the reference, and the same bytes in storage of their own
/// where the kernel runs; or, for an output, poisoned storage. Built by
/// initialization only: assigning a Tensor or a TensorList writes values.
template <class T>
struct ListData {
  ListLayout layout;
  weft::TensorView<T> host_base, device_base;  // handles: a copy of ListData shares the storage
  TensorList<T> device;  // the kernel's operand: views of device_base

  double value(std::size_t k, std::int64_t i) const { return to_double(host_base.data()[layout.offsets[k] + i]); }
  std::int64_t numel(std::size_t k) const { return layout.shapes[k].numel(); }
};

template <class T>
Tensor<T> copy_to(const weft::TensorBase<T>& host, Device device) {
  return device.is_cpu() ? host.clone() : host.to(device);
}

template <class T>
ListData<T> make_input(Device device, const std::vector<Shape>& shapes, std::mt19937_64& rng, double lo, double hi) {
  const ListLayout layout = plan_layout(shapes, rng);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<T> values(std::size_t(layout.elements));
  for (T& v : values) v = T(float(uniform(rng)));
  Tensor<T> host_base = weft::from_vector<T>(values, Shape{layout.elements});
  Tensor<T> device_base = copy_to(host_base, device);
  TensorList<T> views = list_views<T>(device_base, layout);
  return {layout, host_base, device_base, std::move(views)};
}

/// The same values as `d` in fresh device storage.
template <class T>
ListData<T> fresh_copy(const ListData<T>& d, Device device) {
  Tensor<T> device_base = copy_to(d.host_base, device);
  TensorList<T> views = list_views<T>(device_base, d.layout);
  return {d.layout, d.host_base, device_base, std::move(views)};
}

template <class T>
ListData<T> make_output(Device device, const std::vector<Shape>& shapes, std::mt19937_64& rng) {
  const ListLayout layout = plan_layout(shapes, rng);
  Tensor<T> device_base = weft::empty<T>(Shape{layout.elements}, device);
  weft::test::poison(device_base);
  TensorList<T> views = list_views<T>(device_base, layout);
  return {layout, weft::TensorView<T>(), device_base, std::move(views)};
}

/// Checks every element of every member of `out` against expected(k, i),
/// and that the gaps between members still hold `outside` (the storage's
/// bytes before the kernel) or, when it is null, the poison.
template <class T, class F>
void check_list(const ListData<T>& out, F&& expected, double ulps,
                const std::vector<unsigned char>* outside = nullptr) {
  const std::vector<unsigned char> bytes = weft::test::storage_bytes(out.device_base);
  std::vector<char> covered(std::size_t(out.layout.elements), 0);
  std::int64_t bad = 0, checked = 0;
  std::string first;
  for (std::size_t k = 0; k < out.layout.shapes.size(); ++k) {
    for (std::int64_t i = 0; i < out.numel(k); ++i) {
      const std::int64_t offset = out.layout.offsets[k] + i;
      covered[std::size_t(offset)] = 1;
      ++checked;
      const Expected e = expected(k, i);
      const double got = to_double(weft::test::element_at<T>(bytes, offset));
      const double tol = tolerance<T>(e, ulps);
      if (!(std::fabs(got - e.value) <= tol) && ++bad <= 5)
        first += wd::cat("\n  tensor ", k, " ", out.layout.shapes[k], " element ", i, ": got ", exact(got),
                         ", expected ", exact(e.value), " (tolerance ", exact(tol), ")");
    }
  }
  const std::int64_t touched = weft::test::count_touched<T>(bytes, covered, outside);
  CHECK_MESSAGE(bad == 0, bad, " of ", checked, " elements differ from the reference:", first);
  CHECK_MESSAGE(touched == 0, touched, " elements between the list's members were written");
}

// -------------------------------------------------------------- executors
// The test bodies run on two executors: the real one (weft::fuse on lists of
// CUDA tensors), and the foreach kernel's per-block body
// (cuda::run_foreach_block, the function every GPU block runs) executed on the
// host for every block of every launch the planner packs, over CPU tensors.
// The second needs no GPU.

using weft::test::OnCuda;

// ------------------------------------------------------------ test bodies

/// out = p - lr * g into poisoned lists, then p -= lr * g in place, over
/// lists of 0, 1, 2, 37 and 1000 tensors of random shapes.
template <class Exec, class T>
void axpy_over_random_lists() {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed6000u + sizeof(T) * 3 + std::is_same_v<T, weft::bfloat16>);
  const double lr = 0.37;
  const double flr = as_compute<weft::math_t<T>>(lr);
  for (std::size_t length : {0, 1, 2, 37, 1000}) {
    CAPTURE(length);
    const std::vector<Shape> shapes = random_shapes(rng, length);
    ListData<T> p = make_input<T>(device, shapes, rng, -2, 2), g = make_input<T>(device, shapes, rng, -2, 2);
    ListData<T> out = make_output<T>(device, shapes, rng);
    auto reference = [&](std::size_t k, std::int64_t i) {
      const double pv = p.value(k, i), q = flr * g.value(k, i);
      return Expected{pv - q, std::fabs(pv) + std::fabs(q)};
    };
    Exec::run(weft::assign(out.device, p.device - lr * g.device));
    check_list(out, reference, 4);

    const std::vector<unsigned char> before = weft::test::storage_bytes(p.host_base);
    Exec::run(weft::assign(p.device, p.device - lr * g.device));  // in place: reads each element before writing it
    check_list(p, reference, 4, &before);
  }
}

/// An AdamW step over bf16 parameters, float32 state and half gradients with
/// a per-tensor learning rate (a ScalarList) in ONE fused kernel; m1 and v1
/// are named once and used twice. Into fresh poisoned lists, then in place.
template <class Exec>
void adamw_mixed_dtypes(std::size_t length) {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed7000u + length);
  const std::vector<Shape> shapes = random_shapes(rng, length);
  ListData<weft::bfloat16> p = make_input<weft::bfloat16>(device, shapes, rng, -1, 1);
  ListData<weft::half> g = make_input<weft::half>(device, shapes, rng, -1, 1);
  ListData<float> m = make_input<float>(device, shapes, rng, -0.1, 0.1);
  ListData<float> v = make_input<float>(device, shapes, rng, 0, 0.01);
  std::vector<double> lrs;
  for (std::size_t k = 0; k < length; ++k) lrs.push_back(std::uniform_real_distribution<double>(1e-3, 1e-2)(rng));
  ScalarList<double> lr(lrs);
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8, wdecay = 0.01;
  const double fb1 = as_compute<float>(b1), fc1 = as_compute<float>(1 - b1), fb2 = as_compute<float>(b2),
               fc2 = as_compute<float>(1 - b2), feps = as_compute<float>(eps), fwd = as_compute<float>(wdecay);

  struct Moments {
    Expected m1, v1;
  };
  auto moments = [&](std::size_t k, std::int64_t i) {
    const double mv = m.value(k, i), gv = g.value(k, i), vv = v.value(k, i);
    const double v1 = fb2 * vv + fc2 * gv * gv;  // every term >= 0: no cancellation
    return Moments{{fb1 * mv + fc1 * gv, std::fabs(fb1 * mv) + std::fabs(fc1 * gv)}, {v1, v1}};
  };
  auto param = [&](std::size_t k, std::int64_t i) {
    const Moments r = moments(k, i);
    const double flr = as_compute<float>(lrs[k]);
    const double denom = std::sqrt(r.v1.value) + feps;
    const double q = flr * r.m1.value / denom, q_magnitude = flr * r.m1.magnitude / denom;
    const double pv = p.value(k, i), decay = fwd * (flr * pv);
    return Expected{pv - decay - q, std::fabs(pv) + std::fabs(decay) + q_magnitude};
  };

  for (bool in_place : {false, true}) {
    CAPTURE(in_place);
    // Fresh copies of the original values for each run.
    const ListData<weft::bfloat16> pd = fresh_copy(p, device);
    const ListData<float> md = fresh_copy(m, device), vd = fresh_copy(v, device);
    const ListData<weft::bfloat16> p_out = in_place ? pd : make_output<weft::bfloat16>(device, shapes, rng);
    const ListData<float> m_out = in_place ? md : make_output<float>(device, shapes, rng);
    const ListData<float> v_out = in_place ? vd : make_output<float>(device, shapes, rng);
    const std::vector<unsigned char> p_before = weft::test::storage_bytes(p.host_base),
                                     m_before = weft::test::storage_bytes(m.host_base),
                                     v_before = weft::test::storage_bytes(v.host_base);
    TensorList<weft::bfloat16> params = p_out.device;
    TensorList<float> m_dst = m_out.device, v_dst = v_out.device;
    auto m1 = b1 * md.device + (1 - b1) * g.device;
    auto v1 = b2 * vd.device + (1 - b2) * g.device * g.device;
    Exec::run(weft::assign(m_dst, m1), weft::assign(v_dst, v1),
              weft::assign(params, pd.device - wdecay * (lr * pd.device) - lr * m1 / (weft::sqrt(v1) + eps)));
    check_list(m_out, [&](std::size_t k, std::int64_t i) { return moments(k, i).m1; }, 4,
               in_place ? &m_before : nullptr);
    check_list(v_out, [&](std::size_t k, std::int64_t i) { return moments(k, i).v1; }, 4,
               in_place ? &v_before : nullptr);
    check_list(p_out, param, 8, in_place ? &p_before : nullptr);
  }
}

/// A one-element tensor (a number kept on the device) read by every tensor,
/// and two statements that swap two lists (each reads the values from before
/// the kernel).
template <class Exec>
void single_tensor_operand_and_swap() {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed8000u);
  const std::vector<Shape> shapes = random_shapes(rng, 37);
  ListData<float> x = make_input<float>(device, shapes, rng, -1, 1), y = make_input<float>(device, shapes, rng, -1, 1);
  ListData<float> out = make_output<float>(device, shapes, rng);
  const Tensor<float> scale_host = weft::from_vector<float>({0.75f}, Shape{});
  const Tensor<float> scale = device.is_cpu() ? scale_host.clone() : scale_host.to(device);
  Exec::run(weft::assign(out.device, x.device * scale + y.device));
  check_list(
      out,
      [&](std::size_t k, std::int64_t i) {
        const double a = 0.75 * x.value(k, i), b = y.value(k, i);
        return Expected{a + b, std::fabs(a) + std::fabs(b)};
      },
      2);

  const std::vector<unsigned char> x_before = weft::test::storage_bytes(x.host_base),
                                   y_before = weft::test::storage_bytes(y.host_base);
  Exec::run(weft::assign(x.device, y.device), weft::assign(y.device, x.device));
  check_list(x, [&](std::size_t k, std::int64_t i) { return Expected{y.value(k, i), 0}; }, 0, &x_before);
  check_list(y, [&](std::size_t k, std::int64_t i) { return Expected{x.value(k, i), 0}; }, 0, &y_before);
}

/// `length` tensors of 1 to 40 elements with `large` tensors of 2^20 elements
/// in the middle: more tensors than one launch table holds, and more chunks in
/// a row than its block map holds, so a tensor continues in the next launch.
template <class Exec>
void long_list_with_large_tensors(std::size_t length, std::size_t large) {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed9000u + length);
  std::vector<Shape> shapes;
  for (std::size_t k = 0; k < length; ++k) {
    if (k >= length / 2 && k < length / 2 + large) shapes.push_back(Shape{std::int64_t(1) << 20});
    else shapes.push_back(Shape{std::int64_t(1 + rng() % 40)});
  }
  ListData<float> p = make_input<float>(device, shapes, rng, -2, 2), g = make_input<float>(device, shapes, rng, -2, 2);
  ListData<float> out = make_output<float>(device, shapes, rng);
  const double flr = as_compute<float>(0.37);
  Exec::run(weft::assign(out.device, p.device - 0.37 * g.device));
  check_list(
      out,
      [&](std::size_t k, std::int64_t i) {
        const double pv = p.value(k, i), q = flr * g.value(k, i);
        return Expected{pv - q, std::fabs(pv) + std::fabs(q)};
      },
      4);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace foreach_suite
