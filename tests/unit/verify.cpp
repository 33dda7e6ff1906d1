// SPDX-License-Identifier: Apache-2.0
// bytecode/verify.hpp: every rule, each on a layout broken in exactly one way.
#include <doctest/doctest.h>

#include <functional>
#include <relaxvm.hpp>
#include <string>

namespace rv = relaxvm;

namespace {

// main(x, y): If x { r2 = add(x, y) } else { r2 = mul(x, y) }; ret r2.   Plus a helper g(a).
rv::exec_layout base_layout() {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2, {"x", "y"});
    b.emit_if(b.r(0), 3);
    b.emit_call("add", {b.r(0), b.r(1)}, b.r(2));
    b.emit_goto(2);
    b.emit_call("mul", {b.r(0), b.r(1), b.c(b.add_shape({2, 3})), b.c(b.add_tensor<float>({1, 2}, {2}))}, b.r(2));
    b.emit_call("g", {b.r(2)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("g", 1);
    b.emit_ret(b.r(0));
  }
  b.add_string("text");
  b.add_bool(true);
  b.add_device(rv::device::cpu(0));
  rv::build_output out = b.finish();
  REQUIRE(out.ok());
  return out.layout;
}

struct broken {
  rv::verify_rule rule;
  std::string message;
};

broken verify_after(const std::function<void(rv::exec_layout&)>& breaker) {
  rv::exec_layout l = base_layout();
  breaker(l);
  rv::verify_report r = rv::verify(l.view());
  return {r.rule, std::string(r.message.view())};
}

// Word k of instruction i.
std::int64_t& word(rv::exec_layout& l, std::size_t i, std::size_t k) {
  return l.instr_data[static_cast<std::size_t>(l.instr_offset[i]) + k];
}

void check(const broken& b, rv::verify_rule rule, const std::string& contains) {
  CHECK(b.rule == rule);
  INFO(b.message);
  CHECK(b.message.find(contains) != std::string::npos);
}

}  // namespace

TEST_CASE("the base layout verifies") {
  rv::exec_layout l = base_layout();
  rv::verify_report r = rv::verify(l.view());
  CHECK(r.ok());
  CHECK(r.warnings.empty());
}

TEST_CASE("function table rules") {
  check(verify_after([](auto& l) { l.funcs[0].name.offset = 1000; }), rv::verify_rule::bad_name,
        "function 0 has a name outside the character pool");
  check(verify_after([](auto& l) { l.funcs[1].name.size = 0; }), rv::verify_rule::bad_name,
        "function 1 has an empty name");
  check(verify_after([](auto& l) { l.funcs[3].name = l.funcs[0].name; }), rv::verify_rule::duplicate_name,
        "has the same name as function 0; function names must be unique");
  check(verify_after([](auto& l) { l.funcs[0].kind = static_cast<rv::func_kind>(7); }), rv::verify_rule::bad_func_kind,
        "unknown function kind 7");
  check(verify_after([](auto& l) { l.funcs[0].params_begin = 5; }), rv::verify_rule::bad_params,
        "parameter names [5, +2) lie outside the table of 2 names");
  check(verify_after([](auto& l) { l.param_names[1].offset = -1; }), rv::verify_rule::bad_params,
        "parameter 1 has a name outside the character pool");
  check(verify_after([](auto& l) { l.funcs[0].params_count = 1; }), rv::verify_rule::bad_params,
        "has 1 parameter names for 2 arguments");
  check(verify_after([](auto& l) { l.funcs[1].start = 1; }), rv::verify_rule::bad_packed_entry,
        "a packed function must have start=0, end=0, num_args=-2");
  check(verify_after([](auto& l) { l.funcs[1].num_args = 2; }), rv::verify_rule::bad_packed_entry, "num_args=2");
  // 0 is kept from TVM executables whose table was filled in by hand (relaxvm/tvm/relax.hpp).
  CHECK(verify_after([](auto& l) { l.funcs[1].num_args = 0; }).rule == rv::verify_rule::ok);
  check(verify_after([](auto& l) { l.funcs[0].end = 99; }), rv::verify_rule::bad_func_range,
        "covers instructions [0, 99) but the executable has 7 instructions");
  check(verify_after([](auto& l) { l.funcs[3].start = l.funcs[3].end; }), rv::verify_rule::bad_func_range,
        "a function needs at least one instruction");
  check(verify_after([](auto& l) { l.funcs[0].num_args = -1; l.funcs[0].params_count = 0; }),
        rv::verify_rule::bad_num_args, "has -1 arguments");
  check(verify_after([](auto& l) { l.funcs[0].register_file_size = 1; }), rv::verify_rule::bad_register_file_size,
        "declares 1 registers; it needs at least its 2 arguments");
  check(verify_after([](auto& l) { l.funcs[0].register_file_size = rv::max_register_file_size + 1; }),
        rv::verify_rule::bad_register_file_size, "and at most 1048576");
  check(verify_after([](auto& l) { l.funcs[3].start = 5; }), rv::verify_rule::overlapping_functions,
        "overlap those of function 'main'");
}

TEST_CASE("instruction stream rules") {
  check(verify_after([](auto& l) { l.instr_offset[2] += 1; }), rv::verify_rule::bad_instruction_stream,
        "instruction 2 starts at word 10 but the previous instruction ends at word 9");
  check(verify_after([](auto& l) { l.instr_data.push_back(2); }), rv::verify_rule::bad_instruction_stream,
        "1 code words after word");
  check(verify_after([](auto& l) { word(l, 1, 3) = 1000; }), rv::verify_rule::bad_instruction_stream,
        "claims 1000 arguments");
  check(verify_after([](auto& l) { word(l, 2, 0) = 9; }), rv::verify_rule::bad_opcode, "has opcode 9");
  check(verify_after([](auto& l) { l.instr_data.resize(static_cast<std::size_t>(l.instr_offset.back()) + 1); }),
        rv::verify_rule::bad_instruction_stream, "needs 2 words");
}

TEST_CASE("constant pool rules") {
  // A constant is a word; every kind but bool and dtype keeps a record in i64s (rv::const_word).
  auto find = [](rv::exec_layout& l, rv::const_kind k) -> std::size_t {
    for (std::size_t i = 0; i < l.constants.size(); ++i)
      if (l.view().constant(i).kind == k) return i;
    FAIL("no such constant");
    return 0;
  };
  auto head = [&](rv::exec_layout& l, rv::const_kind k) -> std::int64_t& {  // its record's first word
    return l.i64s[static_cast<std::size_t>(l.constants[find(l, k)] >> 8)];
  };
  auto dim0 = [&](rv::exec_layout& l, rv::const_kind k) -> std::int64_t& {
    return l.i64s[static_cast<std::size_t>(l.view().constant(find(l, k)).dims_offset)];
  };
  check(verify_after([&](auto& l) { l.constants[find(l, rv::const_kind::boolean)] += 2 << 8; }),
        rv::verify_rule::bad_constant, "(bool): holds 3");
  check(verify_after([&](auto& l) { head(l, rv::const_kind::device) = std::int64_t{99} << 32; }),
        rv::verify_rule::bad_constant, "device type 99 id 0 is not a valid DLPack device");
  check(verify_after([&](auto& l) { (&head(l, rv::const_kind::string))[1] = 1000; }), rv::verify_rule::bad_constant,
        "(string): characters");
  check(verify_after([&](auto& l) { dim0(l, rv::const_kind::shape) = -3; }), rv::verify_rule::bad_constant,
        "dimension 0 is -3");
  check(verify_after([&](auto& l) { head(l, rv::const_kind::shape) = 100; }), rv::verify_rule::bad_constant,
        "(shape): dimensions [");
  check(verify_after([&](auto& l) { head(l, rv::const_kind::shape) = -1; }), rv::verify_rule::bad_constant,
        "(shape): dimensions [");
  check(verify_after([&](auto& l) {
          std::int64_t* d = &dim0(l, rv::const_kind::shape);
          d[0] = std::int64_t{1} << 40;
          d[1] = std::int64_t{1} << 40;
        }),
        rv::verify_rule::bad_constant, "the element count overflows int64");
  check(verify_after([&](auto& l) { (&head(l, rv::const_kind::tensor))[1] = rv::dtype(kDLFloat, 12).pack(); }),
        rv::verify_rule::bad_constant, "dtype float12 is not a valid tensor element type");
  check(verify_after([&](auto& l) { (&head(l, rv::const_kind::tensor))[3] = 4; }), rv::verify_rule::bad_constant,
        "has 4 data bytes; its shape and dtype need 2 x 4");
  check(verify_after([&](auto& l) { (&head(l, rv::const_kind::tensor))[2] = 8; }), rv::verify_rule::bad_constant,
        "64-byte aligned");
  // A record must lie in i64s, whole: the string's needs 2 integers.
  check(verify_after([&](auto& l) {
          l.constants[find(l, rv::const_kind::string)] =
              static_cast<rv::const_word>(rv::const_kind::string) | (rv::const_word{l.i64s.size() - 1} << 8);
        }),
        rv::verify_rule::bad_constant, "(string): its record at");
  check(verify_after([&](auto& l) { l.constants[find(l, rv::const_kind::device)] |= rv::const_word{1} << 62; }),
        rv::verify_rule::bad_constant, "(device): its record at");
  check(verify_after([&](auto& l) { l.constants[0] = 40; }), rv::verify_rule::bad_constant, "unknown constant kind 40");
}

TEST_CASE("call rules") {
  check(verify_after([](auto& l) { word(l, 1, 2) = 99; }), rv::verify_rule::bad_func_index,
        "function 'main', instruction 1 (call unknown_func_index(99) in: %0, %1 dst: %2): calls function index 99 "
        "but the function table has 4 entries");
  check(verify_after([](auto& l) { word(l, 1, 1) = 9; }), rv::verify_rule::bad_destination,
        "writes register 9 but the function has 3 registers");
  check(verify_after([](auto& l) { word(l, 1, 1) = rv::vm_register; }), rv::verify_rule::bad_destination,
        "a destination is a register or %void");
  check(verify_after([](auto& l) { word(l, 4, 3) = 0; l.instr_data.erase(l.instr_data.begin() + l.instr_offset[4] + 4);
                                   for (std::size_t i = 5; i < l.instr_offset.size(); ++i) --l.instr_offset[i]; }),
        rv::verify_rule::arity_mismatch, "passes 0 arguments but function 'g' takes 1");
  check(verify_after([](auto& l) { word(l, 1, 4) = std::int64_t{9} << 56; }), rv::verify_rule::bad_arg_kind,
        "argument 0 has kind 9");
  check(verify_after([](auto& l) { word(l, 1, 4) = rv::arg::reg(3).data; }), rv::verify_rule::bad_register,
        "argument 0 reads register 3 but the function has 3 registers (%0 to %2)");
  check(verify_after([](auto& l) { word(l, 1, 4) = rv::arg::reg(-1).data; }), rv::verify_rule::bad_register,
        "reads register -1");
  check(verify_after([](auto& l) { word(l, 1, 4) = rv::arg::reg(2).data; }), rv::verify_rule::undefined_register,
        "argument 0 reads register %2 before any instruction writes it");
  check(verify_after([](auto& l) { word(l, 1, 4) = rv::arg::make(rv::arg_kind::imm, -(std::int64_t{1} << 55)).data; }),
        rv::verify_rule::immediate_out_of_range, "outside +-(2^55-1)");
  check(verify_after([](auto& l) { word(l, 3, 6) = rv::arg::constant(40).data; }), rv::verify_rule::bad_constant_index,
        "argument 2 names constant 40 but the pool has 5");
  check(verify_after([](auto& l) { word(l, 1, 4) = rv::arg::func(17).data; }), rv::verify_rule::bad_function_arg,
        "argument 0 names function 17 but the table has 4");
}

TEST_CASE("the reference's checker case: add(r0, r2) -> r2 reads r2 before it is written") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2);
    b.emit_call("test.vm.add", {b.r(0), b.r(2)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::result<rv::executable> r = b.try_get();
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.error().message()).find("reads register %2 before any instruction writes it") != std::string::npos);
}

TEST_CASE("ret and If rules") {
  check(verify_after([](auto& l) { word(l, 6, 1) = rv::vm_register; }), rv::verify_rule::bad_register,
        "ret cannot be %vm");
  check(verify_after([](auto& l) { word(l, 0, 1) = rv::void_register; }), rv::verify_rule::bad_register,
        "the If condition cannot be %void");
  check(verify_after([](auto& l) { word(l, 0, 1) = 7; }), rv::verify_rule::bad_register,
        "the If condition reads register 7");
  check(verify_after([](auto& l) { word(l, 0, 1) = 2; }), rv::verify_rule::undefined_register,
        "the If condition reads register %2 before");
  check(verify_after([](auto& l) { word(l, 0, 2) = 1; }), rv::verify_rule::bad_if_offset,
        "false offset 1 must be 2 or more");
  check(verify_after([](auto& l) { word(l, 0, 2) = -2; }), rv::verify_rule::bad_if_offset, "false offset -2");
  check(verify_after([](auto& l) { word(l, 0, 2) = 9; }), rv::verify_rule::jump_out_of_function,
        "If false offset 9 leads outside the function, which has instructions 0 to 5");
  check(verify_after([](auto& l) { word(l, 2, 1) = 0; }), rv::verify_rule::zero_goto, "goto 0 would loop");
  check(verify_after([](auto& l) { word(l, 2, 1) = -3; }), rv::verify_rule::jump_out_of_function,
        "goto offset -3 leads outside the function");
  check(verify_after([](auto& l) { word(l, 2, 1) = std::numeric_limits<std::int64_t>::max(); }),
        rv::verify_rule::jump_out_of_function, "leads outside the function");
}

TEST_CASE("ret %void returns null; %void and %vm are valid call arguments") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    b.emit_call("f", {b.void_arg(), b.vm_state()});
    b.emit_ret(b.void_arg());
  }
  CHECK(b.try_get().ok());
}

TEST_CASE("every path must end in ret") {
  SUBCASE("a call last") {
    rv::exec_builder b;
    {
      auto fn = b.function("main", 1);
      b.emit_call("f", {b.r(0)}, b.r(1));
    }
    rv::verify_report r = rv::verify(b.finish().layout.view());
    CHECK(r.rule == rv::verify_rule::falls_off_end);
    CHECK(std::string(r.message.view()) ==
          "function 'main', instruction 0 (call f in: %0 dst: %1): execution can run past the last instruction of "
          "the function; end every path with ret");
  }
  SUBCASE("a path through the false branch of an If") {
    rv::exec_builder b;
    {
      auto fn = b.function("main", 1);
      b.emit_if(b.r(0), 2);
      b.emit_ret(b.r(0));
      b.emit_call("f", {b.r(0)});
    }
    rv::verify_report r = rv::verify(b.finish().layout.view());
    CHECK(r.rule == rv::verify_rule::falls_off_end);
    CHECK(r.instr == 2);
  }
  SUBCASE("a loop with an exit") {
    rv::exec_builder b;
    {
      auto fn = b.function("main", 1);
      b.emit_call("step", {b.r(0)}, b.r(1));
      b.emit_if(b.r(1), 3);
      b.emit_goto(-2);
      b.emit_goto(-3);  // no path reaches this one
      b.emit_ret(b.r(1));
    }
    rv::verify_report r = rv::verify(b.finish().layout.view());
    CHECK(r.ok());
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].kind == rv::warning_kind::unreachable_instruction);
    CHECK(r.warnings[0].index == 3);
  }
}

TEST_CASE("warnings: unused inputs and unreachable code") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 3, {"a", "b", "c"});
    b.emit_call("f", {b.r(1)}, b.r(3));
    b.emit_ret(b.r(3));
    b.emit_ret(b.r(1));  // unreachable
  }
  rv::executable exe = b.get();
  REQUIRE(exe.warnings().size() == 3);
  if (exe.warnings().size() != 3) return;  // without exceptions REQUIRE cannot stop the test
  CHECK(exe.warnings()[0] == "function 'main': input 0 is never read (a)");
  CHECK(exe.warnings()[1] == "function 'main': input 2 is never read (c)");
  CHECK(exe.warnings()[2] == "function 'main', instruction 2 (ret %1) can never run");
}

TEST_CASE("verify runs in constant expressions") {
  constexpr bool ok = [] {
    rv::exec_builder b;
    {
      auto fn = b.function("main", 1);
      b.emit_goto(3);
      b.emit_ret(b.r(0));
    }
    rv::build_output out = b.finish();
    return !out.ok() && out.report.rule == rv::verify_rule::jump_out_of_function;
  }();
  static_assert(ok);
}
