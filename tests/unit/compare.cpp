// SPDX-License-Identifier: Apache-2.0
// runtime/compare.hpp and the << of runtime/print.hpp: tensors compared by contents, value ==,
// where two tensors differ, and how relaxvm's types print to a std::ostream (doctest's and
// GoogleTest's messages use it); <relaxvm/doctest.hpp>'s checks.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <relaxvm.hpp>
#include <relaxvm/doctest.hpp>

#include "../support/foreign.hpp"

namespace rv = relaxvm;

namespace {
template <class T>
std::string printed(const T& x) {
  std::ostringstream os;
  os << x;
  return os.str();
}
rv::tensor floats(std::initializer_list<float> v, rv::shape s) { return rv::tensor::from<float>(v, s); }
constexpr float qnan = std::numeric_limits<float>::quiet_NaN();
constexpr float inf = std::numeric_limits<float>::infinity();
}  // namespace

TEST_CASE("tensors compare by dtype, shape and contents; t.get() tells the same object") {
  const rv::tensor a = floats({1, 2, 3, 4}, {2, 2});
  const rv::tensor b = floats({1, 2, 3, 4}, {2, 2});
  CHECK(a.get() != b.get());
  CHECK(a == b);
  CHECK(rv::equal(a, b));
  CHECK_FALSE(a == floats({1, 2, 3, 5}, {2, 2}));
  CHECK_FALSE(a == floats({1, 2, 3, 4}, {4}));                                  // shape
  CHECK_FALSE(a == rv::tensor::from<double>({1, 2, 3, 4}, {2, 2}));             // dtype: no conversion
  CHECK(rv::tensor() == rv::tensor());                                          // both undefined
  CHECK_FALSE(a == rv::tensor());
  CHECK(floats({}, {0, 3}) == floats({}, {0, 3}));
  CHECK_FALSE(floats({}, {0, 3}) == floats({}, {3, 0}));
  // A strided tensor compares by its logical elements: column-major [[1, 3], [2, 4]] in memory.
  const rv::tensor strided = relaxvm_test::column_major_2x2();
  CHECK(strided == rv::tensor::from<double>({1, 2, 3, 4}, {2, 2}));
  CHECK_FALSE(strided == rv::tensor::from<double>({1, 3, 2, 4}, {2, 2}));
  CHECK(rv::first_difference(strided, rv::tensor::from<double>({1, 2, 3, 5}, {2, 2})).index == 3);
}

TEST_CASE("NaN matches NaN, -0 equals +0, infinities match only themselves; integers are exact") {
  CHECK(floats({qnan, 1}, {2}) == floats({qnan, 1}, {2}));
  CHECK_FALSE(floats({qnan}, {1}) == floats({0}, {1}));
  CHECK(floats({-0.0f}, {1}) == floats({0.0f}, {1}));
  CHECK(rv::allclose(floats({inf, -inf, qnan}, {3}), floats({inf, -inf, qnan}, {3})));
  CHECK_FALSE(rv::allclose(floats({inf}, {1}), floats({-inf}, {1})));
  CHECK_FALSE(rv::allclose(floats({inf}, {1}), floats({3e38f}, {1}), 1.0, 1e38));
  const std::int64_t big = std::int64_t{1} << 60;
  CHECK_FALSE(rv::tensor::from<std::int64_t>({big}, {1}) == rv::tensor::from<std::int64_t>({big + 1}, {1}));
  CHECK(rv::tensor::from<std::uint64_t>({~std::uint64_t{0}}, {1}) == rv::tensor::from<std::uint64_t>({~std::uint64_t{0}}, {1}));
  CHECK(rv::allclose(rv::tensor::from<std::int32_t>({100}, {1}), rv::tensor::from<std::int32_t>({101}, {1}), 0.0, 1.0));
  CHECK_FALSE(rv::allclose(rv::tensor::from<std::int32_t>({100}, {1}), rv::tensor::from<std::int32_t>({102}, {1}), 0.0, 1.0));
  // float16 and bfloat16 elements read as numbers: 1.0 is 0x3c00 and 0x3f80, -2.0 is 0xc000 and 0xc000.
  auto bits16 = [](std::initializer_list<std::uint16_t> v, rv::dtype t) {
    rv::tensor x = rv::tensor::empty({static_cast<std::int64_t>(v.size())}, t);
    std::memcpy(x.raw_data(), v.begin(), v.size() * 2);
    return x;
  };
  CHECK(rv::describe_difference(bits16({0x3c00, 0xc000}, rv::dtype::float16()), bits16({0x3c00, 0x3c00}, rv::dtype::float16())) ==
        "element [1] (flat index 1) differs: -2 and 1");
  CHECK(rv::describe_difference(bits16({0x3f80}, rv::dtype::bfloat16()), bits16({0xc000}, rv::dtype::bfloat16())) ==
        "element [0] (flat index 0) differs: 1 and -2");
  CHECK(bits16({0x7e00}, rv::dtype::float16()) == bits16({0x7c01}, rv::dtype::float16()));  // two NaNs
  CHECK(bits16({0x8000}, rv::dtype::float16()) == bits16({0x0000}, rv::dtype::float16()));  // -0 and +0
}

TEST_CASE("allclose: |a - b| <= atol + rtol * |b|, NumPy's rule") {
  const rv::tensor b = floats({1000, 1}, {2});
  CHECK(rv::allclose(floats({1000.009f, 1}, {2}), b));     // within 1e-5 * 1000
  CHECK_FALSE(rv::allclose(floats({1000.02f, 1}, {2}), b));
  CHECK(rv::allclose(floats({1000.5f, 1}, {2}), b, 1e-3));
  CHECK(rv::allclose(floats({0.5f}, {1}), floats({0}, {1}), 0, 0.5));
  CHECK_FALSE(rv::allclose(floats({0.5f}, {1}), floats({0}, {1}), 0, 0.49));
  const rv::tensor_difference d = rv::first_difference(floats({1, 2, 3.5f, 4}, {2, 2}), floats({1, 2, 3, 4}, {2, 2}),
                                                       rv::tolerance{.rtol = 0.1, .atol = 0});
  CHECK(d.why == rv::tensor_difference::reason::element);
  CHECK(d.index == 2);
  CHECK(rv::describe_difference(floats({1, 2, 3.5f, 4}, {2, 2}), floats({1, 2, 3, 4}, {2, 2})) ==
        "element [1, 0] (flat index 2) differs: 3.5 and 3");
  const rv::tolerance tol{.rtol = 0.1, .atol = 0.25};
  CHECK(rv::describe_difference(floats({9}, {1}), floats({1}, {1}), &tol) ==
        "element [0] (flat index 0) differs: 9 and 1 (rtol 0.1, atol 0.25)");
  CHECK(rv::describe_difference(floats({1}, {1}), floats({1}, {1})).empty());
  CHECK(rv::describe_difference(floats({1}, {1}), floats({1}, {1, 1})) == "shapes differ: [1] and [1, 1]");
  CHECK(rv::describe_difference(floats({1}, {1}), rv::tensor::from<double>({1}, {1})) == "dtypes differ: float32 and float64");
  CHECK(rv::describe_difference(rv::tensor(), floats({1}, {1})) == "the first tensor is undefined");
}

TEST_CASE("value ==: same kind and the same value; tensors by contents, tuples by fields, closures by identity") {
  CHECK(rv::value() == rv::value());
  CHECK(rv::value(3) == rv::value(3));
  CHECK_FALSE(rv::value(3) == rv::value(4));
  CHECK_FALSE(rv::value(1) == rv::value(1.0));   // no conversions
  CHECK_FALSE(rv::value(true) == rv::value(1));
  CHECK(rv::value(std::nan("")) == rv::value(std::nan("")));
  CHECK(rv::value(rv::dtype::float32()) == rv::value(rv::dtype::float32()));
  CHECK_FALSE(rv::value(rv::device::cpu(0)) == rv::value(rv::device::cpu(1)));
  CHECK(rv::value(rv::string("ab")) == rv::value(rv::string("ab")));
  CHECK(rv::value(rv::shape{3, 2}) == rv::value(rv::shape{3, 2}));
  CHECK(rv::value(floats({1, 2}, {2})) == rv::value(floats({1, 2}, {2})));
  const rv::tuple t{1, floats({1, 2}, {2}), rv::tuple{rv::string("x")}};
  CHECK(rv::value(t) == rv::value(rv::tuple{1, floats({1, 2}, {2}), rv::tuple{rv::string("x")}}));
  CHECK(t == rv::tuple{1, floats({1, 2}, {2}), rv::tuple{rv::string("x")}});
  CHECK_FALSE(t == rv::tuple{1, floats({1, 2}, {2}), rv::tuple{rv::string("y")}});
  const std::array<rv::value, 1> one{rv::value(1)};
  CHECK_FALSE(rv::tuple::adt(1, one) == rv::tuple::adt(2, one));  // tags differ
  // A tuple that holds itself equals itself, and comparing two such tuples ends.
  const rv::tuple self{0}, other{0};
  self.set(0, self);
  other.set(0, other);
  CHECK(self == self);
  CHECK_FALSE(self == other);
  self.set(0, rv::value());  // break the cycles, or they would leak
  other.set(0, rv::value());
  const rv::closure f = rv::make_typed("f", [](std::int64_t x) { return x; });
  const rv::closure g = rv::make_typed("f", [](std::int64_t x) { return x; });
  CHECK(rv::value(f) == rv::value(f));
  CHECK_FALSE(rv::value(f) == rv::value(g));
}

TEST_CASE("value ==: a tuple held many times (a DAG) is compared once per pair, not once per path") {
  // t = (t, t) 40 times over: 41 tuples, 2^40 paths to the innermost. Before, == walked every
  // path (issue 33, point 7) and never ended.
  const auto dag = [](int levels, rv::value leaf) {
    rv::value t = rv::tuple{std::move(leaf)};
    for (int i = 0; i < levels; ++i) t = rv::tuple{t, t};
    return t;
  };
  CHECK(dag(40, rv::value(1)) == dag(40, rv::value(1)));
  CHECK_FALSE(dag(40, rv::value(1)) == dag(40, rv::value(2)));  // the one difference is at the bottom
  CHECK(dag(40, rv::value(1)).as<rv::tuple>() == dag(40, rv::value(1)).as<rv::tuple>());
  // The memo gives the answer the walk without it gives: nested deeper than 64 levels, only the
  // same tuple is equal (a pair proved equal near the top is not taken as proved further down).
  const rv::value deep = dag(70, rv::value(1));
  CHECK(deep == deep);
  CHECK_FALSE(deep == dag(70, rv::value(1)));
  CHECK(dag(63, rv::value(1)) == dag(63, rv::value(1)));  // 64 levels of tuples: within the limit
  CHECK_FALSE(dag(64, rv::value(1)) == dag(64, rv::value(1)));
  // Shared at different depths: u holds the same tuple at levels 1, 2 and 33; compared first at
  // level 1, the pair is compared again where it lies deeper.
  rv::value inner = dag(38, rv::value(1)), inner2 = dag(38, rv::value(1));
  const rv::value u = rv::tuple{inner, rv::tuple{inner, dag(30, inner)}};
  const rv::value w = rv::tuple{inner2, rv::tuple{inner2, dag(30, inner2)}};
  CHECK_FALSE(u == w);  // dag(30, inner) puts inner 33 levels down, and its innermost tuple at 71
  const rv::value u2 = rv::tuple{inner, rv::tuple{inner, dag(10, inner)}};
  const rv::value w2 = rv::tuple{inner2, rv::tuple{inner2, dag(10, inner2)}};
  CHECK(u2 == w2);
}

TEST_CASE("<< prints every relaxvm value as to_string does, strings quoted") {
  CHECK(printed(rv::value(3)) == "3");
  CHECK(printed(rv::value(rv::string("ab"))) == "\"ab\"");
  CHECK(printed(rv::dtype::float32()) == "float32");
  CHECK(printed(rv::device::cpu(1)) == "cpu:1");
  CHECK(printed(rv::shape{3, 2}) == "shape[3, 2]");
  CHECK(printed(floats({1, 2.5f}, {2})) == "tensor([1, 2.5], shape=[2], dtype=float32, device=cpu:0)");
  CHECK(printed(rv::tuple{1, rv::string("x")}) == "(1, \"x\")");
  CHECK(printed(rv::detail::value_error("bad ", 3)) == "ValueError: bad 3");
  CHECK(printed(rv::make_typed("zero", [] { return 0; })) == "closure(zero)");
  std::ostringstream os;
  os << 5 << ' ' << rv::value(5);  // plain ints still print as ints
  CHECK(os.str() == "5 5");
}

TEST_CASE("relaxvm/doctest.hpp: a comparison names the first differing element and shows both tensors") {
  const rv::tensor y = floats({1, 2, 3.5f, 4}, {2, 2}), want = floats({1, 2, 3, 4}, {2, 2});
  RELAXVM_CHECK_EQUAL(y, y);
  RELAXVM_CHECK_ALLCLOSE(y, want, 0.2);
  const rv::testing::comparison c = rv::testing::tensors_equal(y, want);
  CHECK_FALSE(c);
  CHECK(printed(c) ==
        "element [1, 0] (flat index 2) differs: 3.5 and 3\n"
        "  mismatches: 1 of 4 elements; the largest difference 0.5 at [1, 0] (flat index 2)\n"
        "  first:  tensor([[1, 2], [3.5, 4]], shape=[2, 2], dtype=float32, device=cpu:0)\n"
        "  second: tensor([[1, 2], [3, 4]], shape=[2, 2], dtype=float32, device=cpu:0)");
  CHECK(printed(rv::testing::tensors_close(y, want)).starts_with("element [1, 0] (flat index 2) differs: 3.5 and 3 (rtol"));
  CHECK(rv::testing::tensors_close(y, want, 0.2));
}

TEST_CASE("relaxvm/doctest.hpp: for a large tensor, the mismatches are counted past the printed part") {
  // 3000 elements: the printed tensors stop after 64. Elements 5, 2000 and 2999 differ; the
  // largest difference (-7 against 1, at [2, 0, 0]) is in the part not printed.
  std::vector<float> got(3000, 1.0f), want(3000, 1.0f);
  got[5] = 1.5f;
  got[2000] = -7.0f;
  got[2999] = 2.0f;
  const rv::tensor a = rv::tensor::from<float>(got, {3, 10, 100}), b = rv::tensor::from<float>(want, {3, 10, 100});
  const std::string report = printed(rv::testing::tensors_close(a, b));
  CHECK(report.starts_with("element [0, 0, 5] (flat index 5) differs: 1.5 and 1 (rtol 1e-05, atol 1e-08)\n"
                           "  mismatches: 3 of 3000 elements; the largest difference 8 at [2, 0, 0] (flat index 2000)\n"
                           "  first:  tensor("));
  CHECK(report.find("...") != std::string::npos);  // the printed tensors are cut
  // Within the tolerance, elements do not count: with atol 1, only element 2000 differs.
  CHECK(printed(rv::testing::tensors_close(a, b, 0, 1)).find("mismatches: 1 of 3000 elements; the largest difference 8") !=
        std::string::npos);
  // Integers: the difference as a number, exactly.
  CHECK(printed(rv::testing::tensors_equal(rv::tensor::from<std::int64_t>({0, 5, -3}, {3}),
                                           rv::tensor::from<std::int64_t>({0, 2, 4}, {3})))
            .find("mismatches: 2 of 3 elements; the largest difference 7 at [2] (flat index 2)") != std::string::npos);
}
