// SPDX-License-Identifier: MIT
/// @file weft::io, tensor files: safetensors (save_safetensors, SafeTensors) and NumPy .npy (save_npy, load_npy). Not part of weft.hpp.
#pragma once

#include "weft/io/npy.hpp"
#include "weft/io/safetensors.hpp"
