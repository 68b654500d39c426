#!/usr/bin/env python3
"""make_shape_ops_golden: writes tests/golden/shape_ops/cases.txt, what torch computes for flip,
roll, repeat, tile, pad, tril, triu, outer and einsum on small float64 inputs
(tests/ops/shape_ops_golden_test.cpp runs the same calls in weft and compares: the copies exactly,
einsum within the error of a double sum).

Inputs need no file: operand k of a case with shape S holds x[i] = ((7 i + 3 k) mod 11 - 5) / 4 for
i over S in row-major order (exact in every dtype the test uses).

File format, one case per line, fields split by '|':
  op | args | shape of operand 0 [; shape of operand 1] | output shape | output values (row-major)
args: flip: dims; roll: shifts;dims (dims empty: flattened); repeat, tile: counts; pad: mode;value;pads;
tril, triu: k; outer: -; einsum: the spec. Lists are comma-separated; values are repr() of doubles.
"""

import pathlib

import torch
import torch.nn.functional as F

OUT = pathlib.Path(__file__).resolve().parent / "shape_ops" / "cases.txt"


def operand(shape, k):
    n = 1
    for e in shape:
        n *= e
    values = [((7 * i + 3 * k) % 11 - 5) / 4 for i in range(n)]
    return torch.tensor(values, dtype=torch.float64).reshape(shape)


def ints(xs):
    return ",".join(str(x) for x in xs)


def main():
    lines = []

    def case(op, args, shapes, out):
        values = " ".join(repr(float(v)) for v in out.reshape(-1).tolist())
        lines.append(f"{op}|{args}|{';'.join(ints(s) for s in shapes)}|{ints(out.shape)}|{values}")

    x = operand([2, 3, 4], 0)
    case("flip", "0,2", [[2, 3, 4]], torch.flip(x, [0, 2]))
    case("flip", "-2", [[2, 3, 4]], torch.flip(x, [-2]))
    y = operand([3, 4], 0)
    case("roll", "5,-2;0,1", [[3, 4]], torch.roll(y, (5, -2), (0, 1)))
    case("roll", "-7;", [[3, 4]], torch.roll(y, -7))
    z = operand([2, 3], 0)
    case("repeat", "2,1,3", [[2, 3]], z.repeat(2, 1, 3))
    case("tile", "2", [[2, 3]], torch.tile(z, (2,)))
    case("tile", "2,1,2", [[2, 3]], torch.tile(z, (2, 1, 2)))
    p = operand([1, 2, 3, 4], 0)
    for mode, pads in (("reflect", (1, 2, -1, 1)), ("replicate", (3, -1, 2, 0)), ("constant", (2, -1, 0, 1))):
        value = 1.5 if mode == "constant" else 0.0
        out = F.pad(p, pads, mode=mode, value=value) if mode == "constant" else F.pad(p, pads, mode=mode)
        case("pad", f"{mode};{value!r};{ints(pads)}", [[1, 2, 3, 4]], out)
    case("tril", "-1", [[2, 3, 4]], torch.tril(x, -1))
    case("triu", "2", [[3, 5]], torch.triu(operand([3, 5], 0), 2))
    case("outer", "-", [[4], [3]], torch.outer(operand([4], 0), operand([3], 1)))
    for spec, sa, sb in (
        ("bij,bjk->bik", [2, 3, 4], [2, 4, 5]),
        ("bij,bkj->kbi", [2, 3, 4], [2, 5, 4]),
        ("ij,jk->ki", [3, 4], [4, 5]),
        ("ii,i->i", [3, 3], [3]),
        ("...ij,jk", [2, 3, 4], [4, 5]),
        ("ij,ab->", [2, 3], [3, 2]),
        ("i,j", [3], [4]),
        ("Ab,bA", [3, 3], [3, 3]),
        ("ij,jk->ik", [2, 1], [3, 4]),
        ("bi,ib->i", [2, 3], [3, 2]),
        ("...i,...i->...", [2, 3, 4], [3, 4]),
    ):
        case("einsum", spec, [sa, sb], torch.einsum(spec, operand(sa, 0), operand(sb, 1)))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} cases to {OUT}")


if __name__ == "__main__":
    main()
