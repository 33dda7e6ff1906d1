// SPDX-License-Identifier: Apache-2.0
// What the portable kernels share: argument checks that name the op and the argument, element
// types dispatched to C++ types, NumPy broadcasting as strides, and n-dimensional iteration. The
// kernels (relaxvm/kernels/*.hpp) are plain loops over relaxvm tensors: no xtensor, no heap, no
// exceptions, so the same code runs on a PC and in firmware (RELAXVM_HEAP=0); fast forms of the
// kernels where time goes (convolution, matrix products) are chosen at compile time.
//
// Every kernel is destination-passing, as the lowering calls it: its inputs, then its attributes
// (int64, float64, shapes for int lists), then its outputs, preallocated with the shape and dtype
// the importer computed; the kernel checks them all.
#ifndef RELAXVM_KERNELS_BASE_HPP
#define RELAXVM_KERNELS_BASE_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/dtype.hpp"
#include "../base/error.hpp"
#include "../runtime/shape.hpp"
#include "../runtime/tensor.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

/// The most dimensions a kernel iterates over (ONNX's tests use at most 6).
inline constexpr int max_rank = 12;

namespace detail {
using relaxvm::detail::dims_text;
using relaxvm::detail::type_error;
using relaxvm::detail::value_error;

/// Which element types an argument may have.
enum type_set : std::uint32_t {
  floats = 1u << 0,    // float32, float64
  signed_ints = 1u << 1,
  unsigned_ints = 1u << 2,
  bools = 1u << 3,
  ints = signed_ints | unsigned_ints,
  numbers = floats | ints,
  any_type = numbers | bools,
};

constexpr bool in_set(dtype t, std::uint32_t set) {
  if (t == dtype::float32() || t == dtype::float64()) return (set & floats) != 0;
  if (t.is_bool()) return (set & bools) != 0;
  if (t.lanes != 1) return false;
  if (t.is_int() && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)) return (set & signed_ints) != 0;
  if (t.is_uint() && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)) return (set & unsigned_ints) != 0;
  return false;
}

RELAXVM_ERROR_FN error bad_type(std::string_view fn, std::size_t i, dtype t) {
  return type_error(fn, ": argument ", i, " has dtype ", t, ", which this kernel does not take");
}

/// An input: a defined, compact host tensor of an element type in `set`, of at most max_rank dims.
inline status check_in(std::string_view fn, const tensor& t, std::size_t i, std::uint32_t set) {
  if (!t.defined()) return value_error(fn, ": argument ", i, " is an undefined tensor");
  if (!in_set(t.dtype(), set)) return bad_type(fn, i, t.dtype());
  if (t.device().device_type != kDLCPU) return value_error(fn, ": argument ", i, " is on ", t.device(), "; the kernels run on the host");
  if (!t.is_contiguous()) return value_error(fn, ": argument ", i, " is strided; the kernels take compact tensors");
  if (t.ndim() > max_rank) return value_error(fn, ": argument ", i, " has ", t.ndim(), " dimensions; the kernels take at most ", max_rank);
  if (reinterpret_cast<std::uintptr_t>(t.raw_data()) % static_cast<std::uintptr_t>(t.dtype().bytes()) != 0)
    return value_error(fn, ": argument ", i, "'s data is not aligned for ", t.dtype());
  return {};
}

// ONNX's integer arithmetic wraps (two's complement, as NumPy's does), where C++'s signed overflow
// is undefined: integers are computed in an unsigned type at least as wide as unsigned int (a
// uint16 product promoted to int would overflow too) and converted back, which wraps.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <class T, class F>
constexpr T arith(T x, T y, F f) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(f(static_cast<wrap_t<T>>(x), static_cast<wrap_t<T>>(y)));
  else
    return static_cast<T>(f(x, y));
}

/// A value of S as T, as NumPy's astype does for the values ONNX's Cast defines: floats to
/// integers truncate toward zero (NaN to 0, out of range saturated, which C++ leaves undefined),
/// anything to bool is "not zero". Also how a float attribute (Gemm's alpha) meets integer data.
template <class T, class S>
T convert(S v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != S(0);
  } else if constexpr (std::is_floating_point_v<S> && !std::is_floating_point_v<T>) {
    if (v != v) return T(0);
    if (v <= static_cast<S>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<S>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

/// Two arguments of one element type.
inline status same_type(std::string_view fn, const tensor& a, std::size_t i, const tensor& b, std::size_t j) {
  if (a.dtype() == b.dtype()) return {};
  return type_error(fn, ": argument ", j, " is ", b.dtype(), " but argument ", i, " is ", a.dtype(), "; they must match");
}

/// An output: as check_in, writable, with exactly the shape and dtype the result has.
inline status check_out(std::string_view fn, const tensor& out, std::size_t i, std::span<const std::int64_t> want, dtype t) {
  RELAXVM_TRY(check_in(fn, out, i, any_type));
  if (out.dtype() != t) return type_error(fn, ": the output (argument ", i, ") is ", out.dtype(), " but the result is ", t);
  const std::span<const std::int64_t> have = out.shape().dims();
  bool same = have.size() == want.size();
  for (std::size_t k = 0; same && k < want.size(); ++k) same = have[k] == want[k];
  if (!same)
    return value_error(fn, ": the output (argument ", i, ") has shape ", dims_text{have}, " but the result has shape ",
                       dims_text{want});
  if (out.read_only()) return value_error(fn, ": the output (argument ", i, ") is read-only");
  return {};
}

/// An output must not share memory with an input, except (`exact_ok`) by being exactly it, where
/// an elementwise kernel can work in place.
inline status check_alias(std::string_view fn, const tensor& in, std::size_t i, const tensor& out, bool exact_ok) {
  const auto* a = static_cast<const char*>(in.raw_data());
  const auto* o = static_cast<const char*>(out.raw_data());
  const bool overlap = in.nbytes() > 0 && out.nbytes() > 0 && std::less<>()(a, o + out.nbytes()) && std::less<>()(o, a + in.nbytes());
  if (!overlap || (exact_ok && a == o && in.nbytes() == out.nbytes())) return {};
  return value_error(fn, ": the output overlaps argument ", i, exact_ok ? "; an output may only be exactly an input of its own size" : "");
}

/// Calls f.template operator()<T>() with the C++ type of `t` (one in_set() accepts; bool as bool).
template <class F>
decltype(auto) visit(dtype t, F&& f) {
  if (t == dtype::float32()) return f.template operator()<float>();
  if (t == dtype::float64()) return f.template operator()<double>();
  if (t.is_bool()) return f.template operator()<bool>();
  if (t.is_int()) {
    switch (t.bits) {
      case 8: return f.template operator()<std::int8_t>();
      case 16: return f.template operator()<std::int16_t>();
      case 32: return f.template operator()<std::int32_t>();
      default: return f.template operator()<std::int64_t>();
    }
  }
  switch (t.bits) {
    case 8: return f.template operator()<std::uint8_t>();
    case 16: return f.template operator()<std::uint16_t>();
    case 32: return f.template operator()<std::uint32_t>();
    default: return f.template operator()<std::uint64_t>();
  }
}

/// Dims of up to max_rank, on the stack.
struct dims {
  std::int64_t d[max_rank] = {};
  int rank = 0;

  dims() = default;
  explicit dims(std::span<const std::int64_t> s) : rank(static_cast<int>(s.size())) {
    for (int k = 0; k < rank; ++k) d[k] = s[static_cast<std::size_t>(k)];
  }
  std::span<const std::int64_t> span() const { return {d, static_cast<std::size_t>(rank)}; }
  std::int64_t operator[](int k) const { return d[k]; }
  std::int64_t& operator[](int k) { return d[k]; }
  std::int64_t count() const {
    std::int64_t n = 1;
    for (int k = 0; k < rank; ++k) n *= d[k];
    return n;
  }
  void push(std::int64_t v) { d[rank++] = v; }
};

/// NumPy's broadcast of two shapes into `out` (of at most max_rank dims); false when they do not.
inline bool broadcast_dims(std::span<const std::int64_t> a, std::span<const std::int64_t> b, dims& out) {
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  if (n > static_cast<std::size_t>(max_rank)) return false;
  out.rank = static_cast<int>(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::int64_t da = k < n - a.size() ? 1 : a[k - (n - a.size())];
    const std::int64_t db = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    out[static_cast<int>(k)] = da == 1 ? db : da;
  }
  return true;
}

/// The element strides of an input of `in` dims read as the broadcast `out` dims: 0 along the
/// dims it broadcasts.
inline dims broadcast_strides(std::span<const std::int64_t> in, const dims& out) {
  dims s;
  s.rank = out.rank;
  std::int64_t stride = 1;
  for (int k = out.rank - 1; k >= 0; --k) {
    const int j = k - (out.rank - static_cast<int>(in.size()));
    const std::int64_t d = j >= 0 ? in[static_cast<std::size_t>(j)] : 1;
    s[k] = d == 1 ? 0 : stride;
    stride *= d;
  }
  return s;
}

/// The offsets (as for_each_index gives them) of `shape`'s element number `index` (row-major).
template <std::size_t N>
void index_offsets(const dims& shape, const dims (&strides)[N], std::int64_t index, std::int64_t (&off)[N]) {
  for (std::size_t n = 0; n < N; ++n) off[n] = 0;
  for (int k = shape.rank - 1; k >= 0; --k) {
    const std::int64_t i = index % shape[k];
    index /= shape[k];
    for (std::size_t n = 0; n < N; ++n) off[n] += i * strides[n][k];
  }
}

/// Calls f(out_index, offsets) for every element of `shape` in row-major order, offsets[n] being
/// operand n's element offset under strides[n]. Carries into the outer dims once per row.
template <std::size_t N, class F>
void for_each_index(const dims& shape, const dims (&strides)[N], F&& f) {
  std::int64_t off[N] = {};
  if (shape.count() == 0) return;
  if (shape.rank == 0) {
    f(std::int64_t{0}, static_cast<const std::int64_t*>(off));
    return;
  }
  const int last = shape.rank - 1;
  std::int64_t idx[max_rank] = {};
  std::int64_t base[N] = {};
  std::int64_t out = 0;
  for (;;) {
    for (std::int64_t i = 0; i < shape[last]; ++i, ++out) {
      for (std::size_t n = 0; n < N; ++n) off[n] = base[n] + i * strides[n][last];
      f(out, static_cast<const std::int64_t*>(off));
    }
    int k = last - 1;
    for (; k >= 0; --k) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
    if (k < 0) return;
    for (std::size_t n = 0; n < N; ++n) {
      base[n] = 0;
      for (int j = 0; j < last; ++j) base[n] += idx[j] * strides[n][j];
    }
  }
}

}  // namespace detail
}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_BASE_HPP
