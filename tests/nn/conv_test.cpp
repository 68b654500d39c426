// SPDX-License-Identifier: MIT
/// @file nn::conv1d / conv2d / conv_transpose2d: forward and backward against a direct double-precision sum on random configurations (every option, both layouts, float / double / bfloat16), gradchecks of the Var forms, the fused epilogue, and bad input.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <weft/autograd.hpp>

#include "ad/gradcheck.hpp"
#include "error_check.hpp"
#include "log_capture.hpp"
#include "reference.hpp"

using namespace weft;
using namespace weft_test;

// A named namespace, not an anonymous one: meson's unity build puts several test files in one
// translation unit, where another file's helpers of the same names would collide.
namespace conv_test {

// The bfloat16 scope (tests/meson.build: the aarch64 build with FEAT_BF16) keeps only the bfloat16
// cases (#if !WEFT_TESTS_BF16_SCOPE around the rest): float's and double's kernels are those of
// the armv8-a build.


/// One convolution's sizes and options, as the reference reads them.
struct Config {
  std::int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  bool same = false;
  std::int64_t reduction_terms() const { return c / groups * kh * kw; }
  std::int64_t oh() const { return same ? h : (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  std::int64_t ow() const { return same ? w : (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  // "same": torch pads (total / 2) before and the rest after
  std::int64_t pad_h() const { return same ? dh * (kh - 1) / 2 : ph; }
  std::int64_t pad_w() const { return same ? dw * (kw - 1) / 2 : pw; }
  nn::ConvOptions options() const {
    nn::ConvOptions o2{.stride = {sh, sw}, .dilation = {dh, dw}, .groups = groups};
    o2.padding = same ? nn::ConvPadding("same") : nn::ConvPadding(ph, pw);
    return o2;
  }
  std::string str() const {
    return weft::detail::cat("x [", n, ", ", c, ", ", h, ", ", w, "], w [", o, ", ", c / groups, ", ", kh, ", ", kw,
                             "], stride ", sh, "x", sw, ", padding ", same ? std::string("same") : weft::detail::cat(ph, "x", pw),
                             ", dilation ", dh, "x", dw, ", groups ", groups);
  }
};

/// A random valid configuration: groups 1, 2 or depthwise, any stride / padding / dilation the
/// input admits.
Config random_config(Rng& rng) {
  for (;;) {
    Config k{};
    k.n = rng.integer(1, 3);
    const std::int64_t kind = rng.integer(0, 2);
    k.groups = kind == 0 ? 1 : kind == 1 ? 2 : rng.integer(1, 6);
    k.c = k.groups * (kind == 2 ? 1 : rng.integer(1, 4));
    k.o = k.groups * (kind == 2 ? rng.integer(1, 2) : rng.integer(1, 5));
    k.h = rng.integer(1, 9), k.w = rng.integer(1, 9);
    k.kh = rng.integer(1, 4), k.kw = rng.integer(1, 4);
    k.sh = rng.integer(1, 3), k.sw = rng.integer(1, 3);
    k.dh = rng.integer(1, 2), k.dw = rng.integer(1, 2);
    k.ph = rng.integer(0, 2), k.pw = rng.integer(0, 2);
    k.same = rng.chance(0.2);
    if (k.same) k.sh = k.sw = 1;
    if (!k.same && (k.h + 2 * k.ph < k.dh * (k.kh - 1) + 1 || k.w + 2 * k.pw < k.dw * (k.kw - 1) + 1)) continue;
    return k;
  }
}

/// A random configuration whose groups have 16 to 20 input and output channels: the width from
/// which NCHW inputs are read from a padded channels-last copy (cpu::kPatchCopyChannels), by the
/// direct product in float and double; inputs up to 20 wide, so that the copy's and the NCHW
/// stores' packet transposes (16 x 16 floats) meet whole tiles and remainders.
Config random_wide_config(Rng& rng) {
  Config k = random_config(rng);
  k.groups = rng.integer(1, 2);
  k.c = k.groups * rng.integer(16, 20);
  k.o = k.groups * rng.integer(16, 20);
  k.h = rng.integer(k.h, 20), k.w = rng.integer(k.w, 20);
  return k;
}

/// A random configuration of a stem: 1 to 4 input channels a group against 16 to 20 output ones,
/// kernels up to 7 x 7, whose input gradient runs by taps (cpu::conv_input_gradient_by_taps).
Config random_stem_config(Rng& rng) {
  Config k = random_config(rng);
  k.groups = rng.integer(1, 2);
  k.c = k.groups * rng.integer(1, 4);
  k.o = k.groups * rng.integer(16, 20);
  k.kh = rng.integer(2, 7), k.kw = rng.integer(1, 7);
  k.h = rng.integer(k.dh * (k.kh - 1) + 1, 20), k.w = rng.integer(k.dw * (k.kw - 1) + 1, 20);
  return k;
}

/// A random 1 x 1 kernel of stride 2 or 3 (in h, w or both) without padding, 32 to 40 channels a
/// group: the convolution of stride 1 over x's sampled rows and columns (cpu::conv_sampled_input),
/// whose 16-bit channels-last copy transposes whole tiles of a row's elements, and whose input
/// gradient fills the positions no window reads with zeros.
Config random_sampled_config(Rng& rng) {
  Config k = random_config(rng);
  k.same = false, k.kh = k.kw = 1, k.ph = k.pw = 0;
  k.sh = rng.integer(1, 3), k.sw = rng.integer(k.sh == 1 ? 2 : 1, 3);
  k.groups = rng.integer(1, 2);
  k.c = k.groups * rng.integer(32, 40);
  k.o = k.groups * rng.integer(1, 20);
  k.h = rng.integer(1, 20), k.w = rng.integer(1, 40);
  return k;
}

/// Reference forward, input gradient and weight gradient, in double, by the definition:
/// y[n, o, i, j] = b[o] + sum_{c, a, e} w[o, c, a, e] x[n, g(o) cg + c, i sh - ph + a dh, j sw - pw + e dw]
/// (terms outside x are zero), dx and dw the same sum's transposes against dy.
/// Raw pointers and sizes hoisted out of the loops: the sanitizer build runs this at -O0, where
/// every vector subscript and member call is a call (a third of a large conv test's time).
struct Reference {
  std::vector<double> y, dx, dw;
};
Reference reference(const Config& k, const std::vector<double>& x_values, const std::vector<double>& w_values,
                    const std::vector<double>* b, const std::vector<double>& dy_values) {
  const std::int64_t cg = k.c / k.groups, og = k.o / k.groups, oh = k.oh(), ow = k.ow();
  const std::int64_t ph = k.pad_h(), pw = k.pad_w(), H = k.h, W = k.w, KH = k.kh, KW = k.kw;
  Reference r{std::vector<double>(std::size_t(k.n * k.o * oh * ow)), std::vector<double>(x_values.size()),
              std::vector<double>(w_values.size())};
  const double *x = x_values.data(), *w = w_values.data(), *dy = dy_values.data();
  double *y = r.y.data(), *dx = r.dx.data(), *dw = r.dw.data();
  for (std::int64_t n = 0; n < k.n; ++n)
    for (std::int64_t o = 0; o < k.o; ++o)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          const std::int64_t yi = ((n * k.o + o) * oh + i) * ow + j;
          double s = b ? (*b)[std::size_t(o)] : 0.0;
          for (std::int64_t c = 0; c < cg; ++c) {
            const double* xc = x + (n * k.c + o / og * cg + c) * H * W;
            double* dxc = dx + (n * k.c + o / og * cg + c) * H * W;
            for (std::int64_t a = 0; a < KH; ++a) {
              const std::int64_t ih = i * k.sh - ph + a * k.dh;
              if (ih < 0 || ih >= H) continue;
              for (std::int64_t e = 0; e < KW; ++e) {
                const std::int64_t iw = j * k.sw - pw + e * k.dw;
                if (iw < 0 || iw >= W) continue;
                const std::int64_t xi = ih * W + iw, wi = ((o * cg + c) * KH + a) * KW + e;
                s += w[wi] * xc[xi];
                dxc[xi] += w[wi] * dy[yi];
                dw[wi] += xc[xi] * dy[yi];
              }
            }
          }
          y[yi] = s;
        }
  return r;
}

/// x's values as a tensor of shape [n, c, h, w] in the given layout: contiguous, channels-last
/// (an NHWC tensor permuted), or a slice of a wider tensor.
template <class T>
TensorView<T> in_layout(const std::vector<double>& v, const Shape& s, int layout) {
  Tensor<T> nchw = weft::empty<T>(s);
  for (std::int64_t i = 0; i < nchw.numel(); ++i) nchw.data()[i] = T(v[std::size_t(i)]);
  if (layout == 0) return nchw.view();
  if (layout == 1) {
    TensorView<T> cl = weft::channels_last(nchw);
    CHECK(weft::is_channels_last(cl));
    return cl;
  }
  Shape wide = s;
  wide[3] = 2 * s[3] + 1;
  Tensor<T> big = weft::full<T>(wide, T(1000));
  TensorView<T> slice = big.slice(3, 1, wide[3], 2);
  slice = nchw;
  return slice;
}

std::vector<double> random_values(Rng& rng, std::int64_t count, bool bf16) {
  std::vector<double> v(static_cast<std::size_t>(count));
  for (double& e : v) e = bf16 ? double(bfloat16(float(rng.uniform(-1, 1)))) : rng.uniform(-1, 1);
  return v;
}

/// |got - want| <= tol for every element; reports the first few misses.
template <class T>
void check_close(const char* what, const Tensor<T>& got, const std::vector<double>& want,
                 const std::vector<double>& bound) {
  REQUIRE(std::size_t(got.numel()) == want.size());
  const Tensor<T> g(got);
  int misses = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double v = double(g.data()[i]);
    if (!(std::abs(v - want[i]) <= bound[i])) {
      if (++misses <= 3) FAIL_CHECK(what, " element ", i, ": got ", v, ", want ", want[i], ", bound ", bound[i]);
    }
  }
  CHECK(misses == 0);
}

/// The error bound of a sum of `terms` products in T with magnitude sum `mag`, rounded to T:
/// each FMA step rounds once (k u sum |a b|), plus the final rounding of a 16-bit result.
template <class T>
std::vector<double> bounds(const std::vector<double>& want, const std::vector<double>& magnitude, std::int64_t terms) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const double u = std::numeric_limits<C>::epsilon(), out_u = std::is_same_v<T, bfloat16> ? 1.0 / 256 : 0.0;
  std::vector<double> b(want.size());
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = double(terms + 2) * u * magnitude[i] + out_u * std::abs(want[i]) + 1e-300;
  return b;
}

template <class T>
void check_random_convolutions(int cases, Config (*make_config)(Rng&) = random_config) {
  WEFT_TEST_RNG(rng);
  const bool bf16 = std::is_same_v<T, bfloat16>;
  for (int t = 0; t < cases; ++t) {
    const Config k = make_config(rng);
    const int layout = int(rng.integer(0, 2));
    const bool with_bias = rng.chance(0.5);
    INFO(type_name<T>(), " ", k.str(), ", layout ", layout, with_bias ? ", bias" : "");
    const Shape xs{k.n, k.c, k.h, k.w}, ws{k.o, k.c / k.groups, k.kh, k.kw}, ys{k.n, k.o, k.oh(), k.ow()};
    const std::vector<double> x = random_values(rng, xs.numel(), bf16), w = random_values(rng, ws.numel(), bf16);
    const std::vector<double> b = random_values(rng, k.o, bf16), dy = random_values(rng, ys.numel(), bf16);
    const Reference ref = reference(k, x, w, with_bias ? &b : nullptr, dy);
    // magnitudes: the same sums over |values|
    auto abs_of = [](std::vector<double> v) {
      for (double& e : v) e = std::abs(e);
      return v;
    };
    const std::vector<double> bb = abs_of(b);
    const Reference mag = reference(k, abs_of(x), abs_of(w), with_bias ? &bb : nullptr, abs_of(dy));
    const TensorView<T> xv = in_layout<T>(x, xs, layout), wv = in_layout<T>(w, ws, 0);
    const Tensor<T> bv(in_layout<T>(b, Shape{k.o, 1, 1, 1}, 0).view(Shape{k.o}));
    const Tensor<T> y = with_bias ? nn::conv2d(xv, wv, bv, k.options()) : nn::conv2d(xv, wv, k.options());
    REQUIRE(y.shape() == ys);
    check_close("y", y, ref.y, bounds<T>(ref.y, mag.y, k.reduction_terms()));
    const TensorView<T> dyv = in_layout<T>(dy, ys, int(rng.integer(0, 2)));
    const nn::ConvGradients<T> d = nn::conv2d_backward<T>(dyv, xv, wv, k.options());
    REQUIRE(d.dx.shape() == xs);
    REQUIRE(d.dweight.shape() == ws);
    check_close("dx", d.dx, ref.dx, bounds<T>(ref.dx, mag.dx, k.o * k.kh * k.kw));
    check_close("dw", d.dweight, ref.dw, bounds<T>(ref.dw, mag.dw, k.n * k.oh() * k.ow()));
    std::vector<double> db(std::size_t(k.o)), db_mag(std::size_t(k.o));
    for (std::int64_t i = 0; i < ys.numel(); ++i) {
      db[std::size_t(i / (k.oh() * k.ow()) % k.o)] += dy[std::size_t(i)];
      db_mag[std::size_t(i / (k.oh() * k.ow()) % k.o)] += std::abs(dy[std::size_t(i)]);
    }
    check_close("db", d.dbias, db, bounds<T>(db, db_mag, k.n * k.oh() * k.ow()));
  }
}


#if !WEFT_TESTS_BF16_SCOPE
TEST_CASE("conv2d forward and backward: the GEMM's task splits (many rows, many columns), both layouts") {
  // Rows (batch x output positions) past one 256-row block split into row chunks; few rows with
  // more than one 64-column panel of output channels split the columns and gather the patches
  // once; a ResNet-like stride-2 layer in between; then the direct products' cases.
  WEFT_TEST_RNG(rng);
  const Config shapes[] = {{3, 6, 14, 13, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                           {2, 5, 4, 3, 130, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                           {2, 8, 12, 12, 70, 3, 3, 2, 2, 1, 1, 1, 1, 2},
                           // the direct product (16 or more channels a group): row blocks, two
                           // column panels; groups with column blocks split for few rows
                           {3, 32, 18, 17, 80, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                           {2, 40, 16, 16, 300, 3, 3, 2, 2, 1, 1, 1, 1, 2},
                           // a multiple of the panel width a group: the weight gradient's direct
                           // product (strided, dilated, grouped)
                           {2, 64, 10, 11, 20, 3, 3, 2, 1, 1, 1, 1, 1, 1},
                           {1, 128, 7, 7, 70, 3, 3, 1, 1, 2, 2, 2, 2, 2},
                           // a 1 x 1 kernel over 9 chunks of 256 positions an image (NCHW: by
                           // output positions, x's rows packed as they are, in tasks of 256):
                           // the forward where the channels grow, the input gradient where they
                           // shrink
                           {2, 24, 48, 47, 70, 1, 1, 1, 1, 0, 0, 1, 1, 1},
                           {2, 70, 48, 47, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1},
                           // strided: NCHW, the sampled positions (48 x 31 an image) gathered
                           // into the panels
                           {2, 24, 95, 93, 70, 1, 1, 2, 3, 0, 0, 1, 1, 1}};
  // 2 threads (CI's): every image of the 1 x 1 case then has enough chunks for tasks
  const int threads = weft::get_num_threads();
  weft::set_num_threads(2);
  for (const Config& k : shapes) {
    for (int layout : {0, 1, 2}) {  // layout 2: NCHW, the batch in slabs of one image
      INFO(k.str(), ", layout ", layout);
      const std::int64_t slab_bytes = weft::detail::cpu::conv_slab_bytes;
      if (layout == 2) weft::detail::cpu::conv_slab_bytes = 1, layout = 0;
      const Shape xs{k.n, k.c, k.h, k.w}, ws{k.o, k.c / k.groups, k.kh, k.kw}, ys{k.n, k.o, k.oh(), k.ow()};
      const std::vector<double> x = random_values(rng, xs.numel(), false), w = random_values(rng, ws.numel(), false);
      const std::vector<double> b = random_values(rng, k.o, false), dy = random_values(rng, ys.numel(), false);
      const Reference ref = reference(k, x, w, &b, dy);
      const TensorView<double> xv = in_layout<double>(x, xs, layout), wv = in_layout<double>(w, ws, 0);
      const Tensor<double> bv(in_layout<double>(b, Shape{k.o, 1, 1, 1}, 0).view(Shape{k.o}));
      const std::vector<double> tight(ref.y.size(), 1e-12), tight_x(ref.dx.size(), 1e-12), tight_w(ref.dw.size(), 1e-11);
      check_close("y", Tensor<double>(nn::conv2d(xv, wv, bv, k.options())), ref.y, tight);
      const nn::ConvGradients<double> d = nn::conv2d_backward<double>(in_layout<double>(dy, ys, layout), xv, wv, k.options());
      check_close("dx", d.dx, ref.dx, tight_x);
      check_close("dw", d.dweight, ref.dw, tight_w);
      weft::detail::cpu::conv_slab_bytes = slab_bytes;
    }
  }
  weft::set_num_threads(threads);
}
#endif  // !WEFT_TESTS_BF16_SCOPE

/// |B^T| |d| |B| of a 4 x 4 tile d(r, e) (already absolute), into out[4 r + e].
template <class D>
void abs_input_tile(const D& d, double* out) {
  const double bt[4][4] = {{1, 0, 1, 0}, {0, 1, 1, 0}, {0, 1, 1, 0}, {0, 1, 0, 1}};
  double v[4][4];
  for (int r = 0; r < 4; ++r)
    for (int e = 0; e < 4; ++e) v[r][e] = d(r, e);
  for (int r = 0; r < 4; ++r)
    for (int e = 0; e < 4; ++e) {
      double x = 0;
      for (int a = 0; a < 4; ++a)
        for (int f = 0; f < 4; ++f) x += bt[r][a] * v[a][f] * bt[e][f];
      out[4 * r + e] = x;
    }
}

/// |G| |g| |G|^T of a 3 x 3 kernel g(a, e) (already absolute), into out[4 r + e].
template <class G>
void abs_kernel_tile(const G& g, double* out) {
  const double g_abs[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0, 0, 1}};
  for (int r = 0; r < 4; ++r)
    for (int e = 0; e < 4; ++e) {
      double x = 0;
      for (int a = 0; a < 3; ++a)
        for (int f = 0; f < 3; ++f) x += g_abs[r][a] * g(a, f) * g_abs[e][f];
      out[4 * r + e] = x;
    }
}

/// What the error of Winograd's F(2x2, 3x3) is bounded by (cpu/conv_winograd.hpp): for output
/// (n, o, i, j) of the stride-1 3 x 3 correlation of src [n, k, h, w] padded by `pad`, in tile
/// (i / 2, j / 2): the sum over c of |A^T| (|G| |g| |G|^T . |B^T| |d| |B|) |A| at (i % 2, j % 2),
/// d the tile's 4 x 4 inputs (zero outside src), g = kernel(o, c).
template <class Kernel>
std::vector<double> winograd_magnitude(const std::vector<double>& src, std::int64_t n, std::int64_t k, std::int64_t h,
                                       std::int64_t w, std::int64_t pad, std::int64_t out_h, std::int64_t out_w,
                                       std::int64_t m, const Kernel& kernel) {
  const double at_abs[2][4] = {{1, 1, 1, 0}, {0, 1, 1, 1}};
  const std::int64_t th = (out_h + 1) / 2, tw = (out_w + 1) / 2;
  // |B^T| |d| |B| of every tile and channel, |G| |g| |G|^T of every kernel: 16 entries each
  std::vector<double> p(std::size_t(n * th * tw * k * 16)), q(std::size_t(m * k * 16));
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t t = 0; t < th * tw; ++t)
      for (std::int64_t c = 0; c < k; ++c)
        abs_input_tile([&](int r, int e) {
          const std::int64_t y = 2 * (t / tw) + r - pad, x = 2 * (t % tw) + e - pad;
          return y < 0 || y >= h || x < 0 || x >= w ? 0.0 : std::abs(src[std::size_t(((b * k + c) * h + y) * w + x)]);
        }, &p[std::size_t(((b * th * tw + t) * k + c) * 16)]);
  for (std::int64_t o = 0; o < m; ++o)
    for (std::int64_t c = 0; c < k; ++c)
      abs_kernel_tile([&](int a, int e) { return std::abs(kernel(o, c, a, e)); }, &q[std::size_t((o * k + c) * 16)]);
  std::vector<double> mag(std::size_t(n * m * out_h * out_w));
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t t = 0; t < th * tw; ++t)
      for (std::int64_t o = 0; o < m; ++o) {
        double s[16] = {};
        for (std::int64_t c = 0; c < k; ++c)
          for (int xi = 0; xi < 16; ++xi)
            s[xi] += q[std::size_t((o * k + c) * 16 + xi)] * p[std::size_t(((b * th * tw + t) * k + c) * 16 + xi)];
        const std::int64_t i0 = 2 * (t / tw), j0 = 2 * (t % tw);
        for (int a = 0; a < 2 && i0 + a < out_h; ++a)
          for (int e = 0; e < 2 && j0 + e < out_w; ++e) {
            double v = 0;
            for (int r = 0; r < 4; ++r)
              for (int f = 0; f < 4; ++f) v += at_abs[a][r] * s[4 * r + f] * at_abs[e][f];
            mag[std::size_t(((b * m + o) * out_h + i0 + a) * out_w + j0 + e)] = v;
          }
      }
  return mag;
}

/// What the error of the weight gradient as F(2x2, 3x3) is bounded by: for dw(o, c), |G|^T (sum over
/// tiles of |A| |dY| |A|^T . |B^T| |d| |B|) |G|, dY the tile's 2 x 2 output gradients of o (zero
/// past the edges), d its 4 x 4 inputs of c.
std::vector<double> winograd_weight_magnitude(const std::vector<double>& x, const std::vector<double>& dy,
                                              const Config& k) {
  const double a_abs[4][2] = {{1, 0}, {1, 1}, {1, 1}, {0, 1}};
  const double g_abs[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0, 0, 1}};
  const std::int64_t oh = k.oh(), ow = k.ow(), th = (oh + 1) / 2, tw = (ow + 1) / 2, tiles = k.n * th * tw;
  // per tile: |B^T| |d| |B| of each input channel, |A| |dY| |A|^T of each output channel
  std::vector<double> p(std::size_t(tiles * k.c * 16)), g(std::size_t(tiles * k.o * 16));
  for (std::int64_t t = 0; t < tiles; ++t) {
    const std::int64_t b = t / (th * tw), i0 = 2 * (t % (th * tw) / tw), j0 = 2 * (t % tw);
    for (std::int64_t c = 0; c < k.c; ++c)
      abs_input_tile([&](int r, int e) {
        const std::int64_t y = i0 + r - k.ph, z = j0 + e - k.pw;
        return y < 0 || y >= k.h || z < 0 || z >= k.w ? 0.0 : std::abs(x[std::size_t(((b * k.c + c) * k.h + y) * k.w + z)]);
      }, &p[std::size_t((t * k.c + c) * 16)]);
    for (std::int64_t o = 0; o < k.o; ++o) {
      double d[2][2];
      for (int r = 0; r < 2; ++r)
        for (int e = 0; e < 2; ++e)
          d[r][e] = i0 + r >= oh || j0 + e >= ow ? 0 : std::abs(dy[std::size_t(((b * k.o + o) * oh + i0 + r) * ow + j0 + e)]);
      for (int r = 0; r < 4; ++r)
        for (int e = 0; e < 4; ++e) {
          double v = 0;
          for (int a = 0; a < 2; ++a)
            for (int f = 0; f < 2; ++f) v += a_abs[r][a] * d[a][f] * a_abs[e][f];
          g[std::size_t((t * k.o + o) * 16 + 4 * r + e)] = v;
        }
    }
  }
  std::vector<double> mag(std::size_t(k.o * k.c * 9));
  for (std::int64_t o = 0; o < k.o; ++o)
    for (std::int64_t c = 0; c < k.c; ++c) {
      double s[16] = {};
      for (std::int64_t t = 0; t < tiles; ++t)
        for (int xi = 0; xi < 16; ++xi) s[xi] += g[std::size_t((t * k.o + o) * 16 + xi)] * p[std::size_t((t * k.c + c) * 16 + xi)];
      for (int a = 0; a < 3; ++a)
        for (int e = 0; e < 3; ++e) {
          double v = 0;
          for (int r = 0; r < 4; ++r)
            for (int f = 0; f < 4; ++f) v += g_abs[r][a] * s[4 * r + f] * g_abs[f][e];
          mag[std::size_t((o * k.c + c) * 9 + a * 3 + e)] = v;
        }
    }
  return mag;
}

#if !WEFT_TESTS_BF16_SCOPE
TEST_CASE("conv2d as Winograd F(2x2, 3x3): forward, input and weight gradients against a double sum, within its error bound") {
  // float 3 x 3 of stride 1 with 16 or more channels and 64 or more output tiles; padding 0, 1, 2
  // (the input gradient's 2, 1, 0); odd sizes (tiles past the edge); channels past a whole packet
  // and output channels past one panel; NCHW, channels-last, a slice, and one-image slabs
  WEFT_TEST_RNG(rng);
  const Config shapes[] = {{2, 16, 12, 12, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                           {3, 19, 11, 13, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                           {2, 24, 14, 15, 17, 3, 3, 1, 1, 0, 0, 1, 1, 1},
                           {1, 33, 15, 16, 40, 3, 3, 1, 1, 2, 2, 1, 1, 1},
                           {4, 64, 8, 8, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                           {3, 64, 9, 11, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1}};
  const double u = std::numeric_limits<float>::epsilon();
  for (const Config& k : shapes) {
    const Shape xs{k.n, k.c, k.h, k.w}, ws{k.o, k.c, 3, 3}, ys{k.n, k.o, k.oh(), k.ow()};
    const std::vector<double> x = random_values(rng, xs.numel(), false), w = random_values(rng, ws.numel(), false);
    const std::vector<double> dy = random_values(rng, ys.numel(), false);
    const Reference ref = reference(k, x, w, nullptr, dy);
    const std::vector<double> y_mag = winograd_magnitude(
        x, k.n, k.c, k.h, k.w, k.ph, k.oh(), k.ow(), k.o,
        [&](std::int64_t o, std::int64_t c, int a, int e) { return w[std::size_t(((o * k.c + c) * 3 + a) * 3 + e)]; });
    const std::vector<double> dx_mag = winograd_magnitude(
        dy, k.n, k.o, k.oh(), k.ow(), 2 - k.ph, k.h, k.w, k.c,
        [&](std::int64_t c, std::int64_t o, int a, int e) { return w[std::size_t(((o * k.c + c) * 3 + 2 - a) * 3 + 2 - e)]; });
    const std::vector<double> dw_mag = winograd_weight_magnitude(x, dy, k);
    auto abs_of = [](std::vector<double> v) {
      for (double& e : v) e = std::abs(e);
      return v;
    };
    const std::vector<double> dw_direct_mag = reference(k, abs_of(x), abs_of(w), nullptr, abs_of(dy)).dw;
    auto bound = [&](const std::vector<double>& mag, std::int64_t terms) {
      std::vector<double> b(mag.size());
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = double(terms + 10) * u * mag[i] + 1e-30;
      return b;
    };
    for (int layout : {0, 1, 2, 3}) {  // 3: NCHW, the batch in slabs of one image
      INFO(k.str(), ", layout ", layout);
      const std::int64_t slab_bytes = weft::detail::cpu::conv_slab_bytes;
      if (layout == 3) weft::detail::cpu::conv_slab_bytes = 1;
      const TensorView<float> xv = in_layout<float>(x, xs, layout % 3), wv = in_layout<float>(w, ws, 0);
      weft::set_logs("vision");
      LogCapture capture;
      const Tensor<float> y(nn::conv2d(xv, wv, k.options()));
      const std::string log = capture.text();
      capture.restore();
      weft::set_logs("");
      CHECK_MESSAGE(has(log, "Winograd F(2x2, 3x3)"), log);
      check_close("y", y, ref.y, bound(y_mag, k.c));
      const nn::ConvGradients<float> d =
          nn::conv2d_backward<float>(in_layout<float>(dy, ys, layout % 3), xv, wv, k.options());
      check_close("dx", d.dx, ref.dx, bound(dx_mag, k.o));
      if (k.c % 64 == 0)  // the weight gradient's Winograd (16 O C sums a thread within 1 MiB)
        check_close("dw", d.dweight, ref.dw, bound(dw_mag, ((k.oh() + 1) / 2) * ((k.ow() + 1) / 2) * k.n));
      else
        check_close("dw", d.dweight, ref.dw, bounds<float>(ref.dw, dw_direct_mag, k.n * k.oh() * k.ow()));
      weft::detail::cpu::conv_slab_bytes = slab_bytes;
    }
  }
}
#endif  // !WEFT_TESTS_BF16_SCOPE

/// The weight gradient of a layer whose partial sums per thread pass 1 MiB (og x k = 64 x 2304 in
/// double, 2 groups of 192 x 1728 in float and bfloat16): one product per group split by output
/// blocks rather than by positions, against the double sum.
template <class T>
void check_weight_gradient_by_blocks(const Config& k) {
  WEFT_TEST_RNG(rng);
  const bool bf16 = std::is_same_v<T, bfloat16>;
  INFO(type_name<T>(), " ", k.str());
  const Shape xs{k.n, k.c, k.h, k.w}, ws{k.o, k.c / k.groups, k.kh, k.kw}, ys{k.n, k.o, k.oh(), k.ow()};
  const std::vector<double> x = random_values(rng, xs.numel(), bf16), w = random_values(rng, ws.numel(), bf16);
  const std::vector<double> dy = random_values(rng, ys.numel(), bf16);
  const Reference ref = reference(k, x, w, nullptr, dy);
  auto abs_of = [](std::vector<double> v) {
    for (double& e : v) e = std::abs(e);
    return v;
  };
  const Reference mag = reference(k, abs_of(x), abs_of(w), nullptr, abs_of(dy));
  for (int layout : {0, 1}) {
    const TensorView<T> xv = in_layout<T>(x, xs, layout), wv = in_layout<T>(w, ws, 0);
    const nn::ConvGradients<T> d =
        nn::conv2d_backward<T>(in_layout<T>(dy, ys, layout), xv, wv, k.options(), {.input = false, .bias = false});
    check_close("dw", d.dweight, ref.dw, bounds<T>(ref.dw, mag.dw, k.n * k.oh() * k.ow()));
  }
}

TEST_CASE("conv2d weight gradient: partial sums past 1 MiB split the product by output blocks") {
#if !WEFT_TESTS_BF16_SCOPE
  check_weight_gradient_by_blocks<double>({2, 256, 5, 4, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1});
  check_weight_gradient_by_blocks<float>({1, 384, 4, 5, 384, 3, 3, 1, 1, 1, 0, 1, 1, 2});
#endif
  check_weight_gradient_by_blocks<bfloat16>({1, 384, 4, 5, 384, 3, 3, 1, 1, 1, 0, 1, 1, 2});
}

TEST_CASE("conv2d forward and backward: random configurations, both layouts, against a double sum") {
#if !WEFT_TESTS_BF16_SCOPE
  check_random_convolutions<float>(40);
  check_random_convolutions<double>(25);
#endif
  check_random_convolutions<bfloat16>(15);
  check_random_convolutions<bfloat16>(10, random_wide_config);  // even channel counts: the direct product on AVX512-BF16
#if !WEFT_TESTS_BF16_SCOPE
  check_random_convolutions<float>(10, random_wide_config);
  check_random_convolutions<double>(5, random_wide_config);
  check_random_convolutions<float>(8, random_stem_config);
#endif
  check_random_convolutions<bfloat16>(6, random_stem_config);
#if !WEFT_TESTS_BF16_SCOPE
  check_random_convolutions<double>(4, random_stem_config);
  check_random_convolutions<float>(4, random_sampled_config);
#endif
  check_random_convolutions<bfloat16>(6, random_sampled_config);
#if !WEFT_TESTS_BF16_SCOPE
  check_random_convolutions<double>(2, random_sampled_config);
#endif
}


/// conv_transpose2d's reference: y, dx, dw for x [n, c, h, w], weight [c, o / groups, kh, kw].
struct TransposeConfig {
  std::int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, oph, opw, dh, dw, groups;
  std::int64_t oh() const { return (h - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1; }
  std::int64_t ow() const { return (w - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1; }
  nn::ConvTransposeOptions options() const {
    return {.stride = {sh, sw}, .padding = {ph, pw}, .output_padding = {oph, opw}, .groups = groups, .dilation = {dh, dw}};
  }
  std::string str() const {
    return weft::detail::cat("x [", n, ", ", c, ", ", h, ", ", w, "], w [", c, ", ", o / groups, ", ", kh, ", ", kw,
                             "], stride ", sh, "x", sw, ", padding ", ph, "x", pw, ", output_padding ", oph, "x", opw,
                             ", dilation ", dh, "x", dw, ", groups ", groups);
  }
};

Reference transpose_reference(const TransposeConfig& k, const std::vector<double>& x, const std::vector<double>& w,
                              const std::vector<double>& dy) {
  const std::int64_t cg = k.c / k.groups, og = k.o / k.groups, oh = k.oh(), ow = k.ow();
  Reference r{std::vector<double>(std::size_t(k.n * k.o * oh * ow)), std::vector<double>(x.size()),
              std::vector<double>(w.size())};
  for (std::int64_t n = 0; n < k.n; ++n)
    for (std::int64_t c = 0; c < k.c; ++c)
      for (std::int64_t i = 0; i < k.h; ++i)
        for (std::int64_t j = 0; j < k.w; ++j)
          for (std::int64_t oo = 0; oo < og; ++oo)
            for (std::int64_t a = 0; a < k.kh; ++a)
              for (std::int64_t e = 0; e < k.kw; ++e) {
                const std::int64_t hh = i * k.sh - k.ph + a * k.dh, vv = j * k.sw - k.pw + e * k.dw;
                if (hh < 0 || hh >= oh || vv < 0 || vv >= ow) continue;
                const std::int64_t o = c / cg * og + oo;
                const std::int64_t xi = ((n * k.c + c) * k.h + i) * k.w + j, wi = ((c * og + oo) * k.kh + a) * k.kw + e;
                const std::int64_t yi = ((n * k.o + o) * oh + hh) * ow + vv;
                r.y[yi] += x[xi] * w[wi];
                r.dx[xi] += dy[yi] * w[wi];
                r.dw[wi] += dy[yi] * x[xi];
              }
  return r;
}

template <class T>
void check_random_transposed(int cases) {
  WEFT_TEST_RNG(rng);
  const bool bf16 = std::is_same_v<T, bfloat16>;
  for (int t = 0; t < cases;) {
    TransposeConfig k{};
    k.n = rng.integer(1, 2), k.groups = rng.integer(1, 2);
    k.c = k.groups * rng.integer(1, 3), k.o = k.groups * rng.integer(1, 3);
    k.h = rng.integer(1, 6), k.w = rng.integer(1, 6), k.kh = rng.integer(1, 4), k.kw = rng.integer(1, 4);
    k.sh = rng.integer(1, 3), k.sw = rng.integer(1, 3), k.dh = rng.integer(1, 2), k.dw = rng.integer(1, 2);
    k.ph = rng.integer(0, 2), k.pw = rng.integer(0, 2);
    k.oph = rng.integer(0, std::max(k.sh, k.dh) - 1), k.opw = rng.integer(0, std::max(k.sw, k.dw) - 1);
    if (k.oh() <= 0 || k.ow() <= 0) continue;
    ++t;
    INFO(type_name<T>(), " ", k.str());
    const Shape xs{k.n, k.c, k.h, k.w}, ws{k.c, k.o / k.groups, k.kh, k.kw}, ys{k.n, k.o, k.oh(), k.ow()};
    const std::vector<double> x = random_values(rng, xs.numel(), bf16), w = random_values(rng, ws.numel(), bf16);
    const std::vector<double> dy = random_values(rng, ys.numel(), bf16);
    const Reference ref = transpose_reference(k, x, w, dy);
    auto abs_of = [](std::vector<double> v) {
      for (double& e : v) e = std::abs(e);
      return v;
    };
    const Reference mag = transpose_reference(k, abs_of(x), abs_of(w), abs_of(dy));
    const TensorView<T> xv = in_layout<T>(x, xs, int(rng.integer(0, 2))), wv = in_layout<T>(w, ws, 0);
    const Tensor<T> y = nn::conv_transpose2d(xv, wv, k.options());
    REQUIRE(y.shape() == ys);
    const std::int64_t taps = k.c / k.groups * k.kh * k.kw;
    check_close("y", y, ref.y, bounds<T>(ref.y, mag.y, taps));
    const nn::ConvGradients<T> d =
        nn::conv_transpose2d_backward<T>(in_layout<T>(dy, ys, int(rng.integer(0, 2))), xv, wv, k.options());
    check_close("dx", d.dx, ref.dx, bounds<T>(ref.dx, mag.dx, k.o / k.groups * k.kh * k.kw));
    check_close("dw", d.dweight, ref.dw, bounds<T>(ref.dw, mag.dw, k.n * k.h * k.w));
  }
}


TEST_CASE("conv_transpose2d forward and backward: random configurations against a double sum") {
#if !WEFT_TESTS_BF16_SCOPE
  check_random_transposed<float>(25);
  check_random_transposed<double>(15);
#endif
  check_random_transposed<bfloat16>(8);
}

#if !WEFT_TESTS_BF16_SCOPE
TEST_CASE("conv1d: the width options of a 2-D convolution of height 1, against a double sum") {
  WEFT_TEST_RNG(rng);
  for (int t = 0; t < 12;) {
    Config k = random_config(rng);
    k.h = k.kh = k.sh = k.dh = 1, k.ph = 0;
    if (!k.same && k.w + 2 * k.pw < k.dw * (k.kw - 1) + 1) continue;
    ++t;
    INFO(k.str());
    const std::vector<double> x = random_values(rng, k.n * k.c * k.w, false);
    const std::vector<double> w = random_values(rng, k.o * k.c / k.groups * k.kw, false);
    const std::vector<double> b = random_values(rng, k.o, false);
    const std::vector<double> dy = random_values(rng, k.n * k.o * k.ow(), false);
    const Reference ref = reference(k, x, w, &b, dy);
    const Tensor<double> xt = weft::from_vector<double>(x, Shape{k.n, k.c, k.w});
    const Tensor<double> wt = weft::from_vector<double>(w, Shape{k.o, k.c / k.groups, k.kw});
    const Tensor<double> bt = weft::from_vector<double>(b, Shape{k.o});
    nn::ConvOptions o{.stride = k.sw, .dilation = k.dw, .groups = k.groups};
    o.padding = k.same ? nn::ConvPadding("same") : nn::ConvPadding(k.pw);
    const Tensor<double> y = nn::conv1d(xt, wt, bt, o);
    REQUIRE(y.shape() == Shape{k.n, k.o, k.ow()});
    std::vector<double> tol(ref.y.size(), 1e-12);
    check_close("y", y, ref.y, tol);
    const nn::ConvGradients<double> d =
        nn::conv2d_backward<double>(weft::from_vector<double>(dy, Shape{k.n, k.o, k.ow()}), xt, wt, o);
    REQUIRE(d.dx.shape() == xt.shape());
    check_close("dx", d.dx, ref.dx, std::vector<double>(ref.dx.size(), 1e-12));
    check_close("dw", d.dweight, ref.dw, std::vector<double>(ref.dw.size(), 1e-12));
  }
}

TEST_CASE("conv1d, conv2d, conv_transpose2d over Vars: gradients against finite differences in double") {
  WEFT_TEST_RNG(rng);
  gradcheck(rng, [](const Vars& v) { return nn::conv2d(v[0], v[1], v[2], {.stride = 2, .padding = 1, .groups = 2}); },
            {uniform_tensor(rng, {2, 4, 5, 4}, -1, 1), uniform_tensor(rng, {6, 2, 3, 2}, -1, 1),
             uniform_tensor(rng, {6}, -1, 1)});
  gradcheck(rng, [](const Vars& v) { return nn::conv2d(v[0], v[1], {.padding = "same", .dilation = {2, 1}}); },
            {uniform_tensor(rng, {1, 3, 5, 5}, -1, 1), uniform_tensor(rng, {2, 3, 2, 3}, -1, 1)});
  gradcheck(rng, [](const Vars& v) { return nn::conv1d(v[0], v[1], v[2], {.stride = 2, .padding = 2}); },
            {uniform_tensor(rng, {2, 3, 7}, -1, 1), uniform_tensor(rng, {4, 3, 3}, -1, 1), uniform_tensor(rng, {4}, -1, 1)});
  gradcheck(rng,
            [](const Vars& v) {
              return nn::conv_transpose2d(v[0], v[1], v[2], {.stride = 2, .padding = 1, .output_padding = 1});
            },
            {uniform_tensor(rng, {2, 3, 3, 4}, -1, 1), uniform_tensor(rng, {3, 2, 3, 3}, -1, 1),
             uniform_tensor(rng, {2}, -1, 1)});
  // a channels-last input as a Var (its value read in place)
  gradcheck(rng, [](const Vars& v) { return nn::conv2d(v[0] * 1.0, v[1], {.stride = {1, 2}}); },
            {uniform_tensor(rng, {2, 2, 4, 5}, -1, 1), uniform_tensor(rng, {3, 2, 2, 2}, -1, 1)});
}

TEST_CASE("conv2d_out: relu(conv2d(x, w) + b) + residual in one convolution, into a channels-last destination") {
  WEFT_TEST_RNG(rng);
  for (nn::ConvRelu relu : {nn::ConvRelu::none, nn::ConvRelu::before_residual, nn::ConvRelu::after_residual}) {
    const Config k{2, 4, 6, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1};
    const std::vector<double> x = random_values(rng, 2 * 4 * 6 * 5, false), w = random_values(rng, 6 * 4 * 9, false);
    const std::vector<double> b = random_values(rng, 6, false), res = random_values(rng, 2 * 6 * 6 * 5, false);
    const Reference ref = reference(k, x, w, &b, std::vector<double>(res.size()));
    const Shape ys{2, 6, 6, 5};
    TensorView<float> out = weft::channels_last(weft::full<float>(ys, std::nanf("")));
    const TensorView<float> xv = in_layout<float>(x, Shape{2, 4, 6, 5}, 1), wv = in_layout<float>(w, Shape{6, 4, 3, 3}, 0);
    const Tensor<float> bv = weft::from_vector<float>(std::vector<float>(b.begin(), b.end()), Shape{6});
    const TensorView<float> rv = in_layout<float>(res, ys, 0);
    nn::conv2d_out<float>(out, xv, wv, bv, {.padding = 1}, rv, relu);
    std::vector<double> want(ref.y.size()), tol(ref.y.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      double y = ref.y[i];
      if (relu == nn::ConvRelu::before_residual) y = std::max(y, 0.0);
      y += res[i];
      if (relu == nn::ConvRelu::after_residual) y = std::max(y, 0.0);
      want[i] = y;
      tol[i] = 1e-5 * (1 + std::abs(y)) * 4;
    }
    check_close("out", Tensor<float>(out), want, tol);
  }
}

TEST_CASE("convolutions: bad input names the op, the shapes and the fix") {
  const Tensor<float> x = weft::ones<float>(Shape{1, 6, 5, 5}), w = weft::ones<float>(Shape{4, 2, 3, 3});
  auto msg = error_of([&] { (void)nn::conv2d(x, w, {.groups = 4}); });
  CHECK(has(msg, "nn::conv2d: input channels 6 (x [1, 6, 5, 5]) are not divisible by groups 4"));
  msg = error_of([&] { (void)nn::conv2d(x, weft::ones<float>(Shape{4, 6, 7, 7})); });
  CHECK(has(msg, "the kernel (7x7 with dilation) is larger than the padded input (5x5)"));
  msg = error_of([&] { (void)nn::conv2d(x, weft::ones<float>(Shape{4, 6, 3, 3}), {.stride = 2, .padding = "same"}); });
  CHECK(has(msg, "padding \"same\" needs stride 1"));
  msg = error_of([&] { (void)nn::conv2d(x, weft::ones<float>(Shape{4, 4, 3, 3})); });
  CHECK(has(msg, "expects 4 input channels, but x [1, 6, 5, 5] has 6"));
  msg = error_of([&] { (void)nn::conv2d(x, weft::ones<float>(Shape{4, 6, 3, 3}), weft::ones<float>(Shape{3})); });
  CHECK(has(msg, "bias [3] does not fit weight [4, 6, 3, 3]"));
  msg = error_of([&] { (void)nn::conv2d(weft::ones<float>(Shape{6, 5, 5}), w); });
  CHECK(has(msg, "needs x [N, C, H, W] and weight [O, C/groups, kH, kW], got x [6, 5, 5]"));
  msg = error_of([&] { (void)nn::ConvPadding("full"); });
  CHECK(has(msg, "padding must be numbers, \"same\" or \"valid\", got \"full\""));
  msg = error_of([&] { (void)nn::conv_transpose2d(x, weft::ones<float>(Shape{6, 2, 3, 3}), {.stride = 2, .output_padding = 2}); });
  CHECK(has(msg, "output_padding 2x2 must be smaller than either the stride or the dilation"));
  TensorView<float> out = weft::channels_last(weft::zeros<float>(Shape{1, 4, 4, 4}));
  msg = error_of([&] { nn::conv2d_out<float>(out, x, weft::ones<float>(Shape{4, 6, 3, 3}), TensorView<const float>()); });
  CHECK(has(msg, "the destination [1, 4, 4, 4] does not match the output [1, 4, 3, 3]"));
  Tensor<float> both = weft::zeros<float>(Shape{1, 6, 5, 5});
  msg = error_of([&] { nn::conv2d_out<float>(both.view(), both, weft::ones<float>(Shape{6, 6, 1, 1}), TensorView<const float>()); });
  CHECK(has(msg, "the destination [1, 6, 5, 5] overlaps x [1, 6, 5, 5]: the convolution reads x while it writes"));
  msg = error_of([&] { nn::Conv2d<float> bad(6, 4, 3, {.groups = 4}); });
  CHECK(has(msg, "nn::Conv2d: in_channels 6 and out_channels 4 must both be divisible by groups 4"));
}

TEST_CASE("WEFT_LOGS=vision: each convolution's GEMM, the layout of its patches and its epilogue") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> x = random_contiguous<float>(rng, Shape{2, 8, 6, 6}, Domain{});
  const Tensor<float> w = random_contiguous<float>(rng, Shape{4, 8, 3, 3}, Domain{});
  const Tensor<float> b = random_contiguous<float>(rng, Shape{4}, Domain{});
  const Tensor<float> r = random_contiguous<float>(rng, Shape{2, 4, 6, 6}, Domain{});
  Tensor<float> out = weft::empty<float>(Shape{2, 4, 6, 6});
  const TensorView<float> x_last = weft::channels_last(x);
  weft::set_logs("vision");
  LogCapture capture;
  (void)Tensor<float>(nn::conv2d(x, w, b, {.padding = 1}));  // the node runs when assigned
  nn::conv2d_out<float>(out, x_last, w, b, {.padding = 1}, r, nn::ConvRelu::before_residual);
  const TensorView<float> out_last = weft::empty_channels_last<float>(Shape{2, 4, 6, 6});
  nn::conv2d_out<float>(out_last, x, w, TensorView<const float>(), {.padding = 1});
  (void)Tensor<float>(nn::conv2d(random_contiguous<float>(rng, Shape{2, 16, 6, 6}, Domain{}),
                                 random_contiguous<float>(rng, Shape{4, 16, 3, 3}, Domain{}), {.padding = 1}));
  const int threads = weft::get_num_threads();
  weft::set_num_threads(2);  // 18 chunks of 256 positions: 4 or more a thread
  (void)Tensor<float>(nn::conv2d(random_contiguous<float>(rng, Shape{2, 24, 48, 47}, Domain{}),
                                 random_contiguous<float>(rng, Shape{32, 24, 1, 1}, Domain{})));
  (void)Tensor<float>(nn::conv2d(random_contiguous<float>(rng, Shape{2, 24, 96, 94}, Domain{}),
                                 random_contiguous<float>(rng, Shape{32, 24, 1, 1}, Domain{}), {.stride = 2}));
  weft::set_num_threads(threads);
  const std::string log = capture.text();
  capture.restore();
  weft::set_logs("");
  // 8 channels of NCHW into NCHW: by output positions; into channels-last, the patches gathered
  CHECK_MESSAGE(has(log, "nn::conv2d x [2, 8, 6, 6] NCHW * w [4, 8, 3, 3] -> [2, 4, 6, 6] NCHW: 72 x 72 x 4 direct "
                         "by output positions (rows the output channels), patches read in place from runs of x's rows, "
                         "epilogue + bias\n"), log);
  CHECK_MESSAGE(has(log, "nn::conv2d x [2, 8, 6, 6] NCHW * w [4, 8, 3, 3] -> [2, 4, 6, 6] channels-last: 72 x 72 x 4 "
                         "implicit GEMM, patches channel-major\n"), log);
  CHECK_MESSAGE(has(log, "nn::conv2d x [2, 8, 6, 6] channels-last * w [4, 8, 3, 3] -> [2, 4, 6, 6] NCHW: 72 x 72 x 4 "
                         "implicit GEMM, patches tap-major from a padded channels-last copy of x (a run per tap), "
                         "epilogue + bias, relu, + residual"),
                log);
  // a 1 x 1 kernel over enough positions: a product per (image, 256 positions), x's rows as b
  CHECK_MESSAGE(has(log, "nn::conv2d x [2, 24, 48, 47] NCHW * w [32, 24, 1, 1] -> [2, 32, 48, 47] NCHW: 4512 x 24 x 32 "
                         "implicit GEMM by output positions (rows the output channels), x's rows packed as they are\n"),
                log);
  // the same of stride 2: x's sampled positions gathered into the panels
  CHECK_MESSAGE(has(log, "nn::conv2d x [2, 24, 96, 94] NCHW * w [32, 24, 1, 1] -> [2, 32, 48, 47] NCHW: 4512 x 24 x 32 "
                         "implicit GEMM by output positions (rows the output channels), x's sampled positions gathered\n"),
                log);
  // 16 channels a group: the direct product, reading the padded copy in place
  CHECK_MESSAGE(has(log, "nn::conv2d x [2, 16, 6, 6] NCHW * w [4, 16, 3, 3] -> [2, 4, 6, 6] NCHW: 72 x 144 x 4 direct, "
                         "patches read in place from a padded channels-last copy of x\n"), log);
}
#endif  // !WEFT_TESTS_BF16_SCOPE

TEST_CASE("WEFT_LOGS=vision: a bfloat16 convolution names its GEMM and its one rounding") {
  WEFT_TEST_RNG(rng);
  const Tensor<bfloat16> x = random_contiguous<bfloat16>(rng, Shape{1, 4, 5, 5}, Domain{});
  const Tensor<bfloat16> w = random_contiguous<bfloat16>(rng, Shape{2, 4, 3, 3}, Domain{});
  const Tensor<bfloat16> wide_x = random_contiguous<bfloat16>(rng, Shape{1, 16, 3, 3}, Domain{});
  const Tensor<bfloat16> wide_w = random_contiguous<bfloat16>(rng, Shape{2, 16, 1, 1}, Domain{});
  weft::set_logs("vision");
  LogCapture capture;
  (void)Tensor<bfloat16>(nn::conv2d(x, w));
  (void)Tensor<bfloat16>(nn::conv2d(wide_x, wide_w));
  const std::string log = capture.text();
  capture.restore();
  weft::set_logs("");
  const bool native = weft::detail::conv_native<bfloat16>();
  const std::string rounding = native ? weft::detail::cat(", bfloat16 products on ", weft::detail::conv_bf16_path(),
                                                          ", fp32 sums rounded once\n")
                                      : std::string(", in float, rounded once\n");
  // 4 channels by output positions: bfloat16's GEMM on patch panels copied from x's rows; in float
  // (no native kernel) the direct product reading them in place
  const std::string positions = native ? "implicit GEMM by output positions (rows the output channels), patches copied from "
                                         "runs of x's rows"
                                       : "direct by output positions (rows the output channels), patches read in place "
                                         "from runs of x's rows";
  CHECK_MESSAGE(has(log, "9 x 36 x 2 " + positions + rounding), log);
  // 16 channels of NCHW under a 1 x 1 kernel: in bfloat16 read from a channels-last copy, by the
  // direct product on AVX512-BF16 or gathered by the other native GEMMs; in float (no native
  // kernel) gathered in place (each element feeds one window: the copy does not pay)
  const std::string wide =
      !native ? " implicit GEMM, patches channel-major"
      : weft::detail::cpu::conv_direct<bfloat16>(16)
          ? " direct, patches read in place from a padded channels-last copy of x"
          : " implicit GEMM, patches tap-major from a padded channels-last copy of x (a run per tap)";
  CHECK_MESSAGE(has(log, "9 x 16 x 2" + wide + rounding), log);
}

/// Conv2d<T>::prepack gives the bits of the unpacked module (float: FMA panels; bfloat16: the
/// native bfloat16 kernel's pair panels where built, else float panels).
template <class T>
void check_prepack_bits() {
  WEFT_TEST_RNG(rng);
  auto same_bits = [](const Tensor<T>& a, const Tensor<T>& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), std::size_t(a.numel()) * sizeof(T)) == 0;
  };
  // 16 input channels: NCHW bfloat16 patches come from a channels-last copy (tap-major panels).
  // 3 x 3 of stride 1 in float: the panels hold the direct product's weight and Winograd's, the
  // call with 108 output tiles runs Winograd, the one with 9 the direct product (cpu::conv_winograd)
  struct Case {
    std::int64_t channels, out;
    nn::Size2 kernel;
    nn::ConvOptions o;
    Shape x;
  };
  for (const Case& k : {Case{6, 10, {3, 2}, {.stride = {1, 2}, .padding = 1, .groups = 2}, Shape{3, 6, 7, 9}},
                        Case{6, 10, {3, 2}, {}, Shape{3, 6, 7, 9}},
                        Case{16, 10, {3, 2}, {.padding = 1}, Shape{3, 16, 7, 9}},
                        Case{16, 20, {3, 3}, {.padding = 1}, Shape{3, 16, 12, 12}},
                        Case{16, 20, {3, 3}, {.padding = 1}, Shape{1, 16, 6, 6}}}) {
    INFO(k.x, " * ", k.kernel.h, "x", k.kernel.w);
    nn::Conv2d<T> conv(k.channels, k.out, k.kernel, k.o, true, rng.bits());
    const ad::Var<T> x(random_contiguous<T>(rng, k.x, Domain{}));
    ad::NoGrad no_grad;
    const Tensor<T> plain = conv(x).value();
    conv.prepack();
    CHECK(conv.prepacked());
    CHECK(same_bits(conv(x).value(), plain));
    // into a channels-last destination, through the panels: the same values
    TensorView<T> into = weft::channels_last(weft::full<T>(plain.shape(), T(std::nanf(""))));
    conv.forward_into(into, x.value());
    CHECK(same_bits(Tensor<T>(into), plain));
    conv.unpack();
    CHECK(!conv.prepacked());
    CHECK(same_bits(conv(x).value(), plain));
  }
}

TEST_CASE("Conv2d::prepack: the weight kept in the GEMM's panels gives bit-identical results") {
#if !WEFT_TESTS_BF16_SCOPE
  check_prepack_bits<float>();
#endif
  check_prepack_bits<bfloat16>();
}

#if !WEFT_TESTS_BF16_SCOPE
TEST_CASE("fold_batch_norm: conv2d with the folded weight and bias equals batch_norm(conv2d) in eval") {
  WEFT_TEST_RNG(rng);
  for (bool with_bias : {true, false}) {
    const Tensor<double> x = random_contiguous<double>(rng, Shape{2, 4, 6, 5}, Domain{});
    const Tensor<double> w = random_contiguous<double>(rng, Shape{6, 2, 3, 3}, Domain{});
    const Tensor<double> b = random_contiguous<double>(rng, Shape{6}, Domain{});
    const Tensor<double> mean = random_contiguous<double>(rng, Shape{6}, Domain{});
    Tensor<double> var = random_contiguous<double>(rng, Shape{6}, Domain{0.2, 3.0, false});
    const Tensor<double> gamma = random_contiguous<double>(rng, Shape{6}, Domain{});
    const Tensor<double> beta = random_contiguous<double>(rng, Shape{6}, Domain{});
    const nn::ConvOptions o{.padding = 1, .groups = 2};
    Tensor<double> mean_copy(mean);
    const Tensor<double> conv = with_bias ? nn::conv2d(x, w, b, o) : nn::conv2d(x, w, o);
    const Tensor<double> want = nn::batch_norm(conv, mean_copy.view(), var.view(), gamma.view(), beta.view(), false, 0.1, 1e-3);
    const nn::FoldedConv<double> f =
        nn::fold_batch_norm<double>(w, with_bias ? TensorView<const double>(b.view()) : TensorView<const double>(), mean,
                                    var, gamma, beta, 1e-3);
    const Tensor<double> got = nn::conv2d(x, f.weight, f.bias, o);
    // both sides round a handful of times per element in double
    CHECK(weft::allclose(got, want, 1e-12, 1e-12));
  }
  const Tensor<float> w = weft::ones<float>(Shape{4, 2, 3, 3}), c = weft::ones<float>(Shape{3});
  const std::string msg = error_of([&] {
    (void)nn::fold_batch_norm<float>(w, TensorView<const float>(), c, c, TensorView<const float>(), TensorView<const float>());
  });
  CHECK(has(msg, "nn::fold_batch_norm: running_mean must be [4] (one per output channel of the weight [4, 2, 3, 3]), got [3]"));
}

TEST_CASE("nn::fold_batch_norm of modules and nn::prepack of a model: the same outputs at inference") {
  WEFT_TEST_RNG(rng);
  nn::Conv2d<double> conv(4, 6, 3, {.padding = 1}, true, rng.bits());
  nn::BatchNorm2d<double> bn(6);
  // a few training batches give the running statistics and affine parameters some values
  for (int step = 0; step < 3; ++step) (void)bn(conv(ad::Var<double>(random_contiguous<double>(rng, Shape{3, 4, 5, 5}, Domain{}))));
  bn.weight = ad::param(random_contiguous<double>(rng, Shape{6}, Domain{}));
  bn.bias = ad::param(random_contiguous<double>(rng, Shape{6}, Domain{}));
  bn.eval();
  const ad::Var<double> x(random_contiguous<double>(rng, Shape{2, 4, 5, 5}, Domain{}));
  ad::NoGrad no_grad;
  const Tensor<double> want = bn(conv(x)).value();
  nn::Conv2d<double> folded = nn::fold_batch_norm(conv, bn);
  CHECK(weft::allclose(folded(x).value(), want, 1e-12, 1e-12));

  nn::Sequential<double> net(nn::Conv2d<double>(4, 8, 3, {.padding = 1}, true, rng.bits()),
                             nn::Conv2d<double>(8, 3, 1, {}, false, rng.bits()));
  const Tensor<double> before = net(x).value();
  nn::prepack(net);
  const Tensor<double> packed = net(x).value();
  CHECK(std::memcmp(packed.data(), before.data(), std::size_t(before.numel()) * sizeof(double)) == 0);
  nn::unpack(net);
}
#endif  // !WEFT_TESTS_BF16_SCOPE

}  // namespace conv_test
