// SPDX-License-Identifier: Apache-2.0
// What tools/size_report.py measures as "all 23 builtins": static_vm linked against every builtin of
// the shape and memory tables. The program calls each builtin once, with register arguments, so
// that the compile-time linker instantiates all of them. It is built, never run.
#include <relaxvm.hpp>

namespace rv = relaxvm;

namespace {

constexpr auto table = rv::make_table(rv::builtins::shape_table, rv::builtins::memory_table);
using table_type = decltype(table);
constexpr std::int64_t max_args = 8;

constexpr auto program = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", max_args);
  for (std::size_t i = 0; i < table_type::size; ++i) {
    const rv::entry_info e = table_type::info(i);
    std::vector<rv::arg> args;
    const std::size_t n = e.raw ? 3 : e.fixed;
    for (std::size_t k = 0; k < n; ++k) args.push_back(b.r(static_cast<std::int64_t>(k)));
    b.emit_call(e.name, args, b.r(max_args));
  }
  b.emit_ret(b.r(max_args));
});
using linked = decltype(rv::link<program, table>());

alignas(rv::value) std::byte vm_memory[linked::memory_bytes];

}  // namespace

// Called by no one at run time; `volatile` keeps the whole path from being optimized away.
extern "C" int relaxvm_size_probe(const rv::value* args, const rv::device_allocator* devices) {
  rv::result<rv::static_vm<linked>> vm = rv::static_vm<linked>::create(vm_memory, std::span(devices, 1));
  if (!vm.ok()) return 1;
  return vm->invoke("main", std::span(args, max_args)).ok() ? 0 : 2;
}
