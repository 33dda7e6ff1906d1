// SPDX-License-Identifier: Apache-2.0
// io/binary_*.hpp and executable::save/load: round trips, and every kind of malformed input.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <relaxvm.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
using bytes_t = std::vector<std::byte>;

namespace {

rv::executable sample() {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2, {"x", "flag"});
    b.emit_if(b.r(1), 3);
    b.emit_call("test.add", {b.r(0), b.imm(-10), b.c(b.add_shape({4, 6})), b.c(b.add_string(std::string_view("a\0b\"", 4)))},
                b.r(2));
    b.emit_goto(2);
    b.emit_call("test.mul", {b.r(0), b.c(b.add_tensor<double>({1.5, -2.25, 3}, {3})), b.vm_state(), b.f("helper")},
                b.r(2));
    b.emit_call("helper", {b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    auto fn = b.function("helper", 1);
    b.emit_call("vm.builtin.copy", {b.r(0), b.c(b.add_float(std::numeric_limits<double>::quiet_NaN())),
                                    b.c(b.add_bool(true)), b.c(b.add_dtype(rv::dtype(kDLFloat, 16, 4))),
                                    b.c(b.add_device(rv::device(kDLCUDA, 3))), b.c(b.add_int(std::numeric_limits<std::int64_t>::min())),
                                    b.c(b.add_shape({})), b.c(b.add_tensor<std::uint8_t>({}, {0, 5})),
                                    b.c(b.add_tensor<std::int32_t>({7}, {}))},
                b.r(1));
    b.emit_ret(b.r(1));
  }
  return b.get();
}

std::uint64_t get_le(const bytes_t& b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(b[at + static_cast<std::size_t>(i)])) << (8 * i);
  return v;
}
void put_le(bytes_t& b, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
// Offset of section entry k's fields in the table.
std::size_t entry(std::size_t k) { return rv::binary::header_size + k * rv::binary::section_entry_size; }
std::size_t section_offset(const bytes_t& b, std::uint32_t id) {
  for (std::size_t k = 0; k < get_le(b, 16, 4); ++k)
    if (get_le(b, entry(k), 4) == id) return static_cast<std::size_t>(get_le(b, entry(k) + 8, 8));
  return 0;
}

std::string load_error(const bytes_t& b) {
  rv::result<rv::executable> r = rv::executable::try_load(b);
  if (r.ok()) return "<loaded>";
  CHECK(r.error().kind() == rv::error_kind::value);
  return std::string(r.error().message());
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("save and load round-trip exactly") {
  rv::executable exe = sample();
  bytes_t bytes = exe.save();
  rv::executable back = rv::executable::load(bytes);
  CHECK(back.save() == bytes);
  CHECK(back == exe);
  CHECK(back.as_text() == exe.as_text());
  CHECK(back.stats() == exe.stats());
  CHECK(back.as_cpp() == exe.as_cpp());
  CHECK(back.warnings().size() == exe.warnings().size());
  // Constants keep every bit: NaN payloads, INT64_MIN, strings with NULs.
  rv::exec_view v = back.view();
  bool saw_nan = false;
  for (std::size_t i = 0; i < v.constants.size(); ++i)
    if (const rv::const_info c = v.constant(i); c.kind == rv::const_kind::float64)
      saw_nan = std::isnan(std::bit_cast<double>(c.scalar));
  CHECK(saw_nan);
}

TEST_CASE("the header is the documented one") {
  bytes_t b = sample().save();
  const unsigned char magic[] = {0x89, 'R', 'V', 'M', 0x0D, 0x0A, 0x1A, 0x0A};
  for (std::size_t i = 0; i < 8; ++i) CHECK(std::to_integer<unsigned char>(b[i]) == magic[i]);
  CHECK(get_le(b, 8, 4) == 1);   // major
  CHECK(get_le(b, 12, 4) == 0);  // minor
  CHECK(get_le(b, 16, 4) == 4);  // sections
  CHECK(get_le(b, entry(0), 4) == rv::binary::functions);
  CHECK(get_le(b, entry(0) + 8, 8) == rv::binary::header_size + 4 * rv::binary::section_entry_size);
  std::uint64_t end = get_le(b, entry(3) + 8, 8) + get_le(b, entry(3) + 16, 8);
  CHECK(end == b.size());
}

TEST_CASE("truncation at every byte offset is rejected with a message") {
  bytes_t full = sample().save();
  for (std::size_t n = 0; n < full.size(); ++n) {
    bytes_t cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    std::string e = load_error(cut);
    INFO("length " << n << ": " << e);
    CHECK(contains(e, "load: "));
  }
  CHECK(contains(load_error({}), "0 bytes are too few for an executable"));
}

TEST_CASE("header and section table corruption") {
  bytes_t good = sample().save();
  auto with = [&](auto change) {
    bytes_t b = good;
    change(b);
    return load_error(b);
  };
  CHECK(contains(with([](bytes_t& b) { b[1] = std::byte{'X'}; }), "not a relaxvm executable (wrong magic bytes)"));
  CHECK(contains(with([](bytes_t& b) { put_le(b, 8, 2, 4); }), "format version 2.0 is not supported"));
  CHECK(contains(with([](bytes_t& b) { put_le(b, 20, 1, 4); }), "the header's reserved field is 1; it must be 0"));
  CHECK(with([](bytes_t& b) { put_le(b, 12, 7, 4); }) == "<loaded>");  // a newer minor version still loads
  CHECK(contains(with([](bytes_t& b) { put_le(b, 16, 0xFFFFFFFF, 4); }), "lists 4294967295 sections but the file is too short"));
  CHECK(contains(with([](bytes_t& b) { put_le(b, entry(1) + 8, get_le(b, entry(1) + 8, 8) + 1, 8); }),
                 "section 1 (constant tags) starts at offset"));
  CHECK(contains(with([](bytes_t& b) { put_le(b, entry(3) + 16, ~std::uint64_t{0}, 8); }),
                 "section 3 (code) needs 18446744073709551615 bytes"));
  CHECK(contains(with([](bytes_t& b) { b.push_back(std::byte{0}); }), "1 bytes after the last section belong to no section"));
  CHECK(contains(with([](bytes_t& b) { put_le(b, entry(1), rv::binary::functions, 4); }), "the functions section appears twice"));
  CHECK(contains(with([](bytes_t& b) { put_le(b, entry(2), 77, 4); }), "section id 77 is required but unknown"));
  CHECK(contains(with([](bytes_t& b) {
                   put_le(b, entry(2), 77, 4);
                   put_le(b, entry(2) + 4, 0, 4);  // optional now: skipped, so constants are missing
                 }),
                 "the constants section is missing"));
}

TEST_CASE("an unknown optional section is skipped") {
  bytes_t b = sample().save();
  // Append a fifth section (id 99, optional) after the others; shift the four offsets by its entry.
  const std::size_t old_size = b.size();
  bytes_t out(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(entry(4)));
  put_le(out, 16, 5, 4);
  for (std::size_t k = 0; k < 4; ++k) put_le(out, entry(k) + 8, get_le(out, entry(k) + 8, 8) + 24, 8);
  bytes_t extra_entry(24);
  put_le(extra_entry, 0, 99, 4);
  put_le(extra_entry, 8, old_size + 24, 8);
  put_le(extra_entry, 16, 3, 8);
  out.insert(out.end(), extra_entry.begin(), extra_entry.end());
  out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(entry(4)), b.end());
  out.insert(out.end(), {std::byte{1}, std::byte{2}, std::byte{3}});
  rv::result<rv::executable> r = rv::executable::try_load(out);
  REQUIRE(r.ok());
  CHECK(r->save() == b);
}

TEST_CASE("hostile counts and malformed entries") {
  bytes_t good = sample().save();
  const std::size_t funcs = section_offset(good, rv::binary::functions);
  const std::size_t tags = section_offset(good, rv::binary::constant_tags);
  const std::size_t consts = section_offset(good, rv::binary::constants);
  const std::size_t code = section_offset(good, rv::binary::code);
  auto with = [&](auto change) {
    bytes_t b = good;
    change(b);
    return load_error(b);
  };
  CHECK(contains(with([&](bytes_t& b) { put_le(b, funcs, std::uint64_t{1} << 60, 8); }),
                 "the functions section claims 1152921504606846976 entries"));
  CHECK(contains(with([&](bytes_t& b) { b[funcs + 8] = std::byte{5}; }), "reading function 0, has kind 5"));
  CHECK(contains(with([&](bytes_t& b) { put_le(b, funcs + 9, 1u << 30, 8); }), "reading function 0, is cut off"));
  CHECK(contains(with([&](bytes_t& b) { put_le(b, tags, 2, 4); }), "has table version 2"));
  CHECK(contains(with([&](bytes_t& b) { put_le(b, tags, 1, 4); b[tags + 12 + 9 + 5] = std::byte{1}; }),
                 "lists tag 1 twice"));
  CHECK(contains(with([&](bytes_t& b) { b[consts + 8] = std::byte{200}; }),
                 "constant 0, has tag 200, which the constant tags section does not list"));
  CHECK(contains(with([&](bytes_t& b) { put_le(b, consts + 9, std::uint64_t{1} << 40, 8); }),
                 "reading constant 0, claims 1099511627776 entries"));
  CHECK(contains(with([&](bytes_t& b) { put_le(b, code, 1u << 31, 8); }),
                 "the code section, reading the instruction offsets, claims 2147483648 entries"));
  CHECK(contains(with([&](bytes_t& b) { put_le(b, code + 8, 5, 8); }), "invalid executable: instruction 0 starts at word 5"));
  CHECK(contains(with([&](bytes_t& b) {
                   // The first code word is the If opcode (4): make it 9.
                   const std::size_t words = code + 8 + 8 * get_le(b, code, 8) + 8;
                   put_le(b, words, 9, 8);
                 }),
                 "invalid executable: instruction 0 (word 0) has opcode 9"));
}

TEST_CASE("a tag table naming an unknown kind") {
  // Rename the "tensor" kind in the tag table to a kind this reader does not know, "tensox".
  bytes_t b = sample().save();
  std::string s(reinterpret_cast<const char*>(b.data()), b.size());
  const std::size_t at = s.find("tensor");
  REQUIRE(at != std::string::npos);
  b[at + 5] = std::byte{'x'};
  CHECK(contains(load_error(b), "a kind of constant this relaxvm does not support (written by a newer version?)"));
  // An unknown kind that no constant uses is fine.
  rv::exec_builder plain;
  {
    auto fn = plain.function("main", 0);
    plain.emit_ret(plain.void_arg());
  }
  bytes_t p = plain.get().save();
  std::string ps(reinterpret_cast<const char*>(p.data()), p.size());
  p[ps.find("tensor") + 5] = std::byte{'x'};
  CHECK(rv::executable::try_load(p).ok());
}

TEST_CASE("flipping any byte never breaks the loader") {
  bytes_t good = sample().save();
  int loaded = 0, rejected = 0;
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (unsigned char x : {0x01, 0x80, 0xFF}) {
      bytes_t b = good;
      b[i] ^= std::byte{x};
      rv::result<rv::executable> r = rv::executable::try_load(b);
      if (r.ok()) {
        ++loaded;
        CHECK(rv::executable::load(r->save()) == *r);  // whatever loads, saves and loads again
      } else {
        ++rejected;
      }
    }
  }
  CHECK(rejected > loaded);
}

TEST_CASE("files") {
  rv::executable exe = sample();
  const std::string path = "relaxvm_binary_test.rvm";  // in the test's working directory
  REQUIRE(exe.try_save_file(path.c_str()).ok());
  rv::result<rv::executable> back = rv::executable::try_load_file(path.c_str());
  REQUIRE(back.ok());
  CHECK(*back == exe);
  std::remove(path.c_str());
  CHECK(contains(std::string(rv::executable::try_load_file("/nonexistent/x.rvm").error().message()), "cannot open"));
}
