// SPDX-License-Identifier: MIT
/// @file The MPI datatype and reduction op of every weft element type (half and bfloat16 through user ops that compute in float).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "weft/core/dtype.hpp"
#include "weft/dist/reduce_op.hpp"

namespace weft::dist::detail {

/// MPI has no 16-bit float type: half and bfloat16 travel as a 2-byte contiguous datatype and
/// reduce through user ops that widen to float, combine, and round back (one rounding per
/// combining step, as NCCL does for these types). Created by init(), freed by finalize().
struct Float16Ops {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op half[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};      // sum, max, min
  MPI_Op bfloat16[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};  // sum, max, min
};

inline Float16Ops& float16_ops() {
  static Float16Ops ops;
  return ops;
}

// The combining functions, as MPI calls them: inout[i] = in[i] (op) inout[i]. max and min keep
// MPI's own rule for float and double (inout > in ? inout : in), so NaNs behave the same way.
struct AddInFloat {
  float operator()(float in, float inout) const { return in + inout; }
};
struct MaxInFloat {
  float operator()(float in, float inout) const { return inout > in ? inout : in; }
};
struct MinInFloat {
  float operator()(float in, float inout) const { return inout < in ? inout : in; }
};

template <class T, class Combine>
void combine_float16(void* in, void* inout, int* length, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = T(Combine{}(float(a[i]), float(b[i])));
}

template <class T>
void create_float16_ops_of(MPI_Op (&ops)[3]) {
  MPI_Op_create(&combine_float16<T, AddInFloat>, 1, &ops[0]);
  MPI_Op_create(&combine_float16<T, MaxInFloat>, 1, &ops[1]);
  MPI_Op_create(&combine_float16<T, MinInFloat>, 1, &ops[2]);
}

inline void create_float16_ops() {
  Float16Ops& ops = float16_ops();
  MPI_Type_contiguous(2, MPI_BYTE, &ops.type);
  MPI_Type_commit(&ops.type);
  create_float16_ops_of<half>(ops.half);
  create_float16_ops_of<bfloat16>(ops.bfloat16);
}

inline void free_float16_ops() {
  Float16Ops& ops = float16_ops();
  if (ops.type == MPI_DATATYPE_NULL) return;
  MPI_Type_free(&ops.type);
  for (MPI_Op* set : {ops.half, ops.bfloat16})
    for (int i = 0; i < 3; ++i) MPI_Op_free(&set[i]);
  ops = Float16Ops{};
}

/// The MPI datatype that moves elements of T.
template <Element T>
MPI_Datatype mpi_datatype() {
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int8_t>) return MPI_INT8_T;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return MPI_UINT8_T;
  else if constexpr (std::is_same_v<T, std::int16_t>) return MPI_INT16_T;
  else if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
  else if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, bool>) return MPI_C_BOOL;
  else return float16_ops().type;
}

/// The MPI op of a reduction on T. avg reduces as sum (the caller divides by the group size);
/// on bool, sum and max are a logical or, min a logical and.
template <Element T>
MPI_Op mpi_op(ReduceOp op) {
  const int which = op == ReduceOp::max ? 1 : op == ReduceOp::min ? 2 : 0;
  if constexpr (std::is_same_v<T, bool>) return which == 2 ? MPI_LAND : MPI_LOR;
  else if constexpr (std::is_same_v<T, half>) return float16_ops().half[which];
  else if constexpr (std::is_same_v<T, bfloat16>) return float16_ops().bfloat16[which];
  else return which == 1 ? MPI_MAX : which == 2 ? MPI_MIN : MPI_SUM;
}

}  // namespace weft::dist::detail
