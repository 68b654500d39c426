// SPDX-License-Identifier: MIT
/// @file A rank that fails before a collective the others entered: each other rank must throw weft::Error naming the collective and the rank (run under mpirun -np 4; scripts/test counts the lines).
//
// Rank 3 throws an exception nothing catches; std::terminate runs the runtime's handler, which
// tells the others why before the process ends. Ranks 0-2 wait in all_reduce and must throw a
// weft::Error that names all_reduce, rank 3 and its reason, and print one line each. Their
// runtime is then broken, so their finalize ends the job with MPI_Abort: the exit status is
// not the check, the three lines are.
#include <cstdio>
#include <stdexcept>
#include <string>

#include <weft/dist.hpp>

int main(int argc, char** argv) {
  weft::dist::Runtime runtime(argc, argv);
  const weft::dist::Group world = weft::dist::world();
  if (world.size() != 4) {
    std::fprintf(stderr, "rank_failure: run it on 4 ranks (mpirun -np 4)\n");
    return 2;
  }
  weft::Tensor<float> x = weft::ones<float>({16});
  if (world.rank() == 3) throw std::runtime_error("rank 3 fails on purpose");
  try {
    weft::dist::all_reduce(x, world);
    std::printf("rank_failure: rank %d: all_reduce returned although rank 3 never entered it\n", world.rank());
  } catch (const weft::Error& e) {
    const std::string what = e.what();
    const bool named = what.find("weft::dist::all_reduce") != std::string::npos &&
                       what.find("rank 3") != std::string::npos &&
                       what.find("rank 3 fails on purpose") != std::string::npos;
    if (named) std::printf("rank_failure: rank %d saw rank 3 leave all_reduce\n", world.rank());
    else std::printf("rank_failure: rank %d: unexpected message: %s\n", world.rank(), what.c_str());
  }
  std::fflush(stdout);
  return 0;
}
