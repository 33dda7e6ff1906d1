// SPDX-License-Identifier: Apache-2.0
// Constexpr function tables, compile-time linking and static_vm. (What must not link is in
// tests/compile_fail/link_*.cpp.)
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <relaxvm.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/counting_new.hpp"

namespace rv = relaxvm;
using V = std::vector<rv::value>;

namespace {

std::int64_t add(std::int64_t a, std::int64_t b) { return a + b; }
rv::result<std::int64_t> checked_div(std::int64_t a, std::int64_t b) {
  if (b == 0) return rv::detail::value_error("test.div: division by zero");
  return a / b;
}
rv::value count_args(std::span<const rv::value> args) { return rv::value(static_cast<std::int64_t>(args.size())); }
double tensor_sum(const rv::tensor& t) {
  double s = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i) s += t.data<const float>()[i];
  return s;
}

constexpr auto table = rv::make_table(rv::fn<"test.add">(&add), rv::fn<"test.div">(&checked_div),
                                      rv::packed<"test.count">(&count_args), rv::fn<"test.sum">(&tensor_sum),
                                      rv::fn<"test.neg">([](std::int64_t x) { return -x; }),
                                      rv::fn<"test.lt">([](std::int64_t a, std::int64_t b) { return a < b; }),
                                      rv::builtins::table);

// inc(x) = x + 1; main(x, y) = inc(x) + y / 2, with the packed calls linked at compile time.
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("inc", 1, {"x"});
    b.emit_call("test.add", {b.r(0), b.imm(1)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("main", 2, {"x", "y"});
    b.emit_call("inc", {b.r(0)}, b.r(2));
    b.emit_call("test.div", {b.r(1), b.imm(2)}, b.r(3));
    b.emit_call("test.add", {b.r(2), b.r(3)}, b.r(4));
    b.emit_ret(b.r(4));
  }
  {
    auto fn = b.function("variadic", 0);
    b.emit_call("test.count", {b.imm(1), b.imm(2), b.imm(3)}, b.r(0));
    b.emit_call("test.neg", {b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
});
using linked = decltype(rv::link<prog, table>());

rv::device_allocator host[] = {{rv::device::cpu(), rv::allocator::naive()}};

}  // namespace

TEST_CASE("a constexpr table knows its entries at compile time") {
  static_assert(decltype(table)::find("test.add") == 0);
  static_assert(decltype(table)::find("vm.builtin.match_shape") > 0);
  static_assert(decltype(table)::find("nope") == -1);
  static_assert(decltype(table)::duplicate().empty());
  constexpr rv::entry_info add_info = decltype(table)::info(0);
  static_assert(add_info.name == "test.add" && !add_info.raw && add_info.fixed == 2 && !add_info.variadic);
  static_assert(add_info.param_name(0) == "int64");
  static_assert((add_info.param_kinds(0) & rv::kinds_of(rv::value_kind::int64)) != 0);
  static_assert((add_info.param_kinds(0) & rv::kinds_of(rv::value_kind::tensor)) == 0);
  static_assert(decltype(table)::info(2).raw);
  // The same table registers at run time.
  rv::basic_registry reg;
  reg.add_table(table);
  CHECK(reg.get("test.add")(2, 3).as<std::int64_t>() == 5);
  CHECK(reg.get("test.neg")(4).as<std::int64_t>() == -4);
  CHECK(reg.size() == decltype(table)::size);
}

TEST_CASE("a linked program dispatches through a constexpr array and knows its memory") {
  static_assert(linked::callees[prog.view().find("test.add")] != nullptr);
  static_assert(linked::callees[prog.view().find("main")] == nullptr);  // a vm function
  static_assert(linked::bounded);
  static_assert(linked::max_registers == 5);
  // main's frame, then inc's: each a header and its slots (registers, return slot, arguments).
  constexpr std::size_t main_frame = sizeof(rv::static_frame) + (5 + 1 + 2) * sizeof(rv::value);
  constexpr std::size_t inc_frame = sizeof(rv::static_frame) + (2 + 1 + 2) * sizeof(rv::value);
  static_assert(linked::memory_bytes == main_frame + inc_frame);
  static_assert(linked::max_frame_bytes == main_frame);

  alignas(rv::value) std::byte memory[linked::memory_bytes];
  rv::static_vm<linked> vm = rv::static_vm<linked>::create(memory, host).value();
  CHECK(vm.invoke("main", V{40, 5}).value().as<std::int64_t>() == 43);
  CHECK(vm.invoke("variadic", V{}).value().as<std::int64_t>() == -3);
  CHECK(vm.invoke("test.add", V{1, 2}).value().as<std::int64_t>() == 3);  // a packed function directly
  CHECK(vm.peak_memory() == linked::memory_bytes);
  // Warm calls make no heap allocation.
  const long before = relaxvm_test::heap_allocations();
  std::int64_t sum = 0;
  for (std::int64_t i = 0; i < 100; ++i) {
    const rv::value args[] = {i, 4};
    sum += vm.invoke("main", args).value().as<std::int64_t>();
  }
  CHECK(relaxvm_test::heap_allocations() == before);
  CHECK(sum == 99 * 100 / 2 + 300);
}

// Tensor memory known when the program links: two storages in `inner` (100 and 20 bytes, 128 +
// 64 from an arena), and `outer` calls it twice after a storage of its own (64 bytes).
constexpr auto storages = rv::build([](rv::exec_builder& b) {
  const rv::dtype f32 = rv::dtype::float32(), u8 = rv::dtype::uint8();
  {
    auto fn = b.function("inner", 0);
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({100})), b.imm(-1), b.c(b.add_dtype(u8))},
                b.r(0));
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({5})), b.imm(-1), b.c(b.add_dtype(f32))},
                b.r(1));
    b.emit_call("vm.builtin.alloc_tensor", {b.r(0), b.imm(64), b.c(b.add_shape({9})), b.c(b.add_dtype(f32))}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("outer", 0);
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({1})), b.imm(-1), b.c(b.add_dtype(u8))},
                b.r(0));
    b.emit_call("inner", {}, b.r(1));
    b.emit_call("inner", {}, b.r(1));
    b.emit_ret(b.r(1));
  }
});
using linked_storages = decltype(rv::link<storages, rv::builtins::table>());

TEST_CASE("the tensor memory of a program's own allocations is known when it links") {
  static_assert(linked_storages::arena_known);
  static_assert(linked_storages::arena_bytes == 64 + 2 * (128 + 64));  // outer, the larger entry point
  alignas(rv::value) std::byte memory[linked_storages::memory_bytes];
  static rv::arena_buffer<linked_storages::arena_bytes> arena;
  const rv::device_allocator devices[] = {{rv::device::cpu(), rv::static_vm<linked_storages>::arena(arena)}};
  rv::static_vm<linked_storages> vm = rv::static_vm<linked_storages>::create(memory, devices).value();
  for (int run = 0; run < 3; ++run) CHECK(vm.invoke<"outer">().value().as<rv::tensor>().shape() == rv::shape{9});
  CHECK(devices[0].allocator.stats().peak_bytes_in_use <= static_cast<std::int64_t>(linked_storages::arena_bytes));
  // No vm function of this program is passed as a value: its VM does not link the code that runs
  // one as a closure; closures over packed functions (bound values included) are called still.
  static_assert(!linked_storages::vm_closures);
  const rv::closure add = rv::make_typed("test.add3", [](std::int64_t a, std::int64_t b) { return a + 3 * b; });
  CHECK(vm.invoke_closure(add, V{1, 2}).value().as<std::int64_t>() == 7);
  const std::vector<rv::value> two{rv::value(2)};
  CHECK(vm.invoke_closure(add.bind(two), V{1}).value().as<std::int64_t>() == 7);
  CHECK(std::string(vm.invoke_closure(rv::closure(), {}).error().message()) ==
        "invoke_closure: the closure is undefined");

  // Not known: a size from a register, a backward jump.
  static constexpr auto from_register = rv::build([](rv::exec_builder& b) {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.r(0), b.imm(-1), b.c(b.add_dtype(rv::dtype::uint8()))},
                b.r(1));
    b.emit_ret(b.r(1));
  });
  static_assert(!decltype(rv::link<from_register, rv::builtins::table>())::arena_known);
  static constexpr auto loops = rv::build([](rv::exec_builder& b) {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.alloc_storage",
                {b.vm_state(), b.c(b.add_shape({8})), b.imm(-1), b.c(b.add_dtype(rv::dtype::uint8()))}, b.r(1));
    b.emit_if(b.r(0), 2);
    b.emit_goto(-2);
    b.emit_ret(b.r(1));
  });
  static_assert(!decltype(rv::link<loops, rv::builtins::table>())::arena_known);

  // A view of a constant storage that does not fit, or is not aligned for its dtype, does not
  // link (tests/compile_fail/link_view_out_of_storage.cpp); one whose storage register is set
  // twice is left to run time.
  constexpr auto misaligned = rv::build([](rv::exec_builder& b) {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.alloc_storage",
                {b.vm_state(), b.c(b.add_shape({64})), b.imm(-1), b.c(b.add_dtype(rv::dtype::uint8()))}, b.r(0));
    b.emit_call("vm.builtin.alloc_tensor", {b.r(0), b.imm(2), b.c(b.add_shape({2})), b.c(b.add_dtype(rv::dtype::float32()))},
                b.r(1));
    b.emit_ret(b.r(1));
  });
  static_assert(rv::detail::check_constant_views(misaligned.view()).view().find(
                    "offset 2 is not aligned for its dtype (4 bytes) (%0, made by instruction 0)") != std::string_view::npos);
  constexpr auto set_twice = rv::build([](rv::exec_builder& b) {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.alloc_storage",
                {b.vm_state(), b.c(b.add_shape({4})), b.imm(-1), b.c(b.add_dtype(rv::dtype::uint8()))}, b.r(1));
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.r(0), b.imm(-1), b.c(b.add_dtype(rv::dtype::uint8()))},
                b.r(1));
    b.emit_call("vm.builtin.alloc_tensor", {b.r(1), b.imm(0), b.c(b.add_shape({64})), b.c(b.add_dtype(rv::dtype::uint8()))},
                b.r(2));
    b.emit_ret(b.r(2));
  });
  static_assert(rv::detail::check_constant_views(set_twice.view()).ok);
}

TEST_CASE("invoke<name>(args...): a call checked against the program when it compiles") {
  alignas(rv::value) std::byte memory[linked::memory_bytes];
  rv::static_vm<linked> vm = rv::static_vm<linked>::create(memory, host).value();
  CHECK(vm.invoke<"main">(40, 5).value().as<std::int64_t>() == 43);
  CHECK(vm.invoke<"inc">(std::int64_t{-1}).value().as<std::int64_t>() == 0);
  CHECK(vm.invoke<"variadic">().value().as<std::int64_t>() == -3);
  CHECK(vm.invoke<"test.add">(1, 2).value().as<std::int64_t>() == 3);  // a packed function
  // The arguments' types are the program's to check, at run time, as with invoke(name, args).
  const rv::result<rv::value> wrong = vm.invoke<"main">(rv::value(), 5);
  REQUIRE_FALSE(wrong.ok());
  CHECK(std::string(wrong.error().message()).find("test.add") != std::string::npos);
  CHECK(vm.invoke<"main">(1, 1).value().as<std::int64_t>() == 2);  // still usable
  // The same with the arguments as values (static_model's call): checked when it compiles too.
  const std::array<rv::value, 2> args{rv::value(std::int64_t{40}), rv::value(std::int64_t{5})};
  CHECK(vm.invoke_values<"main">(std::span<const rv::value, 2>(args)).value().as<std::int64_t>() == 43);
  CHECK(vm.invoke_values<"test.add">(std::span<const rv::value, 2>(args)).value().as<std::int64_t>() == 45);
  // What does not match the program does not compile (tests/compile_fail/typed_invoke_*.cpp).
  static_assert(rv::static_vm<linked>::typed_call_check("main", 2).ok);
  static_assert(!rv::static_vm<linked>::typed_call_check("main", 3).ok);
  static_assert(rv::static_vm<linked>::typed_call_check("main", 3).view().find(
                    "function main takes 2 arguments (x, y), but the call passes 3") != std::string_view::npos);
  static_assert(!rv::static_vm<linked>::typed_call_check("mian", 2).ok);
  static_assert(rv::static_vm<linked>::typed_call_check("test.add", 1).view().find(
                    "invoke<test.add>: test.add takes 2 arguments (int64, int64), but the call passes 1") !=
                std::string_view::npos);
  static_assert(rv::static_vm<linked>::typed_call_check("test.count", 5).ok);  // raw: any count
}

TEST_CASE("static_vm reports errors with their place, and stays usable") {
  alignas(rv::value) std::byte memory[linked::memory_bytes];
  rv::static_vm<linked> vm = rv::static_vm<linked>::create(memory, host).value();
  rv::result<rv::value> r = vm.invoke("main", V{1, 0});
  CHECK(r.ok());
  r = vm.invoke("main", V{std::int64_t{1}, rv::value("two")});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::type);
  CHECK(std::string(r.error().message()) ==
        "test.div: argument 0 expects int64 but got string\n"
        "  in function 'main', instruction 1 (call test.div in: %1, i2 dst: %3)");
  CHECK(r.error().function_index() == prog.view().find("main"));  // the place, also as numbers
  CHECK(r.error().instruction() == 1);
  CHECK(vm.invoke("main", V{1, 2}).value().as<std::int64_t>() == 3);
  CHECK(std::string(vm.invoke("main", V{1}).error().message()) ==
        "Invoking function main expects 2 arguments (x, y), but 1 arguments were provided.");
  CHECK(std::string(vm.invoke("nope", V{}).error().message()) == "static_vm: the program has no function 'nope'");
  CHECK(vm.peak_memory() == linked::memory_bytes);

  // An array too small does not compile (tests/compile_fail/buffer_too_small_memory.cpp); a span
  // is checked when the VM is made.
  alignas(rv::value) std::byte small[64];
  CHECK(std::string(rv::static_vm<linked>::create(std::span<std::byte>(small), host).error().message()) ==
        "static_vm: the program needs " + std::to_string(linked::memory_bytes) + " bytes of memory, but got 64");
  CHECK(std::string(rv::static_vm<linked>::create(memory, {}).error().message()) ==
        "static_vm: give it at least one device (the host)");
}

namespace {
// Immediates of every width: the interpreter reads those of a program whose immediates all fit 32
// bits from the words' low halves, and decodes all 56 bits otherwise.
constexpr auto narrow_immediates = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1, {"x"});
  b.emit_call("test.add", {b.r(0), b.imm(-7)}, b.r(1));
  b.emit_call("test.add", {b.r(1), b.imm(2147483647)}, b.r(2));
  b.emit_call("test.add", {b.r(2), b.imm(-2147483647 - 1)}, b.r(3));
  b.emit_ret(b.r(3));
});
constexpr auto wide_immediates = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1, {"x"});
  b.emit_call("test.add", {b.r(0), b.imm(std::int64_t{1} << 40)}, b.r(1));
  b.emit_call("test.add", {b.r(1), b.imm(-(std::int64_t{1} << 41) - 7)}, b.r(2));
  b.emit_call("test.add", {b.r(2), b.imm(2147483648)}, b.r(3));
  b.emit_ret(b.r(3));
});
using linked_narrow = decltype(rv::link<narrow_immediates, table>());
using linked_wide = decltype(rv::link<wide_immediates, table>());
}  // namespace

TEST_CASE("static_vm passes immediates of every width") {
  alignas(rv::value) std::byte narrow_memory[linked_narrow::memory_bytes];
  rv::result<rv::static_vm<linked_narrow>> narrow = rv::static_vm<linked_narrow>::create(narrow_memory, host);
  CHECK(narrow->invoke<"main">(10).value().as<std::int64_t>() == std::int64_t{10} - 7 + 2147483647 - 2147483648);
  alignas(rv::value) std::byte wide_memory[linked_wide::memory_bytes];
  rv::result<rv::static_vm<linked_wide>> wide = rv::static_vm<linked_wide>::create(wide_memory, host);
  CHECK(wide->invoke<"main">(10).value().as<std::int64_t>() ==
        std::int64_t{10} + (std::int64_t{1} << 40) - (std::int64_t{1} << 41) - 7 + 2147483648);
}

namespace {
// count(n) = n == 0 ? 0 : 1 + count(n - 1): recursion, so the depth is not known statically.
constexpr auto recursive = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("count", 1);
  b.emit_call("vm.builtin.scalar_eq", {b.r(0), b.imm(0)}, b.r(1));
  b.emit_if(b.r(1), 3);
  b.emit_call("vm.builtin.copy", {b.imm(0)}, b.r(2));
  b.emit_ret(b.r(2));
  b.emit_call("test.add", {b.r(0), b.imm(-1)}, b.r(2));
  b.emit_call("count", {b.r(2)}, b.r(3));
  b.emit_call("test.add", {b.r(3), b.imm(1)}, b.r(2));
  b.emit_ret(b.r(2));
});
using linked_recursive = decltype(rv::link<recursive, table>());
}  // namespace

TEST_CASE("a recursive program gets memory per frame, and a clear error when it runs out") {
  static_assert(!linked_recursive::bounded);
  static_assert(linked_recursive::memory_bytes == 0);
  alignas(rv::value) std::byte memory[linked_recursive::max_frame_bytes * 10];
  rv::static_vm<linked_recursive> vm = rv::static_vm<linked_recursive>::create(memory, host).value();
  CHECK(vm.invoke("count", V{9}).value().as<std::int64_t>() == 9);
  rv::result<rv::value> deep = vm.invoke("count", V{10});
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().kind() == rv::error_kind::runtime);
  const std::string m(deep.error().message());
  CHECK(m.find("static_vm: calling 'count' needs " + std::to_string(linked_recursive::max_frame_bytes) +
               " bytes of VM memory, but only 0 of its " + std::to_string(sizeof(memory)) + " bytes are left") == 0);
  CHECK(vm.invoke("count", V{3}).value().as<std::int64_t>() == 3);  // usable again, memory all back
}

namespace {
constexpr auto weight_bytes = std::bit_cast<std::array<std::uint8_t, 16>>(std::array<float, 4>{1.5f, 2.5f, 3.0f, -1.0f});
constexpr std::array<std::int64_t, 2> weight_shape{2, 2};
// main() = test.sum(a tensor constant), and closures over vm and packed functions.
constexpr auto with_constants = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("main", 0);
    b.emit_call("test.sum", {b.c(b.add_tensor(rv::dtype::float32(), weight_shape, weight_bytes))}, b.r(0));
    b.emit_ret(b.r(0));
  }
  {
    auto fn = b.function("twice", 1);
    b.emit_call("test.add", {b.r(0), b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("closures", 1);  // closures(x) = twice(x) + neg(x), both through invoke_closure
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.f("twice"), b.r(0)}, b.r(1));
    b.emit_call("vm.builtin.make_closure", {b.f("test.add"), b.imm(100)}, b.r(2));
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(2), b.r(1)}, b.r(3));
    b.emit_ret(b.r(3));
  }
});
using linked_constants = decltype(rv::link<with_constants, table>());
}  // namespace

TEST_CASE("tensor constants are used in place; closures work") {
  static_assert(!linked_constants::bounded);  // a vm function passed as a value
  alignas(rv::value) std::byte memory[4096];
  rv::static_vm<linked_constants> vm = rv::static_vm<linked_constants>::create(memory, host).value();
  CHECK(vm.invoke("main", V{}).value().as<double>() == doctest::Approx(6.0));
  CHECK(vm.invoke("closures", V{5}).value().as<std::int64_t>() == 110);
}

namespace {
// outer(x) = inner(x): an error two frames deep; bound(x) calls a vm closure and a packed
// closure, each with captured values, through invoke_closure.
constexpr auto nested = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("inner", 1);
    b.emit_call("test.div", {b.r(0), b.imm(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("outer", 1);
    b.emit_call("inner", {b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("sub", 2);  // sub(a, b) = a - b
    b.emit_call("test.neg", {b.r(1)}, b.r(2));
    b.emit_call("test.add", {b.r(0), b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    auto fn = b.function("bound", 1);  // (x - 10) + 1000
    b.emit_call("vm.builtin.make_closure", {b.f("sub"), b.imm(10)}, b.r(1));
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(1), b.r(0)}, b.r(2));
    b.emit_call("vm.builtin.make_closure", {b.f("test.add"), b.imm(1000)}, b.r(3));
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(3), b.r(2)}, b.r(4));
    b.emit_ret(b.r(4));
  }
});
using linked_nested = decltype(rv::link<nested, table>());
}  // namespace

TEST_CASE("static_vm: closures with captured values, errors deep in the call chain, bad set-up") {
  static_assert(linked_nested::vm_closures);  // it passes vm functions as values
  alignas(rv::value) std::byte memory[2048];
  rv::static_vm<linked_nested> vm = rv::static_vm<linked_nested>::create(memory, host).value();
  CHECK(vm.invoke("bound", V{15}).value().as<std::int64_t>() == 1005);
  rv::result<rv::value> r = vm.invoke("outer", V{7});
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.error().message()) ==
        "test.div: division by zero\n"
        "  in function 'inner', instruction 0 (call test.div in: %0, i0 dst: %1)\n"
        "  called from function 'outer', instruction 0 (call inner in: %0 dst: %1)");
  CHECK(r.error().function_index() == nested.view().find("inner"));  // the innermost place
  CHECK(r.error().instruction() == 0);
  CHECK(vm.invoke("bound", V{20}).value().as<std::int64_t>() == 1010);  // usable, memory all back
  CHECK(std::string(vm.invoke(std::int64_t{99}, V{}).error().message()) == "static_vm: function index 99 is out of range");

#if RELAXVM_USE_EXCEPTIONS
  // A hand-made closure whose invoke throws (nothing catches for it): the captured values joined
  // in the VM's memory are given back all the same, so the memory is not used up by repeats.
  auto thrower = rv::make_object<rv::closure_object>(rv::closure_object::kind_t::packed, "test.throws");
  thrower->invoke = [](const rv::closure_object&, const rv::value*, std::uint32_t, rv::value&,
                       std::optional<rv::error>&) -> bool { throw std::runtime_error("thrown by hand"); };
  const rv::closure throws_bound = rv::closure(thrower).bind(V{rv::value(1), rv::value(2)});
  for (int i = 0; i < 200; ++i) CHECK_THROWS_AS((void)vm.invoke_closure(throws_bound, V{rv::value(3)}), std::runtime_error);
  CHECK(vm.invoke("bound", V{30}).value().as<std::int64_t>() == 1020);
#endif

  // Moved before use, the VM works the same.
  rv::static_vm<linked_nested> moved = std::move(vm);
  CHECK(moved.invoke("bound", V{0}).value().as<std::int64_t>() == 990);

  CHECK(std::string(rv::static_vm<linked_nested>::create(std::span(memory + 1, 64), host).error().message()) ==
        "static_vm: the memory must be aligned to 8 bytes");
  const rv::device_allocator none[] = {{rv::device::cpu(), rv::allocator()}};
  CHECK(std::string(rv::static_vm<linked_nested>::create(memory, none).error().message()) ==
        "static_vm: device 0 has no allocator");
  // Too little memory for a closure's joined arguments and frame: an error, not a crash.
  alignas(rv::value) std::byte tiny[linked_nested::max_frame_bytes];
  rv::static_vm<linked_nested> small = rv::static_vm<linked_nested>::create(tiny, host).value();
  rv::result<rv::value> oom = small.invoke("bound", V{1});
  REQUIRE_FALSE(oom.ok());
  CHECK(oom.error().kind() == rv::error_kind::runtime);
  CHECK(std::string(oom.error().message()).find("bytes of VM memory, but only") != std::string::npos);
  CHECK(small.invoke("inner", V{1}).error().kind() == rv::error_kind::value);  // the division error: it ran
}

namespace {
// Control flow, tuples, a %void destination and an error two frames deep, with no recursion and
// no vm function passed as a value, so static_dispatch::compile can run it too.
constexpr auto control = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("sum_to", 1, {"n"});  // 1 + 2 + ... + n, with a loop
    b.emit_call("test.add", {b.imm(0), b.imm(0)}, b.r(1));  // sum
    b.emit_call("test.add", {b.imm(0), b.imm(0)}, b.r(2));  // i
    b.emit_call("test.lt", {b.r(2), b.r(0)}, b.r(3));       // 2: i < n
    b.emit_if(b.r(3), 4);                                   // false: to 7
    b.emit_call("test.add", {b.r(2), b.imm(1)}, b.r(2));
    b.emit_call("test.add", {b.r(1), b.r(2)}, b.r(1));
    b.emit_goto(-4);
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("tuples", 1);  // (x, 7)[1] + x, through a raw packed function
    b.emit_call("vm.builtin.make_tuple", {b.r(0), b.imm(7)}, b.r(1));
    b.emit_call("vm.builtin.tuple_getitem", {b.r(1), b.imm(1)}, b.r(2));
    b.emit_call("test.neg", {b.r(2)});  // result dropped
    b.emit_call("test.add", {b.r(2), b.r(0)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    auto fn = b.function("inner", 1);
    b.emit_call("test.div", {b.r(0), b.imm(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("outer", 1);
    b.emit_call("inner", {b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("choose", 1);  // choose(c) = c ? 1 : 2
    b.emit_if(b.r(0), 3);
    b.emit_call("test.add", {b.imm(1), b.imm(0)}, b.r(1));
    b.emit_ret(b.r(1));
    b.emit_call("test.add", {b.imm(2), b.imm(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
});
using linked_control = decltype(rv::link<control, table>());

template <rv::static_dispatch D>
void run_control() {
  // V{rv::value(10)}, not V{10}: clang 16 made V{10} a vector of ten null values here.
  using vm_type = rv::static_vm<linked_control, D>;
  alignas(rv::value) std::byte memory[linked_control::memory_bytes];
  vm_type vm = vm_type::create(memory, host).value();
  CHECK(vm.invoke("sum_to", V{rv::value(10)}).value().template as<std::int64_t>() == 55);
  CHECK(vm.invoke("sum_to", V{rv::value(0)}).value().template as<std::int64_t>() == 0);
  CHECK(vm.invoke("tuples", V{rv::value(5)}).value().template as<std::int64_t>() == 12);
  CHECK(vm.invoke("choose", V{rv::value(true)}).value().template as<std::int64_t>() == 1);
  CHECK(vm.invoke("choose", V{rv::value(false)}).value().template as<std::int64_t>() == 2);
  rv::result<rv::value> r = vm.invoke("outer", V{rv::value(7)});
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.error().message()) ==
        "test.div: division by zero\n"
        "  in function 'inner', instruction 0 (call test.div in: %0, i0 dst: %1)\n"
        "  called from function 'outer', instruction 0 (call inner in: %0 dst: %1)");
  r = vm.invoke("tuples", V{rv::value("x")});
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.error().message()) ==
        "test.add: argument 1 expects int64 but got string\n"
        "  in function 'tuples', instruction 3 (call test.add in: %2, %0 dst: %3)");
  r = vm.invoke("choose", V{rv::value("yes")});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::type);
  CHECK(std::string(r.error().message()).find("If: the condition must be an int64 or a bool, but register %0 holds string") == 0);
  CHECK(std::string(vm.invoke("sum_to", V{}).error().message()) ==
        "Invoking function sum_to expects 1 arguments (n), but 0 arguments were provided.");
  // Usable after every error, with all its memory back; warm calls allocate nothing.
  CHECK(vm.invoke("sum_to", V{rv::value(100)}).value().template as<std::int64_t>() == 5050);
  CHECK(vm.peak_memory() <= linked_control::memory_bytes);
  const long before = relaxvm_test::heap_allocations();
  std::int64_t sum = 0;
  for (std::int64_t i = 0; i < 50; ++i) {
    const rv::value args[] = {i};
    sum += vm.invoke("sum_to", args).value().template as<std::int64_t>();
  }
  CHECK(relaxvm_test::heap_allocations() == before);
  CHECK(sum == 20825);  // the sum of i(i+1)/2 for i < 50
}
}  // namespace

namespace {
// More instructions in a block, and more blocks in a function, than one fold expression may hold
// (static_vm splits them into chunks of 128; clang refuses folds nested deeper than 256).
constexpr auto long_blocks = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("chain", 1);  // x + 130, in one block of 131 instructions
    b.emit_call("test.add", {b.r(0), b.imm(1)}, b.r(1));
    for (int i = 1; i < 130; ++i) b.emit_call("test.add", {b.r(1), b.imm(1)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("hops", 1);  // 131 blocks: each Goto jumps to the next instruction
    for (int i = 0; i < 130; ++i) b.emit_goto(1);
    b.emit_ret(b.r(0));
  }
});
using linked_long = decltype(rv::link<long_blocks, table>());
}  // namespace

TEST_CASE("static_dispatch::compile: long blocks, many blocks, and the memory it needs") {
  using compiled = rv::static_vm<linked_long, rv::static_dispatch::compile>;
  static_assert(compiled::memory_bytes == 2 * sizeof(rv::static_frame));  // a header per vm function
  alignas(rv::value) std::byte memory[compiled::memory_bytes];
  compiled vm = compiled::create(memory, host).value();
  CHECK(vm.invoke("chain", V{5}).value().as<std::int64_t>() == 135);
  CHECK(vm.invoke("hops", V{3}).value().as<std::int64_t>() == 3);
  std::array<std::byte, compiled::memory_bytes - 1> small{};
  CHECK(std::string(compiled::create(small, host).error().message()) ==
        "static_vm: the program needs " + std::to_string(compiled::memory_bytes) + " bytes of memory, but got " +
            std::to_string(compiled::memory_bytes - 1));
}

TEST_CASE("static_dispatch::compile runs a program as the interpreter does") {
  static_assert(linked_control::bounded);
  run_control<rv::static_dispatch::interpret>();
  run_control<rv::static_dispatch::compile>();
  // The first program too: vm calls, a variadic raw function, a packed function invoked directly.
  using compiled = rv::static_vm<linked, rv::static_dispatch::compile>;
  alignas(rv::value) std::byte memory[linked::memory_bytes];
  compiled vm = compiled::create(memory, host).value();
  CHECK(vm.invoke("main", V{40, 5}).value().as<std::int64_t>() == 43);
  CHECK(vm.invoke("variadic", V{}).value().as<std::int64_t>() == -3);
  CHECK(vm.invoke("test.add", V{1, 2}).value().as<std::int64_t>() == 3);
  const rv::result<rv::value> bad = vm.invoke("main", V{std::int64_t{1}, rv::value("two")});
  CHECK(std::string(bad.error().message()) ==
        "test.div: argument 0 expects int64 but got string\n"
        "  in function 'main', instruction 1 (call test.div in: %1, i2 dst: %3)");
  CHECK(bad.error().function_index() == prog.view().find("main"));
  CHECK(bad.error().instruction() == 1);
  // Compiled functions keep their registers on the C++ stack: the VM's memory holds only the
  // frame headers (main's and inc's), which name the call chain in errors.
  CHECK(vm.peak_memory() == 2 * sizeof(rv::static_frame));
}

// ---- link-time specialization (vm/call_site.hpp): the same program linked with and without it
namespace {
constexpr auto shapes_prog = rv::build([](rv::exec_builder& b) {
  const rv::dtype f32 = rv::dtype::float32();
  {  // info(x): check_tensor_info with a dtype and an error context, then without either
    auto fn = b.function("info", 1, {"x"});
    b.emit_call("vm.builtin.check_tensor_info", {b.r(0), b.imm(2), b.c(b.add_dtype(f32)), b.c(b.add_string("x: "))});
    b.emit_call("vm.builtin.check_tensor_info", {b.r(0), b.imm(-1), b.void_arg()});
    b.emit_ret(b.r(0));
  }
  {  // match(x): store x's dims, compare them, compute with them, make shapes of them
    auto fn = b.function("match", 1, {"x"});
    b.emit_call("vm.builtin.alloc_shape_heap", {b.vm_state(), b.imm(4)}, b.r(1));
    b.emit_call("vm.builtin.match_shape", {b.r(0), b.r(1), b.imm(2), b.imm(1), b.imm(0), b.imm(0), b.imm(4),
                                           b.c(b.add_string("m: "))});
    b.emit_call("vm.builtin.match_shape", {b.r(0), b.r(1), b.imm(2), b.imm(3), b.imm(0), b.imm(2), b.imm(9)});
    // heap[1] = heap[0] * 3; heap[2] = 100 // heap[0]; heap[3] = heap[2] - 1
    b.emit_call("vm.builtin.shape_arith", {b.r(1), b.imm(2), b.imm(1), b.imm(1), b.imm(0), b.imm(0), b.imm(3),
                                           b.imm(3), b.imm(2), b.imm(0), b.imm(100), b.imm(1), b.imm(0),
                                           b.imm(1), b.imm(3), b.imm(1), b.imm(2), b.imm(0), b.imm(1)});
    b.emit_call("vm.builtin.make_shape", {b.r(1), b.imm(4), b.imm(1), b.imm(0), b.imm(1), b.imm(1), b.imm(1), b.imm(3),
                                          b.imm(0), b.imm(7)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {  // bad_slot(x): a store into a heap that is null; slot(x): into one too small
    auto fn = b.function("bad_slot", 1, {"x"});
    b.emit_call("vm.builtin.match_shape", {b.r(0), b.void_arg(), b.imm(1), b.imm(1), b.imm(0)});
    b.emit_ret(b.r(0));
  }
  {
    auto fn = b.function("small_heap", 1, {"x"});
    b.emit_call("vm.builtin.alloc_shape_heap", {b.vm_state(), b.imm(1)}, b.r(1));
    b.emit_call("vm.builtin.make_shape", {b.r(1), b.imm(2), b.imm(0), b.imm(5), b.imm(1), b.imm(3)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {  // heap(h, x): the heap is an argument (any value the caller passes)
    auto fn = b.function("heap", 2, {"h", "x"});
    b.emit_call("vm.builtin.match_shape", {b.r(1), b.r(0), b.imm(1), b.imm(1), b.imm(0)});
    b.emit_call("vm.builtin.shape_arith", {b.r(0), b.imm(3), b.imm(0), b.imm(0), b.imm(12), b.imm(1), b.imm(0)});
    b.emit_call("vm.builtin.make_shape", {b.r(0), b.imm(1), b.imm(1), b.imm(0)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {  // alloc(d): storage from device d, a view of it
    auto fn = b.function("alloc", 1, {"d"});
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({64})), b.imm(-1),
                                             b.c(b.add_dtype(rv::dtype::uint8())), b.c(b.add_string("global"))}, b.r(1));
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({4, 2})), b.r(0), b.c(b.add_dtype(f32))},
                b.r(2));
    b.emit_call("vm.builtin.alloc_tensor", {b.r(1), b.imm(32), b.c(b.add_shape({2, 4})), b.c(b.add_dtype(f32))}, b.r(3));
    b.emit_call("vm.builtin.alloc_tensor", {b.r(2), b.imm(0), b.c(b.add_shape({8})), b.c(b.add_dtype(f32))}, b.r(4));
    b.emit_ret(b.r(3));
  }
  {  // scalar(x): a match of no dimensions; wide(x): shapes of 260 dimensions (folds over that many
     // pairs would pass clang's limit of 256)
    auto fn = b.function("scalar", 1, {"x"});
    b.emit_call("vm.builtin.match_shape", {b.r(0), b.void_arg(), b.imm(0)});
    b.emit_ret(b.r(0));
  }
  {
    auto fn = b.function("wide", 1, {"x"});
    std::vector<rv::arg> make = {b.void_arg(), b.imm(260)};
    std::vector<rv::arg> match = {b.r(1), b.void_arg(), b.imm(260)};
    for (int i = 0; i < 260; ++i) {
      make.insert(make.end(), {b.imm(0), b.imm(i % 3)});
      match.insert(match.end(), {b.imm(0), b.imm(i % 3)});
    }
    b.emit_call("vm.builtin.make_shape", make, b.r(1));
    b.emit_call("vm.builtin.match_shape", match);
    b.emit_call("vm.builtin.match_shape", {b.r(0), b.void_arg(), b.imm(1), b.imm(0), b.imm(4)});
    b.emit_ret(b.r(1));
  }
  {  // view(s): alloc_tensor of whatever the caller passes as the storage
    auto fn = b.function("view", 1, {"s"});
    b.emit_call("vm.builtin.alloc_tensor", {b.r(0), b.imm(0), b.c(b.add_shape({2})), b.c(b.add_dtype(f32))}, b.r(1));
    b.emit_ret(b.r(1));
  }
});
using shapes_special = decltype(rv::link<shapes_prog, table>());
using shapes_general = decltype(rv::link<shapes_prog, table, rv::link_options{.specialize = false}>());

rv::tensor tensor_of(std::initializer_list<std::int64_t> dims, rv::dtype t = rv::dtype::float32()) {
  return rv::tensor::try_empty(rv::shape(dims), t).value();
}

// What a call gives, in words: its value, or its error's kind, message and place.
std::string outcome(const rv::result<rv::value>& r) {
  if (!r.ok())
    return std::string(rv::to_string(r.error().kind())) + ": " + std::string(r.error().message()) + " @" +
           std::to_string(r.error().function_index()) + ":" + std::to_string(r.error().instruction());
  if (r->kind() == rv::value_kind::tensor) {
    const rv::tensor t = r->as<rv::tensor>();
    std::string s = "tensor";
    for (std::int64_t d : t.shape().dims()) s += " " + std::to_string(d);
    return s + " +" + std::to_string(t.byte_offset());
  }
  return rv::to_string(*r);
}

template <class Linked, rv::static_dispatch D>
std::vector<std::string> run_shapes() {
  using vm_type = rv::static_vm<Linked, D>;
  alignas(rv::value) std::byte memory[vm_type::memory_bytes + 1];
  const rv::device_allocator devices[] = {{rv::device::cpu(), rv::allocator::naive()},
                                          {rv::device::cpu(), rv::allocator::naive()}};
  vm_type vm = vm_type::create(memory, devices).value();
  rv::value heap = rv::value(tensor_of({2}, rv::dtype::int64()));
  std::vector<std::string> out;
  const std::vector<rv::value> inputs = {tensor_of({2, 3}),
                                         tensor_of({2}),
                                         tensor_of({2, 3}, rv::dtype::int64()),
                                         tensor_of({5, 4}),
                                         tensor_of({0, 4}),
                                         tensor_of({3, 5}),
                                         rv::value(rv::shape{6, 4}),
                                         rv::value(rv::shape{6}),
                                         rv::value(std::int64_t{7}),
                                         rv::value()};
  for (std::string_view f : {"info", "match", "bad_slot", "small_heap", "scalar", "wide"})
    for (const rv::value& x : inputs) out.push_back(std::string(f) + ": " + outcome(vm.invoke(f, V{x})));
  for (const rv::value& h : {heap, rv::value(tensor_of({2}, rv::dtype::float32())), rv::value(), rv::value(std::int64_t{1})})
    for (const rv::value& x : inputs) out.push_back("heap: " + outcome(vm.invoke("heap", V{h, x})));
  for (std::int64_t d : {-1, 0, 1, 2, -2}) out.push_back("alloc: " + outcome(vm.invoke("alloc", V{rv::value(d)})));
  rv::value storage = rv::value(rv::make_storage(rv::allocator::naive(), 8, 64, rv::device::cpu()).value());
  for (const rv::value& s : {storage, rv::value(tensor_of({2})), rv::value(std::int64_t{3})})
    out.push_back("view: " + outcome(vm.invoke("view", V{s})));
  return out;
}
}  // namespace

#if RELAXVM_USE_EXCEPTIONS
namespace {
// An allocator that throws: a specialized site turns it into the call's error, as the entry does.
struct throwing_allocator final : rv::allocator_object {
  rv::result<void*> allocate(std::size_t, std::size_t) override { throw std::runtime_error("boom"); }
  void deallocate(void*, std::size_t, std::size_t) noexcept override {}
  rv::allocator_stats stats() const override { return {}; }
  std::string_view kind_name() const override { return "throwing"; }
};
template <class Linked>
std::string run_throwing() {
  alignas(rv::value) std::byte memory[Linked::memory_bytes];
  const rv::device_allocator devices[] = {{rv::device::cpu(), rv::allocator(rv::make_object<throwing_allocator>())}};
  auto vm = rv::static_vm<Linked>::create(memory, devices).value();
  std::string out;
  for (int i = 0; i < 2; ++i) out += outcome(vm.invoke("alloc", V{rv::value(std::int64_t{0})})) + "\n";  // usable after
  return out;
}
}  // namespace
#endif

TEST_CASE("link-time specialization: the same results and errors as the general functions") {
#if RELAXVM_USE_EXCEPTIONS
  CHECK(run_throwing<shapes_special>() == run_throwing<shapes_general>());
  CHECK(run_throwing<shapes_special>().find("RuntimeError: vm.builtin.alloc_storage: boom") == 0);
#endif
  // Each specialized site is bound to its own version; without specialization, to the entry.
  constexpr rv::exec_view v = shapes_prog.view();
  const std::int64_t info = v.funcs[static_cast<std::size_t>(v.find("info"))].start;
  const bool bound_apart =
      shapes_special::sites[static_cast<std::size_t>(info)] != shapes_general::sites[static_cast<std::size_t>(info)];
  CHECK(bound_apart);
  // The error contexts, and the shape, dtype and scope of an alloc_storage that fixes its device,
  // are constants of the specialized code: no value is made of them (alloc_tensor's shapes are
  // made: tensors hold them).
  std::size_t read_special = 0, read_general = 0;
  for (std::size_t c = 0; c < shapes_special::num_constants; ++c) {
    read_special += shapes_special::constants_read[c];
    read_general += shapes_general::constants_read[c];
  }
  CHECK(read_general == shapes_special::num_constants);
  // Read: the shapes of the three alloc_tensor calls and their dtype (one constant), and the shape of
  // the alloc_storage whose device is a register (not specialized).
  CHECK(read_special == 5);
  const std::vector<std::string> general = run_shapes<shapes_general, rv::static_dispatch::interpret>();
  CHECK(run_shapes<shapes_special, rv::static_dispatch::interpret>() == general);
  CHECK(run_shapes<shapes_special, rv::static_dispatch::compile>() == general);
  CHECK(run_shapes<shapes_general, rv::static_dispatch::compile>() == general);
  // What the programs did (the same both ways): every kind of outcome each builtin has.
  const auto has = [&](std::string_view line) { return std::find(general.begin(), general.end(), line) != general.end(); };
  CHECK(has("info: tensor 2 3 +0"));
  CHECK(has("info: ValueError: x: expect Tensor with ndim 2 but get 1\n  in function 'info', instruction 0 "
            "(call vm.builtin.check_tensor_info in: %0, i2, c[0], c[1] dst: %void) @0:0"));
  CHECK(has("info: ValueError: x: expect Tensor with dtype float32 but get int64\n  in function 'info', instruction 0 "
            "(call vm.builtin.check_tensor_info in: %0, i2, c[0], c[1] dst: %void) @0:0"));
  CHECK(has("match: shape[5, 15, 19, 7]"));
  CHECK(has("match: RuntimeError: vm.builtin.shape_arith: heap[2] = 100 // 0 divides by zero\n  in function 'match', "
            "instruction 3 (call vm.builtin.shape_arith in: %1, i2, i1, i1, i0, i0, i3, i3, i2, i0, i100, i1, i0, i1, "
            "i3, i1, i2, i0, i1 dst: %void) @2:3"));
  CHECK(has("match: RuntimeError: m: match_cast error,  shape[1] mismatch to specified constant. (3 is not 4)\n  in "
            "function 'match', instruction 1 (call vm.builtin.match_shape in: %0, %1, i2, i1, i0, i0, i4, c[2] dst: "
            "%void) @2:1"));
  CHECK(has("bad_slot: ValueError: vm.builtin.match_shape: shape[0] reads or writes the shape heap, which is null\n  "
            "in function 'bad_slot', instruction 0 (call vm.builtin.match_shape in: %0, %void, i1, i1, i0 dst: %void) "
            "@7:0"));
  CHECK(has("small_heap: ValueError: vm.builtin.make_shape: dimension 1 is slot 3, outside the shape heap of 1 slots\n"
            "  in function 'small_heap', instruction 1 (call vm.builtin.make_shape in: %1, i2, i0, i5, i1, i3 dst: %2) "
            "@8:1"));
  CHECK(has("heap: TypeError: vm.builtin.match_shape: the shape heap must be a tensor, but got int64 1\n  in function "
            "'heap', instruction 0 (call vm.builtin.match_shape in: %1, %0, i1, i1, i0 dst: %void) @9:0"));
  CHECK(has("alloc: tensor 2 4 +32"));
  CHECK(has("scalar: RuntimeError: match_cast shape size mismatch.\n  in function 'scalar', instruction 0 (call "
            "vm.builtin.match_shape in: %0, %void, i0 dst: %void) @13:0"));
  CHECK(has("wide: RuntimeError: match_cast error,  shape[0] mismatch to specified constant. (2 is not 4)\n  in "
            "function 'wide', instruction 2 (call vm.builtin.match_shape in: %0, %void, i1, i0, i4 dst: %void) @14:2"));
  CHECK(has("alloc: ValueError: vm.builtin.alloc_storage: device index 2 is out of the VM's 2 devices (use -1 for the "
            "host)\n  in function 'alloc', instruction 1 (call vm.builtin.alloc_storage in: %vm, c[6], %0, c[0] dst: %2) "
            "@10:1"));
  CHECK(has("view: TypeError: vm.builtin.alloc_tensor: argument 0 expects relaxvm.storage but got tensor\n  in function "
            "'view', instruction 0 (call vm.builtin.alloc_tensor in: %0, i0, c[9], c[0] dst: %1) @15:0"));
}

namespace {
// Calls that differ only in the registers they read, and one that differs in a constant.
constexpr auto views_prog = rv::build([](rv::exec_builder& b) {
  const rv::dtype f32 = rv::dtype::float32();
  auto fn = b.function("main", 0);
  const rv::arg bytes = b.c(b.add_shape({64})), u8 = b.c(b.add_dtype(rv::dtype::uint8()));
  const rv::arg dims = b.c(b.add_shape({2, 4})), t = b.c(b.add_dtype(f32));
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), bytes, b.imm(0), u8}, b.r(0));
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), bytes, b.imm(0), u8}, b.r(1));
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({128})), b.imm(0), u8}, b.r(2));
  b.emit_call("vm.builtin.alloc_tensor", {b.r(0), b.imm(0), dims, t}, b.r(3));
  b.emit_call("vm.builtin.check_tensor_info", {b.r(3), b.imm(2), b.void_arg()});
  b.emit_call("vm.builtin.check_tensor_info", {b.r(2), b.imm(2), b.void_arg()});
  b.emit_ret(b.r(3));
});
using views_linked = decltype(rv::link<views_prog, table>());

// main(x, y): checks x as the lowering does (check_tensor_info, then match_shape), and y's
// ndim; other(x): the same check of x, in a function the facts do not describe; written(x):
// x overwritten before it is checked.
constexpr auto checks_prog = rv::build([](rv::exec_builder& b) {
  const rv::arg f32 = b.c(b.add_dtype(rv::dtype::float32())), ctx = b.c(b.add_string("x: "));
  {
    auto fn = b.function("main", 2, {"x", "y"});
    b.emit_call("vm.builtin.check_tensor_info", {b.r(0), b.imm(2), f32, ctx});
    b.emit_call("vm.builtin.match_shape", {b.r(0), b.void_arg(), b.imm(2), b.imm(0), b.imm(2), b.imm(0), b.imm(3), ctx});
    b.emit_call("vm.builtin.check_tensor_info", {b.r(1), b.imm(1), ctx});
    b.emit_ret(b.r(0));
  }
  {
    auto fn = b.function("other", 1, {"x"});
    b.emit_call("vm.builtin.check_tensor_info", {b.r(0), b.imm(2), f32, ctx});
    b.emit_ret(b.r(0));
  }
});
constexpr auto written_prog = rv::build([](rv::exec_builder& b) {
  const rv::arg f32 = b.c(b.add_dtype(rv::dtype::float32())), ctx = b.c(b.add_string("x: "));
  auto fn = b.function("main", 1, {"x"});
  b.emit_call("vm.builtin.check_tensor_info", {b.r(0), b.imm(2), f32, ctx});
  b.emit_call("vm.builtin.null_value", {}, b.r(0));
  b.emit_ret(b.r(0));
});
// What main's callers guarantee: x is float32 [2, 3] (y is not described).
constexpr rv::argument_facts<1, 2> main_facts = [] {
  rv::argument_facts<1, 2> f;
  f.function = "main";
  f.count = 1;
  f.types[0] = rv::dtype::float32();
  f.dims_begin = {0, 2};
  f.dims = {2, 3};
  return f;
}();
using checks_plain = decltype(rv::link<checks_prog, table>());
using checks_known = rv::linked_program<checks_prog, table, rv::link_options{}, main_facts>;

template <class Linked, rv::static_dispatch D>
std::vector<std::string> run_checks() {
  using vm_type = rv::static_vm<Linked, D>;
  alignas(rv::value) std::byte memory[vm_type::memory_bytes + 1];
  vm_type vm = vm_type::create(memory, host).value();
  std::vector<std::string> out;
  const rv::value y = rv::value(tensor_of({5}));
  for (const rv::value& x : {rv::value(tensor_of({2, 3})), rv::value(tensor_of({2, 4})),
                             rv::value(tensor_of({2, 3}, rv::dtype::int64())), rv::value(std::int64_t{1})}) {
    out.push_back("main: " + outcome(vm.template invoke<"main">(x, y)));
    out.push_back("other: " + outcome(vm.invoke("other", V{x})));
  }
  out.push_back("main, y of 2 dimensions: " + outcome(vm.template invoke<"main">(rv::value(tensor_of({2, 3})), rv::value(tensor_of({2, 3})))));
  return out;
}
}  // namespace

TEST_CASE("link: calls that differ only in the registers they read share one specialized version") {
  constexpr rv::exec_view v = views_prog.view();
  static_assert(v.funcs[0].start == 0);
  const auto same = [](std::size_t a, std::size_t b) { return views_linked::sites[a] == views_linked::sites[b]; };
  CHECK(same(0, 1));   // alloc_storage, into r0 and r1
  CHECK(!same(1, 2));  // another size
  CHECK(same(4, 5));   // check_tensor_info of r3 and r2
  alignas(rv::value) std::byte memory[views_linked::memory_bytes];
  auto vm = rv::static_vm<views_linked>::create(memory, host).value();
  // The shared version checks what each call reads: r3 is a tensor of 2 dimensions, r2 storage.
  CHECK(outcome(vm.invoke("main", V{})) == "TypeError: expect a Tensor but get object\n  in function 'main', instruction 5 "
        "(call vm.builtin.check_tensor_info in: %2, i2, %void dst: %void) @0:5");
}

TEST_CASE("link: argument facts settle the program's checks of its inputs; static_vm checks the facts") {
  // What a call site knows of its arguments.
  using x_info = rv::call_site<checks_prog, 0, main_facts>;
  static_assert(x_info::known_tensor(0) && x_info::known_dtype(0) == rv::dtype::float32());
  static_assert(x_info::known_dims(0).size() == 2 && x_info::known_dims(0)[1] == 3);
  static_assert(!rv::call_site<checks_prog, 0>::known_tensor(0));             // no facts
  static_assert(!rv::call_site<checks_prog, 2, main_facts>::known_tensor(0));  // y: not described
  constexpr std::int64_t other_start =
      checks_prog.view().funcs[static_cast<std::size_t>(checks_prog.view().find("other"))].start;
  static_assert(!rv::call_site<checks_prog, other_start, main_facts>::known_tensor(0));  // another function
  static_assert(!rv::call_site<written_prog, 0, main_facts>::known_tensor(0));  // x is written
  // main's checks of x are settled: bound to other versions than without the facts.
  const auto apart = [](std::size_t pc) { return checks_plain::sites[pc] != checks_known::sites[pc]; };
  CHECK(apart(0));
  CHECK(apart(1));
  // The same outcomes both ways for arguments that keep the facts; the others stop at the facts.
  const std::vector<std::string> plain = run_checks<checks_plain, rv::static_dispatch::interpret>();
  const std::vector<std::string> known = run_checks<checks_known, rv::static_dispatch::interpret>();
  CHECK(run_checks<checks_known, rv::static_dispatch::compile>() == known);
  CHECK(run_checks<checks_plain, rv::static_dispatch::compile>() == plain);
  REQUIRE(plain.size() == known.size());
  CHECK(plain[0] == "main: tensor 2 3 +0");
  CHECK(known[0] == plain[0]);
  for (std::size_t i = 1; i < plain.size(); i += 2) CHECK(known[i] == plain[i]);  // other(x): checked as before
  CHECK(plain[2].find("match_cast error,  shape[1] mismatch to specified constant. (4 is not 3)") != std::string::npos);
  CHECK(known[2] == "main: ValueError: static_vm: argument 0 of 'main' is not a tensor of float32 [2, 3], which the "
                    "program was linked for (linked::caller_facts) @-1:-1");
  CHECK(known[4] == known[2]);  // int64 [2, 3]
  CHECK(known[6] == known[2]);  // int64 1
  // y, not described, is still checked.
  CHECK(known.back().find("x: expect Tensor with ndim 1 but get 2") != std::string::npos);
  CHECK(known.back() == plain.back());
}
