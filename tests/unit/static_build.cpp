// SPDX-License-Identifier: Apache-2.0
// bytecode/static_executable.hpp: programs built and verified at compile time.
#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <string>

#include "../../bench/big_program.hpp"

namespace rv = relaxvm;

namespace {

constexpr auto builder_fn = [](rv::exec_builder& b) {
  auto fn = b.function("main", 2, {"x", "k"});
  b.emit_call("test.scale", {b.r(0), b.r(1), b.c(b.add_shape({2, 2}))}, b.r(9));
  b.emit_call("test.scale", {b.r(9), b.c(b.add_int(3)), b.c(b.add_shape({2, 2}))}, b.r(8));
  b.emit_ret(b.r(8));
};

// A namespace-scope constexpr executable: a literal type, so it can live in read-only memory.
constexpr auto prog = rv::build(builder_fn);

constexpr float weights[] = {0.5f, -1.0f, 2.0f, 4.0f};
constexpr auto with_weights = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 0);
  b.emit_call("vm.builtin.copy", {b.c(b.add_tensor(std::span<const float>(weights), std::array<std::int64_t, 2>{2, 2}))},
              b.r(0));
  b.emit_ret(b.r(0));
});

rv::registry make_registry() {
  rv::registry reg;
  reg.def("test.scale", [](const rv::tensor& x, std::int64_t k, const rv::shape& s) -> rv::result<rv::tensor> {
    if (x.shape() != s) return rv::detail::value_error("test.scale: shape mismatch");
    rv::tensor out = rv::tensor::empty(x.shape(), x.dtype());
    for (std::int64_t i = 0; i < x.numel(); ++i) out.data<float>()[i] = x.data<const float>()[i] * static_cast<float>(k);
    return out;
  });
  return reg;
}

}  // namespace

// Compile-time checks: this file does not compile when one fails.
// build() verifies and formalizes at compile time.
static_assert(decltype(prog)::sizes.funcs == 2);
static_assert(prog.view().funcs[0].register_file_size == 4);  // r9, r8 became %2, %3
static_assert(prog.view().funcs[0].kind == rv::func_kind::vm);
static_assert(prog.view().name(1) == "test.scale");
static_assert(prog.view().constants.size() == 2);  // the shape is shared
static_assert(prog.num_warnings == 0);
static_assert(std::is_trivially_destructible_v<decltype(prog)>);

TEST_CASE("a static executable equals the one the builder makes at run time") {
  rv::exec_builder b;
  builder_fn(b);
  rv::executable dynamic = b.get();
  rv::executable from_static = prog;
  CHECK(from_static == dynamic);
  CHECK(from_static.as_text() == dynamic.as_text());
}

TEST_CASE("a static executable runs on the same interpreter") {
  rv::registry reg = make_registry();
  rv::virtual_machine vm(prog, reg);
  rv::tensor x = rv::tensor::from<float>({1, 2, 3, 4}, {2, 2});
  rv::tensor y = vm["main"](x, 2).as<rv::tensor>();
  CHECK(y.data<float>()[3] == 24.0f);
}

TEST_CASE("tensor constants from constexpr arrays") {
  static_assert(with_weights.view().constant(0).kind == rv::const_kind::tensor);
  static_assert(with_weights.view().constant(0).data_size == 16);
  rv::registry reg;
  rv::virtual_machine vm(with_weights, reg);
  rv::tensor w = vm.invoke("main", {}).as<rv::tensor>();
  CHECK(w.read_only());
  CHECK(w.shape() == rv::shape{2, 2});
  CHECK(w.data<const float>()[1] == -1.0f);
  CHECK(w.data<const float>()[3] == 4.0f);
  CHECK(std::string(w.try_data<float>().error().message()) ==
        "tensor::data<float32>: the tensor is read-only (a constant of an executable); read it through "
        "data<const float32>()");
}

// static_vm decodes each constant's word with its kind's code only (checked_constant); it must
// give what the checked decoder gives, for every kind.
constexpr float two_weights[] = {1.5f, -2.0f};
constexpr auto every_kind = rv::build([](rv::exec_builder& b) {
  b.add_int(-7);
  b.add_float(2.5);
  b.add_bool(true);
  b.add_dtype(rv::dtype::float32());
  b.add_device(rv::device::cpu());
  b.add_shape({3, 1, 4});
  b.add_string("every kind");
  b.add_tensor(std::span<const float>(two_weights), std::array<std::int64_t, 2>{1, 2});
  auto fn = b.function("main", 0);
  b.emit_call("vm.builtin.copy", {b.c(7)}, b.r(0));
  b.emit_ret(b.r(0));
});
constexpr bool checked_decoder_agrees() {
  const rv::exec_view v = every_kind.view();
  for (std::size_t i = 0; i < v.constants.size(); ++i)
    if (v.checked_constant(v.constant(i).kind, v.constants[i]) != v.constant(i)) return false;
  return v.constants.size() == 8;
}
static_assert(checked_decoder_agrees());

TEST_CASE("build() accepts what as_cpp() prints") {
  constexpr auto again = rv::build([](rv::exec_builder& b) {
    b.declare_function("main", rv::func_kind::vm);
    b.declare_function("test.scale");
    b.add_shape({2, 2});
    b.add_int(3);
    {
      auto fn = b.function("main", 2, {"x", "k"});
      b.emit_call("test.scale", {b.r(0), b.r(1), b.c(0)}, b.r(2));
      b.emit_call("test.scale", {b.r(2), b.c(1), b.c(0)}, b.r(3));
      b.emit_ret(b.r(3));
    }
  });
  CHECK(rv::executable(again) == rv::executable(prog));
}

TEST_CASE("a modified static executable is verified again when converted") {
  auto copy = prog;
  copy.layout.instr_data[copy.layout.instr_offset[2] + 1] = std::int64_t{1} << 30;  // ret %2^30
  rv::result<rv::executable> r = rv::executable::from_static(copy);
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.error().message()).find("invalid executable: function 'main', instruction 2 (ret %1073741824)") == 0);
#if RELAXVM_USE_EXCEPTIONS
  rv::registry reg = make_registry();
  CHECK_THROWS_AS(rv::virtual_machine(copy, reg), rv::error);
#endif
}

// A program of real size at compile time: 1,000 instructions in 10 functions (calls, Ifs, gotos,
// vm-to-vm calls, 188 constants). It compiles at both compilers' default constexpr limits (clang
// 16: 718,713 of its 1,048,576 steps; tools/compile_time.py measures it), and it is the
// program the builder makes at run time.
constexpr auto thousand = rv::build([](rv::exec_builder& b) { bench::big_program(b, 1000); });

TEST_CASE("build() of 1,000 instructions at the compilers' default limits") {
  static_assert(thousand.view().num_instructions() == 1000);
  static_assert(decltype(thousand)::sizes.funcs == 10 + 16);  // f0..f9 and 16 packed functions
  static_assert(thousand.num_warnings == 0);
  rv::exec_builder b;
  bench::big_program(b, 1000);
  rv::executable at_run_time = b.get();
  CHECK(rv::executable(thousand) == at_run_time);
  CHECK(at_run_time.view().constants.size() == thousand.view().constants.size());
}

// build() records the warnings' count, not their text: converting such a program verifies it again
// for the text (an unmodified one without warnings is not verified again; its digest matches).
constexpr auto with_warning = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.copy", {b.imm(7)}, b.r(1));
  b.emit_ret(b.r(1));
});

TEST_CASE("a static executable with warnings keeps their text when converted") {
  static_assert(with_warning.num_warnings == 1);
  const rv::executable exe = with_warning;
  REQUIRE(exe.warnings().size() == 1);
  CHECK(exe.warnings()[0] == "function 'main': input 0 is never read");
  CHECK(rv::executable(prog).warnings().empty());
}

// link() (and static_vm) take a static executable as build() made it; a copy changed since in a
// constant expression is verified again there: a valid change links, an invalid one does not
// (tests/compile_fail/link_changed_program.cpp shows the diagnostic).
constexpr auto changed_but_valid = [] {
  auto p = prog;
  p.layout.param_names = {};  // still a valid program: parameter names are optional
  for (auto& f : p.layout.funcs) f.params_begin = f.params_count = 0;
  return p;
}();
static_assert(changed_but_valid.digest != rv::layout_digest(changed_but_valid.view()));
static_assert(rv::detail::check_built(changed_but_valid).ok);
static_assert(rv::detail::check_built(prog).ok);
