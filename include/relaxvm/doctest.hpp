// SPDX-License-Identifier: Apache-2.0
// Optional doctest checks for tensors: on failure they print both tensors and the first element
// that differs, with its index.
//
//   #include <doctest/doctest.h>
//   #include <relaxvm/doctest.hpp>
//
//   RELAXVM_CHECK_EQUAL(y, expected);              // same dtype, shape and elements
//   RELAXVM_CHECK_ALLCLOSE(y, expected);           // |y - expected| <= 1e-8 + 1e-5 |expected|
//   RELAXVM_CHECK_ALLCLOSE(y, expected, 1e-3, 1e-6);   // rtol, atol
//   RELAXVM_REQUIRE_EQUAL / RELAXVM_REQUIRE_ALLCLOSE   stop the test case
//
// A failure reads:
//   values: CHECK( element [1, 0] (flat index 2) differs: 3.5 and 3
//     first:  tensor([[1, 2], [3.5, 4]], shape=[2, 2], dtype=float32, device=cpu:0)
//     second: tensor([[1, 2], [3, 4]], shape=[2, 2], dtype=float32, device=cpu:0) )
//
// Plain CHECK(a == b) works too (== on tensors compares contents, and every relaxvm value prints
// with <<), but names no element. The rules (NaN matches NaN, tolerances) are rv::equal's and
// rv::allclose's: runtime/compare.hpp.
#ifndef RELAXVM_DOCTEST_HPP
#define RELAXVM_DOCTEST_HPP

#ifndef DOCTEST_VERSION
#error "include <doctest/doctest.h> before <relaxvm/doctest.hpp>"
#endif

#include <ostream>
#include <string>
#include <utility>

#include "base/config.hpp"  // RELAXVM_ABI
#include "runtime/compare.hpp"
#include "runtime/print.hpp"

namespace relaxvm::RELAXVM_ABI::testing {

/// The outcome of comparing two tensors: true when they match; printed, the difference and both
/// tensors (what doctest shows for a failed CHECK).
struct comparison {
  bool match = true;
  std::string report;
  explicit operator bool() const noexcept { return match; }
  friend std::ostream& operator<<(std::ostream& os, const comparison& c) {
    return os << (c.match ? std::string_view("the tensors match") : std::string_view(c.report));
  }
};

namespace detail {
inline comparison compare(const tensor& a, const tensor& b, const tolerance* tol) {
  std::string why = describe_difference(a, b, tol);
  if (why.empty()) return {};
  relaxvm::detail::text out;
  out << why << "\n  first:  ";
  relaxvm::detail::append_tensor(out, a);
  out << "\n  second: ";
  relaxvm::detail::append_tensor(out, b);
  return {false, std::string(out.view())};
}
}  // namespace detail

/// rv::equal(a, b), with a report.
inline comparison tensors_equal(const tensor& a, const tensor& b) { return detail::compare(a, b, nullptr); }
/// rv::allclose(a, b, rtol, atol), with a report.
inline comparison tensors_close(const tensor& a, const tensor& b, double rtol = 1e-5, double atol = 1e-8) {
  const tolerance tol{rtol, atol};
  return detail::compare(a, b, &tol);
}

}  // namespace relaxvm::testing

#define RELAXVM_CHECK_EQUAL(a, b) DOCTEST_CHECK(::relaxvm::testing::tensors_equal((a), (b)))
#define RELAXVM_REQUIRE_EQUAL(a, b) DOCTEST_REQUIRE(::relaxvm::testing::tensors_equal((a), (b)))
#define RELAXVM_CHECK_ALLCLOSE(a, ...) DOCTEST_CHECK(::relaxvm::testing::tensors_close((a), __VA_ARGS__))
#define RELAXVM_REQUIRE_ALLCLOSE(a, ...) DOCTEST_REQUIRE(::relaxvm::testing::tensors_close((a), __VA_ARGS__))

#endif  // RELAXVM_DOCTEST_HPP
