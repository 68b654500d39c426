// SPDX-License-Identifier: MIT
/// @file Device: where a tensor's storage lives (the host, or one CUDA device).
#pragma once

#include <ostream>
#include <string>

namespace weft {

class Device {
 public:
  enum class Kind : unsigned char { cpu, cuda };

  static constexpr Device cpu() { return Device(Kind::cpu, 0); }
  static constexpr Device cuda(int index = 0) { return Device(Kind::cuda, index); }

  constexpr Kind kind() const { return kind_; }
  constexpr int index() const { return index_; }
  constexpr bool is_cpu() const { return kind_ == Kind::cpu; }
  constexpr bool is_cuda() const { return kind_ == Kind::cuda; }

  friend constexpr bool operator==(Device a, Device b) = default;
  friend std::ostream& operator<<(std::ostream& os, Device d) {
    return d.is_cpu() ? os << "cpu" : os << "cuda:" << d.index_;
  }

 private:
  constexpr Device(Kind k, int i) : kind_(k), index_(i) {}
  Kind kind_ = Kind::cpu;
  int index_ = 0;
};

}  // namespace weft
