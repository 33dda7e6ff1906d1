// SPDX-License-Identifier: Apache-2.0
// Tuples, ADTs, closures and control (builtins/data.hpp, builtins/control.hpp), and the Relay VM on
// Call/Ret/If/Goto: one test per Relay instruction, following the Relay VM's own
// instruction set (TVM's src/runtime/vm/vm.cc), then whole programs: a recursive sum over a tagged
// list, a closure with captured values, and an if/else.
#include <doctest/doctest.h>

#include <cstdint>
#include <relaxvm.hpp>
#include <string>
#include <vector>

#include "../support/probe.hpp"

namespace rv = relaxvm;
using relaxvm_test::contains;
using relaxvm_test::probe;
using V = std::vector<rv::value>;

namespace {

/// Packed functions for the tests: an int add, and an int32 tensor add in destination-passing form.
void register_test_functions(rv::basic_registry& reg) {
  reg.def("test.add", [](std::int64_t a, std::int64_t b) { return a + b; });
  reg.def("test.add_out", [](const rv::tensor& a, const rv::tensor& b, const rv::tensor& out) {
    for (std::int64_t i = 0; i < out.numel(); ++i)
      out.data<std::int32_t>()[i] = a.data<const std::int32_t>()[i] + b.data<const std::int32_t>()[i];
  });
}

struct vm_with {
  rv::registry reg;
  rv::virtual_machine vm;
  explicit vm_with(const rv::executable& exe, rv::vm_options opts = {}) : vm(make(exe, std::move(opts))) {}
  rv::virtual_machine make(const rv::executable& exe, rv::vm_options opts) {
    register_test_functions(reg);
    return rv::virtual_machine(exe, reg, std::move(opts));
  }
};

rv::tensor ints(std::initializer_list<std::int32_t> v) {
  return rv::tensor::from<std::int32_t>(std::vector<std::int32_t>(v), rv::shape{static_cast<std::int64_t>(v.size())});
}
std::int32_t at(const rv::value& t, std::int64_t i) { return t.as<rv::tensor>().data<const std::int32_t>()[i]; }

}  // namespace

// ---- the data builtins -----------------------------------------------------------------------

TEST_CASE("make_tuple, tuple_getitem and tuple_reset_item") {
  probe make("vm.builtin.make_tuple", 3);
  rv::tuple t = make.ok({1, "two", rv::shape{3}}).as<rv::tuple>();
  REQUIRE(t.size() == 3);
  CHECK(t.tag() == 0);
  CHECK(t[0].as<std::int64_t>() == 1);
  CHECK(t[1].as<std::string_view>() == "two");
  CHECK(t[2].as<rv::shape>() == rv::shape{3});
  probe empty("vm.builtin.make_tuple", 0);
  CHECK(empty.ok({}).as<rv::tuple>().empty());

  probe get("vm.builtin.tuple_getitem", 2);
  CHECK(get.ok({t, 1}).as<std::string_view>() == "two");
  CHECK(get.fails({t, 3}, rv::error_kind::value) == "vm.builtin.tuple_getitem: index 3 is out of range for a tuple of 3 items");
  CHECK(get.fails({t, -1}, rv::error_kind::value) == "vm.builtin.tuple_getitem: index -1 is out of range for a tuple of 3 items");
  CHECK(get.fails({rv::shape{1}, 0}, rv::error_kind::type) == "vm.builtin.tuple_getitem: argument 0 expects tuple but got shape");
  CHECK(get.fails({t, 0.5}, rv::error_kind::type) == "vm.builtin.tuple_getitem: argument 1 expects int64 but got float64 0.5");

  probe reset("vm.builtin.tuple_reset_item", 2);
  rv::tuple alias = t;
  CHECK(reset.ok({t, 2}).is_null());
  CHECK(alias[2].is_null());  // in place: every handle sees it
  CHECK(reset.fails({t, 5}, rv::error_kind::value) ==
        "vm.builtin.tuple_reset_item: index 5 is out of range for a tuple of 3 items");
}

TEST_CASE("tagged ADTs: make_adt, get_tag, get_field") {
  probe make("vm.builtin.make_adt", 3);
  rv::tuple cons = make.ok({1, 10, rv::tuple()}).as<rv::tuple>();
  CHECK(cons.tag() == 1);
  CHECK(cons.size() == 2);
  CHECK(make.fails({std::int64_t{1} << 31, 1, 2}, rv::error_kind::value) == "vm.builtin.make_adt: tag 2147483648 does not fit int32");
  CHECK(make.fails({"1", 1, 2}, rv::error_kind::type) == "vm.builtin.make_adt: argument 0 expects int64 but got string");
  probe tag("vm.builtin.get_tag", 1);
  CHECK(tag.ok({cons}).as<std::int64_t>() == 1);
  CHECK(tag.ok({rv::tuple{1, 2}}).as<std::int64_t>() == 0);  // tuples are tag 0
  CHECK(tag.fails({5}, rv::error_kind::type) == "vm.builtin.get_tag: argument 0 expects tuple but got int64 5");
  probe field("vm.builtin.get_field", 2);
  CHECK(field.ok({cons, 0}).as<std::int64_t>() == 10);
  CHECK(field.fails({cons, 2}, rv::error_kind::value) == "vm.builtin.get_field: index 2 is out of range for a tuple of 2 items");
}

// ---- the control builtins --------------------------------------------------------------------

TEST_CASE("read_if_cond and scalar_eq read ints, bools and element 0 of integer tensors") {
  probe cond("vm.builtin.read_if_cond", 1);
  CHECK(cond.ok({1}).as<bool>());
  CHECK_FALSE(cond.ok({0}).as<bool>());
  CHECK(cond.ok({true}).as<bool>());
  rv::tensor b = rv::tensor::empty({1}, rv::dtype::bool_());
  b.data<bool>()[0] = true;
  CHECK(cond.ok({b}).as<bool>());
  CHECK_FALSE(cond.ok({ints({0, 1})}).as<bool>());
  rv::tensor i8 = rv::tensor::empty({1}, rv::dtype::int8());
  i8.data<std::int8_t>()[0] = -1;
  CHECK(cond.ok({i8}).as<bool>());
  CHECK(cond.fails({rv::tensor::empty({1}, rv::dtype::float32())}, rv::error_kind::type) ==
        "vm.builtin.read_if_cond: expects an integer or bool host tensor, but got float32 on cpu:0");
  CHECK(cond.fails({rv::tensor::empty({0}, rv::dtype::int32())}, rv::error_kind::value) ==
        "vm.builtin.read_if_cond: the tensor is empty");
  CHECK(cond.fails({1.0}, rv::error_kind::type) ==
        "vm.builtin.read_if_cond: expects an int, a bool or an integer tensor, but got float64 1");
  CHECK(cond.fails({rv::shape{1}}, rv::error_kind::type) ==
        "vm.builtin.read_if_cond: expects an int, a bool or an integer tensor, but got shape");

  probe eq("vm.builtin.scalar_eq", 2);
  rv::tensor i64 = rv::tensor::empty({1}, rv::dtype::int64());
  i64.data<std::int64_t>()[0] = 7;
  CHECK(eq.ok({i64, 7}).as<bool>());
  CHECK_FALSE(eq.ok({i64, 8}).as<bool>());
  CHECK(eq.ok({ints({-3}), -3}).as<bool>());
  CHECK(eq.fails({i64, "7"}, rv::error_kind::type) ==
        "vm.builtin.scalar_eq: expects an int, a bool or an integer tensor, but got string");
  CHECK(eq.fails({rv::tensor::empty({1}, rv::dtype(kDLInt, 128)), 7}, rv::error_kind::value) ==
        "vm.builtin.scalar_eq: Unknown scalar int type int128");
}

TEST_CASE("make_closure binds captured values last; invoke_closure calls VM and packed closures") {
  rv::exec_builder b;
  {
    auto fn = b.function("sub", 2);  // sub(a, b) = a - b, through test.add(a, -b) via shape_arith-free code
    b.emit_call("test.sub", {b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("main", 2);  // main(f, x) = invoke_closure(make_closure(f, 10), x)
    b.emit_call("vm.builtin.make_closure", {b.r(0), b.imm(10)}, b.r(2));
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(2), b.r(1)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    auto fn = b.function("apply2", 3);  // apply2(f, x, y) = f(x, y)
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(0), b.r(1), b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    auto fn = b.function("get_sub", 0);
    b.emit_call("vm.builtin.copy", {b.f("sub")}, b.r(0));
    b.emit_ret(b.r(0));
  }
  rv::registry reg;
  reg.def("test.sub", [](std::int64_t a, std::int64_t c) { return a - c; });
  rv::virtual_machine vm(b.get(), reg);
  rv::value sub = vm.invoke("get_sub", {});
  CHECK(vm.invoke("main", {sub, 3}).as<std::int64_t>() == 3 - 10);  // captured 10 comes last
  CHECK(vm.invoke("main", {reg.get("test.sub"), 3}).as<std::int64_t>() == -7);  // a packed function alike
  rv::result<rv::value> bad = vm.try_invoke("main", V{1, 3});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().kind() == rv::error_kind::type);
  CHECK(contains(std::string(bad.error().message()), "vm.builtin.make_closure: argument 0 expects closure but got int64 1"));
  // Too many arguments for the closure: the arity error names the function.
  rv::closure bound = sub.as<rv::closure>().bind(V{1});
  CHECK(vm.invoke("apply2", {sub, 50, 8}).as<std::int64_t>() == 42);
  rv::result<rv::value> arity = vm.try_invoke("apply2", V{bound, 5, 6});
  REQUIRE_FALSE(arity.ok());
  CHECK(arity.error().kind() == rv::error_kind::value);
  CHECK(contains(std::string(arity.error().message()), "Invoking function sub expects 2 arguments"));
  // A VM closure of another executable is refused, not run against the wrong code.
  probe other("vm.builtin.invoke_closure", 3, true);
  CHECK(other.fails({bound, 5, 6}, rv::error_kind::value) ==
        "invoke_closure: closure 'sub' belongs to another executable than this VM's");
  CHECK(vm.invoke("main", {sub, 30}).as<std::int64_t>() == 20);  // still usable
}

TEST_CASE("fatal always fails, with the reference's message") {
  probe f("vm.builtin.fatal", 0);
  CHECK(f.fails({}, rv::error_kind::runtime) == "VM encountered fatal error");
  probe g("vm.builtin.fatal", 1);
  CHECK(g.fails({"no match for Cons"}, rv::error_kind::runtime) == "VM encountered fatal error: no match for Cons");
}

TEST_CASE("call_tir_dyn appends the shape's dimensions as int64 arguments") {
  probe p("vm.builtin.call_tir_dyn", 3, true);
  rv::registry reg;
  reg.def("test.sum3", [](std::int64_t a, std::int64_t b, std::int64_t c) { return a * 100 + b * 10 + c; });
  CHECK(p.ok({reg.get("test.sum3"), 1, rv::shape{2, 3}}).as<std::int64_t>() == 123);
  CHECK(p.fails({reg.get("test.sum3"), 1, 2}, rv::error_kind::type) ==
        "vm.builtin.call_tir_dyn: expects ([ctx,] function, args..., shape)");
  CHECK(contains(p.fails({reg.get("test.sum3"), 1, rv::shape{2}}, rv::error_kind::type), "test.sum3"));
}

TEST_CASE("call_tir_dyn without %vm calls packed functions, and refuses VM functions") {
  probe p("vm.builtin.call_tir_dyn", 3, false);
  rv::registry reg;
  reg.def("test.sum3", [](std::int64_t a, std::int64_t b, std::int64_t c) { return a * 100 + b * 10 + c; });
  CHECK(p.ok({reg.get("test.sum3"), 4, rv::shape{5, 6}}).as<std::int64_t>() == 456);
  rv::exec_builder b;
  {
    auto fn = b.function("g", 1);
    b.emit_ret(b.r(0));
  }
  {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.copy", {b.f("g")}, b.r(0));
    b.emit_ret(b.r(0));
  }
  rv::virtual_machine other(b.get(), reg);
  rv::value g = other.invoke("main", {});
  // Without %vm, a program's call goes to the VM running it, which does not own g.
  CHECK(p.fails({g, 1, rv::shape{}}, rv::error_kind::value) ==
        "invoke_closure: closure 'g' belongs to another executable than this VM's");
  // From C++ outside every VM there is no VM to call g.
  const rv::value args[] = {g, 1, rv::shape{}};
  CHECK(std::string(rv::builtins::call_tir_dyn(args).error().message()) ==
        "vm.builtin.call_tir_dyn: calling VM function 'g' needs the VM context (%vm) first");
}

// ---- the Relay VM's instructions, one by one (section 1.7) ------------------------------------

TEST_CASE("Relay Move: vm.builtin.copy") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.copy", {b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  vm_with v(b.get());
  rv::tensor t = ints({1});
  CHECK(v.vm.invoke("main", {t}).as<rv::tensor>().get() == t.get());  // the same object, as Relay's reference copy
}

TEST_CASE("Relay Ret, Invoke and Goto") {
  rv::exec_builder b;
  {
    auto fn = b.function("twice", 1);
    b.emit_call("test.add", {b.r(0), b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("main", 1);
    b.emit_call("twice", {b.r(0)}, b.r(1));  // Invoke: a frame is pushed
    b.emit_goto(2);                           // Goto: skips the next instruction
    b.emit_call("vm.builtin.fatal", {});
    b.emit_ret(b.r(1));                       // Ret
  }
  vm_with v(b.get());
  CHECK(v.vm.invoke("main", {21}).as<std::int64_t>() == 42);
}

TEST_CASE("Relay InvokeClosure and AllocClosure: make_closure and invoke_closure") {
  rv::exec_builder b;
  {
    auto fn = b.function("lifted", 2);  // a lambda-lifted function: its argument, then its free variable
    b.emit_call("test.add", {b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("main", 2);
    b.emit_call("vm.builtin.make_closure", {b.f("lifted"), b.r(1)}, b.r(2));  // AllocClosure
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(2), b.r(0)}, b.r(3));  // InvokeClosure
    b.emit_ret(b.r(3));
  }
  vm_with v(b.get());
  CHECK(v.vm.invoke("main", {1, 100}).as<std::int64_t>() == 101);
}

TEST_CASE("Relay InvokePacked: a destination-passing call with outputs preallocated") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 3);
    b.emit_call("test.add_out", {b.r(0), b.r(1), b.r(2)});
    b.emit_ret(b.r(2));
  }
  vm_with v(b.get());
  rv::tensor out = rv::tensor::empty({2}, rv::dtype::int32());
  rv::value r = v.vm.invoke("main", {ints({1, 2}), ints({10, 20}), out});
  CHECK(at(r, 0) == 11);
  CHECK(at(r, 1) == 22);
}

TEST_CASE("Relay AllocStorage, AllocTensor and AllocTensorReg") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);  // r0: a shape as an int64 tensor (AllocTensorReg's shape register)
    b.emit_call("vm.builtin.alloc_storage",
                {b.vm_state(), b.c(b.add_shape({64})), b.imm(0), b.c(b.add_dtype(rv::dtype::uint8()))}, b.r(1));
    b.emit_call("vm.builtin.alloc_tensor", {b.r(1), b.imm(0), b.c(b.add_shape({2, 2})), b.c(b.add_dtype(rv::dtype::int32()))},
                b.r(2));
    b.emit_call("vm.builtin.tensor_to_shape", {b.r(0)}, b.r(3));
    b.emit_call("vm.builtin.alloc_tensor", {b.r(1), b.imm(16), b.r(3), b.c(b.add_dtype(rv::dtype::int32()))}, b.r(4));
    b.emit_call("vm.builtin.make_tuple", {b.r(2), b.r(4)}, b.r(5));
    b.emit_ret(b.r(5));
  }
  vm_with v(b.get());
  rv::tensor shape = rv::tensor::from<std::int64_t>(std::vector<std::int64_t>{3}, rv::shape{1});
  rv::tuple r = v.vm.invoke("main", {shape}).as<rv::tuple>();
  rv::tensor a = r[0].as<rv::tensor>(), c = r[1].as<rv::tensor>();
  CHECK(a.shape() == rv::shape{2, 2});
  CHECK(c.shape() == rv::shape{3});
  CHECK(c.byte_offset() == 16);
  CHECK(static_cast<char*>(c.raw_data()) == static_cast<char*>(a.raw_data()) + 16);  // one storage
  rv::tensor too_big = rv::tensor::from<std::int64_t>(std::vector<std::int64_t>{13}, rv::shape{1});
  rv::result<rv::value> bad = v.vm.try_invoke("main", V{too_big});
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(std::string(bad.error().message()), "attempted to allocate 52 at offset 16 in region that is 64 bytes"));
}

TEST_CASE("Relay AllocADT, GetTag and GetField") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2);
    b.emit_call("vm.builtin.make_adt", {b.imm(3), b.r(0), b.r(1)}, b.r(2));  // AllocADT tag 3
    b.emit_call("vm.builtin.get_tag", {b.r(2)}, b.r(3));                     // GetTag
    b.emit_call("vm.builtin.get_field", {b.r(2), b.imm(1)}, b.r(4));         // GetField
    b.emit_call("vm.builtin.make_tuple", {b.r(3), b.r(4)}, b.r(5));          // AllocADT tag 0
    b.emit_ret(b.r(5));
  }
  vm_with v(b.get());
  rv::tuple r = v.vm.invoke("main", {"a", "b"}).as<rv::tuple>();
  CHECK(r.tag() == 0);
  CHECK(r[0].as<std::int64_t>() == 3);
  CHECK(r[1].as<std::string_view>() == "b");
}

TEST_CASE("Relay If (test == target) and LoadConsti: scalar_eq on an immediate") {
  // The Relay compiler's layout: if $t $k 1 F; <true>; move; goto; <false>; move
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.scalar_eq", {b.r(0), b.imm(2)}, b.r(1));  // LoadConsti 2 is the immediate
    b.emit_if(b.r(1), 3);
    b.emit_call("vm.builtin.copy", {b.c(b.add_string("two"))}, b.r(2));
    b.emit_goto(2);
    b.emit_call("vm.builtin.copy", {b.c(b.add_string("other"))}, b.r(2));
    b.emit_ret(b.r(2));
  }
  vm_with v(b.get());
  rv::tensor two = rv::tensor::from<std::int32_t>(std::vector<std::int32_t>{2}, rv::shape{1});
  CHECK(v.vm.invoke("main", {two}).as<std::string_view>() == "two");  // a tensor test, as Relay's
  CHECK(v.vm.invoke("main", {5}).as<std::string_view>() == "other");
}

TEST_CASE("Relay LoadConst: a constant argument") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.copy", {b.c(b.add_tensor<std::int32_t>({4, 5}, {2}))}, b.r(0));
    b.emit_ret(b.r(0));
  }
  vm_with v(b.get());
  rv::value c = v.vm.invoke("main", {});
  CHECK(at(c, 1) == 5);
  CHECK(c.as<rv::tensor>().get() == v.vm.invoke("main", {}).as<rv::tensor>().get());  // loaded once, shared
}

TEST_CASE("Relay Fatal: vm.builtin.fatal") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.fatal", {});
    b.emit_ret(b.void_arg());
  }
  vm_with v(b.get());
  rv::result<rv::value> r = v.vm.try_invoke("main", {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::runtime);
  CHECK(std::string(r.error().message()).find("VM encountered fatal error") == 0);
}

TEST_CASE("Relay ShapeOf and ReshapeTensor") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2);  // main(x, newshape as an int64 tensor)
    b.emit_call("vm.builtin.shape_of", {b.r(0)}, b.r(2));
    b.emit_call("vm.builtin.shape_to_tensor", {b.r(2)}, b.r(3));  // Relay's ShapeOf gives a tensor
    b.emit_call("vm.builtin.tensor_to_shape", {b.r(1)}, b.r(4));
    b.emit_call("vm.builtin.reshape", {b.r(0), b.r(4)}, b.r(5));
    b.emit_call("vm.builtin.make_tuple", {b.r(3), b.r(5)}, b.r(6));
    b.emit_ret(b.r(6));
  }
  vm_with v(b.get());
  rv::tensor x = rv::tensor::empty({2, 3}, rv::dtype::int32());
  rv::tensor ns = rv::tensor::from<std::int64_t>(std::vector<std::int64_t>{3, 2}, rv::shape{2});
  rv::tuple r = v.vm.invoke("main", {x, ns}).as<rv::tuple>();
  CHECK(r[0].as<rv::tensor>().data<const std::int64_t>()[1] == 3);
  CHECK(r[1].as<rv::tensor>().shape() == rv::shape{3, 2});
  CHECK(r[1].as<rv::tensor>().raw_data() == x.raw_data());
}

TEST_CASE("Relay DeviceCopy: to_device between two CPU devices") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.to_device", {b.vm_state(), b.r(0), b.imm(kDLCPU), b.imm(1)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::vm_options o;
  rv::allocator dev1 = rv::allocator::naive();
  o.devices = {{rv::device::cpu(1), dev1}, {rv::device::cpu(0), rv::allocator::naive()}};
  vm_with v(b.get(), o);
  rv::value r = v.vm.invoke("main", {ints({7, 8})});
  CHECK(r.as<rv::tensor>().device() == rv::device::cpu(1));
  CHECK(at(r, 1) == 8);
  CHECK(dev1.stats().bytes_in_use == 8);
}

TEST_CASE("Relay KillRegister: null_value (as Relax codegen emits) and kill_object") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    const auto bytes = b.c(b.add_shape({64}));
    const auto u8 = b.c(b.add_dtype(rv::dtype::uint8()));
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), bytes, b.imm(0), u8}, b.r(0));
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), bytes, b.imm(0), u8}, b.r(1));
    b.emit_call("test.in_use", {}, b.r(2));
    b.emit_call("vm.builtin.null_value", {}, b.r(0));
    b.emit_call("test.in_use", {}, b.r(3));
    b.emit_call("vm.builtin.kill_object", {b.r(1)}, b.r(1));
    b.emit_call("test.in_use", {}, b.r(4));
    b.emit_call("vm.builtin.make_tuple", {b.r(2), b.r(3), b.r(4)}, b.r(5));
    b.emit_ret(b.r(5));
  }
  rv::vm_options o;
  rv::allocator host = rv::allocator::naive();
  o.devices = {{rv::device::cpu(), host}};
  o.reuse_allocations = false;  // else each storage is kept for the next run
  rv::registry reg;
  reg.def("test.in_use", [&] { return host.stats().bytes_in_use; });
  rv::virtual_machine vm(b.get(), reg, o);
  rv::tuple r = vm.invoke("main", {}).as<rv::tuple>();
  CHECK(r[0].as<std::int64_t>() == 128);
  CHECK(r[1].as<std::int64_t>() == 64);
  CHECK(r[2].as<std::int64_t>() == 0);
}

// ---- whole programs ----------------------------------------------------------------------------

TEST_CASE("a recursive sum over a tagged list (Nil = 0, Cons = 1)") {
  constexpr std::int64_t nil = 0, cons = 1;
  rv::exec_builder b;
  {
    auto fn = b.function("sum", 1);  // sum(l) = match l { Cons(h, t) => h + sum(t), Nil => 0 }
    b.emit_call("vm.builtin.get_tag", {b.r(0)}, b.r(1));
    b.emit_call("vm.builtin.scalar_eq", {b.r(1), b.imm(cons)}, b.r(2));
    b.emit_if(b.r(2), 6);
    b.emit_call("vm.builtin.get_field", {b.r(0), b.imm(0)}, b.r(3));
    b.emit_call("vm.builtin.get_field", {b.r(0), b.imm(1)}, b.r(4));
    b.emit_call("sum", {b.r(4)}, b.r(5));
    b.emit_call("test.add", {b.r(3), b.r(5)}, b.r(6));
    b.emit_ret(b.r(6));
    b.emit_call("vm.builtin.scalar_eq", {b.r(1), b.imm(nil)}, b.r(7));
    b.emit_if(b.r(7), 3);
    b.emit_call("vm.builtin.copy", {b.imm(0)}, b.r(8));
    b.emit_ret(b.r(8));
    b.emit_call("vm.builtin.fatal", {b.c(b.add_string("sum: not a list"))});  // a non-exhaustive match
    b.emit_ret(b.void_arg());
  }
  {
    auto fn = b.function("range", 2);  // range(i, n) = i < n ? Cons(i, range(i + 1, n)) : Nil
    b.emit_call("test.less", {b.r(0), b.r(1)}, b.r(2));
    b.emit_if(b.r(2), 5);
    b.emit_call("test.add", {b.r(0), b.imm(1)}, b.r(3));
    b.emit_call("range", {b.r(3), b.r(1)}, b.r(4));
    b.emit_call("vm.builtin.make_adt", {b.imm(cons), b.r(0), b.r(4)}, b.r(5));
    b.emit_ret(b.r(5));
    b.emit_call("vm.builtin.make_adt", {b.imm(nil)}, b.r(6));
    b.emit_ret(b.r(6));
  }
  rv::registry reg;
  register_test_functions(reg);
  reg.def("test.less", [](std::int64_t a, std::int64_t c) { return a < c; });
  rv::virtual_machine vm(b.get(), reg);
  rv::value list = vm.invoke("range", {0, 100});
  CHECK(list.as<rv::tuple>().tag() == cons);
  CHECK(vm.invoke("sum", {list}).as<std::int64_t>() == 4950);
  CHECK(vm.invoke("sum", {vm.invoke("range", {5, 5})}).as<std::int64_t>() == 0);
  rv::result<rv::value> bad = vm.try_invoke("sum", V{rv::tuple::adt(7, {})});
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.error().message()).find("VM encountered fatal error: sum: not a list") == 0);
  CHECK(vm.invoke("sum", {vm.invoke("range", {1, 4})}).as<std::int64_t>() == 6);  // usable after the error
}

TEST_CASE("a closure that captures values, invoked through invoke_closure") {
  rv::exec_builder b;
  {
    auto fn = b.function("affine", 3);  // affine(x, a, c) = a * x + c: x is the call's, a and c are captured
    b.emit_call("test.mul", {b.r(1), b.r(0)}, b.r(3));
    b.emit_call("test.add", {b.r(3), b.r(2)}, b.r(4));
    b.emit_ret(b.r(4));
  }
  {
    auto fn = b.function("make_affine", 2);  // returns the closure
    b.emit_call("vm.builtin.make_closure", {b.f("affine"), b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("apply", 2);  // apply(f, x) = f(x)
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::registry reg;
  register_test_functions(reg);
  reg.def("test.mul", [](std::int64_t a, std::int64_t c) { return a * c; });
  rv::virtual_machine vm(b.get(), reg);
  rv::closure f = vm.invoke("make_affine", {3, 4}).as<rv::closure>();
  CHECK(f.bound().size() == 2);
  CHECK(vm.invoke("apply", {f, 5}).as<std::int64_t>() == 19);
  CHECK(vm.invoke_closure(f, V{10}).as<std::int64_t>() == 34);  // from C++ too
}

TEST_CASE("if/else on read_if_cond") {
  rv::exec_builder b;
  {
    auto fn = b.function("abs", 1);  // abs(x) = x < 0 ? -x : x, the condition a bool tensor
    b.emit_call("test.negative", {b.r(0)}, b.r(1));
    b.emit_call("vm.builtin.read_if_cond", {b.r(1)}, b.r(2));
    b.emit_if(b.r(2), 3);
    b.emit_call("test.neg", {b.r(0)}, b.r(3));
    b.emit_goto(2);
    b.emit_call("vm.builtin.copy", {b.r(0)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  rv::registry reg;
  reg.def("test.negative", [](std::int64_t x) {
    rv::tensor t = rv::tensor::empty({1}, rv::dtype::bool_());
    t.data<bool>()[0] = x < 0;
    return t;
  });
  reg.def("test.neg", [](std::int64_t x) { return -x; });
  rv::virtual_machine vm(b.get(), reg);
  CHECK(vm.invoke("abs", {-5}).as<std::int64_t>() == 5);
  CHECK(vm.invoke("abs", {6}).as<std::int64_t>() == 6);
  CHECK(vm.invoke("abs", {0}).as<std::int64_t>() == 0);
}
