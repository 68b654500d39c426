#!/usr/bin/env python3
"""check_io_roundtrip DIR: the files weft wrote into DIR (tests/io/io_test.cpp, when scripts/test
sets WEFT_IO_ROUNDTRIP_DIR) load in Python's safetensors and numpy with the values of
make_io_golden.py's formulas. Exits 0 when every tensor matches, 1 otherwise (naming it), and 2
when numpy or safetensors is not installed (scripts/test reports that as skipped).
"""

import json
import pathlib
import sys

try:
    import numpy as np
    from safetensors import deserialize, safe_open
except ImportError as e:
    print(f"check_io_roundtrip: skipped ({e})")
    sys.exit(2)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_io_golden import METADATA, TENSORS, values  # noqa: E402


def expected(name):
    dtype, shape = TENSORS[name]
    return dtype, values(dtype, shape)


def main() -> int:
    out = pathlib.Path(sys.argv[1])
    failures = []
    data = (out / "weft.safetensors").read_bytes()
    # The Rust parser behind safetensors checks the header, offsets and sizes; deserialize gives the
    # raw bytes of every tensor, bfloat16 included (numpy has no bfloat16).
    raw = dict(deserialize(data))
    wanted = dict(TENSORS, f32_t=("F32", (3, 2)))
    if set(raw) != set(wanted):
        failures.append(f"weft.safetensors holds {sorted(raw)}, expected {sorted(wanted)}")
    for name, (dtype, shape) in wanted.items():
        want = values("F32", (2, 3)).T.copy() if name == "f32_t" else expected(name)[1]
        got = raw.get(name)
        if got is None or got["dtype"] != dtype or list(got["shape"]) != list(shape) or bytes(got["data"]) != want.tobytes():
            failures.append(f"weft.safetensors: tensor {name} differs")
    with safe_open(str(out / "weft.safetensors"), framework="numpy") as f:
        for name in f.keys():
            if raw[name]["dtype"] != "BF16" and f.get_tensor(name).tobytes() != bytes(raw[name]["data"]):
                failures.append(f"weft.safetensors: tensor {name} reads differently through safe_open")
    header = json.loads(data[8:8 + int.from_bytes(data[:8], "little")])
    if header.get("__metadata__") != METADATA:
        failures.append(f"weft.safetensors: metadata {header.get('__metadata__')} != {METADATA}")
    if int.from_bytes(data[:8], "little") % 8:
        failures.append("weft.safetensors: the header is not padded to 8 bytes")

    for name, (dtype, shape) in dict(TENSORS, f32_t=("F32", (3, 2))).items():
        if dtype == "BF16":
            continue
        want = values("F32", (2, 3)).T if name == "f32_t" else expected(name)[1]
        got = np.load(out / f"{name}.npy")
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            failures.append(f"{name}.npy: got {got.dtype} {got.shape} {got.tolist()}, expected {want.tolist()}")

    for f in failures:
        print("check_io_roundtrip:", f)
    print(f"check_io_roundtrip: {len(wanted)} safetensors tensors and the .npy files, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
