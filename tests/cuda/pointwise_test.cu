// SPDX-License-Identifier: MIT
/// @file The cuda suite for fused pointwise kernels: GPU results against a double-precision host reference.
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
#include <vector>

#include <weft/core/factories.hpp>
#include <weft/core/random.hpp>
#include <weft/expr/fuse.hpp>
#include <weft/expr/operators.hpp>

#include "cuda_support.hpp"

namespace {

using weft::Device;
using weft::Shape;
using weft::Tensor;
using weft::test::cuda_available;

using Index = std::vector<std::int64_t>;

// ---------------------------------------------------------------- values

template <class T>
double to_double(T x) {
  if constexpr (std::is_same_v<T, bool>) return x ? 1.0 : 0.0;
  else return double(weft::math_t<T>(x));
}

/// A number as the kernel sees it: converted once to the compute type C.
template <class C>
double as_compute(double x) {
  return double(C(x));
}

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
double value_at(const Tensor<T>& host, const Index& out) {
  const int lead = int(out.size()) - host.dim();
  std::int64_t offset = 0;
  for (int d = 0; d < host.dim(); ++d)
    if (host.shape()[d] != 1) offset += out[std::size_t(lead + d)] * host.strides()[d];
  return to_double(host.data()[offset]);
}

/// All the digits of a double, for failure messages.
std::string exact(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

// ------------------------------------------------------------- tolerances

/// The reference value of one element, and the magnitude that the rounding
/// errors of its computation scale with: the sum of |terms| (a cancelling sum
/// is accurate relative to its terms, not to its result).
struct Expected {
  double value;
  double magnitude;
};

/// Spacing of T at 1.0 (unit roundoff is half of it).
template <class T>
constexpr double epsilon() {
  if constexpr (std::is_same_v<T, double>) return 0x1p-52;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-23;
  else if constexpr (std::is_same_v<T, weft::half>) return 0x1p-10;
  else if constexpr (std::is_same_v<T, weft::bfloat16>) return 0x1p-7;
  else return 0.0;
}

/// Smallest positive subnormal of T: the absolute error of rounding a tiny result.
template <class T>
constexpr double smallest_subnormal() {
  if constexpr (std::is_same_v<T, double>) return 0x1p-1074;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-149;
  else if constexpr (std::is_same_v<T, weft::half>) return 0x1p-24;
  else if constexpr (std::is_same_v<T, weft::bfloat16>) return 0x1p-133;
  else return 0.0;
}

/// |got - reference| allowed for a result stored as T and computed in math_t<T>:
///   ulps * eps(math_t<T>) * magnitude: the compute-type error of the chain.
///     Each + - * (or one contracted FMA) adds 1/2 ulp of its magnitude; CUDA's
///     expf/exp are within 2/1 ulp, division and sqrt are correctly rounded
///     (nvcc's default -prec-div/-prec-sqrt), so sigmoid = 1/(1 + expf(-x)) is
///     within ~3 ulp. The tests pass 4 ulps for arithmetic chains, 8 when a
///     device math function is involved: about twice the analysed bound.
///   + eps(T) * |reference| for half and bfloat16: the one rounding at the
///     store (<= 1/2 ulp of T), which the float error can push across a tie:
///     1 ulp of T.
///   + the smallest subnormal of T, for results that round to a subnormal.
template <class T>
double tolerance(const Expected& e, double ulps) {
  double tol = ulps * epsilon<weft::math_t<T>>() * e.magnitude + smallest_subnormal<T>();
  if constexpr (weft::is_16bit_float_v<T>) tol += epsilon<T>() * std::fabs(e.value);
  return tol;
}

// ------------------------------------------------------- inputs and outputs

/// How a tensor view is laid out over its storage.
enum class Layout { contiguous, transposed, stepped, misaligned, expanded };

const char* layout_name(Layout l) {
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

ViewPlan plan_view(const Shape& shape, Layout layout, std::mt19937_64& rng) {
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
Tensor<T> apply_view(const ViewPlan& p, const Tensor<T>& base, const Shape& shape) {
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
  Tensor<T> host;
  Tensor<T> device;
  std::string what;
};

template <class T>
Operand<T> make_operand(Device device, const Shape& shape, Layout layout, std::mt19937_64& rng,
                        bool nonnegative = false) {
  ViewPlan p = plan_view(shape, layout, rng);
  Tensor<T> host_base = random_tensor<T>(p.base, rng(), nonnegative);
  Tensor<T> device_base = device.is_cpu() ? host_base.clone() : host_base.to(device);
  return {apply_view(p, host_base, shape), apply_view(p, device_base, shape),
          weft::detail::cat(weft::dtype_name<T>(), shape, " ", layout_name(p.layout))};
}

/// One output: a view of freshly poisoned device storage.
template <class T>
struct Destination {
  Tensor<T> view;
  std::string what;
};

template <class T>
Destination<T> make_destination(Device device, const Shape& shape, Layout layout, std::mt19937_64& rng) {
  ViewPlan p = plan_view(shape, layout, rng);
  Tensor<T> base = weft::empty<T>(p.base, device);
  weft::test::poison(base);
  return {apply_view(p, base, shape), weft::detail::cat(weft::dtype_name<T>(), shape, " ", layout_name(p.layout))};
}

/// Checks every element of `dst` (a view) against expected(index) and
/// that its storage outside the view still holds `outside` (the storage's
/// bytes before the kernel) or, when `outside` is null, the poison.
/// Reports the first mismatches and counts all of them.
template <class T, class F>
void check_result(const Tensor<T>& dst, F&& expected, double ulps,
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
  std::int64_t touched = 0;
  for (std::size_t i = 0; i < elements; ++i) {
    if (covered[i]) continue;
    for (std::size_t b = i * sizeof(T); b < (i + 1) * sizeof(T); ++b) {
      const unsigned char want = outside ? (*outside)[b] : weft::test::poison_byte<T>();
      if (bytes[b] != want) {
        ++touched;
        break;
      }
    }
  }
  CHECK_MESSAGE(bad == 0, bad, " of ", checked, " elements differ from the reference:", first);
  CHECK_MESSAGE(touched == 0, touched, " elements outside the destination view were written");
}


// ----------------------------------------------------------------- shapes

/// Rank `rank`, extents mostly 1, small primes and a few larger ones, with
/// an occasional 0; at most 2^18 elements (0 counted as 1) so the host
/// reference stays fast.
Shape random_shape(std::mt19937_64& rng, int rank) {
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
Shape broadcast_shape(const Shape& out, std::mt19937_64& rng) {
  const int drop = rng() % 3 == 0 ? int(rng() % std::uint64_t(out.rank() + 1)) : 0;
  Shape s;
  for (int d = drop; d < out.rank(); ++d) s.push_back(rng() % 4 == 0 ? 1 : out[d]);
  return s;
}

Layout random_input_layout(std::mt19937_64& rng) { return Layout(rng() % 5); }
Layout random_output_layout(std::mt19937_64& rng) { return Layout(rng() % 4); }  // never expanded

/// A fake CUDA tensor (no allocation, never dereferenced), so that the
/// device-mismatch checks can run on a machine without a GPU.
template <class T>
Tensor<T> unallocated_cuda_tensor(const Shape& shape) {
  auto storage = std::make_shared<weft::Storage>(reinterpret_cast<void*>(std::uintptr_t(1) << 20),
                                                 std::size_t(shape.numel()) * sizeof(T), Device::cuda(), nullptr);
  return Tensor<T>(std::move(storage), shape, weft::contiguous_strides(shape), 0);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// -------------------------------------------------------------- executors
// The test bodies below run on two executors: the real one (weft::fuse on
// CUDA tensors), and the CUDA kernel's per-thread loop (cuda::run_thread, the
// very function every GPU thread runs) executed on the host, one simulated
// thread after another, over CPU tensors. The second runs without a GPU, so
// the index math, the vector path and the shared-subexpression cache are
// checked on every machine that has nvcc.

/// The real thing: statements run as one CUDA kernel.
struct OnCuda {
  static Device device() { return Device::cuda(); }
  template <class... Stmts>
  static void run(Stmts... stmts) {
    weft::fuse(stmts...);
  }
};

/// run_thread over every simulated thread of a grid, on the host.
struct EmulatedOnHost {
  static Device device() { return Device::cpu(); }

  /// Runs per instantiation: vector, linear scalar, strided 32-bit, strided 64-bit.
  enum Kind { vector, linear_scalar, strided32, strided64, kinds };
  static inline std::int64_t runs[kinds] = {};

  /// Each run takes the next configuration: 1, 3, 256 or 4099 threads, and
  /// alternately the first instantiation the launcher would pick (the vector
  /// kernel when aligned; 32-bit index math when strided) and the other one
  /// (the scalar kernel; 64-bit index math).
  template <class... Stmts>
  static void run(Stmts... stmts) {
    static int calls = 0;
    const int config = calls++;
    static const std::uint64_t thread_counts[] = {1, 3, 256, 4099};
    const std::uint64_t threads = thread_counts[config % 4];
    const bool first_choice = (config / 4) % 2 == 0;

    Shape shape;
    ((shape = stmts.dst->shape()), ...);
    std::vector<weft::Strides> strides{stmts.dst->strides()...};
    auto add_leaves = [&](auto& rhs) {
      weft::detail::for_each_leaf(rhs, [&](auto& leaf) {
        strides.push_back(weft::broadcast_strides(leaf.tensor.shape(), leaf.tensor.strides(), shape));
      });
    };
    (add_leaves(stmts.rhs), ...);
    const weft::detail::IterationSpace space = weft::detail::plan_iteration(shape, strides);
    if (space.numel == 0) return;
    if (space.linear) emulate<true>(space, threads, first_choice, stmts...);
    else emulate<false>(space, threads, first_choice, stmts...);
  }

  template <bool kLinear, class... Stmts>
  static void emulate(const weft::detail::IterationSpace& space, std::uint64_t threads, bool first_choice,
                      Stmts&... stmts) {
    namespace cuda = weft::detail::cuda;
    using Kernel = weft::detail::PointwiseKernel<kLinear, Stmts...>;
    weft::detail::BuildContext<typename Kernel::Shared> ctx;
    ctx.space = &space;
    const Kernel kernel(space, std::move(ctx), stmts...);
    const cuda::RowGeometry rows = cuda::row_geometry(space);
    auto grid = [&]<int V, class I>(Kind kind) {
      ++runs[kind];
      for (std::uint64_t t = 0; t < threads; ++t)
        cuda::run_thread<V>(kernel, rows, I(space.numel), I(t), I(threads));
    };
    if constexpr (kLinear) {
      constexpr int V = cuda::vector_width_v<Kernel>;
      if (first_choice && kernel.template vec_aligned<V>()) grid.template operator()<V, std::uint64_t>(vector);
      else grid.template operator()<1, std::uint64_t>(linear_scalar);
    } else {
      if (first_choice) grid.template operator()<1, std::uint32_t>(strided32);
      else grid.template operator()<1, std::uint64_t>(strided64);
    }
  }
};

// ------------------------------------------------------------ test bodies
// Each runs on an executor (OnCuda or EmulatedOnHost), see above.

// A float chain with a device math function, over random shapes of rank 0..6
// (extents 0, 1, primes), broadcast operands and every kind of view.
template <class Exec, class T>
void chain_over_random_shapes(int iterations) {
  const Device device = Exec::device();
  std::mt19937_64 rng(0x5eed0000u + sizeof(T) * 7 + std::is_same_v<T, weft::bfloat16>);
  for (int iter = 0; iter < iterations; ++iter) {
    const Shape shape = random_shape(rng, iter % 7);
    Operand<T> a = make_operand<T>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Operand<T> b = make_operand<T>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Operand<T> c = make_operand<T>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Destination<T> y = make_destination<T>(device, shape, random_output_layout(rng), rng);
    const std::string what =
        weft::detail::cat("y ", y.what, " = a ", a.what, " * sigmoid(b ", b.what, ") + c ", c.what);
    CAPTURE(what);
    Exec::run(weft::assign(y.view, a.device * weft::sigmoid(b.device) + c.device));
    check_result(
        y.view,
        [&](const Index& i) {
          const double av = value_at(a.host, i), bv = value_at(b.host, i), cv = value_at(c.host, i);
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
    const Shape shape = random_shape(rng, iter % 7);
    Operand<T> a = make_operand<T>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Operand<T> b = make_operand<T>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Operand<T> c = make_operand<T>(device, broadcast_shape(shape, rng), random_input_layout(rng), rng);
    Destination<T> y = make_destination<T>(device, shape, random_output_layout(rng), rng);
    const std::string what =
        weft::detail::cat("y ", y.what, " = a ", a.what, " * b ", b.what, " + c ", c.what, " - a");
    CAPTURE(what);
    Exec::run(weft::assign(y.view, a.device * b.device + c.device - a.device));
    check_result(
        y.view,
        [&](const Index& i) {
          const double av = value_at(a.host, i), bv = value_at(b.host, i), cv = value_at(c.host, i);
          return Expected{av * bv + cv - av, 0};
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
          const double bv = value_at(b.host, i);
          return Expected{value_at(a.host, i) != 0 ? bv : double(value_at(c.host, i) != bv), 0};
        },
        0);
    check_result(
        z.view, [&](const Index& i) { return Expected{double(value_at(x.host, i) < value_at(w.host, i)), 0}; }, 0);
    check_result(
        h.view,
        [&](const Index& i) {
          const double xv = value_at(x.host, i), wv = value_at(w.host, i);
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
        Tensor<T> x = device_base.narrow(0, in_offset, n), y = out_base.narrow(0, out_offset, n);
        Tensor<T> xh = host_base.narrow(0, in_offset, n);
        if constexpr (std::is_same_v<T, bool>) {
          Exec::run(weft::assign(y, x == false));
          check_result(y, [&](const Index& i) { return Expected{value_at(xh, i) == 0 ? 1.0 : 0.0, 0}; }, 0);
        } else if constexpr (std::is_integral_v<T>) {
          Exec::run(weft::assign(y, x * 3 - 7));
          check_result(y, [&](const Index& i) { return Expected{value_at(xh, i) * 3 - 7, 0}; }, 0);
        } else {
          Exec::run(weft::assign(y, x * 2 + 1));  // one rounding (or none, fused), in the compute type
          check_result(
              y,
              [&](const Index& i) {
                const double v = value_at(xh, i);
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

      Tensor<float> md = m.device, vd = v.device;
      Tensor<P> pd = p.device;
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
        const double mv = value_at(m.host, i), gv = value_at(g.host, i), vv = value_at(v.host, i);
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
            const double pv = value_at(p.host, i);
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
    Tensor<double> ad = a.device, bd = b.device;
    Exec::run(weft::assign(ad, bd), weft::assign(bd, ad));
    check_result(ad, [&](const Index& i) { return Expected{value_at(b.host, i), 0}; }, 0, &a_before);
    check_result(bd, [&](const Index& i) { return Expected{value_at(a.host, i), 0}; }, 0, &b_before);
  }
}

const std::vector<Shape> optimizer_shapes_gpu = {Shape{1},        Shape{3},       Shape{4097}, Shape{(1 << 20) + 3},
                                                 Shape{37, 129}, Shape{5, 7, 11}};
const std::vector<Shape> optimizer_shapes_host = {Shape{1}, Shape{3}, Shape{4097}, Shape{37, 129}, Shape{5, 7, 11}};

}  // namespace

// ================================================================ on a GPU

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("pointwise on cuda: a * sigmoid(b) + c over random shapes, broadcasts and views" *
                       doctest::skip(!cuda_available()),
                   T, float, double, weft::half, weft::bfloat16) {
  chain_over_random_shapes<OnCuda, T>(70);
}

TEST_CASE_TEMPLATE("pointwise on cuda: integer arithmetic is exact over random shapes and views" *
                       doctest::skip(!cuda_available()),
                   T, std::int32_t, std::int64_t) {
  integers_over_random_shapes<OnCuda, T>(50);
}

TEST_CASE("pointwise on cuda: bools, comparisons, where, casts, mixed element widths" *
          doctest::skip(!cuda_available())) {
  bools_casts_and_mixed_widths<OnCuda>(50);
}

TEST_CASE_TEMPLATE("pointwise on cuda: contiguous kernels at every alignment and tail length" *
                       doctest::skip(!cuda_available()),
                   T, float, double, weft::half, weft::bfloat16, std::int32_t, std::int64_t, bool) {
  every_alignment_and_tail<OnCuda, T>();
}

TEST_CASE_TEMPLATE("fuse on cuda: several outputs, shared subexpressions, in-place state" *
                       doctest::skip(!cuda_available()),
                   P, float, weft::bfloat16) {
  fused_optimizer_step<OnCuda, P>(optimizer_shapes_gpu);
}

TEST_CASE("fuse on cuda: two statements that swap two tensors" * doctest::skip(!cuda_available())) {
  fused_swap<OnCuda>();
}

TEST_CASE("pointwise on cuda: numbers, factories, compound assignment, eval and self-overlap" *
          doctest::skip(!cuda_available())) {
  const Shape shape{33, 65};
  Tensor<float> y = weft::empty<float>(shape, Device::cuda());
  weft::test::poison(y);
  y = 3.5;  // a kernel without inputs
  check_result(y, [](const Index&) { return Expected{3.5, 0}; }, 0);

  Tensor<std::int64_t> z = weft::zeros<std::int64_t>(shape, Device::cuda());
  check_result(z, [](const Index&) { return Expected{0, 0}; }, 0);
  Tensor<weft::half> o = weft::full<weft::half>(shape, weft::half(0.25f), Device::cuda());
  check_result(o, [](const Index&) { return Expected{0.25, 0}; }, 0);

  Tensor<float> xh = weft::randn<float>(shape, 7);
  Tensor<float> x = xh.to(Device::cuda());
  y += x;  // y = y + x, reading y in place
  check_result(
      y, [&](const Index& i) { return Expected{3.5 + value_at(xh, i), 3.5 + std::fabs(value_at(xh, i))}; }, 4);

  Tensor<float> e = weft::eval(weft::exp(x) - 1);
  CHECK(e.device() == Device::cuda());
  CHECK(e.shape() == shape);
  check_result(
      e,
      [&](const Index& i) {
        const double ev = std::exp(value_at(xh, i));
        return Expected{ev - 1, ev + 1};
      },
      8);

  // y = transpose(y) reads elements the kernel overwrites: weft copies the input first.
  Tensor<float> sh = weft::randn<float>(Shape{127, 127}, 8);
  Tensor<float> s = sh.to(Device::cuda());
  s = s.transpose(0, 1);
  check_result(s, [&](const Index& i) { return Expected{value_at(sh, Index{i[1], i[0]}), 0}; }, 0);

  // Logging every component must not disturb a launch.
  weft::set_logs("cuda,+fusion,output_code");
  Tensor<float> logged = weft::eval(x * weft::sigmoid(x));
  weft::set_logs("");
  check_result(
      logged,
      [&](const Index& i) {
        const double v = value_at(xh, i), r = v / (1 + std::exp(-v));
        return Expected{r, std::fabs(r)};
      },
      8);
}

// More than 2^31 elements: the strided kernel's 64-bit index math and the
// vector kernel's 64-bit offsets. About 4.3 GB of device memory, bool outputs.
TEST_CASE("pointwise on cuda: more than 2^31 elements" * doctest::skip(!cuda_available())) {
  const std::int64_t rows = 46341, cols = 46341;  // rows * cols = 2^31 + 4634
  const std::int64_t n = rows * cols;
  REQUIRE(n > std::int64_t(INT32_MAX));
  std::size_t free_bytes = 0, total_bytes = 0;
  weft::detail::check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (free_bytes < std::size_t(2 * n) + (std::size_t(1) << 30)) {
    MESSAGE("not enough free device memory (", free_bytes, " bytes) for the 2^31-element test: not run");
    return;
  }
  std::vector<float> row_values(static_cast<std::size_t>(rows)), col_values(static_cast<std::size_t>(cols));
  for (std::int64_t r = 0; r < rows; ++r) row_values[std::size_t(r)] = float(r);
  for (std::int64_t c = 0; c < cols; ++c) col_values[std::size_t(c)] = float(c) + 0.5f;
  Tensor<float> a = weft::from_vector(row_values, Shape{rows, 1}, Device::cuda());
  Tensor<float> b = weft::from_vector(col_values, Shape{1, cols}, Device::cuda());

  Tensor<bool> y = weft::empty<bool>(Shape{rows, cols}, Device::cuda());
  weft::test::poison(y);
  y = a < b;  // broadcast operands: strided kernel; y[r, c] = r <= c
  std::vector<unsigned char> bytes = weft::test::storage_bytes(y);
  // Row r holds `below` in columns c < r and `above` from c = r on.
  auto count_wrong = [&](bool inverted) {
    const unsigned char below = inverted ? 1 : 0, above = inverted ? 0 : 1;
    std::int64_t bad = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const unsigned char* row = bytes.data() + r * cols;
      for (std::int64_t c = 0; c < r; ++c) bad += row[c] != below;
      for (std::int64_t c = r; c < cols; ++c) bad += row[c] != above;
    }
    return bad;
  };
  CHECK_MESSAGE(count_wrong(false) == 0, "elements of a < b differ from r <= c");

  Tensor<bool> z = weft::empty<bool>(Shape{n}, Device::cuda());
  weft::test::poison(z);
  z = y.view(Shape{n}) == false;  // contiguous: vector kernel over 2^31 + 4634 elements
  bytes = weft::test::storage_bytes(z);
  CHECK_MESSAGE(count_wrong(true) == 0, "elements of (a < b) == false differ from r > c");
}

// A CUDA tensor meeting a CPU tensor is a weft::Error naming both devices,
// raised before anything is allocated or written. The check runs on the host,
// so this case runs without a GPU too (on an unallocated fake CUDA tensor).
TEST_CASE("pointwise: a CUDA tensor and a CPU tensor in one kernel is an error naming both devices") {
  const Shape shape{4, 5};
  Tensor<float> host = weft::rand<float>(shape, 1);
  Tensor<float> device = cuda_available() ? host.to(Device::cuda()) : unallocated_cuda_tensor<float>(shape);

  Tensor<float> y;
  std::string message;
  try {
    y = device + host;
  } catch (const weft::Error& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(contains(message, "cuda:0"));
  CHECK(contains(message, "cpu"));
  CHECK(contains(message, "[4, 5]"));
  CHECK_FALSE(y.defined());  // nothing allocated

  Tensor<float> out = weft::full<float>(shape, 7.0f);
  message.clear();
  try {
    out = device * 2;
  } catch (const weft::Error& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(contains(message, "cuda:0"));
  CHECK(contains(message, "cpu"));
  for (float v : out.to_vector()) CHECK(v == 7.0f);  // nothing written

  Tensor<float> device_out =
      cuda_available() ? weft::empty<float>(shape, Device::cuda()) : unallocated_cuda_tensor<float>(shape);
  CHECK_THROWS_AS(weft::fuse(weft::assign(out, host * 2), weft::assign(device_out, device * 2)), weft::Error);
  for (float v : out.to_vector()) CHECK(v == 7.0f);
}

// ============================== the CUDA kernel's thread loop, on the host

TEST_CASE_TEMPLATE("cuda thread loop on the host: a * sigmoid(b) + c over random shapes, broadcasts and views", T,
                   float, double, weft::half, weft::bfloat16) {
  chain_over_random_shapes<EmulatedOnHost, T>(40);
}

TEST_CASE_TEMPLATE("cuda thread loop on the host: integer arithmetic over random shapes and views", T, std::int32_t,
                   std::int64_t) {
  integers_over_random_shapes<EmulatedOnHost, T>(24);
}

TEST_CASE("cuda thread loop on the host: bools, comparisons, where, casts, mixed element widths") {
  bools_casts_and_mixed_widths<EmulatedOnHost>(24);
}

TEST_CASE_TEMPLATE("cuda thread loop on the host: every alignment and tail length", T, float, double, weft::half,
                   weft::bfloat16, std::int32_t, std::int64_t, bool) {
  every_alignment_and_tail<EmulatedOnHost, T>();
}

TEST_CASE_TEMPLATE("cuda thread loop on the host: fused outputs with shared subexpressions", P, float,
                   weft::bfloat16) {
  fused_optimizer_step<EmulatedOnHost, P>(optimizer_shapes_host);
}

TEST_CASE("cuda thread loop on the host: two statements that swap two tensors") { fused_swap<EmulatedOnHost>(); }

TEST_CASE("cuda thread loop on the host: the tests reach every instantiation") {
  const auto before = std::vector<std::int64_t>(std::begin(EmulatedOnHost::runs), std::end(EmulatedOnHost::runs));
  every_alignment_and_tail<EmulatedOnHost, weft::half>();
  fused_optimizer_step<EmulatedOnHost, float>({Shape{37, 129}});
  integers_over_random_shapes<EmulatedOnHost, std::int32_t>(24);
  for (int kind = 0; kind < EmulatedOnHost::kinds; ++kind) {
    CAPTURE(kind);
    CHECK(EmulatedOnHost::runs[kind] > before[std::size_t(kind)]);
  }
}

}  // TEST_SUITE("cuda")
