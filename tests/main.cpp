// SPDX-License-Identifier: MIT
/// @file The doctest runner linked into every test executable (core, cpu, cuda).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

int main(int argc, char** argv) {
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
