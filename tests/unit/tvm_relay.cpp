// SPDX-License-Identifier: Apache-2.0
// relaxvm/tvm/relay.hpp: TVM v0.19.0's Relay VM executables (Executable::Save), translated at load
// time into relaxvm bytecode. The fixtures (written by TVM's own serializer) load and run to the
// results and errors TVM recorded (MANIFEST.md); hand-made files check each hostile field; every
// truncation and byte flip is an error or a verified executable.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <iterator>
#include <relaxvm/graph/params.hpp>
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
using V = std::vector<rv::value>;

namespace {

bool contains(std::string_view s, std::string_view part) { return relaxvm_test::text_contains(s, part); }

/// The expectations below are TVM's: each names the line of MANIFEST.md it comes from.
void tvm_recorded(const std::string& line) {
  static const std::string manifest = read_text(std::string(RELAXVM_TVM_FIXTURES) + "/MANIFEST.md");
  CHECK_MESSAGE(contains(manifest, line + "\n"), "MANIFEST.md has no line '", line, "'");
}

/// The packed functions MANIFEST.md lists for the Relay fixtures: float32, destination-passing.
rv::registry fixture_registry() {
  rv::registry reg;
  reg.def("fx.add_f32", [](const rv::tensor& a, const rv::tensor& b, const rv::tensor& out) {
    for (std::int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = a.data<const float>()[i] + b.data<const float>()[i];
  });
  reg.def("fx.scale2_f32", [](const rv::tensor& x, const rv::tensor& out) {
    for (std::int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = 2 * x.data<const float>()[i];
  });
  return reg;
}

rv::executable load(const std::string& name) {
  rv::result<rv::executable> exe = rv::tvm::load_relay(fixture(name));
  REQUIRE_MESSAGE(exe.ok(), exe.error().message());
  return *exe;
}
std::string load_error(const bytes_t& b) {
  const rv::result<rv::executable> r = rv::tvm::load_relay(b);
  return r.ok() ? std::string("<loaded>") : std::string(r.error().message());
}
void expect_error(const bytes_t& b, std::string_view part) {
  const std::string e = load_error(b);
  CHECK_MESSAGE(contains(e, part), e);
}

rv::tensor f32(std::vector<float> v, rv::shape s) { return rv::tensor::from<float>(v, s); }
template <class T>
std::vector<T> elements(const rv::value& v) {
  const rv::tensor t = v.as<rv::tensor>();
  return std::vector<T>(t.data<const T>(), t.data<const T>() + t.numel());
}
std::vector<std::int64_t> dims(const rv::value& v) {
  const auto d = v.as<rv::tensor>().shape().dims();
  return std::vector<std::int64_t>(d.begin(), d.end());
}

/// A Relay executable in the test's own words (independent of relay.hpp): one CPU device, the
/// given globals, primitives and functions, each instruction hashed as TVM hashes it.
struct relay_writer {
  struct function {
    std::string name;
    std::int64_t registers;
    std::vector<std::string> params;
    std::vector<std::vector<std::int64_t>> code;  // opcode, fields...
  };
  std::string version = "0.19.0";
  std::vector<function> funcs;
  std::vector<std::string> primitives;
  int constants = 0;  // float32 [1] tensors
  std::vector<std::string> late;  // late-bound constant names
  bool bad_hash = false;

  bytes_t bytes() const {
    bytes_t b;
    const auto le = [&](std::uint64_t v, int n) {
      for (int i = 0; i < n; ++i) b.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
    };
    const auto str = [&](std::string_view s) {
      le(s.size(), 8);
      for (char c : s) b.push_back(static_cast<std::byte>(c));
    };
    le(0xD225DE2F4214151Dull, 8);
    str(version);
    le(1, 8), le(1, 4), le(0, 4), str("global");  // devices
    le(0, 4);                                     // host device index
    le(funcs.size(), 8);
    for (const function& f : funcs) str(f.name);
    le(static_cast<std::uint64_t>(constants) + late.size(), 8);
    for (int i = 0; i < constants; ++i) {
      le(0, 4), le(0xDD5E40F096B4A13Full, 8), le(0, 8), le(1, 4), le(0, 4), le(1, 4);
      le(2, 1), le(32, 1), le(1, 2), le(1, 8), le(4, 8), le(0x3F800000u, 4);  // [1.0f]
    }
    for (const std::string& n : late) le(1, 4), str(n);
    le(static_cast<std::uint64_t>(constants) + late.size(), 8);
    for (std::size_t i = 0; i < static_cast<std::size_t>(constants) + late.size(); ++i) le(0, 8);
    le(primitives.size(), 8);
    for (const std::string& p : primitives) str(p);
    le(0, 8);  // op attributes
    le(funcs.size(), 8);
    for (const function& f : funcs) {
      le(3, 8), str(f.name), str(std::to_string(f.registers)), str(std::to_string(f.code.size()));
      le(f.params.size(), 8);
      for (const std::string& p : f.params) str(p);
      le(f.params.size(), 8);
      for (std::size_t i = 0; i < f.params.size(); ++i) le(0, 8);
      for (const std::vector<std::int64_t>& c : f.code) {
        std::uint64_t key = static_cast<std::uint64_t>(c[0]);
        for (std::size_t i = 1; i < c.size(); ++i)
          key ^= static_cast<std::uint64_t>(c[i]) + 0x9e3779b9u + (key << 6) + (key >> 2);
        le(c.size() + 1, 8), le(key + (bad_hash ? 1 : 0), 8);
        for (std::int64_t w : c) le(static_cast<std::uint64_t>(w), 8);
      }
    }
    return b;
  }
};

/// main(x) with `code`, registers r0..r3, one constant, primitive "fx.scale2_f32".
bytes_t one_function(std::vector<std::vector<std::int64_t>> code) {
  relay_writer w;
  w.constants = 1;
  w.primitives = {"fx.scale2_f32"};
  w.funcs.push_back({"main", 4, {"x"}, std::move(code)});
  return w.bytes();
}

}  // namespace

TEST_CASE("relay_adt.ro: lists, a closure and Fatal run to TVM's results") {
  const rv::executable exe = load("relay_adt.ro");
  rv::registry reg = fixture_registry();
  rv::virtual_machine vm(exe, reg);
  const rv::value list = vm.invoke("main_list", {f32({1, 2}, {2}), f32({10, 20}, {2}), f32({100, 200}, {2})});
  tvm_recorded("run main_list(a=[1,2], b=[10,20], c=[100,200]) -> tensor(float32, [2]) [111, 222]");
  CHECK(dims(list) == std::vector<std::int64_t>{2});
  CHECK(elements<float>(list) == std::vector<float>{111, 222});

  tvm_recorded("run main_closure(x=[1,2], y=[10,20]) -> tensor(float32, [2]) [11, 22]");
  CHECK(elements<float>(vm.invoke("main_closure", {f32({1, 2}, {2}), f32({10, 20}, {2})})) == std::vector<float>{11, 22});

  const auto flag = [](std::int64_t v) { return rv::tensor::from<std::int64_t>(std::vector<std::int64_t>{v}, rv::shape{1}); };
  tvm_recorded("run guarded(flag=int64[1] [0]) -> tensor(int64, [1]) [0]");
  const rv::value g0 = vm.invoke("guarded", {flag(0)});
  CHECK(dims(g0) == std::vector<std::int64_t>{1});
  CHECK(elements<std::int64_t>(g0) == std::vector<std::int64_t>{0});
  tvm_recorded("run guarded(flag=int64[1] [1]) -> ERROR VM encountered fatal error");
  const rv::result<rv::value> g1 = vm.try_invoke("guarded", V{flag(1)});
  REQUIRE_FALSE(g1.ok());
  CHECK(contains(g1.error().message(), "VM encountered fatal error"));
  // The VM is usable after the error, and recursion over a longer list works.
  CHECK(elements<float>(vm.invoke("main_list", {f32({1, 1}, {2}), f32({2, 2}, {2}), f32({3, 3}, {2})})) ==
        std::vector<float>{6, 6});

  // Each Relay function keeps its name and parameters; as_text shows the bytecode it became.
  const std::string text = exe.as_text();
  for (const char* part : {"@sum:", "@main_list:", "@adder:", "@main_closure:", "@guarded:", "vm.builtin.get_tag",
                           "vm.builtin.scalar_eq", "vm.builtin.make_adt", "vm.builtin.make_closure",
                           "vm.builtin.invoke_closure", "vm.builtin.fatal", "vm.builtin.alloc_storage",
                           "vm.builtin.null_value", "vm.builtin.invoke_packed in: %vm, f[fx.add_f32], i1, "})
    CHECK_MESSAGE(contains(text, part), part);
  CHECK(vm.try_invoke("main_list", V{f32({1}, {1})}).ok() == false);  // 3 arguments expected

  // Wrong tags and non-ADTs (TVM's VM fails on both): sum reads the tag, then fields 0 and 1 of
  // anything that is not Nil (tag 0).
  const rv::result<rv::value> not_adt = vm.try_invoke("sum", V{f32({1, 2}, {2})});
  REQUIRE_FALSE(not_adt.ok());
  CHECK(contains(not_adt.error().message(), "vm.builtin.get_tag"));
  const rv::result<rv::value> short_cons = vm.try_invoke("sum", V{rv::value(rv::tuple::adt(7, V{f32({1, 2}, {2})}))});
  REQUIRE_FALSE(short_cons.ok());
  CHECK(contains(short_cons.error().message(), "vm.builtin.get_field"));
  CHECK(elements<float>(vm.invoke("sum", {rv::value(rv::tuple::adt(0, {}))})) == std::vector<float>{0, 0});  // Nil
}

TEST_CASE("a Relay closure passes its captured values first") {
  // pair(x, y) = ADT(0, x, y); main(x, y) = (closure of pair capturing x)(y) = pair(x, y).
  relay_writer w;
  w.funcs.push_back({"pair", 3, {"x", "y"}, {{7, 0, 2, 2, 0, 1}, {1, 2}}});
  w.funcs.push_back({"main", 4, {"x", "y"}, {{8, 0, 1, 2, 0}, {3, 2, 1, 3, 1}, {1, 3}}});
  const rv::result<rv::executable> exe = rv::tvm::load_relay(w.bytes());
  REQUIRE_MESSAGE(exe.ok(), exe.error().message());
  rv::registry reg;
  rv::virtual_machine vm(*exe, reg);
  const rv::tuple t = vm.invoke("main", {1, 2}).as<rv::tuple>();
  CHECK(t[0].as<std::int64_t>() == 1);  // the captured x
  CHECK(t[1].as<std::int64_t>() == 2);
}

TEST_CASE("relay_tensor.ro: constants on two CPU devices, reshape, device copy, shape_of") {
  const auto check = [](const rv::executable& exe) {
    rv::registry reg = fixture_registry();
    rv::virtual_machine vm(exe, reg);
    const rv::value x = f32({0, 1, 2, 3, 4, 5}, {2, 3});
    tvm_recorded("run main(x=float32[2,3] 0..5) -> adt(tag=0)(tensor(float32, [3, 2]) [0.5, 2.5, 4.5, 6.5, 8.5, 10.5], "
                 "tensor(int64, [2]) [3, 2], tensor(float32, [3, 2]) [0, 1, 2, 3, 4, 5])");
    const rv::tuple r = vm.invoke("main", {x}).as<rv::tuple>();
    REQUIRE(r.size() == 3);
    CHECK(r.tag() == 0);
    CHECK(dims(r[0]) == std::vector<std::int64_t>{3, 2});
    CHECK(elements<float>(r[0]) == std::vector<float>{0.5, 2.5, 4.5, 6.5, 8.5, 10.5});
    CHECK(elements<std::int64_t>(r[1]) == std::vector<std::int64_t>{3, 2});
    CHECK(dims(r[2]) == std::vector<std::int64_t>{3, 2});
    CHECK(elements<float>(r[2]) == std::vector<float>{0, 1, 2, 3, 4, 5});
    CHECK(elements<float>(vm.invoke("main", {x}).as<rv::tuple>()[0]) == std::vector<float>{0.5, 2.5, 4.5, 6.5, 8.5, 10.5});
    const std::string text = exe.as_text();
    for (const char* part : {"vm.builtin.reshape", "vm.builtin.to_device", "vm.builtin.shape_to_tensor"})
      CHECK_MESSAGE(contains(text, part), part);
  };
  check(load("relay_tensor.ro"));

  SUBCASE("late-bound: relay_tensor_lb.ro with relay_tensor_lb.consts") {
    const bytes_t ro = fixture("relay_tensor_lb.ro");
    const rv::result<rv::executable> exe = rv::tvm::load_relay(ro, fixture("relay_tensor_lb.consts"));
    REQUIRE_MESSAGE(exe.ok(), exe.error().message());
    check(*exe);
    expect_error(ro, "constant 1 is late-bound as 'const_1', and no params file was given");
    // A params file without const_1, and a broken one, are errors too.
    std::vector<rv::graph::named_tensor> other{{"const_2", f32({1}, {1})}};
    const rv::result<bytes_t> params = rv::graph::save_params(other);
    REQUIRE(params.ok());
    const rv::result<rv::executable> missing = rv::tvm::load_relay(ro, *params);
    REQUIRE_FALSE(missing.ok());
    CHECK(contains(missing.error().message(), "'const_1', and the params file given does not hold it"));
    const bytes_t cut(params->begin(), params->begin() + 10);
    const rv::result<rv::executable> broken = rv::tvm::load_relay(ro, cut);
    REQUIRE_FALSE(broken.ok());
    CHECK(contains(broken.error().message(), "load_relay: the late-bound constants: "));
  }
}

TEST_CASE("relay_storage_shape.ro: AllocStorage with a static shape ignores field 0, but not its hash") {
  const bytes_t good = fixture("relay_storage_shape.ro");
  const rv::executable exe = load("relay_storage_shape.ro");
  rv::registry reg = fixture_registry();
  rv::virtual_machine vm(exe, reg);
  tvm_recorded("run alloc_static(x=float32[2,2] [1,2,3,4]) -> tensor(float32, [2, 2]) [2, 4, 6, 8]");
  const rv::value r = vm.invoke("alloc_static", {f32({1, 2, 3, 4}, {2, 2})});
  CHECK(dims(r) == std::vector<std::int64_t>{2, 2});
  CHECK(elements<float>(r) == std::vector<float>{2, 4, 6, 8});
  // Field 0 (a heap address, different in every file TVM writes) follows the AllocStorage's
  // opcode 16 and precedes its alignment 64: changing it breaks the hash as written.
  const auto word = [&](std::size_t i) {
    std::uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= std::to_integer<std::uint64_t>(good[i + static_cast<std::size_t>(k)]) << (8 * k);
    return v;
  };
  std::size_t at = 0;
  for (std::size_t i = 0; i + 32 <= good.size(); ++i)
    if (word(i) == 16 && word(i + 16) == 64 && word(i + 24) == 2) at = i + 8;
  REQUIRE(at > 0);
  bytes_t b = good;
  b[at] ^= std::byte{1};
  expect_error(b, "(AllocStorage) has hash");
}

TEST_CASE("the header: magic, version, devices") {
  bytes_t ro = fixture("relay_adt.ro");
  bytes_t v = ro;
  v[8 + 8 + 5] = static_cast<std::byte>('1');  // "0.19.1"
  expect_error(v, "has TVM version '0.19.1' at offset 8; this reader reads TVM v0.19.0's Relay executables ('0.19.0')");
  expect_error(fixture("relax_calls.rxe"), "not TVM's VM bytecode magic");
  relay_writer w;
  w.version = "0.19";
  w.funcs.push_back({"main", 1, {"x"}, {{1, 0}}});
  expect_error(w.bytes(), "has TVM version '0.19'");
  w.version = "0.19.0";
  CHECK(load_error(w.bytes()) == "<loaded>");
  w.bad_hash = true;
  expect_error(w.bytes(), "load_relay: the code section, reading function 'main' instruction 0 (offset ");
  expect_error(w.bytes(), "(Ret) has hash");
  bytes_t longer = fixture("relay_adt.ro");
  longer.push_back(std::byte{0});
  expect_error(longer, "bytes at offset 2540 after its last entry");
}

TEST_CASE("out-of-range registers, functions, constants, primitives and jumps are errors naming them") {
  CHECK(load_error(one_function({{11, 0, 0, 1}, {4, 0, 2, 1, 0, 1}, {1, 1}})) == "<loaded>");
  expect_error(one_function({{1, 4}}), "function 'main' instruction 0 (Ret, offset ");
  expect_error(one_function({{1, 4}}), "the result register 4 is out of the register file (4)");
  expect_error(one_function({{0, -1, 1}, {1, 1}}), "(Move, offset");
  expect_error(one_function({{11, 1, 0, 1}, {1, 1}}), "constant index 1 is out of range (1)");
  expect_error(one_function({{11, 0, 1, 1}, {1, 1}}), "virtual device index 1 is out of range (1)");
  expect_error(one_function({{4, 1, 2, 1, 0, 1}, {1, 1}}), "primitive index 1 is out of range (1)");
  expect_error(one_function({{4, 0, 2, 3, 0, 1}, {1, 1}}), "output count 3 is not within its arity 2");
  expect_error(one_function({{2, 5, 1, 1, 0}, {1, 1}}), "function index 5 is out of range (1)");
  expect_error(one_function({{2, 0, 0, 1}, {1, 1}}), "calls 'main' with 0 arguments; it takes 1");
  expect_error(one_function({{8, 0, 2, 1, 0, 0}, {1, 1}}), "captures 2 values for 'main', which has 1 parameters");
  expect_error(one_function({{12, 5}, {1, 0}}), "(Goto, offset");
  expect_error(one_function({{12, 5}, {1, 0}}), "offset 5 leaves the function");
  expect_error(one_function({{12, 2}, {1, 0}}), "jumps to instruction 2, outside the function's 2 instructions");
  expect_error(one_function({{10, 0, 0, 1, -1}, {1, 0}}), "jumps to instruction -1");
  expect_error(one_function({{7, 1LL << 40, 0, 1}, {1, 1}}), "constructor tag 1099511627776 does not fit int32");
  expect_error(one_function({{9, 0, -1, 1}, {1, 1}}), "field index -1 is out of range");
  expect_error(one_function({{16, 0, 64, 2, 0, 1, 0, 0, 1}, {1, 1}}), "dtype (code 2, bits 0, lanes 1) is not a tensor element type");
  expect_error(one_function({{16, 0, 3, 2, 32, 1, 0, 0, 1}, {1, 1}}), "alignment 3 is not a power of two");
  expect_error(one_function({{16, 0, 64, 2, 32, 1, 0, 1, 1, -2}, {1, 1}}), "the shape has dimension -2");
  expect_error(one_function({{21}, {1, 0}}), "has opcode 21; TVM v0.19.0's are 0 to 20");
  expect_error(one_function({{1, 0, 0}}), "(Ret) has 2 fields; it has 1");
  expect_error(one_function({{7, 0, 3, 1, 0}, {1, 1}}), "(AllocADT) says its field 1 counts 3 trailing fields, but it has 1");
  expect_error(one_function({{5, 0, 0, 2, 32, 1}}), "(AllocTensor) has 5 fields; it needs 7 at least");
  // Falling off the end is the verifier's to refuse.
  expect_error(one_function({{0, 0, 1}}), "load_relay: ");
  // Fatal alone ends a function.
  const rv::result<rv::executable> fatal = rv::tvm::load_relay(one_function({{15}}));
  REQUIRE_MESSAGE(fatal.ok(), fatal.error().message());
  rv::registry reg = fixture_registry();
  rv::virtual_machine vm(*fatal, reg);
  const rv::result<rv::value> r = vm.try_invoke("main", V{1});
  REQUIRE_FALSE(r.ok());
  CHECK(contains(r.error().message(), "VM encountered fatal error"));
}

TEST_CASE("names: duplicates, unknown functions, builtin names, primitives named like functions") {
  relay_writer w;
  w.funcs.push_back({"main", 1, {"x"}, {{1, 0}}});
  w.funcs.push_back({"main", 1, {"x"}, {{1, 0}}});
  expect_error(w.bytes(), "global 1, repeats the name 'main'");
  w.funcs[1].name = "vm.builtin.copy";
  expect_error(w.bytes(), "is named 'vm.builtin.copy'");
  w.funcs.pop_back();
  w.primitives = {"main"};
  expect_error(w.bytes(), "primitive 0, has the name of a Relay function, 'main'");
  w.primitives = {"vm.builtin.fatal"};  // would run relaxvm's builtin instead of a kernel
  expect_error(w.bytes(), "primitive 0, is named 'vm.builtin.fatal'");
  w.primitives.clear();
  w.funcs[0].registers = 0;
  expect_error(w.bytes(), "has 1 parameters but 0 registers");
  w.funcs[0].registers = 1 << 21;
  expect_error(w.bytes(), "has register file size '2097152'; expected a decimal number up to");
}

TEST_CASE("AllocClosure makes no function per captured count, and a primitive may have any other name") {
  // The closure calls vm.builtin.call_captured_first, which passes the captured values first. A
  // function "f$closure1" per callee and captured count did this before: a primitive of that
  // name was then an error, and the functions grew with the callee's parameters (see below).
  relay_writer w;
  w.primitives = {"f$closure1"};
  w.funcs.push_back({"f", 3, {"a", "b"}, {{7, 0, 2, 2, 0, 1}, {1, 2}}});                // f(a, b) = ADT(a, b)
  w.funcs.push_back({"main", 4, {"x", "y"}, {{8, 0, 1, 2, 0}, {3, 2, 1, 3, 1}, {1, 3}}});  // f captures x
  const rv::result<rv::executable> exe = rv::tvm::load_relay(w.bytes());
  REQUIRE_MESSAGE(exe.ok(), exe.error().message());
  CHECK_FALSE(contains(exe->as_text(), "$closure"));
  CHECK(contains(exe->as_text(), "vm.builtin.make_closure in: f[vm.builtin.call_captured_first], %0, f[f], i1 "));
  rv::registry reg;
  rv::virtual_machine vm(*exe, reg);
  const rv::tuple t = vm.invoke("main", {rv::value(std::int64_t{1}), rv::value(std::int64_t{2})}).as<rv::tuple>();
  CHECK(t.size() == 2);
  CHECK(t[0].as<std::int64_t>() == 1);  // the captured value comes first, as in TVM
  CHECK(t[1].as<std::int64_t>() == 2);
}

TEST_CASE("InvokePacked passes a tuple argument's fields in its place, as TVM's VM does") {
  // main(x, y, out): t = ADT(0, x, y); fx.sum2(t, out) (arity 2: registers, not tensors); ret out.
  relay_writer w;
  w.primitives = {"fx.sum2"};
  w.funcs.push_back({"main", 4, {"x", "y", "out"}, {{7, 0, 2, 3, 0, 1}, {4, 0, 2, 1, 3, 2}, {1, 2}}});
  const rv::result<rv::executable> exe = rv::tvm::load_relay(w.bytes());
  REQUIRE_MESSAGE(exe.ok(), exe.error().message());
  int calls = 0;
  rv::registry reg;
  reg.def("fx.sum2", [&](const rv::tensor& a, const rv::tensor& b, const rv::tensor& out) {
    ++calls;
    for (std::int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = a.data<const float>()[i] + b.data<const float>()[i];
  });
  rv::virtual_machine vm(*exe, reg);
  CHECK(elements<float>(vm.invoke("main", {f32({1, 2}, {2}), f32({10, 20}, {2}), f32({0, 0}, {2})})) ==
        std::vector<float>{11, 22});
  CHECK(calls == 1);
  // The fields must be tensors (TVM's VM casts each to an NDArray).
  const rv::result<rv::value> ints = vm.try_invoke("main", V{std::int64_t{1}, std::int64_t{2}, f32({0}, {1})});
  REQUIRE_FALSE(ints.ok());
  CHECK(contains(ints.error().message(), "vm.builtin.invoke_packed: calling 'fx.sum2', argument 0 is a tuple whose field 0 is"));
  // One output with no elements: not called, as in TVM's VM.
  const rv::value empty = vm.invoke("main", {f32({}, {0}), f32({}, {0}), f32({}, {0})});
  CHECK(dims(empty) == std::vector<std::int64_t>{0});
  CHECK(calls == 1);
  // The VM is usable after the error.
  CHECK(elements<float>(vm.invoke("main", {f32({1}, {1}), f32({2}, {1}), f32({0}, {1})})) == std::vector<float>{3});
  CHECK(calls == 2);
}

TEST_CASE("GetTag gives an int32 tensor of shape [1], as TVM's VM does") {
  relay_writer w;
  w.funcs.push_back({"main", 2, {"x"}, {{13, 0, 1}, {1, 1}}});
  const rv::result<rv::executable> exe = rv::tvm::load_relay(w.bytes());
  REQUIRE_MESSAGE(exe.ok(), exe.error().message());
  rv::registry reg;
  rv::virtual_machine vm(*exe, reg);
  const rv::value tag = vm.invoke("main", {rv::value(rv::tuple::adt(7, {}))});
  REQUIRE(tag.kind() == rv::value_kind::tensor);
  CHECK(tag.as<rv::tensor>().dtype() == rv::dtype::int32());
  CHECK(dims(tag) == std::vector<std::int64_t>{1});
  CHECK(elements<std::int32_t>(tag) == std::vector<std::int32_t>{7});
  const rv::result<rv::value> not_adt = vm.try_invoke("main", V{std::int64_t{3}});
  REQUIRE_FALSE(not_adt.ok());
  CHECK(contains(not_adt.error().message(), "vm.builtin.get_tag_tensor"));
}

TEST_CASE("hostile counts are errors before any large allocation") {
  constexpr std::uint64_t huge = std::uint64_t{1} << 60;
  bytes_t b = fixture("relay_storage_shape.ro");
  // The virtual device count follows the magic and the version string.
  const std::size_t devices_at = 8 + 8 + 6;
  for (int k = 0; k < 8; ++k) b[devices_at + static_cast<std::size_t>(k)] = static_cast<std::byte>((huge >> (8 * k)) & 0xFF);
  expect_error(b, "load_relay: the header section claims 1152921504606846976 entries of at least 16 bytes");
}

/// The heap that loading `ro` (with `params`, when given) takes at its peak.
long load_peak(const bytes_t& ro, const bytes_t* params = nullptr) {
  const long before = relaxvm_test::heap_live_bytes();
  relaxvm_test::reset_heap_peak();
  {
    const rv::result<rv::executable> exe = params ? rv::tvm::load_relay(ro, *params) : rv::tvm::load_relay(ro);
    CHECK_MESSAGE(exe.ok(), exe.error().message());
  }
  return relaxvm_test::heap_peak_bytes() - before;
}

TEST_CASE("loading takes memory in proportion to the file") {
  // 1 MiB of the smallest instructions (Ret: count, hash, opcode, one field) in one function, and of
  // the smallest functions; both stay within docs/security.md's bound for relaxvm's own files
  // (4 x the size + 2 MiB).
  relay_writer rets;
  rets.funcs.push_back({"main", 1, {"x"}, std::vector<std::vector<std::int64_t>>((std::size_t{1} << 20) / 32, {1, 0})});
  relay_writer funcs;
  for (int i = 0; i < (1 << 20) / 96; ++i) funcs.funcs.push_back({"f" + std::to_string(i), 1, {"x"}, {{1, 0}}});
  // AllocClosure of a 4,000-parameter function capturing 1, 2, ..., 200 values (the attacker's
  // file had 20,000 parameters and counts up to 500: 1.4 MB took 218 MB, one function of 20,000
  // parameters made per count).
  relay_writer closures;
  closures.funcs.push_back({"f", 4000, std::vector<std::string>(4000, ""), {{1, 0}}});
  std::vector<std::vector<std::int64_t>> code;
  for (std::int64_t k = 1; k <= 200; ++k) {
    std::vector<std::int64_t> c{8, 0, k, 1};
    c.resize(static_cast<std::size_t>(4 + k), 0);
    code.push_back(std::move(c));
  }
  code.push_back({1, 1});
  closures.funcs.push_back({"main", 2, {"x"}, std::move(code)});
  for (const relay_writer* w : {&rets, &funcs, &closures}) {
    const bytes_t file = w->bytes();
    const long peak = load_peak(file);
    CAPTURE(file.size());
    CAPTURE(peak);
    CHECK(peak <= 4 * static_cast<long>(file.size()) + (2L << 20));
  }
}

TEST_CASE("late-bound constants: each parameter is added once, and found by name in constant time") {
  // 2,000 late-bound constants naming one 64 KiB parameter: a copy each was 128 MiB.
  std::vector<rv::graph::named_tensor> one{{"w", rv::tensor::from<float>(std::vector<float>(16384, 1.0f), rv::shape{16384})}};
  const bytes_t big = rv::graph::save_params(one).value();
  relay_writer same;
  same.late.assign(2000, "w");
  same.funcs.push_back({"main", 2, {"x"}, {{11, 1999, 0, 1}, {1, 1}}});
  const bytes_t ro = same.bytes();
  const long peak = load_peak(ro, &big);
  CAPTURE(ro.size());
  CAPTURE(big.size());
  CAPTURE(peak);
  CHECK(peak <= 4 * static_cast<long>(ro.size() + big.size()) + (2L << 20));

  // 50,000 constants and parameters: looking each name up in the whole params list took seconds
  // (N^2 / 2 comparisons). Counted against the work of reading the params file alone (processor
  // time, so a busy machine slows both): linear loading is a few times that, the scan hundreds.
  constexpr int n = 50000;
  std::vector<rv::graph::named_tensor> many;
  relay_writer named;
  for (int i = 0; i < n; ++i) {
    many.push_back({"p" + std::to_string(i), f32({1}, {1})});
    named.late.push_back("p" + std::to_string(i));
  }
  named.funcs.push_back({"main", 2, {"x"}, {{11, n - 1, 0, 1}, {1, 1}}});
  const bytes_t params = rv::graph::save_params(many).value();
  const bytes_t file = named.bytes();
  const auto cpu = [](auto&& f) {
    const std::clock_t start = std::clock();
    f();
    return static_cast<double>(std::clock() - start);
  };
  double reading = 1e300;
  for (int i = 0; i < 3; ++i) reading = std::min(reading, cpu([&] { REQUIRE(rv::graph::load_params(params).ok()); }));
  rv::result<rv::executable> exe = rv::executable();
  const double loading = cpu([&] { exe = rv::tvm::load_relay(file, params); });
  REQUIRE_MESSAGE(exe.ok(), exe.error().message());
  CAPTURE(reading);
  CAPTURE(loading);
  CHECK(loading < 40 * std::max(reading, 1000.0));  // 1 ms of processor time at least, for clock()'s grain
  rv::registry reg;
  rv::virtual_machine vm(*exe, reg);
  CHECK(elements<float>(vm.invoke("main", {1})) == std::vector<float>{1});
}

TEST_CASE("every truncation and byte flip of each fixture is an error or a verified executable") {
  const bytes_t consts = fixture("relay_tensor_lb.consts");
  for (const char* name : {"relay_adt.ro", "relay_tensor.ro", "relay_tensor_lb.ro", "relay_storage_shape.ro"}) {
    CAPTURE(name);
    const bytes_t good = fixture(name);
    const auto try_load = [&](const bytes_t& b) { return rv::tvm::load_relay(b, consts); };
    REQUIRE(try_load(good).ok());
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
      CAPTURE(cut);
      const rv::result<rv::executable> r = try_load(bytes_t(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut)));
      REQUIRE_FALSE(r.ok());
      CHECK(std::string_view(r.error().message()).rfind("load_relay: ", 0) == 0);
    }
    int loaded = 0, rejected = 0;
    for (std::size_t i = 0; i < good.size(); ++i) {
      for (unsigned char x : {0x01, 0x80, 0xFF}) {
        bytes_t b = good;
        b[i] ^= std::byte{x};
        const rv::result<rv::executable> r = try_load(b);
        if (r.ok()) {
          ++loaded;
        } else {
          ++rejected;
          CHECK(std::string_view(r.error().message()).rfind("load_relay: ", 0) == 0);
        }
      }
    }
    CHECK(loaded > 0);
    CHECK(rejected > loaded);
  }
}
