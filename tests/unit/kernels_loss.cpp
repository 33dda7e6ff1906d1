// SPDX-License-Identifier: Apache-2.0
// relaxvm/kernels/loss.hpp: what ONNX's backend data does not reach: int32 targets and float64
// inputs, a mean whose targets are all ignored (0 / 0, NaN, as ONNX's reference), targets out of
// range, and bad shapes, weights and reductions naming the op.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <relaxvm.hpp>
#include <relaxvm/kernels/loss.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace k = relaxvm::kernels;

namespace {

template <class T>
rv::dtype loss_dtype() {
  if constexpr (std::is_same_v<T, float>) return rv::dtype::float32();
  else if constexpr (std::is_same_v<T, double>) return rv::dtype::float64();
  else if constexpr (std::is_same_v<T, std::int32_t>) return rv::dtype::int32();
  else return rv::dtype::int64();
}
template <class T>
rv::tensor loss_make(std::vector<std::int64_t> dims, std::vector<T> values) {
  rv::tensor t = rv::tensor::try_empty(rv::shape(std::span<const std::int64_t>(dims)), loss_dtype<T>()).value();
  REQUIRE(static_cast<std::size_t>(t.numel()) == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}
template <class T>
rv::tensor loss_empty(std::vector<std::int64_t> dims) {
  return rv::tensor::try_empty(rv::shape(std::span<const std::int64_t>(dims)), loss_dtype<T>()).value();
}
std::string loss_message(const rv::status& s) { return s.ok() ? std::string() : std::string(s.error().message()); }

}  // namespace

TEST_CASE("NegativeLogLikelihoodLoss: none, sum, mean, weights, ignore_index, int32 targets, float64") {
  // x (N=2, C=3, d=2): x[n, c, j] = -(n * 6 + c * 2 + j + 1) / 10.
  std::vector<double> xv(12);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = -static_cast<double>(i + 1) / 10;
  const rv::tensor x = loss_make<double>({2, 3, 2}, xv);
  const rv::tensor t = loss_make<std::int32_t>({2, 2}, {0, 2, 1, 1});
  const rv::tensor w = loss_make<double>({3}, {1.0, 2.0, 3.0});
  // Picked: x[0,0,0] = -0.1, x[0,2,1] = -0.6, x[1,1,0] = -0.9, x[1,1,1] = -1.0.
  rv::tensor none = loss_empty<double>({2, 2});
  REQUIRE(k::NegativeLogLikelihoodLoss_out(x, t, w, k::reduce_none, 0, 0, none).ok());
  CHECK(none.data<double>()[0] == doctest::Approx(0.1));
  CHECK(none.data<double>()[1] == doctest::Approx(0.6 * 3));
  CHECK(none.data<double>()[2] == doctest::Approx(0.9 * 2));
  CHECK(none.data<double>()[3] == doctest::Approx(1.0 * 2));
  rv::tensor s = loss_empty<double>({});
  REQUIRE(k::NegativeLogLikelihoodLoss_out(x, t, rv::tensor(), k::reduce_sum, 0, 0, s).ok());
  CHECK(s.data<double>()[0] == doctest::Approx(0.1 + 0.6 + 0.9 + 1.0));
  // A weighted mean divides by the weights taken; ignore_index 1 drops the last two.
  REQUIRE(k::NegativeLogLikelihoodLoss_out(x, t, w, k::reduce_mean, 1, 1, s).ok());
  CHECK(s.data<double>()[0] == doctest::Approx((0.1 + 0.6 * 3) / (1.0 + 3.0)));
  // Unweighted with ignore_index: the mean over the targets kept.
  REQUIRE(k::NegativeLogLikelihoodLoss_out(x, t, rv::tensor(), k::reduce_mean, 1, 2, s).ok());
  CHECK(s.data<double>()[0] == doctest::Approx((0.1 + 0.9 + 1.0) / 3));
  // An ignore_index outside [0, C) is never a class, and ignored targets need not be classes.
  const rv::tensor t_neg = loss_make<std::int32_t>({2, 2}, {-7, 2, -7, 1});
  REQUIRE(k::NegativeLogLikelihoodLoss_out(x, t_neg, rv::tensor(), k::reduce_none, 1, -7, none).ok());
  CHECK(none.data<double>()[0] == 0.0);
  CHECK(none.data<double>()[3] == doctest::Approx(1.0));
}

TEST_CASE("NegativeLogLikelihoodLoss: a mean over targets all ignored is NaN (0 / 0), a sum 0") {
  const rv::tensor x = loss_make<float>({2, 2}, {-1, -2, -3, -4});
  const rv::tensor t = loss_make<std::int64_t>({2}, {1, 1});
  const rv::tensor w = loss_make<float>({2}, {0.5f, 0.5f});
  rv::tensor s = loss_empty<float>({});
  REQUIRE(k::NegativeLogLikelihoodLoss_out(x, t, rv::tensor(), k::reduce_mean, 1, 1, s).ok());
  CHECK(std::isnan(s.data<float>()[0]));
  REQUIRE(k::NegativeLogLikelihoodLoss_out(x, t, w, k::reduce_mean, 1, 1, s).ok());
  CHECK(std::isnan(s.data<float>()[0]));
  REQUIRE(k::NegativeLogLikelihoodLoss_out(x, t, w, k::reduce_sum, 1, 1, s).ok());
  CHECK(s.data<float>()[0] == 0.0f);
  // Zero weights on the classes taken: the same 0 / 0.
  const rv::tensor zero = loss_make<float>({2}, {1.0f, 0.0f});
  REQUIRE(k::NegativeLogLikelihoodLoss_out(x, t, zero, k::reduce_mean, 0, 0, s).ok());
  CHECK(std::isnan(s.data<float>()[0]));
}

TEST_CASE("SoftmaxCrossEntropyLoss: log_prob is LogSoftmax along dim 1, the loss its NLL") {
  const rv::tensor x = loss_make<float>({1, 3, 2}, {1, 4, 2, 5, 3, 9});
  const rv::tensor t = loss_make<std::int64_t>({1, 2}, {2, 0});
  rv::tensor s = loss_empty<float>({});
  rv::tensor lp = loss_empty<float>({1, 3, 2});
  REQUIRE(k::SoftmaxCrossEntropyLoss_out(x, t, rv::tensor(), k::reduce_mean, 0, 0, s, lp).ok());
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const double lse1 = std::log(std::exp(4.0) + std::exp(5.0) + std::exp(9.0));
  CHECK(lp.data<float>()[0] == doctest::Approx(1.0 - lse0));
  CHECK(lp.data<float>()[5] == doctest::Approx(9.0 - lse1));
  CHECK(s.data<float>()[0] == doctest::Approx(((lse0 - 3.0) + (lse1 - 4.0)) / 2));
  // Large inputs do not overflow (the max is subtracted first).
  const rv::tensor big = loss_make<float>({1, 2}, {1000.0f, 1000.0f});
  const rv::tensor t0 = loss_make<std::int64_t>({1}, {0});
  rv::tensor lp2 = loss_empty<float>({1, 2});
  REQUIRE(k::SoftmaxCrossEntropyLoss_out(big, t0, rv::tensor(), k::reduce_sum, 0, 0, s, lp2).ok());
  CHECK(s.data<float>()[0] == doctest::Approx(std::log(2.0)));
}

TEST_CASE("losses: bad targets, shapes, weights and reductions name the op") {
  const rv::tensor x = loss_make<float>({2, 3}, {-1, -2, -3, -4, -5, -6});
  const rv::tensor t = loss_make<std::int64_t>({2}, {0, 3});
  rv::tensor s = loss_empty<float>({});
  std::string m = loss_message(k::NegativeLogLikelihoodLoss_out(x, t, rv::tensor(), k::reduce_sum, 0, 0, s));
  CHECK(m == "onnx.NegativeLogLikelihoodLoss: target 3 (element 1) is outside [0, 3) and is not the ignore_index");
  // The same target is fine when it is the ignore_index.
  CHECK(k::NegativeLogLikelihoodLoss_out(x, t, rv::tensor(), k::reduce_sum, 1, 3, s).ok());
  const rv::tensor t_bad = loss_make<std::int64_t>({3}, {0, 1, 2});
  m = loss_message(k::NegativeLogLikelihoodLoss_out(x, t_bad, rv::tensor(), k::reduce_sum, 0, 0, s));
  CHECK(m.find("the target has shape [3] but must be the input's [2, 3] without its dim 1") != std::string::npos);
  const rv::tensor w_bad = loss_make<float>({2}, {1, 1});
  m = loss_message(k::NegativeLogLikelihoodLoss_out(x, loss_make<std::int64_t>({2}, {0, 1}), w_bad, k::reduce_sum, 0, 0, s));
  CHECK(m == "onnx.NegativeLogLikelihoodLoss: the weights have shape [2] but must be [3] (one per class)");
  m = loss_message(k::NegativeLogLikelihoodLoss_out(x, loss_make<std::int64_t>({2}, {0, 1}), rv::tensor(), 3, 0, 0, s));
  CHECK(m == "onnx.NegativeLogLikelihoodLoss: reduction 3 must be 0 (none), 1 (sum) or 2 (mean)");
  // reduction none wants the target's shape; the others a scalar.
  m = loss_message(k::NegativeLogLikelihoodLoss_out(x, loss_make<std::int64_t>({2}, {0, 1}), rv::tensor(), k::reduce_none, 0, 0, s));
  CHECK(m.find("has shape [] but the result has shape [2]") != std::string::npos);
  const rv::tensor flat = loss_make<float>({3}, {1, 2, 3});
  m = loss_message(k::SoftmaxCrossEntropyLoss_out(flat, t, rv::tensor(), k::reduce_sum, 0, 0, s, loss_empty<float>({3})));
  CHECK(m.find("onnx.SoftmaxCrossEntropyLoss: the input must have at least 2 dims") == 0);
  const rv::tensor tf = loss_make<float>({2}, {0, 1});
  m = loss_message(k::SoftmaxCrossEntropyLoss_out(x, tf, rv::tensor(), k::reduce_sum, 0, 0, s, loss_empty<float>({2, 3})));
  CHECK(m.find("onnx.SoftmaxCrossEntropyLoss: argument 1 has dtype float32") == 0);
  m = loss_message(k::SoftmaxCrossEntropyLoss_out(x, loss_make<std::int64_t>({2}, {0, 1}), rv::tensor(), k::reduce_sum, 0, 0, s,
                                                  loss_empty<float>({2, 2})));
  CHECK(m.find("the output (argument 7) has shape [2, 2]") != std::string::npos);
}
