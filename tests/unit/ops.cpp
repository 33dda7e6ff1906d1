// SPDX-License-Identifier: Apache-2.0
// ops/: every kernel in float32 and float64, returning and destination-passing, with NumPy
// broadcasting, checked against values computed by hand or with xtensor; then the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <relaxvm.hpp>
#include <relaxvm/ops/ops.hpp>
#include <string>
#include <vector>

#include "../support/foreign.hpp"
#include "../support/probe.hpp"

namespace rv = relaxvm;
namespace ops = relaxvm::ops;
using relaxvm_test::probe;
using V = std::vector<rv::value>;

namespace {

template <class T>
rv::tensor make(std::vector<double> v, rv::shape s) {
  std::vector<T> typed(v.begin(), v.end());
  return rv::tensor::from<T>(typed, s);
}
template <class T>
std::vector<double> values(const rv::tensor& t) {
  const T* p = t.data<const T>();
  return std::vector<double>(p, p + t.numel());
}
template <class T>
bool close(const rv::tensor& t, std::vector<double> want, double tol = 1e-6) {
  if (t.dtype() != rv::dtype_of<T>() || t.numel() != static_cast<std::int64_t>(want.size())) return false;
  const std::vector<double> got = values<T>(t);
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])))) return false;
  return true;
}
std::string message(const rv::status& s) { return std::string(s.error().message()); }
template <class T>
std::string message(const rv::result<T>& r) { return std::string(r.error().message()); }

}  // namespace

TEST_CASE_TEMPLATE("elementwise binary ops broadcast like NumPy", T, float, double) {
  rv::tensor a = make<T>({1, 2, 3, 4, 5, 6}, {2, 3});
  rv::tensor row = make<T>({10, 20, 30}, {3});
  rv::tensor col = make<T>({2, 4}, {2, 1});
  CHECK(close<T>(*ops::add(a, row), {11, 22, 33, 14, 25, 36}));
  CHECK(close<T>(*ops::subtract(a, col), {-1, 0, 1, 0, 1, 2}));
  CHECK(close<T>(*ops::multiply(col, row), {20, 40, 60, 40, 80, 120}));  // [2,1] x [3] -> [2,3]
  CHECK((*ops::multiply(col, row)).shape() == rv::shape{2, 3});
  CHECK(close<T>(*ops::divide(a, col), {0.5, 1, 1.5, 1, 1.25, 1.5}));
  CHECK(close<T>(*ops::maximum(a, make<T>({3}, {1})), {3, 3, 3, 4, 5, 6}));
  rv::tensor scalar = make<T>({7}, {});
  CHECK((*ops::add(scalar, scalar)).shape() == rv::shape{});
  CHECK(close<T>(*ops::add(scalar, row), {17, 27, 37}));
  // Destination-passing: the output is preallocated; it may be an input itself (in place).
  rv::tensor out = rv::tensor::empty({2, 3}, rv::dtype_of<T>());
  CHECK(ops::add_out(a, row, out).ok());
  CHECK(close<T>(out, {11, 22, 33, 14, 25, 36}));
  CHECK(ops::multiply_out(out, col, out).ok());
  CHECK(close<T>(out, {22, 44, 66, 56, 100, 144}));
  CHECK(close<T>(*ops::divide(make<T>({1, -1, 0}, {3}), make<T>({0, 0, 0}, {3})), {INFINITY, -INFINITY, NAN}) == false);
  rv::tensor inf = *ops::divide(make<T>({1, -1}, {2}), make<T>({0, 0}, {2}));
  CHECK(std::isinf(values<T>(inf)[0]));
  CHECK(values<T>(inf)[1] < 0);
}

TEST_CASE_TEMPLATE("activations: relu, gelu, sigmoid", T, float, double) {
  rv::tensor x = make<T>({-2, -0.5, 0, 0.5, 2}, {5});
  CHECK(close<T>(*ops::relu(x), {0, 0, 0, 0.5, 2}));
  std::vector<double> gelu, sigmoid;
  for (double v : {-2.0, -0.5, 0.0, 0.5, 2.0}) {
    gelu.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    sigmoid.push_back(1 / (1 + std::exp(-v)));
  }
  CHECK(close<T>(*ops::gelu(x), gelu));
  CHECK(close<T>(*ops::sigmoid(x), sigmoid));
  rv::tensor out = rv::tensor::empty({5}, rv::dtype_of<T>());
  CHECK(ops::sigmoid_out(x, out).ok());
  CHECK(close<T>(out, sigmoid));
  CHECK(ops::gelu_out(x, out).ok());
  CHECK(close<T>(out, gelu));
  CHECK(ops::relu_out(x, x).ok());  // in place
  CHECK(close<T>(x, {0, 0, 0, 0.5, 2}));
  // Large magnitudes do not overflow to nan.
  CHECK(close<T>(*ops::sigmoid(make<T>({-1000, 1000}, {2})), {0, 1}));
}

TEST_CASE_TEMPLATE("matmul: 2-d, vectors and broadcast batches", T, float, double) {
  rv::tensor a = make<T>({1, 2, 3, 4, 5, 6}, {2, 3});
  rv::tensor b = make<T>({1, 0, 0, 1, 1, 1}, {3, 2});
  rv::tensor c = *ops::matmul(a, b);
  CHECK(c.shape() == rv::shape{2, 2});
  CHECK(close<T>(c, {4, 5, 10, 11}));
  rv::tensor v = make<T>({1, 1, 1}, {3});
  CHECK((*ops::matmul(a, v)).shape() == rv::shape{2});
  CHECK(close<T>(*ops::matmul(a, v), {6, 15}));
  CHECK((*ops::matmul(v, b)).shape() == rv::shape{2});
  CHECK(close<T>(*ops::matmul(v, b), {2, 2}));
  CHECK((*ops::matmul(v, v)).shape() == rv::shape{});
  CHECK(close<T>(*ops::matmul(v, v), {3}));
  // [2, 1, 2, 3] x [3, 3, 2] -> [2, 3, 2, 2]: batches broadcast
  std::vector<double> av(12), bv(18);
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>(i);
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<double>(i % 5) - 2;
  rv::tensor ba = make<T>(av, {2, 1, 2, 3}), bb = make<T>(bv, {3, 3, 2});
  rv::tensor bc = *ops::matmul(ba, bb);
  REQUIRE(bc.shape() == rv::shape{2, 3, 2, 2});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 2; ++m)
        for (int n = 0; n < 2; ++n) {
          double want = 0;
          for (int k = 0; k < 3; ++k) want += av[static_cast<std::size_t>(i * 6 + m * 3 + k)] * bv[static_cast<std::size_t>(j * 6 + k * 2 + n)];
          CHECK(values<T>(bc)[static_cast<std::size_t>(((i * 3 + j) * 2 + m) * 2 + n)] == doctest::Approx(want));
        }
  rv::tensor out = rv::tensor::empty({2, 2}, rv::dtype_of<T>());
  CHECK(ops::matmul_out(a, b, out).ok());
  CHECK(close<T>(out, {4, 5, 10, 11}));
}

TEST_CASE_TEMPLATE("dense: x . w^T + b, with and without the bias", T, float, double) {
  rv::tensor x = make<T>({1, 2, 3, 4, 5, 6}, {2, 3});
  rv::tensor w = make<T>({1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 2}, {4, 3});
  rv::tensor bias = make<T>({0.5, 0, 0, -1}, {4});
  CHECK(close<T>(*ops::dense(x, w, &bias), {1.5, 5, 6, 5, 4.5, 11, 15, 11}));
  CHECK(close<T>(*ops::dense(x, w), {1, 5, 6, 6, 4, 11, 15, 12}));
  rv::tensor out = rv::tensor::empty({2, 4}, rv::dtype_of<T>());
  CHECK(ops::dense_out(x, w, bias, out).ok());
  CHECK(close<T>(out, {1.5, 5, 6, 5, 4.5, 11, 15, 11}));
  rv::tensor x3 = make<T>({1, 2, 3, 4, 5, 6}, {1, 2, 3});  // leading dims are kept
  CHECK((*ops::dense(x3, w)).shape() == rv::shape{1, 2, 4});
}

TEST_CASE_TEMPLATE("softmax, sum and mean over an axis", T, float, double) {
  rv::tensor x = make<T>({1, 2, 3, 1, 1, 1}, {2, 3});
  const double e = std::exp(1.0), s = 1 + e + e * e;
  CHECK(close<T>(*ops::softmax(x), {1 / s, e / s, e * e / s, 1.0 / 3, 1.0 / 3, 1.0 / 3}));
  CHECK(close<T>(*ops::softmax(x, 0), {0.5, 1 / (1 + 1 / e), 1 / (1 + 1 / (e * e)), 0.5, 1 / (1 + e), 1 / (1 + e * e)}));
  CHECK(close<T>(*ops::softmax(make<T>({1000, 1000}, {2})), {0.5, 0.5}));  // stable for large inputs
  CHECK(close<T>(*ops::sum(x, 1), {6, 3}));
  CHECK((*ops::sum(x, 1)).shape() == rv::shape{2});
  CHECK((*ops::sum(x, -2, true)).shape() == rv::shape{1, 3});
  CHECK(close<T>(*ops::sum(x, 0, true), {2, 3, 4}));
  CHECK(close<T>(*ops::mean(x, 1), {2, 1}));
  CHECK(close<T>(*ops::mean(x, 0), {1, 1.5, 2}));
  rv::tensor out = rv::tensor::empty({2, 1}, rv::dtype_of<T>());  // keepdims, from the output's rank
  CHECK(ops::mean_out(x, 1, out).ok());
  CHECK(close<T>(out, {2, 1}));
  rv::tensor flat = rv::tensor::empty({3}, rv::dtype_of<T>());
  CHECK(ops::sum_out(x, 0, flat).ok());
  CHECK(close<T>(flat, {2, 3, 4}));
  rv::tensor sm = rv::tensor::empty({2, 3}, rv::dtype_of<T>());
  CHECK(ops::softmax_out(x, -1, sm).ok());
  CHECK(close<T>(sm, {1 / s, e / s, e * e / s, 1.0 / 3, 1.0 / 3, 1.0 / 3}));
}

TEST_CASE("the ops check their arguments and name the problem") {
  rv::tensor f32 = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  rv::tensor f64 = make<double>({1, 2, 3}, {3});
  rv::tensor i32 = rv::tensor::empty({3}, rv::dtype::int32());
  CHECK(message(ops::add(f32, f64)) == "ops.add: argument 1 is float64 but argument 0 is float32; both must have the same dtype");
  CHECK(message(ops::add(i32, i32)) == "ops.add: argument 0 has dtype int32; the ops take float32 and float64");
  CHECK(ops::add(i32, i32).error().kind() == rv::error_kind::type);
  CHECK(message(ops::add(f32, make<float>({1, 2}, {2}))) == "ops.add: shapes [2, 3] and [2] cannot be broadcast");
  CHECK(message(ops::relu(rv::tensor())) == "ops.relu: argument 0 is an undefined tensor");
  rv::tensor wrong = rv::tensor::empty({3, 2}, rv::dtype::float32());
  CHECK(message(ops::add_out(f32, f32, wrong)) ==
        "ops.add_out: the output (argument 2) has shape [3, 2] but the result has shape [2, 3]");
  CHECK(ops::add_out(f32, f32, wrong).error().kind() == rv::error_kind::value);
  CHECK(message(ops::relu_out(f32, rv::tensor::empty({2, 3}, rv::dtype::float64()))) ==
        "ops.relu_out: the output (argument 1) is float64 but the result is float32");
  // An output that overlaps an input other than exactly: refused, not computed wrongly.
  rv::tensor col = make<float>({1, 2}, {2, 1});
  rv::tensor wide = rv::tensor::empty({2, 2}, rv::dtype::float32());
  rv::tensor narrow_alias = *rv::builtins::reshape(wide, rv::shape{2, 1});
  CHECK(message(ops::add_out(narrow_alias, make<float>({1, 2}, {2}), wide)) ==
        "ops.add_out: the output overlaps argument 0; an output may only be exactly an input of its own shape");
  rv::tensor sq = make<float>({1, 2, 3, 4}, {2, 2});
  CHECK(message(ops::matmul_out(sq, sq, sq)) == "ops.matmul_out: the output overlaps argument 0; it must not");
  CHECK(message(ops::matmul(f32, f32)) == "ops.matmul: shapes [2, 3] and [2, 3] do not match (3 columns against 2 rows)");
  CHECK(message(ops::matmul(make<float>({1}, {}), f32)) == "ops.matmul: matmul needs operands of at least 1 dimension");
  CHECK(message(ops::dense(f32, make<float>({1, 2, 3}, {3}))) ==
        "ops.dense: expects x of at least 1 dimension and a 2-d weight, but got [2, 3] and [3]");
  CHECK(message(ops::dense(f32, sq)) == "ops.dense: x has 3 features but the weight [2, 2] expects 2");
  rv::tensor w = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  rv::tensor bias3 = make<float>({1, 2, 3}, {3});
  CHECK(message(ops::dense(f32, w, &bias3)) == "ops.dense: the bias has shape [3]; expected [2]");
  CHECK(message(ops::sum(f32, 2)) == "ops.sum: axis 2 is out of range for 2 dimensions");
  CHECK(message(ops::softmax(f32, -3)) == "ops.softmax: axis -3 is out of range for 2 dimensions");
  CHECK(message(ops::sum_out(f32, 1, rv::tensor::empty({3}, rv::dtype::float32()))) ==
        "ops.sum_out: the output (argument 2) has shape [3] but the result has shape [2]");
}

TEST_CASE("the registered kernels, through the VM") {
  rv::registry reg;
  ops::register_all(reg);
  for (const char* name : {"ops.add", "ops.subtract", "ops.multiply", "ops.divide", "ops.maximum", "ops.relu", "ops.gelu",
                           "ops.sigmoid", "ops.matmul", "ops.dense", "ops.softmax", "ops.sum", "ops.mean"}) {
    CHECK(reg.contains(name));
    CHECK(reg.contains(std::string(name) + "_out"));
  }
  rv::exec_builder b;
  {
    auto fn = b.function("main", 3);  // main(x, w, bias) = softmax(relu(dense(x, w, bias)))
    b.emit_call("ops.dense", {b.r(0), b.r(1), b.r(2)}, b.r(3));
    b.emit_call("ops.relu_out", {b.r(3), b.r(3)});
    b.emit_call("ops.softmax", {b.r(3), b.imm(-1)}, b.r(4));
    b.emit_call("ops.sum", {b.r(4), b.imm(1), b.c(b.add_bool(true))}, b.r(5));
    b.emit_call("vm.builtin.make_tuple", {b.r(4), b.r(5)}, b.r(6));
    b.emit_ret(b.r(6));
  }
  rv::virtual_machine vm(b.get(), reg);
  rv::tensor x = make<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  rv::tensor w = make<double>({1, 0, 0, 0, 1, 0}, {2, 3});
  rv::tensor bias = make<double>({0, 0}, {2});
  rv::tuple r = vm.invoke("main", {x, w, bias}).as<rv::tuple>();
  const double e = std::exp(1.0);
  CHECK(close<double>(r[0].as<rv::tensor>(), {1 / (1 + e), e / (1 + e), 1 / (1 + e), e / (1 + e)}));
  CHECK(r[1].as<rv::tensor>().shape() == rv::shape{2, 1});
  CHECK(close<double>(r[1].as<rv::tensor>(), {1, 1}));
  // Errors come back through the VM with the kernel's message.
  probe dense("ops.dense_out", 4, false, {}, &ops::register_all);
  rv::tensor out = rv::tensor::empty({2, 2}, rv::dtype::float64());
  dense.ok({x, w, bias, out});
  CHECK(dense.fails({x, w, bias, rv::tensor::empty({2, 3}, rv::dtype::float64())}, rv::error_kind::value) ==
        "ops.dense_out: the output (argument 3) has shape [2, 3] but the result has shape [2, 2]");
  CHECK(dense.fails({x, w, 5, out}, rv::error_kind::type) == "ops.dense_out: the bias must be a tensor, but got int64 5");
  probe sm("ops.softmax", 2, false, {}, &ops::register_all);
  CHECK(sm.fails({x, 2.0}, rv::error_kind::type) == "ops.softmax: expects (x, [axis])");
}

TEST_CASE_TEMPLATE("zero-length dimensions give empty or zero results", T, float, double) {
  rv::tensor none = rv::tensor::empty({0, 3}, rv::dtype_of<T>());
  CHECK((*ops::softmax(none)).shape() == rv::shape{0, 3});
  CHECK((*ops::softmax(rv::tensor::empty({2, 0}, rv::dtype_of<T>()))).numel() == 0);
  CHECK((*ops::sum(none, 0)).shape() == rv::shape{3});
  CHECK(close<T>(*ops::sum(none, 0), {0, 0, 0}));  // the sum of nothing
  CHECK((*ops::sum(none, 1)).shape() == rv::shape{0});
  rv::tensor m = *ops::mean(none, 0);
  for (std::int64_t i = 0; i < 3; ++i) CHECK(std::isnan(static_cast<double>(m.data<const T>()[i])));  // NumPy's 0/0
  rv::tensor k0a = rv::tensor::empty({2, 0}, rv::dtype_of<T>()), k0b = rv::tensor::empty({0, 3}, rv::dtype_of<T>());
  CHECK(close<T>(*ops::matmul(k0a, k0b), {0, 0, 0, 0, 0, 0}));  // inner dimension 0: zeros
  CHECK((*ops::matmul(k0b, make<T>({1, 2, 3}, {3}))).shape() == rv::shape{0});
  rv::tensor w = rv::tensor::empty({4, 0}, rv::dtype_of<T>());
  CHECK(close<T>(*ops::dense(k0a, w), std::vector<double>(8, 0.0)));
  CHECK((*ops::add(none, make<T>({1, 2, 3}, {3}))).shape() == rv::shape{0, 3});
}

TEST_CASE("the ops refuse tensors they cannot read or write safely") {
  alignas(8) static float buffer[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  rv::tensor odd = *rv::tensor::try_view(reinterpret_cast<char*>(buffer) + 1, {2}, rv::dtype::float32(), rv::device::cpu(), {}, false);
  CHECK(message(ops::relu(odd)) == "ops.relu: argument 0's data is not aligned for float32");
  rv::tensor gpu = *rv::tensor::try_view(buffer, {2}, rv::dtype::float32(), rv::device(kDLCUDA, 0), {}, false);
  CHECK(message(ops::add(gpu, gpu)) == "ops.add: argument 0 is on cuda:0");
  rv::tensor fine = make<float>({1, 2}, {2});
  CHECK(message(ops::add(fine, gpu)) == "ops.add: argument 1 is on cuda:0");
  rv::tensor frozen = *rv::tensor::try_view(buffer, {2}, rv::dtype::float32(), rv::device::cpu(), {}, true);
  CHECK(ops::relu(frozen).ok());  // reading is fine
  CHECK(message(ops::relu_out(fine, frozen)) == "ops.relu_out: the output (argument 1) is read-only");
  CHECK(buffer[0] == 1.0f);
  rv::tensor strided = relaxvm_test::column_major_2x2();
  CHECK(message(ops::matmul(strided, strided)) == "ops.matmul: argument 0 is strided; the ops take compact tensors");
  CHECK(message(ops::sum(strided, 0)) == "ops.sum: argument 0 is strided; the ops take compact tensors");
}

TEST_CASE("the registered wrappers check their arity") {
  rv::tensor x = make<double>({1, 2, 3, 4}, {2, 2});
  probe sum("ops.sum", 4, false, {}, &ops::register_all);
  CHECK(sum.fails({x, 1, true, 5}, rv::error_kind::type) == "ops.sum: expects (x, axis, [keepdims])");
  probe sum1("ops.sum", 1, false, {}, &ops::register_all);
  CHECK(sum1.fails({x}, rv::error_kind::type) == "ops.sum: expects at least 2 arguments but got 1");
  probe dense("ops.dense_out", 2, false, {}, &ops::register_all);
  CHECK(dense.fails({x, x}, rv::error_kind::type) == "ops.dense_out: expects (x, weight, [bias,] out)");
  probe dense5("ops.dense", 4, false, {}, &ops::register_all);
  CHECK(dense5.fails({x, x, x, x}, rv::error_kind::type) == "ops.dense: expects (x, weight, [bias])");
  probe add("ops.add", 1, false, {}, &ops::register_all);
  CHECK(relaxvm_test::contains(add.fails({x}, rv::error_kind::type), "ops.add"));
}
