// SPDX-License-Identifier: MIT
/// @file core: every pointwise op's result dtype over every operand dtype, against PyTorch. The rows
/// below are torch's answers (tests/golden/make_dtype_rules.py asked torch 2.15 on CPU tensors and
/// wrote them); each is checked at compile time, so a wrong dtype fails the build of this file.
///
/// A row: ROW(Op, (leading operands), one cell per last operand). Operands: tensors B8 U8 I8 I16
/// I32 I64 F16 BF16 F32 F64 and numbers bool int double (C++ numbers are wrapped numbers, as Python
/// scalars in torch). Cells: the result dtype (b8 u8 i8 i16 i32 i64 f16 bf16 f32 f64), `no` where torch
/// refuses the dtypes, `na` where no operand is a tensor (not a weft expression).
///
/// Refusals are static_asserts inside the expression (expr/nodes.hpp, detail::refusal: one line
/// naming the op and the fix), which a requires-expression cannot see; a `no` cell checks the
/// refusal's condition, detail::refusal<Op, nodes...>::value, which is what that static_assert
/// tests. A cell with a dtype instantiates the expression, so a refusal there fails the build too.
///
/// Regenerate the rows: python3 tests/golden/make_dtype_rules.py --write (--check compares them).
#include <doctest/doctest.h>

#include <weft/ops/factories.hpp>
#include <weft/ops/fuse.hpp>
#include <weft/nn/gelu.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

namespace functors = weft::functors;
// Operands: tensors of each dtype (the numbers are the C++ types bool, int, double).
using B8 = weft::Tensor<bool>;
using U8 = weft::Tensor<std::uint8_t>;
using I8 = weft::Tensor<std::int8_t>;
using I16 = weft::Tensor<std::int16_t>;
using I32 = weft::Tensor<std::int32_t>;
using I64 = weft::Tensor<std::int64_t>;
using F16 = weft::Tensor<weft::half>;
using BF16 = weft::Tensor<weft::bfloat16>;
using F32 = weft::Tensor<float>;
using F64 = weft::Tensor<double>;
// Cells: result dtypes, and the two markers.
using b8 = bool;
using u8 = std::uint8_t;
using i8 = std::int8_t;
using i16 = std::int16_t;
using i32 = std::int32_t;
using i64 = std::int64_t;
using f16 = weft::half;
using bf16 = weft::bfloat16;
using f32 = float;
using f64 = double;
struct no {};  // torch refuses: weft must not compile it
struct na {};  // no tensor operand

/// The public builder of each op functor.
template <class Op>
struct api;
#define API(Op, params, expr)                   \
  template <>                                   \
  struct api<functors::Op> {                         \
    static auto f params -> decltype(expr);     \
  };
API(Neg, (const auto& x), -x)
API(Abs, (const auto& x), weft::abs(x))
API(Relu, (const auto& x), weft::relu(x))
API(Square, (const auto& x), weft::square(x))
API(Sign, (const auto& x), weft::sign(x))
API(Exp, (const auto& x), weft::exp(x))
API(Log, (const auto& x), weft::log(x))
API(Log1p, (const auto& x), weft::log1p(x))
API(Expm1, (const auto& x), weft::expm1(x))
API(Sqrt, (const auto& x), weft::sqrt(x))
API(Rsqrt, (const auto& x), weft::rsqrt(x))
API(Sin, (const auto& x), weft::sin(x))
API(Cos, (const auto& x), weft::cos(x))
API(Tanh, (const auto& x), weft::tanh(x))
API(Sigmoid, (const auto& x), weft::sigmoid(x))
API(Gelu, (const auto& x), weft::gelu(x))
API(GeluTanh, (const auto& x), weft::gelu_tanh(x))
API(Silu, (const auto& x), weft::silu(x))
API(Erf, (const auto& x), weft::erf(x))
API(Reciprocal, (const auto& x), weft::reciprocal(x))
API(Floor, (const auto& x), weft::floor(x))
API(Ceil, (const auto& x), weft::ceil(x))
API(Trunc, (const auto& x), weft::trunc(x))
API(Round, (const auto& x), weft::round(x))
API(IsNan, (const auto& x), weft::isnan(x))
API(IsInf, (const auto& x), weft::isinf(x))
API(IsFinite, (const auto& x), weft::isfinite(x))
API(LogicalNot, (const auto& x), weft::logical_not(x))
API(Add, (const auto& a, const auto& b), a + b)
API(Sub, (const auto& a, const auto& b), a - b)
API(Mul, (const auto& a, const auto& b), a * b)
API(Div, (const auto& a, const auto& b), a / b)
API(Pow, (const auto& a, const auto& b), weft::pow(a, b))
API(Maximum, (const auto& a, const auto& b), weft::maximum(a, b))
API(Minimum, (const auto& a, const auto& b), weft::minimum(a, b))
API(Less, (const auto& a, const auto& b), a < b)
API(LessEqual, (const auto& a, const auto& b), a <= b)
API(Greater, (const auto& a, const auto& b), a > b)
API(GreaterEqual, (const auto& a, const auto& b), a >= b)
API(Equal, (const auto& a, const auto& b), a == b)
API(NotEqual, (const auto& a, const auto& b), a != b)
API(Fmod, (const auto& a, const auto& b), weft::fmod(a, b))
API(Remainder, (const auto& a, const auto& b), weft::remainder(a, b))
API(LogicalAnd, (const auto& a, const auto& b), weft::logical_and(a, b))
API(LogicalOr, (const auto& a, const auto& b), weft::logical_or(a, b))
API(LogicalXor, (const auto& a, const auto& b), weft::logical_xor(a, b))
API(GeluBackward, (const auto& dy, const auto& x), weft::nn::gelu_backward(dy, x))
API(GeluTanhBackward, (const auto& dy, const auto& x), weft::nn::gelu_tanh_backward(dy, x))
API(Clamp, (const auto& x, const auto& lo, const auto& hi), weft::clamp(x, lo, hi))
API(Where, (const auto& c, const auto& a, const auto& b), weft::where(c, a, b))
API(Lerp, (const auto& a, const auto& b, const auto& w), weft::lerp(a, b, w))
#undef API

/// One cell: Op over operands Xs gives Want. A failure names Op, Want and Xs in the
/// instantiation note above it, and the dtype weft gave in the is_same_v.
template <class Op, class Want, class... Xs>
constexpr bool cell() {
  if constexpr (std::is_same_v<Want, no>) {
    static_assert(weft::detail::refusal<Op, weft::detail::expr_t<Xs>...>::value, "torch refuses these dtypes, weft does not");
  } else if constexpr (!std::is_same_v<Want, na>) {
    using Got = typename decltype(api<Op>::f(std::declval<const Xs&>()...))::value_type;
    static_assert(std::is_same_v<Got, Want>, "weft's result dtype differs from torch's");
  }
  return true;
}

template <class... Ts>
struct list {};
using TensorColumns = list<B8, U8, I8, I16, I32, I64, F16, BF16, F32, F64>;                // unary ops
using Columns = list<B8, U8, I8, I16, I32, I64, F16, BF16, F32, F64, bool, int, double>;  // the last operand of the others

template <class Op, class Lead, class Cols, class Wants>
struct row_check;
template <class Op, class... Lead, class... Cols, class... Wants>
struct row_check<Op, list<Lead...>, list<Cols...>, list<Wants...>> {
  static_assert(sizeof...(Cols) == sizeof...(Wants), "a row has one cell per column");
  static constexpr bool value = (cell<Op, Wants, Lead..., Cols>() && ...);
};

/// ROW(Op, (leading operands), cells...): the cells are Op(leading..., column) for each column.
template <class Op, class... Lead>
struct row {
  template <class... Wants>
  static constexpr bool gives() {
    return row_check<Op, list<Lead...>, std::conditional_t<sizeof...(Lead) == 0, TensorColumns, Columns>,
                     list<Wants...>>::value;
  }
};
#define ROW(Op, lead, ...) static_assert(row<functors::Op WEFT_COMMA_LEAD lead>::gives<__VA_ARGS__>())
#define WEFT_COMMA_LEAD(...) __VA_OPT__(, ) __VA_ARGS__

// BEGIN rows generated by tests/golden/make_dtype_rules.py --write
// unary ops: x =           B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64
ROW(Neg, (),                no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64);
ROW(Abs, (),                no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64);
ROW(Relu, (),               no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64);
ROW(Square, (),             i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64);
ROW(Sign, (),               b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64);
ROW(Exp, (),                f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Log, (),                f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Log1p, (),              f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Expm1, (),              f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Sqrt, (),               f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Rsqrt, (),              f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Sin, (),                f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Cos, (),                f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Tanh, (),               f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Sigmoid, (),            f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Gelu, (),               no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64);
ROW(GeluTanh, (),           no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64);
ROW(Silu, (),               no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64);
ROW(Erf, (),                f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Reciprocal, (),         f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64);
ROW(Floor, (),              no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64);
ROW(Ceil, (),               no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64);
ROW(Trunc, (),              no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64);
ROW(Round, (),              no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64);
ROW(IsNan, (),              b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(IsInf, (),              b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(IsFinite, (),           b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalNot, (),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Add, (B8),              b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  b8,   i64,  f32);
ROW(Add, (U8),              u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Add, (I8),              i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Add, (I16),             i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Add, (I32),             i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Add, (I64),             i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Add, (F16),             f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Add, (BF16),            bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Add, (F32),             f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Add, (F64),             f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Add, (bool),            b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Add, (int),             i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Add, (double),          f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Sub, (B8),              no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Sub, (U8),              no,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  no,   u8,   f32);
ROW(Sub, (I8),              no,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  no,   i8,   f32);
ROW(Sub, (I16),             no,   i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  no,   i16,  f32);
ROW(Sub, (I32),             no,   i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  no,   i32,  f32);
ROW(Sub, (I64),             no,   i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  no,   i64,  f32);
ROW(Sub, (F16),             no,   f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  no,   f16,  f16);
ROW(Sub, (BF16),            no,   bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  no,   bf16, bf16);
ROW(Sub, (F32),             no,   f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  no,   f32,  f32);
ROW(Sub, (F64),             no,   f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  no,   f64,  f64);
ROW(Sub, (bool),            no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Sub, (int),             no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Sub, (double),          no,   f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Mul, (B8),              b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  b8,   i64,  f32);
ROW(Mul, (U8),              u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Mul, (I8),              i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Mul, (I16),             i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Mul, (I32),             i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Mul, (I64),             i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Mul, (F16),             f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Mul, (BF16),            bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Mul, (F32),             f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Mul, (F64),             f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Mul, (bool),            b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Mul, (int),             i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Mul, (double),          f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Div, (B8),              f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Div, (U8),              f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Div, (I8),              f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Div, (I16),             f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Div, (I32),             f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Div, (I64),             f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Div, (F16),             f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Div, (BF16),            bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Div, (F32),             f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Div, (F64),             f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Div, (bool),            f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Div, (int),             f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Div, (double),          f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Pow, (B8),              no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  b8,   i64,  f32);
ROW(Pow, (U8),              u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Pow, (I8),              i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Pow, (I16),             i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Pow, (I32),             i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Pow, (I64),             i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Pow, (F16),             f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Pow, (BF16),            bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Pow, (F32),             f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Pow, (F64),             f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Pow, (bool),            no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Pow, (int),             i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Pow, (double),          f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Maximum, (B8),          b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  b8,   i64,  f32);
ROW(Maximum, (U8),          u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Maximum, (I8),          i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Maximum, (I16),         i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Maximum, (I32),         i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Maximum, (I64),         i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Maximum, (F16),         f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Maximum, (BF16),        bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Maximum, (F32),         f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Maximum, (F64),         f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Maximum, (bool),        b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Maximum, (int),         i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Maximum, (double),      f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Minimum, (B8),          b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  b8,   i64,  f32);
ROW(Minimum, (U8),          u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Minimum, (I8),          i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Minimum, (I16),         i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Minimum, (I32),         i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Minimum, (I64),         i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Minimum, (F16),         f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Minimum, (BF16),        bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Minimum, (F32),         f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Minimum, (F64),         f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Minimum, (bool),        b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Minimum, (int),         i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Minimum, (double),      f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Less, (B8),             b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Less, (U8),             b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Less, (I8),             b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Less, (I16),            b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Less, (I32),            b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Less, (I64),            b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Less, (F16),            b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Less, (BF16),           b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Less, (F32),            b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Less, (F64),            b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Less, (bool),           b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(Less, (int),            b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(Less, (double),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(LessEqual, (B8),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LessEqual, (U8),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LessEqual, (I8),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LessEqual, (I16),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LessEqual, (I32),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LessEqual, (I64),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LessEqual, (F16),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LessEqual, (BF16),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LessEqual, (F32),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LessEqual, (F64),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LessEqual, (bool),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(LessEqual, (int),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(LessEqual, (double),    b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Greater, (B8),          b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Greater, (U8),          b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Greater, (I8),          b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Greater, (I16),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Greater, (I32),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Greater, (I64),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Greater, (F16),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Greater, (BF16),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Greater, (F32),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Greater, (F64),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Greater, (bool),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(Greater, (int),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(Greater, (double),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(GreaterEqual, (B8),     b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(GreaterEqual, (U8),     b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(GreaterEqual, (I8),     b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(GreaterEqual, (I16),    b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(GreaterEqual, (I32),    b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(GreaterEqual, (I64),    b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(GreaterEqual, (F16),    b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(GreaterEqual, (BF16),   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(GreaterEqual, (F32),    b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(GreaterEqual, (F64),    b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(GreaterEqual, (bool),   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(GreaterEqual, (int),    b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(GreaterEqual, (double), b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Equal, (B8),            b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Equal, (U8),            b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Equal, (I8),            b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Equal, (I16),           b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Equal, (I32),           b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Equal, (I64),           b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Equal, (F16),           b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Equal, (BF16),          b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Equal, (F32),           b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Equal, (F64),           b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(Equal, (bool),          b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(Equal, (int),           b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(Equal, (double),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(NotEqual, (B8),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(NotEqual, (U8),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(NotEqual, (I8),         b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(NotEqual, (I16),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(NotEqual, (I32),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(NotEqual, (I64),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(NotEqual, (F16),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(NotEqual, (BF16),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(NotEqual, (F32),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(NotEqual, (F64),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(NotEqual, (bool),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(NotEqual, (int),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(NotEqual, (double),     b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Fmod, (B8),             no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  no,   i64,  f32);
ROW(Fmod, (U8),             u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Fmod, (I8),             i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Fmod, (I16),            i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Fmod, (I32),            i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Fmod, (I64),            i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Fmod, (F16),            f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Fmod, (BF16),           bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Fmod, (F32),            f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Fmod, (F64),            f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Fmod, (bool),           no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Fmod, (int),            i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Fmod, (double),         f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Remainder, (B8),        no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  no,   i64,  f32);
ROW(Remainder, (U8),        u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Remainder, (I8),        i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Remainder, (I16),       i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Remainder, (I32),       i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Remainder, (I64),       i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Remainder, (F16),       f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Remainder, (BF16),      bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Remainder, (F32),       f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Remainder, (F64),       f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Remainder, (bool),      no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Remainder, (int),       i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Remainder, (double),    f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(LogicalAnd, (B8),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalAnd, (U8),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalAnd, (I8),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalAnd, (I16),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalAnd, (I32),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalAnd, (I64),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalAnd, (F16),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalAnd, (BF16),     b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalAnd, (F32),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalAnd, (F64),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalAnd, (bool),     b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(LogicalAnd, (int),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(LogicalAnd, (double),   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(LogicalOr, (B8),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalOr, (U8),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalOr, (I8),        b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalOr, (I16),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalOr, (I32),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalOr, (I64),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalOr, (F16),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalOr, (BF16),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalOr, (F32),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalOr, (F64),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalOr, (bool),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(LogicalOr, (int),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(LogicalOr, (double),    b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(LogicalXor, (B8),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalXor, (U8),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalXor, (I8),       b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalXor, (I16),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalXor, (I32),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalXor, (I64),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalXor, (F16),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalXor, (BF16),     b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalXor, (F32),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalXor, (F64),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8);
ROW(LogicalXor, (bool),     b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(LogicalXor, (int),      b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);
ROW(LogicalXor, (double),   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   b8,   na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(GeluBackward, (B8),     no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluBackward, (U8),     no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluBackward, (I8),     no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluBackward, (I16),    no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluBackward, (I32),    no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluBackward, (I64),    no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluBackward, (F16),    f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(GeluBackward, (BF16),   bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(GeluBackward, (F32),    f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(GeluBackward, (F64),    f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(GeluBackward, (bool),   no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  na,   na,   na);
ROW(GeluBackward, (int),    no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  na,   na,   na);
ROW(GeluBackward, (double), f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// a; b =                   B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(GeluTanhBackward, (B8), no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluTanhBackward, (U8), no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluTanhBackward, (I8), no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluTanhBackward, (I16), no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluTanhBackward, (I32), no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluTanhBackward, (I64), no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  no,   no,   f32);
ROW(GeluTanhBackward, (F16), f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(GeluTanhBackward, (BF16), bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(GeluTanhBackward, (F32), f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(GeluTanhBackward, (F64), f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(GeluTanhBackward, (bool), no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  na,   na,   na);
ROW(GeluTanhBackward, (int), no,   no,   no,   no,   no,   no,   f16,  bf16, f32,  f64,  na,   na,   na);
ROW(GeluTanhBackward, (double), f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);

// x, lo; hi =              B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Clamp, (B8, B8),        no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  no,   i64,  f32);
ROW(Clamp, (B8, U8),        u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Clamp, (B8, I8),        i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Clamp, (B8, I16),       i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (B8, I32),       i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (B8, I64),       i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (B8, F16),       f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (B8, BF16),      bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (B8, F32),       f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (B8, F64),       f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (B8, bool),      no,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  no,   i64,  f32);
ROW(Clamp, (B8, int),       i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (B8, double),    f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (U8, B8),        u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Clamp, (U8, U8),        u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Clamp, (U8, I8),        i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (U8, I16),       i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (U8, I32),       i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (U8, I64),       i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (U8, F16),       f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (U8, BF16),      bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (U8, F32),       f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (U8, F64),       f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (U8, bool),      u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Clamp, (U8, int),       u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Clamp, (U8, double),    f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (I8, B8),        i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Clamp, (I8, U8),        i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (I8, I8),        i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Clamp, (I8, I16),       i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (I8, I32),       i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (I8, I64),       i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I8, F16),       f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (I8, BF16),      bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (I8, F32),       f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (I8, F64),       f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (I8, bool),      i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Clamp, (I8, int),       i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Clamp, (I8, double),    f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (I16, B8),       i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (I16, U8),       i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (I16, I8),       i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (I16, I16),      i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (I16, I32),      i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (I16, I64),      i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I16, F16),      f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (I16, BF16),     bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (I16, F32),      f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (I16, F64),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (I16, bool),     i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (I16, int),      i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Clamp, (I16, double),   f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (I32, B8),       i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (I32, U8),       i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (I32, I8),       i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (I32, I16),      i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (I32, I32),      i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (I32, I64),      i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I32, F16),      f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (I32, BF16),     bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (I32, F32),      f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (I32, F64),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (I32, bool),     i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (I32, int),      i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Clamp, (I32, double),   f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (I64, B8),       i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I64, U8),       i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I64, I8),       i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I64, I16),      i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I64, I32),      i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I64, I64),      i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I64, F16),      f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (I64, BF16),     bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (I64, F32),      f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (I64, F64),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (I64, bool),     i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I64, int),      i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Clamp, (I64, double),   f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F16, B8),       f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (F16, U8),       f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (F16, I8),       f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (F16, I16),      f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (F16, I32),      f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (F16, I64),      f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (F16, F16),      f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (F16, BF16),     f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F16, F32),      f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F16, F64),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F16, bool),     f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (F16, int),      f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (F16, double),   f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Clamp, (BF16, B8),      bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (BF16, U8),      bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (BF16, I8),      bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (BF16, I16),     bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (BF16, I32),     bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (BF16, I64),     bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (BF16, F16),     f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (BF16, BF16),    bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (BF16, F32),     f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (BF16, F64),     f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (BF16, bool),    bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (BF16, int),     bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (BF16, double),  bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Clamp, (F32, B8),       f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, U8),       f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, I8),       f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, I16),      f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, I32),      f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, I64),      f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, F16),      f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, BF16),     f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, F32),      f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, F64),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F32, bool),     f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, int),      f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F32, double),   f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Clamp, (F64, B8),       f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, U8),       f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, I8),       f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, I16),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, I32),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, I64),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, F16),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, BF16),     f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, F32),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, F64),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, bool),     f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, int),      f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Clamp, (F64, double),   f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);

// cond, a; b =             B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Where, (B8, B8),        b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  b8,   i64,  f32);
ROW(Where, (B8, U8),        u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Where, (B8, I8),        i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Where, (B8, I16),       i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Where, (B8, I32),       i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Where, (B8, I64),       i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Where, (B8, F16),       f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Where, (B8, BF16),      bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Where, (B8, F32),       f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Where, (B8, F64),       f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Where, (B8, bool),      b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  b8,   i64,  f32);
ROW(Where, (B8, int),       i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Where, (B8, double),    f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  f32,  f32,  f32);
ROW(Where, (U8, B8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, U8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, I8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, I16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, I32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, I64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, F16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, BF16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, F32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, F64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, bool),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, int),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (U8, double),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, B8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, U8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, I8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, I16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, I32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, I64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, F16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, BF16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, F32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, F64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, bool),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, int),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I8, double),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, B8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, U8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, I8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, I16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, I32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, I64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, F16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, BF16),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, F32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, F64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, bool),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, int),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I16, double),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, B8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, U8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, I8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, I16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, I32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, I64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, F16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, BF16),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, F32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, F64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, bool),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, int),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I32, double),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, B8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, U8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, I8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, I16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, I32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, I64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, F16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, BF16),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, F32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, F64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, bool),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, int),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (I64, double),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, B8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, U8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, I8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, I16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, I32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, I64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, F16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, BF16),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, F32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, F64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, bool),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, int),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F16, double),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, B8),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, U8),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, I8),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, I16),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, I32),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, I64),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, F16),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, BF16),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, F32),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, F64),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, bool),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, int),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (BF16, double),  no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, B8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, U8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, I8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, I16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, I32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, I64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, F16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, BF16),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, F32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, F64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, bool),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, int),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F32, double),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, B8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, U8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, I8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, I16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, I32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, I64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, F16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, BF16),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, F32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, F64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, bool),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, int),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (F64, double),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (bool, B8),      b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  b8,   i64,  f32);
ROW(Where, (bool, U8),      u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  u8,   u8,   f32);
ROW(Where, (bool, I8),      i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  i8,   i8,   f32);
ROW(Where, (bool, I16),     i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  i16,  i16,  f32);
ROW(Where, (bool, I32),     i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  i32,  i32,  f32);
ROW(Where, (bool, I64),     i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  i64,  i64,  f32);
ROW(Where, (bool, F16),     f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  f16,  f16,  f16);
ROW(Where, (bool, BF16),    bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  bf16, bf16, bf16);
ROW(Where, (bool, F32),     f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  f32,  f32,  f32);
ROW(Where, (bool, F64),     f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64);
ROW(Where, (bool, bool),    b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Where, (bool, int),     i64,  u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Where, (bool, double),  f32,  f32,  f32,  f32,  f32,  f32,  f16,  bf16, f32,  f64,  na,   na,   na);
ROW(Where, (int, B8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (int, U8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (int, I8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (int, I16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (int, I32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (int, I64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (int, F16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (int, BF16),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (int, F32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (int, F64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (int, bool),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Where, (int, int),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Where, (int, double),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Where, (double, B8),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (double, U8),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (double, I8),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (double, I16),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (double, I32),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (double, I64),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (double, F16),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (double, BF16),  no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (double, F32),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (double, F64),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Where, (double, bool),  no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Where, (double, int),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Where, (double, double), no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);

// start, end; weight =     B8    U8    I8    I16   I32   I64   F16   BF16  F32   F64   bool  int   double
ROW(Lerp, (B8, B8),         no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, U8),         no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, I8),         no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, I16),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, I32),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, I64),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, F16),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, BF16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, F32),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, F64),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, bool),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, int),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (B8, double),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, B8),         no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, U8),         no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, I8),         no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, I16),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, I32),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, I64),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, F16),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, BF16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, F32),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, F64),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, bool),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, int),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (U8, double),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, B8),         no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, U8),         no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, I8),         no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, I16),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, I32),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, I64),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, F16),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, BF16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, F32),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, F64),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, bool),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, int),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I8, double),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, B8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, U8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, I8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, I16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, I32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, I64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, F16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, BF16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, F32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, F64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, bool),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, int),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I16, double),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, B8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, U8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, I8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, I16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, I32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, I64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, F16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, BF16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, F32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, F64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, bool),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, int),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I32, double),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, B8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, U8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, I8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, I16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, I32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, I64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, F16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, BF16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, F32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, F64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, bool),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, int),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (I64, double),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, B8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, U8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, I8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, I16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, I32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, I64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, F16),       no,   no,   no,   no,   no,   no,   f16,  no,   no,   no,   f16,  f16,  f16);
ROW(Lerp, (F16, BF16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, F32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, F64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, bool),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, int),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F16, double),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, B8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, U8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, I8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, I16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, I32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, I64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, F16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, BF16),     no,   no,   no,   no,   no,   no,   no,   bf16, no,   no,   bf16, bf16, bf16);
ROW(Lerp, (BF16, F32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, F64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, bool),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, int),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (BF16, double),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, B8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, U8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, I8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, I16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, I32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, I64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, F16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, BF16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, F32),       no,   no,   no,   no,   no,   no,   no,   no,   f32,  no,   f32,  f32,  f32);
ROW(Lerp, (F32, F64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, bool),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, int),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F32, double),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, B8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, U8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, I8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, I16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, I32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, I64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, F16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, BF16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, F32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, F64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   f64,  f64,  f64,  f64);
ROW(Lerp, (F64, bool),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, int),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (F64, double),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, B8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, U8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, I8),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, I16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, I32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, I64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, F16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, BF16),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, F32),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, F64),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (bool, bool),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Lerp, (bool, int),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Lerp, (bool, double),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Lerp, (int, B8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (int, U8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (int, I8),        no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (int, I16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (int, I32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (int, I64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (int, F16),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (int, BF16),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (int, F32),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (int, F64),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (int, bool),      no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Lerp, (int, int),       no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Lerp, (int, double),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Lerp, (double, B8),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (double, U8),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (double, I8),     no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (double, I16),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (double, I32),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (double, I64),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (double, F16),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (double, BF16),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (double, F32),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (double, F64),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   no);
ROW(Lerp, (double, bool),   no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Lerp, (double, int),    no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
ROW(Lerp, (double, double), no,   no,   no,   no,   no,   no,   no,   no,   no,   no,   na,   na,   na);
// END generated rows

#undef ROW
#undef WEFT_COMMA_LEAD

}  // namespace

TEST_SUITE("core") {

// The values follow the dtypes: an op computes in its result's dtype (square of a bool in int64).
// 37 elements: SIMD packets and a scalar tail.
TEST_CASE("dtype rules: the values follow the result dtype") {
  std::vector<bool> bits(37);
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = i % 3 == 0;
  const weft::Tensor<bool> b = weft::from_vector<bool>(bits);
  const weft::Tensor<std::int64_t> sq = weft::eval(weft::square(b) + weft::square(b));  // torch: 2 where b, else 0
  const weft::Tensor<bool> p1 = weft::eval(weft::pow(b, true)), p0 = weft::eval(weft::pow(b, false));  // b, all true
  const weft::Tensor<float> w = weft::eval(weft::where(b, 1, 2.5));  // numbers alone: float32
  const weft::Tensor<bool> s = weft::eval(weft::sign(b));
  int wrong = 0;
  for (std::size_t i = 0; i < bits.size(); ++i) {
    wrong += sq.data()[i] != (bits[i] ? 2 : 0);
    wrong += p1.data()[i] != bits[i] || !p0.data()[i] || s.data()[i] != bits[i];
    wrong += w.data()[i] != (bits[i] ? 1.0f : 2.5f);
  }
  CHECK(wrong == 0);
}

}  // TEST_SUITE
