#!/usr/bin/env python3
"""make_random_golden: writes tests/golden/random/philox.txt, the values weft's random factories
must draw after weft::manual_seed, computed here without weft (tests/core/random.cpp replays the
same calls and compares: rand and randint bit for bit, randn within 1 ulp of the double).

Philox4x32-10 is written from its description (Salmon, Moraes, Dror, Shaw: "Parallel random
numbers: as easy as 1, 2, 3", SC'11, section 3.3) and checked against Random123's known-answer
vectors before anything is written. weft's conventions on top of it (docs/api.md, "Factories"):
- the 128-bit counter is (c0, c1, c2, c3) = (low 32 bits of the counter number, high 32, 0, 0),
  the key (k0, k1) = (low 32 bits of the seed, high 32);
- a draw of n values after manual_seed(s) takes counters offset .. offset + n - 1 of key s, and
  the offset starts at 0 and grows by n per draw (set_offset moves it);
- float u = (w0 >> 8) * 2^-24; double u = b * 2^-53 with b the low 53 bits of
  (w0 << 21) ^ (w1 >> 11) ^ (w1 << 21);
- normal = sqrt(-2 ln u1) cos(2 pi u2), u1 = (w0 + 1) 2^-32, u2 = w1 2^-32 (double; float rounds it);
- randint(low, high) = low + ((w0 << 32) | w1) mod (high - low).

File format, one line each: `seed S` (manual_seed(S)), `offset K` (the global generator's offset
set to K), or `CALL DTYPE N [LOW HIGH] : values` for a call of shape [N]; floating values as
the hex of their IEEE bits, integers in decimal.
"""

import math
import pathlib
import struct

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent / "random" / "philox.txt"
MASK32 = 0xFFFFFFFF
MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
WEYL = (0x9E3779B9, 0xBB67AE85)


def philox4x32_10(counter, key):
    """Ten rounds; each multiplies c0 and c2 into 64-bit products and mixes the halves with the
    other words and the key; the key is bumped by the Weyl constants between rounds."""
    c = list(counter)
    k = list(key)
    for r in range(10):
        if r > 0:
            k = [(k[0] + WEYL[0]) & MASK32, (k[1] + WEYL[1]) & MASK32]
        p0 = MULTIPLIERS[0] * c[0]
        p1 = MULTIPLIERS[1] * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & MASK32, (p0 >> 32) ^ c[3] ^ k[1], p0 & MASK32]
    return c


# Random123 1.14, examples/kat_vectors: philox4x32 with 10 rounds.
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK32,) * 4, (MASK32, MASK32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def words(seed, counter):
    return philox4x32_10((counter & MASK32, counter >> 32, 0, 0), (seed & MASK32, seed >> 32))


def uniform_float(seed, counter):
    return (words(seed, counter)[0] >> 8) * 2.0**-24


def uniform_double(seed, counter):
    w = words(seed, counter)
    bits = ((w[0] << 21) ^ (w[1] >> 11) ^ (w[1] << 21)) & ((1 << 53) - 1)
    return bits * 2.0**-53


def normal(seed, counter):
    w = words(seed, counter)
    u1 = (w[0] + 1.0) * 2.0**-32
    u2 = w[1] * 2.0**-32
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def uniform_int(seed, counter, low, high):
    w = words(seed, counter)
    return low + ((w[0] << 32) | w[1]) % (high - low)


def hex_f32(x):
    return "%08x" % struct.unpack("<I", np.float32(x).tobytes())[0]


def hex_f64(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", x))[0]


# Each seed: the calls in order (they share the generator's counters), then a jump of the
# offset across 2^32 (the carry into the counter's second word) and more calls.
CALLS = [
    ("rand", "float32", 5, ()),
    ("randn", "float64", 4, ()),
    ("randint", "int64", 6, (-10, 1000)),
    ("rand", "float64", 3, ()),
    ("randn", "float32", 3, ()),
    ("randint", "int32", 4, (0, 7)),
]
SEEDS = [0, 42, 67280421310721, 2**64 - 1]
OFFSETS = [2**32 - 3, 123456789012]


def main():
    for counter, key, want in KNOWN_ANSWERS:
        got = tuple(philox4x32_10(counter, key))
        assert got == want, "Philox4x32-10 fails a known answer: %s" % [hex(x) for x in got]
    lines = ["# written by tests/golden/make_random_golden.py (format described there)"]
    for seed in SEEDS:
        lines.append("seed %d" % seed)
        for offset in [0] + OFFSETS:
            if offset:
                lines.append("offset %d" % offset)
            for name, dtype, n, args in CALLS:
                values = []
                for i in range(n):
                    c = offset + i
                    if name == "rand":
                        values.append(hex_f32(uniform_float(seed, c)) if dtype == "float32" else hex_f64(uniform_double(seed, c)))
                    elif name == "randn":
                        values.append(hex_f32(normal(seed, c)) if dtype == "float32" else hex_f64(normal(seed, c)))
                    else:
                        values.append(str(uniform_int(seed, c, *args)))
                offset += n
                lines.append(" ".join([name, dtype, str(n)] + [str(a) for a in args] + [":"] + values))
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
