// SPDX-License-Identifier: Apache-2.0
// The files TVM v0.19.0 wrote (tests/fixtures/tvm, RELAXVM_TVM_FIXTURES from tests/meson.build),
// for the tests of relaxvm/tvm.hpp.
#ifndef RELAXVM_TEST_TVM_FIXTURES_HPP
#define RELAXVM_TEST_TVM_FIXTURES_HPP

#include <doctest/doctest.h>

#include <cstddef>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#ifndef RELAXVM_TVM_FIXTURES
#error "RELAXVM_TVM_FIXTURES (the folder of TVM's golden files, tests/fixtures/tvm) is set by tests/meson.build"
#endif

namespace relaxvm_test {

using bytes_t = std::vector<std::byte>;

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot open ", path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
/// The bytes of tests/fixtures/tvm/`name`.
inline bytes_t fixture(const std::string& name) {
  const std::string s = read_text(std::string(RELAXVM_TVM_FIXTURES) + "/" + name);
  return bytes_t(reinterpret_cast<const std::byte*>(s.data()), reinterpret_cast<const std::byte*>(s.data()) + s.size());
}
inline bool text_contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace relaxvm_test

#endif  // RELAXVM_TEST_TVM_FIXTURES_HPP
