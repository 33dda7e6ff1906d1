// SPDX-License-Identifier: Apache-2.0
// Firmware mode on the host: RELAXVM_HEAP=0 and RELAXVM_THREADS=0 (tests/meson.build defines
// them for this file only; it is built a second time with terse errors, RELAXVM_ERROR_TEXT=0). A linked program runs with objects from set_object_memory(), tensor
// data from an arena and frames from a static buffer, and nothing calls operator new, errors
// included.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <relaxvm.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "../support/counting_new.hpp"

static_assert(!RELAXVM_HEAP && !RELAXVM_THREADS, "build this file with -DRELAXVM_HEAP=0 -DRELAXVM_THREADS=0");

namespace rv = relaxvm;

namespace {

std::int64_t add(std::int64_t a, std::int64_t b) { return a + b; }

constexpr auto table = rv::make_table(rv::fn<"test.add">(&add), rv::builtins::shape_table, rv::builtins::memory_table,
                                      rv::builtins::control_table);

// main(x) = x + 1 through a closure that captured 1; shape(t) = its shape, via a heap slot.
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.make_closure", {b.f("test.add"), b.imm(1)}, b.r(1));
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(1), b.r(0)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("storage", 1);  // a tensor of n float32 from the arena
    b.emit_call("vm.builtin.make_shape", {b.void_arg(), b.imm(1), b.imm(0), b.r(0)}, b.r(1));
    b.emit_call("vm.builtin.alloc_storage",
                {b.vm_state(), b.r(1), b.imm(-1), b.c(b.add_dtype(rv::dtype::float32()))}, b.r(2));
    b.emit_call("vm.builtin.alloc_tensor", {b.r(2), b.imm(0), b.r(1), b.c(b.add_dtype(rv::dtype::float32()))}, b.r(3));
    b.emit_ret(b.r(3));
  }
});
using linked = decltype(rv::link<prog, table>());

alignas(64) std::byte object_memory[8192];
alignas(64) std::byte arena[1024];
alignas(rv::value) std::byte vm_memory[4096];

}  // namespace

TEST_CASE("firmware mode: objects, tensors and errors without the heap") {
  rv::set_object_memory(object_memory);
  const long before = relaxvm_test::heap_allocations();
  {
    const rv::device_allocator host[] = {{rv::device::cpu(), rv::allocator::arena(arena)}};
    rv::static_vm<linked> vm = rv::static_vm<linked>::create(vm_memory, host).value();
    const rv::value x[] = {rv::value(41)};
    CHECK(vm.invoke("main", x).value().as<std::int64_t>() == 42);
    const rv::value n[] = {rv::value(16)};
    rv::tensor t = vm.invoke("storage", n).value().as<rv::tensor>();
    CHECK(t.shape() == rv::shape{16});
    CHECK(t.numel() == 16);
    t = rv::tensor();
    // An error: its message lives in the error, and the arena's refusal names the request.
    const rv::value big[] = {rv::value(1000)};
    const rv::result<rv::value> r = vm.invoke("storage", big);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind() == rv::error_kind::runtime);
    const std::string_view m = r.error().message();
#if RELAXVM_ERROR_TEXT
    CHECK(m.find("arena allocator: exhausted: 4000 bytes") == 0);
    CHECK(m.find("in function 'storage', instruction 1 (call") != std::string_view::npos);
#else  // terse: the leading name; where the VM was, as numbers
    CHECK(m == "arena allocator: exhausted: ");
#endif
    CHECK(r.error().function_index() == linked::program.view().find("storage"));
    CHECK(r.error().instruction() == 1);
    CHECK(m.size() <= RELAXVM_TEXT_CAPACITY);
    CHECK(vm.invoke("main", x).value().as<std::int64_t>() == 42);  // still usable
    CHECK(rv::object_memory_peak() > 0);
  }
  CHECK(relaxvm_test::heap_allocations() == before);
}

TEST_CASE("firmware mode: == compares a tuple held many times once per pair, without the heap") {
  // t = (t, t) 40 times over: 2^40 paths, 41 tuples. The memo is a fixed table on the stack.
  rv::set_object_memory(object_memory);
  const long before = relaxvm_test::heap_allocations();
  {
    const auto dag = [](std::int64_t leaf) {
      const rv::value one[] = {rv::value(leaf)};
      rv::value t = rv::tuple::try_make(one).value();
      for (int i = 0; i < 40; ++i) {
        const rv::value two[] = {t, t};
        t = rv::tuple::try_make(two).value();
      }
      return t;
    };
    CHECK(dag(1) == dag(1));
    CHECK_FALSE(dag(1) == dag(2));
  }
  CHECK(relaxvm_test::heap_allocations() == before);
}

TEST_CASE("firmware mode: long messages are cut, and say so") {
  rv::detail::text t;
  for (int i = 0; i < 100; ++i) t << "0123456789";
  CHECK(t.size() == RELAXVM_TEXT_CAPACITY);
  CHECK(t.view().substr(RELAXVM_TEXT_CAPACITY - 4) == "2...");  // the 253rd digit, then the mark
  rv::error e(rv::error_kind::value, t.view());
  CHECK(e.message().size() == RELAXVM_TEXT_CAPACITY);
  CHECK(e.message().substr(RELAXVM_TEXT_CAPACITY - 3) == "...");
  rv::error short_one(rv::error_kind::value, "short");
  short_one.add_context("in function 'main'");
  CHECK(std::string(short_one.message()) == "short\n  in function 'main'");
  CHECK(std::string(short_one.what()) == "short\n  in function 'main'");
}

TEST_CASE("firmware mode: there is no heap, and asking it for tensor data is an error") {
  rv::set_object_memory(object_memory);
  const long before = relaxvm_test::heap_allocations();
  {
    const rv::result<rv::tensor> t = rv::tensor::try_empty(rv::shape{4}, rv::dtype::float32());
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().kind() == rv::error_kind::runtime);
#if RELAXVM_ERROR_TEXT
    CHECK(t.error().message() ==
          "tensor::empty: cannot allocate 16 bytes (firmware mode, RELAXVM_HEAP=0, has no heap: allocate from an arena "
          "allocator)");
#else
    CHECK(t.error().message() == "tensor::empty: cannot allocate ");
#endif
    // Shapes of any length are built in place, in the object memory.
    const rv::shape big = rv::shape::generate(12, [](std::size_t i) -> rv::result<std::int64_t> {
                            return static_cast<std::int64_t>(i);
                          }).value();
    CHECK(big.size() == 12);
    CHECK(big[11] == 11);

    // data<T>() (one out-of-line check for every T in firmware mode): the dtype, and writable
    // data of a read-only tensor, are checked; try_data says why.
    float values[4] = {1, 2, 3, 4};
    const rv::tensor t4 = rv::tensor::try_view(values, rv::shape{4}, rv::dtype::float32(), rv::device::cpu(), {}, false).value();
    CHECK(t4.data<float>() == values);
    CHECK(t4.data<const float>() == values);
    CHECK_THROWS_AS((void)t4.data<std::int32_t>(), rv::error);
    const rv::tensor ro = rv::tensor::try_view(values, rv::shape{4}, rv::dtype::float32(), rv::device::cpu(), {}, true).value();
    CHECK(ro.data<const float>() == values);
    CHECK_THROWS_AS((void)ro.data<float>(), rv::error);
    CHECK(ro.try_data<float>().error().kind() == rv::error_kind::value);
    CHECK(t4.try_data<std::int32_t>().error().kind() == rv::error_kind::type);
    CHECK_THROWS_AS((void)rv::tensor().data<float>(), rv::error);
  }
  CHECK(relaxvm_test::heap_allocations() == before);

  // A shape made by the infallible constructor with no room in the object memory: try_make's
  // error, raised (thrown here; RELAXVM_ON_ERROR without exceptions).
  rv::set_object_memory(std::span<std::byte>(object_memory, 0));
  const rv::result<rv::shape> tried = rv::shape::try_make(std::array<std::int64_t, 2>{7, 8});
  REQUIRE_FALSE(tried.ok());
  CHECK(tried.error().message().starts_with("relaxvm: the object memory ("));
  try {
    const rv::shape s{7, 8};
    FAIL("a shape was made in an empty object memory");
  } catch (const rv::error& e) {
    CHECK(e.kind() == rv::error_kind::runtime);
    CHECK(e.message() == tried.error().message());
  }
  rv::set_object_memory(object_memory);
}

namespace {
constexpr auto data_table = rv::make_table(rv::fn<"test.add">(&add), rv::builtins::data_table);
// wide() makes a 40-field tuple (672 bytes: larger than the largest object block); fill(n) keeps
// n nested tuples alive at once.
constexpr auto greedy = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("wide", 0);
    std::array<rv::arg, 40> fields{};
    for (auto& f : fields) f = b.imm(1);
    b.emit_call("vm.builtin.make_tuple", std::span<const rv::arg>(fields), b.r(0));
    b.emit_ret(b.r(0));
  }
  {
    auto fn = b.function("fill", 1);
    b.emit_call("vm.builtin.make_tuple", {}, b.r(1));
    b.emit_call("vm.builtin.make_tuple", {b.r(1), b.r(1)}, b.r(1));  // 1: one more object each round
    b.emit_call("test.add", {b.r(0), b.imm(-1)}, b.r(0));
    b.emit_if(b.r(0), 2);  // 3: n == 0 -> 5
    b.emit_goto(-3);
    b.emit_ret(b.r(1));
  }
});
using greedy_linked = decltype(rv::link<greedy, data_table>());
}  // namespace

TEST_CASE("firmware mode: a program that asks for too much object memory gets an error, not a trap") {
  rv::set_object_memory(object_memory);
  {
    const rv::device_allocator host[] = {{rv::device::cpu(), rv::allocator::arena(arena)}};
    auto vm = rv::static_vm<greedy_linked>::create(vm_memory, host).value();
    const rv::result<rv::value> wide = vm.invoke("wide", {});
    REQUIRE_FALSE(wide.ok());
    CHECK(wide.error().kind() == rv::error_kind::runtime);
#if RELAXVM_ERROR_TEXT
    CHECK(std::string(wide.error().message()).find("relaxvm: an object of 672 bytes is larger than firmware mode's largest "
                                                   "block (512 bytes)") == 0);
#endif
    const rv::value many[] = {rv::value(100000)};
    const rv::result<rv::value> filled = vm.invoke("fill", many);
    REQUIRE_FALSE(filled.ok());
#if RELAXVM_ERROR_TEXT
    CHECK(std::string(filled.error().message()).find("relaxvm: the object memory (8192 bytes) has no room for an object of") ==
          0);
#endif
    const rv::value few[] = {rv::value(3)};
    CHECK(vm.invoke("fill", few).value().as<rv::tuple>().size() == 2);  // usable, and the memory came back
  }
}

namespace {
// The firmware example's checks and allocations, linked with and without specialization.
constexpr auto checked = rv::build([](rv::exec_builder& b) {
  const rv::dtype f32 = rv::dtype::float32();
  auto fn = b.function("main", 1, {"x"});
  b.emit_call("vm.builtin.check_tensor_info", {b.r(0), b.imm(2), b.c(b.add_dtype(f32)), b.c(b.add_string("x: "))});
  b.emit_call("vm.builtin.match_shape",
              {b.r(0), b.void_arg(), b.imm(2), b.imm(0), b.imm(1), b.imm(0), b.imm(4), b.c(b.add_string("x: "))});
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({64})), b.imm(-1),
                                           b.c(b.add_dtype(rv::dtype::uint8()))}, b.r(1));
  b.emit_call("vm.builtin.alloc_tensor", {b.r(1), b.imm(48), b.c(b.add_shape({1, 4})), b.c(b.add_dtype(f32))}, b.r(2));
  b.emit_ret(b.r(2));
});
using checked_special = decltype(rv::link<checked, table>());
using checked_general = decltype(rv::link<checked, table, rv::link_options{.specialize = false}>());
}  // namespace

TEST_CASE("firmware mode: no room for the constants create() makes is an error, with nothing left live") {
  // Room for the arena's object alone: the first constant made as an object (a shape; linked
  // generally, the program's shapes and strings are values) does not fit.
  alignas(32) static std::byte small[rv::arena_object_bytes];
  rv::set_object_memory(small);
  {
    const rv::device_allocator host[] = {{rv::device::cpu(), rv::allocator::arena(arena)}};
    const rv::result<rv::static_vm<checked_general>> made = rv::static_vm<checked_general>::create(vm_memory, host);
    REQUIRE_FALSE(made.ok());
    CHECK(made.error().kind() == rv::error_kind::runtime);
    CHECK(std::string(made.error().message()).starts_with("relaxvm: the object memory ("));
  }
  // Nothing is live any more (set_object_memory would raise otherwise), and with room it works.
  rv::set_object_memory(object_memory);
  const rv::device_allocator host[] = {{rv::device::cpu(), rv::allocator::arena(arena)}};
  CHECK(rv::static_vm<checked_general>::create(vm_memory, host).ok());
}

namespace {

template <class Linked>
std::vector<std::string> run_checked() {
  static float data[8] = {};
  std::vector<std::string> out;
  const rv::device_allocator host[] = {{rv::device::cpu(), rv::allocator::arena(arena)}};
  auto vm = rv::static_vm<Linked>::create(vm_memory, host).value();
  const auto view = [](rv::shape s, rv::dtype t) {
    return rv::value(rv::tensor::try_view(data, s, t, rv::device::cpu(), {}, true).value());
  };
  for (const rv::value& x : {view(rv::shape{1, 4}, rv::dtype::float32()), view(rv::shape{2, 4}, rv::dtype::float32()),
                             view(rv::shape{1, 3}, rv::dtype::float32()), view(rv::shape{4}, rv::dtype::float32()),
                             view(rv::shape{1, 4}, rv::dtype::int32()), rv::value(7)}) {
    const rv::value args[] = {x};
    const rv::result<rv::value> r = vm.invoke("main", args);
    if (r.ok()) {
      const rv::tensor t = r->as<rv::tensor>();
      out.push_back("tensor " + std::to_string(t.ndim()) + " +" + std::to_string(t.byte_offset()));
    } else {
      out.push_back(std::string(rv::to_string(r.error().kind())) + ": " + std::string(r.error().message()) + " @" +
                    std::to_string(r.error().instruction()));
    }
  }
  return out;
}
}  // namespace

TEST_CASE("firmware mode: specialized call sites give the general functions' results and errors") {
  rv::set_object_memory(object_memory);
  const std::vector<std::string> general = run_checked<checked_general>();
  CHECK(run_checked<checked_special>() == general);
  REQUIRE(general.size() == 6);
  CHECK(general[0] == "tensor 2 +48");
#if RELAXVM_ERROR_TEXT
  CHECK(general[1] == "RuntimeError: x: match_cast error,  shape[0] mismatch to specified constant. (2 is not 1)\n"
                      "  in function 'main', instruction 1 (call vm.builtin.match_shape in: %0, %void, i2, i0, i1, i0, "
                      "i4, c[1] dst: %void) @1");
#else  // terse: the error context, and where
  CHECK(general[1] == "RuntimeError: x:  @1");
  CHECK(general[3] == "ValueError: x:  @0");
  CHECK(general[5] == "TypeError: x:  @0");
#endif
  // Only alloc_tensor's shape is made into a value (the tensor holds it).
  static_assert(!checked_special::constants_read[0] && !checked_special::constants_read[1] && checked_special::constants_read[4]);
}

namespace {
float figure_input[4] = {};
rv::tensor same(const rv::tensor& t) { return t; }
constexpr auto object_table = rv::make_table(rv::fn<"test.add">(&add), rv::fn<"test.same">(&same),
                                             rv::builtins::shape_table, rv::builtins::memory_table,
                                             rv::builtins::data_table);
// Every builtin whose objects the linker counts, a string constant read as a value, a kernel
// returning an integer, and a vm function calling another.
constexpr auto objects = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("made", 1, {"n"});
    b.emit_call("vm.builtin.alloc_shape_heap", {b.vm_state(), b.imm(2)}, b.r(1));
    b.emit_call("vm.builtin.make_shape", {b.void_arg(), b.imm(2), b.imm(0), b.r(0), b.imm(0), b.imm(3)}, b.r(2));
    b.emit_call("vm.builtin.store_shape", {b.r(2), b.r(1), b.imm(0), b.imm(1)});
    b.emit_call("vm.builtin.load_shape", {b.r(1), b.imm(0), b.imm(1)}, b.r(3));
    b.emit_call("test.add", {b.r(0), b.imm(1)}, b.r(4));
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({32})), b.imm(-1),
                                             b.c(b.add_dtype(rv::dtype::uint8()))}, b.r(5));
    b.emit_call("vm.builtin.alloc_tensor", {b.r(5), b.imm(0), b.r(3), b.c(b.add_dtype(rv::dtype::float32()))}, b.r(6));
    b.emit_call("vm.builtin.make_tuple", {b.r(6), b.r(4), b.c(b.add_string("made"))}, b.r(7));
    b.emit_ret(b.r(7));
  }
  {
    auto fn = b.function("outer", 1, {"n"});
    b.emit_call("made", {b.r(0)}, b.r(1));
    b.emit_call("made", {b.r(0)}, b.r(2));
    b.emit_call("vm.builtin.make_tuple", {b.r(1), b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
});
using objects_linked = decltype(rv::link<objects, object_table>());
// A kernel that returns an object the linker cannot size.
constexpr auto returns_tensor = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("test.same", {b.r(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
using returns_tensor_linked = decltype(rv::link<returns_tensor, object_table>());
// What a function makes is said by its table entry, not its name: vm.builtin.shape_of bound to a
// function of one's own that makes a shape is not the builtin (which returns the tensor's own);
// an entry may say what it makes (makes<rule>).
rv::result<rv::shape> own_shape_of(const rv::tensor& t) { return rv::shape::try_make(t.shape().dims()); }
rv::value first(const rv::value& v) { return v; }
constexpr auto rebound_table = rv::make_table(rv::fn<"vm.builtin.shape_of">(&own_shape_of),
                                              rv::fn<"test.first", rv::makes<rv::object_rule::none>>(&first));
constexpr auto shape_then_first = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.shape_of", {b.r(0)}, b.r(1));
  b.emit_call("test.first", {b.r(1)}, b.r(2));
  b.emit_ret(b.r(2));
});
constexpr auto first_only = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("test.first", {b.r(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
using rebound_linked = decltype(rv::link<shape_then_first, rebound_table>());
constexpr auto builtin_table = rv::make_table(rv::builtins::shape_table,
                                              rv::fn<"test.first", rv::makes<rv::object_rule::none>>(&first));
using builtin_shape_of_linked = decltype(rv::link<shape_then_first, builtin_table>());
using first_only_linked = decltype(rv::link<first_only, rebound_table>());

// The object memory a VM of Linked takes from a fresh buffer: created, then `run` with it.
template <class Linked, class Run>
std::size_t object_peak(Run run) {
  rv::set_object_memory(object_memory);
  {
    const rv::device_allocator host[] = {{rv::device::cpu(), rv::allocator::arena(arena)}};
    auto vm = rv::static_vm<Linked>::create(vm_memory, host).value();
    run(vm);
  }
  return rv::object_memory_peak();
}
}  // namespace

TEST_CASE("firmware mode: the linker's object figure covers the objects a program makes") {
  const auto run_main = [](auto& vm) {
    const rv::tensor x = rv::tensor::try_view(figure_input, rv::shape{1, 4}, rv::dtype::float32(), rv::device::cpu(), {}, true).value();
    CHECK(vm.template invoke<"main">(x).ok());
  };
  // The caller's objects: the arena allocator and the input.
  const std::size_t caller = rv::arena_object_bytes + rv::tensor_view_object_bytes(2);
  // The firmware example's program: its constants, a storage and a view; exact, as nothing is
  // freed while it runs.
  static_assert(checked_special::objects_known && checked_general::objects_known);
  CHECK(object_peak<checked_special>(run_main) == checked_special::object_bytes + caller);
  CHECK(object_peak<checked_general>(run_main) <= checked_general::object_bytes + caller);
  // The general path makes the constants it reads (the strings, the storage's shape) too.
  static_assert(checked_general::object_bytes > checked_special::object_bytes);

  static_assert(objects_linked::objects_known);
  std::size_t made_alone = 0;
  for (const char* fn : {"made", "outer"}) {
    const std::size_t peak = object_peak<objects_linked>([&](auto& vm) {
      const rv::value n[] = {rv::value(2)};
      const rv::result<rv::value> r = vm.invoke(fn, n);
      REQUIRE(r.ok());
      CHECK(r->kind() == rv::value_kind::tuple);
    });
    CHECK(peak <= objects_linked::object_bytes + rv::arena_object_bytes);
    if (std::string_view(fn) == "made") made_alone = peak;
    else CHECK(peak > made_alone);  // two calls' objects, alive together in the result
  }
  // Unknown: a kernel returning an object, a closure, a loop (each would need a bound the
  // linker does not have); static_vm::object_memory does not compile for them.
  static_assert(!returns_tensor_linked::objects_known && returns_tensor_linked::object_bytes == 0);
  static_assert(!linked::objects_known && !greedy_linked::objects_known);
  static_assert(!rebound_linked::objects_known);
  static_assert(builtin_shape_of_linked::objects_known && builtin_shape_of_linked::object_bytes == 0);
  static_assert(first_only_linked::objects_known && first_only_linked::object_bytes == 0);
}

TEST_CASE("firmware mode: a copy outside the VM's devices is an error, with no allocator object made") {
  rv::set_object_memory(object_memory);
  static float data[4] = {};
  {
    // Offset 4: ensure_zero_offset has to copy (not 64-byte aligned), and no VM is running.
    rv::tensor t = rv::tensor::try_view(data, rv::shape{3}, rv::dtype::float32(), rv::device::cpu(), {}, false).value();
    t.get()->dl.byte_offset = 4;
    const std::size_t peak_before = rv::object_memory_peak();  // nothing freed yet: a new object would raise it
    const rv::result<rv::tensor> z = rv::builtins::ensure_zero_offset(t);
    REQUIRE_FALSE(z.ok());
    CHECK(z.error().kind() == rv::error_kind::runtime);
    const rv::value args[] = {rv::value(t), rv::value(std::int64_t{kDLCPU}), rv::value(std::int64_t{0})};
    const rv::result<rv::value> d = rv::builtins::to_device(args);
    REQUIRE_FALSE(d.ok());
#if RELAXVM_ERROR_TEXT
    CHECK(z.error().message() ==
          "vm.builtin.ensure_zero_offset: cannot copy outside the VM's devices (firmware mode, RELAXVM_HEAP=0, has no "
          "heap: allocate from an arena allocator)");
    CHECK(std::string(d.error().message()).find("vm.builtin.to_device: cannot copy outside the VM's devices") == 0);
#else
    CHECK(z.error().message() == "vm.builtin.ensure_zero_offset");
    CHECK(d.error().message() == "vm.builtin.to_device");
#endif
    CHECK(rv::object_memory_peak() == peak_before);  // no allocator object was made
  }
}

TEST_CASE("firmware mode: block sizes, shared objects and shape comparison") {
  // The size classes at their edges (size_class_of finds them from the size's highest bit).
  static_assert(rv::object_block_bytes(0) == 32 && rv::object_block_bytes(1) == 32 && rv::object_block_bytes(32) == 32);
  static_assert(rv::object_block_bytes(33) == 64 && rv::object_block_bytes(64) == 64 && rv::object_block_bytes(65) == 128);
  static_assert(rv::object_block_bytes(256) == 256 && rv::object_block_bytes(257) == 512);
  static_assert(rv::object_block_bytes(512) == 512 && rv::object_block_bytes(513) == 0);
  rv::set_object_memory(object_memory);
  {
    // Without threads share() marks the object (its count is never atomic), not what it holds.
    static float data[6] = {};
    const rv::shape s = rv::shape::try_make(std::array<std::int64_t, 2>{2, 3}).value();
    const rv::tensor t = rv::tensor::try_view(data, s, rv::dtype::float32(), rv::device::cpu(), {}, false).value();
    t.share();
    CHECK(t.get()->is_shared());
    CHECK_FALSE(s.get()->is_shared());
    const rv::tensor copy = t;
    CHECK(t.get()->use_count() == 2);
    // Shapes compare by their dimensions: the same object, an equal one, the empty shape.
    const rv::shape same = rv::shape::try_make(std::array<std::int64_t, 2>{2, 3}).value();
    const rv::shape other = rv::shape::try_make(std::array<std::int64_t, 2>{2, 4}).value();
    const rv::shape shorter = rv::shape::try_make(std::array<std::int64_t, 1>{2}).value();
    CHECK(t.shape() == s);
    CHECK(same == s);
    CHECK(s != other);
    CHECK(s != shorter);
    CHECK(rv::shape() == rv::shape());
    CHECK(rv::shape() != shorter);
    CHECK(shorter != rv::shape());
    CHECK(s[1] == 3);
  }
}
