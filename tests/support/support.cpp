// SPDX-License-Identifier: MIT
/// @file The per-dtype test helpers of reference.hpp, compiled once per build and linked into
/// the host test programs (see WEFT_TEST_SUPPORT_TEMPLATES).
#define WEFT_TEST_SUPPORT_DEFINITIONS
#include "reference.hpp"

namespace weft_test {
WEFT_TEST_FOR_EACH_DTYPE(WEFT_TEST_SUPPORT_TEMPLATES, )
}  // namespace weft_test
