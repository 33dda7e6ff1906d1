// SPDX-License-Identifier: Apache-2.0
// bytecode/builder.hpp: function scopes, emitting, constants, formalize, and builder misuse.
#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <string>

namespace rv = relaxvm;

namespace {
std::string build_error(const rv::exec_builder& b) {
  rv::result<rv::executable> r = b.try_get();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::value);
  return std::string(r.error().message());
}
// How a builder error names the call that made it: the file and line of the call.
std::string at(int line) { return "exec_builder at " + std::string(__FILE__) + ":" + std::to_string(line) + ": "; }
}  // namespace

TEST_CASE("function scopes define functions in order of first mention") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2, {"x", "y"});
    b.emit_call("helper", {b.r(0), b.r(1)}, b.r(2));  // defined below: a forward reference
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("helper", 2);
    b.emit_call("vm.builtin.copy", {b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::executable exe = b.get();
  rv::exec_view v = exe.view();
  REQUIRE(v.funcs.size() == 3);
  CHECK(v.name(0) == "main");
  CHECK(v.name(1) == "helper");
  CHECK(v.funcs[1].kind == rv::func_kind::vm);
  CHECK(v.name(2) == "vm.builtin.copy");
  CHECK(v.funcs[2].kind == rv::func_kind::packed);
  CHECK(v.funcs[0].params_count == 2);
  CHECK(v.param_name(v.funcs[0], 1) == "y");
  CHECK(exe.warnings().size() == 1);  // helper never reads its input 0
  CHECK(exe.warnings()[0] == "function 'helper': input 0 is never read");
}

TEST_CASE("a scope can be ended early, and next_instruction/patch fill in jumps") {
  rv::exec_builder b;
  auto fn = b.function("main", 1);
  const std::int64_t branch = b.next_instruction();
  b.emit_if(b.r(0), 0);  // offset patched below
  b.emit_call("vm.builtin.copy", {b.imm(1)}, b.r(1));
  const std::int64_t skip = b.next_instruction();
  b.emit_goto(0);
  b.patch(branch, 2, b.next_instruction() - branch);
  b.emit_call("vm.builtin.copy", {b.imm(2)}, b.r(1));
  b.patch(skip, 1, b.next_instruction() - skip);
  b.emit_ret(b.r(1));
  fn.end();
  rv::executable exe = b.get();
  CHECK(rv::decode(exe.view(), 0).offset == 3);
  CHECK(rv::decode(exe.view(), 2).offset == 2);
}

TEST_CASE("formalize renumbers registers by first definition") {
  // test_vm_formalize: destinations r100 and r50 become %2 and %3.
  auto make = [](std::int64_t a, std::int64_t c) {
    rv::exec_builder b;
    {
      auto fn = b.function("main", 2);
      b.emit_call("test.vm.add", {b.r(0), b.r(1)}, b.r(a));
      b.emit_call("test.vm.mul", {b.r(a), b.r(1)}, b.r(c));
      b.emit_ret(b.r(c));
    }
    return b.get();
  };
  rv::executable sparse = make(100, 50), dense = make(2, 3);
  CHECK(sparse.as_text() == dense.as_text());
  CHECK(sparse.view().funcs[0].register_file_size == 4);
  CHECK(sparse == dense);
}

TEST_CASE("reserve_registers raises the register file size") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.reserve_registers(10);
    b.emit_ret(b.r(0));
  }
  CHECK(b.get().view().funcs[0].register_file_size == 10);
}

TEST_CASE("equal constants share one index") {
  rv::exec_builder b;
  CHECK(b.add_int(7) == 0);
  CHECK(b.add_float(2.5) == 1);
  CHECK(b.add_int(7) == 0);
  CHECK(b.add_float(2.5) == 1);
  CHECK(b.add_shape({4, 6}) == 2);
  CHECK(b.add_shape({4, 6}) == 2);
  CHECK(b.add_shape({4}) == 3);
  CHECK(b.add_string("global") == 4);
  CHECK(b.add_constant("global") == 4);
  CHECK(b.add_dtype(rv::dtype::float32()) == 5);
  CHECK(b.add_constant(rv::dtype::float32()) == 5);
  CHECK(b.add_tensor<float>({1, 2}, {2}) == 6);
  CHECK(b.add_tensor<float>({1, 2}, {2}) == 6);
  CHECK(b.add_tensor<float>({1, 2}, {1, 2}) == 7);  // same data, other shape
  CHECK(b.add_tensor<std::int32_t>({1, 2}, {2}) == 8);
  CHECK(b.add_bool(true) == 9);
  CHECK(b.add_int(1) == 10);  // an int 1 is not the bool true
  CHECK(b.add_device(rv::device::cpu(1)) == 11);
  CHECK(b.add_constant(std::int64_t{7}) == 0);
  CHECK(b.add_constant(2.5) == 1);
  CHECK(b.layout().constants.size() == 12);
  const std::size_t chars = b.layout().chars.size();
  b.add_string("global");  // a duplicate leaves the pools as they were
  CHECK(b.layout().chars.size() == chars);
  b.set_constant_dedup(false);
  CHECK(b.add_int(7) == 12);
}

TEST_CASE("runtime values become constants") {
  rv::exec_builder b;
  rv::tensor t = rv::tensor::from<float>({1, 2, 3, 4}, {2, 2});
  const std::int64_t a = b.add_constant(rv::value(t));
  const std::int64_t s = b.add_constant(rv::value(rv::shape{2, 2}));
  const std::int64_t str = b.add_constant(rv::value("hello"));
  CHECK(b.add_constant(t) == a);
  CHECK(b.add_constant(rv::shape{2, 2}) == s);
  CHECK(b.add_constant(rv::value(std::string("hello"))) == str);
  CHECK(b.add_constant(rv::value(3)) == b.add_int(3));
  CHECK(b.add_constant(rv::value(true)) == b.add_bool(true));
  CHECK(b.ok());
  b.add_constant(rv::value(rv::tuple{rv::value(1)}));
  CHECK_FALSE(b.ok());
  CHECK(build_error(b).find("add_constant: tuple cannot be a constant") != std::string::npos);
}

TEST_CASE("builder misuse is reported by get(), never thrown while building") {
  SUBCASE("emit outside a function") {
    rv::exec_builder b;
    b.emit_ret(b.r(0));
    CHECK(build_error(b) == at(__LINE__ - 1) + "emit_ret outside a function; open one with function(name, num_inputs) first");
  }
  SUBCASE("nested function") {
    rv::exec_builder b;
    auto f = b.function("a", 0);
    auto g = b.function("b", 0);
    CHECK(build_error(b).find("function('b') opened while function 'a' is still open") != std::string::npos);
  }
  SUBCASE("defined twice") {
    rv::exec_builder b;
    {
      auto f = b.function("a", 0);
      b.emit_ret(b.void_arg());
    }
    {
      auto f = b.function("a", 0);
      b.emit_ret(b.void_arg());
    }
    CHECK(build_error(b) == at(__LINE__ - 3) + "function 'a' is defined twice");
  }
  SUBCASE("a packed function cannot be defined") {
    rv::exec_builder b;
    b.declare_function("ext");
    auto f = b.function("ext", 0);
    CHECK(build_error(b) == at(__LINE__ - 1) + "function 'ext' is already declared as a packed function");
  }
  SUBCASE("parameter names must match the inputs") {
    rv::exec_builder b;
    auto f = b.function("a", 2, {"x"});
    CHECK(build_error(b).find("has 2 inputs but 1 parameter names") != std::string::npos);
  }
  SUBCASE("negative inputs") {
    rv::exec_builder b;
    auto f = b.function("a", -1);
    CHECK(build_error(b).find("has -1 inputs") != std::string::npos);
  }
  SUBCASE("an empty function") {
    rv::exec_builder b;
    { auto f = b.function("a", 0); }
    // Reported at the function() call, whose scope ended it.
    CHECK(build_error(b) == at(__LINE__ - 2) + "function 'a' has no instructions; end it with emit_ret");
  }
  SUBCASE("a function left open") {
    rv::exec_builder b;
    b.begin_function("a", 0);
    b.emit_ret(b.void_arg());
    CHECK(build_error(b).find("function 'a' is still open") != std::string::npos);
  }
  SUBCASE("bad registers, immediates, constants") {
    rv::exec_builder b;
    (void)b.r(-1);
    CHECK(build_error(b).find("register -1 is out of range") != std::string::npos);
    rv::exec_builder b2;
    (void)b2.imm(std::int64_t{1} << 55);
    CHECK(build_error(b2).find("immediate 36028797018963968 is outside +-(2^55-1)") != std::string::npos);
    rv::exec_builder b3;
    (void)b3.c(-2);
    CHECK(build_error(b3).find("constant index -2 is out of range") != std::string::npos);
  }
  SUBCASE("destinations, results and conditions must be registers") {
    rv::exec_builder b;
    auto f = b.function("a", 1);
    b.emit_call("g", {}, b.imm(1));
    CHECK(build_error(b).find("function 'a', instruction 0: emit_call: the destination must be a register") !=
          std::string::npos);
    rv::exec_builder b2;
    auto f2 = b2.function("a", 1);
    b2.emit_ret(b2.imm(1));
    CHECK(build_error(b2).find("emit_ret: the result must be a register") != std::string::npos);
    rv::exec_builder b3;
    auto f3 = b3.function("a", 1);
    b3.emit_if(b3.c(0), 2);
    CHECK(build_error(b3) == at(__LINE__ - 1) + "function 'a', instruction 0: emit_if: the condition must be a register");
  }
  SUBCASE("the first error is the one reported") {
    rv::exec_builder b;
    b.emit_goto(1);
    (void)b.r(-1);
    CHECK(build_error(b).find("emit_goto outside a function") != std::string::npos);
  }
  SUBCASE("bad tensors") {
    rv::exec_builder b;
    b.add_tensor(rv::dtype::float32(), {2, 2}, {1, 2, 3});
    CHECK(build_error(b) == at(__LINE__ - 1) + "add_tensor: 3 bytes do not hold a tensor of 4 float32 elements");
  }
  SUBCASE("a call's argument count cannot be patched") {
    rv::exec_builder b;
    auto f = b.function("a", 0);
    b.emit_call("g", {b.imm(1)});
    b.patch(0, 3, 1000);
    CHECK(build_error(b).find("patch: word 3 of a call is its argument count, which cannot be patched") !=
          std::string::npos);
  }
  SUBCASE("patching what does not exist") {
    rv::exec_builder b;
    auto f = b.function("a", 0);
    b.emit_goto(1);
    b.patch(0, 0, 5);
    CHECK(build_error(b).find("patch: instruction 0 has no word 0") != std::string::npos);
  }
}

TEST_CASE("verification failures from get() carry the verifier's message") {
  rv::exec_builder b;
  {
    auto f = b.function("main", 1);
    b.emit_goto(5);
    b.emit_ret(b.r(0));
  }
  CHECK(build_error(b) ==
        "invalid executable: function 'main', instruction 0 (goto 5): goto offset 5 leads outside the function, which "
        "has instructions 0 to 1; offsets count from the jumping instruction itself");
#if RELAXVM_USE_EXCEPTIONS
  CHECK_THROWS_AS((void)b.get(), rv::error);
#endif
}

TEST_CASE("the builder works in constant expressions") {
  constexpr bool ok = [] {
    rv::exec_builder b;
    {
      auto fn = b.function("main", 1);
      b.emit_call("f", {b.r(0), b.c(b.add_shape({2, 3})), b.c(b.add_string("s"))}, b.r(7));
      b.emit_ret(b.r(7));
    }
    rv::build_output out = b.finish();
    return out.ok() && out.layout.funcs[0].register_file_size == 2 && out.layout.constants.size() == 2;
  }();
  static_assert(ok);
}

TEST_CASE("a register read before any definition never aliases a renamed one") {
  // %7 is renamed to %1; the read of the user's %1, never written, must not become a read of it.
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("add", {b.r(0), b.imm(100)}, b.r(7));
    b.emit_call("add", {b.r(1), b.imm(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::result<rv::executable> r = b.try_get();
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.error().message()).find("instruction 1 (call add in: %3, i1 dst: %2): argument 0 reads register %3 "
                                              "before any instruction writes it") != std::string::npos);
  // Without a collision the user's number is kept in the message.
  rv::exec_builder c;
  {
    auto fn = c.function("main", 1);
    c.emit_call("add", {c.r(9)}, c.r(1));
    c.emit_ret(c.r(1));
  }
  CHECK(std::string(c.try_get().error().message()).find("reads register %9 before") != std::string::npos);
}

TEST_CASE("a name taken from the builder's own character pool is added correctly") {
  // add_entry hashes the name before adding it to the pool, which may move (reallocate) the
  // characters the name points into; the sanitized build would report a use after free.
  rv::exec_builder b;
  b.declare_function("vm.builtin.copy");
  for (int i = 0; i < 40; ++i) {  // enough names for the pool to grow more than once
    const std::string_view pool(b.layout().chars.data(), b.layout().chars.size());
    b.declare_function(pool.substr(static_cast<std::size_t>(i), 3));
  }
  const std::string_view first(b.layout().chars.data(), 3);
  CHECK(first == "vm.");
  CHECK(b.declare_function("vm.") == 1);  // found again, not added twice
}
