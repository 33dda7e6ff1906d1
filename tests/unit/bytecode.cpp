// SPDX-License-Identifier: Apache-2.0
// bytecode/: the argument encoding, special registers, instruction decoding and text.
#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <string>

#include "../support/programs.hpp"

namespace rv = relaxvm;

TEST_CASE("arguments encode as the reference's words") {
  // The reference's table of opcodes and argument kinds.
  static_assert(rv::arg::reg(5).data == 0x0000000000000005);
  static_assert(rv::arg::imm(-3).data == 0x01FFFFFFFFFFFFFD);
  static_assert(rv::arg::constant(2).data == 0x0200000000000002);
  static_assert(rv::arg::func(1).data == 0x0300000000000001);
  static_assert(rv::arg::imm(-3).value() == -3);
  static_assert(rv::arg::imm(-3).kind() == rv::arg_kind::imm);
  static_assert(rv::arg::imm(rv::arg_value_max).value() == rv::arg_value_max);
  static_assert(rv::arg::imm(rv::arg_value_min).value() == rv::arg_value_min);
  static_assert(rv::arg_value_max == (std::int64_t{1} << 55) - 1);
  static_assert(rv::arg{}.data == rv::void_register);  // a default arg is void
  CHECK(rv::arg::from_data(0x0300000000000001).kind() == rv::arg_kind::func_idx);
}

// Compile-time checks: this file does not compile when one fails.
// The special registers.
static_assert(rv::void_register == std::int64_t{1} << 54);
static_assert(rv::vm_register == (std::int64_t{1} << 54) + 1);
static_assert(rv::is_special_register(rv::void_register));
static_assert(!rv::is_special_register(7));
// Opcode numbers and instruction sizes.
static_assert(static_cast<int>(rv::opcode::call) == 1);
static_assert(static_cast<int>(rv::opcode::ret) == 2);
static_assert(static_cast<int>(rv::opcode::goto_) == 3);
static_assert(static_cast<int>(rv::opcode::if_) == 4);
static_assert(rv::instruction_words(1, 3) == 7);
static_assert(rv::instruction_words(2) == 2);
static_assert(rv::instruction_words(3) == 2);
static_assert(rv::instruction_words(4) == 3);
static_assert(rv::instruction_words(9) == 0);

// The reference's test_vm_if example, whose encoding its documentation works through.
using relaxvm_test::programs::if_example;

TEST_CASE("the instruction stream matches the reference's worked example") {
  rv::executable exe = if_example();
  rv::exec_view v = exe.view();
  CHECK(std::vector<std::int64_t>(v.instr_offset.begin(), v.instr_offset.end()) ==
        std::vector<std::int64_t>{0, 3, 9, 11, 17});
  CHECK(std::vector<std::int64_t>(v.instr_data.begin(), v.instr_data.end()) ==
        std::vector<std::int64_t>{4, 0, 3, 1, 3, 1, 2, 1, 2, 3, 2, 1, 3, 2, 2, 1, 2, 2, 3});
  REQUIRE(v.funcs.size() == 3);
  CHECK(v.funcs[0].kind == rv::func_kind::vm);
  CHECK(v.funcs[0].start == 0);
  CHECK(v.funcs[0].end == 5);
  CHECK(v.funcs[0].num_args == 3);
  CHECK(v.funcs[0].register_file_size == 4);
  CHECK(v.funcs[1].kind == rv::func_kind::packed);
  CHECK(v.funcs[1].num_args == rv::unknown_num_args);
  CHECK(v.name(2) == "test.vm.mul");
}

TEST_CASE("decode gives the instruction's fields") {
  rv::executable exe = if_example();
  rv::instruction in = rv::decode(exe.view(), 1);
  CHECK(in.op == rv::opcode::call);
  CHECK(in.dst == 3);
  CHECK(in.func_idx == 1);
  CHECK(in.num_args == 2);
  CHECK(in.arg_at(1) == rv::arg::reg(2));
  CHECK(rv::decode(exe.view(), 0).op == rv::opcode::if_);
  CHECK(rv::decode(exe.view(), 0).offset == 3);
  CHECK(rv::decode(exe.view(), 2).offset == 2);
  CHECK(rv::decode(exe.view(), 4).reg == 3);
}

TEST_CASE("instruction text, aligned and compact") {
  rv::executable exe = if_example();
  auto line = [&](std::int64_t i, bool aligned) {
    rv::detail::text t;
    rv::append_instruction(t, exe.view(), i, aligned);
    return std::string(t.view());
  };
  CHECK(line(0, true) == "If    %0, 3");
  CHECK(line(1, true) == "call  test.vm.add      in: %1, %2       dst: %3");
  CHECK(line(2, true) == "goto  2");
  CHECK(line(4, true) == "ret   %3");
  CHECK(line(1, false) == "call test.vm.add in: %1, %2 dst: %3");
  rv::detail::text loc;
  rv::append_location(loc, exe.view(), 0, 2);
  CHECK(loc.view() == "function 'main', instruction 2 (goto 2)");
}

TEST_CASE("argument text: registers, immediates, constants, functions") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("f", {b.vm_state(), b.void_arg(), b.imm(-4), b.c(b.add_int(1)), b.f("main")}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::executable exe = b.get();
  rv::detail::text t;
  rv::append_instruction(t, exe.view(), 0, false);
  CHECK(t.view() == "call f in: %vm, %void, i-4, c[0], f[main] dst: %1");
}

namespace {
// helper(a) = test.id(a); main(x, c) = c ? test.apply(helper, x, 7) : helper(x).
constexpr void facts_program(rv::exec_builder& b) {
  {
    auto fn = b.function("helper", 1);
    b.emit_call("test.id", {b.r(0)}, b.r(1));  // 0
    b.emit_ret(b.r(1));                        // 1
  }
  auto fn = b.function("main", 2);
  b.emit_if(b.r(1), 3);                                          // 2: false -> 5
  b.emit_call("helper", {b.r(0)}, b.r(2));                       // 3
  b.emit_goto(2);                                                // 4: -> 6
  b.emit_call("test.apply", {b.f("helper"), b.r(0), b.imm(7)}, b.r(2));  // 5
  b.emit_ret(b.r(2));                                            // 6
}
constexpr auto facts_static = rv::build([](rv::exec_builder& b) { facts_program(b); });

// The facts every machine reads, checked on `v` and per-function facts `f`.
template <class Funcs>
void check_function_facts(const rv::exec_view& v, const Funcs& f) {
  const auto at = [&](std::string_view name) { return f[static_cast<std::size_t>(v.find(name))]; };
  const auto slots = [&](std::string_view name, std::int64_t args) {
    return v.funcs[static_cast<std::size_t>(v.find(name))].register_file_size + 1 + args;
  };
  const std::int64_t main = v.find("main"), helper = v.find("helper");
  CHECK(at("helper").max_call_args == 1);
  CHECK(at("helper").frame_slots == slots("helper", 1));
  CHECK(at("helper").used_as_value);
  CHECK(at("helper").first_use_function == main);
  CHECK(at("helper").first_use_pc == 3);
  CHECK(at("main").max_call_args == 3);
  CHECK(at("main").frame_slots == slots("main", 3));
  CHECK_FALSE(at("main").used_as_value);
  CHECK(at("main").first_use_pc == -1);
  CHECK(at("test.id").frame_slots == 0);
  CHECK(at("test.id").first_use_function == helper);
  CHECK(at("test.id").first_use_pc == 0);
  CHECK(at("test.apply").first_use_pc == 5);
  CHECK_FALSE(at("test.apply").used_as_value);
}
}  // namespace

TEST_CASE("program facts: frame slots, first uses, functions passed as values, block leaders") {
  rv::exec_builder b;
  facts_program(b);
  const rv::executable exe = b.get();
  REQUIRE(exe.facts().size() == exe.view().funcs.size());
  check_function_facts(exe.view(), exe.facts());

  constexpr auto facts = rv::facts_of<decltype(facts_static)::sizes>(facts_static.view());
  check_function_facts(facts_static.view(), facts.funcs);
  std::string leaders;
  for (std::size_t pc = 0; pc < facts.instrs.size(); ++pc)
    if (facts.instrs[pc].leader) leaders += std::to_string(pc) + ' ';
  CHECK(leaders == "0 2 3 5 6 ");
  CHECK(facts.instrs[3].vm_callee == facts_static.view().find("helper"));
  CHECK(facts.instrs[0].vm_callee == -1);  // test.id is packed
  CHECK(facts.instrs[5].vm_callee == -1);
  CHECK(facts.calls_indirectly(facts_static.view()));  // helper is passed as a value
}

TEST_CASE("build() records the digest of what it verified; a changed pool changes it") {
  static_assert(facts_static.digest == rv::layout_digest(facts_static.view()));
  auto copy = facts_static;
  copy.layout.instr_data.back() += 1;
  CHECK(rv::layout_digest(copy.view()) != facts_static.digest);
  copy = facts_static;
  copy.layout.funcs[0].register_file_size += 1;
  CHECK(rv::layout_digest(copy.view()) != facts_static.digest);
}
