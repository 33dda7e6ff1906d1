// SPDX-License-Identifier: Apache-2.0
// doctest's main, compiled once and linked into every test executable.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
