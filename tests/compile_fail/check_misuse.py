#!/usr/bin/env python3
"""check_misuse.py STAMP CASE -- COMPILER ARGS...: compiles one case of misuse.cpp (the compiler
command gets -DWEFT_MISUSE=CASE). Case 0 is the same code used correctly and must compile; every
other case is a misuse and must not. On success writes STAMP (the build's record that the case was
checked); otherwise prints what went wrong and exits 1, which fails the build."""
import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    stamp, case = sys.argv[1], int(sys.argv[2])
    command = sys.argv[4:] + [f"-DWEFT_MISUSE={case}"]
    result = subprocess.run(command, capture_output=True, text=True)
    compiled = result.returncode == 0
    if case == 0 and not compiled:
        print(f"tests/compile_fail/misuse.cpp case 0 (correct use) does not compile:\n{result.stderr}", file=sys.stderr)
        return 1
    if case != 0 and compiled:
        print(f"tests/compile_fail/misuse.cpp case {case} compiles, but must not", file=sys.stderr)
        return 1
    with open(stamp, "w", encoding="utf-8") as out:
        out.write("compiles\n" if compiled else result.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
