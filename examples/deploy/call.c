/* SPDX-License-Identifier: MIT */
/** @file Calls libgpt2_infer.so from C: loads it with dlopen, passes a DLPack tensor over its own token array to
 * weft_call("logits"), checks the logits against the ones PyTorch computed for the same tokens (llm.c's debug
 * state, tests/golden/gpt2/state.bin), and frees the output with its deleter.
 *
 * usage: deploy_call [LIB [CHECKPOINT STATE]]; without arguments, the library and golden files of this build. */

#define _POSIX_C_SOURCE 200809L /* setenv */

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/export_abi.h>

typedef int (*weft_call_fn)(const char*, DLManagedTensor* const*, int64_t, DLManagedTensor**, int64_t);
typedef const char* (*weft_last_error_fn)(void);

/* llm.c's files open with a 256 int32 header. */
static int read_header(FILE* f, int32_t header[256], int32_t magic, const char* path) {
  if (fread(header, sizeof(int32_t), 256, f) != 256 || header[0] != magic) {
    fprintf(stderr, "deploy_call: '%s' is not an llm.c file with magic %d\n", path, (int)magic);
    return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
#if defined(WEFT_DEPLOY_LIB) && defined(WEFT_GPT2_GOLDEN_DIR)
  const char* lib = argc > 1 ? argv[1] : WEFT_DEPLOY_LIB;
  const char* checkpoint = argc > 3 ? argv[2] : WEFT_GPT2_GOLDEN_DIR "/model.bin";
  const char* state_path = argc > 3 ? argv[3] : WEFT_GPT2_GOLDEN_DIR "/state.bin";
#else
  if (argc < 4) {
    fprintf(stderr, "usage: deploy_call LIB CHECKPOINT STATE\n");
    return 2;
  }
  const char* lib = argv[1];
  const char* checkpoint = argv[2];
  const char* state_path = argv[3];
#endif
  /* The library reads its checkpoint from the environment, at the first call. */
  setenv("WEFT_GPT2_CHECKPOINT", checkpoint, 0);

  /* The vocabulary size from the checkpoint's header (magic, version, maxT, V, ...). */
  int32_t header[256];
  FILE* f = fopen(checkpoint, "rb");
  if (!f || !read_header(f, header, 20240326, checkpoint)) return 1;
  fclose(f);
  const int64_t V = header[3];

  /* The debug state: header (magic, version, B, T), inputs [B, T], targets [B, T], logits [B, T, V] (float32). */
  f = fopen(state_path, "rb");
  if (!f || !read_header(f, header, 20240327, state_path)) return 1;
  const int64_t B = header[2], T = header[3];
  int32_t* tokens = malloc((size_t)(B * T) * sizeof(int32_t));
  int32_t* targets = malloc((size_t)(B * T) * sizeof(int32_t));
  float* expected = malloc((size_t)(B * T * V) * sizeof(float));
  if (fread(tokens, sizeof(int32_t), (size_t)(B * T), f) != (size_t)(B * T) ||
      fread(targets, sizeof(int32_t), (size_t)(B * T), f) != (size_t)(B * T) ||
      fread(expected, sizeof(float), (size_t)(B * T * V), f) != (size_t)(B * T * V)) {
    fprintf(stderr, "deploy_call: '%s' is truncated\n", state_path);
    return 1;
  }
  fclose(f);

  void* so = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    fprintf(stderr, "deploy_call: %s\n", dlerror());
    return 1;
  }
  weft_call_fn call = (weft_call_fn)dlsym(so, "weft_call");
  weft_last_error_fn last_error = (weft_last_error_fn)dlsym(so, "weft_last_error");
  if (!call || !last_error) {
    fprintf(stderr, "deploy_call: '%s' has no weft_call / weft_last_error\n", lib);
    return 1;
  }

  /* A DLPack tensor over our own array: weft borrows it (the deleter stays NULL: nothing to release). */
  int64_t shape[2] = {B, T};
  DLManagedTensor input = {/* strides NULL: compact row-major; byte_offset 0 */
                           .dl_tensor = {.data = tokens, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLInt, 32, 1},
                                         .shape = shape}};
  DLManagedTensor* inputs[1] = {&input};
  DLManagedTensor* output = NULL;
  if (call("logits", inputs, 1, &output, 1) != 0) {
    fprintf(stderr, "deploy_call: %s\n", last_error());
    return 1;
  }

  const DLTensor* r = &output->dl_tensor;
  int ok = r->ndim == 3 && r->shape[0] == B && r->shape[1] == T && r->shape[2] == V && r->dtype.code == kDLFloat &&
           r->dtype.bits == 32 && r->device.device_type == kDLCPU;
  double max_diff = 0;
  if (ok) {
    /* Strides may be given: read through them. */
    const float* data = (const float*)((const char*)r->data + r->byte_offset);
    const int64_t s0 = r->strides ? r->strides[0] : T * V, s1 = r->strides ? r->strides[1] : V,
                  s2 = r->strides ? r->strides[2] : 1;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t v = 0; v < V; ++v) {
          const double d = fabs((double)data[b * s0 + t * s1 + v * s2] - expected[(b * T + t) * V + v]);
          if (!(d <= max_diff)) max_diff = isnan(d) ? INFINITY : d;
        }
  } else {
    fprintf(stderr, "deploy_call: the output is not float32 [%lld, %lld, %lld] on the CPU\n", (long long)B,
            (long long)T, (long long)V);
  }
  output->deleter(output);

  /* float32 logits (below 1 in size) of a 2-layer model against PyTorch: the observed gap is about one ulp (1e-7);
   * 1e-5 leaves room for another SIMD width or summation order, and still catches a wrong layer or position. */
  const double tolerance = 1e-5;
  printf("deploy_call: logits [%lld, %lld, %lld] from %s, max |weft - torch| = %.3g (tolerance %g)\n", (long long)B,
         (long long)T, (long long)V, lib, max_diff, tolerance);
  ok = ok && max_diff <= tolerance;
  dlclose(so);
  free(tokens);
  free(targets);
  free(expected);
  if (!ok) fprintf(stderr, "deploy_call: FAILED\n");
  return ok ? 0 : 1;
}
