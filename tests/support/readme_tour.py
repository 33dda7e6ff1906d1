#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that the code the README shows is code the test suite runs:
- its tour (its first C++ block) is examples/tour.cpp from `#include <cstdio>` on;
- each line of its CMake and meson snippets ("Using it") is a line of the consumer projects that
  tests/packaging/ builds (tests/packaging/cmake_consumer/CMakeLists.txt, meson_consumer/meson.build).
(Its Python example is run by tests/python/test_relaxvm.py.)"""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parents[2]
readme = (root / "README.md").read_text(encoding="utf-8")
failures = []


def block(lang, start=0):
    """The text of the first ```lang block from `start` (indented blocks too, dedented)."""
    at = readme.index("```" + lang + "\n", start)
    indent = at - readme.rindex("\n", 0, at) - 1
    begin = at + len("```" + lang + "\n")
    end = readme.index(" " * indent + "```\n", begin)
    return "".join(line[indent:] + "\n" for line in readme[begin:end].splitlines())


tour = (root / "examples" / "tour.cpp").read_text(encoding="utf-8")
if block("cpp") != tour[tour.index("#include <cstdio>"):]:
    failures.append("README.md's tour differs from examples/tour.cpp: copy the file's code into the README")

for lang, consumer in [("cmake", "tests/packaging/cmake_consumer/CMakeLists.txt"),
                       ("meson", "tests/packaging/meson_consumer/meson.build")]:
    lines = {line.strip() for line in (root / consumer).read_text(encoding="utf-8").splitlines()}
    for line in block(lang).splitlines():
        if line.strip() and line.strip() not in lines:
            failures.append(f"README.md's {lang} snippet has a line that {consumer} does not: {line.strip()!r}")

for f in failures:
    print(f, file=sys.stderr)
if failures:
    sys.exit(1)
print("README.md's tour is examples/tour.cpp; its CMake and meson snippets are in tests/packaging/'s consumers")
