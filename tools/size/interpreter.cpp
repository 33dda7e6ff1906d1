// SPDX-License-Identifier: Apache-2.0
// What tools/size_report.py measures as "the bare interpreter": static_vm running a program of one
// vm function that calls one typed packed function (int64 -> int64), linked at compile time.
// PROBE_COMPILE=1 runs it with static_dispatch::compile, else the interpreter. Built, never run.
#include <relaxvm.hpp>

namespace rv = relaxvm;

#ifndef PROBE_COMPILE
#define PROBE_COMPILE 0
#endif

namespace {

std::int64_t twice(std::int64_t x) { return 2 * x; }

constexpr auto table = rv::make_table(rv::fn<"probe.twice">(&twice));
constexpr auto program = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1, {"x"});
  b.emit_call("probe.twice", {b.r(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
using linked = decltype(rv::link<program, table>());
using vm_type = rv::static_vm<linked, PROBE_COMPILE ? rv::static_dispatch::compile : rv::static_dispatch::interpret>;

alignas(rv::value) std::byte vm_memory[vm_type::memory_bytes];

}  // namespace

// Called by no one at run time: the linker keeps what it reaches.
extern "C" int relaxvm_size_probe(std::int64_t x, const rv::device_allocator* devices) {
  rv::result<vm_type> vm = vm_type::create(vm_memory, std::span(devices, 1));
  if (!vm.ok()) return 1;
  const rv::result<rv::value> r = vm->invoke<"main">(x);
  return r.ok() && r->as<std::int64_t>() == 2 * x ? 0 : 2;
}
