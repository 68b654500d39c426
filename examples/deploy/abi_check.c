/* SPDX-License-Identifier: MIT */
/** @file The C ABI's contract, from C: results, borrowed inputs, owned outputs, and each way a call fails (unknown
 * name, wrong count, dtype, shape, device, a NULL input, a function that throws), against libabi_check.so. */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <weft/export_abi.h>

static int failures = 0;

#define CHECK(cond)                                               \
  do {                                                            \
    if (!(cond)) {                                                \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                 \
    }                                                             \
  } while (0)

/* The call fails, every output is NULL, and the error names `expected`. */
#define CHECK_FAILS(call, expected, outputs, n_outputs)                                   \
  do {                                                                                    \
    CHECK((call) != 0);                                                                   \
    CHECK(strstr(weft_last_error(), (expected)) != NULL);                                 \
    for (int i_ = 0; i_ < (n_outputs); ++i_) CHECK((outputs)[i_] == NULL);                \
    printf("error as expected: %s\n", weft_last_error());                                 \
  } while (0)

static int deleter_calls = 0;
static void count_deleter(DLManagedTensor* self) {
  (void)self;
  ++deleter_calls;
}

/* A 1-D tensor over the caller's array; its deleter only counts (weft must never call it). */
static DLManagedTensor tensor_1d(void* data, int64_t* shape, uint8_t code, uint8_t bits) {
  DLManagedTensor t = {.dl_tensor = {.data = data, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {code, bits, 1},
                                     .shape = shape},
                       .deleter = count_deleter};
  return t;
}

int main(void) {
  /* The exported names, sorted. */
  const char* names[] = {"axpy", "boom", "boom_int", "halves", "triple"};
  CHECK(weft_function_count() == 5);
  for (int64_t i = 0; i < 5 && i < weft_function_count(); ++i) CHECK(strcmp(weft_function_name(i), names[i]) == 0);
  CHECK(weft_function_name(5) == NULL && weft_function_name(-1) == NULL);
  CHECK(strcmp(weft_function_signature("axpy"), "axpy(const float32, const float32) -> (float32)") == 0);
  CHECK(weft_function_signature("nope") == NULL);

  /* axpy: 2 x + y, against the same formula in double; the output is poisoned first by weft_call's contract
   * (a NULL on entry would stay NULL if nothing were written). */
  enum { n = 7 };
  float x[n], y[n];
  for (int i = 0; i < n; ++i) {
    x[i] = 0.37f * (float)i - 1.1f;
    y[i] = (float)(i * i) * 0.05f + 0.3f;
  }
  int64_t shape_n[1] = {n};
  DLManagedTensor tx = tensor_1d(x, shape_n, kDLFloat, 32), ty = tensor_1d(y, shape_n, kDLFloat, 32);
  DLManagedTensor* in2[2] = {&tx, &ty};
  DLManagedTensor* out[2] = {(DLManagedTensor*)&tx, (DLManagedTensor*)&tx};
  CHECK(weft_call("axpy", in2, 2, out, 1) == 0);
  CHECK(out[0] != NULL && out[0] != &tx);
  if (out[0]) {
    const DLTensor* r = &out[0]->dl_tensor;
    CHECK(r->ndim == 1 && r->shape[0] == n && r->dtype.code == kDLFloat && r->dtype.bits == 32);
    CHECK(r->device.device_type == kDLCPU);
    const float* v = (const float*)((const char*)r->data + r->byte_offset);
    for (int i = 0; i < n; ++i) CHECK(fabs(v[i] - (2.0 * x[i] + y[i])) <= 1e-6 * (1 + fabs(2.0 * x[i] + y[i])));
    out[0]->deleter(out[0]);
  }

  /* triple writes the caller's buffer in place and returns a copy. */
  float z[n];
  for (int i = 0; i < n; ++i) z[i] = (float)i - 2.5f;
  DLManagedTensor tz = tensor_1d(z, shape_n, kDLFloat, 32);
  DLManagedTensor* in1[1] = {&tz};
  CHECK(weft_call("triple", in1, 1, out, 1) == 0);
  for (int i = 0; i < n; ++i) CHECK(z[i] == 3.0f * ((float)i - 2.5f));
  if (out[0]) {
    const float* v = (const float*)out[0]->dl_tensor.data;
    CHECK(v != z);
    for (int i = 0; i < n; ++i) CHECK(v[i] == z[i]);
    out[0]->deleter(out[0]);
  }

  /* halves: a tuple of two outputs of different element types. */
  double d[n];
  for (int i = 0; i < n; ++i) d[i] = 1.0 / (i + 1);
  DLManagedTensor td = tensor_1d(d, shape_n, kDLFloat, 64);
  DLManagedTensor* ind[1] = {&td};
  CHECK(weft_call("halves", ind, 1, out, 2) == 0);
  if (out[0] && out[1]) {
    const double* h = (const double*)out[0]->dl_tensor.data;
    for (int i = 0; i < n; ++i) CHECK(h[i] == d[i] * 0.5);
    CHECK(out[1]->dl_tensor.dtype.code == kDLInt && out[1]->dl_tensor.dtype.bits == 32);
    CHECK(*(const int*)out[1]->dl_tensor.data == n);
    out[0]->deleter(out[0]);
    out[1]->deleter(out[1]);
  }

  /* Every failure: nonzero, every output NULL, and the message says why. */
  CHECK_FAILS(weft_call("axpyy", in2, 2, out, 1), "axpy(const float32, const float32) -> (float32)", out, 1);
  CHECK_FAILS(weft_call(NULL, in2, 2, out, 1), "name is NULL", out, 1);
  CHECK_FAILS(weft_call("axpy", in2, 1, out, 1), "takes 2", out, 1);
  CHECK_FAILS(weft_call("axpy", in2, 2, out, 2), "returns 1", out, 2);
  DLManagedTensor* with_double[2] = {&tx, &td};
  CHECK_FAILS(weft_call("axpy", with_double, 2, out, 1), "input 1 (const float32)", out, 1);
  CHECK_FAILS(weft_call("axpy", with_double, 2, out, 1), "dtype", out, 1);
  int64_t shape_short[1] = {n - 3};
  DLManagedTensor tshort = tensor_1d(y, shape_short, kDLFloat, 32);
  DLManagedTensor* mismatched[2] = {&tx, &tshort};
  CHECK_FAILS(weft_call("axpy", mismatched, 2, out, 1), "[7]", out, 1);
  DLManagedTensor topencl = tx;
  topencl.dl_tensor.device.device_type = kDLOpenCL;
  DLManagedTensor* on_opencl[2] = {&topencl, &ty};
  CHECK_FAILS(weft_call("axpy", on_opencl, 2, out, 1), "device", out, 1);
  DLManagedTensor* with_null[2] = {&tx, NULL};
  CHECK_FAILS(weft_call("axpy", with_null, 2, out, 1), "input 1 is NULL", out, 1);
  CHECK_FAILS(weft_call("boom", in1, 1, out, 1), "boom: as planned", out, 1);
  CHECK_FAILS(weft_call("boom_int", in1, 1, out, 1), "not a std::exception", out, 1);

  /* A success clears nothing but works after failures; inputs were only borrowed. */
  CHECK(weft_call("axpy", in2, 2, out, 1) == 0);
  if (out[0]) out[0]->deleter(out[0]);
  CHECK(deleter_calls == 0);

  if (failures) fprintf(stderr, "abi_check: %d checks FAILED\n", failures);
  else printf("abi_check: every check passed\n");
  return failures != 0;
}
