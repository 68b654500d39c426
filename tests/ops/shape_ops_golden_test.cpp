// SPDX-License-Identifier: MIT
/// @file cpu: flip, roll, repeat, tile, pad, tril, triu, outer and einsum against torch's results for the cases tests/golden/make_shape_ops_golden.py wrote (the copies exactly, einsum within the error of a double sum).
#include <fstream>
#include <sstream>

#include <weft/ops/einsum.hpp>
#include <weft/ops/flip.hpp>
#include <weft/ops/outer.hpp>
#include <weft/ops/pad.hpp>
#include <weft/ops/repeat.hpp>
#include <weft/ops/roll.hpp>
#include <weft/ops/triangle.hpp>

#include "reference.hpp"

using namespace weft_test;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.push_back("");
  return parts;
}

std::vector<std::int64_t> ints(const std::string& s) {
  std::vector<std::int64_t> out;
  for (const std::string& part : split(s, ','))
    if (!part.empty()) out.push_back(std::stoll(part));
  return out;
}

/// Operand k of a case: x[i] = ((7 i + 3 k) mod 11 - 5) / 4, as the script builds it.
Tensor<double> operand(const Shape& shape, int k) {
  std::vector<double> values(std::size_t(shape.numel()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = double(std::int64_t((7 * i + 3 * std::size_t(k)) % 11) - 5) / 4;
  return weft::from_vector<double>(values, shape);
}

/// weft's result for one case line's op, args and operands.
Tensor<double> run_case(const std::string& op, const std::string& args, const std::vector<Tensor<double>>& xs) {
  const Tensor<double>& x = xs[0];
  if (op == "flip") return weft::flip(x, ints(args));
  if (op == "roll") {
    const std::vector<std::string> parts = split(args, ';');
    const std::vector<std::int64_t> shifts = ints(parts[0]), dims = ints(parts[1]);
    return dims.empty() ? weft::roll(x, shifts[0]) : weft::roll(x, shifts, dims);
  }
  if (op == "repeat") return weft::repeat(x, ints(args));
  if (op == "tile") return weft::tile(x, ints(args));
  if (op == "pad") {
    const std::vector<std::string> parts = split(args, ';');
    const weft::PadMode mode = parts[0] == "reflect"     ? weft::PadMode::reflect
                               : parts[0] == "replicate" ? weft::PadMode::replicate
                                                         : weft::PadMode::constant;
    return weft::pad(x, ints(parts[2]), mode, std::stod(parts[1]));
  }
  if (op == "tril") return weft::tril(x, std::stoll(args));
  if (op == "triu") return weft::triu(x, std::stoll(args));
  if (op == "outer") return weft::outer(x, xs[1]);
  if (op == "einsum") return weft::einsum(args, x, xs[1]);
  FAIL("unknown op ", op);
  return {};
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("flip, roll, repeat, tile, pad, tril, triu, outer, einsum: torch's results") {
  std::ifstream in(std::string(WEFT_GOLDEN_DIR) + "/shape_ops/cases.txt");
  REQUIRE(in.good());
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = split(line, '|');
    REQUIRE(fields.size() == 5);
    INFO("case: ", fields[0], " ", fields[1], " on shapes ", fields[2]);
    std::vector<Tensor<double>> xs;
    for (const std::string& shape : split(fields[2], ';')) xs.push_back(operand(Shape(ints(shape)), int(xs.size())));
    const Tensor<double> out = run_case(fields[0], fields[1], xs);
    REQUIRE(out.shape() == Shape(ints(fields[3])));
    std::vector<double> want;
    std::istringstream values(fields[4]);
    for (double v; values >> v;) want.push_back(v);
    REQUIRE(want.size() == std::size_t(out.numel()));
    // Copies are exact; an einsum output sums at most 36 products of quarters in [-1.25, 1.25]:
    // exact in double too (multiples of 1/16 far below 2^53), so every case compares exactly.
    std::size_t i = 0;
    WEFT_CHECK_REPORT(check_output(out, [&](const std::vector<std::int64_t>&) { return Expect{want[i++]}; }));
    ++cases;
  }
  CHECK(cases == 24);
}

}  // TEST_SUITE
