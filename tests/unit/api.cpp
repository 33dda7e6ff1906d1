// SPDX-License-Identifier: Apache-2.0
// The public API of issues 2 and 3, spelled exactly as the contracts give it.
#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;

namespace {

// The contract, verbatim. It only has to compile: its jump offsets run past the end of "main",
// which the verifier rejects (see the run below for a program that verifies). Clang warns about its
// bare `s == rv::shape{32, 16};`, a comparison whose result the snippet discards.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-comparison"
#endif
[[maybe_unused]] void contract() {
  rv::tensor t = rv::tensor::from<float>({1, 2, 3, 4}, {2, 2});   // host tensor, copies the data
  rv::tensor e = rv::tensor::empty({32, 16}, rv::dtype::float32()); // also dtype::int64(), ...
  t.data<float>(); t.shape();  /* rv::shape */ t.ndim(); t.dtype(); t.device();
  DLManagedTensor* m = t.to_dlpack(); rv::tensor u = rv::tensor::from_dlpack(m);
  rv::shape s{32, 16};  s.size(); s[0]; s == rv::shape{32, 16};
  rv::value v = t;  v.is<rv::tensor>(); v.as<rv::tensor>(); rv::value(int64_t{3}).as<int64_t>();
  rv::value(2.5); rv::value(true); rv::value(std::string("s")).as<std::string>(); rv::value(rv::shape{2});
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2);                    // scope ends the function; optional 3rd arg: param names
    b.emit_call("test.add", {b.r(0), b.imm(10)}, b.r(2));
    b.emit_call("vm.builtin.print", {b.r(2)});          // no destination = void
    b.emit_if(b.r(1), 3);  b.emit_goto(2);
    b.emit_ret(b.r(2));
  }
  b.c(b.add_constant(rv::value(t)));  b.f("main");  b.vm_state();
  b.emit_call("main", {b.r(0), b.r(1)}, b.r(3));         // a name that is a VM function calls it (recursion)
  rv::executable exe = b.get();                          // throws rv::error when verification fails
  exe.as_text(); exe.stats(); exe.as_cpp();
  std::vector<std::byte> bytes = exe.save();  rv::executable back = rv::executable::load(bytes);
  rv::registry reg;                                      // starts with every vm.builtin.*
  reg.def("test.add", [](const rv::tensor& a, std::int64_t k) -> rv::tensor { (void)k; return a; });
  reg.def_packed("test.raw", [](std::span<const rv::value> args) -> rv::value { return args[0]; });
  rv::virtual_machine vm(exe, reg);                      // throws rv::error naming a missing function
  rv::value out = vm.invoke("main", {rv::value(t), rv::value(true)});
  rv::value out2 = vm["main"](t, true);
  constexpr auto prog = rv::build([](rv::exec_builder& b) { auto fn = b.function("main", 1); b.emit_ret(b.r(0)); });
  rv::virtual_machine vm2(prog, reg);
  (void)e; (void)u; (void)out; (void)out2;
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

rv::tensor add_scalar(const rv::tensor& a, std::int64_t k) {
  rv::tensor r = rv::tensor::empty(a.shape(), a.dtype());
  for (std::int64_t i = 0; i < a.numel(); ++i) r.data<float>()[i] = a.data<const float>()[i] + static_cast<float>(k);
  return r;
}

}  // namespace

TEST_CASE("the contract's program, with offsets that verify, runs") {
  rv::tensor t = rv::tensor::from<float>({1, 2, 3, 4}, {2, 2});
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2);
    b.emit_call("test.add", {b.r(0), b.imm(10)}, b.r(2));
    b.emit_call("vm.builtin.print", {b.vm_state(), b.r(2)});
    b.emit_if(b.r(1), 2);  // true: fall through to the goto; false: jump to ret
    b.emit_goto(1);
    b.emit_ret(b.r(2));
  }
  rv::executable exe = b.get();
  CHECK(exe.warnings().empty());
  rv::executable back = rv::executable::load(exe.save());
  CHECK(back == exe);
  rv::registry reg;
  reg.def("test.add", &add_scalar);
  std::string printed;
  rv::vm_options opts;
  opts.print = [&](std::string_view s) { printed += s; };
  rv::virtual_machine vm(back, reg, opts);
  rv::value out = vm.invoke("main", {rv::value(t), rv::value(true)});
  rv::value out2 = vm["main"](t, false);
  CHECK(out.as<rv::tensor>().data<float>()[3] == 14.0f);
  CHECK(out2.as<rv::tensor>().data<float>()[0] == 11.0f);
  CHECK(printed ==
        "tensor([[11, 12], [13, 14]], shape=[2, 2], dtype=float32, device=cpu:0)\n"
        "tensor([[11, 12], [13, 14]], shape=[2, 2], dtype=float32, device=cpu:0)\n");
}

TEST_CASE("the contract's program as given is rejected by the verifier, not run") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2);
    b.emit_call("test.add", {b.r(0), b.imm(10)}, b.r(2));
    b.emit_call("vm.builtin.print", {b.r(2)});
    b.emit_if(b.r(1), 3);
    b.emit_goto(2);
    b.emit_ret(b.r(2));
  }
  rv::result<rv::executable> r = b.try_get();
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.error().message()).find("function 'main', instruction 2 (If %1, 3): If false offset 3 leads outside") !=
        std::string::npos);
}

// ---- issue 3's additions to the contract ----------------------------------------------------

TEST_CASE("issue 3's contract: null values, tuples of values, dtypes, DLPack device fields") {
  rv::value v;
  CHECK(v.is_null());
  rv::registry reg;
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.make_tuple", {b.r(0), b.imm(7)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::virtual_machine vm(b.get(), reg);
  rv::tensor x = rv::tensor::empty({2}, rv::dtype::uint8());
  v = vm.invoke("main", {x});
  rv::tuple t = v.as<rv::tuple>();
  CHECK(t.size() == 2);
  CHECK(t[0].as<rv::tensor>().get() == x.get());
  CHECK(t[1].as<std::int64_t>() == 7);
  CHECK(rv::dtype::uint8() == rv::dtype(kDLUInt, 8));
  CHECK(rv::dtype::int32() == rv::dtype(kDLInt, 32));
  CHECK(rv::dtype::float64() == rv::dtype(kDLFloat, 64));
  CHECK(x.device().device_type == kDLCPU);
  CHECK(x.device().device_id == 0);
}
