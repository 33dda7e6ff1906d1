// SPDX-License-Identifier: Apache-2.0
// The shape machinery through the VM: match/make shape and prim values, the struct-info checks,
// and shape_arith; each builtin's normal behaviour, then each of its errors (kind and message),
// with the VM still usable afterwards (probe::fails checks that).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <relaxvm.hpp>
#include <string>
#include <vector>

#include "../support/foreign.hpp"
#include "../support/probe.hpp"

namespace rv = relaxvm;
using relaxvm_test::contains;
using relaxvm_test::probe;
using V = std::vector<rv::value>;

namespace {
constexpr std::int64_t imm = 0, store = 1, skip = 2, load = 3;  // match codes
constexpr std::int64_t use_imm = 0, load_shape = 1;             // make codes
constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();

rv::tensor heap_of(std::initializer_list<std::int64_t> slots) {
  rv::tensor h = rv::tensor::empty({static_cast<std::int64_t>(slots.size())}, rv::dtype::int64());
  std::int64_t i = 0;
  for (std::int64_t s : slots) h.data<std::int64_t>()[i++] = s;
  return h;
}
std::int64_t slot(const rv::tensor& h, std::int64_t i) { return h.data<std::int64_t>()[i]; }
}  // namespace

TEST_CASE("the codes are the reference's") {
  CHECK(static_cast<std::int64_t>(rv::builtins::match_code::assert_equal_to_imm) == 0);
  CHECK(static_cast<std::int64_t>(rv::builtins::match_code::store_to_heap) == 1);
  CHECK(static_cast<std::int64_t>(rv::builtins::match_code::no_op) == 2);
  CHECK(static_cast<std::int64_t>(rv::builtins::match_code::assert_equal_to_load) == 3);
  CHECK(static_cast<std::int64_t>(rv::builtins::make_code::use_imm) == 0);
  CHECK(static_cast<std::int64_t>(rv::builtins::make_code::load_shape) == 1);
}

TEST_CASE("match_shape stores, compares and skips, on tensors and shapes") {
  probe p("vm.builtin.match_shape", 10);
  rv::tensor heap = heap_of({0, 5, 0});
  rv::tensor x = rv::tensor::empty({7, 5, 3}, rv::dtype::float32());
  // shape[0] -> heap[0], shape[1] == heap[1], shape[2] == 3
  CHECK(p.ok({x, heap, 3, store, 0, load, 1, imm, 3, "ErrorContext(x) "}).is_null());
  CHECK(slot(heap, 0) == 7);
  CHECK(p.ok({rv::shape{9, 5, 1}, heap, 3, store, 2, load, 1, skip, 0, "ctx"}).is_null());
  CHECK(slot(heap, 2) == 9);

  CHECK(p.fails({x, heap, 3, store, 0, load, 1, imm, 4, "ErrorContext(x) "}, rv::error_kind::runtime) ==
        "ErrorContext(x) match_cast error,  shape[2] mismatch to specified constant. (3 is not 4)");
  CHECK(p.fails({x, heap, 3, load, 2, load, 1, imm, 3, "ErrorContext(x) "}, rv::error_kind::runtime) ==
        "ErrorContext(x) match_cast error,  shape[0] mismatch to a previous populated value. (7 is not 9)");
  CHECK(p.fails({rv::shape{1, 2}, heap, 3, store, 0, load, 1, imm, 3, "E: "}, rv::error_kind::runtime) ==
        "E: match_cast shape size mismatch.");
  CHECK(p.fails({1, heap, 3, store, 0, load, 1, imm, 3, "E: "}, rv::error_kind::type) ==
        "E: vm.builtin.match_shape: expects a Tensor or a Shape but got int64 1");
  CHECK(p.fails({x, heap, 3, store, 3, load, 1, imm, 3, "E: "}, rv::error_kind::value) ==
        "vm.builtin.match_shape: shape[0] is slot 3, outside the shape heap of 3 slots");
  CHECK(p.fails({x, nullptr, 3, store, 0, load, 1, imm, 3, "E: "}, rv::error_kind::value) ==
        "vm.builtin.match_shape: shape[0] reads or writes the shape heap, which is null");
  CHECK(p.fails({x, heap, 3, 7, 0, load, 1, imm, 3, "E: "}, rv::error_kind::value) ==
        "vm.builtin.match_shape: Unknown match shape code: 7");
  CHECK(p.fails({x, heap, 3, store, 0, load, 1, imm, 2.5, "E: "}, rv::error_kind::type) ==
        "vm.builtin.match_shape: a value (argument 8) must be an int64, but got float64 2.5");
  CHECK(p.fails({x, rv::tensor::empty({2}, rv::dtype::int32()), 3, store, 0, load, 1, imm, 3, "E: "},
                rv::error_kind::value) ==
        "vm.builtin.match_shape: the shape heap must be a 1-d int64 host tensor, but got [2] int32 on cpu:0");
  CHECK(p.fails({x, heap, 3, store, 0, load, 1, imm, 3, 5}, rv::error_kind::type) ==
        "vm.builtin.match_shape: the error context must be a string or null, but got int64 5");
  CHECK(p.fails({x, heap, 4, store, 0, load, 1, imm, 3, "E"}, rv::error_kind::type) ==
        "vm.builtin.match_shape: n is 4 but 10 arguments hold 3 (code, value) pairs");
  // Without err_ctx, and with a null one.
  probe q("vm.builtin.match_shape", 5);
  CHECK(q.ok({rv::shape{4}, rv::value(), 1, skip, 0}).is_null());
  CHECK(q.fails({rv::shape{4}, rv::value(), 1, imm, 0}, rv::error_kind::runtime) ==
        "match_cast error,  shape[0] mismatch to specified constant. (4 is not 0)");
  CHECK(q.fails({x, rv::value(), 1, skip, 0}, rv::error_kind::runtime) == "match_cast shape size mismatch.");
  probe few("vm.builtin.match_shape", 2);
  CHECK(few.fails({x, heap}, rv::error_kind::type) ==
        "vm.builtin.match_shape: expects (input, heap, n, code, value, ..., [err_ctx]) but got 2 arguments");
}

TEST_CASE("make_shape takes immediates and heap slots") {
  probe p("vm.builtin.make_shape", 6);
  rv::tensor heap = heap_of({11, 22});
  CHECK(p.ok({heap, 2, use_imm, 4, load_shape, 1}).as<rv::shape>() == rv::shape{4, 22});
  CHECK(p.ok({rv::value(), 2, use_imm, 4, use_imm, 5}).as<rv::shape>() == rv::shape{4, 5});
  CHECK(p.fails({heap, 2, use_imm, 4, load_shape, 2}, rv::error_kind::value) ==
        "vm.builtin.make_shape: dimension 1 is slot 2, outside the shape heap of 2 slots");
  CHECK(p.fails({rv::value(), 2, use_imm, 4, load_shape, 0}, rv::error_kind::value) ==
        "vm.builtin.make_shape: dimension 1 reads or writes the shape heap, which is null");
  CHECK(p.fails({heap, 2, 9, 4, use_imm, 0}, rv::error_kind::value) == "vm.builtin.make_shape: Unknown make shape code: 9");
  CHECK(p.fails({heap, 3, use_imm, 4, use_imm, 0}, rv::error_kind::type) ==
        "vm.builtin.make_shape: n is 3 but 4 arguments follow it; expected 2n");
  CHECK(p.fails({heap, "2", use_imm, 4, use_imm, 0}, rv::error_kind::type) ==
        "vm.builtin.make_shape: n (argument 1) must be an int64, but got string");
  CHECK(p.fails({rv::shape{2}, 2, use_imm, 4, use_imm, 0}, rv::error_kind::type) ==
        "vm.builtin.make_shape: the shape heap must be a tensor, but got shape");
  // More dimensions than the inline buffer.
  rv::exec_builder b;
  {
    auto fn = b.function("f", 0);
    std::vector<rv::arg> args{b.void_arg(), b.imm(12)};
    for (int i = 0; i < 12; ++i) {
      args.push_back(b.imm(use_imm));
      args.push_back(b.imm(i + 1));
    }
    b.emit_call("vm.builtin.make_shape", args, b.r(0));
    b.emit_ret(b.r(0));
  }
  rv::registry reg;
  rv::virtual_machine vm(b.get(), reg);
  CHECK(vm.invoke("f", {}).as<rv::shape>() == rv::shape{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
}

TEST_CASE("match_prim_value and make_prim_value") {
  probe m("vm.builtin.match_prim_value", 5);
  rv::tensor heap = heap_of({0, 8});
  CHECK(m.ok({6, heap, store, 0, "E "}).is_null());
  CHECK(slot(heap, 0) == 6);
  CHECK(m.ok({8, heap, load, 1, "E "}).is_null());
  CHECK(m.ok({5, heap, imm, 5, rv::value()}).is_null());
  CHECK(m.ok({5, rv::value(), skip, 0, rv::value()}).is_null());
  CHECK(m.fails({5, heap, imm, 6, "E "}, rv::error_kind::runtime) == "E PrimValue mismatch to specified constant. (5 is not 6)");
  CHECK(m.fails({5, heap, load, 1, "E "}, rv::error_kind::runtime) ==
        "E PrimValue mismatch to a previous populated value. (5 is not 8)");
  CHECK(m.fails({5, heap, store, 2, "E "}, rv::error_kind::value) ==
        "vm.builtin.match_prim_value: the value is slot 2, outside the shape heap of 2 slots");
  CHECK(m.fails({5, heap, 4, 0, "E "}, rv::error_kind::value) == "vm.builtin.match_prim_value: Unknown match shape code: 4");
  CHECK(m.fails({rv::shape{5}, heap, imm, 5, "E "}, rv::error_kind::type) ==
        "E vm.builtin.match_prim_value: expects an integer value but got shape");
  probe four("vm.builtin.match_prim_value", 4);
  CHECK(four.ok({5, heap, imm, 5}).is_null());
  probe three("vm.builtin.match_prim_value", 3);
  CHECK(three.fails({5, heap, imm}, rv::error_kind::type) ==
        "vm.builtin.match_prim_value: expects (value, heap, code, v, [err_ctx]) but got 3 arguments");

  probe k("vm.builtin.make_prim_value", 3);
  CHECK(k.ok({heap, use_imm, 42}).as<std::int64_t>() == 42);
  CHECK(k.ok({heap, load_shape, 1}).as<std::int64_t>() == 8);
  CHECK(k.fails({heap, load_shape, -1}, rv::error_kind::value) ==
        "vm.builtin.make_prim_value: the value is slot -1, outside the shape heap of 2 slots");
  CHECK(k.fails({heap, 3, 0}, rv::error_kind::value) == "vm.builtin.make_prim_value: Invalid shape code: 3");
  CHECK(k.fails({heap, use_imm, 1.5}, rv::error_kind::type) ==
        "vm.builtin.make_prim_value: argument 2 expects int64 but got float64 1.5");
}

TEST_CASE("check_tensor_info checks the kind, ndim and dtype") {
  probe p("vm.builtin.check_tensor_info", 4);
  rv::tensor x = rv::tensor::empty({2, 3}, rv::dtype::float32());
  CHECK(p.ok({x, 2, rv::dtype::float32(), "ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n, 3))) "})
            .is_null());
  CHECK(p.ok({x, -1, rv::dtype::void_(), "E "}).is_null());
  CHECK(p.fails({x, 3, rv::dtype::float32(), "ErrorContext(x) "}, rv::error_kind::value) ==
        "ErrorContext(x) expect Tensor with ndim 3 but get 2");
  CHECK(p.fails({x, 2, rv::dtype::float64(), "ErrorContext(x) "}, rv::error_kind::value) ==
        "ErrorContext(x) expect Tensor with dtype float64 but get float32");
  CHECK(p.fails({rv::shape{2, 3}, 2, rv::dtype::float32(), "ErrorContext(x) "}, rv::error_kind::type) ==
        "ErrorContext(x) expect a Tensor but get shape");
  CHECK(p.fails({x, 2, 7, "E "}, rv::error_kind::type) ==
        "vm.builtin.check_tensor_info: dtype (argument 2) must be a dtype, but got int64 7");
  CHECK(p.fails({x, "2", rv::dtype::float32(), "E "}, rv::error_kind::type) ==
        "vm.builtin.check_tensor_info: ndim (argument 1) must be an int64, but got string");
  probe no_dtype("vm.builtin.check_tensor_info", 3);
  CHECK(no_dtype.ok({x, 2, "E "}).is_null());
  CHECK(no_dtype.fails({x, 1, rv::value()}, rv::error_kind::value) == "expect Tensor with ndim 1 but get 2");
  probe two("vm.builtin.check_tensor_info", 2);
  CHECK(two.fails({x, 2}, rv::error_kind::type) ==
        "vm.builtin.check_tensor_info: expects (x, ndim, [dtype,] err_ctx) but got 2 arguments");
}

TEST_CASE("check_shape_info, check_tuple_info, check_func_info") {
  probe s("vm.builtin.check_shape_info", 3);
  CHECK(s.ok({rv::shape{1, 2}, 2, "E "}).is_null());
  CHECK(s.ok({rv::shape{1, 2}, -1, "E "}).is_null());
  CHECK(s.fails({rv::shape{1, 2}, 3, "E "}, rv::error_kind::value) == "E expect Shape with ndim 3 but get 2");
  CHECK(s.fails({rv::tensor::empty({1}, rv::dtype::int64()), 1, "E "}, rv::error_kind::type) ==
        "E expect a Shape but get tensor");
  CHECK(s.fails({rv::shape{1}, 1, 3}, rv::error_kind::type) ==
        "vm.builtin.check_shape_info: the error context must be a string or null, but got int64 3");

  probe t("vm.builtin.check_tuple_info", 3);
  CHECK(t.ok({rv::tuple{1, 2}, 2, "E "}).is_null());
  CHECK(t.ok({rv::tuple{}, 0, "E "}).is_null());
  CHECK(t.fails({rv::tuple{1, 2}, 3, "E "}, rv::error_kind::value) ==
        "E expect a Tuple with 3 elements,  but get a Tuple with 2 elements.");
  CHECK(t.fails({rv::shape{1, 2}, 2, "E "}, rv::error_kind::type) == "E expect a Tuple but get shape");
  CHECK(t.fails({rv::tuple{}, 0, 4}, rv::error_kind::type) ==
        "vm.builtin.check_tuple_info: the error context must be a string or null, but got int64 4");

  probe f("vm.builtin.check_func_info", 2);
  rv::registry reg;
  CHECK(f.ok({reg.get("vm.builtin.copy"), "E "}).is_null());
  CHECK(f.fails({1, "E "}, rv::error_kind::type) == "E expect a Function but get int64");
  CHECK(f.fails({reg.get("vm.builtin.copy"), rv::shape{}}, rv::error_kind::type) ==
        "vm.builtin.check_func_info: the error context must be a string or null, but got shape");
}

TEST_CASE("check_prim_value_info") {
  probe p("vm.builtin.check_prim_value_info", 3);
  CHECK(p.ok({3, rv::dtype::int64(), "E"}).is_null());
  CHECK(p.ok({true, rv::dtype::bool_(), "E"}).is_null());
  CHECK(p.ok({2.5, rv::dtype::float32(), "E"}).is_null());
  CHECK(p.ok({2, rv::dtype::float64(), "E"}).is_null());  // an int is a valid float, as in the reference
  CHECK(p.fails({2.5, rv::dtype::int32(), "E"}, rv::error_kind::type) == "E, expected dtype int32, but received float64 2.5");
  CHECK(p.fails({rv::shape{1}, rv::dtype::int32(), "E"}, rv::error_kind::type) ==
        "E, expected dtype int32, but received ObjectRef of type shape");
  CHECK(p.fails({1, rv::dtype::void_(), "E"}, rv::error_kind::type) == "E, unsupported dtype void");
  CHECK(p.fails({1, 5, "E"}, rv::error_kind::type) ==
        "vm.builtin.check_prim_value_info: argument 1 expects dtype but got int64 5");
}

TEST_CASE("check_upper_bound: 0 <= heap[slot] <= bound, or a value error naming the variable") {
  probe p("vm.builtin.check_upper_bound", 5);
  const rv::tensor heap = heap_of({4, 5, -1});
  CHECK(p.ok({heap, 0, 4, "n", "E "}).is_null());
  CHECK(p.ok({heap, 1, 8, "n", rv::value()}).is_null());
  CHECK(p.fails({heap, 1, 4, "n", "E "}, rv::error_kind::value) == "E symbolic variable n is 5, larger than its upper bound 4");
  CHECK(p.fails({heap, 2, 4, "m", "E "}, rv::error_kind::value) ==
        "E symbolic variable m is -1; a variable with an upper bound (4) must be 0 or more");
  CHECK(p.fails({heap, 3, 4, "n", "E "}, rv::error_kind::value) ==
        "vm.builtin.check_upper_bound: the variable is slot 3, outside the shape heap of 3 slots");
  CHECK(p.fails({heap, 0, 4, 7, "E "}, rv::error_kind::type) ==
        "vm.builtin.check_upper_bound: the variable's name (argument 3) must be a string, but got int64 7");
}

TEST_CASE("shape_arith computes n + 1, n * m, floordiv and floormod on the heap") {
  probe p("vm.builtin.shape_arith", 13);
  constexpr std::int64_t add = 0, sub = 1, mul = 2, floordiv = 3, floormod = 4, min = 5, max = 6;
  auto run = [&](std::int64_t op, std::int64_t a, std::int64_t b) {
    rv::tensor heap = heap_of({a, b, 0, 0});
    // heap[2] = heap[0] op heap[1]; heap[3] = heap[2] op 1 (an immediate)
    rv::result<rv::value> r = p({heap, op, 2, load_shape, 0, load_shape, 1, op, 3, load_shape, 2, use_imm, 1});
    REQUIRE(r.ok());
    return std::pair{slot(heap, 2), slot(heap, 3)};
  };
  CHECK(run(add, 7, 5) == std::pair<std::int64_t, std::int64_t>{12, 13});
  CHECK(run(sub, 7, 5) == std::pair<std::int64_t, std::int64_t>{2, 1});
  CHECK(run(mul, 7, 5) == std::pair<std::int64_t, std::int64_t>{35, 35});
  CHECK(run(floordiv, 7, 2).first == 3);
  CHECK(run(floordiv, -7, 2).first == -4);  // toward negative infinity, like Python
  CHECK(run(floordiv, 7, -2).first == -4);
  CHECK(run(floormod, -7, 2).first == 1);
  CHECK(run(floormod, 7, -2).first == -1);
  CHECK(run(floormod, i64min, -1).first == 0);
  CHECK(run(min, 7, 5).first == 5);
  CHECK(run(max, 7, 5).first == 7);
  // Comparisons and logic (symbolic conditions): 0 or 1, the second group adds 1.
  using op = rv::builtins::arith_op;
  const auto code = [](op o) { return static_cast<std::int64_t>(o); };
  CHECK(run(code(op::eq), 7, 7).first == 1);
  CHECK(run(code(op::eq), 7, 5).first == 0);
  CHECK(run(code(op::ne), 7, 5).first == 1);
  CHECK(run(code(op::lt), 5, 7).first == 1);
  CHECK(run(code(op::lt), 7, 7).first == 0);
  CHECK(run(code(op::le), 7, 7).first == 1);
  CHECK(run(code(op::gt), 7, 5).first == 1);
  CHECK(run(code(op::ge), 5, 7).first == 0);
  CHECK(run(code(op::and_), 3, -2).first == 1);
  CHECK(run(code(op::and_), 3, 0).first == 0);
  CHECK(run(code(op::or_), 0, 9).first == 1);
  CHECK(run(code(op::or_), 0, 0).first == 0);

  rv::tensor heap = heap_of({i64max, 2, 0});
  CHECK(p.fails({heap, add, 2, load_shape, 0, use_imm, 1, add, 2, use_imm, 0, use_imm, 0}, rv::error_kind::runtime) ==
        "vm.builtin.shape_arith: heap[2] = 9223372036854775807 + 1 overflows int64");
  CHECK(p.fails({heap, mul, 2, load_shape, 0, load_shape, 1, add, 2, use_imm, 0, use_imm, 0}, rv::error_kind::runtime) ==
        "vm.builtin.shape_arith: heap[2] = 9223372036854775807 * 2 overflows int64");
  CHECK(p.fails({heap, sub, 2, use_imm, i64min, use_imm, 1, add, 2, use_imm, 0, use_imm, 0}, rv::error_kind::runtime) ==
        "vm.builtin.shape_arith: heap[2] = -9223372036854775808 - 1 overflows int64");
  CHECK(p.fails({heap, floordiv, 2, use_imm, i64min, use_imm, -1, add, 2, use_imm, 0, use_imm, 0}, rv::error_kind::runtime) ==
        "vm.builtin.shape_arith: heap[2] = -9223372036854775808 // -1 overflows int64");
  CHECK(p.fails({heap, floormod, 2, use_imm, 5, use_imm, 0, add, 2, use_imm, 0, use_imm, 0}, rv::error_kind::runtime) ==
        "vm.builtin.shape_arith: heap[2] = 5 % 0 divides by zero");
  CHECK(p.fails({heap, 15, 2, use_imm, 5, use_imm, 1, add, 2, use_imm, 0, use_imm, 0}, rv::error_kind::value) ==
        "vm.builtin.shape_arith: unknown operation 15; expected 0 (add) to 14 (or)");
  CHECK(p.fails({heap, add, 3, use_imm, 5, use_imm, 1, add, 2, use_imm, 0, use_imm, 0}, rv::error_kind::value) ==
        "vm.builtin.shape_arith: the destination is slot 3, outside the shape heap of 3 slots");
  CHECK(p.fails({heap, add, 2, load_shape, 9, use_imm, 1, add, 2, use_imm, 0, use_imm, 0}, rv::error_kind::value) ==
        "vm.builtin.shape_arith: an operand is slot 9, outside the shape heap of 3 slots");
  CHECK(p.fails({heap, add, 2, 2, 9, use_imm, 1, add, 2, use_imm, 0, use_imm, 0}, rv::error_kind::value) ==
        "vm.builtin.shape_arith: Unknown make shape code: 2");
  CHECK(p.fails({rv::value(), add, 2, use_imm, 1, use_imm, 1, add, 2, use_imm, 0, use_imm, 0}, rv::error_kind::type) ==
        "vm.builtin.shape_arith: the shape heap must be a tensor, but got null");
  CHECK(slot(heap, 2) == 0);  // a failed group writes nothing
  probe short_group("vm.builtin.shape_arith", 4);
  CHECK(short_group.fails({heap, add, 2, use_imm}, rv::error_kind::type) ==
        "vm.builtin.shape_arith: expects (heap, then groups of op, dst, code_a, a, code_b, b) but got 4 arguments");
}

TEST_CASE("tensor_to_shape and shape_to_tensor") {
  probe t("vm.builtin.tensor_to_shape", 1);
  rv::tensor i32 = rv::tensor::empty({3}, rv::dtype::int32());
  for (int i = 0; i < 3; ++i) i32.data<std::int32_t>()[i] = -i;
  CHECK(t.ok({i32}).as<rv::shape>() == rv::shape{0, -1, -2});
  CHECK(t.ok({heap_of({4, 5})}).as<rv::shape>() == rv::shape{4, 5});
  CHECK(t.fails({rv::tensor::empty({3}, rv::dtype::float32())}, rv::error_kind::value) ==
        "vm.builtin.tensor_to_shape: expects a 1-d int16, int32 or int64 tensor, but got [3] float32");
  CHECK(t.fails({rv::tensor::empty({1, 3}, rv::dtype::int64())}, rv::error_kind::value) ==
        "vm.builtin.tensor_to_shape: expects a 1-d int16, int32 or int64 tensor, but got [1, 3] int64");
  CHECK(t.fails({relaxvm_test::every_other_int64({4, 9, 5, 9})}, rv::error_kind::value) ==
        "vm.builtin.tensor_to_shape: the tensor must be compact");
  probe s("vm.builtin.shape_to_tensor", 1);
  rv::tensor back = s.ok({rv::shape{6, 7}}).as<rv::tensor>();
  CHECK(back.dtype() == rv::dtype::int64());
  CHECK(back.data<std::int64_t>()[1] == 7);
  CHECK(s.fails({3}, rv::error_kind::type) == "vm.builtin.shape_to_tensor: argument 0 expects shape but got int64 3");
}

TEST_CASE("a Relax-style prologue: check, match, compute, make") {
  // f(x: Tensor((n, 4), float32)) -> Shape((n + 1, n * 4))
  rv::exec_builder b;
  {
    auto fn = b.function("f", 1);
    b.emit_call("vm.builtin.alloc_shape_heap", {b.vm_state(), b.imm(3)}, b.r(1));
    b.emit_call("vm.builtin.check_tensor_info",
                {b.r(0), b.imm(2), b.c(b.add_dtype(rv::dtype::float32())), b.c(b.add_string("ErrorContext(x) "))});
    b.emit_call("vm.builtin.match_shape", {b.r(0), b.r(1), b.imm(2), b.imm(store), b.imm(0), b.imm(imm), b.imm(4),
                                           b.c(b.add_string("ErrorContext(x) "))});
    b.emit_call("vm.builtin.shape_arith", {b.r(1), b.imm(0), b.imm(1), b.imm(load_shape), b.imm(0), b.imm(use_imm), b.imm(1),
                                           b.imm(2), b.imm(2), b.imm(load_shape), b.imm(0), b.imm(use_imm), b.imm(4)});
    b.emit_call("vm.builtin.make_shape", {b.r(1), b.imm(2), b.imm(load_shape), b.imm(1), b.imm(load_shape), b.imm(2)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::registry reg;
  rv::virtual_machine vm(b.get(), reg);
  CHECK(vm.invoke("f", {rv::tensor::empty({5, 4}, rv::dtype::float32())}).as<rv::shape>() == rv::shape{6, 20});
  rv::result<rv::value> bad = vm.try_invoke("f", V{rv::tensor::empty({5, 3}, rv::dtype::float32())});
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.error().message()).find("ErrorContext(x) match_cast error,  shape[1] mismatch to specified constant. (3 is not 4)") == 0);
  CHECK(vm.invoke("f", {rv::tensor::empty({0, 4}, rv::dtype::float32())}).as<rv::shape>() == rv::shape{1, 0});
}

TEST_CASE("make_shape in a VM hands an equal shape out again, and rewrites only a shape nothing else holds") {
  probe p("vm.builtin.make_shape", 4);  // f(heap, n, code, value): one dimension, an immediate
  const rv::value null_heap;
  const rv::shape five = p.ok({null_heap, 1, use_imm, 5}).as<rv::shape>();
  const rv::shape again = p.ok({null_heap, 1, use_imm, 5}).as<rv::shape>();
  CHECK(again.get() == five.get());  // equal: the same object, however many hold it
  rv::shape six = p.ok({null_heap, 1, use_imm, 6}).as<rv::shape>();
  CHECK(six == rv::shape{6});
  CHECK(five == rv::shape{5});  // held here, so not rewritten
  CHECK(six.get() != five.get());
  const rv::shape_object* kept = six.get();
  six = rv::shape();
  // Nothing but the VM holds (6) now: it becomes (7) in place.
  const rv::shape seven = p.ok({null_heap, 1, use_imm, 7}).as<rv::shape>();
  CHECK(seven == rv::shape{7});
  CHECK(seven.get() == kept);
  CHECK(five == rv::shape{5});
}
