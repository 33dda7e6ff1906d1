// SPDX-License-Identifier: Apache-2.0
// Calls describe() (describe.cpp), built with the settings support/abi_mismatch.py chooses.
#include <relaxvm.hpp>

#include <cstdio>
#include <string>

std::string describe(const relaxvm::error& e);

int main() {
  const std::string s = describe(relaxvm::value_error("abi test: ", 42));
  std::puts(s.c_str());
  return s == "ValueError: abi test: 42" ? 0 : 1;
}
