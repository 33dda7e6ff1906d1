#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compile-fail test runner.

usage: expect_compile_error.py FILE -- COMPILER [ARGS...]

FILE lists what the diagnostic must contain on lines `// expect-error: REGEX` (one or more), and
what it must not on lines `// reject-error: REGEX` (a follow-up error that only repeats). The
runner compiles FILE, requires the compiler to fail, and requires every REGEX to match either the
compiler's output or the relaxvm message it carries: build() reports a failed program by calling
relaxvm_program_failed_to_build (link() relaxvm_program_failed_to_link, ...) with the message as a
message_text<N>{"..."} template argument, which g++ prints in the call and clang inside a string
literal (its quotes escaped). Where the output carries such a message, it must be printed at most
once per error the compiler reports."""

import re
import subprocess
import sys

# clang: message_text<N>{\"...\"} in a string literal; g++: spelled<diagnostic{false, N, "..."}>().
MESSAGE = re.compile(r'message_text<\d+\w*>\{\\"([^"\\]*)\\"\}|spelled<diagnostic\{false, \d+, "((?:[^"\\]|\\.)*)"\}>')


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    source, command = sys.argv[1], sys.argv[3:]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    expected = [m.group(1).strip() for m in re.finditer(r"^// expect-error: (.+)$", text, re.M)]
    rejected = [m.group(1).strip() for m in re.finditer(r"^// reject-error: (.+)$", text, re.M)]
    if not expected:
        print(f"{source}: no `// expect-error:` line", file=sys.stderr)
        return 2
    proc = subprocess.run(command + [source], capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    if proc.returncode == 0:
        print(f"{source}: compiled, but it must not", file=sys.stderr)
        return 1
    found = [clang or gcc.replace("\\'", "'").replace('\\"', '"') for clang, gcc in MESSAGE.findall(output)]
    message = found[0] if found else ""
    # The message in one piece, at most once per error (g++ reports one, clang two: the consteval
    # call and the variable it initializes, each with the evaluation's notes).
    errors = len(re.findall(r"\berror:", output))
    if found and len(found) > errors:
        print(f"{source}: the message is printed {len(found)} times for {errors} errors\n{output[:6000]}",
              file=sys.stderr)
        return 1
    missing = [e for e in expected if not re.search(e, output) and not re.search(e, message)]
    present = [r for r in rejected if re.search(r, output)]
    if present:
        print(f"{source}: the diagnostic has {present}, which it must not\n{output[:6000]}", file=sys.stderr)
        return 1
    if missing:
        print(f"{source}: the diagnostic lacks {missing}\n--- relaxvm message ---\n{message}\n"
              f"--- compiler output ---\n{output[:6000]}", file=sys.stderr)
        return 1
    print(f"{source}: failed to compile as expected\n  {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
