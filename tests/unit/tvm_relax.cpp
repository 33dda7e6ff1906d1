// SPDX-License-Identifier: Apache-2.0
// relaxvm/tvm/relax.hpp: TVM v0.19.0's Relax VM executables. The fixtures (written by TVM's own
// serializer) load, print as TVM printed them, run to the results TVM recorded (MANIFEST.md), and
// are written back byte for byte; builder executables go through TVM's format and back unchanged;
// every truncation, byte flip and hostile count is an error or a verified executable.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <relaxvm/tvm.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "../support/counting_new.hpp"
#include "../support/tvm_fixtures.hpp"

namespace rv = relaxvm;
using relaxvm_test::bytes_t;
using relaxvm_test::fixture;
using relaxvm_test::read_text;

namespace {

bool contains(std::string_view s, std::string_view part) { return relaxvm_test::text_contains(s, part); }

/// What MANIFEST.md records for `file`: its "### file" section.
std::string manifest_section(const std::string& file) {
  static const std::string manifest = read_text(std::string(RELAXVM_TVM_FIXTURES) + "/MANIFEST.md");
  const std::size_t begin = manifest.find("### " + file + "\n");
  REQUIRE(begin != std::string::npos);
  const std::size_t end = manifest.find("\n### ", begin + 4);
  return manifest.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}
/// One part of a section ("--- as_text()", "--- stats()"): the lines up to the next part or run.
std::string manifest_part(const std::string& file, const std::string& part) {
  const std::string s = manifest_section(file);
  std::size_t begin = s.find("--- " + part + "\n");
  REQUIRE(begin != std::string::npos);
  begin += part.size() + 5;
  std::size_t end = s.size();
  for (const char* next : {"\n--- ", "\nrun ", "\n```"}) {
    const std::size_t at = s.find(next, begin);
    if (at != std::string::npos && at + 1 < end) end = at + 1;
  }
  return s.substr(begin, end - begin);
}
/// The expectations below are TVM's: each names the line of MANIFEST.md it comes from.
void tvm_recorded(const std::string& file, const std::string& line) {
  CHECK_MESSAGE(contains(manifest_section(file), line + "\n"), "MANIFEST.md has no line '", line, "' for ", file);
}

/// The packed functions MANIFEST.md lists for the Relax fixtures (vm.builtin.* are relaxvm's own).
rv::registry fixture_registry() {
  rv::registry reg;
  reg.def("test.add_i64", [](std::int64_t a, std::int64_t b) { return a + b; });
  reg.def("test.sub_i64", [](std::int64_t a, std::int64_t b) { return a - b; });
  reg.def("test.mul_i64", [](std::int64_t a, std::int64_t b) { return a * b; });
  reg.def("test.lt_i64", [](std::int64_t a, std::int64_t b) { return a < b; });
  reg.def("test.add_f64", [](double a, double b) { return a + b; });
  reg.def("test.add_one_f32", [](const rv::tensor& x, const rv::tensor& out) {
    for (std::int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = x.data<const float>()[i] + 1;
  });
  return reg;
}

rv::executable load(const std::string& name) {
  rv::result<rv::executable> exe = rv::tvm::load_relax(fixture(name));
  REQUIRE_MESSAGE(exe.ok(), exe.error().message());
  return *exe;
}

template <class T>
std::vector<T> elements(const rv::value& v) {
  const rv::tensor t = v.as<rv::tensor>();
  return std::vector<T>(t.data<const T>(), t.data<const T>() + t.numel());
}
std::vector<std::int64_t> dims(const rv::value& v) {
  const auto d = v.kind() == rv::value_kind::shape ? v.as<rv::shape>().dims() : v.as<rv::tensor>().shape().dims();
  return std::vector<std::int64_t>(d.begin(), d.end());
}
std::string error_of(const rv::result<rv::value>& r) {
  REQUIRE(!r.ok());
  return std::string(r.error().message());
}

/// The layout in the test's own words (an encoder independent of relax.hpp's writer), for hand-made
/// files: little-endian, dmlc strings and vectors.
struct tvm_writer {
  bytes_t b;
  tvm_writer& u64(std::uint64_t v) { return le(v, 8); }
  tvm_writer& i64(std::int64_t v) { return le(static_cast<std::uint64_t>(v), 8); }
  tvm_writer& i32(std::int32_t v) { return le(static_cast<std::uint32_t>(v), 4); }
  tvm_writer& u8(std::uint8_t v) { return le(v, 1); }
  tvm_writer& u16(std::uint16_t v) { return le(v, 2); }
  tvm_writer& str(std::string_view s) {
    u64(s.size());
    for (char c : s) b.push_back(static_cast<std::byte>(c));
    return *this;
  }
  tvm_writer& header(std::string_view version = "0.14") { return u64(0xD225DE2F4214151Dull).str(version); }
  tvm_writer& func(std::int32_t kind, std::string_view name, std::int64_t start, std::int64_t end, std::int64_t num_args,
                   std::int64_t regs, std::vector<std::string_view> params = {}) {
    i32(kind).str(name).i64(start).i64(end).i64(num_args).i64(regs).u64(params.size());
    for (std::string_view p : params) str(p);
    return *this;
  }
  tvm_writer& dtype(std::uint8_t code, std::uint8_t bits, std::uint16_t lanes = 1) { return u8(code).u8(bits).u16(lanes); }
  /// Instructions of `main() { ret %0 }` after one call vm.builtin.copy(c[0]) -> %0 (function 0).
  tvm_writer& copy_const_code() {
    u64(2).i64(0).i64(5);
    return u64(7).i64(1).i64(0).i64(0).i64(1).i64(std::int64_t{2} << 56).i64(2).i64(0);
  }
  /// The outer dmlc string: the length of everything written, then the bytes.
  bytes_t wrap() const {
    tvm_writer out;
    out.u64(b.size());
    out.b.insert(out.b.end(), b.begin(), b.end());
    return out.b;
  }

 private:
  tvm_writer& le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
    return *this;
  }
};

/// `main() = vm.builtin.copy(c[0])` over one constant written by `constant`.
template <class F>
bytes_t one_constant(F constant) {
  tvm_writer w;
  w.header().u64(2).func(0, "vm.builtin.copy", 0, 0, -2, 0).func(1, "main", 0, 2, 0, 1);
  w.u64(1);
  constant(w);
  w.copy_const_code();
  return w.wrap();
}

std::string load_error(const bytes_t& b) {
  rv::result<rv::executable> r = rv::tvm::load_relax(b);
  if (r.ok()) return "<loaded>";
  CHECK(r.error().kind() == rv::error_kind::value);
  const std::string m(r.error().message());
  CHECK_MESSAGE(m.rfind("load_relax: ", 0) == 0, m);
  return m;
}

/// The first `n` bytes of `b` with the leading length set to match, so that the reader meets the
/// cut inside the executable rather than at the length.
bytes_t cut_inside(const bytes_t& b, std::size_t n) {
  bytes_t out(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(((n - 8) >> (8 * i)) & 0xFF);
  return out;
}

/// load_relax's error for `b` contains `part` (the message is shown when it does not).
void expect_error(const bytes_t& b, std::string_view part) {
  const std::string m = load_error(b);
  CHECK_MESSAGE(contains(m, part), "the error is: ", m);
}

}  // namespace

// ---- the fixtures: load, print, run -----------------------------------------------------------

TEST_CASE("relax_calls.rxe: loads, prints as TVM printed it, and runs to TVM's results") {
  const rv::executable exe = load("relax_calls.rxe");
  // relaxvm's printer follows TVM's layout column for column: the texts are equal.
  CHECK(exe.as_text() == manifest_part("relax_calls.rxe", "as_text()"));
  CHECK(exe.stats() == manifest_part("relax_calls.rxe", "stats()"));
  CHECK(exe.warnings().empty());

  rv::registry reg = fixture_registry();
  rv::virtual_machine vm(exe, reg);
  const auto run_int = [&](std::string_view f, std::initializer_list<rv::value> args) {
    return vm.invoke(f, args).as<std::int64_t>();
  };
  tvm_recorded("relax_calls.rxe", "run fact(5) -> int 120");
  CHECK(run_int("fact", {std::int64_t{5}}) == 120);
  tvm_recorded("relax_calls.rxe", "run fact(1) -> int 1");
  CHECK(run_int("fact", {std::int64_t{1}}) == 1);
  tvm_recorded("relax_calls.rxe", "run double(21) -> int 42");
  CHECK(run_int("double", {std::int64_t{21}}) == 42);
  tvm_recorded("relax_calls.rxe", "run add_k(1, 2) -> int 3");
  CHECK(run_int("add_k", {std::int64_t{1}, std::int64_t{2}}) == 3);
  tvm_recorded("relax_calls.rxe", "run main(5) -> int 340");
  CHECK(run_int("main", {std::int64_t{5}}) == 340);
  tvm_recorded("relax_calls.rxe", "run main(3) -> int 112");
  CHECK(run_int("main", {std::int64_t{3}}) == 112);
  tvm_recorded("relax_calls.rxe", "run use_consts(7) -> int -321");
  CHECK(run_int("use_consts", {std::int64_t{7}}) == -321);

  tvm_recorded("relax_calls.rxe", "run const_f32() -> tensor(float32, [2, 2]) [1.5, -2, 0.25, 3]");
  const rv::value f32 = vm.invoke("const_f32", {});
  CHECK(f32.as<rv::tensor>().dtype() == rv::dtype::float32());
  CHECK(dims(f32) == std::vector<std::int64_t>{2, 2});
  CHECK(elements<float>(f32) == std::vector<float>{1.5f, -2.0f, 0.25f, 3.0f});
  tvm_recorded("relax_calls.rxe", "run const_i64() -> tensor(int64, [3]) [1, -2, 1099511627776]");
  const rv::value i64 = vm.invoke("const_i64", {});
  CHECK(i64.as<rv::tensor>().dtype() == rv::dtype::int64());
  CHECK(elements<std::int64_t>(i64) == std::vector<std::int64_t>{1, -2, std::int64_t{1} << 40});
  tvm_recorded("relax_calls.rxe", "run const_dtype() -> dtype float16x4");
  CHECK(rv::to_string(vm.invoke("const_dtype", {})) == "float16x4");
  tvm_recorded("relax_calls.rxe", "run const_shape() -> shape(2, 3, 4)");
  CHECK(dims(vm.invoke("const_shape", {})) == std::vector<std::int64_t>{2, 3, 4});
  tvm_recorded("relax_calls.rxe", "run const_str() -> \"hello, relax\"");
  CHECK(vm.invoke("const_str", {}).as<std::string_view>() == "hello, relax");
  tvm_recorded("relax_calls.rxe", "run const_int() -> int 100");
  CHECK(run_int("const_int", {}) == 100);

  // TVM: "... ValueError: Invoking function fact expects 1 arguments (n), but 0 arguments were provided."
  tvm_recorded("relax_calls.rxe",
               "run fact((no args)) -> ERROR src/runtime/relax_vm/vm.cc:681: InternalError: Check failed: "
               "static_cast<size_t>(gfunc.num_args) == args.size() (1 vs. 0) : ValueError: Invoking function fact "
               "expects 1 arguments (n), but 0 arguments were provided.");
  const rv::result<rv::value> arity = vm.try_invoke("fact", {});
  CHECK(arity.error().kind() == rv::error_kind::value);
  CHECK(contains(error_of(arity), "Invoking function fact expects 1 arguments (n), but 0 arguments were provided."));
  CHECK(run_int("fact", {std::int64_t{5}}) == 120);  // the VM is still usable
}

TEST_CASE("relax_float.rxe: float constants (tag 5)") {
  const rv::executable exe = load("relax_float.rxe");
  CHECK(exe.as_text() == manifest_part("relax_float.rxe", "as_text()"));
  // TVM v0.19.0's stats() fails on a float constant ("... but got float"); relaxvm's prints it.
  tvm_recorded("relax_float.rxe",
               "ERROR src/runtime/relax_vm/executable.cc:100: Constant pool can only contain NDArray and DLDataType, "
               "but got float");
  CHECK(contains(exe.stats(), "Constant pool (# 2): [2.5, -0.125]"));

  rv::registry reg = fixture_registry();
  rv::virtual_machine vm(exe, reg);
  tvm_recorded("relax_float.rxe", "run const_float() -> float 2.5");
  CHECK(vm.invoke("const_float", {}).as<double>() == 2.5);
  tvm_recorded("relax_float.rxe", "run add_const(1.0) -> float 3.375");
  CHECK(vm.invoke("add_const", {1.0}).as<double>() == 3.375);
}

TEST_CASE("relax_shape.rxe: compiled-Relax shape code, its match_cast and dtype errors") {
  const rv::executable exe = load("relax_shape.rxe");
  CHECK(exe.as_text() == manifest_part("relax_shape.rxe", "as_text()"));
  CHECK(exe.stats() == manifest_part("relax_shape.rxe", "stats()"));

  rv::registry reg = fixture_registry();
  rv::virtual_machine vm(exe, reg);
  std::vector<float> iota(12);
  for (std::size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<float>(i);
  tvm_recorded("relax_shape.rxe",
               "run main(x=float32[3,4] 0..11) -> tensor(float32, [3, 4]) [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]");
  const rv::value out = vm.invoke("main", {rv::tensor::from<float>(iota, {3, 4})});
  CHECK(dims(out) == std::vector<std::int64_t>{3, 4});
  CHECK(elements<float>(out) == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  tvm_recorded("relax_shape.rxe", "run main(x=float32[1,4] [-1,-2,-3,-4]) -> tensor(float32, [1, 4]) [0, -1, -2, -3]");
  const rv::value out1 = vm.invoke("main", {rv::tensor::from<float>({-1, -2, -3, -4}, {1, 4})});
  CHECK(dims(out1) == std::vector<std::int64_t>{1, 4});
  CHECK(elements<float>(out1) == std::vector<float>{0, -1, -2, -3});

  tvm_recorded("relax_shape.rxe",
               "run main(x=float32[2,3] (wrong shape)) -> ERROR src/runtime/relax_vm/builtin.cc:141: Check failed: "
               "input_shape[i] == reg (3 vs. 4) : RuntimeError: ErrorContext(match_cast, struct_info=R.Tensor((n, 4), "
               "dtype=\"float32\"))  match_cast error,  shape[1] mismatch to specified constant.");
  const rv::value wrong_shape = rv::tensor::from<float>(std::vector<float>(6), {2, 3});
  const rv::result<rv::value> mismatch = vm.try_invoke("main", {&wrong_shape, 1});
  CHECK(mismatch.error().kind() == rv::error_kind::runtime);
  // TVM prints the ErrorContext string (which ends in a space), a space, then its message; relaxvm
  // writes one space between them and adds the values it compared ("(3 is not 4)") and the
  // instruction. The meaningful parts are TVM's words.
  const std::string shape_message = error_of(mismatch);
  CHECK(shape_message.rfind("ErrorContext(match_cast, struct_info=R.Tensor((n, 4), dtype=\"float32\")) ", 0) == 0);
  CHECK(contains(shape_message, "match_cast error,  shape[1] mismatch to specified constant. (3 is not 4)"));

  tvm_recorded("relax_shape.rxe",
               "run main(x=int64[2,4] (wrong dtype)) -> ERROR src/runtime/relax_vm/builtin.cc:247: Check failed: "
               "(DataType(ptr->dl_tensor.dtype) == dtype) is false: ValueError: ErrorContext(fn=main, loc=param[0], "
               "param=x, annotation=R.Tensor((n, 4), dtype=\"float32\"))  expect Tensor with dtype float32 but get int64");
  const rv::value wrong_dtype = rv::tensor::from<std::int64_t>(std::vector<std::int64_t>(8), {2, 4});
  const rv::result<rv::value> dtype_error = vm.try_invoke("main", {&wrong_dtype, 1});
  CHECK(dtype_error.error().kind() == rv::error_kind::value);
  const std::string dtype_message = error_of(dtype_error);
  CHECK(dtype_message.rfind("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n, 4), "
                            "dtype=\"float32\")) ", 0) == 0);
  CHECK(contains(dtype_message, "expect Tensor with dtype float32 but get int64"));

  tvm_recorded("relax_shape.rxe", "run shape(x=float32[3,4]) -> shape(3, 4)");
  const rv::value s = vm.invoke("shape", {rv::tensor::from<float>(iota, {3, 4})});
  CHECK(s.kind() == rv::value_kind::shape);
  CHECK(dims(s) == std::vector<std::int64_t>{3, 4});
}

// ---- writing -----------------------------------------------------------------------------------

TEST_CASE("each fixture read and written back gives the same bytes") {
  for (const char* name : {"relax_calls.rxe", "relax_float.rxe", "relax_shape.rxe"}) {
    CAPTURE(name);
    const bytes_t bytes = fixture(name);
    const rv::result<bytes_t> again = rv::tvm::save_relax(load(name));
    REQUIRE(again.ok());
    CHECK(*again == bytes);
  }
  // The harness filled TVM's function table by hand: its packed entries have num_args 0, where
  // TVM's builder writes -2. Both are kept as they are.
  const rv::executable calls = load("relax_calls.rxe");
  CHECK(calls.view().funcs[0].num_args == 0);
}

namespace {

/// Several functions over every kind of constant TVM's format holds: recursion, if/goto, closures,
/// %vm and %void, immediates of both signs, parameter names and none.
rv::executable everything() {
  rv::exec_builder b;
  {
    auto fn = b.function("fact", 1, {"n"});
    b.emit_call("test.lt_i64", {b.r(0), b.imm(2)}, b.r(1));
    b.emit_if(b.r(1), 3);
    b.emit_call("vm.builtin.copy", {b.imm(1)}, b.r(2));
    b.emit_goto(4);
    b.emit_call("test.sub_i64", {b.r(0), b.imm(1)}, b.r(3));
    b.emit_call("fact", {b.r(3)}, b.r(4));
    b.emit_call("test.mul_i64", {b.r(0), b.r(4)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("add_k", 2);
    b.emit_call("test.add_i64", {b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("main", 1, {"x"});
    b.emit_call("vm.builtin.make_closure", {b.f("add_k"), b.c(b.add_int(std::numeric_limits<std::int64_t>::min()))},
                b.r(1));
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(1), b.r(0)}, b.r(2));
    b.emit_call("vm.builtin.copy", {b.imm(-(std::int64_t{1} << 54))}, b.void_arg());
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("constants", 0);
    b.emit_call("vm.builtin.make_tuple",
                {b.c(b.add_tensor<float>({1.5f, -2.0f, 0.25f, 3.0f}, {2, 2})), b.c(b.add_tensor<std::int64_t>({7}, {})),
                 b.c(b.add_tensor(rv::dtype::uint8(), {0, 5}, {})), b.c(b.add_dtype(rv::dtype(kDLFloat, 16, 4))),
                 b.c(b.add_shape({2, 3, 4})), b.c(b.add_shape({})), b.c(b.add_string(std::string_view("a\0b\"", 4))),
                 b.c(b.add_string("")), b.c(b.add_int(100)), b.c(b.add_float(-0.0)),
                 b.c(b.add_float(std::numeric_limits<double>::quiet_NaN())), b.c(b.add_float(3.375))},
                b.r(0));
    b.emit_ret(b.r(0));
  }
  return b.get();
}

}  // namespace

TEST_CASE("builder executables written in TVM's format read back equal") {
  const rv::executable exe = everything();
  const rv::result<bytes_t> tvm_bytes = rv::tvm::save_relax(exe);
  REQUIRE(tvm_bytes.ok());
  const rv::result<rv::executable> back = rv::tvm::load_relax(*tvm_bytes);
  REQUIRE_MESSAGE(back.ok(), back.error().message());
  CHECK(back->save() == exe.save());  // relaxvm's own bytes: the same functions, constants and code
  CHECK(*back == exe);
  CHECK(back->as_text() == exe.as_text());
  CHECK(*rv::tvm::save_relax(*back) == *tvm_bytes);
  // Packed entries are written as TVM's builder writes them, with num_args -2, and read back so.
  // funcs[1] is test.lt_i64, declared by fact's first call.
  CHECK(exe.view().funcs[1].num_args == rv::unknown_num_args);
  CHECK(back->view().funcs[1].num_args == rv::unknown_num_args);

  // And it runs: fact(5) = 120; main(5) = add_k(INT64_MIN, 5).
  rv::registry reg = fixture_registry();
  rv::virtual_machine vm(*back, reg);
  CHECK(vm.invoke("fact", {std::int64_t{5}}).as<std::int64_t>() == 120);
  CHECK(vm.invoke("main", {std::int64_t{5}}).as<std::int64_t>() == std::numeric_limits<std::int64_t>::min() + 5);
  CHECK(vm.invoke("constants", {}).as<rv::tuple>().size() == 12);

  // An executable with no functions: the smallest file.
  const rv::result<bytes_t> empty = rv::tvm::save_relax(rv::executable());
  REQUIRE(empty.ok());
  tvm_writer w;
  w.header().u64(0).u64(0).u64(0).u64(0);
  CHECK(*empty == w.wrap());
  CHECK(rv::tvm::load_relax(*empty).ok());
}

TEST_CASE("what TVM's format cannot hold is an error on save, naming the constant") {
  const auto save_error = [](auto add) {
    rv::exec_builder b;
    {
      auto fn = b.function("main", 0);
      b.add_int(1);
      const std::int64_t c = add(b);
      b.emit_call("vm.builtin.copy", {b.c(c)}, b.r(0));
      b.emit_ret(b.r(0));
    }
    const rv::result<bytes_t> r = rv::tvm::save_relax(b.get());
    REQUIRE(!r.ok());
    CHECK(r.error().kind() == rv::error_kind::value);
    return std::string(r.error().message());
  };
  // TVM: "Constant pool can only contain NDArray, DLDataType, and Integers but got bool".
  tvm_recorded("Bool constant (no file)",
               "SaveToBinary with a bool constant: ERROR src/runtime/relax_vm/executable.cc:297: Constant pool can "
               "only contain NDArray, DLDataType, and Integers but got bool");
  CHECK(save_error([](rv::exec_builder& b) { return b.add_bool(true); }) ==
        "save_relax: constant 1 (bool) has no TVM counterpart: TVM v0.19.0's Relax format holds NDArray, "
        "DLDataType, ShapeTuple, String, int and float constants");
  CHECK(contains(save_error([](rv::exec_builder& b) { return b.add_device(rv::device(kDLCUDA, 1)); }),
                 "save_relax: constant 1 (device) has no TVM counterpart"));
  const std::vector<std::int64_t> shape{1};
  const std::vector<std::uint8_t> data(16);
  CHECK(contains(save_error([&](rv::exec_builder& b) {
                   return b.add_tensor(rv::dtype(kDLFloat, 32, 4), std::span<const std::int64_t>(shape),
                                       std::span<const std::uint8_t>(data));
                 }),
                 "save_relax: constant 1 (tensor of float32x4) cannot be written: TVM's NDArray byte size leaves "
                 "lanes out"));
}

// ---- reading what TVM refuses, or relaxvm cannot run -------------------------------------------

TEST_CASE("a VM-TIR function is refused by name") {
  tvm_writer w;
  w.header().u64(2).func(0, "vm.builtin.copy", 0, 0, -2, 0).func(2, "fused_add_kernel", 0, 0, 3, 0);
  w.u64(0).u64(0).u64(0);
  CHECK(load_error(w.wrap()) ==
        "load_relax: the function table section, reading function 1 (offset 103), is 'fused_add_kernel', a VM-TIR "
        "function (kind 2): its body is TIR compiled by TVM, which relaxvm does not run; relaxvm reads packed (0) "
        "and VM (1) functions");
  tvm_writer k;
  k.header().u64(1).func(7, "f", 0, 0, -2, 0).u64(0).u64(0).u64(0);
  expect_error(k.wrap(), "reading function 0 (offset 36), has kind 7; TVM's kinds are 0 (packed), "
                                       "1 (VM) and 2 (VM-TIR)");
}

TEST_CASE("the container: length, magic, version, trailing bytes") {
  const bytes_t good = fixture("relax_float.rxe");
  CHECK(load_error(bytes_t(good.begin(), good.begin() + 5)) ==
        "load_relax: 5 bytes are too few for a TVM Relax executable, which starts with an 8-byte length");
  bytes_t longer = good;
  longer.push_back(std::byte{0});
  CHECK(load_error(longer) == "load_relax: 1 bytes at offset 556 follow the executable that the length at offset 0 "
                              "delimits");
  CHECK(load_error(bytes_t(good.begin(), good.end() - 1)) ==
        "load_relax: the length at offset 0 says 548 bytes follow, but the file has 547 (it is cut off)");
  bytes_t magic = good;
  magic[8] ^= std::byte{0x01};
  CHECK(load_error(magic) == "load_relax: the header section has magic 0xD225DE2F4214151C at offset 8, not TVM's VM "
                             "bytecode magic 0xD225DE2F4214151D: this is not a TVM Relax executable");
  tvm_writer v;
  v.header("0.13").u64(0).u64(0).u64(0).u64(0);
  CHECK(load_error(v.wrap()) == "load_relax: the header section has format version '0.13' at offset 16; this reader "
                                "reads TVM v0.19.0's Relax format '0.14'");
  tvm_writer relay;  // a Relay executable has no outer length: it starts with the magic
  relay.header("0.19.0");
  expect_error(relay.b, "it is a Relay VM executable (Executable::Save), not a Relax one");
  // Bytes after the code, inside the length: the code section says where they are.
  tvm_writer trailing;
  trailing.header().u64(0).u64(0).u64(0).u64(0).u8(9);
  CHECK(load_error(trailing.wrap()) == "load_relax: the code section has 1 bytes at offset 60 after its last entry");
}

TEST_CASE("hostile counts and lengths are errors before any large allocation") {
  constexpr std::uint64_t huge = std::uint64_t{1} << 60;
  tvm_writer funcs;
  funcs.header().u64(huge);
  expect_error(funcs.wrap(), "the function table section claims 1152921504606846976 entries of at least "
                                           "52 bytes, but only 0 bytes remain");
  tvm_writer consts;
  consts.header().u64(0).u64(huge).u64(0);
  expect_error(consts.wrap(), "the constant pool section claims 1152921504606846976 entries");
  tvm_writer name;
  name.header().u64(1).i32(1).u64(huge).b.resize(28 + 8 + 52);
  expect_error(name.wrap(), "reading function 0 (offset 36), is cut off: it needs 1152921504606846976 "
                                          "bytes at offset 48");
  expect_error(one_constant([&](tvm_writer& w) { w.i32(2).u64(huge); }), "reading constant 0 (offset 167), claims 1152921504606846976 entries of at least 8 bytes");
  expect_error(one_constant([&](tvm_writer& w) { w.i32(3).u64(huge); }), "reading constant 0 (offset 167), is cut off: it needs 1152921504606846976 bytes at offset 179");
  tvm_writer code;
  code.header().u64(0).u64(0).u64(huge);
  expect_error(code.wrap(), "the code section, reading the instruction offsets, claims 1152921504606846976");

  // No byte string makes loading take memory out of proportion to its size: files of 1 MiB of the
  // smallest constant (12 bytes, a DLDataType) and of small function-table entries (packed
  // functions with 5-byte names, 57 bytes) stay within docs/security.md's bound for relaxvm's own
  // format, 4x the file + 2 MiB.
  const auto peak_of = [](const bytes_t& file) {
    const long before = relaxvm_test::heap_live_bytes();
    relaxvm_test::reset_heap_peak();
    {
      const rv::result<rv::executable> exe = rv::tvm::load_relax(file);
      CHECK(exe.ok());
    }
    return relaxvm_test::heap_peak_bytes() - before;
  };
  constexpr std::size_t mib = std::size_t{1} << 20;
  tvm_writer constants;
  constants.header().u64(0).u64(mib / 12);
  for (std::size_t i = 0; i < mib / 12; ++i) constants.i32(1).dtype(kDLFloat, 32);
  constants.u64(0).u64(0);
  tvm_writer functions;
  functions.header().u64(mib / 57);
  for (std::size_t i = 0; i < mib / 57; ++i) {
    std::string name = std::to_string(i);
    name.insert(0, 5 - name.size(), '0');  // 5 digits: every entry the same size, every name distinct
    functions.func(0, name, 0, 0, -2, 0);
  }
  functions.u64(0).u64(0).u64(0);
  for (const bytes_t& file : {constants.wrap(), functions.wrap()}) {
    const long peak = peak_of(file);
    CAPTURE(file.size());
    CAPTURE(peak);
    CHECK(peak <= 4 * static_cast<long>(file.size()) + (2L << 20));
  }
}

TEST_CASE("malformed constants") {
  const auto ndarray = [](std::uint64_t magic, std::int32_t device, std::int32_t ndim, std::uint16_t lanes,
                          std::vector<std::int64_t> shape, std::int64_t nbytes, std::size_t data) {
    return one_constant([=](tvm_writer& w) {
      w.i32(0).u64(magic).u64(0).i32(device).i32(0).i32(ndim).dtype(kDLFloat, 32, lanes);
      for (std::int64_t d : shape) w.i64(d);
      w.i64(nbytes);
      for (std::size_t i = 0; i < data; ++i) w.u8(0);
    });
  };
  constexpr std::uint64_t m = rv::tvm::ndarray_magic;
  CHECK(load_error(ndarray(m, 1, 1, 1, {2}, 8, 8)) == "<loaded>");
  expect_error(ndarray(m, 1, 1, 1, {2}, 12, 12), "reading constant 0 (offset 167), says at offset 211 that its data is 12 bytes, but 2 elements of "
                 "float32 are 8 bytes");
  expect_error(ndarray(m, 1, 1, 1, {-2}, 8, 8), "has dimension 0 = -2 at offset 203; dimensions are 0 or more");
  expect_error(ndarray(m, 1, -1, 1, {}, 4, 4), "has ndim -1 at offset 195; it must be 0 or more");
  expect_error(ndarray(m, 1, std::numeric_limits<std::int32_t>::max(), 1, {}, 4, 4), "is cut off");
  expect_error(ndarray(m, 1, 2, 1, {std::int64_t{1} << 40, std::int64_t{1} << 40}, 0, 0), "has dimensions whose product overflows int64 (dimension 1 at offset 211)");
  expect_error(ndarray(m, 2, 1, 1, {2}, 8, 8), "is an NDArray on device type 2 id 0 (offset 187); TVM saves every NDArray as cpu 0");
  expect_error(ndarray(m, 1, 1, 4, {2}, 8, 8), "has dtype float32x4 (offset 199): TVM's NDArray byte size leaves lanes out");
  expect_error(ndarray(m ^ 1, 1, 1, 1, {2}, 8, 8), "starts with 0xDD5E40F096B4A13E at offset 171 where an NDArray has its magic 0xDD5E40F096B4A13F");
  expect_error(cut_inside(ndarray(m, 1, 1, 1, {2}, 8, 8), 226), "is cut off: it needs 8 bytes at offset 219");
  expect_error(one_constant([](tvm_writer& w) { w.i32(0).u64(m).u64(3); }), "has 3 in the NDArray's reserved field at offset 179; TVM writes 0");
  expect_error(one_constant([](tvm_writer& w) { w.i32(6).i64(0); }), "reading constant 0 (offset 167), has tag 6; TVM v0.19.0's tags are 0 (NDArray)");
  // What the reader takes, the verifier then checks, as for relaxvm's own files.
  expect_error(one_constant([](tvm_writer& w) { w.i32(2).u64(2).i64(3).i64(-1); }), "load_relax: invalid executable: constant 0 (shape): dimension 1 is -1; dimensions are 0 or more");
  expect_error(one_constant([](tvm_writer& w) { w.i32(0).u64(m).u64(0).i32(1).i32(0).i32(0).dtype(kDLFloat, 0).i64(0); }), "load_relax: invalid executable: constant 0 (tensor): dtype");
}

TEST_CASE("every truncation and byte flip of each fixture is an error or a verified executable") {
  for (const char* name : {"relax_calls.rxe", "relax_float.rxe", "relax_shape.rxe"}) {
    CAPTURE(name);
    const bytes_t good = fixture(name);
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
      CAPTURE(cut);
      const bytes_t prefix(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
      CHECK(load_error(prefix) != "<loaded>");
      if (cut >= 8) CHECK(load_error(cut_inside(good, cut)) != "<loaded>");
    }
    int loaded = 0, rejected = 0;
    for (std::size_t i = 0; i < good.size(); ++i) {
      for (unsigned char x : {0x01, 0xFF}) {
        bytes_t b = good;
        b[i] ^= std::byte{x};
        const rv::result<rv::executable> r = rv::tvm::load_relax(b);
        if (!r.ok()) {
          ++rejected;
          CHECK(std::string_view(r.error().message()).rfind("load_relax: ", 0) == 0);
          continue;
        }
        ++loaded;
        // Whatever loads is kept byte for byte: it is written back as it was.
        const rv::result<bytes_t> again = rv::tvm::save_relax(*r);
        CAPTURE(i);
        REQUIRE(again.ok());
        CHECK(*again == b);
      }
    }
    CHECK(loaded > 0);
    CHECK(rejected > loaded);
  }
}
