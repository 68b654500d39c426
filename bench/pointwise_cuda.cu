// SPDX-License-Identifier: MIT
/// @file The pointwise benchmark's CUDA build: bench/pointwise.cpp compiled by nvcc, timing weft's CUDA kernels.
//
// Runs with --device cuda (the default here): 256M-element tensors on the
// device, cudaEvent timing, a device-to-device copy of the same bytes as the
// roofline. The CPU benchmark is bench/pointwise (the host build).
#include "pointwise.cpp"
