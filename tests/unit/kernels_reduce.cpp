// SPDX-License-Identifier: Apache-2.0
// relaxvm/kernels/reduce.hpp, normalization.hpp and linalg.hpp: what ONNX's backend data does not
// reach: every dtype, negative and repeated axes, empty tensors, broadcasting, blocked products
// at sizes around the block edges against a plain loop, and bad arguments naming the op.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <relaxvm.hpp>
#include <relaxvm/kernels/elementwise.hpp>
#include <relaxvm/kernels/linalg.hpp>
#include <relaxvm/kernels/normalization.hpp>
#include <relaxvm/kernels/reduce.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace k = relaxvm::kernels;

namespace {

template <class T>
rv::dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) return rv::dtype::float32();
  else if constexpr (std::is_same_v<T, double>) return rv::dtype::float64();
  else if constexpr (std::is_same_v<T, std::int8_t>) return rv::dtype::int8();
  else if constexpr (std::is_same_v<T, std::int32_t>) return rv::dtype::int32();
  else if constexpr (std::is_same_v<T, std::int64_t>) return rv::dtype::int64();
  else if constexpr (std::is_same_v<T, std::uint8_t>) return rv::dtype::uint8();
  else if constexpr (std::is_same_v<T, std::uint32_t>) return rv::dtype::uint32();
  else return rv::dtype::uint64();
}

template <class T>
rv::tensor make(std::vector<std::int64_t> dims, std::vector<T> values) {
  rv::tensor t = rv::tensor::try_empty(rv::shape(std::span<const std::int64_t>(dims)), dtype_of<T>()).value();
  REQUIRE(static_cast<std::size_t>(t.numel()) == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}
template <class T>
rv::tensor empty(std::vector<std::int64_t> dims) {
  return rv::tensor::try_empty(rv::shape(std::span<const std::int64_t>(dims)), dtype_of<T>()).value();
}
template <class T>
std::vector<T> values(const rv::tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}
std::string message(const rv::status& s) { return s.ok() ? std::string() : std::string(s.error().message()); }

rv::tensor iota_f(std::vector<std::int64_t> dims, float scale = 1.0f) {
  rv::tensor t = empty<float>(dims);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::sin(static_cast<float>(i) * 0.7f) * scale;
  return t;
}

}  // namespace

TEST_CASE("Reduce*: axes, keepdims, negative axes, all axes, every dtype") {
  const rv::tensor x = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  rv::tensor o = empty<float>({2});
  REQUIRE(k::ReduceSum_out(x, rv::shape{1}, 0, 0, o).ok());
  CHECK(values<float>(o) == std::vector<float>{6, 15});
  rv::tensor o1 = empty<float>({1, 3});
  REQUIRE(k::ReduceMax_out(x, rv::shape{-2}, 1, 0, o1).ok());
  CHECK(values<float>(o1) == std::vector<float>{4, 5, 6});
  rv::tensor all = empty<float>({1, 1});
  REQUIRE(k::ReduceProd_out(x, rv::shape{}, 1, 0, all).ok());  // no axes: all of them
  CHECK(values<float>(all)[0] == 720);
  rv::tensor same = empty<float>({2, 3});  // noop_with_empty_axes: elementwise (square here)
  REQUIRE(k::ReduceSumSquare_out(x, rv::shape{}, 1, 1, same).ok());
  CHECK(values<float>(same) == std::vector<float>{1, 4, 9, 16, 25, 36});
  rv::tensor scalar = empty<float>({});
  REQUIRE(k::ReduceL2_out(x, rv::shape{0, 1}, 0, 0, scalar).ok());
  CHECK(values<float>(scalar)[0] == doctest::Approx(std::sqrt(91.0)));
  REQUIRE(k::ReduceLogSumExp_out(x, rv::shape{1, 0}, 0, 0, scalar).ok());
  CHECK(values<float>(scalar)[0] == doctest::Approx(6.456193));
  REQUIRE(k::ReduceLogSum_out(x, rv::shape{}, 0, 0, scalar).ok());
  CHECK(values<float>(scalar)[0] == doctest::Approx(std::log(21.0)));
  REQUIRE(k::ReduceMean_out(x, rv::shape{0}, 0, 0, empty<float>({3})).ok());

  // Middle axes of a 4-d input (merged dims and strided reduction) against a plain loop.
  const rv::tensor y = iota_f({2, 3, 4, 5});
  rv::tensor m = empty<float>({2, 1, 1, 5});
  REQUIRE(k::ReduceMean_out(y, rv::shape{1, 2}, 1, 0, m).ok());
  for (int a = 0; a < 2; ++a)
    for (int d = 0; d < 5; ++d) {
      double s = 0;
      for (int b = 0; b < 3; ++b)
        for (int c = 0; c < 4; ++c) s += y.data<float>()[((a * 3 + b) * 4 + c) * 5 + d];
      CHECK(m.data<float>()[a * 5 + d] == doctest::Approx(s / 12).epsilon(1e-5));
    }

  // Integers: sums wrap like the type, means truncate toward zero, L1 of negatives.
  const rv::tensor i8 = make<std::int8_t>({3}, {100, 100, -7});
  rv::tensor i8o = empty<std::int8_t>({});
  REQUIRE(k::ReduceSum_out(i8, rv::shape{}, 0, 0, i8o).ok());
  CHECK(values<std::int8_t>(i8o)[0] == static_cast<std::int8_t>(193));
  const rv::tensor i32 = make<std::int32_t>({2, 2}, {-3, -4, 5, 6});
  rv::tensor i32o = empty<std::int32_t>({2});
  REQUIRE(k::ReduceMean_out(i32, rv::shape{1}, 0, 0, i32o).ok());
  CHECK(values<std::int32_t>(i32o) == std::vector<std::int32_t>{-3, 5});
  REQUIRE(k::ReduceL1_out(i32, rv::shape{1}, 0, 0, i32o).ok());
  CHECK(values<std::int32_t>(i32o) == std::vector<std::int32_t>{7, 11});
  REQUIRE(k::ReduceMin_out(i32, rv::shape{0}, 0, 0, i32o).ok());
  CHECK(values<std::int32_t>(i32o) == std::vector<std::int32_t>{-3, -4});
  const rv::tensor u64 = make<std::uint64_t>({2}, {3, 4});
  rv::tensor u64o = empty<std::uint64_t>({1});
  REQUIRE(k::ReduceProd_out(u64, rv::shape{0}, 1, 0, u64o).ok());
  CHECK(values<std::uint64_t>(u64o)[0] == 12);
  const rv::tensor f64 = make<double>({2}, {1.5, -2.5});
  rv::tensor f64o = empty<double>({});
  REQUIRE(k::ReduceL1_out(f64, rv::shape{0}, 0, 0, f64o).ok());
  CHECK(values<double>(f64o)[0] == 4.0);
  // NaN propagates through max.
  const rv::tensor nan = make<float>({2}, {1, NAN});
  rv::tensor no = empty<float>({});
  REQUIRE(k::ReduceMax_out(nan, rv::shape{0}, 0, 0, no).ok());
  CHECK(std::isnan(values<float>(no)[0]));
}

TEST_CASE("Reduce*: empty inputs and bad arguments") {
  const rv::tensor e = empty<float>({0, 3});
  rv::tensor s = empty<float>({3});
  REQUIRE(k::ReduceSum_out(e, rv::shape{0}, 0, 0, s).ok());
  CHECK(values<float>(s) == std::vector<float>{0, 0, 0});
  REQUIRE(k::ReduceProd_out(e, rv::shape{0}, 0, 0, s).ok());
  CHECK(values<float>(s) == std::vector<float>{1, 1, 1});
  REQUIRE(k::ReduceMax_out(e, rv::shape{0}, 0, 0, s).ok());
  CHECK(std::isinf(values<float>(s)[0]));
  rv::tensor none = empty<float>({0});
  CHECK(k::ReduceSum_out(e, rv::shape{1}, 0, 0, none).ok());

  const rv::tensor x = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(message(k::ReduceSum_out(x, rv::shape{2}, 0, 0, empty<float>({2}))) == "onnx.ReduceSum: axis 2 is outside [-2, 1]");
  CHECK(message(k::ReduceSum_out(x, rv::shape{1, -1}, 0, 0, empty<float>({2}))) == "onnx.ReduceSum: axis -1 is repeated");
  CHECK(message(k::ReduceMean_out(x, rv::shape{1}, 0, 0, empty<float>({3}))).find("onnx.ReduceMean: the output (argument 4) has shape") == 0);
  CHECK(message(k::ReduceMean_out(x, rv::shape{1}, 0, 0, empty<double>({2}))).find("onnx.ReduceMean: the output (argument 4) is float64") == 0);
  CHECK(message(k::ReduceMean_out(x, rv::shape{1}, 0, 0, x)).find("onnx.ReduceMean: the output") == 0);
  const rv::tensor b = rv::tensor::try_empty(rv::shape{2}, rv::dtype::bool_()).value();
  CHECK(message(k::ReduceSum_out(b, rv::shape{}, 0, 0, empty<float>({}))).find("onnx.ReduceSum: argument 0 has dtype bool") == 0);
}

TEST_CASE("ArgMax, ArgMin: ties, select_last_index, keepdims, negative axis") {
  const rv::tensor x = make<float>({2, 3}, {1, 3, 3, 2, 0, 0});
  rv::tensor o = empty<std::int64_t>({2});
  REQUIRE(k::ArgMax_out(x, -1, 0, 0, o).ok());
  CHECK(values<std::int64_t>(o) == std::vector<std::int64_t>{1, 0});
  REQUIRE(k::ArgMax_out(x, 1, 0, 1, o).ok());
  CHECK(values<std::int64_t>(o) == std::vector<std::int64_t>{2, 0});
  REQUIRE(k::ArgMin_out(x, 1, 0, 1, o).ok());
  CHECK(values<std::int64_t>(o) == std::vector<std::int64_t>{0, 2});
  rv::tensor ok = empty<std::int64_t>({1, 3});
  REQUIRE(k::ArgMin_out(x, 0, 1, 0, ok).ok());
  CHECK(values<std::int64_t>(ok) == std::vector<std::int64_t>{0, 1, 1});
  const rv::tensor u = make<std::uint8_t>({3}, {4, 9, 9});
  rv::tensor uo = empty<std::int64_t>({});
  REQUIRE(k::ArgMax_out(u, 0, 0, 0, uo).ok());
  CHECK(values<std::int64_t>(uo)[0] == 1);
  CHECK(message(k::ArgMax_out(x, 2, 0, 0, o)) == "onnx.ArgMax: axis 2 is outside [-2, 1]");
  CHECK(message(k::ArgMax_out(x, 1, 0, 0, empty<std::int32_t>({2}))).find("onnx.ArgMax: the output (argument 4) is int32") == 0);
  CHECK(message(k::ArgMax_out(empty<float>({0}), 0, 0, 0, empty<std::int64_t>({}))).find("onnx.ArgMax: the axis is empty") == 0);
}

TEST_CASE("Softmax, LogSoftmax, Hardmax along inner and outer axes") {
  const rv::tensor x = make<double>({2, 2}, {0, 1, 2, 4});
  rv::tensor o = empty<double>({2, 2});
  REQUIRE(k::Softmax_out(x, 0, o).ok());  // along the outer axis: strided lines
  CHECK(o.data<double>()[0] == doctest::Approx(1 / (1 + std::exp(2.0))));
  CHECK(o.data<double>()[3] == doctest::Approx(1 / (1 + std::exp(-3.0))));
  REQUIRE(k::LogSoftmax_out(x, -1, o).ok());
  CHECK(o.data<double>()[1] == doctest::Approx(-std::log1p(std::exp(-1.0))));
  const rv::tensor big = make<float>({3}, {1000, 1000, -1000});  // no overflow
  rv::tensor bo = empty<float>({3});
  REQUIRE(k::Softmax_out(big, 0, bo).ok());
  CHECK(values<float>(bo)[0] == doctest::Approx(0.5));
  const rv::tensor h = make<float>({2, 3}, {1, 5, 5, 7, 0, 7});
  rv::tensor ho = empty<float>({2, 3});
  REQUIRE(k::Hardmax_out(h, 1, ho).ok());
  CHECK(values<float>(ho) == std::vector<float>{0, 1, 0, 1, 0, 0});
  REQUIRE(k::Softmax_out(empty<float>({0, 3}), 1, empty<float>({0, 3})).ok());
  CHECK(message(k::Softmax_out(make<std::int32_t>({1}, {1}), 0, empty<std::int32_t>({1}))).find("onnx.Softmax: argument 0 has dtype int32") == 0);
  CHECK(message(k::Softmax_out(x, 2, o)) == "onnx.Softmax: axis 2 is outside [-2, 1]");
}

TEST_CASE("TopK: largest and smallest, ties by index, k = 0, strided axis") {
  const rv::tensor x = make<float>({2, 4}, {3, 1, 3, 2, 0, 9, 8, 9});
  rv::tensor v = empty<float>({2, 2});
  rv::tensor i = empty<std::int64_t>({2, 2});
  REQUIRE(k::TopK_out(x, 1, 1, 1, v, i).ok());
  CHECK(values<float>(v) == std::vector<float>{3, 3, 9, 9});
  CHECK(values<std::int64_t>(i) == std::vector<std::int64_t>{0, 2, 1, 3});
  REQUIRE(k::TopK_out(x, -1, 0, 1, v, i).ok());
  CHECK(values<float>(v) == std::vector<float>{1, 2, 0, 8});
  CHECK(values<std::int64_t>(i) == std::vector<std::int64_t>{1, 3, 0, 2});
  rv::tensor v0 = empty<float>({1, 4});
  rv::tensor i0 = empty<std::int64_t>({1, 4});
  REQUIRE(k::TopK_out(x, 0, 1, 1, v0, i0).ok());
  CHECK(values<float>(v0) == std::vector<float>{3, 9, 8, 9});
  CHECK(values<std::int64_t>(i0) == std::vector<std::int64_t>{0, 1, 1, 1});
  REQUIRE(k::TopK_out(x, 1, 1, 1, empty<float>({2, 0}), empty<std::int64_t>({2, 0})).ok());
  const rv::tensor xi = make<std::int64_t>({3}, {5, -1, 7});
  rv::tensor vi = empty<std::int64_t>({1});
  rv::tensor ii = empty<std::int64_t>({1});
  REQUIRE(k::TopK_out(xi, 0, 0, 1, vi, ii).ok());
  CHECK(values<std::int64_t>(vi)[0] == -1);
  CHECK(message(k::TopK_out(x, 1, 1, 1, empty<float>({2, 5}), empty<std::int64_t>({2, 5}))) == "onnx.TopK: k (5) must be in [0, 4]");
  CHECK(message(k::TopK_out(x, 1, 1, 1, empty<float>({2, 2}), empty<std::int32_t>({2, 2}))).find("onnx.TopK: the output (argument 5) is int32") == 0);
}

TEST_CASE("BatchNormalization, InstanceNormalization, LRN, MeanVarianceNormalization") {
  const rv::tensor x = make<float>({1, 2, 2}, {1, 3, 10, 20});
  const rv::tensor scale = make<float>({2}, {2, 1}), bias = make<float>({2}, {0, 1});
  const rv::tensor mean = make<float>({2}, {2, 10}), var = make<float>({2}, {4, 100});
  rv::tensor o = empty<float>({1, 2, 2});
  REQUIRE(k::BatchNormalization_out(x, scale, bias, mean, var, 0.0, o).ok());
  CHECK(values<float>(o) == std::vector<float>{-1, 1, 1, 2});
  CHECK(message(k::BatchNormalization_out(x, scale, make<float>({3}, {0, 0, 0}), mean, var, 0.0, o)) ==
        "onnx.BatchNormalization: argument 2 has shape [3] but must be [2] (one per channel)");
  CHECK(message(k::BatchNormalization_out(make<float>({2}, {1, 2}), scale, bias, mean, var, 0.0, empty<float>({2}))).find(
            "onnx.BatchNormalization: the input must have at least 2 dims") == 0);

  REQUIRE(k::InstanceNormalization_out(x, scale, bias, 0.0, o).ok());
  CHECK(values<float>(o) == std::vector<float>{-2, 2, 0, 2});

  const rv::tensor c4 = make<double>({1, 4, 1}, {1, 2, 3, 4});
  rv::tensor lo = empty<double>({1, 4, 1});
  REQUIRE(k::LRN_out(c4, 1.0, 1.0, 1.0, 3, lo).ok());
  CHECK(lo.data<double>()[0] == doctest::Approx(1 / (1 + 5.0 / 3)));
  CHECK(lo.data<double>()[3] == doctest::Approx(4 / (1 + 25.0 / 3)));
  CHECK(message(k::LRN_out(c4, 1.0, 1.0, 1.0, 0, lo)) == "onnx.LRN: size must be at least 1, but is 0");

  rv::tensor mo = empty<double>({1, 4, 1});
  REQUIRE(k::MeanVarianceNormalization_out(c4, rv::shape{1}, mo).ok());
  CHECK(mo.data<double>()[0] == doctest::Approx(-1.5 / std::sqrt(1.25)));
  CHECK(mo.data<double>()[3] == doctest::Approx(1.5 / std::sqrt(1.25)));
}

TEST_CASE("LayerNormalization: axis, broadcast scale, absent bias, statistics") {
  const rv::tensor x = make<float>({2, 2}, {1, 3, 2, 4});
  rv::tensor y = empty<float>({2, 2}), mean = empty<float>({2, 1}), inv = empty<float>({2, 1});
  REQUIRE(k::LayerNormalization_out(x, make<float>({1}, {2}), rv::tensor(), -1, 0.0, y, mean, inv).ok());
  CHECK(values<float>(y) == std::vector<float>{-2, 2, -2, 2});
  CHECK(values<float>(mean) == std::vector<float>{2, 3});
  CHECK(values<float>(inv) == std::vector<float>{1, 1});
  rv::tensor y0 = empty<float>({2, 2}), m0 = empty<float>({1, 1}), i0 = empty<float>({1, 1});
  REQUIRE(k::LayerNormalization_out(x, make<float>({2, 1}, {1, 1}), make<float>({2}, {0, 10}), 0, 0.0, y0, m0, i0).ok());
  CHECK(values<float>(m0)[0] == 2.5f);
  CHECK(y0.data<float>()[1] == doctest::Approx(10 + 0.5 / std::sqrt(1.25)));
  CHECK(message(k::LayerNormalization_out(x, make<float>({3}, {1, 1, 1}), rv::tensor(), 1, 0.0, y, mean, inv)).find(
            "onnx.LayerNormalization: argument 1 has shape [3], which does not broadcast") == 0);
}

namespace {
template <class T>
void check_product(std::int64_t m, std::int64_t kk, std::int64_t n, bool ta, bool tb) {
  rv::tensor a = empty<T>(ta ? std::vector<std::int64_t>{kk, m} : std::vector<std::int64_t>{m, kk});
  rv::tensor b = empty<T>(tb ? std::vector<std::int64_t>{n, kk} : std::vector<std::int64_t>{kk, n});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.data<T>()[i] = static_cast<T>((i * 7) % 11) - static_cast<T>(4);
  for (std::int64_t i = 0; i < b.numel(); ++i) b.data<T>()[i] = static_cast<T>((i * 5) % 13) - static_cast<T>(6);
  const rv::tensor c = empty<T>({n});
  for (std::int64_t j = 0; j < n; ++j) c.data<T>()[j] = static_cast<T>(j % 3);
  rv::tensor out = empty<T>({m, n});
  REQUIRE(k::Gemm_out(a, b, c, 2.0, 3.0, ta, tb, out).ok());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      T s = T(0);
      for (std::int64_t p = 0; p < kk; ++p)
        s += a.data<T>()[ta ? p * m + i : i * kk + p] * b.data<T>()[tb ? j * kk + p : p * n + j];
      CHECK(out.data<T>()[i * n + j] == T(2) * s + T(3) * static_cast<T>(j % 3));
    }
}
}  // namespace

TEST_CASE("Gemm: every transpose, sizes around the blocks, integer and float types") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check_product<float>(9, 130, 33, ta, tb);   // values are small integers: exact in float
      check_product<double>(1, 17, 70, ta, tb);
      check_product<std::int32_t>(5, 3, 2, ta, tb);
      check_product<std::int64_t>(0, 3, 2, ta, tb);
      // Each path of the product (gemm.hpp): a row or two (batch 1), a few rows, the packed panels
      // with every remainder of rows and columns, K over one panel's rows (256).
      for (std::int64_t m : {1, 2, 3, 7, 16})
        for (std::int64_t n : {1, 10, 37, 130}) check_product<float>(m, 300, n, ta, tb);
    }
  const rv::tensor a = make<float>({2, 2}, {1, 2, 3, 4});
  rv::tensor out = empty<float>({2, 2});
  REQUIRE(k::Gemm_out(a, a, make<float>({2, 1}, {1, 2}), 1.0, 1.0, 0, 0, out).ok());  // C of (M, 1)
  CHECK(values<float>(out) == std::vector<float>{8, 11, 17, 24});
  REQUIRE(k::Gemm_out(a, a, make<float>({}, {1}), 1.0, 0.0, 0, 0, out).ok());  // beta = 0 ignores C
  CHECK(values<float>(out) == std::vector<float>{7, 10, 15, 22});
  REQUIRE(k::Gemm_out(a, a, rv::tensor(), 1.0, 1.0, 0, 0, out).ok());
  CHECK(message(k::Gemm_out(a, a, make<float>({3}, {1, 2, 3}), 1.0, 1.0, 0, 0, out)) == "onnx.Gemm: C [3] does not broadcast to [2, 2]");
  CHECK(message(k::Gemm_out(a, make<float>({3, 1}, {1, 2, 3}), rv::tensor(), 1.0, 1.0, 0, 0, out)) == "onnx.Gemm: A' is 2 x 2 but B' is 3 x 1");
  CHECK(message(k::Gemm_out(a, make<double>({2, 2}, {1, 2, 3, 4}), rv::tensor(), 1.0, 1.0, 0, 0, out)).find("onnx.Gemm: argument 1 is float64") == 0);
}

TEST_CASE("MatMul: 1-d operands, broadcast batches, empty dims") {
  const rv::tensor v = make<float>({2}, {1, 2});
  const rv::tensor m = make<float>({2, 2}, {1, 2, 3, 4});
  rv::tensor o = empty<float>({2});
  REQUIRE(k::MatMul_out(v, m, o).ok());
  CHECK(values<float>(o) == std::vector<float>{7, 10});
  REQUIRE(k::MatMul_out(m, v, o).ok());
  CHECK(values<float>(o) == std::vector<float>{5, 11});
  rv::tensor s = empty<float>({});
  REQUIRE(k::MatMul_out(v, v, s).ok());
  CHECK(values<float>(s)[0] == 5);
  const rv::tensor batch = make<float>({2, 1, 1, 2}, {1, 0, 0, 1});  // (2, 1) batch against (3) of b
  rv::tensor b3 = empty<float>({3, 2, 2});
  for (int i = 0; i < 12; ++i) b3.data<float>()[i] = static_cast<float>(i);
  rv::tensor bo = empty<float>({2, 3, 1, 2});
  REQUIRE(k::MatMul_out(batch, b3, bo).ok());
  CHECK(values<float>(bo) == std::vector<float>{0, 1, 4, 5, 8, 9, 2, 3, 6, 7, 10, 11});
  const rv::tensor i64 = make<std::int64_t>({1, 2}, {2, 3});
  rv::tensor io = empty<std::int64_t>({1, 1});
  REQUIRE(k::MatMul_out(i64, make<std::int64_t>({2, 1}, {4, 5}), io).ok());
  CHECK(values<std::int64_t>(io)[0] == 23);
  rv::tensor z = empty<float>({2, 3});
  REQUIRE(k::MatMul_out(empty<float>({2, 0}), empty<float>({0, 3}), z).ok());
  CHECK(values<float>(z) == std::vector<float>(6, 0.0f));
  CHECK(message(k::MatMul_out(m, make<float>({3}, {1, 2, 3}), o)) == "onnx.MatMul: shapes [2, 2] and [3] do not match (2 columns against 3 rows)");
  CHECK(message(k::MatMul_out(make<float>({2, 1, 2}, {1, 2, 3, 4}), empty<float>({3, 2, 1}), empty<float>({3, 1, 1})))
            .find("onnx.MatMul: the batch dims") == 0);
  CHECK(message(k::MatMul_out(m, m, m)).find("onnx.MatMul: the output overlaps argument 0") == 0);
}

TEST_CASE("Einsum: labels as numbers, diagonals, sums, one operand") {
  const rv::tensor m = make<double>({2, 2}, {1, 2, 3, 4});
  rv::tensor t = empty<double>({2, 2});
  REQUIRE(k::Einsum_out(m, rv::tensor(), rv::shape{0, 1}, rv::shape{}, rv::shape{1, 0}, t).ok());  // ij->ji
  CHECK(values<double>(t) == std::vector<double>{1, 3, 2, 4});
  rv::tensor d = empty<double>({2});
  REQUIRE(k::Einsum_out(m, rv::tensor(), rv::shape{0, 0}, rv::shape{}, rv::shape{0}, d).ok());  // ii->i
  CHECK(values<double>(d) == std::vector<double>{1, 4});
  rv::tensor s = empty<double>({});
  REQUIRE(k::Einsum_out(m, m, rv::shape{0, 1}, rv::shape{0, 1}, rv::shape{}, s).ok());  // ij,ij->
  CHECK(values<double>(s)[0] == 30);
  rv::tensor p = empty<double>({2, 2});
  REQUIRE(k::Einsum_out(m, m, rv::shape{0, 1}, rv::shape{1, 2}, rv::shape{0, 2}, p).ok());  // ij,jk->ik
  CHECK(values<double>(p) == std::vector<double>{7, 10, 15, 22});
  CHECK(message(k::Einsum_out(m, make<double>({3}, {1, 2, 3}), rv::shape{0, 1}, rv::shape{1}, rv::shape{0}, d)) ==
        "onnx.Einsum: label 1 has dims 2 and 3");
  CHECK(message(k::Einsum_out(m, rv::tensor(), rv::shape{0}, rv::shape{}, rv::shape{0}, d)) == "onnx.Einsum: operand 0 has 2 dims but 1 labels");
  CHECK(message(k::Einsum_out(m, rv::tensor(), rv::shape{0, 1}, rv::shape{}, rv::shape{2}, d)) == "onnx.Einsum: output label 2 is in no operand");
}

// ONNX's integers wrap (two's complement, as NumPy's do); in C++ a signed overflow is undefined,
// which UBSan (the clang build) stops at. Each product and sum that can overflow is checked against
// the same sum computed in uint64.
TEST_CASE("MatMul, Gemm and Einsum on integers wrap; float attributes saturate on integers; 8- and 16-bit products are refused") {
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const auto wrap = [](std::initializer_list<std::int64_t> terms) {
    std::uint64_t s = 0;
    for (std::int64_t t : terms) s += static_cast<std::uint64_t>(t);
    return static_cast<std::int64_t>(s);
  };
  const auto mul = [](std::int64_t a, std::int64_t b) { return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b)); };
  // Enough rows for every path of the product (dot products, a few rows, the packed panels).
  for (std::int64_t m : {1, 2, 8}) {
    std::vector<std::int64_t> av, bv = {big, 3, big, -5};
    for (std::int64_t i = 0; i < m; ++i) av.insert(av.end(), {big - i, 2});
    rv::tensor o = empty<std::int64_t>({m, 2});
    REQUIRE(k::MatMul_out(make<std::int64_t>({m, 2}, av), make<std::int64_t>({2, 2}, bv), o).ok());
    for (std::int64_t i = 0; i < m; ++i) {
      CHECK(values<std::int64_t>(o)[static_cast<std::size_t>(2 * i)] == wrap({mul(big - i, big), mul(2, big)}));
      CHECK(values<std::int64_t>(o)[static_cast<std::size_t>(2 * i + 1)] == wrap({mul(big - i, 3), mul(2, -5)}));
    }
  }
  const rv::tensor i32 = make<std::int32_t>({1, 2}, {std::numeric_limits<std::int32_t>::max(), 1});
  rv::tensor o32 = empty<std::int32_t>({1, 1});
  REQUIRE(k::MatMul_out(i32, make<std::int32_t>({2, 1}, {2, 1}), o32).ok());
  CHECK(values<std::int32_t>(o32)[0] == static_cast<std::int32_t>(0xFFFFFFFFu));  // 2 * (2^31 - 1) + 1 wraps to -1

  // Gemm: alpha and beta are floats; on integers they convert as Cast does (truncated, saturated).
  rv::tensor g = empty<std::int32_t>({1, 1});
  REQUIRE(k::Gemm_out(i32, make<std::int32_t>({2, 1}, {2, 1}), make<std::int32_t>({}, {5}), 1e30, -1e30, 0, 0, g).ok());
  const std::uint32_t mx = 0x7FFFFFFFu, mn = 0x80000000u;
  CHECK(values<std::int32_t>(g)[0] == static_cast<std::int32_t>(mx * 0xFFFFFFFFu + mn * 5u));
  REQUIRE(k::Gemm_out(i32, make<std::int32_t>({2, 1}, {2, 1}), make<std::int32_t>({}, {5}), std::nan(""), 2.9, 0, 0, g).ok());
  CHECK(values<std::int32_t>(g)[0] == 10);  // alpha NaN is 0, beta 2.9 is 2

  // Einsum: "ij,ij->" with int8: the sum wraps in int8.
  const rv::tensor e8 = make<std::int8_t>({1, 2}, {100, 100});
  rv::tensor es = empty<std::int8_t>({});
  REQUIRE(k::Einsum_out(e8, e8, rv::shape{0, 1}, rv::shape{0, 1}, rv::shape{}, es).ok());
  CHECK(values<std::int8_t>(es)[0] == static_cast<std::int8_t>(20000u & 0xFFu));

  // Shrink's bias is a float: on integers the result saturates (and a NaN is 0), as Cast's would.
  rv::tensor sh = empty<std::int64_t>({3});
  REQUIRE(k::Shrink_out(make<std::int64_t>({3}, {-5, 0, 5}), 1e30, 1.0, sh).ok());
  CHECK(values<std::int64_t>(sh) == std::vector<std::int64_t>{big, 0, std::numeric_limits<std::int64_t>::min()});

  // MatMul and Gemm take the 32- and 64-bit integers ONNX defines them for.
  const rv::tensor u8 = make<std::uint8_t>({1, 1}, {2});
  rv::tensor u8o = empty<std::uint8_t>({1, 1});
  CHECK(message(k::MatMul_out(u8, u8, u8o)) == "onnx.MatMul: argument 0 has dtype uint8, which this kernel does not take");
  CHECK(message(k::Gemm_out(u8, u8, rv::tensor(), 1.0, 1.0, 0, 0, u8o)) == "onnx.Gemm: argument 0 has dtype uint8, which this kernel does not take");
}
