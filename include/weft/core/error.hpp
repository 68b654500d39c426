// SPDX-License-Identifier: MIT
/// @file weft::Error, the exception every argument check throws, and the message builder.
#pragma once

#include <cstdio>
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

/// Concatenates every argument into one message.
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (append(s, parts), ...);
  return s;
}

/// Throws weft::Error("weft::<op>: <parts...>"). Cold and out of line: a check at each call site
/// is a compare and a call, not the message's construction.
template <class... Parts>
[[noreturn, gnu::cold, gnu::noinline]] void fail(const char* op, const Parts&... parts) {
  throw Error(cat("weft::", op, ": ", parts...));
}

}  // namespace detail
}  // namespace weft
