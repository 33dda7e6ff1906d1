#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that the README's tour (its first C++ block) is examples/tour.cpp from `#include <cstdio>` on,
so that the code the README shows is the code the test suite runs."""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parents[2]
readme = (root / "README.md").read_text(encoding="utf-8")
tour = (root / "examples" / "tour.cpp").read_text(encoding="utf-8")
start = readme.index("```cpp\n") + len("```cpp\n")
shown = readme[start:readme.index("```\n", start)]
expected = tour[tour.index("#include <cstdio>"):]
if shown != expected:
    print("README.md's tour differs from examples/tour.cpp: copy the file's code into the README", file=sys.stderr)
    sys.exit(1)
print("README.md's tour is examples/tour.cpp")
