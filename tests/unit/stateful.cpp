// SPDX-License-Identifier: Apache-2.0
// The stateful API: set_input, invoke_stateful, get_output (and its arity), save_function,
// function arity and parameter names.
#include <doctest/doctest.h>

#include <cstdint>
#include <relaxvm.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
using V = std::vector<rv::value>;

namespace {
// pair(a, b) = (a, (b, a)); count() = test.count()
rv::executable program() {
  rv::exec_builder b;
  {
    auto fn = b.function("pair", 2, {"a", "b"});
    b.emit_call("vm.builtin.make_tuple", {b.r(1), b.r(0)}, b.r(2));
    b.emit_call("vm.builtin.make_tuple", {b.r(0), b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    auto fn = b.function("count", 0);
    b.emit_call("test.count", {}, b.r(0));
    b.emit_ret(b.r(0));
  }
  {
    auto fn = b.function("unnamed", 1);
    b.emit_ret(b.r(0));
  }
  return b.get();
}

std::string message(const rv::status& s) { return std::string(s.error().message()); }
template <class T>
std::string message(const rv::result<T>& r) { return std::string(r.error().message()); }
}  // namespace

TEST_CASE("set_input, invoke_stateful and get_output") {
  rv::registry reg;
  std::int64_t calls = 0;
  reg.def("test.count", [&] { return ++calls; });
  rv::virtual_machine vm(program(), reg);
  vm.set_input("pair", {1, "x"});
  vm.invoke_stateful("pair");
  CHECK(vm.get_output("pair", {0}).as<std::int64_t>() == 1);
  CHECK(vm.get_output("pair", {1, 0}).as<std::string_view>() == "x");
  CHECK(vm.get_output("pair", {1, 1}).as<std::int64_t>() == 1);
  CHECK(vm.get_output_arity("pair") == 2);
  CHECK(vm.get_output_arity("pair", {1}) == 2);
  CHECK(vm.get_output_arity("pair", {0}) == -1);
  // Inputs stay: the call can be repeated; a function without parameters needs no inputs.
  vm.invoke_stateful("count");
  vm.invoke_stateful("count");
  CHECK(vm.get_output("count").as<std::int64_t>() == 2);

  CHECK(message(vm.try_set_input("nope", V{})) == "set_input: Unknown function: nope");
  CHECK(message(vm.try_set_input("pair", V{1})) ==
        "set_input: The number of provided parameters doesn't match the number of arguments for pair: 1 given, 2 expected");
  CHECK(message(vm.try_invoke_stateful("unnamed")) ==
        "invoke_stateful: No inputs set for stateful call of unnamed; use `set_input` first.");
  CHECK(message(vm.try_get_output("unnamed")) ==
        "get_output: No output saved for call of \"unnamed\"; use `invoke_stateful` to call it first.");
  CHECK(message(vm.try_get_output("pair", std::vector<std::int64_t>{2})) ==
        "get_output: index 2 is out of range for a tuple of 2 items");
  CHECK(message(vm.try_get_output("pair", std::vector<std::int64_t>{0, 0})) ==
        "get_output: Attempted to index into an object that is not a tuple.");
  rv::status err = vm.try_invoke_stateful("nope");
  CHECK(err.error().kind() == rv::error_kind::value);
  CHECK(message(err) == "invoke_stateful: Unknown function: nope");
}

TEST_CASE("set_input copies tensors to the first device") {
  rv::registry reg;
  reg.def("test.count", [] { return 0; });
  rv::vm_options o;
  rv::allocator dev = rv::allocator::naive();
  o.devices = {{rv::device::cpu(1), dev}, {rv::device::cpu(0), rv::allocator::naive()}};
  rv::virtual_machine vm(program(), reg, o);
  rv::tensor t = rv::tensor::from<float>(std::vector<float>{1.5f, 2.5f}, rv::shape{2});
  vm.set_input("pair", {t, rv::tuple{t}});
  vm.invoke_stateful("pair");
  rv::tensor a = vm.get_output("pair", {0}).as<rv::tensor>();
  CHECK(a.device() == rv::device::cpu(1));
  CHECK(a.data<const float>()[1] == 2.5f);
  CHECK(vm.get_output("pair", {1, 0, 0}).as<rv::tensor>().device() == rv::device::cpu(1));
  CHECK(dev.stats().allocations == 2);
}

TEST_CASE("save_function makes a ready-made call that shadows the name") {
  rv::registry reg;
  reg.def("test.count", [] { return 7; });
  rv::virtual_machine vm(program(), reg);
  vm.save_function("pair", "pair_1_2", true, {1, 2});
  CHECK(vm.invoke("pair_1_2", {}).as<rv::tuple>()[0].as<std::int64_t>() == 1);
  vm.save_function("pair", "pair_with_3", true, {3});  // the saved arguments come after the call's
  CHECK(vm.invoke("pair_with_3", {9}).as<rv::tuple>()[1].as<rv::tuple>()[0].as<std::int64_t>() == 3);
  vm.save_function("count", "count", false, {});  // shadows "count", and returns null
  CHECK(vm.invoke("count", {}).is_null());
  CHECK(vm.function_arity("pair") == 2);
  CHECK(message(vm.try_save_function("nope", "x", true, V{})) == "save_function: Unknown function: nope");
  rv::result<rv::value> wrong = vm.try_invoke("pair_1_2", V{5});
  REQUIRE_FALSE(wrong.ok());
  CHECK(message(wrong).find("Invoking function pair expects 2 arguments (a, b), but 3 arguments were provided.") == 0);
}

TEST_CASE("function arity and parameter names") {
  rv::registry reg;
  reg.def("test.count", [] { return 0; });
  rv::virtual_machine vm(program(), reg);
  CHECK(vm.function_arity("pair") == 2);
  CHECK(vm.function_arity("count") == 0);
  CHECK(vm.param_names("pair") == std::vector<std::string_view>{"a", "b"});
  CHECK(vm.param_names("unnamed").empty());
  CHECK(message(vm.try_function_arity("test.count")) == "function_arity: 'test.count' is a packed function");
  CHECK(!vm.try_param_names("nope").ok());
}

TEST_CASE("a saved function reports the arity and names its caller passes") {
  rv::registry reg;
  reg.def("test.count", [] { return 0; });
  rv::virtual_machine vm(program(), reg);
  vm.save_function("pair", "pair_b", true, {2});
  CHECK(vm.function_arity("pair_b") == 1);
  CHECK(vm.param_names("pair_b") == std::vector<std::string_view>{"a"});
  vm.save_function("pair", "pair_ab", true, {1, 2});
  CHECK(vm.function_arity("pair_ab") == 0);
  CHECK(vm.param_names("pair_ab").empty());
  CHECK(vm.function_arity("pair") == 2);  // the original is untouched
}

TEST_CASE("save_function of a registered closure keeps the closure's captured values last") {
  rv::registry base;
  base.def("test.digits", [](std::int64_t a, std::int64_t b, std::int64_t c) { return a * 100 + b * 10 + c; });
  rv::registry reg;
  reg.def("test.count", [] { return 0; });
  reg.add("test.digits", base.get("test.digits").bind(V{7}));
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2);
    b.emit_call("test.digits", {b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::virtual_machine vm(b.get(), reg);
  CHECK(vm.invoke("main", {1, 5}).as<std::int64_t>() == 157);
  vm.save_function("test.digits", "d", true, {5});
  CHECK(vm.invoke("d", {1}).as<std::int64_t>() == 157);
  vm.set_input("test.digits", {2, 3});
  vm.invoke_stateful("test.digits");
  CHECK(vm.get_output("test.digits").as<std::int64_t>() == 237);
}

TEST_CASE("a kernel may replace the saved function or the inputs its own call is using") {
  rv::registry reg;
  rv::virtual_machine* self = nullptr;
  reg.def("test.count", [&] {
    // Replaces both while "keep" runs on the old ones: the call holds its own references.
    self->save_function("keep", "saved", true, {std::string(40, 'n'), std::string(40, 'm')});
    self->set_input("keep", {std::string(40, 'p'), std::string(40, 'q')});
    return 0;
  });
  rv::exec_builder b;
  {
    auto fn = b.function("keep", 2);  // keep(a, b) = (test.count(), a, b)
    b.emit_call("test.count", {}, b.r(2));
    b.emit_call("vm.builtin.make_tuple", {b.r(0), b.r(1)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  rv::virtual_machine vm(b.get(), reg);
  self = &vm;
  const std::string a(40, 'a'), c(40, 'c');
  vm.save_function("keep", "saved", true, {a, c});
  rv::tuple out = vm.invoke("saved", {}).as<rv::tuple>();
  CHECK(out[0].as<std::string_view>() == a);
  CHECK(out[1].as<std::string_view>() == c);
  CHECK(vm.invoke("saved", {}).as<rv::tuple>()[0].as<std::string_view>() == std::string(40, 'n'));
  vm.set_input("keep", {a, c});
  vm.invoke_stateful("keep");
  CHECK(vm.get_output("keep", {1}).as<std::string_view>() == c);
  vm.invoke_stateful("keep");
  CHECK(vm.get_output("keep", {1}).as<std::string_view>() == std::string(40, 'q'));
}
