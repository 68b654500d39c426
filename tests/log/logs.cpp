// SPDX-License-Identifier: MIT
/// @file core: WEFT_LOGS parsing (set_logs: components, +debug, -errors, all, unknown names) and
/// what the fusion / output_code logs print (to WEFT_LOGS_FILE, or stderr).
#include "log_capture.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::LogComponent;
using weft::LogLevel;

namespace {

/// Level of every component as a string like "fusion=info foreach=off ...".
std::string levels() {
  static const char* names[] = {"fusion", "foreach", "sdpa", "optim", "cuda", "output_code", "cpu", "vision"};
  std::string s;
  for (unsigned c = 0; c < unsigned(LogComponent::count); ++c) {
    auto comp = LogComponent(c);
    const char* l = weft::log_enabled(comp, LogLevel::debug)  ? "debug"
                    : weft::log_enabled(comp, LogLevel::info)  ? "info"
                    : weft::log_enabled(comp, LogLevel::error) ? "error"
                                                               : "off";
    s += std::string(c ? " " : "") + names[c] + "=" + l;
  }
  return s;
}

/// Turns logging off again when a test ends (also on failure).
struct LogsOff {
  ~LogsOff() { weft::set_logs(""); }
};

}  // namespace

TEST_SUITE("core") {

TEST_CASE("logs: set_logs parses components, +debug, -errors and all") {
  LogsOff off;
  weft::set_logs("");
  CHECK(levels() == "fusion=off foreach=off sdpa=off optim=off cuda=off output_code=off cpu=off vision=off");
  weft::set_logs("fusion");
  CHECK(levels() == "fusion=info foreach=off sdpa=off optim=off cuda=off output_code=off cpu=off vision=off");
  weft::set_logs("fusion,+sdpa");
  CHECK(levels() == "fusion=info foreach=off sdpa=debug optim=off cuda=off output_code=off cpu=off vision=off");
  weft::set_logs("-cuda,optim,+foreach");
  CHECK(levels() == "fusion=off foreach=debug sdpa=off optim=info cuda=error output_code=off cpu=off vision=off");
  weft::set_logs("all");
  CHECK(levels() == "fusion=info foreach=info sdpa=info optim=info cuda=info output_code=info cpu=info vision=info");
  weft::set_logs("+all");
  CHECK(levels() == "fusion=debug foreach=debug sdpa=debug optim=debug cuda=debug output_code=debug cpu=debug vision=debug");
  weft::set_logs("all,-optim,+output_code");  // later items override earlier ones
  CHECK(levels() == "fusion=info foreach=info sdpa=info optim=error cuda=info output_code=debug cpu=info vision=info");
  weft::set_logs(" fusion , output_code ,, ");  // spaces and empty items are ignored
  CHECK(levels() == "fusion=info foreach=off sdpa=off optim=off cuda=off output_code=info cpu=off vision=off");
  weft::set_logs("");
  CHECK(levels() == "fusion=off foreach=off sdpa=off optim=off cuda=off output_code=off cpu=off vision=off");
}

TEST_CASE("logs: an unknown component is a weft::Error and changes nothing") {
  LogsOff off;
  weft::set_logs("sdpa");
  const std::string before = levels();
  CHECK_THROWS_WITH_AS(weft::set_logs("fusio"),
                       "weft::set_logs: unknown component 'fusio'; known: fusion, foreach, sdpa, optim, cuda, output_code, cpu, vision, "
                       "all (prefix + for debug, - for errors only; name=off|error|info|debug)",
                       weft::Error);
  CHECK(levels() == before);
  CHECK_THROWS_AS(weft::set_logs("fusion,bogus"), weft::Error);
  CHECK_THROWS_AS(weft::set_logs("+nope"), weft::Error);
  CHECK_THROWS_AS(weft::set_logs("fusion;sdpa"), weft::Error);  // the separator is a comma
  CHECK(levels() == before);
  // The environment variable is lenient: unknown names are reported on stderr and skipped.
  LogCapture capture;
  unsigned parsed = weft::detail::parse_logs("bogus,fusion", false);
  std::string text = capture.text();
  CHECK(text.find("ignoring unknown component 'bogus'") != std::string::npos);
  CHECK(parsed == unsigned(LogLevel::info));  // fusion (component 0) at info level: two bits per component
}

TEST_CASE("logs: fusion and output_code print the kernel as pseudo-source") {
  LogsOff off;
  WEFT_TEST_RNG(rng);
  Tensor<double> a = random_contiguous<double>(rng, Shape{40, 37}, Domain{-2, 2});
  Tensor<double> b = random_contiguous<double>(rng, Shape{40, 37}, Domain{-2, 2});
  Tensor<double> c = random_contiguous<double>(rng, Shape{37}, Domain{-2, 2});
  Tensor<double> y;
  LogCapture capture;
  weft::set_logs("fusion,output_code");
  y = a * weft::sigmoid(b) + c;
  weft::set_logs("");
  std::string text = capture.text();
  INFO(text);
  CHECK(text.find("[weft:fusion] fused 1 statement(s) into 1 kernel: out0[i] = (in0[i] * sigmoid(in1[i])) + in2[i]") !=
        std::string::npos);
  CHECK(text.find("[weft:output_code] kernel pointwise (cpu") != std::string::npos);
  CHECK(text.find("    out0[i] = (in0[i] * sigmoid(in1[i])) + in2[i];") != std::string::npos);
  CHECK(text.find("in0: float64[40, 37], in1: float64[40, 37], in2: float64[37]") != std::string::npos);
  CHECK(text.find("// outputs: out0: float64[40, 37]") != std::string::npos);
  CHECK(text.find("bytes per element: 32 (24 read, 8 written)") != std::string::npos);
  CHECK(text.find("1480 elements") != std::string::npos);
  // The logged kernel also ran correctly.
  auto av = values_of(a), bv = values_of(b), cv = values_of(c), yv = values_of(y);
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < yv.size(); ++i) {
    double want = av[i] / (1 + std::exp(-bv[i])) + cv[i % 37];
    wrong += std::fabs(yv[i] - want) > 4 * 0x1p-52 * (std::fabs(want) + std::fabs(cv[i % 37]) + 1);
  }
  CHECK(wrong == 0);
}

TEST_CASE("logs: info level logs a kernel type once, +fusion every run, output_code alone, -fusion nothing") {
  LogsOff off;
  WEFT_TEST_RNG(rng);
  Tensor<double> a = random_contiguous<double>(rng, Shape{9}, Domain{-2, 2});
  Tensor<double> y = weft::zeros<double>(Shape{9});
  LogCapture capture;
  weft::set_logs("fusion");
  y = a - weft::exp(a) * 3;  // a kernel type no other test logs
  y = a - weft::exp(a) * 3;
  const std::string once = capture.text();
  CHECK(LogCapture::count(once, "out0[i] = in0[i] - (exp(in0[i]) * 3)") == 1);
  weft::set_logs("+fusion");
  y = a - weft::exp(a) * 3;
  y = a - weft::exp(a) * 3;
  CHECK(LogCapture::count(capture.text(), "out0[i] = in0[i] - (exp(in0[i]) * 3)") == 3);
  CHECK(LogCapture::count(capture.text(), "[weft:output_code]") == 0);

  weft::set_logs("output_code");
  y = weft::tanh(a) / 7;
  std::string text = capture.text();
  CHECK(text.find("    out0[i] = tanh(in0[i]) / 7;") != std::string::npos);
  CHECK(LogCapture::count(text, "[weft:fusion]") == 3);  // no new fusion line

  weft::set_logs("-fusion,-output_code");
  y = weft::cos(a) / 7;
  weft::set_logs("");
  y = weft::sin(a) / 7;
  const std::string last = capture.text();
  CHECK(last.find("cos(") == std::string::npos);
  CHECK(last.find("sin(") == std::string::npos);
}

TEST_CASE("logs: copying an overlapping input is reported under fusion") {
  LogsOff off;
  Tensor<double> y = weft::from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{3, 3});
  LogCapture capture;
  weft::set_logs("fusion");
  y = y.transpose(0, 1);
  weft::set_logs("");
  CHECK(capture.text().find("overlaps the output of shape [3, 3] without matching it elementwise; reading a copy") !=
        std::string::npos);
  CHECK(values_of(y) == std::vector<double>{1, 4, 7, 2, 5, 8, 3, 6, 9});
}

}  // TEST_SUITE
