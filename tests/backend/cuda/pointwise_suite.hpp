// SPDX-License-Identifier: MIT
/// @file The cuda suite's pointwise test bodies, shared by its files: each body runs on an executor,
/// OnCuda (weft::fuse on CUDA tensors, in the .cu files) or EmulatedOnHost (the CUDA kernel's
/// thread loop run on the host, in pointwise_host_test.cpp), and checks against a double-precision
/// host reference.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/ops/factories.hpp>
#include <weft/core/random.hpp>
#include <weft/ops/fuse.hpp>
#include <weft/expr/operators.hpp>

#include "backend/cuda/error_model.hpp"
#include "cuda_support.hpp"
#include "reference.hpp"

namespace pointwise_suite {
inline namespace WEFT_BACKEND_ABI {  // its helpers reach weft's backends (docs/architecture.md, ODR safety)

using weft::Device;
using weft::Shape;
using weft::Tensor;
using weft::TensorView;

using Index = std::vector<std::int64_t>;

// ---------------------------------------------------------------- values

using namespace error_model;

/// Calls f(index) for every index of `shape` in row-major order (once for rank 0).
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  if (shape.numel() == 0) return;
  Index idx(std::size_t(shape.rank()), 0);
  for (;;) {
    f(idx);
    int d = shape.rank() - 1;
    for (; d >= 0; --d) {
      if (++idx[std::size_t(d)] < shape[d]) break;
      idx[std::size_t(d)] = 0;
    }
    if (d < 0) return;
  }
}

/// Element of a host tensor read at an index of the (broadcast) output shape.
template <class T>
double broadcast_value_at(const weft::TensorBase<T>& host, const Index& out) {
  const int lead = int(out.size()) - host.dim();
  std::int64_t offset = 0;
  for (int d = 0; d < host.dim(); ++d)
    if (host.shape()[d] != 1) offset += out[std::size_t(lead + d)] * host.strides()[d];
  return to_double(host.data()[offset]);
}

// ------------------------------------------------------- inputs and outputs

/// How a tensor view is laid out over its storage.
enum class Layout { contiguous, transposed, stepped, misaligned, expanded };

inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::contiguous: return "contiguous";
    case Layout::transposed: return "transposed";
    case Layout::stepped: return "slice with step 2";
    case Layout::misaligned: return "contiguous from element 1";
    case Layout::expanded: return "expanded (stride 0)";
  }
  return "?";
}

/// Fresh random values, never zeros: normal floats (uniform in [0, 1) when
/// `nonnegative`), integers in [-1000, 1000), random bools.
template <class T>
Tensor<T> random_tensor(const Shape& shape, std::uint64_t seed, bool nonnegative = false) {
  if constexpr (weft::is_floating_v<T>) return nonnegative ? weft::rand<T>(shape, seed) : weft::randn<T>(shape, seed);
  else if constexpr (std::is_same_v<T, bool>) return weft::randint<T>(0, 2, shape, seed);
  else return weft::randint<T>(-1000, 1000, shape, seed);
}

/// A storage shape and the view of it that has `shape` with `layout`.
struct ViewPlan {
  Shape base;
  int d0 = -1, d1 = -1;                       // transposed dims, or the stepped dim in d0
  Layout layout = Layout::contiguous;
  std::int64_t numel = 0;
};

inline ViewPlan plan_view(const Shape& shape, Layout layout, std::mt19937_64& rng) {
  ViewPlan p;
  p.base = shape;
  p.numel = shape.numel();
  const int rank = shape.rank();
  if (layout == Layout::transposed && rank < 2) layout = Layout::contiguous;
  if (layout == Layout::stepped && rank < 1) layout = Layout::contiguous;
  p.layout = layout;
  switch (layout) {
    case Layout::contiguous: break;
    case Layout::transposed:
      p.d0 = int(rng() % std::uint64_t(rank));
      do p.d1 = int(rng() % std::uint64_t(rank));
      while (p.d1 == p.d0);
      std::swap(p.base[p.d0], p.base[p.d1]);
      break;
    case Layout::stepped:
      p.d0 = int(rng() % std::uint64_t(rank));
      p.base[p.d0] = 2 * shape[p.d0] + 1;  // elements 1, 3, ..., 2n - 1
      break;
    case Layout::misaligned: p.base = Shape{p.numel + 1}; break;
    case Layout::expanded:
      for (int d = 0; d < rank; ++d)
        if (rng() % 2) p.base[d] = 1;
      break;
  }
  return p;
}

template <class T>
weft::TensorView<T> apply_view(const ViewPlan& p, weft::TensorView<T> base, const Shape& shape) {
  switch (p.layout) {
    case Layout::contiguous: return base;
    case Layout::transposed: return base.transpose(p.d0, p.d1);
    case Layout::stepped: return base.slice(p.d0, 1, p.base[p.d0], 2);
    case Layout::misaligned: return base.narrow(0, 1, p.numel).view(shape);
    case Layout::expanded: return base.expand(shape);
  }
  return base;
}

/// One input: the same view of one random base, on the host (read by the
/// reference) and, in storage of its own, where the kernel runs (`device`).
template <class T>
struct Operand {
  TensorView<T> host;  // views keep their bases alive
  TensorView<T> device;
  std::string what;
};

template <class T>
Operand<T> make_operand(Device device, const Shape& shape, Layout layout, std::mt19937_64& rng,
                        bool nonnegative = false) {
  ViewPlan p = plan_view(shape, layout, rng);
  Tensor<T> host_base = random_tensor<T>(p.base, rng(), nonnegative);
  Tensor<T> device_base = device.is_cpu() ? host_base.clone() : host_base.to(device);
  return {apply_view<T>(p, host_base, shape), apply_view<T>(p, device_base, shape),
          weft::detail::cat(weft::dtype_name<T>(), shape, " ", layout_name(p.layout))};
}

/// One output: a view of freshly poisoned device storage.
template <class T>
struct Destination {
  TensorView<T> view;
  std::string what;
};

template <class T>
Destination<T> make_destination(Device device, const Shape& shape, Layout layout, std::mt19937_64& rng) {
  ViewPlan p = plan_view(shape, layout, rng);
  Tensor<T> base = weft::empty<T>(p.base, device);
  weft::test::poison(base);
  return {apply_view<T>(p, base, shape), weft::detail::cat(weft::dtype_name<T>(), shape, " ", layout_name(p.layout))};
}

/// Checks every element of `dst` (a view) against expected(index) and
/// that its storage outside the view still holds `outside` (the storage's
/// bytes before the kernel) or, when `outside` is null, the poison.
/// Reports the first mismatches and counts all of them.
template <class T, class F>
void check_result(const weft::TensorBase<T>& dst, F&& expected, double ulps,
                  const std::vector<unsigned char>* outside = nullptr) {
  const std::vector<unsigned char> bytes = weft::test::storage_bytes(dst);
  const std::size_t elements = bytes.size() / sizeof(T);
  std::vector<char> covered(elements, 0);
  std::int64_t bad = 0, checked = 0;
  std::string first;
  auto report = [&](const Index& idx, const std::string& got, double want, double tol) {
    if (++bad > 5) return;
    std::string at;
    for (std::size_t i = 0; i < idx.size(); ++i) at += weft::detail::cat(i ? ", " : "", idx[i]);
    first += weft::detail::cat("\n  [", at, "]: got ", got, ", expected ", exact(want), " (tolerance ", exact(tol), ")");
  };
  for_each_index(dst.shape(), [&](const Index& idx) {
    std::int64_t offset = dst.offset();
    for (int d = 0; d < dst.dim(); ++d) offset += idx[std::size_t(d)] * dst.strides()[d];
    covered[std::size_t(offset)] = 1;
    ++checked;
    const Expected e = expected(idx);
    if constexpr (std::is_same_v<T, bool>) {
      const unsigned byte = weft::test::element_at<unsigned char>(bytes, offset);
      if (byte > 1 || double(byte) != e.value) report(idx, weft::detail::cat("byte ", byte), e.value, 0);
    } else if constexpr (std::is_integral_v<T>) {
      const T got = weft::test::element_at<T>(bytes, offset);
      if (double(got) != e.value) report(idx, weft::detail::cat(got), e.value, 0);
    } else {
      const double got = to_double(weft::test::element_at<T>(bytes, offset));
      const double tol = tolerance<T>(e, ulps);
      if (!(std::fabs(got - e.value) <= tol)) report(idx, exact(got), e.value, tol);
    }
  });
  const std::int64_t touched = weft::test::count_touched<T>(bytes, covered, outside);
  CHECK_MESSAGE(bad == 0, bad, " of ", checked, " elements differ from the reference:", first);
  CHECK_MESSAGE(touched == 0, touched, " elements outside the destination view were written");
}

// ----------------------------------------------------------------- shapes

/// Rank `rank`, extents mostly 1, small primes and a few larger ones, with
/// an occasional 0; at most 2^18 elements (0 counted as 1) so the host
/// reference stays fast.
inline Shape random_shape(std::mt19937_64& rng, int rank) {
  static const std::int64_t extents[] = {0, 1, 1, 2, 3, 5, 7, 11, 13, 17, 31, 61, 127, 257, 1031, 4099};
  for (;;) {
    Shape s;
    // Extents of 0 count as 1: a broadcast operand has 1 there, and its own
    // size must stay bounded too. In double: six extents can overflow int64.
    double numel = 1;
    for (int d = 0; d < rank; ++d) {
      s.push_back(extents[rng() % std::size(extents)]);
      numel *= double(std::max<std::int64_t>(s[d], 1));
    }
    if (numel <= double(1 << 18)) return s;
  }
}

/// A shape that broadcasts to `out`: some leading dims dropped, some dims 1.
inline Shape broadcast_shape(const Shape& out, std::mt19937_64& rng) {
  const int drop = rng() % 3 == 0 ? int(rng() % std::uint64_t(out.rank() + 1)) : 0;
  Shape s;
  for (int d = drop; d < out.rank(); ++d) s.push_back(rng() % 4 == 0 ? 1 : out[d]);
  return s;
}

inline Layout random_input_layout(std::mt19937_64& rng) { return Layout(rng() % 5); }
inline Layout random_output_layout(std::mt19937_64& rng) { return Layout(rng() % 4); }  // never expanded

/// A fake CUDA tensor (no allocation, never dereferenced), so that the
/// device-mismatch checks can run on a machine without a GPU.
template <class T>
TensorView<T> unallocated_cuda_tensor(const Shape& shape) {
  auto storage = std::make_shared<weft::Storage>(reinterpret_cast<void*>(std::uintptr_t(1) << 20),
                                                 std::size_t(shape.numel()) * sizeof(T), Device::cuda(), nullptr);
  return TensorView<T>(std::move(storage), shape, weft::contiguous_strides(shape), 0);
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// -------------------------------------------------------------- executors
// The test bodies below run on two executors: the real one (OnCuda: weft::fuse
// on CUDA tensors, in the .cu files), and the CUDA kernel's per-thread loop
// (cuda::run_thread, the very function every GPU thread runs) executed on the
// host, one simulated thread after another, over CPU tensors (EmulatedOnHost,
// pointwise_host_test.cpp). The second runs without a GPU, so the index math,
// the vector path and the shared-subexpression cache are checked on every
// machine that builds the cuda suite.

using weft::test::OnCuda;  // the real thing: statements run as one CUDA kernel

/// a, b and c broadcast to a random shape of rank `rank`, each in a random layout, and y a
/// poisoned destination of that shape in a random layout: the operands of the random-shape chains.
template <class T>
struct ThreeOperands {
  Operand<T> a, b, c;
  Destination<T> y;
};

template <class T>
ThreeOperands<T> random_operands(Device device, int rank, std::mt19937_64& rng) {
  const Shape shape = random_shape(rng, rank);
  auto operand = [&] {
    return make_operand<T>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
  };
  Operand<T> a = operand();
  Operand<T> b = operand();
  Operand<T> c = operand();
  return {std::move(a), std::move(b), std::move(c),
          make_destination<T>(device, shape, random_output_layout(rng), rng)};
}

// ------------------------------------------------------------ test bodies
// Each runs on an executor (OnCuda or EmulatedOnHost), see above.

// A float chain with a device math function, over random shapes of rank 0..6
// (extents 0, 1, primes), broadcast operands and every kind of view.
template <class Exec, class T>
void chain_over_random_shapes(int iterations) {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed0000u + sizeof(T) * 7 + std::is_same_v<T, weft::bfloat16>);
  for (int iter = 0; iter < iterations; ++iter) {
    ThreeOperands<T> operands = random_operands<T>(device, iter % 7, rng);
    auto& [a, b, c, y] = operands;
    const std::string what =
        weft::detail::cat("y ", y.what, " = a ", a.what, " * sigmoid(b ", b.what, ") + c ", c.what);
    CAPTURE(what);
    Exec::run(weft::assign(y.view, a.device * weft::sigmoid(b.device) + c.device));
    check_result(
        y.view,
        [&](const Index& i) {
          const double av = broadcast_value_at(a.host, i), bv = broadcast_value_at(b.host, i),
                       cv = broadcast_value_at(c.host, i);
          const double s = av / (1.0 + std::exp(-bv));
          return Expected{s + cv, std::fabs(s) + std::fabs(cv)};
        },
        8);
  }
}

template <class Exec, class T>
void integers_over_random_shapes(int iterations) {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed1000u + sizeof(T));
  for (int iter = 0; iter < iterations; ++iter) {
    ThreeOperands<T> operands = random_operands<T>(device, iter % 7, rng);
    auto& [a, b, c, y] = operands;
    const std::string what =
        weft::detail::cat("y ", y.what, " = a ", a.what, " * b ", b.what, " + c ", c.what, " - a");
    CAPTURE(what);
    Exec::run(weft::assign(y.view, a.device * b.device + c.device - a.device));
    check_result(
        y.view,
        [&](const Index& i) {
          const double av = broadcast_value_at(a.host, i), bv = broadcast_value_at(b.host, i),
                       cv = broadcast_value_at(c.host, i);
          return Expected{weft_test::wrapped<T>(av * bv + cv - av), 0};
        },
        0);
  }
}

// bool lanes (16 per vector), comparisons, where, casts and numbers.
template <class Exec>
void bools_casts_and_mixed_widths(int iterations) {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed2000u);
  for (int iter = 0; iter < iterations; ++iter) {
    const Shape shape = random_shape(rng, iter % 7);
    Operand<bool> a = make_operand<bool>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Operand<bool> b = make_operand<bool>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Operand<bool> c = make_operand<bool>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Operand<float> x = make_operand<float>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Operand<float> w = make_operand<float>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Destination<bool> y = make_destination<bool>(device, shape, random_output_layout(rng), rng);
    Destination<bool> z = make_destination<bool>(device, shape, random_output_layout(rng), rng);
    Destination<weft::half> h = make_destination<weft::half>(device, shape, random_output_layout(rng), rng);
    const std::string what = weft::detail::cat("y ", y.what, " = where(", a.what, ", ", b.what, ", ", c.what,
                                               " != b); z ", z.what, " = ", x.what, " < ", w.what, "; h ", h.what);
    CAPTURE(what);
    Exec::run(weft::assign(y.view, weft::where(a.device, b.device, c.device != b.device)));
    Exec::run(weft::assign(z.view, x.device < w.device));
    // float operands, a half destination: 4-lane vectors of 16 bytes (float) and 8 bytes (half)
    Exec::run(weft::assign(h.view, weft::cast<weft::half>(x.device) * 2 + weft::where(x.device < w.device, x.device, 0.5)));
    check_result(
        y.view,
        [&](const Index& i) {
          const double bv = broadcast_value_at(b.host, i);
          return Expected{broadcast_value_at(a.host, i) != 0 ? bv : double(broadcast_value_at(c.host, i) != bv), 0};
        },
        0);
    check_result(
        z.view,
        [&](const Index& i) {
          return Expected{double(broadcast_value_at(x.host, i) < broadcast_value_at(w.host, i)), 0};
        },
        0);
    check_result(
        h.view,
        [&](const Index& i) {
          const double xv = broadcast_value_at(x.host, i), wv = broadcast_value_at(w.host, i);
          const double rounded = double(float(weft::half(float(xv))));  // cast<half> rounds explicitly
          const double pick = xv < wv ? xv : 0.5;
          return Expected{rounded * 2 + pick, std::fabs(rounded * 2) + std::fabs(pick)};
        },
        4);
  }
}

// The linear layout: vector kernel when every operand is aligned to a 16-byte
// vector, scalar kernel otherwise; sizes around the vector width test the tail.
template <class Exec, class T>
void every_alignment_and_tail() {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed3000u + sizeof(T));
  for (std::int64_t n : {1, 2, 15, 16, 17, 4097, 100003}) {
    Tensor<T> host_base = random_tensor<T>(Shape{n + 4}, rng());
    Tensor<T> device_base = device.is_cpu() ? host_base.clone() : host_base.to(device);
    for (std::int64_t in_offset : {0, 1, 2, 3}) {
      for (std::int64_t out_offset : {0, 1}) {
        CAPTURE(n);
        CAPTURE(in_offset);
        CAPTURE(out_offset);
        Tensor<T> out_base = weft::empty<T>(Shape{n + 4}, device);
        weft::test::poison(out_base);
        TensorView<T> x = device_base.narrow(0, in_offset, n), y = out_base.narrow(0, out_offset, n);
        TensorView<T> xh = host_base.narrow(0, in_offset, n);
        if constexpr (std::is_same_v<T, bool>) {
          Exec::run(weft::assign(y, x == false));
          check_result(y, [&](const Index& i) { return Expected{broadcast_value_at(xh, i) == 0 ? 1.0 : 0.0, 0}; }, 0);
        } else if constexpr (std::is_integral_v<T>) {
          Exec::run(weft::assign(y, x * 3 - 7));
          check_result(y, [&](const Index& i) { return Expected{broadcast_value_at(xh, i) * 3 - 7, 0}; }, 0);
        } else {
          Exec::run(weft::assign(y, x * 2 + 1));  // one rounding (or none, fused), in the compute type
          check_result(
              y,
              [&](const Index& i) {
                const double v = broadcast_value_at(xh, i);
                return Expected{v * 2 + 1, std::fabs(v * 2) + 1};
              },
              4);
        }
      }
    }
  }
}

// Adam's moment updates: m1 and v1 are each named once in C++, used by two
// statements, and computed once per element; every statement reads the
// values from before the kernel (m and v are rewritten by the same kernel).
template <class Exec, class P>
void fused_optimizer_step(const std::vector<Shape>& shapes) {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed4000u + sizeof(P));
  const double b1 = 0.9, b2 = 0.999, lr = 1e-2, eps = 1e-8;
  for (const Shape& shape : shapes) {
    for (int variant = 0; variant < 3; ++variant) {
      // 0: all contiguous (vector kernel); 1: all from element 1 (scalar
      // kernel); 2: random views (strided kernel).
      auto layout = [&] {
        return variant == 0 ? Layout::contiguous : variant == 1 ? Layout::misaligned : random_output_layout(rng);
      };
      Operand<float> m = make_operand<float>(device, shape, layout(), rng);
      Operand<float> g = make_operand<float>(device, shape, layout(), rng);
      Operand<P> p = make_operand<P>(device, shape, layout(), rng);
      Operand<float> v = make_operand<float>(device, shape, layout(), rng, /*nonnegative=*/true);  // a second moment
      const std::vector<unsigned char> m_before = weft::test::storage_bytes(m.host),
                                       v_before = weft::test::storage_bytes(v.host),
                                       p_before = weft::test::storage_bytes(p.host);
      const std::string what = weft::detail::cat("m ", m.what, ", g ", g.what, ", p ", p.what, ", v ", v.what);
      CAPTURE(what);

      TensorView<float> md = m.device, vd = v.device;
      TensorView<P> pd = p.device;
      auto m1 = b1 * md + (1 - b1) * g.device;
      auto v1 = b2 * vd + (1 - b2) * g.device * g.device;
      Exec::run(weft::assign(md, m1), weft::assign(vd, v1), weft::assign(pd, pd - lr * m1 / (weft::sqrt(v1) + eps)));

      // The constants as the kernel holds them: rounded to float.
      const double fb1 = as_compute<float>(b1), fc1 = as_compute<float>(1 - b1), fb2 = as_compute<float>(b2),
                   fc2 = as_compute<float>(1 - b2), flr = as_compute<float>(lr), feps = as_compute<float>(eps);
      struct Moments {
        Expected m1, v1;
      };
      auto moments = [&](const Index& i) {
        const double mv = broadcast_value_at(m.host, i), gv = broadcast_value_at(g.host, i),
                     vv = broadcast_value_at(v.host, i);
        const double v1v = fb2 * vv + fc2 * gv * gv;  // no cancellation: every term >= 0
        return Moments{{fb1 * mv + fc1 * gv, std::fabs(fb1 * mv) + std::fabs(fc1 * gv)}, {v1v, v1v}};
      };
      check_result(md, [&](const Index& i) { return moments(i).m1; }, 4, &m_before);
      check_result(vd, [&](const Index& i) { return moments(i).v1; }, 4, &v_before);
      check_result(
          pd,
          [&](const Index& i) {
            const Moments r = moments(i);
            const double denom = std::sqrt(r.v1.value) + feps;
            const double q = flr * r.m1.value / denom;
            const double q_magnitude = flr * r.m1.magnitude / denom;  // m1's error scales with its terms
            const double pv = broadcast_value_at(p.host, i);
            return Expected{pv - q, std::fabs(pv) + q_magnitude};
          },
          8, &p_before);
    }
  }
}

template <class Exec>
void fused_swap() {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed5000u);
  for (const Shape& shape : {Shape{100003}, Shape{61, 127}}) {
    Operand<double> a = make_operand<double>(device, shape, Layout::contiguous, rng);
    Operand<double> b =
        make_operand<double>(device, shape, shape.rank() == 2 ? Layout::transposed : Layout::misaligned, rng);
    const std::vector<unsigned char> a_before = weft::test::storage_bytes(a.host),
                                     b_before = weft::test::storage_bytes(b.host);
    TensorView<double> ad = a.device, bd = b.device;
    Exec::run(weft::assign(ad, bd), weft::assign(bd, ad));
    check_result(ad, [&](const Index& i) { return Expected{broadcast_value_at(b.host, i), 0}; }, 0, &a_before);
    check_result(bd, [&](const Index& i) { return Expected{broadcast_value_at(a.host, i), 0}; }, 0, &b_before);
  }
}

inline const std::vector<Shape> optimizer_shapes_gpu = {Shape{1},        Shape{3},       Shape{4097}, Shape{(1 << 20) + 3},
                                                 Shape{37, 129}, Shape{5, 7, 11}};
inline const std::vector<Shape> optimizer_shapes_host = {Shape{1}, Shape{3}, Shape{4097}, Shape{37, 129}, Shape{5, 7, 11}};

}  // namespace WEFT_BACKEND_ABI
}  // namespace pointwise_suite
