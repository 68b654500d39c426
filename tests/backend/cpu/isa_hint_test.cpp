// SPDX-License-Identifier: MIT
/// @file cpu: the WEFT_LOGS=cpu hint (weft/backend/cpu/simd/isa_hint.hpp): when it fires (a pure function of
/// the build's packet layer and the CPU's flags), what it says, and that a program prints it once.
/// The x86-64 (SSE2) build of scripts/test is where it fires on an AVX2 or AVX-512 machine.
#include <atomic>
#include <string>

#include "error_check.hpp"
#include "log_capture.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::detail::cpu::CpuFeatures;
using weft::detail::cpu::isa_hint;
using weft::detail::cpu::X86Level;
using weft::LogLevel;

namespace {

constexpr CpuFeatures kSse2{};
constexpr CpuFeatures kAvx{.avx = true};
constexpr CpuFeatures kAvx2NoFma{.avx = true, .avx2 = true};
constexpr CpuFeatures kAvx2{.avx = true, .avx2 = true, .fma = true};
constexpr CpuFeatures kAvx512{.avx = true, .avx2 = true, .fma = true, .avx512f = true};

/// Turns logging off again when a test ends (also on failure).
struct HintLogsOff {
  ~HintLogsOff() { weft::set_logs(""); }
};

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("isa hint: the levels of a build and of a CPU") {
  using weft::detail::cpu::build_x86_level;
  using weft::detail::cpu::cpu_x86_level;
  CHECK(build_x86_level("sse2") == X86Level::sse2);
  CHECK(build_x86_level("avx") == X86Level::avx);
  CHECK(build_x86_level("avx2") == X86Level::avx2);
  CHECK(build_x86_level("avx512") == X86Level::avx512);
  CHECK(build_x86_level("neon") == X86Level::other);
  CHECK(build_x86_level("generic") == X86Level::other);
  CHECK(cpu_x86_level(kSse2) == X86Level::sse2);
  CHECK(cpu_x86_level(kAvx) == X86Level::avx);
  CHECK(cpu_x86_level(kAvx2NoFma) == X86Level::avx);  // AVX2 without FMA is no x86-64-v3
  CHECK(cpu_x86_level(kAvx2) == X86Level::avx2);
  CHECK(cpu_x86_level(kAvx512) == X86Level::avx512);
}

TEST_CASE("isa hint: fires exactly when the build is below the CPU, and names the flags") {
  const std::string sse2_on_512 = isa_hint("sse2", kAvx512);
  CHECK(sse2_on_512 ==
        "this build uses sse2 packets but the CPU has avx512: compile with -march=native (or -mavx2 -mfma for any "
        "AVX2 machine); bench/pointwise's fused fp32 kernels ran about 3x faster with it (WEFT_LOGS=cpu=off silences this "
        "line)");
  const std::string sse2_on_avx2 = isa_hint("sse2", kAvx2);
  CHECK(has(sse2_on_avx2, "the CPU has avx2: compile with -march=native (or -mavx2 -mfma"));
  CHECK(has(sse2_on_avx2, "about 3x"));
  const std::string sse2_on_avx = isa_hint("sse2", kAvx);  // no AVX2: -mavx2 would not run there
  CHECK(has(sse2_on_avx, "the CPU has avx: compile with -march=native;"));
  CHECK(!has(sse2_on_avx, "-mavx2"));
  const std::string avx2_on_512 = isa_hint("avx2", kAvx512);
  CHECK(has(avx2_on_512, "this build uses avx2 packets but the CPU has avx512: compile with -march=native;"));
  CHECK(has(avx2_on_512, "about 10%"));
  CHECK(!has(avx2_on_512, "-mavx2"));
  CHECK(!isa_hint("avx", kAvx512).empty());

  // At or above the CPU's level, or not x86: nothing.
  CHECK(isa_hint("sse2", kSse2).empty());
  CHECK(isa_hint("avx", kAvx2NoFma).empty());
  CHECK(isa_hint("avx2", kAvx2).empty());
  CHECK(isa_hint("avx2", kAvx2NoFma).empty());
  CHECK(isa_hint("avx512", kAvx512).empty());
  CHECK(isa_hint("avx512", kAvx2).empty());  // a build for a wider CPU than this one
  CHECK(isa_hint("neon", kAvx512).empty());
  CHECK(isa_hint("generic", kAvx512).empty());
}

TEST_CASE("isa hint: log_isa_hint_once prints on the first call only, and nothing for no hint") {
  HintLogsOff off;
  weft::set_logs("cpu");
  LogCapture capture;
  std::atomic<bool> printed{false};
  weft::detail::cpu::log_isa_hint_once(printed, "hint one");
  weft::detail::cpu::log_isa_hint_once(printed, "hint one");
  weft::detail::cpu::log_isa_hint_once(printed, "hint two");
  std::atomic<bool> none{false};
  weft::detail::cpu::log_isa_hint_once(none, "");
  weft::detail::cpu::log_isa_hint_once(none, "hint three");  // the first call decided: nothing
  const std::string text = capture.text();
  INFO(text);
  CHECK(LogCapture::count(text, "[weft:cpu] hint one\n") == 1);
  CHECK(LogCapture::count(text, "[weft:cpu]") == 1);
}

TEST_CASE("isa hint: on by default, silenced by cpu=off, kept by a WEFT_LOGS that names other components") {
  using weft::detail::kDefaultLogLevels;
  using weft::detail::parse_logs;
  constexpr unsigned cpu_shift = 2 * unsigned(weft::LogComponent::cpu);
  auto cpu_level = [](unsigned levels) { return LogLevel((levels >> cpu_shift) & 3u); };
  CHECK(kDefaultLogLevels == unsigned(LogLevel::error) << cpu_shift);  // every other component off
  CHECK(cpu_level(parse_logs("", true, kDefaultLogLevels)) == LogLevel::error);
  CHECK(cpu_level(parse_logs("fusion,+sdpa", true, kDefaultLogLevels)) == LogLevel::error);
  CHECK(parse_logs("cpu=off", true, kDefaultLogLevels) == 0);
  CHECK(cpu_level(parse_logs("cpu", true, kDefaultLogLevels)) == LogLevel::info);
  CHECK(parse_logs("fusion=debug,sdpa=info,cuda=error", true) == parse_logs("+fusion,sdpa,-cuda", true));
  CHECK_THROWS_WITH_AS(parse_logs("cpu=loud", true), "weft::set_logs: unknown level 'loud'; known: off, error, info, debug",
                       weft::Error);
}

TEST_CASE("isa hint: kernels print this build's hint once at the default level, and nothing with cpu=off") {
  HintLogsOff off;
  weft::detail::cpu::isa_hint_decided().store(false);  // the process's one hint, used or not by earlier tests
  weft::set_logs("cpu=off");
  const std::string expected = isa_hint(weft::kCpuPacketIsa, weft::detail::cpu::running_cpu_features());
  MESSAGE("this build: ", std::string(weft::kCpuPacketIsa), " packets; hint: ", expected.empty() ? "(none)" : expected);
  WEFT_TEST_RNG(rng);
  Tensor<float> a = random_contiguous<float>(rng, Shape{257}, Domain{-2, 2});
  Tensor<float> y = weft::full<float>(Shape{257}, std::nanf(""));
  LogCapture capture;
  y = a * 2;  // silenced: no hint, and the one-time hint is not used up
  weft::set_logs("cpu=error");  // the default
  y = a * 3;
  y = weft::exp(a) + 1;
  weft::TensorList<float> list{y.view()};
  list = list * 0.5f;  // the list executor asks too
  const std::string text = capture.text();
  INFO(text);
  CHECK(LogCapture::count(text, "[weft:cpu]") == (expected.empty() ? 0 : 1));
  if (!expected.empty()) CHECK(LogCapture::count(text, "[weft:cpu] " + expected + "\n") == 1);
  // The kernels around the hint still ran.
  const auto av = values_of(a), yv = values_of(y);
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < yv.size(); ++i) {
    const double want = 0.5 * double(float(std::exp(double(av[i]))) + 1.0f);
    wrong += !(std::fabs(yv[i] - want) <= 4 * 0x1p-24 * std::fabs(want));
  }
  CHECK(wrong == 0);
}

}  // TEST_SUITE("cpu")
