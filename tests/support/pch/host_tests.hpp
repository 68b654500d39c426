// SPDX-License-Identifier: MIT
/// @file Precompiled header of the host test programs (Meson cpp_pch): doctest, weft with Eigen,
/// and the shared test support parsed once per build instead of once per translation unit
/// (~2-3 s each). Every test file still includes what it uses (a -Db_pch=false build checks it).
#include <doctest/doctest.h>

#include <weft/weft.hpp>

#include "pointwise_check.hpp"
#include "reference.hpp"
