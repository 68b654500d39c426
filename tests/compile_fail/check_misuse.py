#!/usr/bin/env python3
"""check_misuse.py STAMP SOURCE correct|misuse -- COMPILER ARGS...: compiles misuse.cpp (SOURCE).

correct: with -DWEFT_MISUSE=0 (main() alone, the code used correctly), which must compile.
misuse:  with -DWEFT_MISUSE=1 (main() and every misuse_N() function), which must not; and each
         misuse_N() must get an error of its own: a diagnostic (the error itself, or the note that
         says which of its lines instantiated the failing template) that points into its lines. A
         function that compiles, or whose error was never reported, fails the check by name.

One compile checks every case: the compiler reports each function's error and goes on (warnings
off, no error limit). On success writes STAMP (the build's record: the compiler's diagnostics);
otherwise prints what went wrong and exits 1, which fails the build."""
import os
import re
import subprocess
import sys


def case_lines(source: str) -> dict:
    """{N: (first line, last line)} of each `void misuse_N() {` ... `}` function in SOURCE."""
    cases, current = {}, None
    with open(source, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            start = re.match(r"void misuse_(\d+)\(\) \{$", line)
            if start:
                current = (int(start.group(1)), number)
            elif current and line.rstrip() == "}":
                cases[current[0]] = (current[1], number)
                current = None
    return cases


def main() -> int:
    if len(sys.argv) < 6 or sys.argv[4] != "--" or sys.argv[3] not in ("correct", "misuse"):
        print(__doc__, file=sys.stderr)
        return 2
    stamp, source, mode = sys.argv[1:4]
    compiler = sys.argv[5:]
    if mode == "correct":
        result = subprocess.run(compiler + ["-DWEFT_MISUSE=0", source], capture_output=True, text=True)
        if result.returncode != 0:
            print(f"{source}: the correct use (WEFT_MISUSE=0) does not compile:\n{result.stderr}", file=sys.stderr)
            return 1
    else:
        cases = case_lines(source)
        if not cases:
            print(f"{source}: no misuse_N() functions found", file=sys.stderr)
            return 1
        no_limit = "-ferror-limit=0" if "clang" in os.path.basename(compiler[0]) else "-fmax-errors=0"
        result = subprocess.run(compiler + ["-w", no_limit, "-DWEFT_MISUSE=1", source], capture_output=True, text=True)
        name = re.escape(os.path.basename(source))
        reported = {int(m) for m in re.findall(rf"{name}:(\d+):", result.stderr)}
        silent = [n for n, (first, last) in sorted(cases.items()) if not any(first <= line <= last for line in reported)]
        if result.returncode == 0 or silent:
            print(f"{source}: misuse compiled without an error in misuse_{', misuse_'.join(map(str, silent or cases))}"
                  f" (exit status {result.returncode}); every misuse must fail to compile.\n{result.stderr}",
                  file=sys.stderr)
            return 1
    with open(stamp, "w", encoding="utf-8") as out:
        out.write(result.stderr or "compiles\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
