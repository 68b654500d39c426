// SPDX-License-Identifier: MIT
/// @file The cuda suite for foreach kernels: multi-tensor launches on a GPU, and every block of every planned launch run on the host, against double-precision references.
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

#include <weft/core/factories.hpp>
#include <weft/core/random.hpp>
#include <weft/expr/fuse.hpp>
#include <weft/expr/operators.hpp>

#include "cuda_support.hpp"
#include "log_capture.hpp"

namespace {

using weft::Device;
using weft::ScalarList;
using weft::Shape;
using weft::Tensor;
using weft::TensorList;
using weft::test::cuda_available;
namespace wd = weft::detail;
namespace wc = weft::detail::cuda;

// ------------------------------------------------- values and tolerances
// The model of tests/cuda/pointwise_test.cu: an element's error is bounded by
// ulps * eps(compute type) * the magnitude of the terms it is built from, plus
// one ulp of a 16-bit output (the rounding at the store, which the float error
// can push across a tie), plus the smallest subnormal of the output.

template <class T>
double to_double(T x) {
  return double(weft::math_t<T>(x));
}

/// A number as the kernel holds it: converted once to the compute type C.
template <class C>
double as_compute(double x) {
  return double(C(x));
}

std::string exact(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

struct Expected {
  double value;
  double magnitude;
};

template <class T>
constexpr double epsilon() {
  if constexpr (std::is_same_v<T, double>) return 0x1p-52;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-23;
  else if constexpr (std::is_same_v<T, weft::half>) return 0x1p-10;
  else return 0x1p-7;  // bfloat16
}

template <class T>
constexpr double smallest_subnormal() {
  if constexpr (std::is_same_v<T, double>) return 0x1p-1074;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-149;
  else if constexpr (std::is_same_v<T, weft::half>) return 0x1p-24;
  else return 0x1p-133;  // bfloat16
}

template <class T>
double tolerance(const Expected& e, double ulps) {
  double tol = ulps * epsilon<weft::math_t<T>>() * e.magnitude + smallest_subnormal<T>();
  if constexpr (weft::is_16bit_float_v<T>) tol += epsilon<T>() * std::fabs(e.value);
  return tol;
}

// ------------------------------------------------------- lists in memory

/// Random member shapes: empty tensors, 0-dim tensors, sizes around every
/// vector width (4 floats, 8 halves, 2 doubles) and not multiples of them,
/// 2-D shapes, and (in short lists) a few tensors of several chunks.
std::vector<Shape> random_shapes(std::mt19937_64& rng, std::size_t length) {
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

ListLayout plan_layout(const std::vector<Shape>& shapes, std::mt19937_64& rng) {
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
TensorList<T> list_views(const Tensor<T>& base, const ListLayout& layout) {
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
  Tensor<T> host_base, device_base;
  TensorList<T> device;  // the kernel's operand: views of device_base

  double value(std::size_t k, std::int64_t i) const { return to_double(host_base.data()[layout.offsets[k] + i]); }
  std::int64_t numel(std::size_t k) const { return layout.shapes[k].numel(); }
};

template <class T>
Tensor<T> copy_to(const Tensor<T>& host, Device device) {
  return device.is_cpu() ? host.clone() : host.to(device);
}

template <class T>
ListData<T> make_input(Device device, const std::vector<Shape>& shapes, std::mt19937_64& rng, double lo, double hi) {
  const ListLayout layout = plan_layout(shapes, rng);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<T> values(std::size_t(layout.elements));
  for (T& v : values) v = T(float(uniform(rng)));
  const Tensor<T> host_base = weft::from_vector<T>(values, Shape{layout.elements});
  const Tensor<T> device_base = copy_to(host_base, device);
  return {layout, host_base, device_base, list_views(device_base, layout)};
}

/// The same values as `d` in fresh device storage.
template <class T>
ListData<T> fresh_copy(const ListData<T>& d, Device device) {
  const Tensor<T> device_base = copy_to(d.host_base, device);
  return {d.layout, d.host_base, device_base, list_views(device_base, d.layout)};
}

template <class T>
ListData<T> make_output(Device device, const std::vector<Shape>& shapes, std::mt19937_64& rng) {
  const ListLayout layout = plan_layout(shapes, rng);
  const Tensor<T> device_base = weft::empty<T>(Shape{layout.elements}, device);
  weft::test::poison(device_base);
  return {layout, Tensor<T>(), device_base, list_views(device_base, layout)};
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
  std::int64_t touched = 0;
  for (std::size_t i = 0; i < covered.size(); ++i) {
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
  CHECK_MESSAGE(touched == 0, touched, " elements between the list's members were written");
}

// -------------------------------------------------------------- executors
// The test bodies run on two executors: the real one (weft::fuse on lists of
// CUDA tensors), and the multi-tensor kernel's per-block body
// (cuda::run_list_block, the function every GPU block runs) executed on the
// host for every block of every launch the planner packs, over CPU tensors.
// The second needs no GPU.

struct OnCuda {
  static Device device() { return Device::cuda(); }
  template <class... Stmts>
  static void run(Stmts... stmts) {
    weft::fuse(stmts...);
  }
};

struct EmulatedOnHost {
  static Device device() { return Device::cpu(); }

  /// Launch tables the runs cycle through: the kernel's 4 KB table and its
  /// large table, both with the chunk the planner picks for an H100-sized GPU
  /// (132 SMs x 8 blocks) and 256 threads a block; and a table of 64 words and
  /// 8 blocks with chunks of one vector per thread of a 3-thread block, so
  /// that long lists take many launches and tensors are cut across them.
  enum Config { small_table, large_table, tiny_table, configs };
  using TinyLaunch = wd::ListLaunch<64, 8>;

  static inline std::int64_t runs[configs] = {};
  static inline std::int64_t multi_launch_runs = 0;  // runs that took more than one launch
  static inline std::int64_t split_tensors = 0;      // launches whose first tensor continues from the previous one
  static inline std::int64_t vector_blocks = 0, scalar_blocks = 0;

  template <class... Stmts>
  static void run(Stmts... stmts) {
    static int calls = 0;
    const int config = calls++ % configs;
    const auto& first = *std::get<0>(std::tie(stmts...)).dst;
    std::vector<std::int64_t> sizes;
    std::int64_t total = 0;
    for (const auto& t : first) {
      sizes.push_back(t.numel());
      total += t.numel();
    }
    const wd::IterationSpace space = wd::foreach_space(total);
    wd::ListTable table;
    const auto kernel = wd::build_list_kernel(space, table, stmts...);
    using Kernel = std::remove_cv_t<decltype(kernel)>;
    if (total == 0) return;
    constexpr std::int64_t V = wc::vector_width_v<Kernel>;
    const std::int64_t resident = 132 * 8;
    ++runs[config];
    if (config == small_table)
      emulate<typename wc::SmallListArgs<Kernel>::Launch>(kernel, table, sizes, wc::kBlockThreads * V, resident,
                                                          wc::kBlockThreads, false);
    else if (config == large_table)
      emulate<typename wc::LargeListArgs<Kernel>::Launch>(kernel, table, sizes, wc::kBlockThreads * V, resident,
                                                          wc::kBlockThreads, false);
    else emulate<TinyLaunch>(kernel, table, sizes, 3 * V, 4, 3, true);
  }

  template <class Launch, class Kernel>
  static void emulate(const Kernel& kernel, const wd::ListTable& table, const std::vector<std::int64_t>& sizes,
                      std::int64_t unit, std::int64_t resident, std::uint32_t threads, bool smallest_chunk) {
    constexpr int V = wc::vector_width_v<Kernel>;
    wd::ListLaunchPlan plan = wd::plan_list_launches<Launch>(table, sizes, unit, resident);
    REQUIRE(plan.tensors_per_launch > 0);
    if (smallest_chunk) {
      plan.chunk = unit;
      plan.chunks = wd::count_chunks(sizes, unit);
      plan.launches = wd::count_list_launches(sizes, unit, plan.tensors_per_launch, plan.blocks_per_launch);
    }
    CHECK(plan.chunk % V == 0);
    const std::vector<char> vector = wc::vector_tensors(table, sizes.size(), V);
    auto launch = std::make_unique<Launch>();
    int launches = 0;
    wd::pack_list_launches(table, sizes, vector, plan, *launch, [&](const Launch& l) {
      ++launches;
      REQUIRE(l.tensors <= plan.tensors_per_launch);
      REQUIRE(l.blocks <= Launch::blocks_capacity);
      split_tensors += l.block_chunk[0] != 0;
      for (int b = 0; b < l.blocks; ++b) {
        (l.vector_aligned(l.block_tensor[b]) ? vector_blocks : scalar_blocks) += 1;
        for (std::uint32_t t = 0; t < threads; ++t) wc::run_list_block<V>(kernel, l, std::uint32_t(b), t, threads);
      }
    });
    CHECK(launches == plan.launches);
    multi_launch_runs += launches > 1;
  }
};

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

// ------------------------------------------- an AdamW-shaped kernel type

/// The statements of an AdamW step as weft::optim writes it: numbers for the
/// hyperparameters, four lists (p, g, m, v) named 14 times.
template <class P, class G>
auto adamw_statements(TensorList<P>& p, TensorList<G>& g, TensorList<float>& m, TensorList<float>& v) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8, lr = 1e-3, wdecay = 0.01;
  auto m1 = b1 * m + (1 - b1) * g;
  auto v1 = b2 * v + (1 - b2) * g * g;
  return std::make_tuple(weft::assign(m, m1), weft::assign(v, v1),
                         weft::assign(p, p * (1 - lr * wdecay) - lr * m1 / (weft::sqrt(v1) + eps)));
}

template <class Tuple>
struct kernel_of;
template <class... Stmts>
struct kernel_of<std::tuple<Stmts...>> {
  using type = wd::PointwiseKernel<false, Stmts...>;
};

/// A ListTable of `lists` distinct lists of float tensors of `sizes`, at
/// 256-byte aligned fake addresses (never dereferenced).
wd::ListTable fake_table(const std::vector<std::int64_t>& sizes, int lists) {
  wd::ListTable table;
  std::uintptr_t next = std::uintptr_t(1) << 40;
  for (int r = 0; r < lists; ++r) {
    std::vector<void*> pointers;
    for (std::int64_t n : sizes) {
      pointers.push_back(reinterpret_cast<void*>(next));
      next += (std::uintptr_t(n) * 4 + 256) / 256 * 256;  // empty tensors too get an address of their own
    }
    table.pointers.push_back(std::move(pointers));
    table.element_bytes.push_back(4);
    table.list_ids.push_back(reinterpret_cast<const void*>(std::uintptr_t(r + 1)));
  }
  return table;
}

/// Packs `plan` and checks that every chunk of every tensor lands in exactly
/// one block, with the table holding that tensor's pointers and size.
template <class Launch>
void check_packing(const wd::ListTable& table, const std::vector<std::int64_t>& sizes, const wd::ListLaunchPlan& plan) {
  std::vector<std::vector<int>> seen(sizes.size());
  for (std::size_t k = 0; k < sizes.size(); ++k)
    seen[k].assign(std::size_t((sizes[k] + plan.chunk - 1) / plan.chunk), 0);
  const std::vector<char> vector(sizes.size(), 1);
  auto launch = std::make_unique<Launch>();
  int launches = 0;
  std::size_t bad = 0;
  wd::pack_list_launches(table, sizes, vector, plan, *launch, [&](const Launch& l) {
    ++launches;
    CHECK(l.tensors >= 1);
    CHECK(l.tensors <= plan.tensors_per_launch);
    CHECK(l.blocks <= Launch::blocks_capacity);
    for (int b = 0; b < l.blocks; ++b) {
      const int local = l.block_tensor[b];
      // Tensor k is found by its pointer in list 0.
      const auto it = std::find(table.pointers[0].begin(), table.pointers[0].end(), l.pointer(0, local));
      if (it == table.pointers[0].end()) {
        ++bad;
        continue;
      }
      const std::size_t k = std::size_t(it - table.pointers[0].begin());
      bad += l.size(local) != sizes[k];
      for (std::size_t r = 0; r < table.pointers.size(); ++r) bad += l.pointer(int(r), local) != table.pointers[r][k];
      seen[k][l.block_chunk[b]] += 1;
    }
  });
  CHECK(launches == plan.launches);
  for (const auto& chunks : seen)
    for (int c : chunks) bad += c != 1;
  CHECK_MESSAGE(bad == 0, bad, " chunks were missed, repeated or given the wrong tensor");
}

std::string describe(const wd::ListLaunchPlan& plan) {
  return wd::cat(plan.tensors, " tensors, ", plan.elements, " elements: ", plan.launches, " launch(es) of up to ",
                 plan.tensors_per_launch, " tensors x ", plan.blocks_per_launch, " blocks, ", plan.chunks,
                 " chunks of ", plan.chunk, " elements");
}

}  // namespace

TEST_SUITE("cuda") {

// ============================================ launch tables (host only)

TEST_CASE("foreach launch tables: capacity from the kernel argument limit, and packing") {
  TensorList<weft::bfloat16> p;
  TensorList<weft::half> g;
  TensorList<float> m, v;
  using Kernel = kernel_of<decltype(adamw_statements(p, g, m, v))>::type;
  using Small = wc::SmallListArgs<Kernel>;
  using Large = wc::LargeListArgs<Kernel>;
  static_assert(wd::list_operands<Kernel>::lists == 14);  // 3 destinations + 11 list leaves
  static_assert(wd::list_operands<Kernel>::numbers == 0);
  static_assert(std::is_trivially_copyable_v<Small> && std::is_trivially_copyable_v<Large>);

  REQUIRE(Small::fits);
  CHECK(sizeof(Small) <= wc::kKernelArgBytes);
  CHECK(wc::kKernelArgBytes - sizeof(Small) < 8 + wc::kKernelArgBytes % 8);  // no room for another word
  CHECK(Small::Capacity::kTensors > 0);
  CHECK(Small::Capacity::kBlocks > 0);
  CHECK(sizeof(Large) <= wc::kLargeKernelArgBytes);
  CHECK(wc::kLargeKernelArgBytes - sizeof(Large) < 8 + wc::kLargeKernelArgBytes % 8);
  if (CUDART_VERSION >= 12010) CHECK(wc::kLargeKernelArgBytes == 32764);
  MESSAGE("AdamW kernel (", wd::list_operands<Kernel>::lists, " list operands, 4 distinct lists): ", sizeof(Kernel),
          " bytes; 4 KB argument: ", Small::Capacity::kWords, " words, ", Small::Capacity::kBlocks, " blocks, ",
          Small::Capacity::kTensors, " tensors (all operands distinct) or ",
          Small::Capacity::kWords / 5, " (4 lists); ", wc::kLargeKernelArgBytes, "-byte argument: ",
          Large::Capacity::kWords, " words, ", Large::Capacity::kBlocks, " blocks, ", Large::Capacity::kTensors,
          " or ", Large::Capacity::kWords / 5, " tensors");

  // Launch plans on an H200-sized GPU (132 SMs x 8 resident blocks), float
  // vectors of 4: a 150-tensor model and a list of 10,000 small tensors.
  const std::int64_t unit = wc::kBlockThreads * wc::vector_width_v<Kernel>, resident = 132 * 8;
  std::vector<std::int64_t> model;
  for (int layer = 0; layer < 25; ++layer)
    for (std::int64_t n : {1024 * 1024, 1024 * 4096, 4096 * 1024, 1024, 1024, 4096}) model.push_back(n);
  std::vector<std::int64_t> many(10000);
  std::mt19937_64 rng(0x5eedA000u);
  for (auto& n : many) n = std::int64_t(1 + rng() % 8192);
  std::vector<std::int64_t> empty_ones = {0, 5, 0, 0, 1, 0};
  for (const auto* sizes : {&model, &many, &empty_ones}) {
    const wd::ListTable table = fake_table(*sizes, 4);
    const wd::ListLaunchPlan small = wd::plan_list_launches<typename Small::Launch>(table, *sizes, unit, resident);
    const wd::ListLaunchPlan large = wd::plan_list_launches<typename Large::Launch>(table, *sizes, unit, resident);
    MESSAGE("4 KB table: ", describe(small), "\n", wc::kLargeKernelArgBytes, "-byte table: ", describe(large));
    CHECK(small.tensors_per_launch == Small::Capacity::kWords / 5);
    CHECK(small.chunk % unit == 0);
    CHECK(large.launches <= small.launches);
    check_packing<typename Small::Launch>(table, *sizes, small);
    check_packing<typename Large::Launch>(table, *sizes, large);
    // The launches the tensors need, and no more than one more per block-map overflow.
    CHECK(small.launches >= (small.tensors + small.tensors_per_launch - 1) / small.tensors_per_launch);
    CHECK(small.launches <= (small.tensors + small.tensors_per_launch - 1) / small.tensors_per_launch +
                                (small.chunks + small.blocks_per_launch - 1) / small.blocks_per_launch);
  }
  // Chunks stay at one vector per thread while that fills the GPU, and never
  // go below it: 100 tensors of 1000 floats are 100 blocks of 1024.
  const std::vector<std::int64_t> hundred(100, 1000);
  CHECK(wd::plan_list_launches<typename Small::Launch>(fake_table(hundred, 4), hundred, unit, resident).chunk == unit);
}

// ================================================================ on a GPU

TEST_CASE_TEMPLATE("foreach on cuda: out = p - lr * g and p -= lr * g over random lists" *
                       doctest::skip(!cuda_available()),
                   T, float, double, weft::half, weft::bfloat16) {
  axpy_over_random_lists<OnCuda, T>();
}

TEST_CASE("foreach on cuda: a fused AdamW step over bf16, float and half lists with a ScalarList" *
          doctest::skip(!cuda_available())) {
  for (std::size_t length : {1, 2, 37, 1000}) {
    CAPTURE(length);
    adamw_mixed_dtypes<OnCuda>(length);
  }
}

TEST_CASE("foreach on cuda: a one-element tensor operand, and two lists swapped" * doctest::skip(!cuda_available())) {
  single_tensor_operand_and_swap<OnCuda>();
}

TEST_CASE("foreach on cuda: a long list in several launches, a tensor continuing in the next; logs" *
          doctest::skip(!cuda_available())) {
  weft_test::LogCapture capture;
  weft::set_logs("foreach,cuda");
  long_list_with_large_tensors<OnCuda>(6000, 8);
  weft::set_logs("");
  const std::string text = capture.text();
  capture.restore();
  CAPTURE(text);
  CHECK(text.find("foreach on cuda:0:") != std::string::npos);
  CHECK(text.find("foreach launch 2/") != std::string::npos);
  CHECK(text.find("continues") != std::string::npos);
}

// ============================== the per-block body of every launch, on the host

TEST_CASE_TEMPLATE("foreach blocks on the host: out = p - lr * g and p -= lr * g over random lists", T, float,
                   double, weft::half, weft::bfloat16) {
  for (int round = 0; round < 2; ++round) axpy_over_random_lists<EmulatedOnHost, T>();
}

TEST_CASE("foreach blocks on the host: a fused AdamW step over bf16, float and half lists with a ScalarList") {
  for (std::size_t length : {1, 2, 37, 1000}) {
    CAPTURE(length);
    adamw_mixed_dtypes<EmulatedOnHost>(length);
  }
}

TEST_CASE("foreach blocks on the host: a one-element tensor operand, and two lists swapped") {
  for (int round = 0; round < 3; ++round) single_tensor_operand_and_swap<EmulatedOnHost>();
}

TEST_CASE("foreach blocks on the host: long lists in several launches, tensors continuing in the next") {
  const auto split_before = EmulatedOnHost::split_tensors;
  const auto multi_before = EmulatedOnHost::multi_launch_runs;
  for (int round = 0; round < 3; ++round) long_list_with_large_tensors<EmulatedOnHost>(3000, 3);
  CHECK(EmulatedOnHost::split_tensors > split_before);
  CHECK(EmulatedOnHost::multi_launch_runs > multi_before);
}

TEST_CASE("foreach blocks on the host: the tests reach every table, the vector and the scalar path") {
  axpy_over_random_lists<EmulatedOnHost, float>();
  for (int config = 0; config < EmulatedOnHost::configs; ++config) {
    CAPTURE(config);
    CHECK(EmulatedOnHost::runs[config] > 0);
  }
  CHECK(EmulatedOnHost::vector_blocks > 0);
  CHECK(EmulatedOnHost::scalar_blocks > 0);
  CHECK(EmulatedOnHost::multi_launch_runs > 0);
  CHECK(EmulatedOnHost::split_tensors > 0);
}

}  // TEST_SUITE("cuda")
