// SPDX-License-Identifier: Apache-2.0
// A kernel that reports bad input as an error result, and so works the same with and without
// exceptions: the test suite builds this file twice, once with -fno-exceptions -fno-rtti.
//
// In a kernel, use the forms that return a result (try_as, tensor::try_empty, tensor::try_from,
// ...) with RELAXVM_TRY / RELAXVM_TRY_ASSIGN, and return rv::value_error(...) and its kin. The
// throwing forms (as, tensor::empty, result::value()) throw rv::error with exceptions on; without
// exceptions they call RELAXVM_ON_ERROR, which by default aborts the program.
#include <cstdio>
#include <relaxvm.hpp>

namespace rv = relaxvm;

namespace {

/// demo.scale(x, k): x * k for a float32 tensor x, as a new tensor; a kernel error otherwise.
rv::result<rv::tensor> scale(const rv::tensor& x, std::int64_t k) {
  if (x.dtype() != rv::dtype::float32())
    return rv::type_error("demo.scale: x must be float32, but it is ", x.dtype());
  if (k == 0) return rv::value_error("demo.scale: k must not be 0");
  // try_empty returns the allocator's error instead of throwing it.
  RELAXVM_TRY_ASSIGN(rv::tensor out, rv::tensor::try_empty(x.shape(), x.dtype()));
  for (std::int64_t i = 0; i < x.numel(); ++i)
    out.data<float>()[i] = x.data<const float>()[i] * static_cast<float>(k);
  return out;
}

/// demo.first(t): the first field of a tuple, which must be a shape; reads it with try_as.
rv::result<rv::shape> first(const rv::tuple& t) {
  if (t.empty()) return rv::value_error("demo.first: the tuple is empty");
  RELAXVM_TRY_ASSIGN(rv::shape s, t[0].try_as<rv::shape>());
  return s;
}

constexpr auto program = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("scale", 2);
    b.emit_call("demo.scale", {b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("first", 1);
    b.emit_call("demo.first", {b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
});

int failures = 0;
void expect(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "ok:  " : "FAIL:", what);
  if (!ok) ++failures;
}

}  // namespace

int main() {
  rv::registry reg;
  reg.def("demo.scale", &scale);
  reg.def("demo.first", &first);
  rv::result<rv::virtual_machine> made = rv::virtual_machine::create(program, reg);
  if (!made.ok()) return 1;
  rv::virtual_machine& vm = *made;
  auto call = [&vm](std::string_view function, std::initializer_list<rv::value> args) {
    return vm.try_invoke(function, std::span<const rv::value>(args.begin(), args.size()));
  };

  // try_invoke (through `call`): errors come back as results in both builds.
  const rv::tensor x = rv::tensor::from<float>({1, 2, 3}, {3});
  rv::result<rv::value> y = call("scale", {x, 2});
  expect(y.ok() && y->as<rv::tensor>() == rv::tensor::from<float>({2, 4, 6}, {3}), "scale(x, 2) doubles x");

  rv::result<rv::value> zero = call("scale", {x, 0});
  std::printf("scale(x, 0): %s\n", zero.ok() ? "ok" : std::string(zero.error().message()).c_str());
  expect(!zero.ok() && zero.error().kind() == rv::error_kind::value &&
             zero.error().message().starts_with("demo.scale: k must not be 0"),
         "k = 0 is a value error naming the kernel");

  rv::result<rv::value> ints = call("scale", {rv::tensor::from<std::int32_t>({1}, {1}), 2});
  expect(!ints.ok() && ints.error().kind() == rv::error_kind::type &&
             ints.error().message().starts_with("demo.scale: x must be float32, but it is int32"),
         "an int32 tensor is a type error");

  rv::result<rv::value> s = call("first", {rv::tuple{rv::shape{2, 3}}});
  expect(s.ok() && s->as<rv::shape>() == rv::shape{2, 3}, "first((shape(2, 3),)) is the shape");
  rv::result<rv::value> not_shape = call("first", {rv::tuple{5}});
  std::printf("first((5,)): %s\n", not_shape.ok() ? "ok" : std::string(not_shape.error().message()).c_str());
  expect(!not_shape.ok() && not_shape.error().kind() == rv::error_kind::type, "try_as reports a wrong kind");

  // The VM is still usable after errors.
  expect(call("scale", {x, 3}).ok(), "the VM runs again after an error");
  return failures == 0 ? 0 : 1;
}
