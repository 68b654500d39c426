// SPDX-License-Identifier: MIT
/// @file The double-precision interpreter of generated expression trees (tests/gen/make_expr_trees.py)
/// with a running forward error bound, and the harness that checks a tree evaluated by weft: as
/// `y = e` and as `fuse(assign(y1, e), assign(y2, e))`.
///
/// Error model. Each node carries v (the exact value: every operation exact, except that cast<U>
/// rounds to U as weft does) and e, a bound on |weft's value - v|. weft computes a node in its
/// compute type C (float for 16-bit floats and for integer inputs of float-valued ops, double for
/// float64, exact integers otherwise) without rounding intermediates to 16 bits. With u the unit
/// roundoff of C (2^-24 float, 2^-53 double, 0 for integer and bool arithmetic):
///   x +- y : e = ex + ey + u |v|                       (one correctly rounded operation)
///   x * y  : e = |x| ey + |y| ex + ex ey + u |v|
///   x / y  : e = (ex + |v| ey) / (|y| - ey) + u |v|      (generated divisors stay >= 0.25 away from 0)
///   f(x)   : e = max |f'| over [x - ex, x + ex] * ex + 8 u s_f
///            (8 u = 4 ulp for the SIMD / libm functions, see unary_suite.hpp; s_f = |f(x)|, and
///            |f(x)| + |x| for gelu, whose 1 + erf(x / sqrt 2) cancels for x < 0; bfloat16's exp,
///            sigmoid, tanh and silu: 8 u = 2^-14, kUbf16Forms)
///   min, max, abs, relu, clamp: Lipschitz 1, e = the largest operand error
///   cast<U>: v' = U(v), e' = the largest distance from v' to U(v +- e) (rounding is monotonic);
///            to an integer or bool the result is exact unless v +- e straddle a boundary.
/// The reference itself runs in double: 4 * 2^-53 |v| per node is added for its own rounding.
/// A comparison, sign(), or a cast to integer / bool whose operands are within their error bound
/// of the decision boundary cannot be decided: the element is skipped (counted, and bounded).
/// The store to the output dtype: exact for integer / bool, e for float32 / float64, and e plus
/// half an ulp of the output for float16 / bfloat16. The check allows 1.25 e (the margin covers
/// the first-order treatment of f' on tiny intervals).
#pragma once

#include "pointwise_check.hpp"

namespace weft_test::rt {

/// A node of the reference: value, error bound, and whether it is decided at all.
struct RV {
  double v = 0;
  double e = 0;
  bool ok = true;
};

inline constexpr double kUf = 0x1p-24;  // unit roundoff of float
inline constexpr double kUd = 0x1p-53;  // unit roundoff of double
inline constexpr double kRef = 4 * 0x1p-53;
inline constexpr double kMath = 8;  // transcendental functions: 4 ulp = 8 u
/// The u of bfloat16's exp, sigmoid, tanh and silu packets (backend/cpu/simd/bf16_math.hpp): their
/// bound 2^-14 relative is kMath u.
inline constexpr double kUbf16Forms = 0x1p-14 / kMath;

inline RV leaf(double x) { return {x, 0, true}; }
inline RV num(double c) { return {c, 0, true}; }

/// A node computed in floating point (u > 0): its error plus the reference's own rounding. Integer
/// and bool arithmetic (u = 0) is exact in weft and in the double reference alike.
inline RV make(double v, double e, bool ok, double u = 1) { return {v, u > 0 ? e + kRef * std::fabs(v) : e, ok}; }

/// + - * / are correctly rounded: on exact operands whose exact result is representable in the
/// compute type, weft's result IS v (e = 0). For float the double reference's v is that result
/// (a float product is exact in double; a sum or quotient rounded in double that lands on a float
/// is the nearest float to the exact value, since float midpoints are far from floats); for
/// double both sides round the same exact value once.
inline bool exact_result(const RV& a, const RV& b, double v, double u) {
  return a.e == 0 && b.e == 0 && (u == kUd || (u == kUf && double(float(v)) == v));
}

inline RV add(RV a, RV b, double u) {
  double v = a.v + b.v;
  if (exact_result(a, b, v, u)) return {v, 0, a.ok && b.ok};
  return make(v, a.e + b.e + u * std::fabs(v), a.ok && b.ok, u);
}
inline RV sub(RV a, RV b, double u) {
  double v = a.v - b.v;
  if (exact_result(a, b, v, u)) return {v, 0, a.ok && b.ok};
  return make(v, a.e + b.e + u * std::fabs(v), a.ok && b.ok, u);
}
inline RV mul(RV a, RV b, double u) {
  double v = a.v * b.v;
  if (exact_result(a, b, v, u)) return {v, 0, a.ok && b.ok};
  double e = std::fabs(a.v) * b.e + std::fabs(b.v) * a.e + a.e * b.e;
  return make(v, e + u * (std::fabs(v) + e), a.ok && b.ok, u);
}
inline RV div(RV a, RV b, double u) {
  double v = a.v / b.v;
  double margin = std::fabs(b.v) - b.e;
  if (margin <= 0) return {v, 0, false};
  if (exact_result(a, b, v, u)) return {v, 0, a.ok && b.ok};
  double e = (a.e + std::fabs(v) * b.e) / margin;
  return make(v, e + u * (std::fabs(v) + e), a.ok && b.ok, u);
}
inline RV neg(RV a) { return {-a.v, a.e, a.ok}; }
inline RV abs(RV a) { return {std::fabs(a.v), a.e, a.ok}; }
inline RV relu(RV a) { return {std::max(a.v, 0.0), a.e, a.ok}; }
inline RV maximum(RV a, RV b) { return {std::max(a.v, b.v), std::max(a.e, b.e), a.ok && b.ok}; }
inline RV minimum(RV a, RV b) { return {std::min(a.v, b.v), std::max(a.e, b.e), a.ok && b.ok}; }
inline RV clamp(RV x, RV lo, RV hi) {
  return {std::min(std::max(x.v, lo.v), hi.v), std::max({x.e, lo.e, hi.e}), x.ok && lo.ok && hi.ok};
}
inline RV square(RV a, double u) { return mul(a, a, u); }
inline RV sign(RV a) {
  if (a.e > 0 && std::fabs(a.v) <= a.e) return {0, 0, false};
  return {double((a.v > 0) - (a.v < 0)), 0, a.ok};
}
/// Bool arithmetic (or, and, max, min of 0/1 values) reads the result as != 0.
inline RV as_bool(RV a) { return {a.v != 0 ? 1.0 : 0.0, 0, a.ok}; }

/// f(x) with |f'| bounded by max(|f'(x - e)|, |f'(x)|, |f'(x + e)|) (f' monotonic on the tiny interval).
template <class F, class D>
RV apply(RV a, double u, F f, D df, double extra_scale = 0) {
  double v = f(a.v);
  double slope = std::max({std::fabs(df(a.v)), std::fabs(df(a.v - a.e)), std::fabs(df(a.v + a.e))});
  return make(v, slope * a.e + kMath * u * (std::fabs(v) + extra_scale), a.ok);
}

inline double sigm(double x) { return 1 / (1 + std::exp(-x)); }
inline double gelu_f(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
inline double gelu_df(double x) { return 0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-x * x / 2) / std::sqrt(2 * 3.14159265358979323846); }

inline RV exp(RV a, double u) { return apply(a, u, [](double x) { return std::exp(x); }, [](double x) { return std::exp(x); }); }
inline RV expm1(RV a, double u) { return apply(a, u, [](double x) { return std::expm1(x); }, [](double x) { return std::exp(x); }); }
inline RV log(RV a, double u) { return apply(a, u, [](double x) { return std::log(x); }, [](double x) { return 1 / x; }); }
inline RV log1p(RV a, double u) { return apply(a, u, [](double x) { return std::log1p(x); }, [](double x) { return 1 / (1 + x); }); }
inline RV sqrt(RV a, double u) {
  return apply(a, u, [](double x) { return std::sqrt(x); }, [](double x) { return 0.5 / std::sqrt(x); });
}
inline RV rsqrt(RV a, double u) {
  return apply(a, u, [](double x) { return 1 / std::sqrt(x); }, [](double x) { return 0.5 / (x * std::sqrt(x)); });
}
inline RV sin(RV a, double u) { return apply(a, u, [](double x) { return std::sin(x); }, [](double x) { return std::cos(x); }); }
inline RV cos(RV a, double u) { return apply(a, u, [](double x) { return std::cos(x); }, [](double x) { return std::sin(x); }); }
inline RV tanh(RV a, double u) {
  return apply(a, u, [](double x) { return std::tanh(x); }, [](double x) { return 1 - std::tanh(x) * std::tanh(x); });
}
inline RV sigmoid(RV a, double u) {
  return apply(a, u, [](double x) { return sigm(x); }, [](double x) { return sigm(x) * (1 - sigm(x)); });
}
inline RV silu(RV a, double u) {
  return apply(a, u, [](double x) { return x * sigm(x); }, [](double x) { return sigm(x) * (1 + x * (1 - sigm(x))); });
}
inline RV gelu(RV a, double u) { return apply(a, u, gelu_f, gelu_df, std::fabs(a.v) + a.e); }
inline RV erf(RV a, double u) {
  return apply(a, u, [](double x) { return std::erf(x); },
               [](double x) { return 2 / std::sqrt(3.14159265358979323846) * std::exp(-x * x); });
}
inline RV reciprocal(RV a, double u) {
  if (std::fabs(a.v) <= a.e) return {0, 0, false};
  return apply(a, u, [](double x) { return 1 / x; }, [](double x) { return 1 / (x * x); });
}
/// pow(a, b), a > 0 (generated bases are kept >= 0.25) or integer arithmetic (u = 0, exact).
inline RV pow(RV a, RV b, double u) {
  double v = std::pow(a.v, b.v);
  if (u == 0) return {v, 0, a.ok && b.ok};  // integer powers: exact
  // C's special cases, which weft's pow keeps (simd.hpp): pow(x, +-0) = 1 and pow(1, y) = 1 exactly.
  if ((b.e == 0 && b.v == 0) || (a.e == 0 && a.v == 1)) return {1.0, 0, a.ok && b.ok};
  double lo = std::max(a.v - a.e, 1e-300), hi = a.v + a.e;
  double da = std::max(std::fabs(b.v * std::pow(lo, b.v - 1)), std::fabs(b.v * std::pow(hi, b.v - 1))) * (1 + b.e);
  double vmax = std::max({std::pow(lo, b.v - b.e), std::pow(lo, b.v + b.e), std::pow(hi, b.v - b.e), std::pow(hi, b.v + b.e)});
  double db = vmax * std::max(std::fabs(std::log(lo)), std::fabs(std::log(hi)));
  return make(v, da * a.e + db * b.e + kMath * u * std::fabs(v), a.ok && b.ok);
}
/// lerp(a, b, w) = a + w (b - a): three roundings (sub, mul, add).
inline RV lerp(RV a, RV b, RV w, double u) {
  double d = b.v - a.v, v = a.v + w.v * d;
  double ed = a.e + b.e;
  double e = a.e + std::fabs(w.v) * ed + std::fabs(d) * w.e + w.e * ed;
  return make(v, e + u * (std::fabs(d) * std::fabs(w.v) + std::fabs(w.v * d) + std::fabs(v) + 3 * e), a.ok && b.ok && w.ok);
}

// Comparisons: decided when the operands are further apart than their error bounds.
inline RV compare(RV a, RV b, int op) {
  double d = a.v - b.v, eb = a.e + b.e;
  bool ok = a.ok && b.ok;
  bool certain = eb == 0 || std::fabs(d) > eb;
  bool r = op == 0 ? d < 0 : op == 1 ? d <= 0 : op == 2 ? d > 0 : op == 3 ? d >= 0 : op == 4 ? d == 0 : d != 0;
  return {r ? 1.0 : 0.0, 0, ok && certain};
}
inline RV lt(RV a, RV b) { return compare(a, b, 0); }
inline RV le(RV a, RV b) { return compare(a, b, 1); }
inline RV gt(RV a, RV b) { return compare(a, b, 2); }
inline RV ge(RV a, RV b) { return compare(a, b, 3); }
inline RV eq(RV a, RV b) { return compare(a, b, 4); }
inline RV ne(RV a, RV b) { return compare(a, b, 5); }

inline RV where(RV c, RV a, RV b) {
  RV r = c.v != 0 ? a : b;
  r.ok = r.ok && c.ok;
  return r;
}

enum class To { half, bfloat16, float32, float64 };
inline double round_as(double x, To t) {
  switch (t) {
    case To::half: return round_half(x);
    case To::bfloat16: return round_bfloat16(x);
    case To::float32: return round_float(x);
    default: return x;
  }
}
/// cast to a floating type: rounding is monotonic, so weft's value lies between U(v - e) and U(v + e).
inline RV cast_float(RV a, To t) {
  double v = round_as(a.v, t);
  double e = std::max(std::fabs(round_as(a.v - a.e, t) - v), std::fabs(round_as(a.v + a.e, t) - v));
  return {v, e, a.ok};
}
inline RV cast_int(RV a) {
  double v = std::trunc(a.v);
  bool ok = std::trunc(a.v - a.e) == v && std::trunc(a.v + a.e) == v;
  return {v, 0, a.ok && ok};
}
inline RV cast_bool(RV a) {
  bool ok = a.e == 0 || std::fabs(a.v) > a.e;
  return {a.v != 0 ? 1.0 : 0.0, 0, a.ok && ok};
}

/// The stored element: what the output tensor must hold.
inline Expect store(RV r, To t) {
  if (!r.ok) return {0, 0, true};
  if (std::isnan(r.v) || std::isinf(r.v)) return {r.v, 0, false};
  double e = 1.25 * r.e;
  if (t == To::half || t == To::bfloat16) {
    if (r.e == 0) return {round_as(r.v, t), 0, false};
    double ulp = t == To::half ? ulp_of<half>(std::fabs(r.v) + e) : ulp_of<bfloat16>(std::fabs(r.v) + e);
    return {r.v, e + 0.5 * ulp, false};
  }
  return {r.v, e, false};
}
inline Expect store_exact(RV r) {
  if (!r.ok) return {0, 0, true};
  return {r.v, 0, false};
}

}  // namespace weft_test::rt

namespace weft_test {

/// Reference of one tree: the output element from the inputs' values at that element.
using TreeRef = Expect (*)(const double* inputs);

/// One generated tree: random shapes (rank 0..4, sometimes large), random layouts of inputs and
/// destinations, fresh values per run. Only check() depends on the tree's type; everything else
/// is compiled once, in tree_check.cpp (a generated unit compiles its kernels and little more).
class TreeRun {
 public:
  TreeRun(const char* name, std::uint64_t salt, bool large);

  /// A new input of dtype T: a random shape that broadcasts to the output shape, a random layout,
  /// values from the generator's domain for T.
  template <class T>
  TensorView<T> input();

  /// y = e into a poisoned destination of a random layout, checked against the reference; with
  /// kFused also fuse(assign(y1, e), assign(y2, e)): every Map node is shared, the second
  /// statement reads the first one's cached values (a second kernel, so only some trees do it).
  template <class Out, bool kFused = false, class E>
  void check(const E& e, TreeRef ref) {
    static_assert(std::is_same_v<typename E::value_type, Out>, "the generator's dtype rules disagree with weft's");
    expect(ref);
    TensorView<Out> y = destination<Out>(0);
    y = e;
    verify(y, 0, "y = e");
    if constexpr (kFused) {
      TensorView<Out> y1 = destination<Out>(1), y2 = destination<Out>(2);
      weft::fuse(weft::assign(y1, e), weft::assign(y2, e));
      verify(y1, 1, "fused statement 1");
      verify(y2, 2, "fused statement 2");
    }
  }

 private:
  /// The destination shape (sometimes larger than the expression's: PyTorch's copy_ rule) and
  /// the expected elements.
  void expect(TreeRef ref);
  /// A poisoned destination of a random layout; slot keeps its layout's name for verify().
  template <class Out>
  TensorView<Out> destination(int slot);
  template <class Out>
  void verify(const weft::TensorBase<Out>& y, int slot, const char* what);

  std::string name_;
  Rng rng_;
  Shape out_, dst_;
  std::vector<Shape> shapes_;
  std::vector<std::function<std::vector<double>(const Shape&)>> readers_;
  std::vector<Expect> want_;
  /// How many different values want_ holds (counted up to kVariedValues, tree_check.cpp).
  std::size_t distinct_values_ = 0;
  std::string desc_;
  const char* layouts_[3] = {};
};

#define WEFT_TEST_TREE_TEMPLATES(EXT, T)                                   \
  EXT template TensorView<T> TreeRun::input<T>();                          \
  EXT template TensorView<T> TreeRun::destination<T>(int);                 \
  EXT template void TreeRun::verify<T>(const weft::TensorBase<T>&, int, const char*);
#if !defined(WEFT_TEST_SUPPORT_DEFINITIONS)
WEFT_TEST_FOR_EACH_DTYPE(WEFT_TEST_TREE_TEMPLATES, extern)
#endif

}  // namespace weft_test
