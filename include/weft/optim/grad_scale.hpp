// SPDX-License-Identifier: MIT
/// @file GradScale: loss-scaled gradients for 16-bit training (torch.amp.GradScaler's scale and found_inf).
#pragma once

#include "weft/core/tensor.hpp"

namespace weft::optim {

/// The gradients passed to step() were multiplied by `scale` (loss scaling).
/// step(grads, GradScale{scale, found_inf}) divides them by `scale` inside
/// its kernel and, when found_inf != 0 (a gradient overflowed), skips the
/// step: parameters, state and step count stay as they were. Both hold one
/// float32 element on the parameters' device; on CUDA they are read by the
/// kernel, never copied to the host, so nothing waits for the GPU. It holds read-only views of
/// the caller's tensors (no copy: a found_inf written later is what the next step reads).
struct GradScale {
  TensorView<const float> scale;
  TensorView<const float> found_inf;
};

}  // namespace weft::optim
