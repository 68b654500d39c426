// SPDX-License-Identifier: MIT
/// @file Reads the vision golden files that tests/golden/make_vision_golden.py and make_resnet_golden.py wrote from torch (tests/golden/vision/*.safetensors): the file, opened once, and a tensor as float64 whatever its stored precision.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <weft/io.hpp>
#include <weft/weft.hpp>

#ifndef WEFT_GOLDEN_DIR
#error "tests/meson.build defines WEFT_GOLDEN_DIR (the tests/golden directory)"
#endif

namespace weft_test {

/// tests/golden/vision/<name>.safetensors, mapped once per test program (its tensors are read in place).
inline const weft::io::SafeTensors& vision_golden(const std::string& name) {
  static std::map<std::string, std::unique_ptr<const weft::io::SafeTensors>> files;
  std::unique_ptr<const weft::io::SafeTensors>& file = files[name];
  if (!file)
    file = std::make_unique<const weft::io::SafeTensors>(std::string(WEFT_GOLDEN_DIR) + "/vision/" + name +
                                                         ".safetensors");
  return *file;
}

/// The tensor `key` of `file` as float64 (the files hold float64 references and float32 inputs and runs).
inline weft::Tensor<double> golden_double(const weft::io::SafeTensors& file, const std::string& key) {
  if (file.dtype(key) == weft::DType::float32) return weft::cast<double>(file.get<float>(key));
  return weft::Tensor<double>(file.get<double>(key));
}

}  // namespace weft_test
