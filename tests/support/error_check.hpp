// SPDX-License-Identifier: MIT
/// @file The message of the weft::Error a statement throws, for the error tests.
#pragma once

#include <doctest/doctest.h>

#include <exception>
#include <string>

#include <weft/core/error.hpp>

namespace weft_test {

/// Runs f, which must throw weft::Error; returns its message ("" and a failed check otherwise).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const weft::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("threw something other than weft::Error: ", e.what());
    return "";
  }
  FAIL_CHECK("did not throw");
  return "";
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace weft_test
