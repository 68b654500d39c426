# SPDX-License-Identifier: MIT
"""Calls libgpt2_infer.so from Python with only ctypes and DLPack: the tokens of llm.c's debug state
(tests/golden/gpt2/state.bin) go in as a DLPack tensor over a numpy array (and over a torch tensor when torch is
installed), the logits come back as a DLPack capsule that numpy.from_dlpack (and torch.from_dlpack) take over
without a copy, and they must match the logits PyTorch computed for the same tokens (stored in the debug state).

usage: python3 call.py LIB [CHECKPOINT STATE]  (default: the golden files next to this repository's tests)
Exit status: 0 passed, 1 failed, 2 skipped (numpy is not installed).
"""
import ctypes
import os
import sys

try:
    import numpy as np
except ImportError:
    print("call.py: numpy is not installed; skipped")
    sys.exit(2)
try:
    import torch
except ImportError:
    torch = None

TOLERANCE = 1e-5  # as deploy_call (call.c): the observed gap is about one float32 ulp of logits below 1


# DLPack 0.6's structs (dlpack/dlpack.h), as ctypes sees them.
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]
KDLCPU, KDLINT = 1, 0

# The capsule API: a DLPack consumer takes a capsule named "dltensor" and renames it "used_dltensor"; an unused
# capsule's destructor calls the tensor's deleter (so a capsule nobody consumed still frees the logits).
api = ctypes.pythonapi
CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, CAPSULE_DESTRUCTOR]
api.PyCapsule_IsValid.restype = ctypes.c_int
api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


@CAPSULE_DESTRUCTOR
def release_unused_capsule(capsule):
    if api.PyCapsule_IsValid(capsule, b"dltensor"):
        managed = ctypes.cast(api.PyCapsule_GetPointer(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor))
        if managed.contents.deleter:
            managed.contents.deleter(managed)


class Output:
    """A weft output as a DLPack producer: numpy.from_dlpack / torch.from_dlpack call __dlpack__ once."""

    def __init__(self, managed):
        self.managed = managed

    def __dlpack__(self, stream=None, **kwargs):  # max_version, dl_device, copy: a DLPack 0.6 capsule suits all
        capsule = api.PyCapsule_New(ctypes.cast(self.managed, ctypes.c_void_p), b"dltensor", release_unused_capsule)
        self.managed = None  # the capsule owns it now
        return capsule

    def __dlpack_device__(self):
        return (KDLCPU, 0)


def borrowed_tensor(array, shape):
    """A DLManagedTensor over a C-contiguous int32 numpy array; the deleter stays NULL (weft only borrows inputs)."""
    t = DLManagedTensor()
    t.dl_tensor.data = array.ctypes.data
    t.dl_tensor.device = DLDevice(KDLCPU, 0)
    t.dl_tensor.ndim = array.ndim
    t.dl_tensor.dtype = DLDataType(KDLINT, 32, 1)
    t.dl_tensor.shape = shape
    return t


def call_logits(lib, inputs_ptr):
    """weft_call("logits", [inputs], 1, &out, 1) -> an Output, or raises with weft_last_error's text."""
    inputs = (ctypes.POINTER(DLManagedTensor) * 1)(inputs_ptr)
    out = (ctypes.POINTER(DLManagedTensor) * 1)()
    if lib.weft_call(b"logits", inputs, 1, out, 1) != 0:
        raise RuntimeError(lib.weft_last_error().decode())
    return Output(out[0])


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 1
    golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden", "gpt2")
    checkpoint = sys.argv[2] if len(sys.argv) > 3 else os.path.join(golden, "model.bin")
    state = sys.argv[3] if len(sys.argv) > 3 else os.path.join(golden, "state.bin")
    os.environ.setdefault("WEFT_GPT2_CHECKPOINT", checkpoint)  # the library reads it at the first call

    lib = ctypes.CDLL(sys.argv[1], mode=os.RTLD_LOCAL)
    lib.weft_call.restype = ctypes.c_int
    lib.weft_call.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), ctypes.c_int64,
                              ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), ctypes.c_int64]
    lib.weft_last_error.restype = ctypes.c_char_p

    # The debug state: 256 int32 header (magic 20240327, version 2, B, T), inputs, targets, logits [B, T, V].
    vocab = int(np.fromfile(checkpoint, dtype=np.int32, count=256)[3])
    header = np.fromfile(state, dtype=np.int32, count=256)
    assert header[0] == 20240327, f"{state} is not an llm.c debug state"
    B, T = int(header[2]), int(header[3])
    tokens = np.fromfile(state, dtype=np.int32, count=B * T, offset=1024).reshape(B, T)
    expected = np.fromfile(state, dtype=np.float32, count=B * T * vocab, offset=1024 + 8 * B * T).reshape(B, T, vocab)

    ok = True

    def check(what, logits):
        nonlocal ok
        logits = np.asarray(logits)
        good = logits.shape == expected.shape and logits.dtype == np.float32
        diff = float(np.max(np.abs(logits.astype(np.float64) - expected))) if good else float("inf")
        good = good and diff <= TOLERANCE
        print(f"call.py: {what}: logits {logits.shape} {logits.dtype}, max |weft - torch| = {diff:.3g} "
              f"(tolerance {TOLERANCE}): {'ok' if good else 'FAILED'}")
        ok = ok and good

    # numpy in, numpy out.
    shape = (ctypes.c_int64 * 2)(B, T)
    tensor = borrowed_tensor(np.ascontiguousarray(tokens), shape)
    check("numpy", np.from_dlpack(call_logits(lib, ctypes.pointer(tensor))))

    # An error comes back as text, not a crash.
    bad = np.array([[vocab]], dtype=np.int32)
    try:
        call_logits(lib, ctypes.pointer(borrowed_tensor(bad, (ctypes.c_int64 * 2)(1, 1))))
        print("call.py: a token outside the vocabulary was accepted: FAILED")
        ok = False
    except RuntimeError as e:
        print(f"call.py: error as expected: {e}")

    if torch is None:
        print("call.py: torch is not installed; checked with numpy only")
    else:
        # torch in (its own DLPack capsule, still owned by torch: weft borrows it), torch out.
        capsule = torch.utils.dlpack.to_dlpack(torch.from_numpy(tokens.copy()))
        pointer_of = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", api))
        managed = ctypes.cast(pointer_of(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor))
        logits = torch.from_dlpack(call_logits(lib, managed))
        check("torch", logits.numpy())
        del capsule  # unused by any consumer: its destructor calls torch's deleter

    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
