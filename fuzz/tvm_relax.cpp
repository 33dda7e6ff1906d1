// SPDX-License-Identifier: Apache-2.0
// Fuzz target: relaxvm::tvm::load_relax (TVM's Relax VM executables) on arbitrary bytes. What loads
// must print and report its stats, and save_relax must write it back to the very same bytes (the
// reader keeps every byte it accepts).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <relaxvm/tvm.hpp>
#include <span>
#include <vector>

namespace rv = relaxvm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  rv::result<rv::executable> exe = rv::tvm::load_relax(bytes);
  if (!exe.ok()) return 0;
  (void)exe->as_text();
  (void)exe->stats();
  const rv::result<std::vector<std::byte>> saved = rv::tvm::save_relax(*exe);
  if (!saved.ok() || !std::equal(saved->begin(), saved->end(), bytes.begin(), bytes.end())) std::abort();
  return 0;
}
