#!/usr/bin/env python3
"""make_io_golden: writes tests/golden/io/, the safetensors and .npy files made by Python's
safetensors and numpy that tests/io/io_test.cpp loads (pip install numpy safetensors).

Every tensor holds element k (row-major) = the formula of its dtype in VALUES, which the C++ test
computes again on its own. check_io_roundtrip.py imports TENSORS to check weft's own files.
"""

import pathlib
import sys

import numpy as np
from safetensors import TensorSpec, serialize_file

OUT = pathlib.Path(__file__).resolve().parent / "io"

# Element k of a tensor of each dtype (all exact in that dtype).
VALUES = {
    "F32": lambda k: k * 0.5 - 1.0,
    "F64": lambda k: k * 0.25 - 0.5,
    "F16": lambda k: k * 0.5 - 1.0,
    "BF16": lambda k: k * 0.5 - 1.0,
    "I32": lambda k: (k - 3) * 1000003,
    "I64": lambda k: (k - 2) * 2**40 + k,
    "BOOL": lambda k: k % 3 == 0,
    "I8": lambda k: k * 41 - 128,  # the ends of the range: -128 .. 77 for k < 6
    "U8": lambda k: k * 50 + 5,  # 5 .. 255
    "I16": lambda k: (k - 3) * 10007,  # -30021 .. 20014
}
NUMPY = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I32": np.int32, "I64": np.int64, "BOOL": np.bool_,
         "I8": np.int8, "U8": np.uint8, "I16": np.int16}

# name: (dtype, shape); every one of them is in all.safetensors.
TENSORS = {
    "f32": ("F32", (2, 3)),
    "f64": ("F64", (4,)),
    "f16": ("F16", (2, 2)),
    "bf16": ("BF16", (3, 2)),
    "i32": ("I32", (2, 3)),
    "i64": ("I64", (5,)),
    "bool": ("BOOL", (7,)),
    "i8": ("I8", (2, 3)),
    "u8": ("U8", (6,)),
    "i16": ("I16", (3, 2)),
    "scalar": ("F32", ()),
    "empty": ("F32", (0, 3)),
}
METADATA = {"format": "pt", "source": "make_io_golden.py"}


def values(dtype, shape):
    """The tensor's elements as raw little-endian bytes (bfloat16: the top half of float32)."""
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "BF16":
        f = np.array([VALUES[dtype](k) for k in range(n)], dtype="<f4").reshape(shape)
        return (f.view("<u4") >> 16).astype("<u2")
    return np.array([VALUES[dtype](k) for k in range(n)], dtype=NUMPY[dtype]).reshape(shape)


def main() -> int:
    OUT.mkdir(exist_ok=True)
    st_name = {"F32": "float32", "F64": "float64", "F16": "float16", "BF16": "bfloat16", "I32": "int32",
               "I64": "int64", "BOOL": "bool", "I8": "int8", "U8": "uint8", "I16": "int16"}
    arrays = {name: (st_name[d], values(d, s).copy(order="C")) for name, (d, s) in TENSORS.items()}
    # A dtype weft has no element type for: the file opens, the tensor does not load.
    arrays["u16"] = ("uint16", np.array([1, 2, 3], dtype=np.uint16))
    # serialize_file reads the arrays' memory through the addresses; `arrays` keeps them alive.
    specs = {name: TensorSpec(dtype=dtype, shape=list(a.shape), data_ptr=a.ctypes.data, data_len=a.nbytes) for name, (dtype, a) in arrays.items()}
    serialize_file(specs, str(OUT / "all.safetensors"), metadata=METADATA)

    for name, (d, s) in TENSORS.items():
        if d != "BF16":
            np.save(OUT / f"{name}.npy", values(d, s))
    np.save(OUT / "f32_fortran.npy", np.asfortranarray(values("F32", (2, 3))))
    for version in ((2, 0), (3, 0)):
        with open(OUT / f"i64_v{version[0]}.npy", "wb") as f:
            np.lib.format.write_array(f, values("I64", (5,)), version=version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
