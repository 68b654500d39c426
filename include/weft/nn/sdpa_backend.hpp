// SPDX-License-Identifier: MIT
/// @file SdpaBackend and SdpaBackendGuard: which attention implementations may run in a scope.
#pragma once

#include <initializer_list>

namespace weft::nn {

/// flash: FlashAttention-2 (O(L E) memory); math: matmul + softmax + matmul (the reference).
enum class SdpaBackend : unsigned char { flash, math };

inline const char* backend_name(SdpaBackend b) { return b == SdpaBackend::flash ? "flash" : "math"; }

namespace detail {
inline unsigned backend_bit(SdpaBackend b) { return 1u << unsigned(b); }
/// The backends this thread may use, one bit each (all by default).
inline unsigned& allowed_backends() {
  thread_local unsigned bits = backend_bit(SdpaBackend::flash) | backend_bit(SdpaBackend::math);
  return bits;
}
}  // namespace detail

/// Restricts this thread's attention calls to `backends` until the guard goes out of scope,
/// like torch.nn.attention.sdpa_kernel: `SdpaBackendGuard guard({SdpaBackend::math});`.
class SdpaBackendGuard {
 public:
  SdpaBackendGuard(std::initializer_list<SdpaBackend> backends) : saved_(detail::allowed_backends()) {
    unsigned bits = 0;
    for (SdpaBackend b : backends) bits |= detail::backend_bit(b);
    detail::allowed_backends() = bits;
  }
  SdpaBackendGuard(const SdpaBackendGuard&) = delete;
  SdpaBackendGuard& operator=(const SdpaBackendGuard&) = delete;
  ~SdpaBackendGuard() { detail::allowed_backends() = saved_; }

 private:
  unsigned saved_;
};

/// True when `b` may run in this scope.
inline bool backend_allowed(SdpaBackend b) { return (detail::allowed_backends() & detail::backend_bit(b)) != 0; }

}  // namespace weft::nn
