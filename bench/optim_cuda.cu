// SPDX-License-Identifier: MIT
/// @file The optimizer benchmark's CUDA build: bench/optim.cpp compiled by nvcc, timing AdamW on the device.
#include "optim.cpp"
