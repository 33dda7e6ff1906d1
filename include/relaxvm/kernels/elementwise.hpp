// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels with ONNX's semantics: unary maps (with their attributes), binary ops with
// NumPy broadcasting, comparisons and logic into bool, Where, and Clip. An output may be exactly an
// input of its own size (in place); any other overlap is an error.
#ifndef RELAXVM_KERNELS_ELEMENTWISE_HPP
#define RELAXVM_KERNELS_ELEMENTWISE_HPP

#include <cmath>
#include <cstdint>
#include <functional>  // std::plus, minus, multiplies
#include <limits>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {

/// out[i] = op(x[i]) for the types of `set`; out has x's shape and dtype `out_type` (x's when void).
template <class Op>
status map_out(std::string_view fn, const tensor& x, const tensor& out, std::uint32_t set, Op op, dtype out_type = dtype::void_()) {
  RELAXVM_TRY(check_in(fn, x, 0, set));
  const dtype ot = out_type.is_void() ? x.dtype() : out_type;
  RELAXVM_TRY(check_out(fn, out, 1, x.shape().dims(), ot));
  RELAXVM_TRY(check_alias(fn, x, 0, out, ot == x.dtype()));
  const std::int64_t n = x.numel();
  visit(x.dtype(), [&]<class T>() {
    const T* in = static_cast<const T*>(x.raw_data());
    if constexpr (std::is_invocable_v<Op, T>) {
      using R = std::invoke_result_t<Op, T>;
      R* o = static_cast<R*>(out.raw_data());
      for (std::int64_t i = 0; i < n; ++i) o[i] = op(in[i]);
    }
  });
  return {};
}

/// out = op(a, b) with NumPy broadcasting; a and b of one type in `set`; out of a's dtype, or bool
/// (`to_bool`).
template <class Op>
status zip_out(std::string_view fn, const tensor& a, const tensor& b, const tensor& out, std::uint32_t set, Op op, bool to_bool = false) {
  RELAXVM_TRY(check_in(fn, a, 0, set));
  RELAXVM_TRY(check_in(fn, b, 1, set));
  RELAXVM_TRY(same_type(fn, a, 0, b, 1));
  dims shape;
  if (!broadcast_dims(a.shape().dims(), b.shape().dims(), shape))
    return value_error(fn, ": shapes ", dims_text{a.shape().dims()}, " and ", dims_text{b.shape().dims()}, " do not broadcast");
  const dtype ot = to_bool ? dtype::bool_() : a.dtype();
  RELAXVM_TRY(check_out(fn, out, 2, shape.span(), ot));
  RELAXVM_TRY(check_alias(fn, a, 0, out, ot == a.dtype()));
  RELAXVM_TRY(check_alias(fn, b, 1, out, ot == a.dtype()));
  visit(a.dtype(), [&]<class T>() {
    if constexpr (std::is_invocable_v<Op, T, T>) {
      using R = std::invoke_result_t<Op, T, T>;
      const T* pa = static_cast<const T*>(a.raw_data());
      const T* pb = static_cast<const T*>(b.raw_data());
      R* o = static_cast<R*>(out.raw_data());
      const std::int64_t n = shape.count();
      if (a.numel() == n && b.numel() == n) {  // no broadcasting
        for (std::int64_t i = 0; i < n; ++i) o[i] = op(pa[i], pb[i]);
      } else if (b.numel() == 1 && a.numel() == n) {
        const T s = pb[0];
        for (std::int64_t i = 0; i < n; ++i) o[i] = op(pa[i], s);
      } else {
        const dims strides[2] = {broadcast_strides(a.shape().dims(), shape), broadcast_strides(b.shape().dims(), shape)};
        for_each_index(shape, strides, [&](std::int64_t i, const std::int64_t* off) { o[i] = op(pa[off[0]], pb[off[1]]); });
      }
    }
  });
  return {};
}

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T>;

// ONNX's integer division and modulo: Div truncates toward zero; a zero divisor is an error the
// caller reports (C++ leaves it undefined).
template <class T>
bool has_zero(const tensor& t) {
  const T* p = static_cast<const T*>(t.raw_data());
  for (std::int64_t i = 0; i < t.numel(); ++i)
    if (p[i] == T{0}) return true;
  return false;
}

// A float's value as the output type: the comparison ops and Cast share it.
template <class T>
T round_half_even(T v) {
  return std::nearbyint(v);  // the default rounding mode is to nearest, ties to even
}

}  // namespace detail

// ---- unary maps -------------------------------------------------------------------------------

/// The unary maps without attributes, by ONNX op type; `set` the types each takes.
struct unary_op {
  std::string_view name;
  std::uint32_t set;
  status (*fn)(const tensor&, const tensor&);
};

namespace detail {
template <class F>
status float_map(std::string_view fn, const tensor& x, const tensor& out, F f) {
  return map_out(fn, x, out, floats, [&](auto v) {
    using T = decltype(v);
    if constexpr (is_float_v<T>) return static_cast<T>(f(v));
    else return v;
  });
}
}  // namespace detail

#define RELAXVM_FLOAT_MAP(NAME, EXPR) \
  inline status NAME##_out(const tensor& x, const tensor& out) { \
    return detail::float_map("onnx." #NAME, x, out, [](auto v) { using T = decltype(v); (void)sizeof(T); return EXPR; }); \
  }
RELAXVM_FLOAT_MAP(Sqrt, std::sqrt(v))
RELAXVM_FLOAT_MAP(Exp, std::exp(v))
RELAXVM_FLOAT_MAP(Log, std::log(v))
RELAXVM_FLOAT_MAP(Erf, std::erf(v))
RELAXVM_FLOAT_MAP(Tanh, std::tanh(v))
RELAXVM_FLOAT_MAP(Sigmoid, v >= T(0) ? T(1) / (T(1) + std::exp(-v)) : std::exp(v) / (T(1) + std::exp(v)))
RELAXVM_FLOAT_MAP(Softplus, v > T(20) ? v : std::log1p(std::exp(v)))
RELAXVM_FLOAT_MAP(Softsign, v / (T(1) + std::fabs(v)))
RELAXVM_FLOAT_MAP(Reciprocal, T(1) / v)
RELAXVM_FLOAT_MAP(Floor, std::floor(v))
RELAXVM_FLOAT_MAP(Ceil, std::ceil(v))
RELAXVM_FLOAT_MAP(Round, detail::round_half_even(v))
RELAXVM_FLOAT_MAP(Sin, std::sin(v))
RELAXVM_FLOAT_MAP(Cos, std::cos(v))
RELAXVM_FLOAT_MAP(Tan, std::tan(v))
RELAXVM_FLOAT_MAP(Asin, std::asin(v))
RELAXVM_FLOAT_MAP(Acos, std::acos(v))
RELAXVM_FLOAT_MAP(Atan, std::atan(v))
RELAXVM_FLOAT_MAP(Sinh, std::sinh(v))
RELAXVM_FLOAT_MAP(Cosh, std::cosh(v))
RELAXVM_FLOAT_MAP(Asinh, std::asinh(v))
RELAXVM_FLOAT_MAP(Acosh, std::acosh(v))
RELAXVM_FLOAT_MAP(Atanh, std::atanh(v))
RELAXVM_FLOAT_MAP(HardSwish, v * std::fmax(T(0), std::fmin(T(1), v / T(6) + T(0.5))))
#undef RELAXVM_FLOAT_MAP

inline status Abs_out(const tensor& x, const tensor& out) {
  return detail::map_out("onnx.Abs", x, out, detail::numbers, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_unsigned_v<T>) return v;
    else if constexpr (std::is_integral_v<T>) return v < T(0) ? detail::arith(T(0), v, std::minus<>()) : v;  // |min| wraps to min
    else return static_cast<T>(v < T(0) ? -v : v);
  });
}
inline status Neg_out(const tensor& x, const tensor& out) {
  return detail::map_out("onnx.Neg", x, out, detail::floats | detail::signed_ints, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_unsigned_v<T>) return v;
    else if constexpr (std::is_integral_v<T>) return detail::arith(T(0), v, std::minus<>());  // -min wraps to min
    else return static_cast<T>(-v);
  });
}
inline status Sign_out(const tensor& x, const tensor& out) {
  return detail::map_out("onnx.Sign", x, out, detail::numbers, [](auto v) {
    using T = decltype(v);
    return static_cast<T>(v > T(0) ? 1 : (v < T(0) ? -1 : 0));
  });
}
inline status Relu_out(const tensor& x, const tensor& out) {
  return detail::map_out("onnx.Relu", x, out, detail::floats | detail::signed_ints, [](auto v) {
    using T = decltype(v);
    return v > T(0) ? v : T(0);
  });
}
inline status Not_out(const tensor& x, const tensor& out) {
  return detail::map_out("onnx.Not", x, out, detail::bools, [](auto v) { return !v; });
}
inline status IsNaN_out(const tensor& x, const tensor& out) {
  return detail::map_out("onnx.IsNaN", x, out, detail::floats, [](auto v) { return v != v; }, dtype::bool_());
}
inline status IsInf_out(const tensor& x, std::int64_t detect_negative, std::int64_t detect_positive, const tensor& out) {
  return detail::map_out("onnx.IsInf", x, out, detail::floats, [&](auto v) {
    if constexpr (detail::is_float_v<decltype(v)>)
      return std::isinf(v) && ((v > 0 && detect_positive != 0) || (v < 0 && detect_negative != 0));
    else return false;
  }, dtype::bool_());
}

// With attributes (float64 arguments after the input).
inline status LeakyRelu_out(const tensor& x, double alpha, const tensor& out) {
  return detail::float_map("onnx.LeakyRelu", x, out, [=](auto v) { using T = decltype(v); return v >= T(0) ? v : static_cast<T>(alpha) * v; });
}
inline status Elu_out(const tensor& x, double alpha, const tensor& out) {
  return detail::float_map("onnx.Elu", x, out, [=](auto v) { using T = decltype(v); return v >= T(0) ? v : static_cast<T>(alpha) * (std::exp(v) - T(1)); });
}
inline status Celu_out(const tensor& x, double alpha, const tensor& out) {
  return detail::float_map("onnx.Celu", x, out, [=](auto v) {
    using T = decltype(v);
    const T a = static_cast<T>(alpha);
    return std::fmax(T(0), v) + std::fmin(T(0), a * (std::exp(v / a) - T(1)));
  });
}
inline status ThresholdedRelu_out(const tensor& x, double alpha, const tensor& out) {
  return detail::float_map("onnx.ThresholdedRelu", x, out, [=](auto v) { using T = decltype(v); return v > static_cast<T>(alpha) ? v : T(0); });
}
inline status Selu_out(const tensor& x, double alpha, double gamma, const tensor& out) {
  return detail::float_map("onnx.Selu", x, out, [=](auto v) {
    using T = decltype(v);
    return static_cast<T>(gamma) * (v > T(0) ? v : static_cast<T>(alpha) * (std::exp(v) - T(1)));
  });
}
inline status HardSigmoid_out(const tensor& x, double alpha, double beta, const tensor& out) {
  return detail::float_map("onnx.HardSigmoid", x, out, [=](auto v) {
    using T = decltype(v);
    return std::fmax(T(0), std::fmin(T(1), static_cast<T>(alpha) * v + static_cast<T>(beta)));
  });
}
inline status Shrink_out(const tensor& x, double bias, double lambd, const tensor& out) {
  return detail::map_out("onnx.Shrink", x, out, detail::numbers, [=](auto v) {
    using T = decltype(v);
    const double d = static_cast<double>(v);
    return detail::convert<T>(d < -lambd ? d + bias : (d > lambd ? d - bias : 0.0));  // saturates for integers
  });
}

// ---- binary ops -------------------------------------------------------------------------------

inline status Add_out(const tensor& a, const tensor& b, const tensor& out) {
  return detail::zip_out("onnx.Add", a, b, out, detail::numbers, [](auto x, auto y) { return detail::arith(x, y, std::plus<>()); });
}
inline status Sub_out(const tensor& a, const tensor& b, const tensor& out) {
  return detail::zip_out("onnx.Sub", a, b, out, detail::numbers, [](auto x, auto y) { return detail::arith(x, y, std::minus<>()); });
}
inline status Mul_out(const tensor& a, const tensor& b, const tensor& out) {
  return detail::zip_out("onnx.Mul", a, b, out, detail::numbers, [](auto x, auto y) { return detail::arith(x, y, std::multiplies<>()); });
}
inline status Div_out(const tensor& a, const tensor& b, const tensor& out) {
  if (b.defined() && detail::in_set(b.dtype(), detail::ints) &&
      detail::visit(b.dtype(), [&]<class T>() { return detail::has_zero<T>(b); }))
    return detail::value_error("onnx.Div: integer division by zero");
  return detail::zip_out("onnx.Div", a, b, out, detail::numbers, [](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_signed_v<T> && !detail::is_float_v<T>) {
      if (x == std::numeric_limits<T>::min() && y == T(-1)) return x;  // wraps, as two's complement does
    }
    return static_cast<T>(x / y);
  });
}
inline status Pow_out(const tensor& a, const tensor& b, const tensor& out) {
  // The exponent may have another type than the base (opset 12+): both are read as double.
  if (a.defined() && b.defined() && a.dtype() != b.dtype()) {
    RELAXVM_TRY(detail::check_in("onnx.Pow", a, 0, detail::numbers));
    RELAXVM_TRY(detail::check_in("onnx.Pow", b, 1, detail::numbers));
    detail::dims shape;
    if (!detail::broadcast_dims(a.shape().dims(), b.shape().dims(), shape))
      return detail::value_error("onnx.Pow: shapes ", detail::dims_text{a.shape().dims()}, " and ", detail::dims_text{b.shape().dims()}, " do not broadcast");
    RELAXVM_TRY(detail::check_out("onnx.Pow", out, 2, shape.span(), a.dtype()));
    RELAXVM_TRY(detail::check_alias("onnx.Pow", b, 1, out, false));
    const detail::dims strides[2] = {detail::broadcast_strides(a.shape().dims(), shape), detail::broadcast_strides(b.shape().dims(), shape)};
    detail::visit(a.dtype(), [&]<class T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        const T* pa = static_cast<const T*>(a.raw_data());
        T* o = static_cast<T*>(out.raw_data());
        detail::visit(b.dtype(), [&]<class U>() {
          const U* pb = static_cast<const U*>(b.raw_data());
          detail::for_each_index(shape, strides, [&](std::int64_t i, const std::int64_t* off) {
            o[i] = static_cast<T>(std::pow(static_cast<double>(pa[off[0]]), static_cast<double>(pb[off[1]])));
          });
        });
      }
    });
    return {};
  }
  return detail::zip_out("onnx.Pow", a, b, out, detail::numbers, [](auto x, auto y) {
    using T = decltype(x);
    if constexpr (detail::is_float_v<T>) return static_cast<T>(std::pow(x, y));
    else return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  });
}
inline status Max_out(const tensor& a, const tensor& b, const tensor& out) {
  return detail::zip_out("onnx.Max", a, b, out, detail::numbers, [](auto x, auto y) {
    if constexpr (detail::is_float_v<decltype(x)>) {
      if (x != x) return x;  // NaN propagates
      if (y != y) return y;
    }
    return x > y ? x : y;
  });
}
inline status Min_out(const tensor& a, const tensor& b, const tensor& out) {
  return detail::zip_out("onnx.Min", a, b, out, detail::numbers, [](auto x, auto y) {
    if constexpr (detail::is_float_v<decltype(x)>) {
      if (x != x) return x;
      if (y != y) return y;
    }
    return x < y ? x : y;
  });
}
/// Mod: fmod = 0 takes the divisor's sign (integers only); fmod = 1 the dividend's (C's fmod).
inline status Mod_out(const tensor& a, const tensor& b, std::int64_t fmod, const tensor& out) {
  if (b.defined() && detail::in_set(b.dtype(), detail::ints) &&
      detail::visit(b.dtype(), [&]<class T>() { return detail::has_zero<T>(b); }))
    return detail::value_error("onnx.Mod: integer modulo by zero");
  if (fmod == 0 && a.defined() && a.dtype().is_float()) return detail::value_error("onnx.Mod: fmod = 0 is for integers; floats need fmod = 1");
  return detail::zip_out("onnx.Mod", a, b, out, detail::numbers, [=](auto x, auto y) {
    using T = decltype(x);
    if constexpr (detail::is_float_v<T>) {
      return static_cast<T>(std::fmod(x, y));
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (y == T(-1)) return T(0);
      }
      T r = static_cast<T>(x % y);
      if constexpr (std::is_signed_v<T>) {
        if (fmod == 0 && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
      }
      return r;
    }
  });
}
inline status PRelu_out(const tensor& x, const tensor& slope, const tensor& out) {
  return detail::zip_out("onnx.PRelu", x, slope, out, detail::floats | detail::signed_ints, [](auto v, auto s) {
    using T = decltype(v);
    return v >= T(0) ? v : static_cast<T>(v * s);
  });
}

// Comparisons and logic, into bool.
#define RELAXVM_COMPARE(NAME, SET, EXPR) \
  inline status NAME##_out(const tensor& a, const tensor& b, const tensor& out) { \
    return detail::zip_out("onnx." #NAME, a, b, out, SET, [](auto x, auto y) -> bool { return EXPR; }, true); \
  }
RELAXVM_COMPARE(Equal, detail::any_type, x == y)
RELAXVM_COMPARE(Less, detail::numbers, x < y)
RELAXVM_COMPARE(LessOrEqual, detail::numbers, x <= y)
RELAXVM_COMPARE(Greater, detail::numbers, x > y)
RELAXVM_COMPARE(GreaterOrEqual, detail::numbers, x >= y)
RELAXVM_COMPARE(And, detail::bools, x && y)
RELAXVM_COMPARE(Or, detail::bools, x || y)
RELAXVM_COMPARE(Xor, detail::bools, x != y)
#undef RELAXVM_COMPARE

inline status BitShift_out(const tensor& a, const tensor& b, std::int64_t left, const tensor& out) {
  return detail::zip_out("onnx.BitShift", a, b, out, detail::unsigned_ints, [=](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
      if (y >= sizeof(T) * 8) return T(0);
      return static_cast<T>(left != 0 ? x << y : x >> y);
    } else {
      return x;
    }
  });
}

/// Where(cond, x, y): three-way NumPy broadcasting.
inline status Where_out(const tensor& c, const tensor& x, const tensor& y, const tensor& out) {
  constexpr std::string_view fn = "onnx.Where";
  RELAXVM_TRY(detail::check_in(fn, c, 0, detail::bools));
  RELAXVM_TRY(detail::check_in(fn, x, 1, detail::any_type));
  RELAXVM_TRY(detail::check_in(fn, y, 2, detail::any_type));
  RELAXVM_TRY(detail::same_type(fn, x, 1, y, 2));
  detail::dims xy, shape;
  if (!detail::broadcast_dims(x.shape().dims(), y.shape().dims(), xy) || !detail::broadcast_dims(c.shape().dims(), xy.span(), shape))
    return detail::value_error(fn, ": the shapes of the condition and the two values do not broadcast");
  RELAXVM_TRY(detail::check_out(fn, out, 3, shape.span(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, c, 0, out, false));
  RELAXVM_TRY(detail::check_alias(fn, x, 1, out, false));
  RELAXVM_TRY(detail::check_alias(fn, y, 2, out, false));
  const detail::dims strides[3] = {detail::broadcast_strides(c.shape().dims(), shape), detail::broadcast_strides(x.shape().dims(), shape),
                                   detail::broadcast_strides(y.shape().dims(), shape)};
  detail::visit(x.dtype(), [&]<class T>() {
    const bool* pc = static_cast<const bool*>(c.raw_data());
    const T* px = static_cast<const T*>(x.raw_data());
    const T* py = static_cast<const T*>(y.raw_data());
    T* o = static_cast<T*>(out.raw_data());
    detail::for_each_index(shape, strides, [&](std::int64_t i, const std::int64_t* off) { o[i] = pc[off[0]] ? px[off[1]] : py[off[2]]; });
  });
  return {};
}

/// Clip(x, min, max): min and max are one-element tensors of x's type, or undefined (no bound).
inline status Clip_out(const tensor& x, const tensor& lo, const tensor& hi, const tensor& out) {
  constexpr std::string_view fn = "onnx.Clip";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::numbers));
  for (std::size_t k = 1; k <= 2; ++k) {
    const tensor& b = k == 1 ? lo : hi;
    if (!b.defined()) continue;
    RELAXVM_TRY(detail::check_in(fn, b, k, detail::numbers));
    RELAXVM_TRY(detail::same_type(fn, x, 0, b, k));
    if (b.numel() != 1) return detail::value_error(fn, ": argument ", k, " must hold one value, but holds ", b.numel());
  }
  RELAXVM_TRY(detail::check_out(fn, out, 3, x.shape().dims(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, true));
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T l = lo.defined() ? static_cast<const T*>(lo.raw_data())[0] : std::numeric_limits<T>::lowest();
      const T h = hi.defined() ? static_cast<const T*>(hi.raw_data())[0] : std::numeric_limits<T>::max();
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      for (std::int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] < l ? l : (in[i] > h ? h : in[i]);
    }
  });
  return {};
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_ELEMENTWISE_HPP
