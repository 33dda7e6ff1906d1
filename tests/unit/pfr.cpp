// SPDX-License-Identifier: Apache-2.0
// relaxvm/ext/pfr.hpp: structs as packed-function arguments and results.
#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <relaxvm/ext/pfr.hpp>
#include <string>

namespace rv = relaxvm;

namespace {
struct conv_params {
  std::int64_t stride;
  double scale;
  rv::dtype out_type;
  rv::shape window;
};
}  // namespace

template <>
inline constexpr bool relaxvm::reflect_as_tuple<conv_params> = true;

TEST_CASE("a reflected struct is a tuple of its fields") {
  rv::closure f = rv::make_typed("test.conv", [](const conv_params& p) {
    return conv_params{p.stride * 2, p.scale, p.out_type, p.window};
  });
  rv::value args = rv::tuple{2, 0.5, rv::dtype::float16(), rv::shape{3, 3}};
  rv::value out = f(args);
  conv_params back = out.as<conv_params>();
  CHECK(back.stride == 4);
  CHECK(back.scale == 0.5);
  CHECK(back.out_type == rv::dtype::float16());
  CHECK(back.window == rv::shape{3, 3});
  CHECK(rv::value(conv_params{1, 1.0, rv::dtype::int8(), {}}).kind() == rv::value_kind::tuple);
}

TEST_CASE("a mismatched tuple is a type error naming the argument") {
  rv::closure f = rv::make_typed("test.conv", [](const conv_params& p) { return p.stride; });
  rv::result<rv::value> r = f.try_call(std::vector<rv::value>{rv::value(rv::tuple{2, "x", rv::dtype::int8(), rv::shape{}})});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::type);
  CHECK(std::string(r.error().message()) ==
        "test.conv: argument 0 expects a tuple of a reflected struct's fields but got tuple");
  CHECK_FALSE(f.try_call(std::vector<rv::value>{rv::value(rv::tuple{2, 0.5})}).ok());  // too few fields
  CHECK(f(rv::tuple{2, 1, rv::dtype::int8(), rv::shape{}}).as<std::int64_t>() == 2);  // an int64 is an exact double
}
