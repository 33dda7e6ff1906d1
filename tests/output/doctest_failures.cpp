// SPDX-License-Identifier: Apache-2.0
// Checks that fail on purpose: tests/meson.build runs this program and asserts on what doctest
// printed (tests/support/expect_output.py), so that a failing check on relaxvm values stays
// readable: both values, and for tensors the first differing element.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <limits>
#include <relaxvm.hpp>
#include <vector>
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

TEST_CASE("a large tensor: the mismatches counted past what is printed") {
  // 50 x 40: the printed tensors stop after 64 elements; elements 10, 1500 and 1999 differ,
  // the largest difference (2.5, at [37, 20]) beyond the cut.
  std::vector<float> got(2000, 1.0f), want(2000, 1.0f);
  got[10] = 1.5f;
  got[1500] = -1.5f;
  got[1999] = 1.25f;
  const rv::tensor a = rv::tensor::from<float>(got, {50, 40});
  const rv::tensor b = rv::tensor::from<float>(want, {50, 40});
  RELAXVM_CHECK_ALLCLOSE(a, b);
  // A NaN against a number differs by no number: counted, and no largest difference from it.
  RELAXVM_CHECK_EQUAL(rv::tensor::from<float>({1, std::numeric_limits<float>::quiet_NaN()}, {2}),
                      rv::tensor::from<float>({1, 2}, {2}));
}
