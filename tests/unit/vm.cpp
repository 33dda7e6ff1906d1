// SPDX-License-Identifier: Apache-2.0
// vm/virtual_machine.hpp and vm/vm_impl.hpp: the interpreter.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <relaxvm.hpp>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

namespace rv = relaxvm;

// Counts heap allocations, to check that calls allocate nothing.
#include "../support/counting_new.hpp"
#include "../support/programs.hpp"
using relaxvm_test::heap_allocations;

namespace {

rv::registry test_registry() {
  rv::registry reg;
  reg.def("test.add", [](std::int64_t a, std::int64_t b) { return a + b; });
  reg.def("test.sub", [](std::int64_t a, std::int64_t b) { return a - b; });
  reg.def("test.mul", [](std::int64_t a, std::int64_t b) { return a * b; });
  reg.def("test.lt", [](std::int64_t a, std::int64_t b) { return a < b; });
  reg.def("test.id", [](std::int64_t a) { return a; });
  reg.def("test.fail", [](std::int64_t code) -> rv::result<std::int64_t> {
    return rv::detail::value_error("test.fail: failing with ", code);
  });
  reg.def("test.vadd", [](const rv::tensor& a, const rv::tensor& b) {
    rv::tensor out = rv::tensor::empty(a.shape(), a.dtype());
    for (std::int64_t i = 0; i < a.numel(); ++i) out.data<float>()[i] = a.data<const float>()[i] + b.data<const float>()[i];
    return out;
  });
  reg.def("test.vmul", [](const rv::tensor& a, const rv::tensor& b) {
    rv::tensor out = rv::tensor::empty(a.shape(), a.dtype());
    for (std::int64_t i = 0; i < a.numel(); ++i) out.data<float>()[i] = a.data<const float>()[i] * b.data<const float>()[i];
    return out;
  });
  reg.def("test.call_back", [](rv::vm_context& ctx, const rv::closure& f, std::int64_t x) {
    std::vector<rv::value> args{rv::value(x)};
    return ctx.invoke_closure(f, args);
  });
  return reg;
}

// fact(n) = n < 2 ? 1 : n * fact(n - 1), as bytecode calling itself.
using relaxvm_test::programs::factorial;

std::string error_of(const rv::result<rv::value>& r) {
  REQUIRE_FALSE(r.ok());
  return std::string(r.error().message());
}

}  // namespace

TEST_CASE("the Relax VM design example: move, add, mul on tensors") {
  rv::exec_builder b;
  rv::tensor c0 = rv::tensor::from<float>({1, 2, 3}, {3});
  {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.copy", {b.c(b.add_constant(c0))}, b.r(1));
    b.emit_call("test.vadd", {b.r(0), b.r(1)}, b.r(2));
    b.emit_call("test.vmul", {b.r(2), b.r(1)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  rv::registry reg = test_registry();
  rv::virtual_machine vm(b.get(), reg);
  rv::tensor x = rv::tensor::from<float>({10, 20, 30}, {3});
  rv::tensor y = vm["main"](x).as<rv::tensor>();
  CHECK(y.data<float>()[0] == 11.0f);
  CHECK(y.data<float>()[2] == 99.0f);
  CHECK(x.get()->use_count() == 1);
}

TEST_CASE("recursion through VM-to-VM calls") {
  rv::registry reg = test_registry();
  rv::virtual_machine vm(factorial(), reg);
  CHECK(vm["fact"](5).as<std::int64_t>() == 120);
  CHECK(vm["fact"](20).as<std::int64_t>() == 2432902008176640000);
  CHECK(vm.invoke("fact", {rv::value(1)}).as<std::int64_t>() == 1);
}

TEST_CASE("deep recursion does not grow the C++ stack") {
  // sum(n) = n == 0 ? 0 : n + sum(n - 1), 100000 frames deep.
  rv::exec_builder b;
  {
    auto fn = b.function("sum", 1);
    b.emit_if(b.r(0), 5);  // n == 0: jump to the base case
    b.emit_call("test.sub", {b.r(0), b.imm(1)}, b.r(2));
    b.emit_call("sum", {b.r(2)}, b.r(3));
    b.emit_call("test.add", {b.r(0), b.r(3)}, b.r(1));
    b.emit_ret(b.r(1));
    b.emit_call("vm.builtin.copy", {b.imm(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::registry reg = test_registry();
  rv::vm_options opts;
  opts.max_call_depth = 200000;
  rv::virtual_machine vm(b.get(), reg, opts);
  CHECK(vm["sum"](100000).as<std::int64_t>() == 5000050000);
}

TEST_CASE("the call depth limit is a clear error, and the VM is usable afterwards") {
  rv::registry reg = test_registry();
  rv::vm_options opts;
  opts.max_call_depth = 50;
  rv::virtual_machine vm(factorial(), reg, opts);
  rv::result<rv::value> r = vm["fact"].try_call(std::vector<rv::value>{rv::value(100)});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::runtime);
  const std::string msg = error_of(r);
  CHECK(msg.find("call depth limit of 50 frames reached calling function 'fact'; raise vm_options::max_call_depth") == 0);
  CHECK(msg.find("in function 'fact', instruction 5 (call fact in: %3 dst: %4)") != std::string::npos);
  CHECK(vm["fact"](10).as<std::int64_t>() == 3628800);
}

TEST_CASE("an instruction budget stops a program that loops forever, and the VM is usable afterwards") {
  // spin(loop): while (loop) {}; return loop
  rv::exec_builder b;
  {
    auto fn = b.function("spin", 1, {"loop"});
    b.emit_if(b.r(0), 2);  // loop false: to the ret
    b.emit_goto(-1);
    b.emit_ret(b.r(0));
  }
  rv::registry reg;
  rv::vm_options opts;
  opts.max_instructions = 1000;
  rv::virtual_machine vm(b.get(), reg, opts);
  rv::result<rv::value> r = vm["spin"].try_call(std::vector<rv::value>{rv::value(true)});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::runtime);
  CHECK(error_of(r) ==
        "instruction budget exceeded: this invocation ran 1000 instructions (vm_options::max_instructions; a call also "
        "costs one per 8 register slots it sets up); the program may loop forever\n"
        "  in function 'spin', instruction 0 (If %0, 2)");
  // The budget is per invocation: the next one starts afresh.
  CHECK(vm["spin"].try_call(std::vector<rv::value>{rv::value(false)}).ok());
  vm.set_instruction_budget(3);
  CHECK(vm["spin"].try_call(std::vector<rv::value>{rv::value(false)}).ok());  // if, ret: 2 instructions
  vm.set_instruction_budget(1);
  CHECK(error_of(vm["spin"].try_call(std::vector<rv::value>{rv::value(false)})).find("instruction budget exceeded: this "
                                                                                      "invocation ran 1 instructions") == 0);
  vm.set_instruction_budget(0);  // no limit
  CHECK(vm["spin"].try_call(std::vector<rv::value>{rv::value(false)}).ok());
}

TEST_CASE("the stack slot limit bounds what a program can make the VM allocate") {
  // A function with a huge register file, recursing: each frame takes 2^20 + 2 slots.
  rv::exec_builder b;
  {
    auto fn = b.function("big", 1);
    b.reserve_registers(std::int64_t{1} << 20);
    b.emit_call("big", {b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::registry reg;
  rv::vm_options opts;
  opts.max_stack_slots = std::int64_t{1} << 21;  // two such frames do not fit
  rv::virtual_machine vm(b.get(), reg, opts);
  rv::result<rv::value> r = vm["big"].try_call(std::vector<rv::value>{rv::value(1)});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::runtime);
  CHECK(error_of(r).find("the VM's stack would need more than 2097152 register slots calling function 'big' "
                         "(1048578 slots)") == 0);
  CHECK(rv::vm_options{}.max_stack_slots == std::int64_t{1} << 24);
}

TEST_CASE("a VM function called with a void destination (the reference crashes here)") {
  rv::exec_builder b;
  {
    auto fn = b.function("helper", 1);
    b.emit_call("vm.builtin.null_value", {}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("main", 1);
    b.emit_call("helper", {b.r(0)});  // no destination
    b.emit_call("helper", {b.r(0)}, b.void_arg());
    b.emit_call("test.id", {b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::registry reg = test_registry();
  rv::virtual_machine vm(b.get(), reg);
  CHECK(vm["main"](7).as<std::int64_t>() == 7);
}

TEST_CASE("If takes an int or a bool; anything else is a type error") {
  rv::exec_builder b;
  {
    auto fn = b.function("pick", 1);
    b.emit_if(b.r(0), 3);
    b.emit_call("vm.builtin.copy", {b.imm(10)}, b.r(1));
    b.emit_goto(2);
    b.emit_call("vm.builtin.copy", {b.imm(20)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::registry reg = test_registry();
  rv::virtual_machine vm(b.get(), reg);
  CHECK(vm["pick"](true).as<std::int64_t>() == 10);
  CHECK(vm["pick"](false).as<std::int64_t>() == 20);
  CHECK(vm["pick"](-3).as<std::int64_t>() == 10);
  CHECK(vm["pick"](0).as<std::int64_t>() == 20);
  rv::result<rv::value> r = vm["pick"].try_call(std::vector<rv::value>{rv::value(rv::tensor::scalar<int>(1))});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::type);
  CHECK(error_of(r) ==
        "If: the condition must be an int64 or a bool, but register %0 holds tensor; convert tensors with "
        "vm.builtin.read_if_cond\n  in function 'pick', instruction 0 (If %0, 3)");
}

TEST_CASE("errors name the instruction and its callers; nothing leaks; the VM stays usable") {
  rv::exec_builder b;
  {
    auto fn = b.function("inner", 1);
    b.emit_call("test.vadd", {b.r(0), b.r(0)}, b.r(1));
    b.emit_call("test.fail", {b.imm(7)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.copy", {b.r(0)}, b.r(1));
    b.emit_call("inner", {b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::registry reg = test_registry();
  rv::virtual_machine vm(b.get(), reg);
  rv::tensor x = rv::tensor::from<float>({1, 2}, {2});
  for (int round = 0; round < 3; ++round) {
    rv::result<rv::value> r = vm["main"].try_call(std::vector<rv::value>{rv::value(x)});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind() == rv::error_kind::value);
    CHECK(error_of(r) ==
          "test.fail: failing with 7\n"
          "  in function 'inner', instruction 1 (call test.fail in: i7 dst: %2)\n"
          "  called from function 'main', instruction 1 (call inner in: %1 dst: %2)");
    CHECK(x.get()->use_count() == 1);  // every register that held it was cleared
  }
  CHECK(vm["inner"].try_call(std::vector<rv::value>{rv::value(1)}).error().kind() == rv::error_kind::type);
}

TEST_CASE("invoking with the wrong number of arguments") {
  rv::registry reg = test_registry();
  rv::virtual_machine vm(factorial(), reg);
  rv::result<rv::value> r = vm.try_invoke("fact", std::vector<rv::value>{rv::value(1), rv::value(2)});
  CHECK(r.error().kind() == rv::error_kind::value);
  CHECK(error_of(r) == "Invoking function fact expects 1 arguments (n), but 2 arguments were provided.");
  CHECK(error_of(vm.try_invoke("nope", {})) == "virtual_machine: the executable has no function 'nope'");
}

TEST_CASE("a missing packed function fails VM construction, naming where it is needed") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("test.add", {b.r(0), b.imm(1)}, b.r(1));
    b.emit_call("kernel.missing", {b.r(1)}, b.r(2));
    b.emit_call("test.call_back", {b.vm_state(), b.f("other.missing"), b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  rv::registry reg = test_registry();
  rv::result<rv::virtual_machine> vm = rv::virtual_machine::create(b.get(), reg);
  REQUIRE_FALSE(vm.ok());
  CHECK(vm.error().kind() == rv::error_kind::value);
  CHECK(std::string(vm.error().message()) ==
        "virtual_machine: 2 packed functions are not in the registry:\n"
        "  'kernel.missing', needed by function 'main', instruction 1 (call kernel.missing in: %1 dst: %2)\n"
        "  'other.missing', needed by function 'main', instruction 2 (call test.call_back in: %vm, f[other.missing], %2 "
        "dst: %3)\n"
        "register them (registry::def) before making the VM");
#if RELAXVM_USE_EXCEPTIONS
  CHECK_THROWS_AS(rv::virtual_machine(b.get(), reg), rv::error);
#endif
}

TEST_CASE("calls allocate nothing once the VM is warm") {
  rv::exec_builder b;
  {
    auto fn = b.function("loop", 1);
    b.emit_call("test.add", {b.r(0), b.imm(1)}, b.r(1));
    b.emit_call("test.id", {b.r(1)}, b.r(2));
    b.emit_call("helper", {b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    auto fn = b.function("helper", 1);
    b.emit_call("test.mul", {b.r(0), b.imm(2)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::registry reg = test_registry();
  rv::virtual_machine vm(b.get(), reg);
  rv::vm_function f = vm["loop"];
  std::array<rv::value, 1> args{rv::value(1)};
  CHECK(f.try_call(args)->as<std::int64_t>() == 4);  // warm up: frames and segments
  const long before = heap_allocations();
  std::int64_t total = 0;
  for (int i = 0; i < 1000; ++i) total += f.try_call(args)->as<std::int64_t>();
  CHECK(heap_allocations() == before);
  CHECK(total == 4000);
}

TEST_CASE("the instrument hook sees every call, and may skip one") {
  rv::exec_builder b;
  {
    auto fn = b.function("double_it", 1);
    b.emit_call("test.add", {b.r(0), b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("main", 1);
    b.emit_call("test.id", {b.r(0)}, b.r(1));
    b.emit_call("double_it", {b.r(1)}, b.r(2));
    b.emit_call("test.add", {b.r(2), b.imm(1)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  rv::registry reg = test_registry();
  rv::virtual_machine vm(b.get(), reg);
  std::vector<std::string> log;
  vm.set_instrument([&](const rv::call_event& e) {
    std::string line = std::string(e.before ? "before " : "after ") + std::string(e.callee) + " from " +
                       std::string(e.caller) + "@" + std::to_string(e.instruction) + " args=" + std::to_string(e.args.size());
    if (!e.before) line += " -> " + rv::to_string(*e.result);
    log.push_back(line);
    return rv::instrument_action::proceed;
  });
  CHECK(vm["main"](5).as<std::int64_t>() == 11);
  CHECK(log == std::vector<std::string>{
                   "before test.id from main@0 args=1", "after test.id from main@0 args=1 -> 5",
                   "before double_it from main@1 args=1", "before test.add from double_it@0 args=2",
                   "after test.add from double_it@0 args=2 -> 10", "after double_it from main@1 args=1 -> 10",
                   "before test.add from main@2 args=2", "after test.add from main@2 args=2 -> 11"});
  // Skipping: the callee does not run, its destination gets null.
  vm.set_instrument([](const rv::call_event& e) {
    return e.callee == "double_it" ? rv::instrument_action::skip : rv::instrument_action::proceed;
  });
  rv::result<rv::value> r = vm.try_invoke("main", std::vector<rv::value>{rv::value(5)});
  CHECK(error_of(r).find("test.add: argument 0 expects int64 but got null") == 0);
  vm.set_instrument({});
  CHECK(vm["main"](5).as<std::int64_t>() == 11);
  // A hook that removes itself while it runs: it finishes, and no "after" call follows.
  int calls = 0;
  vm.set_instrument([&](const rv::call_event&) {
    ++calls;
    vm.set_instrument({});
    return rv::instrument_action::proceed;
  });
  CHECK(vm["main"](5).as<std::int64_t>() == 11);
  CHECK(calls == 1);
#if RELAXVM_USE_EXCEPTIONS
  vm.set_instrument([](const rv::call_event&) -> rv::instrument_action { throw std::runtime_error("hook broke"); });
  CHECK(error_of(vm.try_invoke("main", std::vector<rv::value>{rv::value(5)})) ==
        "instrument hook: hook broke\n  in function 'main', instruction 0 (call test.id in: %0 dst: %1)");
  vm.set_instrument({});
#endif
}

TEST_CASE("a Call run again inside itself, while its argument block is in use, passes its own arguments") {
  // sum(n) = n < 1 ? 0 : n + call_back(%vm, f[sum], n - 1): the call_back instruction runs again
  // while its argument block holds the outer run's arguments, so the inner runs pass theirs in the
  // frame's scratch (the block's fixed arguments, then its registers).
  rv::exec_builder b;
  {
    auto fn = b.function("sum", 1);
    b.emit_call("test.lt", {b.r(0), b.imm(1)}, b.r(1));
    b.emit_if(b.r(1), 3);
    b.emit_call("vm.builtin.copy", {b.imm(0)}, b.r(2));
    b.emit_ret(b.r(2));
    b.emit_call("test.sub", {b.r(0), b.imm(1)}, b.r(3));
    b.emit_call("test.call_back", {b.vm_state(), b.f("sum"), b.r(3)}, b.r(4));
    b.emit_call("test.add", {b.r(0), b.r(4)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::registry reg = test_registry();
  rv::virtual_machine vm(b.get(), reg);
  CHECK(vm["sum"](10).as<std::int64_t>() == 55);
  // With a hook watching, every Call takes the general path, which loads the same arguments.
  int calls = 0;
  vm.set_instrument([&](const rv::call_event& e) {
    calls += e.before && e.callee == "test.call_back" ? 1 : 0;
    return rv::instrument_action::proceed;
  });
  CHECK(vm["sum"](10).as<std::int64_t>() == 55);
  CHECK(calls == 10);
  vm.set_instrument({});
  CHECK(vm["sum"](3).as<std::int64_t>() == 6);
}

TEST_CASE("closures: f[...] arguments, callbacks into the VM, captured values") {
  rv::exec_builder b;
  {
    auto fn = b.function("inc", 1);
    b.emit_call("test.add", {b.r(0), b.imm(1)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    auto fn = b.function("main", 1);
    b.emit_call("test.call_back", {b.vm_state(), b.f("inc"), b.r(0)}, b.r(1));  // re-enters the VM
    b.emit_call("test.call_back", {b.vm_state(), b.f("test.mul2"), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("get_inc", 0);
    b.emit_call("vm.builtin.copy", {b.f("inc")}, b.r(0));
    b.emit_ret(b.r(0));
  }
  {
    auto fn = b.function("add2", 2);
    b.emit_call("test.sub", {b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::registry reg = test_registry();
  reg.def("test.mul2", [](std::int64_t x) { return 2 * x; });
  rv::virtual_machine vm(b.get(), reg);
  CHECK(vm["main"](4).as<std::int64_t>() == 10);
  // A closure escapes to C++ and is invoked through the VM.
  rv::closure inc = vm.invoke("get_inc", {}).as<rv::closure>();
  CHECK(inc.is_vm_function());
  CHECK(inc.name() == "inc");
  std::vector<rv::value> one{rv::value(1)};
  CHECK(vm.invoke_closure(inc, one).as<std::int64_t>() == 2);
  CHECK(std::string(inc.try_call(one).error().message()).find("is a vm function: call it through its virtual_machine") !=
        std::string::npos);
  // Captured values come last: add2(y, w) with w captured.
  std::vector<rv::value> captured{rv::value(100)};
  rv::exec_builder b2;
  {
    auto fn = b2.function("get", 0);
    b2.emit_call("vm.builtin.copy", {b2.f("add2")}, b2.r(0));
    b2.emit_ret(b2.r(0));
  }
  {
    auto fn = b2.function("add2", 2);
    b2.emit_call("test.sub", {b2.r(0), b2.r(1)}, b2.r(2));
    b2.emit_ret(b2.r(2));
  }
  rv::virtual_machine vm2(b2.get(), reg);
  rv::closure sub = vm2.invoke("get", {}).as<rv::closure>().bind(captured);
  CHECK(vm2.invoke_closure(sub, one).as<std::int64_t>() == -99);
  // A closure of one executable cannot run on another.
  CHECK(std::string(vm2.try_invoke_closure(inc, one).error().message()) ==
        "invoke_closure: closure 'inc' belongs to another executable than this VM's");
  // A hand-made closure cannot name what is not a vm function.
  auto forged = rv::make_object<rv::closure_object>(rv::closure_object::kind_t::vm, "forged");
  forged->program = inc.get()->program;  // the right executable, a bad index
  forged->func_index = 1000;
  CHECK(std::string(vm.try_invoke_closure(rv::closure(forged), one).error().message()) ==
        "invoke_closure: closure 'forged' names no vm function of this executable");
  // Packed closures run anywhere.
  CHECK(vm2.invoke_closure(reg.get("test.mul2"), one).as<std::int64_t>() == 2);
}

TEST_CASE("constants: zero-copy, read-only tensors shared by every VM of an executable") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.copy", {b.c(b.add_tensor<float>({1, 2, 3}, {3}))}, b.r(0));
    b.emit_ret(b.r(0));
  }
  rv::executable exe = b.get();
  rv::registry reg;
  rv::virtual_machine vm1(exe, reg), vm2(exe, reg);
  rv::tensor a = vm1.invoke("main", {}).as<rv::tensor>();
  rv::tensor c = vm2.invoke("main", {}).as<rv::tensor>();
  CHECK(a.read_only());
  CHECK(a.raw_data() == c.raw_data());
  CHECK(a.raw_data() == exe.view().bytes.data() + exe.view().constant(0).data_offset);
  CHECK(a.data<const float>()[2] == 3.0f);
}

TEST_CASE("tensor constants start on 64-byte boundaries") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    b.emit_call("test.pair", {b.c(b.add_tensor<std::int8_t>({1, 2, 3}, {3})), b.c(b.add_tensor<double>({1.5}, {1}))},
                b.r(0));
    b.emit_ret(b.r(0));
  }
  rv::registry reg;
  reg.def("test.pair", [](const rv::value& a, const rv::value& c) { return rv::tuple{a, c}; });
  rv::virtual_machine vm(b.get(), reg);
  rv::tuple t = vm.invoke("main", {}).as<rv::tuple>();
  for (const rv::value& v : t)
    CHECK(reinterpret_cast<std::uintptr_t>(v.as<rv::tensor>().raw_data()) % rv::tensor_data_alignment == 0);
}

TEST_CASE("a closure keeps its executable alive, and no other executable runs it") {
  rv::registry reg = test_registry();
  rv::closure clo;
  {
    rv::exec_builder b;
    {
      auto fn = b.function("get", 0);
      b.emit_call("vm.builtin.copy", {b.f("inc")}, b.r(0));
      b.emit_ret(b.r(0));
    }
    {
      auto fn = b.function("inc", 1);
      b.emit_call("test.add", {b.r(0), b.imm(1)}, b.r(1));
      b.emit_ret(b.r(1));
    }
    rv::virtual_machine vm(b.get(), reg);
    clo = vm.invoke("get", {}).as<rv::closure>();
  }
  // The first executable is gone from user code; the closure still holds it, so a new executable
  // cannot take its place.
  for (int i = 0; i < 20; ++i) {
    rv::exec_builder b;
    {
      auto fn = b.function("get", 0);
      b.emit_call("vm.builtin.copy", {b.f("dec")}, b.r(0));
      b.emit_ret(b.r(0));
    }
    {
      auto fn = b.function("dec", 1);
      b.emit_call("test.sub", {b.r(0), b.imm(1)}, b.r(1));
      b.emit_ret(b.r(1));
    }
    rv::virtual_machine vm(b.get(), reg);
    rv::result<rv::value> r = vm.try_invoke_closure(clo, std::vector<rv::value>{rv::value(1)});
    REQUIRE_FALSE(r.ok());
    CHECK(error_of(r) == "invoke_closure: closure 'inc' belongs to another executable than this VM's");
  }
}

TEST_CASE("VMs made from one registry on several threads") {
  rv::registry reg = test_registry();
  const rv::executable exe = factorial();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        rv::virtual_machine vm(exe, reg);
        if (vm["fact"](5).as<std::int64_t>() == 120) ++ok;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(ok.load() == 800);
  CHECK(reg.get("test.mul").get()->is_shared());
  CHECK(reg.get("test.mul").get()->use_count() == 2);  // the registry's, and this temporary's
}

TEST_CASE("values outlive the VM and the executable that made them") {
  rv::tensor kept;
  {
    rv::exec_builder b;
    {
      auto fn = b.function("main", 0);
      b.emit_call("vm.builtin.copy", {b.c(b.add_tensor<double>({4.5}, {1}))}, b.r(0));
      b.emit_ret(b.r(0));
    }
    rv::registry reg;
    rv::virtual_machine vm(b.get(), reg);
    kept = vm.invoke("main", {}).as<rv::tensor>();
  }
  CHECK(kept.data<const double>()[0] == 4.5);
}

TEST_CASE("ret %void returns null; packed functions can be invoked by name") {
  rv::exec_builder b;
  {
    auto fn = b.function("nothing", 0);
    b.emit_call("test.id", {b.imm(1)});
    b.emit_ret(b.void_arg());
  }
  rv::registry reg = test_registry();
  rv::virtual_machine vm(b.get(), reg);
  CHECK(vm.invoke("nothing", {}).is_null());
  CHECK(vm["test.id"](9).as<std::int64_t>() == 9);
}

TEST_CASE("arity and parameter names") {
  rv::registry reg = test_registry();
  rv::virtual_machine vm(factorial(), reg);
  CHECK(vm.function_arity("fact") == 1);
  CHECK(vm.param_names("fact") == std::vector<std::string_view>{"n"});
  CHECK(std::string(vm.try_function_arity("test.lt").error().message()) == "function_arity: 'test.lt' is a packed function");
}

TEST_CASE("a VM can be moved") {
  rv::registry reg = test_registry();
  rv::virtual_machine a(factorial(), reg);
  rv::virtual_machine b = std::move(a);
  CHECK(b["fact"](4).as<std::int64_t>() == 24);
}

TEST_CASE("a kill (vm.builtin.null_value into a register) drops the register's reference; a function of that name that is not the builtin is called") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.copy", {b.r(0)}, b.r(1));
    b.emit_call("test.count", {b.r(0)}, b.r(2));
    b.emit_call("vm.builtin.null_value", {}, b.r(1));
    b.emit_call("test.count", {b.r(0)}, b.r(3));
    b.emit_call("vm.builtin.make_tuple", {b.r(2), b.r(3), b.r(1)}, b.r(4));
    b.emit_ret(b.r(4));
  }
  const rv::executable exe = b.get();
  rv::registry reg = test_registry();
  reg.def("test.count", [](const rv::value& v) { return static_cast<std::int64_t>(v.get_object()->use_count()); });
  const rv::tensor x = rv::tensor::from<float>({1, 2}, {2});
  for (const bool hook : {false, true}) {
    CAPTURE(hook);
    rv::virtual_machine vm(exe, reg);
    int seen = 0;
    if (hook)
      vm.set_instrument([&](const rv::call_event& e) {
        seen += e.before && e.callee == "vm.builtin.null_value";
        return rv::instrument_action::proceed;
      });
    const rv::tuple t = vm["main"](x).as<rv::tuple>();
    CHECK(t[0].as<std::int64_t>() == t[1].as<std::int64_t>() + 1);  // the copy's reference is gone
    CHECK(t[2].is_null());
    CHECK(seen == (hook ? 1 : 0));
  }
  // A program's own "vm.builtin.null_value" that does something else is called as it is.
  rv::basic_registry own;
  own.add_table(rv::builtins::table);
  own.def("test.count", [](const rv::value& v) { return static_cast<std::int64_t>(v.get_object()->use_count()); });
  own.remove("vm.builtin.null_value");
  own.def("vm.builtin.null_value", [] { return std::int64_t{42}; });
  rv::virtual_machine vm(exe, own);
  const rv::tuple t = vm["main"](x).as<rv::tuple>();
  CHECK(t[0].as<std::int64_t>() == t[1].as<std::int64_t>() + 1);
  CHECK(t[2].as<std::int64_t>() == 42);
}
