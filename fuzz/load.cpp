// SPDX-License-Identifier: Apache-2.0
// Fuzz target: executable::try_load on arbitrary bytes. What loads must print, report its stats,
// and save back to bytes that load again to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <relaxvm.hpp>

namespace rv = relaxvm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  rv::result<rv::executable> exe = rv::executable::try_load(bytes);
  if (!exe.ok()) return 0;
  (void)exe->as_text();
  (void)exe->stats();
  const std::vector<std::byte> saved = exe->save();
  rv::result<rv::executable> again = rv::executable::try_load(saved);
  if (!again.ok() || again->save() != saved) std::abort();  // load(save()) must round-trip
  return 0;
}
