// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels: add, subtract, multiply, divide, maximum (NumPy broadcasting), and the
// activations relu, gelu (erf form), sigmoid. Each has a destination-passing form (_out: the output
// is preallocated, as call_tir lowers to) and a returning form. An output may be exactly an input of
// its own shape (in place); any other overlap is an error.
#ifndef RELAXVM_OPS_ELEMENTWISE_HPP
#define RELAXVM_OPS_ELEMENTWISE_HPP

#include <cmath>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "common.hpp"

namespace relaxvm::RELAXVM_ABI::ops {

namespace detail {

template <class Expr>
status binary_out(std::string_view fn, const tensor& a, const tensor& b, const tensor& out, Expr expr) {
  RELAXVM_TRY(check_input(fn, a, 0));
  RELAXVM_TRY(check_input(fn, b, 1));
  RELAXVM_TRY(same_dtype(fn, a, b, 1));
  RELAXVM_TRY_ASSIGN(shape want, broadcast(fn, a.shape(), b.shape()));
  RELAXVM_TRY(check_output(fn, out, want, a.dtype(), 2));
  RELAXVM_TRY(check_alias(fn, a, 0, out, true));
  RELAXVM_TRY(check_alias(fn, b, 1, out, true));
  by_dtype(a.dtype(), [&]<class T>() {
    auto xa = in_view<T>(a);
    auto xb = in_view<T>(b);
    auto xo = out_view<T>(out);
    xt::noalias(xo) = expr(xa, xb);
  });
  return {};
}

template <class Expr>
result<tensor> binary(std::string_view fn, const tensor& a, const tensor& b, Expr expr) {
  RELAXVM_TRY(check_input(fn, a, 0));
  RELAXVM_TRY(check_input(fn, b, 1));
  RELAXVM_TRY(same_dtype(fn, a, b, 1));
  RELAXVM_TRY_ASSIGN(shape want, broadcast(fn, a.shape(), b.shape()));
  RELAXVM_TRY_ASSIGN(tensor out, make_output(want, a.dtype()));
  RELAXVM_TRY(binary_out(fn, a, b, out, expr));
  return out;
}

template <class Expr>
status unary_out(std::string_view fn, const tensor& x, const tensor& out, Expr expr) {
  RELAXVM_TRY(check_input(fn, x, 0));
  RELAXVM_TRY(check_output(fn, out, x.shape(), x.dtype(), 1));
  RELAXVM_TRY(check_alias(fn, x, 0, out, true));
  by_dtype(x.dtype(), [&]<class T>() {
    auto xx = in_view<T>(x);
    auto xo = out_view<T>(out);
    xt::noalias(xo) = expr(xx, T{});
  });
  return {};
}

template <class Expr>
result<tensor> unary(std::string_view fn, const tensor& x, Expr expr) {
  RELAXVM_TRY(check_input(fn, x, 0));
  RELAXVM_TRY_ASSIGN(tensor out, make_output(x.shape(), x.dtype()));
  RELAXVM_TRY(unary_out(fn, x, out, expr));
  return out;
}

inline constexpr auto add_expr = [](const auto& a, const auto& b) { return a + b; };
inline constexpr auto subtract_expr = [](const auto& a, const auto& b) { return a - b; };
inline constexpr auto multiply_expr = [](const auto& a, const auto& b) { return a * b; };
inline constexpr auto divide_expr = [](const auto& a, const auto& b) { return a / b; };
inline constexpr auto maximum_expr = [](const auto& a, const auto& b) { return xt::maximum(a, b); };
// Unary expressions get a zero of the element type, to build constants of the right type. Every
// scalar in an expression must be a prvalue: xtensor keeps an lvalue scalar by reference, and the
// expression outlives this lambda's parameters.
inline constexpr auto relu_expr = [](const auto& x, auto zero) { return xt::maximum(x, decltype(zero)(0)); };
inline constexpr auto sigmoid_expr = [](const auto& x, auto zero) {
  using T = decltype(zero);
  return T(1) / (T(1) + xt::exp(-x));
};
inline constexpr auto gelu_expr = [](const auto& x, auto zero) {
  using T = decltype(zero);
  return T(0.5) * x * (T(1) + xt::erf(x * T(0.70710678118654752440)));
};

}  // namespace detail

inline status add_out(const tensor& a, const tensor& b, const tensor& out) { return detail::binary_out("ops.add_out", a, b, out, detail::add_expr); }
inline status subtract_out(const tensor& a, const tensor& b, const tensor& out) { return detail::binary_out("ops.subtract_out", a, b, out, detail::subtract_expr); }
inline status multiply_out(const tensor& a, const tensor& b, const tensor& out) { return detail::binary_out("ops.multiply_out", a, b, out, detail::multiply_expr); }
inline status divide_out(const tensor& a, const tensor& b, const tensor& out) { return detail::binary_out("ops.divide_out", a, b, out, detail::divide_expr); }
inline status maximum_out(const tensor& a, const tensor& b, const tensor& out) { return detail::binary_out("ops.maximum_out", a, b, out, detail::maximum_expr); }
inline result<tensor> add(const tensor& a, const tensor& b) { return detail::binary("ops.add", a, b, detail::add_expr); }
inline result<tensor> subtract(const tensor& a, const tensor& b) { return detail::binary("ops.subtract", a, b, detail::subtract_expr); }
inline result<tensor> multiply(const tensor& a, const tensor& b) { return detail::binary("ops.multiply", a, b, detail::multiply_expr); }
inline result<tensor> divide(const tensor& a, const tensor& b) { return detail::binary("ops.divide", a, b, detail::divide_expr); }
inline result<tensor> maximum(const tensor& a, const tensor& b) { return detail::binary("ops.maximum", a, b, detail::maximum_expr); }

inline status relu_out(const tensor& x, const tensor& out) { return detail::unary_out("ops.relu_out", x, out, detail::relu_expr); }
inline status gelu_out(const tensor& x, const tensor& out) { return detail::unary_out("ops.gelu_out", x, out, detail::gelu_expr); }
inline status sigmoid_out(const tensor& x, const tensor& out) { return detail::unary_out("ops.sigmoid_out", x, out, detail::sigmoid_expr); }
inline result<tensor> relu(const tensor& x) { return detail::unary("ops.relu", x, detail::relu_expr); }
inline result<tensor> gelu(const tensor& x) { return detail::unary("ops.gelu", x, detail::gelu_expr); }
inline result<tensor> sigmoid(const tensor& x) { return detail::unary("ops.sigmoid", x, detail::sigmoid_expr); }

}  // namespace relaxvm::ops

#endif  // RELAXVM_OPS_ELEMENTWISE_HPP
