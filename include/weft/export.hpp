// SPDX-License-Identifier: MIT
/// @file Ahead-of-time deploy: WEFT_EXPORT(name, fn) makes a C++ function over tensors callable by name through the C ABI
/// of <weft/export_abi.h> (weft_call on DLPack tensors), from C, C++ or Python's ctypes.
///
/// Build the shared library with -fvisibility=hidden: then it exports only the C ABI's functions (marked visible
/// below), and each library has its own registry of functions (the registry is an inline function's static, which
/// hidden visibility keeps from being merged with another library's).
///
/// Where the C functions are defined: here, as `extern "C" inline` functions marked `used`. Every translation unit
/// that includes this header emits them as COMDAT (weak) definitions and the linker keeps one per library, so a
/// library needs no extra "define the ABI here" line, and a library of many translation units links without
/// duplicate symbols. The cost is the compile of a few small functions per including file.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/export_abi.h"
#include "weft/interop/dlpack.hpp"

namespace weft {

namespace detail {

/// One exported function: its counts, a description for messages, and the call on raw DLPack arrays
/// (counts already checked; it writes outputs[0..n_outputs) or throws).
struct ExportedFunction {
  std::int64_t n_inputs = 0, n_outputs = 0;
  std::string signature;
  std::function<void(DLManagedTensor* const*, DLManagedTensor**)> call;
};

/// The library's exported functions by name (sorted: weft_function_name lists them in order).
inline std::map<std::string, ExportedFunction>& export_registry() {
  static std::map<std::string, ExportedFunction> registry;
  return registry;
}

inline thread_local std::string export_last_error;

/// The argument and result types of a function pointer, a function, or a lambda/functor with one operator().
template <class F>
struct ExportSignature : ExportSignature<decltype(&F::operator())> {};
template <class R, class... A>
struct ExportSignature<R (*)(A...)> {
  using Result = R;
  using Args = std::tuple<std::remove_cvref_t<A>...>;
};
template <class R, class... A>
struct ExportSignature<R (*)(A...) noexcept> : ExportSignature<R (*)(A...)> {};
template <class R, class... A>
struct ExportSignature<R(A...)> : ExportSignature<R (*)(A...)> {};
template <class C, class R, class... A>
struct ExportSignature<R (C::*)(A...) const> : ExportSignature<R (*)(A...)> {};
template <class C, class R, class... A>
struct ExportSignature<R (C::*)(A...) const noexcept> : ExportSignature<R (*)(A...)> {};
template <class C, class R, class... A>
struct ExportSignature<R (C::*)(A...)> : ExportSignature<R (*)(A...)> {};

/// An argument: TensorView<E> (E = const T for an input the function only reads).
template <class V>
struct ExportInput {
  static_assert(sizeof(V) == 0, "WEFT_EXPORT: every argument must be a TensorView<T> or TensorView<const T>");
};
template <class E>
struct ExportInput<TensorView<E>> {
  static std::string describe() { return cat(std::is_const_v<E> ? "const " : "", dtype_name<std::remove_const_t<E>>()); }

  /// A view of a borrowed tensor: from_dlpack takes over a private copy of the DLManagedTensor whose deleter frees
  /// only that copy, so the caller's deleter never runs. The copy's shape and strides point into the caller's
  /// arrays, which from_dlpack reads once, during the call.
  static TensorView<E> borrow(DLManagedTensor* given, std::int64_t index) {
    if (!given) throw Error(cat("input ", index, " is NULL"));
    auto copy = std::make_unique<DLManagedTensor>();
    copy->dl_tensor = given->dl_tensor;
    copy->manager_ctx = nullptr;
    copy->deleter = [](DLManagedTensor* self) { delete self; };
    try {
      TensorView<E> view = from_dlpack<E>(copy.get());
      copy.release();  // the view's storage frees it
      return view;
    } catch (const Error& e) {
      throw Error(cat("input ", index, " (", describe(), "): ", e.what()));
    }
  }
};

/// The result: a Tensor<T> (one output) or a std::tuple of them (one output each, in order).
template <class R>
struct ExportResult {
  static_assert(sizeof(R) == 0, "WEFT_EXPORT: the function must return a Tensor<T> or a std::tuple of Tensors");
};
template <class T>
struct ExportResult<Tensor<T>> {
  static constexpr std::int64_t count = 1;
  static std::string describe() { return dtype_name<T>(); }
  static void store(const Tensor<T>& r, DLManagedTensor** outputs) { outputs[0] = to_dlpack(r); }
};
template <class... T>
struct ExportResult<std::tuple<Tensor<T>...>> {
  static constexpr std::int64_t count = sizeof...(T);
  static std::string describe() {
    std::string s;
    ((s += (s.empty() ? "" : ", ") + std::string(dtype_name<T>())), ...);
    return s;
  }
  static void store(const std::tuple<Tensor<T>...>& r, DLManagedTensor** outputs) {
    [&]<std::size_t... I>(std::index_sequence<I...>) { ((outputs[I] = to_dlpack(std::get<I>(r))), ...); }
    (std::index_sequence_for<T...>{});
  }
};

/// Adds fn to the registry under name (at load time: WEFT_EXPORT's static initializer). A name exported twice
/// keeps neither function: calling it fails and says so, rather than silently running one of them.
template <class F>
bool register_export(const char* name, F fn) {
  using Sig = ExportSignature<std::remove_cvref_t<F>>;
  using Result = ExportResult<typename Sig::Result>;
  return [&]<class... V>(std::type_identity<std::tuple<V...>>) {
    ExportedFunction e;
    e.n_inputs = std::int64_t(sizeof...(V));
    e.n_outputs = Result::count;
    std::string args;
    ((args += (args.empty() ? "" : ", ") + ExportInput<V>::describe()), ...);
    e.signature = cat(name, "(", args, ") -> (", Result::describe(), ")");
    e.call = [fn](DLManagedTensor* const* inputs, DLManagedTensor** outputs) {
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        Result::store(fn(ExportInput<V>::borrow(inputs[I], std::int64_t(I))...), outputs);
      }(std::index_sequence_for<V...>{});
    };
    auto [it, fresh] = export_registry().emplace(name, std::move(e));
    if (!fresh)
      it->second.call = [n = std::string(name)](DLManagedTensor* const*, DLManagedTensor**) {
        throw Error(cat("'", n, "' is exported twice in this library; give each WEFT_EXPORT its own name"));
      };
    return true;
  }(std::type_identity<typename Sig::Args>{});
}

inline std::string export_names() {
  std::string s;
  for (const auto& [name, f] : export_registry()) s += cat(s.empty() ? "" : ", ", f.signature);
  return s.empty() ? "none" : s;
}

}  // namespace detail

}  // namespace weft

/// Exports fn (a function or a captureless-or-capturing lambda taking TensorView<T> / TensorView<const T> arguments
/// and returning a Tensor<T> or a std::tuple of Tensors) under `name` (an identifier). At namespace scope, once per
/// name per library: the variable it defines has external linkage, so a name exported in two files fails to link.
/// (Variadic so that a lambda's commas need no parentheses.)
#define WEFT_EXPORT(name, ...) \
  extern const bool weft_export_##name; \
  const bool weft_export_##name = ::weft::detail::register_export(#name, __VA_ARGS__)

#define WEFT_EXPORT_ABI_ [[gnu::used, gnu::visibility("default")]]

extern "C" {

WEFT_EXPORT_ABI_ inline int weft_call(const char* name, DLManagedTensor* const* inputs, int64_t n_inputs,
                                      DLManagedTensor** outputs, int64_t n_outputs) {
  using weft::detail::cat;
  std::string& error = weft::detail::export_last_error;
  if (outputs)
    for (int64_t i = 0; i < n_outputs; ++i) outputs[i] = nullptr;
  if (!name) {
    error = "weft_call: the name is NULL";
    return 1;
  }
  try {
    const auto& registry = weft::detail::export_registry();
    const auto it = registry.find(name);
    if (it == registry.end()) {
      error = cat("weft_call: no function '", name, "' is exported; this library exports ", weft::detail::export_names());
      return 1;
    }
    const weft::detail::ExportedFunction& f = it->second;
    if (n_inputs != f.n_inputs || n_outputs != f.n_outputs) {
      error = cat("weft_call(\"", name, "\"): called with ", n_inputs, " inputs and ", n_outputs, " outputs; ",
                  f.signature, " takes ", f.n_inputs, " and returns ", f.n_outputs);
      return 1;
    }
    if ((n_inputs > 0 && !inputs) || (n_outputs > 0 && !outputs)) {
      error = cat("weft_call(\"", name, "\"): the ", !outputs ? "outputs" : "inputs", " array is NULL");
      return 1;
    }
    f.call(inputs, outputs);
    return 0;
  } catch (const std::exception& e) {
    error = cat("weft_call(\"", name, "\"): ", e.what());
  } catch (...) {
    error = cat("weft_call(\"", name, "\"): the function threw an exception that is not a std::exception");
  }
  // Nothing half-made goes back: the outputs stored before the failure are released.
  for (int64_t i = 0; outputs && i < n_outputs; ++i)
    if (outputs[i]) {
      if (outputs[i]->deleter) outputs[i]->deleter(outputs[i]);
      outputs[i] = nullptr;
    }
  return 1;
}

WEFT_EXPORT_ABI_ inline const char* weft_last_error(void) { return weft::detail::export_last_error.c_str(); }

WEFT_EXPORT_ABI_ inline int64_t weft_function_count(void) { return int64_t(weft::detail::export_registry().size()); }

WEFT_EXPORT_ABI_ inline const char* weft_function_name(int64_t i) {
  const auto& registry = weft::detail::export_registry();
  if (i < 0 || i >= int64_t(registry.size())) return nullptr;
  return std::next(registry.begin(), i)->first.c_str();
}

WEFT_EXPORT_ABI_ inline const char* weft_function_signature(const char* name) {
  if (!name) return nullptr;
  const auto& registry = weft::detail::export_registry();
  const auto it = registry.find(name);
  return it == registry.end() ? nullptr : it->second.signature.c_str();
}

}  // extern "C"
