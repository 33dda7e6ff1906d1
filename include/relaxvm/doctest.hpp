// SPDX-License-Identifier: Apache-2.0
// Optional doctest checks for tensors: on failure they print the first element that differs, with
// its index, how many differ and the largest difference (also when the tensors printed below are
// cut, past 64 elements), then both tensors.
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
//     mismatches: 1 of 4 elements; the largest difference 0.5 at [1, 0] (flat index 2)
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
// Tensors of the same dtype and shape that differ: how many elements differ, and the largest
// difference (|a - b|, over the elements where it is a number), with its index. The printed
// tensors are cut past 64 elements (append_tensor); this line is not.
inline void append_mismatches(relaxvm::detail::text& out, const tensor& a, const tensor& b, const tolerance* tol,
                              std::int64_t first) {
  using relaxvm::detail::element_address;
  using relaxvm::detail::load_element;
  const std::int64_t n = a.numel();
  std::int64_t count = 0, at = -1;
  double largest = 0;
  for (std::int64_t e = first; e < n; ++e) {
    const auto x = load_element(element_address(a, e), a.dtype()), y = load_element(element_address(b, e), b.dtype());
    if (relaxvm::detail::elements_match(x, y, tol)) continue;
    ++count;
    const double diff = relaxvm::detail::magnitude(relaxvm::detail::as_double(x) - relaxvm::detail::as_double(y));
    if (!relaxvm::detail::is_nan(diff) && (at < 0 || diff > largest)) {
      largest = diff;
      at = e;
    }
  }
  out << "\n  mismatches: " << count << " of " << n << " elements";
  if (at < 0) return;  // each one a NaN against a number
  out << "; the largest difference ";
  relaxvm::detail::append_double(out, largest);
  out << " at ";
  relaxvm::detail::append_element_index(out, a, at);
  out << " (flat index " << at << ')';
}

inline comparison compare(const tensor& a, const tensor& b, const tolerance* tol) {
  const tensor_difference d = tol != nullptr ? first_difference(a, b, *tol) : first_difference(a, b);
  if (!d) return {};
  relaxvm::detail::text out;
  out << describe_difference(a, b, tol);
  if (d.why == tensor_difference::reason::element) append_mismatches(out, a, b, tol, d.index);
  out << "\n  first:  ";
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
