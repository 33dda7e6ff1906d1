// SPDX-License-Identifier: Apache-2.0
// A function of the user's that takes a relaxvm type, in a translation unit of its own: the ABI
// test (support/abi_mismatch.py) builds it with the caller's settings and with other ones.
#include <relaxvm.hpp>

#include <string>

std::string describe(const relaxvm::error& e) { return std::string(relaxvm::to_string(e.kind())) + ": " + std::string(e.message()); }
