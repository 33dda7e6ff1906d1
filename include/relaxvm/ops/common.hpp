// SPDX-License-Identifier: Apache-2.0
// What the kernels share: argument checks, NumPy broadcasting, dtype dispatch, and xtensor views
// of tensors (adaptors over the tensor's memory: no copy, no allocation for up to 4 dimensions).
#ifndef RELAXVM_OPS_COMMON_HPP
#define RELAXVM_OPS_COMMON_HPP

#include "../base/config.hpp"
#if !RELAXVM_HOSTED
#error "relaxvm/ops needs a hosted build (xtensor is hosted-only); a freestanding build brings its own kernels (see examples/firmware)"
#endif

#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/error.hpp"
#include "../runtime/shape.hpp"
#include "../runtime/tensor.hpp"

namespace relaxvm::RELAXVM_ABI::ops {

namespace detail {
using relaxvm::detail::dims_text;
using relaxvm::detail::type_error;
using relaxvm::detail::value_error;

/// An input: a defined, compact float32 or float64 host tensor.
inline status check_input(std::string_view fn, const tensor& t, std::size_t i) {
  if (!t.defined()) return value_error(fn, ": argument ", i, " is an undefined tensor");
  if (t.dtype() != dtype::float32() && t.dtype() != dtype::float64())
    return type_error(fn, ": argument ", i, " has dtype ", t.dtype(), "; the ops take float32 and float64");
  if (t.device().device_type != kDLCPU) return value_error(fn, ": argument ", i, " is on ", t.device());
  if (!t.is_contiguous()) return value_error(fn, ": argument ", i, " is strided; the ops take compact tensors");
  if (reinterpret_cast<std::uintptr_t>(t.raw_data()) % static_cast<std::uintptr_t>(t.dtype().bytes()) != 0)
    return value_error(fn, ": argument ", i, "'s data is not aligned for ", t.dtype());
  return {};
}

inline status same_dtype(std::string_view fn, const tensor& a, const tensor& b, std::size_t i) {
  if (a.dtype() != b.dtype())
    return type_error(fn, ": argument ", i, " is ", b.dtype(), " but argument 0 is ", a.dtype(),
                      "; both must have the same dtype");
  return {};
}

/// The output of a destination-passing call: writable, with the result's shape and dtype.
inline status check_output(std::string_view fn, const tensor& out, const shape& want, dtype t, std::size_t i) {
  RELAXVM_TRY(check_input(fn, out, i));
  if (out.dtype() != t)
    return type_error(fn, ": the output (argument ", i, ") is ", out.dtype(), " but the result is ", t);
  if (out.shape() != want)
    return value_error(fn, ": the output (argument ", i, ") has shape ", dims_text{out.shape().dims()},
                       " but the result has shape ", dims_text{want.dims()});
  if (out.read_only()) return value_error(fn, ": the output (argument ", i, ") is read-only");
  return {};
}

/// An output must not overlap input `i`, except (when `exact_ok`) by being exactly it: the same
/// bytes and shape, which an elementwise kernel can compute in place.
inline status check_alias(std::string_view fn, const tensor& in, std::size_t i, const tensor& out, bool exact_ok) {
  const auto* a = static_cast<const char*>(in.raw_data());
  const auto* o = static_cast<const char*>(out.raw_data());
  const bool overlap = in.nbytes() > 0 && out.nbytes() > 0 && std::less<>()(a, o + out.nbytes()) &&
                       std::less<>()(o, a + in.nbytes());
  if (!overlap || (exact_ok && a == o && in.shape() == out.shape())) return {};
  return value_error(fn, ": the output overlaps argument ", i,
                     exact_ok ? "; an output may only be exactly an input of its own shape" : "; it must not");
}

/// Dimensions being assembled: on the stack for up to 8, so that planning a kernel call allocates
/// nothing in the common case.
class dims_buffer {
 public:
  explicit dims_buffer(std::size_t n) : n_(n) {
    if (n > inline_dims) large_.resize(n);
  }
  dims_buffer(const dims_buffer& o) : n_(o.n_), large_(o.large_) {
    std::copy(o.small_, o.small_ + inline_dims, small_);
  }
  dims_buffer& operator=(const dims_buffer&) = delete;
  std::int64_t* data() { return n_ > inline_dims ? large_.data() : small_; }
  const std::int64_t* data() const { return n_ > inline_dims ? large_.data() : small_; }
  std::int64_t& operator[](std::size_t i) { return data()[i]; }
  std::int64_t operator[](std::size_t i) const { return data()[i]; }
  std::size_t size() const { return n_; }
  std::span<const std::int64_t> span() const { return {data(), n_}; }

 private:
  static constexpr std::size_t inline_dims = 8;
  std::size_t n_;
  std::int64_t small_[inline_dims] = {};
  std::vector<std::int64_t> large_;
};

/// NumPy broadcasting of two shapes.
inline result<shape> broadcast(std::string_view fn, const shape& a, const shape& b) {
  const std::int64_t n = a.size() > b.size() ? a.size() : b.size();
  dims_buffer dims(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      return value_error(fn, ": shapes ", dims_text{a.dims()}, " and ", dims_text{b.dims()}, " cannot be broadcast");
    dims[static_cast<std::size_t>(i)] = da == 1 ? db : da;
  }
  return shape(dims.span());
}

/// An axis in [-ndim, ndim), normalized to [0, ndim).
inline result<std::int64_t> normalize_axis(std::string_view fn, std::int64_t axis, std::int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    return value_error(fn, ": axis ", axis, " is out of range for ", ndim, " dimensions");
  return axis < 0 ? axis + ndim : axis;
}

using xshape = xt::svector<std::size_t, 4>;
inline xshape to_xshape(const shape& s) {
  xshape out;
  out.reserve(static_cast<std::size_t>(s.size()));
  for (std::int64_t d : s) out.push_back(static_cast<std::size_t>(d));
  return out;
}

/// A read-only xtensor view of an input, and a writable one of an output.
template <class T>
auto in_view(const tensor& t) {
  const T* p = static_cast<const T*>(t.raw_data());
  return xt::adapt(p, static_cast<std::size_t>(t.numel()), xt::no_ownership(), to_xshape(t.shape()));
}
template <class T>
auto out_view(const tensor& t) {
  T* p = static_cast<T*>(t.raw_data());
  return xt::adapt(p, static_cast<std::size_t>(t.numel()), xt::no_ownership(), to_xshape(t.shape()));
}

/// Calls f<float>() or f<double>() by dtype (checked before).
template <class F>
decltype(auto) by_dtype(dtype t, F&& f) {
  if (t == dtype::float32()) return f.template operator()<float>();
  return f.template operator()<double>();
}

/// A new host tensor for a returning form.
inline result<tensor> make_output(const shape& s, dtype t) { return tensor::try_empty(s, t); }

}  // namespace detail

}  // namespace relaxvm::ops

#endif  // RELAXVM_OPS_COMMON_HPP
