// SPDX-License-Identifier: MIT
/// @file weft::Error, the exception every argument check throws, and the message builder.
#pragma once

#include <cstdio>
#include <initializer_list>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <stdexcept>
#include <string>
#include <utility>

namespace weft {

/// Bad input: the message names the operation, the shapes involved and a fix.
class Error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A failure reported by the CUDA runtime or a CUDA library.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

// Message pieces are appended one by one through a few overloads, so each
// argument TYPE costs one small function rather than each argument LIST
// instantiating a whole ostringstream (messages are built in every kernel).
inline void append(std::string& s, std::string_view v) { s += v; }
inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, char v) { s += v; }
inline void append(std::string& s, bool v) { s += v ? "true" : "false"; }
inline void append(std::string& s, long long v) { s += std::to_string(v); }
inline void append(std::string& s, unsigned long long v) { s += std::to_string(v); }
inline void append(std::string& s, double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  s += buffer;
}
template <class T>
  requires std::is_integral_v<T> && (!std::is_same_v<T, bool>) && (!std::is_same_v<T, char>)
void append(std::string& s, T v) {
  if constexpr (std::is_signed_v<T>) append(s, static_cast<long long>(v));
  else append(s, static_cast<unsigned long long>(v));
}
template <class T>
  requires std::is_floating_point_v<T>
void append(std::string& s, T v) {
  append(s, static_cast<double>(v));
}
/// Anything else with an operator<< (Shape, Device, ...).
template <class T>
  requires(!std::is_arithmetic_v<T> && !std::is_convertible_v<const T&, std::string_view>)
void append(std::string& s, const T& v) {
  std::ostringstream os;
  os << v;
  s += os.str();
}

/// One argument of a message, type-erased: its address and the function that appends it. A
/// message is built from a list of these by one function, so an error site costs a few stores
/// and a call, and each argument TYPE one small function; as variadic templates, each argument
/// LIST compiled a builder of its own (27 of them in one test file, 5% of its host code).
struct MessagePiece {
  const void* value;
  void (*append_to)(std::string&, const void*);
};

inline void append_c_string(std::string& s, const void* v) { append(s, static_cast<const char*>(v)); }
template <class T>
void append_value(std::string& s, const void* v) {
  append(s, *static_cast<const T*>(v));
}

/// The piece of one argument; string literals and C strings share one function.
template <class T>
MessagePiece message_piece(const T& v) {
  if constexpr (std::is_array_v<T>) return {v, &append_c_string};
  else if constexpr (std::is_convertible_v<T, const char*>) return {static_cast<const char*>(v), &append_c_string};
  else return {&v, &append_value<T>};
}

inline void append_pieces(std::string& s, std::initializer_list<MessagePiece> pieces) {
  for (const MessagePiece& p : pieces) p.append_to(s, p.value);
}
inline std::string cat_pieces(std::initializer_list<MessagePiece> pieces) {
  std::string s;
  append_pieces(s, pieces);
  return s;
}

/// Concatenates every argument into one message.
template <class... Parts>
std::string cat(const Parts&... parts) {
  return cat_pieces({message_piece(parts)...});
}

/// Throws weft::Error("weft::<op>: <pieces...>"); cold and out of line.
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_pieces(const char* op,
                                                               std::initializer_list<MessagePiece> pieces) {
  std::string s = "weft::";
  s += op;
  s += ": ";
  append_pieces(s, pieces);
  throw Error(s);
}

/// Throws weft::Error("weft::<op>: <parts...>").
template <class... Parts>
[[noreturn, gnu::cold]] void fail(const char* op, const Parts&... parts) {
  fail_pieces(op, {message_piece(parts)...});
}

}  // namespace detail
}  // namespace weft
