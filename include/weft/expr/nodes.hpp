// SPDX-License-Identifier: MIT
/// @file Expression nodes: Leaf (a tensor), Scalar (a number), RowValue (a row epilogue's value per row), Map (an op
/// over operands), Cast, and the list operands of foreach (ListLeaf, ListScalar). Each names its operand types (`children`); expr/tree.hpp walks trees through them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/core/tuple.hpp"
#include "weft/expr/expr.hpp"
#include "weft/expr/functors.hpp"

namespace weft {

/// A tensor read at every point of the iteration space (broadcast as needed): a read-only view,
/// so building an expression never copies a tensor's elements.
template <Element T>
struct Leaf : Expr<Leaf<T>> {
  using value_type = T;
  using children = detail::TypeList<>;
  TensorView<const T> tensor;
};

/// A number; its dtype only counts across categories (PyTorch's wrapped numbers).
template <class S>
struct Scalar : Expr<Scalar<S>> {
  static_assert(std::is_same_v<S, bool> || std::is_same_v<S, std::int64_t> || std::is_same_v<S, double>);
  using value_type = S;
  using children = detail::TypeList<>;
  S value;
};

/// One value per row of a row epilogue (backend/row_epilogue.hpp): a reduction with a kept dim,
/// computed for the row being run and read from `*source` when the kernel moves to a row, then
/// broadcast along it like a number.
template <Element T>
struct RowValue : Expr<RowValue<T>> {
  using value_type = T;
  using children = detail::TypeList<>;
  const T* source;
};

template <class S>
struct ListScalar;

namespace detail {

template <class N>
inline constexpr bool is_scalar_node_v = is_instance_v<N, Scalar> || is_instance_v<N, ListScalar>;

struct NoType {};

/// promote_t of the dtypes that are there: NoType (no tensor operand) leaves the other one.
template <class A, class B>
using promote_optional_t =
    typename std::conditional_t<std::is_same_v<A, NoType>, std::type_identity<B>,
                                std::conditional_t<std::is_same_v<B, NoType>, std::type_identity<A>, promote<A, B>>>::type;

template <class... Ts>
struct promote_all {
  using type = NoType;
};
template <class T, class... Rest>
struct promote_all<T, Rest...> {
  using type = promote_optional_t<T, typename promote_all<Rest...>::type>;
};

/// The tensors' dtype T lifted by the numbers' type S (NoType: none of that kind). Numbers alone
/// take their default dtypes: bool, int64, float32.
template <class T, class S>
using apply_scalar_t = typename std::conditional_t<
    std::is_same_v<S, NoType>, std::type_identity<T>,
    std::conditional_t<std::is_same_v<T, NoType>,
                       std::type_identity<std::conditional_t<std::is_same_v<S, double>, float, S>>,
                       std::type_identity<promote_with_scalar_t<T, S>>>>::type;

/// Result dtype of an op over these nodes: tensors promote among themselves,
/// numbers only lift the category (int tensor * 2.5 -> float32). Numbers alone occur
/// as where's branches: where(c, 1, 2.5) is float32, as in PyTorch.
template <class... Nodes>
struct mixed_promote {
  using tensors = typename promote_all<std::conditional_t<is_scalar_node_v<Nodes>, NoType, typename Nodes::value_type>...>::type;
  using scalars = typename promote_all<std::conditional_t<is_scalar_node_v<Nodes>, typename Nodes::value_type, NoType>...>::type;
  using type = apply_scalar_t<tensors, scalars>;
};

template <functors::Kind kind, class... Args>
struct map_types;
template <class... Args>
struct map_types<functors::Kind::arithmetic, Args...> {
  using value = typename mixed_promote<Args...>::type;
  using compute = math_t<value>;
};
template <class... Args>
struct map_types<functors::Kind::floating, Args...> {
  using value = to_floating_t<typename mixed_promote<Args...>::type>;
  using compute = math_t<value>;
};
template <class... Args>
struct map_types<functors::Kind::comparison, Args...> {
  using value = bool;
  using compute = math_t<typename mixed_promote<Args...>::type>;
};
template <class Cond, class A, class B>
struct map_types<functors::Kind::where, Cond, A, B> {
  using value = typename mixed_promote<A, B>::type;
  using compute = math_t<value>;
};
template <class X>
struct map_types<functors::Kind::predicate, X> {
  using value = bool;
  using compute = math_t<to_floating_t<typename mixed_promote<X>::type>>;
};
template <class X>
struct map_types<functors::Kind::square, X> {
  using value = typename mixed_promote<X, Scalar<std::int64_t>>::type;  // x * 2's dtype: bool squares in int64
  using compute = math_t<value>;
};

// ---- what PyTorch refuses -------------------------------------------------------------------

template <class X>
inline constexpr bool is_bool_node_v = std::is_same_v<typename X::value_type, bool>;
template <class Base, class Exp>  // bool ^ bool only with a number exponent (b ^ true, b ^ false)
inline constexpr bool pow_refused_v = is_bool_node_v<Base> && is_bool_node_v<Exp> && !is_scalar_node_v<Exp>;
template <class Cond, class A, class B>
inline constexpr bool where_refused_v = !is_bool_node_v<Cond>;
template <class A, class B, class W>  // start and end: tensors of one floating dtype; weight: a number or that dtype
inline constexpr bool lerp_refused_v =
    is_scalar_node_v<A> || is_scalar_node_v<B> || !std::is_same_v<typename A::value_type, typename B::value_type> ||
    !is_floating_v<typename A::value_type> ||
    !(is_scalar_node_v<W> || std::is_same_v<typename W::value_type, typename A::value_type>);

/// The operand dtypes PyTorch refuses for an op, refused at compile time. value: whether Op refuses
/// operands of these node types; check() holds the op's one-line static_assert (what is refused
/// and the fix), which Map instantiates. Kept apart so that a test can read value without the assert.
template <class Op, class... Args>
struct refusal {
  static constexpr bool value = false;
  static constexpr bool check() { return true; }
};
#define WEFT_REFUSE(Op, condition, message)  \
  template <class... Args>                   \
  struct refusal<functors::Op, Args...> {         \
    static constexpr bool value = condition; \
    static constexpr bool check() {          \
      static_assert(!value, message);        \
      return true;                           \
    }                                        \
  };
WEFT_REFUSE(Neg, (is_bool_node_v<Args> && ...),
            "weft: -x of a bool tensor is not supported (nor in PyTorch); to invert a mask use x == false")
WEFT_REFUSE(Sub, (is_bool_node_v<Args> || ...),
            "weft: a - b with a bool operand is not supported (nor in PyTorch); use a != b for two bools, else cast<int32_t>() the bool")
WEFT_REFUSE(Abs, (is_bool_node_v<Args> && ...),
            "weft::abs of a bool tensor is not supported (nor in PyTorch); cast<int32_t>(x) first")
WEFT_REFUSE(Relu, (is_bool_node_v<Args> && ...),
            "weft::relu of a bool tensor is not supported (nor in PyTorch); cast<int32_t>(x) first")
WEFT_REFUSE(Gelu, !(is_floating_v<typename Args::value_type> && ...),
            "weft::gelu needs a floating-point input (as in PyTorch); cast<float>(x) first")
WEFT_REFUSE(GeluTanh, !(is_floating_v<typename Args::value_type> && ...),
            "weft::gelu_tanh needs a floating-point input (as in PyTorch); cast<float>(x) first")
WEFT_REFUSE(GeluBackward, !is_floating_v<typename mixed_promote<Args...>::type>,
            "weft::nn::gelu_backward needs a floating-point dy or x (as in PyTorch); cast<float>() them first")
WEFT_REFUSE(GeluTanhBackward, !is_floating_v<typename mixed_promote<Args...>::type>,
            "weft::nn::gelu_tanh_backward needs a floating-point dy or x (as in PyTorch); cast<float>() them first")
WEFT_REFUSE(Silu, !(is_floating_v<typename Args::value_type> && ...),
            "weft::silu needs a floating-point input (as in PyTorch); cast<float>(x) first")
WEFT_REFUSE(Pow, pow_refused_v<Args...>,
            "weft::pow of bool by a bool tensor is not supported (nor in PyTorch); cast<int32_t>() the base first")
WEFT_REFUSE(Clamp, (std::is_same_v<typename mixed_promote<Args...>::type, bool>),
            "weft::clamp of bool with bool bounds is not supported (nor in PyTorch); cast<int32_t>(x) first")
WEFT_REFUSE(Floor, (is_bool_node_v<Args> && ...),
            "weft::floor of a bool tensor is not supported (nor in PyTorch); cast<int32_t>(x) first")
WEFT_REFUSE(Ceil, (is_bool_node_v<Args> && ...),
            "weft::ceil of a bool tensor is not supported (nor in PyTorch); cast<int32_t>(x) first")
WEFT_REFUSE(Trunc, (is_bool_node_v<Args> && ...),
            "weft::trunc of a bool tensor is not supported (nor in PyTorch); cast<int32_t>(x) first")
WEFT_REFUSE(Round, (is_bool_node_v<Args> && ...),
            "weft::round of a bool tensor is not supported (nor in PyTorch); cast<int32_t>(x) first")
WEFT_REFUSE(Fmod, (std::is_same_v<typename mixed_promote<Args...>::type, bool>),
            "weft::fmod of bools is not supported (nor in PyTorch); cast<int32_t>() an operand first")
WEFT_REFUSE(Remainder, (std::is_same_v<typename mixed_promote<Args...>::type, bool>),
            "weft::remainder of bools is not supported (nor in PyTorch); cast<int32_t>() an operand first")
WEFT_REFUSE(Where, where_refused_v<Args...>,
            "weft::where needs a bool condition (as in PyTorch); compare it, e.g. where(c != 0, a, b)")
WEFT_REFUSE(Lerp, lerp_refused_v<Args...>,
            "weft::lerp needs start and end tensors of one floating dtype and a number or that dtype as weight (as in PyTorch); cast first")
#undef WEFT_REFUSE

}  // namespace detail

/// op(args...) at every point. One node type serves every unary, binary and ternary op.
template <class Op, class... Args>
struct Map : Expr<Map<Op, Args...>> {
  static_assert(detail::refusal<Op, Args...>::check());  // what PyTorch refuses, with the op's message
  using types = detail::map_types<Op::kind, Args...>;
  /// dtype of the result (what eval() returns).
  using value_type = typename types::value;
  /// Type the operands are converted to before op runs (float for 16-bit floats).
  using compute_type = typename types::compute;
  using op_type = Op;
  using children = detail::TypeList<Args...>;

  [[no_unique_address]] Op op;
  detail::Tuple<Args...> args;
};

/// The operand converted to dtype U (rounded to U's precision, like tensor.to(U)).
template <Element U, class E>
struct Cast : Expr<Cast<U, E>> {
  using value_type = U;
  using children = detail::TypeList<E>;
  E arg;
};

/// A list of tensors: a foreach operand, read at every point of each member.
template <Element T>
struct ListLeaf : Expr<ListLeaf<T>> {
  using value_type = T;
  using children = detail::TypeList<>;
  TensorList<T> list;
};

/// One number per list member; promotes like a number (a wrapped scalar).
template <class S>
struct ListScalar : Expr<ListScalar<S>> {
  using value_type = S;
  using children = detail::TypeList<>;
  ScalarList<S> values;
};

}  // namespace weft
