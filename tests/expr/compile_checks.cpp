// SPDX-License-Identifier: MIT
/// @file cpu: what the expression builders reject at compile time (the Operand / HasTensorOperand
/// concepts), and the value and compute types they give, as static_asserts. A wrong answer here
/// fails the build of the test suite.
#include <functional>
#include <string>

#include "pointwise_check.hpp"

using namespace weft_test;

namespace {

template <class A, class B>
concept can_add = requires(const A& a, const B& b) { a + b; };
template <class A, class B>
concept can_less = requires(const A& a, const B& b) { a < b; };
template <class A>
concept can_exp = requires(const A& a) { weft::exp(a); };
template <class A>
concept can_negate = requires(const A& a) { -a; };
template <class C, class A, class B>
concept can_where = requires(const C& c, const A& a, const B& b) { weft::where(c, a, b); };
template <class T>
concept can_make_tensor = requires { typename weft::Tensor<T>; };

using F = Tensor<float>;
using Expr = decltype(std::declval<F>() * 2.0);

// Strings, pointers and other non-numbers are not Operands.
static_assert(!std::is_invocable_v<std::plus<>, F, std::string>);
static_assert(!std::is_invocable_v<std::plus<>, std::string, F>);
static_assert(!std::is_invocable_v<std::multiplies<>, F, const char*>);
static_assert(!std::is_invocable_v<std::minus<>, Expr, std::string>);
static_assert(!can_add<F, std::string>);
static_assert(!can_add<Expr, std::vector<float>>);
static_assert(!can_less<F, std::string>);
static_assert(!can_exp<std::string>);
static_assert(!can_where<std::string, F, F>);
// At least one operand must be a tensor or an expression.
static_assert(!can_exp<double>);
static_assert(!can_where<bool, double, double>);
// What is accepted.
static_assert(std::is_invocable_v<std::plus<>, F, double>);
static_assert(std::is_invocable_v<std::plus<>, int, F>);
static_assert(can_add<F, Tensor<weft::half>>);
static_assert(can_add<Expr, F>);
static_assert(can_less<F, int>);
static_assert(can_exp<F> && can_exp<Expr> && can_exp<Tensor<std::int32_t>>);
static_assert(can_negate<F> && can_negate<Expr>);
static_assert(can_where<Tensor<bool>, F, double>);
static_assert(weft::Operand<F> && weft::Operand<Expr> && weft::Operand<double> && weft::Operand<bool>);
static_assert(!weft::Operand<std::string> && !weft::Operand<int*>);
static_assert(weft::Expression<Expr> && !weft::Expression<F>);
// Only the seven element types make tensors.
static_assert(can_make_tensor<float> && can_make_tensor<bool> && can_make_tensor<weft::bfloat16>);
static_assert(!can_make_tensor<char> && !can_make_tensor<std::uint32_t> && !can_make_tensor<long double>);

// Value and compute types of nodes (expr/nodes.hpp): 16-bit floats compute in float, comparisons
// are bool computed in the promoted type, casts have their target's dtype.
using H = Tensor<weft::half>;
using I = Tensor<std::int32_t>;
static_assert(std::is_same_v<decltype(std::declval<H>() + std::declval<H>())::value_type, weft::half>);
static_assert(std::is_same_v<decltype(std::declval<H>() + std::declval<H>())::compute_type, float>);
static_assert(std::is_same_v<decltype(std::declval<H>() < std::declval<I>())::value_type, bool>);
static_assert(std::is_same_v<decltype(std::declval<H>() < std::declval<I>())::compute_type, float>);
static_assert(std::is_same_v<decltype(std::declval<I>() < 2.5)::compute_type, float>);
static_assert(std::is_same_v<decltype(std::declval<I>() < 2)::compute_type, std::int32_t>);
static_assert(std::is_same_v<decltype(weft::sqrt(std::declval<I>()))::value_type, float>);
static_assert(std::is_same_v<decltype(weft::abs(std::declval<I>()))::value_type, std::int32_t>);
static_assert(std::is_same_v<decltype(weft::cast<double>(std::declval<H>()))::value_type, double>);
static_assert(std::is_same_v<decltype(weft::cast<weft::half>(std::declval<F>()) * 2)::value_type, weft::half>);
static_assert(std::is_same_v<decltype(weft::lerp(std::declval<H>(), std::declval<H>(), 0.5))::value_type, weft::half>);
static_assert(std::is_same_v<decltype(weft::where(std::declval<Tensor<bool>>(), std::declval<H>(), std::declval<F>()))::value_type,
                             float>);
static_assert(std::is_same_v<decltype(weft::eval(std::declval<I>() / std::declval<I>())), Tensor<float>>);

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("compile-time checks: rejected operands and result types (see the static_asserts)") {
  // The checks are static_asserts above; here the accepted forms also run.
  Tensor<float> x = weft::from_vector<float>({1.0f, 2.0f});
  Tensor<float> y = weft::eval(-(x * 2.0) + 1);
  CHECK(values_of(y) == std::vector<double>{-1.0, -3.0});
}

}  // TEST_SUITE
