// SPDX-License-Identifier: Apache-2.0
// relaxvm on a Cortex-M3 (the MPS2 AN385 board, under QEMU): the network of network.hpp (dense +
// relu + dense) written by hand as bytecode, built and verified at compile time, linked at compile
// time against its kernels and the builtins, its weights constexpr arrays in flash. No exceptions,
// no RTTI, and no heap: frames live in a static buffer sized by a constexpr, objects in the buffer
// given to set_object_memory(), tensor data in an arena. The program prints its result through
// semihosting and exits with success only when the VM's result equals the same network computed
// directly and nothing, not even the error it provokes, touched the heap. ir.cpp is the same
// network written as IR and lowered at compile time.
//
// Build: tools/firmware.sh (arm-none-eabi-g++ -mcpu=cortex-m3 -mthumb -Os -fno-exceptions
// -fno-rtti -DRELAXVM_HEAP=0 -Wl,--wrap=_malloc_r ...); run: qemu-system-arm -M mps2-an385 -nographic -semihosting
// -kernel firmware.elf.
#include "network.hpp"

namespace {

using namespace network;

// main(x): check x is float32 [1, 4], then h = relu(dense(x, w1, b1)), y = dense(h, w2, b2).
constexpr auto program = rv::build([](rv::exec_builder& b) {
  const rv::dtype f32 = rv::dtype::float32();
  auto fn = b.function("main", 1, {"x"});
  b.emit_call("vm.builtin.check_tensor_info", {b.r(0), b.imm(2), b.c(b.add_dtype(f32)), b.c(b.add_string("x: "))});
  // match_shape(x, no heap, 2 dims, assert_equal_to_imm 1, assert_equal_to_imm 4, err_ctx)
  b.emit_call("vm.builtin.match_shape",
              {b.r(0), b.void_arg(), b.imm(2), b.imm(0), b.imm(1), b.imm(0), b.imm(4), b.c(b.add_string("x: "))});
  b.emit_call("vm.builtin.alloc_storage",
              {b.vm_state(), b.c(b.add_shape({128})), b.imm(-1), b.c(b.add_dtype(rv::dtype::uint8()))}, b.r(1));
  b.emit_call("vm.builtin.alloc_tensor", {b.r(1), b.imm(0), b.c(b.add_shape({1, 8})), b.c(b.add_dtype(f32))}, b.r(2));
  b.emit_call("fw.dense", {b.r(0), b.c(b.add_tensor(f32, w1_shape, w1_bytes)), b.c(b.add_tensor(f32, b1_shape, b1_bytes)),
                           b.r(2)});
  b.emit_call("fw.relu", {b.r(2), b.r(2)});
  b.emit_call("vm.builtin.alloc_tensor", {b.r(1), b.imm(64), b.c(b.add_shape({1, 3})), b.c(b.add_dtype(f32))}, b.r(3));
  b.emit_call("fw.dense", {b.r(2), b.c(b.add_tensor(f32, w2_shape, w2_bytes)), b.c(b.add_tensor(f32, b2_shape, b2_bytes)),
                           b.r(3)});
  b.emit_call("vm.builtin.kill_object", {b.r(2)}, b.r(2));
  b.emit_ret(b.r(3));
});
constexpr auto table = rv::make_table(rv::fn<"fw.dense">(&dense), rv::fn<"fw.relu">(&relu), rv::builtins::shape_table,
                                      rv::builtins::memory_table);
using linked = decltype(rv::link<program, table>());

// Memory, all static and sized by figures the linker computes (static_vm::create, ::arena and
// ::object_memory check them when this compiles): the VM's frames, the tensor data, and objects.
alignas(rv::value) std::byte vm_memory[linked::memory_bytes];
static_assert(linked::arena_known && linked::arena_bytes == 128);  // the one storage of 128 bytes
rv::arena_buffer<linked::arena_bytes> arena_memory;  // aligned as the arena aligns its blocks
// The program's objects (its constants, and one run's storage and tensors) and this file's: the
// two inputs it passes (views of 2 dimensions) and the arena allocator.
constexpr std::size_t caller_objects = 2 * rv::tensor_view_object_bytes(2) + rv::arena_object_bytes;
rv::object_buffer<linked::object_bytes + caller_objects> object_memory;

}  // namespace

int main() {
  rv::static_vm<linked>::object_memory<caller_objects>(object_memory);
  return network::run<linked>(vm_memory, rv::static_vm<linked>::arena(arena_memory), arena_memory.size, 1,
                              input_tensor(2, 2), object_memory.size);
}
