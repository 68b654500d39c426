// SPDX-License-Identifier: MIT
/// @file Reads the optimizer golden files that tests/golden/make_optim_golden.py wrote from torch.optim
/// (format described there): options, inputs, and the float64 / float32-error / bf16 trajectories.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <weft/core/shape.hpp>

#ifndef WEFT_GOLDEN_DIR
#error "tests/meson.build defines WEFT_GOLDEN_DIR (the tests/golden directory)"
#endif

namespace weft_test {

/// Values per step (index 0 = after step 1), per tensor kind ("param", "exp_avg", ...).
using Trajectory = std::map<std::string, std::vector<std::vector<double>>>;

struct OptimGolden {
  std::string name, optimizer;
  std::map<std::string, std::string> options;  // as torch's keyword arguments: "betas" -> "0.9,0.999"
  std::vector<weft::Shape> shapes;
  int steps = 0;
  std::set<int> skips;  // steps that GradScaler skipped (found_inf)
  std::vector<std::string> states;
  std::vector<double> param0;
  std::vector<double> lr;                 // per step
  std::vector<std::vector<double>> grad;  // per step, all tensors flattened in order
  Trajectory f64, bf16;
  std::vector<std::map<std::string, double>> f32err;  // per step: max |torch float32 - float64|
};

inline std::vector<double> read_values(std::istringstream& in) {
  std::vector<double> v;
  for (double x; in >> x;) v.push_back(x);
  return v;
}

inline OptimGolden load_optim_golden(const std::string& name) {
  const std::string path = std::string(WEFT_GOLDEN_DIR) + "/optim/" + name + ".txt";
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), "cannot open " << path << " (run tests/golden/make_optim_golden.py)");
  OptimGolden g;
  g.name = name;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "optimizer") {
      in >> g.optimizer;
    } else if (key == "options") {
      for (std::string kv; in >> kv;) g.options[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    } else if (key == "shapes") {
      for (std::string s; in >> s;) {
        std::vector<std::int64_t> dims;
        std::istringstream ds(s);
        for (std::string d; std::getline(ds, d, ',');) dims.push_back(std::stoll(d));
        g.shapes.emplace_back(dims);
      }
    } else if (key == "steps") {
      in >> g.steps;
      g.lr.resize(std::size_t(g.steps));
      g.grad.resize(std::size_t(g.steps));
      g.f32err.resize(std::size_t(g.steps));
    } else if (key == "skips") {
      for (int s; in >> s;) g.skips.insert(s);
    } else if (key == "states") {
      for (std::string s; in >> s;) g.states.push_back(s);
    } else if (key == "param0") {
      g.param0 = read_values(in);
    } else {
      int step = 0;
      in >> step;
      REQUIRE_MESSAGE((step >= 1 && step <= g.steps), path << ": bad line " << line.substr(0, 40));
      const std::size_t i = std::size_t(step - 1);
      if (key == "lr") {
        in >> g.lr[i];
      } else if (key == "grad") {
        g.grad[i] = read_values(in);
      } else if (key == "f64" || key == "bf16") {
        std::string what;
        in >> what;
        auto& traj = (key == "f64" ? g.f64 : g.bf16)[what];
        traj.resize(std::size_t(g.steps));
        traj[i] = read_values(in);
      } else if (key == "f32err") {
        for (std::string kv; in >> kv;) g.f32err[i][kv.substr(0, kv.find('='))] = std::stod(kv.substr(kv.find('=') + 1));
      } else {
        FAIL(path << ": unknown key " << key);
      }
    }
  }
  return g;
}

}  // namespace weft_test
