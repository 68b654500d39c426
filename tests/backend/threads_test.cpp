// SPDX-License-Identifier: MIT
/// @file set_num_threads / get_num_threads: the count reaches the kernels (their fusion log names
/// it), the GEMMs, and launches from other threads; bad counts are refused.
#include <weft/ops/matmul.hpp>
#include <weft/backend/threads.hpp>

#include <thread>

#include "error_check.hpp"
#include "log_capture.hpp"
#include "matmul_reference.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

/// Restores the count a test case found.
struct ThreadCountGuard {
  int saved = weft::get_num_threads();
  ~ThreadCountGuard() { weft::set_num_threads(saved); }
};

/// The fusion log of `kernel` (y = f(x)) over tensors large enough to use every thread allowed.
/// The log names a kernel type once: each call passes a kernel of its own.
template <class Kernel>
std::string fusion_log_of_large(Kernel kernel) {
  const Tensor<float> x = weft::ones<float>(Shape{1 << 20});
  Tensor<float> y = weft::empty<float>(Shape{1 << 20});
  LogCapture capture;
  weft::set_logs("fusion");
  kernel(y, x);
  weft::set_logs("");
  return capture.text();
}

}  // namespace

TEST_SUITE("cpu") {
TEST_CASE("set_num_threads: kernels and other threads use the count") {
  ThreadCountGuard guard;
  weft::set_num_threads(1);
  CHECK(weft::get_num_threads() == 1);
  CHECK(has(fusion_log_of_large([](Tensor<float>& y, const Tensor<float>& x) { y = x * 2 + 1; }), " 1 thread(s)"));
  weft::set_num_threads(3);  // more than this machine may have: allowed, as in PyTorch
  CHECK(weft::get_num_threads() == 3);
  CHECK(has(fusion_log_of_large([](Tensor<float>& y, const Tensor<float>& x) { y = x * 2 - 1; }), " 3 thread(s)"));
  int seen = 0;
  std::thread([&] { seen = weft::get_num_threads(); }).join();  // process-wide, not per thread
  CHECK(seen == 3);
  // Correct with either count (a product's rows split in bands over the threads).
  const Tensor<float> a = weft::randn<float>(Shape{64, 300}, 1), b = weft::randn<float>(Shape{300, 40}, 2);
  check_matmul<float>(a, b);
  weft::set_num_threads(1);
  check_matmul<float>(a, b);
}

TEST_CASE("set_num_threads: a count below 1 is refused and changes nothing") {
  ThreadCountGuard guard;
  const int before = weft::get_num_threads();
  CHECK(has(error_of([] { weft::set_num_threads(0); }), "weft::set_num_threads: needs n >= 1, got 0"));
  CHECK(weft::get_num_threads() == before);
}
}
