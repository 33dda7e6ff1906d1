// SPDX-License-Identifier: Apache-2.0
// The README's tour, as a program the test suite runs.
#include <cstdio>
#include <relaxvm.hpp>

namespace rv = relaxvm;

// A kernel is any C++ callable; the registry checks and converts its arguments.
rv::tensor scale(const rv::tensor& x, double k) {
  rv::tensor out = rv::tensor::empty(x.shape(), x.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i) out.data<float>()[i] = x.data<const float>()[i] * static_cast<float>(k);
  return out;
}

// A program verified by the compiler: a mistake here is a compile error quoting the verifier.
constexpr auto program = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 2, {"x", "big"});
  b.emit_if(b.r(1), 3);                                     // big? fall through : jump 3 ahead
  b.emit_call("demo.scale", {b.r(0), b.c(b.add_float(10.0))}, b.r(2));
  b.emit_goto(2);
  b.emit_call("demo.scale", {b.r(0), b.c(b.add_float(0.5))}, b.r(2));
  b.emit_ret(b.r(2));
});

int main() {
  rv::registry reg;  // every vm.builtin.* is already there
  reg.def("demo.scale", &scale);
  rv::virtual_machine vm(program, reg);  // resolves every name now, or fails naming it

  rv::tensor x = rv::tensor::from<float>({1, 2, 3, 4}, {2, 2});
  rv::tensor y = vm["main"](x, true).as<rv::tensor>();
  std::printf("%s\n", rv::to_string(y).c_str());

  // Errors are values (or exceptions): they name the function, the instruction and the argument.
  rv::result<rv::value> bad = vm.try_invoke("main", std::vector<rv::value>{rv::value(42), rv::value(true)});
  std::printf("%s\n", bad.error().what());

  // Executables save, load (verified again) and print themselves.
  rv::executable exe = program;
  rv::executable back = rv::executable::load(exe.save());
  std::printf("%s", back.as_text().c_str());
  return y.data<float>()[3] == 40.0f && !bad.ok() && back == exe ? 0 : 1;
}
