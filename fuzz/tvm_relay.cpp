// SPDX-License-Identifier: Apache-2.0
// Fuzz target: relaxvm::tvm::load_relay (TVM's Relay VM executables, translated into relaxvm
// bytecode) on arbitrary bytes. What loads must be a verified executable that prints, reports its
// stats and goes through relaxvm's own format unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <relaxvm/tvm.hpp>
#include <span>
#include <vector>

namespace rv = relaxvm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  rv::result<rv::executable> exe = rv::tvm::load_relay(bytes);
  if (!exe.ok()) return 0;
  (void)exe->as_text();
  (void)exe->stats();
  const std::vector<std::byte> saved = exe->save();
  const rv::result<rv::executable> again = rv::executable::try_load(saved);
  if (!again.ok() || again->as_text() != exe->as_text()) std::abort();
  return 0;
}
