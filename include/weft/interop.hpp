// SPDX-License-Identifier: MIT
/// @file The interop umbrella: DLPack and Eigen bridges (not in weft.hpp: it needs <dlpack/dlpack.h>).
#pragma once

#include "weft/weft.hpp"
#include "weft/interop/dlpack.hpp"
#include "weft/interop/eigen.hpp"
