// SPDX-License-Identifier: Apache-2.0
// The showcase: the examples of the Relax VM's design document, on relaxvm.
//   1. the ExecBuilder example: move, add, mul with a constant tensor
//   2. the text format and statistics of func0
//   3. the VM example: two functions, add and mul of tensors
//   4. shape calculation on the shape heap
//   5. save/load, as_cpp, and the same program verified at compile time
#include <cstdio>
#include <relaxvm.hpp>
#include <string>

namespace rv = relaxvm;

namespace {

// Elementwise kernels over float32 tensors, as typed packed functions.
rv::tensor add(const rv::tensor& a, const rv::tensor& b) {
  rv::tensor out = rv::tensor::empty(a.shape(), a.dtype());
  for (std::int64_t i = 0; i < a.numel(); ++i) out.data<float>()[i] = a.data<const float>()[i] + b.data<const float>()[i];
  return out;
}
rv::tensor mul(const rv::tensor& a, const rv::tensor& b) {
  rv::tensor out = rv::tensor::empty(a.shape(), a.dtype());
  for (std::int64_t i = 0; i < a.numel(); ++i) out.data<float>()[i] = a.data<const float>()[i] * b.data<const float>()[i];
  return out;
}
// vm.add in the design example adds a tensor and an immediate.
rv::tensor add_imm(const rv::tensor& a, std::int64_t k) {
  rv::tensor out = rv::tensor::empty(a.shape(), a.dtype());
  for (std::int64_t i = 0; i < a.numel(); ++i) out.data<float>()[i] = a.data<const float>()[i] + static_cast<float>(k);
  return out;
}

int failures = 0;
void expect(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "ok:  " : "FAIL:", what);
  if (!ok) ++failures;
}

// Seed 000's func0/func1 as a compile-time program: verified by the compiler.
constexpr auto compiled = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("func0", 2);
    b.emit_call("test.vm.add", {b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("func1", 2);
    b.emit_call("test.vm.mul", {b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
});

}  // namespace

int main() {
  rv::registry reg;
  reg.def("test.vm.move", [](const rv::tensor& t) { return t; });
  reg.def("vm.add", &add_imm);
  reg.def("vm.mul", &mul);
  reg.def("test.vm.add", &add);
  reg.def("test.vm.mul", &mul);

  std::printf("== 1. ExecBuilder\n");
  rv::tensor c0 = rv::tensor::from<float>({1, 2, 3, 4}, {4});
  rv::exec_builder b;
  b.add_constant(c0);
  {
    auto fn = b.function("main", 1);
    b.emit_call("test.vm.move", {b.c(0)}, b.r(1));
    b.emit_call("vm.add", {b.r(0), b.imm(10)}, b.r(2));
    b.emit_call("vm.mul", {b.r(2), b.r(1)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  rv::executable exe = b.get();
  std::printf("%s", exe.as_text().c_str());
  rv::virtual_machine vm(exe, reg);
  rv::tensor x = rv::tensor::from<float>({1, 1, 1, 1}, {4});
  rv::tensor y = vm["main"](x).as<rv::tensor>();
  std::printf("main(%s) = %s\n", rv::to_string(x).c_str(), rv::to_string(y).c_str());
  expect(y.data<float>()[3] == 44.0f, "(x + 10) * c0");

  std::printf("\n== 2. Text format\n");
  rv::exec_builder tb;
  {
    auto fn = tb.function("func0", 2);
    tb.emit_call("vm.op.add", {tb.r(0), tb.r(1)}, tb.r(2));
    tb.emit_call("vm.builtin.move", {tb.r(2)}, tb.r(3));
    tb.emit_call("vm.builtin.print", {tb.r(3)});
    tb.emit_ret(tb.r(3));
  }
  rv::executable exec0 = tb.get();
  std::printf("%s%s", exec0.stats().c_str(), exec0.as_text().c_str());

  std::printf("== 3. Virtual machine\n");
  rv::virtual_machine vm3(compiled, reg);
  rv::tensor a = rv::tensor::from<float>({0.5f, 0.25f, 2.0f, 8.0f}, {4});
  rv::tensor c = rv::tensor::from<float>({4.0f, 2.0f, 0.5f, 0.125f}, {4});
  rv::tensor mul_res = vm3["func1"](a, c).as<rv::tensor>();
  rv::tensor add_res = vm3["func0"](a, c).as<rv::tensor>();
  std::printf("func1(a, b) = %s\nfunc0(a, b) = %s\n", rv::to_string(mul_res).c_str(), rv::to_string(add_res).c_str());
  expect(mul_res.data<float>()[0] == 2.0f && mul_res.data<float>()[3] == 1.0f, "func1 multiplies");
  expect(add_res.data<float>()[2] == 2.5f, "func0 adds");

  std::printf("\n== 4. Shape calculation on the shape heap\n");
  rv::exec_builder sb;
  rv::tensor big = rv::tensor::empty({32, 16}, rv::dtype::float32());
  {
    auto fn = sb.function("main", 0);
    sb.emit_call("vm.builtin.alloc_shape_heap", {sb.imm(2)}, sb.r(0));
    sb.emit_call("vm.builtin.shape_of", {sb.c(sb.add_constant(big))}, sb.r(1));
    sb.emit_call("vm.builtin.store_shape", {sb.r(1), sb.r(0), sb.imm(0), sb.imm(1)});
    sb.emit_call("vm.builtin.load_shape", {sb.r(0), sb.imm(0), sb.imm(1)}, sb.r(2));
    sb.emit_ret(sb.r(2));
  }
  rv::virtual_machine vm4(sb.get(), reg);
  rv::value s = vm4.invoke("main", {});
  std::printf("main() = %s\n", rv::to_string(s).c_str());
  expect(s.as<rv::shape>() == rv::shape{32, 16}, "load_shape gives back (32, 16)");

  std::printf("\n== 5. Save, load, and builder code\n");
  std::vector<std::byte> bytes = exe.save();
  rv::executable back = rv::executable::load(bytes);
  std::printf("saved %zu bytes; loaded back: %s\n", bytes.size(), back == exe ? "identical" : "DIFFERENT");
  expect(back == exe, "save/load round trip");
  std::printf("%s", back.as_cpp().c_str());
  return failures == 0 ? 0 : 1;
}
