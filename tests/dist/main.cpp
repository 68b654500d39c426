// SPDX-License-Identifier: MIT
/// @file The doctest runner of test_dist (run under mpirun): starts the runtime, prints rank 0's report and any other failing rank's, fails on every rank when any rank failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <sstream>

#include <weft/dist.hpp>

int main(int argc, char** argv) {
  weft::dist::Runtime runtime(argc, argv);
  const weft::dist::Group world = weft::dist::world();
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  // Ranks other than 0 keep their report, and print it only when they fail.
  std::ostringstream report;
  if (world.rank() != 0) context.setCout(&report);
  const int result = context.run();
  if (context.shouldExit()) return result;
  weft::Tensor<std::int32_t> failed = weft::full<std::int32_t>({world.size()}, 0);
  failed.data()[world.rank()] = result != 0 ? 1 : 0;
  weft::dist::all_reduce(failed, world, weft::dist::ReduceOp::max);
  int failing = 0;
  for (int r = 0; r < world.size(); ++r) failing += failed.data()[r];
  if (world.rank() != 0 && result != 0) std::printf("---- rank %d's report ----\n%s", world.rank(), report.str().c_str());
  if (world.rank() == 0 && failing > 0) std::printf("test_dist: %d of %d ranks failed\n", failing, world.size());
  std::fflush(stdout);
  return failing > 0 ? 1 : 0;
}
