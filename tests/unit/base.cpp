// SPDX-License-Identifier: Apache-2.0
// base/: errors and results, constexpr text, checked arithmetic, dtype, device, fixed_string.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <relaxvm.hpp>
#include <string>

namespace rv = relaxvm;

TEST_CASE("result holds a value or an error") {
  rv::result<int> ok = 3;
  CHECK(ok.ok());
  CHECK(*ok == 3);
  rv::result<int> bad = rv::error(rv::error_kind::value, "no");
  CHECK_FALSE(bad.ok());
  CHECK(bad.error().kind() == rv::error_kind::value);
  CHECK(bad.error().message() == "no");
  rv::result<std::string> s = std::string("text");
  rv::result<std::string> copy = s;
  CHECK(*copy == "text");
  rv::status st;
  CHECK(st.ok());
  rv::status failed = rv::error(rv::error_kind::runtime, "r");
  CHECK(failed.error().kind() == rv::error_kind::runtime);
#if RELAXVM_USE_EXCEPTIONS
  CHECK_THROWS_AS(bad.value(), rv::error);
  try {
    (void)bad.value();
  } catch (const std::exception& e) {  // rv::error is a std::exception
    CHECK(std::string(e.what()) == "no");
  }
#endif
}

namespace {
rv::result<int> half(int x) {
  if (x % 2) return rv::detail::value_error(x, " is odd");
  return x / 2;
}
rv::result<int> quarter(int x) {
  RELAXVM_TRY_ASSIGN(int h, half(x));
  return half(h);
}
rv::status check_even(int x) {
  RELAXVM_TRY(half(x));
  return {};
}
}  // namespace

TEST_CASE("RELAXVM_TRY propagates errors") {
  CHECK(*quarter(8) == 2);
  CHECK(quarter(6).error().message() == "3 is odd");
  CHECK(check_even(4).ok());
  CHECK(check_even(5).error().message() == "5 is odd");
}

TEST_CASE("error kinds have the reference's names") {
  CHECK(rv::to_string(rv::error_kind::type) == "TypeError");
  CHECK(rv::to_string(rv::error_kind::value) == "ValueError");
  CHECK(rv::to_string(rv::error_kind::runtime) == "RuntimeError");
  CHECK(rv::to_string(rv::error_kind::internal) == "InternalError");
  CHECK(rv::to_string(rv::error_kind::unsupported) == "NotImplementedError");
  CHECK(rv::unsupported_error("onnx: op X").kind() == rv::error_kind::unsupported);
  rv::error e(rv::error_kind::type, "wrong");
  e.add_context("in function 'main'");
  CHECK(e.message() == "wrong\n  in function 'main'");
}

TEST_CASE("text formats integers in constant expressions") {
  static_assert(rv::detail::cat("a", 12, ' ', -7, ' ', true).view() == "a12 -7 true");
  static_assert(rv::detail::cat(std::numeric_limits<std::int64_t>::min()).view() == "-9223372036854775808");
  static_assert(rv::detail::cat(std::uint64_t{18446744073709551615u}).view() == "18446744073709551615");
  rv::detail::text t("ab");
  t.pad_to(5, '.');
  CHECK(t.view() == "ab...");
  rv::detail::text d;
  rv::detail::append_double(d, 2.5);
  d << ' ';
  rv::detail::append_double(d, -0.0);
  CHECK(d.view() == "2.5 -0");
}

// What a 32-bit target formats with (no 64-bit division): the same quotient and remainder.
constexpr bool narrow_division_agrees(std::uint64_t v) {
  std::uint32_t rem = 99;
  return rv::detail::divide_by_10_narrow(v, rem) == v / 10 && rem == v % 10;
}
TEST_CASE("numbers divide by 10 with 32-bit divisions as with 64-bit ones") {
  static_assert(narrow_division_agrees(0) && narrow_division_agrees(9) && narrow_division_agrees(10));
  static_assert(narrow_division_agrees(0xffffffffu) && narrow_division_agrees(0x100000000u));
  static_assert(narrow_division_agrees(std::numeric_limits<std::uint64_t>::max()));
  static_assert(narrow_division_agrees(std::uint64_t{1} << 63) && narrow_division_agrees(10000000000000000000u));
  std::uint64_t x = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < 100000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift: values of every length
    const std::uint64_t v = x >> (x % 64);
    if (!narrow_division_agrees(v)) FAIL("divide_by_10_narrow(", v, ") differs");
  }
}

TEST_CASE("checked arithmetic reports overflow") {
  std::int64_t out = 0;
  CHECK(rv::detail::checked_mul(std::int64_t{1} << 31, std::int64_t{1} << 31, out));
  CHECK(out == std::int64_t{1} << 62);
  CHECK_FALSE(rv::detail::checked_mul(std::int64_t{1} << 32, std::int64_t{1} << 31, out));
  CHECK_FALSE(rv::detail::checked_add(std::numeric_limits<std::int64_t>::max(), 1, out));
  CHECK_FALSE(rv::detail::checked_sub(std::numeric_limits<std::int64_t>::min(), 1, out));
}

TEST_CASE("dtype names, sizes and validity") {
  using rv::dtype;
  CHECK(rv::to_text(dtype::float32()).view() == "float32");
  CHECK(rv::to_text(dtype::int64()).view() == "int64");
  CHECK(rv::to_text(dtype::bool_()).view() == "bool");
  CHECK(rv::to_text(dtype(kDLFloat, 32, 4)).view() == "float32x4");
  CHECK(rv::to_text(dtype::void_()).view() == "void");
  CHECK(dtype::float64().bytes() == 8);
  CHECK(dtype::bool_().bytes() == 1);
  CHECK(dtype(kDLFloat, 32, 4).bytes() == 16);
  CHECK(dtype::uint8().valid_for_tensor());
  CHECK(dtype::bool_().valid_for_tensor());
  CHECK_FALSE(dtype(kDLInt, 12).valid_for_tensor());  // not a power of two
  CHECK_FALSE(dtype(kDLFloat, 8).valid_for_tensor());
  CHECK_FALSE(dtype(kDLInt, 32, 0).valid_for_tensor());  // no lanes
  CHECK_FALSE(dtype::void_().valid_for_tensor());
  // Every code and width (and lanes 0, 1, many) against the rule written out test by test.
  const auto rule = [](dtype d) {
    if (d.lanes < 1 || d.code > kDLComplex) return false;
    if (d.is_bool()) return true;
    if (d.bits == 0 || (d.bits & (d.bits - 1)) != 0 || d.bits % 8 != 0) return false;
    if (d.code == kDLFloat) return d.bits == 16 || d.bits == 32 || d.bits == 64;
    if (d.code == kDLBfloat) return d.bits == 16;
    if (d.code == kDLComplex) return d.bits == 64 || d.bits == 128;
    return true;
  };
  int differ = 0, valid = 0;
  for (int code = 0; code < 256; ++code)
    for (int bits = 0; bits < 256; ++bits)
      for (int lanes : {0, 1, 4, 65535}) {
        const dtype d(static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), static_cast<std::uint16_t>(lanes));
        differ += d.valid_for_tensor() != rule(d);
        valid += d.valid_for_tensor();
      }
  CHECK(differ == 0);
  CHECK(valid == 3 * (5 + 5 + 3 + 5 + 1 + 2) + 1);  // lanes 1, 4, 65535; bool only with one lane
  CHECK(dtype::unpack(dtype(kDLFloat, 16, 8).pack()) == dtype(kDLFloat, 16, 8));
  static_assert(rv::dtype_of<float>() == dtype::float32());
  static_assert(rv::dtype_of<std::int32_t>() == dtype::int32());
  static_assert(rv::dtype_of<std::uint16_t>() == dtype::uint16());
  static_assert(rv::dtype_of<bool>() == dtype::bool_());
  DLDataType raw = dtype::int8();
  CHECK(raw.code == kDLInt);
  CHECK(raw.bits == 8);
}

TEST_CASE("parse_dtype reads what to_text writes") {
  for (rv::dtype t : {rv::dtype::float32(), rv::dtype::int64(), rv::dtype::bool_(), rv::dtype::uint8(),
                      rv::dtype(kDLFloat, 32, 4), rv::dtype::bfloat16(), rv::dtype::void_(), rv::dtype::handle()}) {
    rv::dtype back;
    CHECK(rv::parse_dtype(rv::to_text(t).view(), back));
    CHECK(back == t);
  }
  rv::dtype x;
  CHECK_FALSE(rv::parse_dtype("float", x));
  CHECK_FALSE(rv::parse_dtype("int999", x));
  CHECK_FALSE(rv::parse_dtype("float32x", x));
  CHECK_FALSE(rv::parse_dtype("tensor", x));
}

TEST_CASE("device is DLPack's DLDevice") {
  rv::device d = rv::device::cpu(3);
  CHECK(d.device_type == kDLCPU);
  CHECK(d.device_id == 3);
  CHECK(rv::to_text(d).view() == "cpu:3");
  CHECK(rv::to_text(rv::device(kDLCUDA, 1)).view() == "cuda:1");
  CHECK(rv::device::unpack(rv::device(kDLCUDA, 7).pack()) == rv::device(kDLCUDA, 7));
  CHECK(rv::device::valid_packed(rv::device(kDLCUDA, 7).pack()));
  CHECK_FALSE(rv::device::valid_packed(std::int64_t{99} << 32));
  CHECK_FALSE(rv::device::valid_packed(rv::device::cpu(-1).pack()));
  CHECK(rv::is_known_device_type(kDLCUDAManaged));
  CHECK_FALSE(rv::is_known_device_type(0));
  DLDevice raw = d;
  CHECK(raw.device_id == 3);
}

// Compile-time checks: this file does not compile when one fails.
// fixed_string works as a template argument.
constexpr rv::fixed_string fixed_vm_add = "vm.add";
static_assert(fixed_vm_add.size() == 6);
static_assert(fixed_vm_add.view() == "vm.add");
