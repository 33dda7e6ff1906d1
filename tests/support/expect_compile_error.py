#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compile-fail test runner.

usage: expect_compile_error.py FILE -- COMPILER [ARGS...]

FILE lists what the diagnostic must contain on lines `// expect-error: REGEX` (one or more). The
runner compiles FILE, requires the compiler to fail, and requires every REGEX to match either the
compiler's output or the relaxvm message it carries: build() reports a failed program through the
template arguments of relaxvm_program_failed_to_build, as 30-character message_chunk strings, which
the runner joins back into one line."""

import re
import subprocess
import sys

CHUNK = re.compile(r'message_chunk\{"((?:[^"\\]|\\.)*)"\}')


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    source, command = sys.argv[1], sys.argv[3:]
    with open(source, encoding="utf-8") as f:
        expected = [m.group(1).strip() for m in re.finditer(r"^// expect-error: (.+)$", f.read(), re.M)]
    if not expected:
        print(f"{source}: no `// expect-error:` line", file=sys.stderr)
        return 2
    proc = subprocess.run(command + [source], capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    if proc.returncode == 0:
        print(f"{source}: compiled, but it must not", file=sys.stderr)
        return 1
    message = ""
    for line in output.splitlines():
        chunks = CHUNK.findall(line)
        if chunks:
            message = "".join(chunks).replace("\\'", "'").rstrip()
            break
    missing = [e for e in expected if not re.search(e, output) and not re.search(e, message)]
    if missing:
        print(f"{source}: the diagnostic lacks {missing}\n--- relaxvm message ---\n{message}\n"
              f"--- compiler output ---\n{output[:6000]}", file=sys.stderr)
        return 1
    print(f"{source}: failed to compile as expected\n  {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
