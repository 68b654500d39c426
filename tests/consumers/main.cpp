// SPDX-License-Identifier: MIT
/// @file The program each consumer project (meson/, cmake_find_package/, cmake_fetchcontent/) builds against an installed or fetched weft.
//
// It proves the build system's target carries what weft needs (headers, C++20, Eigen, OpenMP, the
// instruction set): one fused expression with a broadcast, checked against a double reference, a
// safetensors round trip (io/ is where GCC 12 warned through -I), and the packets it was built
// for: `consumer native` wants the running CPU's widest x86 level (the default of weft.pc and
// weft::weft), `consumer portable` the SSE2 baseline (weft-portable.pc, WEFT_NATIVE=OFF). Exit
// code 0 when all of it holds.
#include <weft/io.hpp>
#include <weft/weft.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// The widest packet layer weft has for this CPU (weft::kCpuPacketIsa's names); "" off x86-64.
std::string widest_x86_packets() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
  return __builtin_cpu_supports("avx") ? "avx" : "sse2";
#else
  return "";
#endif
}

}  // namespace

int main(int argc, char** argv) {
  auto a = weft::rand<float>({64, 33}, /*seed=*/1), b = weft::randn<float>({64, 33}, 2);
  auto bias = weft::randn<float>({33}, 3);
  auto y = weft::eval(a * weft::sigmoid(b) + bias);  // one kernel; bias broadcasts over rows

  const std::vector<float> av = a.to_vector(), bv = b.to_vector(), cv = bias.to_vector(), yv = y.to_vector();
  int bad = 0;
  for (std::size_t i = 0; i < yv.size(); ++i) {
    const double want = double(av[i]) / (1.0 + std::exp(-double(bv[i]))) + double(cv[i % 33]);
    // float32 sigmoid, product and sum: a few ulp of |want| + |bias|.
    if (!(std::abs(yv[i] - want) <= 1e-6 * (std::abs(want) + std::abs(cv[i % 33]) + 1))) ++bad;
  }
  std::printf("weft consumer: %zu elements, %d wrong\n", yv.size(), bad);

  const std::string file = std::string(argv[0]) + ".safetensors";
  weft::io::save_safetensors(file, {{"y", y}});
  const bool same_file = weft::io::SafeTensors(file).get<float>("y").contiguous().to_vector() == yv;
  std::remove(file.c_str());
  std::printf("weft consumer: safetensors round trip %s\n", same_file ? "exact" : "DIFFERS");

  bool packets_ok = true;
  const std::string built = weft::kCpuPacketIsa, widest = widest_x86_packets();
  if (argc > 1 && !widest.empty()) {
    const std::string want = std::strcmp(argv[1], "portable") == 0 ? "sse2" : widest;
    packets_ok = built == want;
    std::printf("weft consumer: %s build, %s packets (want %s)\n", argv[1], built.c_str(), want.c_str());
  }
  return bad == 0 && yv.size() == 64 * 33 && same_file && packets_ok ? 0 : 1;
}
