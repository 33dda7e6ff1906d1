// SPDX-License-Identifier: Apache-2.0
// runtime/closure.hpp, adapters.hpp and registry.hpp: closures, typed adapters, raw packed functions.
#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace rv = relaxvm;

namespace {
std::string call_error(const rv::closure& f, std::vector<rv::value> args, rv::error_kind kind = rv::error_kind::type) {
  rv::result<rv::value> r = f.try_call(args);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == kind);
  return std::string(r.error().message());
}
}  // namespace

TEST_CASE("typed adapters convert every supported parameter type") {
  rv::closure f = rv::make_typed(
      "test.all", [](std::int64_t a, int b, double c, float d, bool e, rv::dtype t, rv::device dev, const rv::shape& s,
                     const std::string& str, std::string_view sv, const rv::tensor& x, const rv::tuple& tup,
                     const rv::value& any, rv::shape by_value) {
        return rv::tuple{a + b, c + d, e, t, dev, s.size() + by_value.size(), str + std::string(sv), x.numel(),
                         tup.size(), any};
      });
  rv::tensor x = rv::tensor::empty({3}, rv::dtype::int8());
  rv::value out = f(1, 2, 0.5, 0.25, true, rv::dtype::int8(), rv::device::cpu(1), rv::shape{1, 2}, "ab", "cd", x,
                    rv::tuple{1, 2, 3}, rv::value(9), rv::shape{4});
  rv::tuple t = out.as<rv::tuple>();
  CHECK(t[0].as<std::int64_t>() == 3);
  CHECK(t[1].as<double>() == 0.75);
  CHECK(t[2].as<bool>());
  CHECK(t[3].as<rv::dtype>() == rv::dtype::int8());
  CHECK(t[4].as<rv::device>() == rv::device::cpu(1));
  CHECK(t[5].as<std::int64_t>() == 3);
  CHECK(t[6].as<std::string>() == "abcd");
  CHECK(t[7].as<std::int64_t>() == 3);
  CHECK(t[8].as<std::int64_t>() == 3);
  CHECK(t[9].as<std::int64_t>() == 9);
  CHECK(x.get()->use_count() == 1);  // the adapter borrowed it
}

TEST_CASE("typed adapters name the function and the argument on a mismatch") {
  rv::closure add = rv::make_typed("test.add", [](const rv::tensor& a, std::int64_t k) { return a.numel() + k; });
  rv::tensor x = rv::tensor::empty({2}, rv::dtype::float32());
  CHECK(add(x, 3).as<std::int64_t>() == 5);
  CHECK(call_error(add, {rv::value(1), rv::value(2)}) == "test.add: argument 0 expects tensor but got int64 1");
  CHECK(call_error(add, {rv::value(x), rv::value(2.5)}) == "test.add: argument 1 expects int64 but got float64 2.5");
  CHECK(call_error(add, {rv::value(x)}) == "test.add: expects 2 arguments but got 1");
  CHECK(call_error(add, {rv::value(x), rv::value(1), rv::value(2)}) == "test.add: expects 2 arguments but got 3");
  rv::closure narrow = rv::make_typed("test.narrow", [](std::int8_t v) { return v; });
  CHECK(call_error(narrow, {rv::value(300)}) == "test.narrow: argument 0 expects int8 but got int64 300");
  CHECK(narrow(true).as<std::int64_t>() == 1);  // bool converts to an integer
}

TEST_CASE("a trailing span takes the remaining arguments") {
  rv::closure sum = rv::make_typed("test.sum", [](std::int64_t first, std::span<const rv::value> rest) {
    std::int64_t s = first;
    for (const rv::value& v : rest) s += v.as<std::int64_t>();
    return s;
  });
  CHECK(sum(1).as<std::int64_t>() == 1);
  CHECK(sum(1, 2, 3).as<std::int64_t>() == 6);
  CHECK(call_error(sum, {}) == "test.sum: expects at least 1 argument but got 0");
}

TEST_CASE("results, void and exceptions") {
  rv::closure checked = rv::make_typed("test.checked", [](std::int64_t v) -> rv::result<std::int64_t> {
    if (v < 0) return rv::detail::value_error("test.checked: ", v, " is negative");
    return v * 2;
  });
  CHECK(checked(4).as<std::int64_t>() == 8);
  CHECK(call_error(checked, {rv::value(-1)}, rv::error_kind::value) == "test.checked: -1 is negative");
  rv::closure nothing = rv::make_typed("test.nothing", [](std::int64_t) {});
  CHECK(nothing(1).is_null());
  rv::closure status = rv::make_typed("test.status", [](bool ok) -> rv::status {
    if (!ok) return rv::detail::runtime_error("not ok");
    return {};
  });
  CHECK(status(true).is_null());
  CHECK(call_error(status, {rv::value(false)}, rv::error_kind::runtime) == "not ok");
#if RELAXVM_USE_EXCEPTIONS
  rv::closure throws = rv::make_typed("test.throws", [](std::int64_t v) -> std::int64_t {
    if (v == 1) throw rv::error(rv::error_kind::value, "bad one");
    if (v == 2) throw std::out_of_range("range");
    throw 42;
  });
  CHECK(call_error(throws, {rv::value(1)}, rv::error_kind::value) == "bad one");
  CHECK(call_error(throws, {rv::value(2)}, rv::error_kind::runtime) == "test.throws: range");
  CHECK(call_error(throws, {rv::value(3)}, rv::error_kind::runtime) == "test.throws: an unknown exception was thrown");
#endif
}

TEST_CASE("raw packed functions see the arguments as they are") {
  rv::closure raw = rv::make_packed("test.raw", [](std::span<const rv::value> args) -> rv::value {
    return static_cast<std::int64_t>(args.size());
  });
  CHECK(raw().as<std::int64_t>() == 0);
  CHECK(raw(1, "two", 3.0).as<std::int64_t>() == 3);
  rv::closure keep = rv::make_packed("test.keep", [](std::span<const rv::value> args) { return args[0]; });
  rv::tensor t = rv::tensor::empty({1}, rv::dtype::int8());
  rv::value kept = keep(t);
  CHECK(kept.as<rv::tensor>().get() == t.get());
  CHECK(t.get()->use_count() == 2);
}

TEST_CASE("closures bind captured values after the call's arguments") {
  rv::closure f = rv::make_typed("test.f4", [](std::int64_t y, std::int64_t z, std::int64_t w, std::int64_t x) {
    return y * 1000 + z * 100 + w * 10 + x;
  });
  std::vector<rv::value> wx{rv::value(3), rv::value(4)};
  rv::closure bound = f.bind(wx);
  CHECK(bound.is_packed());
  CHECK(bound.name() == "test.f4");
  CHECK(bound(1, 2).as<std::int64_t>() == 1234);  // make_closure(f4, w, x); invoke_closure(clo, y, z)
  std::vector<rv::value> x{rv::value(4)};
  std::vector<rv::value> w{rv::value(3)};
  CHECK(f.bind(w).bind(x)(1, 2).as<std::int64_t>() == 1234);
  CHECK(call_error(bound, {rv::value(1)}) == "test.f4: expects 4 arguments but got 3");
}

TEST_CASE("the registry") {
  rv::basic_registry reg;
  reg.def("a.add", [](std::int64_t a, std::int64_t b) { return a + b; });
  reg.def_packed("a.count", [](std::span<const rv::value> args) { return rv::value(static_cast<std::int64_t>(args.size())); });
  CHECK(reg.size() == 2);
  CHECK(reg.contains("a.add"));
  CHECK(reg.get("a.add")(2, 3).as<std::int64_t>() == 5);
  CHECK(reg.find("missing") == nullptr);
  CHECK(std::string(reg.try_get("missing").error().message()) == "registry: no function is registered as 'missing'");
  rv::status dup = reg.try_add("a.add", rv::make_typed("x", [] {}));
  CHECK(std::string(dup.error().message()) == "registry: 'a.add' is already registered; remove() it first to replace it");
  CHECK(reg.remove("a.add"));
  CHECK_FALSE(reg.remove("a.add"));
  reg.def("a.add", [](std::int64_t a, std::int64_t b) { return a - b; });
  CHECK(reg.get("a.add")(5, 3).as<std::int64_t>() == 2);
  CHECK(std::string(reg.try_add("", rv::make_typed("x", [] {})).error().message()) ==
        "registry: a function needs a non-empty name");
  rv::registry with_builtins;
  for (std::string_view name : {"vm.builtin.print", "vm.builtin.copy", "vm.builtin.null_value", "vm.builtin.alloc_shape_heap",
                                "vm.builtin.shape_of", "vm.builtin.store_shape", "vm.builtin.load_shape"})
    CHECK(with_builtins.contains(name));
}
