// SPDX-License-Identifier: MIT
/// @file weft::dist, the distributed layer (MPI for CPU tensors): the runtime, groups, device meshes and collectives. Not included by weft.hpp.
#pragma once

#include "weft/weft.hpp"

#include "weft/dist/reduce_op.hpp"
#include "weft/dist/runtime.hpp"
#include "weft/dist/group.hpp"
#include "weft/dist/device_mesh.hpp"
#include "weft/dist/agreement.hpp"
#include "weft/dist/collectives.hpp"
#include "weft/dist/list_collectives.hpp"
