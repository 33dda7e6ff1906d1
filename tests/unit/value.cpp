// SPDX-License-Identifier: Apache-2.0
// runtime/value.hpp, object.hpp, shape, string, tuple: kinds, conversions, reference counts.
#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <string>
#include <thread>
#include <vector>

namespace rv = relaxvm;

TEST_CASE("values of every kind") {
  CHECK(rv::value().is_null());
  CHECK(rv::value(nullptr).is_null());
  CHECK(rv::value(std::int64_t{3}).kind() == rv::value_kind::int64);
  CHECK(rv::value(3).kind() == rv::value_kind::int64);
  CHECK(rv::value(2.5).kind() == rv::value_kind::float64);
  CHECK(rv::value(2.5f).kind() == rv::value_kind::float64);
  CHECK(rv::value(true).kind() == rv::value_kind::boolean);
  CHECK(rv::value(rv::dtype::int32()).kind() == rv::value_kind::dtype);
  CHECK(rv::value(rv::device::cpu(2)).kind() == rv::value_kind::device);
  CHECK(rv::value(rv::shape{2, 3}).kind() == rv::value_kind::shape);
  CHECK(rv::value("s").kind() == rv::value_kind::string);  // not the pointer-to-bool conversion
  CHECK(rv::value(std::string("s")).kind() == rv::value_kind::string);
  CHECK(rv::value(rv::tensor::empty({2}, rv::dtype::int8())).kind() == rv::value_kind::tensor);
  CHECK(rv::value(rv::tuple{1, 2}).kind() == rv::value_kind::tuple);
  CHECK(rv::value(rv::make_typed("f", [] { return 1; })).kind() == rv::value_kind::closure);
  CHECK(sizeof(rv::value) == 16);
}

TEST_CASE("as<T> returns the value, is<T> checks the exact kind") {
  CHECK(rv::value(std::int64_t{3}).as<std::int64_t>() == 3);
  CHECK(rv::value(2.5).as<double>() == 2.5);
  CHECK(rv::value(true).as<bool>());
  CHECK(rv::value(std::string("s")).as<std::string>() == "s");
  CHECK(rv::value("view").as<std::string_view>() == "view");
  CHECK(rv::value(rv::dtype::int32()).as<rv::dtype>() == rv::dtype::int32());
  CHECK(rv::value(rv::device::cpu(2)).as<rv::device>() == rv::device::cpu(2));
  CHECK(rv::value(rv::shape{2, 3}).as<rv::shape>() == rv::shape{2, 3});
  CHECK(rv::value(rv::shape{}).as<rv::shape>().empty());
  // Exact conversions are allowed; is<T> stays exact.
  CHECK(rv::value(3).as<double>() == 3.0);
  CHECK_FALSE(rv::value(3).is<double>());
  CHECK(rv::value(true).as<std::int64_t>() == 1);
  CHECK(rv::value(5).as<std::int32_t>() == 5);
  CHECK(rv::value(5).is<std::int32_t>());
  CHECK_FALSE(rv::value(std::int64_t{1} << 40).is<std::int32_t>());
  CHECK_FALSE(rv::value(-1).is<std::uint32_t>());
}

TEST_CASE("a wrong kind is a type error naming both kinds") {
  rv::result<rv::tensor> r = rv::value(3).try_as<rv::tensor>();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::type);
  CHECK(r.error().message() == "expected tensor but got int64 3");
  CHECK(rv::value(std::int64_t{1} << 40).try_as<std::int32_t>().error().message() ==
        "expected int32 but got int64 1099511627776");
  CHECK(rv::value().try_as<std::string>().error().message() == "expected string but got null");
#if RELAXVM_USE_EXCEPTIONS
  CHECK_THROWS_AS((void)rv::value(2.5).as<rv::shape>(), rv::error);
#endif
}

TEST_CASE("copies add references; moves and borrows do not") {
  rv::tensor t = rv::tensor::empty({4}, rv::dtype::float32());
  rv::tensor_object* o = t.get();
  CHECK(o->use_count() == 1);
  {
    rv::value a = t;
    CHECK(o->use_count() == 2);
    rv::value b = a;
    CHECK(o->use_count() == 3);
    rv::value c = std::move(b);
    CHECK(o->use_count() == 3);
    CHECK(b.is_null());
    rv::value lent = rv::value::borrow(a);
    CHECK(lent.is_borrowed());
    CHECK(o->use_count() == 3);
    {
      rv::value kept = lent;  // copying a borrowed value owns a reference
      CHECK_FALSE(kept.is_borrowed());
      CHECK(o->use_count() == 4);
    }
    lent = rv::value(1);  // dropping a borrowed value releases nothing
    CHECK(o->use_count() == 3);
    a = c;
    CHECK(o->use_count() == 3);
    a.reset();
    CHECK(o->use_count() == 2);
  }
  CHECK(o->use_count() == 1);
}

TEST_CASE("shape") {
  rv::shape s{32, 16};
  CHECK(s.size() == 2);
  CHECK(s[0] == 32);
  CHECK(s == rv::shape{32, 16});
  CHECK_FALSE(s == rv::shape{32});
  std::int64_t n = 0;
  CHECK(s.numel(n));
  CHECK(n == 512);
  CHECK_FALSE(rv::shape{std::int64_t{1} << 40, std::int64_t{1} << 40}.numel(n));
  CHECK_FALSE(rv::shape{-1}.numel(n));
  rv::shape empty;
  CHECK(empty.size() == 0);
  CHECK(empty.get() == nullptr);  // no allocation
  CHECK(empty == rv::shape{});
  std::vector<std::int64_t> dims{1, 2, 3};
  CHECK(rv::shape(dims).size() == 3);
}

TEST_CASE("string") {
  rv::string s("hello");
  CHECK(s.view() == "hello");
  CHECK(s.size() == 5);
  CHECK(std::string(s.c_str()) == "hello");
  CHECK(s == "hello");
  rv::string with_nul(std::string_view("a\0b", 3));
  CHECK(with_nul.size() == 3);
}

TEST_CASE("tuples and tagged values") {
  rv::tuple t{1, 2.5, "x"};
  CHECK(t.size() == 3);
  CHECK(t.tag() == 0);
  CHECK(t[0].as<std::int64_t>() == 1);
  CHECK(t[2].as<std::string>() == "x");
  rv::value v = t;
  rv::tuple back = v.as<rv::tuple>();
  CHECK(back.size() == 3);
  CHECK(back == t);
  std::vector<rv::value> fields{rv::value(7)};
  rv::tuple cons = rv::tuple::adt(3, fields);
  CHECK(cons.tag() == 3);
  CHECK(cons.size() == 1);
  CHECK(rv::tuple().size() == 0);
  rv::tensor x = rv::tensor::empty({1}, rv::dtype::int8());
  {
    rv::tuple holds{x, x};
    CHECK(x.get()->use_count() == 3);
    holds.set(0, rv::value());
    CHECK(x.get()->use_count() == 2);
  }
  CHECK(x.get()->use_count() == 1);
  CHECK(rv::to_string(rv::value(rv::tuple{1, "s", rv::tuple{}})) == "(1, \"s\", ())");
  CHECK(rv::to_string(rv::value(cons)) == "adt3(7)");
}

namespace {
struct my_state : rv::object {
  static constexpr std::string_view type_name = "test.my_state";
  explicit my_state(int v) : x(v) {}
  int x;
};
}  // namespace

TEST_CASE("user objects as opaque values") {
  rv::value v = rv::make_object<my_state>(41);
  CHECK(v.kind() == rv::value_kind::object);
  CHECK(v.is<rv::object_ref<my_state>>());
  CHECK(v.as<rv::object_ref<my_state>>()->x == 41);
  CHECK(v.get_object()->type_name() == "test.my_state");
  CHECK(rv::to_string(v) == "<object test.my_state>");
  CHECK_FALSE(rv::value(rv::shape{1}).is<rv::object_ref<my_state>>());
}

TEST_CASE("shared objects can be copied on several threads") {
  rv::tensor t = rv::tensor::empty({8}, rv::dtype::float32());
  rv::value v = t;
  v.share();
  CHECK(t.get()->is_shared());
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 10000; ++k) {
        rv::value copy = v;
        (void)copy;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(t.get()->use_count() == 2);
}

TEST_CASE("to_string") {
  CHECK(rv::to_string(rv::value()) == "null");
  CHECK(rv::to_string(rv::value(-4)) == "-4");
  CHECK(rv::to_string(rv::value(0.1)) == "0.1");
  CHECK(rv::to_string(rv::value(false)) == "false");
  CHECK(rv::to_string(rv::value(rv::dtype::float16())) == "float16");
  CHECK(rv::to_string(rv::value(rv::device::cpu())) == "cpu:0");
  CHECK(rv::to_string(rv::value(rv::shape{32, 16})) == "shape[32, 16]");
  CHECK(rv::to_string(rv::value("text")) == "text");
  CHECK(rv::to_string(rv::value(rv::make_typed("my.fn", [] {}))) == "closure(my.fn)");
}

TEST_CASE("a handle without an object becomes a null value") {
  CHECK(rv::value(rv::tensor()).is_null());
  CHECK(rv::value(rv::closure()).is_null());
  CHECK(rv::value(rv::object_ref<my_state>()).is_null());
  rv::string s("x");
  rv::string moved = std::move(s);
  CHECK(rv::value(s).is_null());  // NOLINT: deliberately the moved-from handle
  CHECK(rv::value(moved).kind() == rv::value_kind::string);
  // The empty shape and tuple need no object and stay what they are.
  CHECK(rv::value(rv::shape()).kind() == rv::value_kind::shape);
  CHECK(rv::value(rv::tuple()).kind() == rv::value_kind::tuple);
  // A kernel returning an undefined tensor gives null, which the next kernel rejects cleanly.
  rv::closure undefined = rv::make_typed("test.undefined", [] { return rv::tensor(); });
  rv::value out = undefined();
  CHECK(out.is_null());
  rv::registry reg;
  CHECK(std::string(reg.get("vm.builtin.shape_of").try_call(std::vector<rv::value>{out}).error().message()) ==
        "vm.builtin.shape_of: argument 0 expects tensor but got null");
}
