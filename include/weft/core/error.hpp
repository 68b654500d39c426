// SPDX-License-Identifier: MIT
/// @file weft::Error, the exception every argument check throws, and the message builder.
#pragma once

#include <sstream>
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

/// Concatenates every argument with operator<< into one message.
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

/// Throws weft::Error("weft::<op>: <parts...>").
template <class... Parts>
[[noreturn]] void fail(const char* op, const Parts&... parts) {
  throw Error(cat("weft::", op, ": ", parts...));
}

}  // namespace detail
}  // namespace weft
