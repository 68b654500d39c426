/* SPDX-License-Identifier: MIT */
/** @file The C ABI of a library built with WEFT_EXPORT (<weft/export.hpp>): call its exported functions by name on DLPack tensors. */
#ifndef WEFT_EXPORT_ABI_H
#define WEFT_EXPORT_ABI_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Calls the exported function `name` on n_inputs DLPack tensors and stores its n_outputs results.
 * inputs are borrowed: weft reads (or writes) their elements during the call and never calls their
 * deleters, so a caller may pass tensors over its own arrays with deleter NULL. outputs[i] receive new
 * DLManagedTensors (CPU, compact row-major) that the caller owns and releases with their deleter.
 * Returns 0, or nonzero with weft_last_error() saying why (unknown name, wrong count, dtype, shape,
 * device, or the text of the error the function threw); then every outputs[i] is NULL. No C++
 * exception crosses this boundary. */
int weft_call(const char* name, DLManagedTensor* const* inputs, int64_t n_inputs, DLManagedTensor** outputs,
              int64_t n_outputs);

/* Why this thread's last failed weft_call failed ("" before any failure); valid until its next call. */
const char* weft_last_error(void);

/* The exported functions, sorted by name: weft_function_name(i) for 0 <= i < weft_function_count()
 * (NULL outside that range). weft_function_signature(name) describes one, e.g.
 * "logits(int32 tokens) -> (float32)" (NULL for an unknown name). */
int64_t weft_function_count(void);
const char* weft_function_name(int64_t i);
const char* weft_function_signature(const char* name);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_EXPORT_ABI_H */
