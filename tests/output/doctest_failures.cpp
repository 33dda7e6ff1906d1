// SPDX-License-Identifier: Apache-2.0
// Checks that fail on purpose: tests/meson.build runs this program and asserts on what doctest
// printed (tests/support/expect_output.py), so that a failing check on relaxvm values stays
// readable: both values, and for tensors the first differing element.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <relaxvm/doctest.hpp>

namespace rv = relaxvm;

TEST_CASE("failing checks on relaxvm values") {
  const rv::tensor y = rv::tensor::from<float>({1, 2, 3.5f, 4}, {2, 2});
  const rv::tensor want = rv::tensor::from<float>({1, 2, 3, 4}, {2, 2});
  CHECK(y.shape() == rv::shape{3, 2});
  CHECK(y == want);
  CHECK(rv::value(7) == rv::value(rv::string("seven")));
  RELAXVM_CHECK_ALLCLOSE(y, want);
  RELAXVM_CHECK_EQUAL(y, rv::tensor::from<float>({1, 2, 3.5f}, {3}));
}
