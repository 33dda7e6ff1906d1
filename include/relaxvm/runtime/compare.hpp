// SPDX-License-Identifier: Apache-2.0
// Comparing values: tensors by contents (rv::equal, rv::allclose, ==), tuples field by field,
// `==` on value; and where two tensors first differ, for test messages.
//
// One rule for floating-point elements everywhere here: NaN matches NaN (and nothing else), so
// that every comparison is reflexive (a tensor equals itself, and a tuple holding it) and an
// expected NaN in a test is written as a NaN; -0 equals +0. Elements of other types compare
// exactly (bool: zero or not).
#ifndef RELAXVM_RUNTIME_COMPARE_HPP
#define RELAXVM_RUNTIME_COMPARE_HPP

#include <bit>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <new>
#include <string>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/hash_index.hpp"
#include "../base/text_builder.hpp"
#include "adapters.hpp"
#include "tensor.hpp"
#include "tuple.hpp"
#include "value.hpp"

namespace relaxvm::RELAXVM_ABI {

/// Tolerances of rv::allclose: elements a and b (a from the first tensor) are close when
/// |a - b| <= atol + rtol * |b|, as NumPy's allclose; infinities match only the same infinity.
struct tolerance {
  double rtol = 1e-5;
  double atol = 1e-8;
};

/// Why two tensors differ, and where: the answer of rv::first_difference.
struct tensor_difference {
  enum class reason : std::uint8_t {
    none,       ///< they are equal (or close)
    defined,    ///< one is undefined
    dtype,      ///< element types differ
    shape,      ///< shapes differ
    not_host,   ///< one is on a device the host cannot read, or has no data
    element,    ///< element `index` (row-major) differs
  };
  reason why = reason::none;
  std::int64_t index = -1;  ///< reason::element: the first differing element, row-major
  explicit operator bool() const noexcept { return why != reason::none; }
};

namespace detail {

// An element read as the comparison needs it: integers exactly, floats as double.
struct element_value {
  bool is_float = false;
  double f = 0;
  std::int64_t i = 0;   // signed integers and bool
  std::uint64_t u = 0;  // unsigned integers
};

/// 2^k, exactly, for a normal double's exponent range.
constexpr double pow2(int k) noexcept {
  return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
}

inline double half_to_double(std::uint16_t h) noexcept {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v;
  if (exponent == 0) v = static_cast<double>(mantissa) * pow2(-24);
  else if (exponent == 31) v = mantissa != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = static_cast<double>(mantissa | 0x400) * pow2(exponent - 25);
  return sign ? -v : v;
}

inline element_value load_element(const unsigned char* p, dtype t) noexcept {
  auto load = [p](auto tag) {
    decltype(tag) x;
    std::memcpy(&x, p, sizeof(x));
    return x;
  };
  element_value e;
  if (t.is_bool()) {
    e.i = load(std::uint8_t{}) != 0;
  } else if (t.code == kDLFloat || t.code == kDLBfloat) {
    e.is_float = true;
    if (t.code == kDLBfloat) {
      const std::uint32_t bits = static_cast<std::uint32_t>(load(std::uint16_t{})) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      e.f = static_cast<double>(f);
    } else if (t.bits == 16) {
      e.f = half_to_double(load(std::uint16_t{}));
    } else if (t.bits == 32) {
      e.f = static_cast<double>(load(float{}));
    } else {
      e.f = load(double{});
    }
  } else if (t.code == kDLInt) {
    switch (t.bits) {
      case 8: e.i = load(std::int8_t{}); break;
      case 16: e.i = load(std::int16_t{}); break;
      case 32: e.i = load(std::int32_t{}); break;
      default: e.i = load(std::int64_t{}); break;
    }
  } else {
    switch (t.bits) {
      case 8: e.u = load(std::uint8_t{}); break;
      case 16: e.u = load(std::uint16_t{}); break;
      case 32: e.u = load(std::uint32_t{}); break;
      default: e.u = load(std::uint64_t{}); break;
    }
  }
  return e;
}

inline double as_double(const element_value& e) noexcept {
  if (e.is_float) return e.f;
  return e.u != 0 ? static_cast<double>(e.u) : static_cast<double>(e.i);
}

// Written out rather than taken from <cmath>, which every translation unit would pay to parse.
constexpr bool is_nan(double x) noexcept { return x != x; }
constexpr bool is_inf(double x) noexcept {
  return x == std::numeric_limits<double>::infinity() || x == -std::numeric_limits<double>::infinity();
}
constexpr double magnitude(double x) noexcept { return x < 0 ? -x : x; }

inline bool elements_match(const element_value& a, const element_value& b, const tolerance* tol) noexcept {
  if (!a.is_float) {
    if (a.i == b.i && a.u == b.u) return true;
    if (tol == nullptr) return false;
  } else {
    if (is_nan(a.f) || is_nan(b.f)) return is_nan(a.f) && is_nan(b.f);
    if (a.f == b.f) return true;  // infinities included
    if (tol == nullptr || is_inf(a.f) || is_inf(b.f)) return false;
  }
  const double x = as_double(a), y = as_double(b);
  return magnitude(x - y) <= tol->atol + tol->rtol * magnitude(y);
}

inline void append_element_value(text& out, const element_value& e) {
  if (e.is_float) append_double(out, e.f);
  else if (e.u != 0) out << e.u;
  else out << e.i;
}

// The address of element e (row-major) of a tensor, strided or not.
inline const unsigned char* element_address(const tensor& t, std::int64_t e) noexcept {
  const auto* base = static_cast<const unsigned char*>(t.raw_data());
  const std::int64_t size = t.dtype().bytes();
  if (t.strides().empty()) return base + e * size;
  std::int64_t offset = 0;
  for (std::int64_t d = t.ndim() - 1; d >= 0; --d) {
    const std::int64_t extent = t.shape()[d];
    offset += (e % extent) * t.strides()[d];
    e /= extent;
  }
  return base + offset * size;
}

// Element `flat` (row-major) of a tensor of shape `t`'s, as "[1, 0]".
inline void append_element_index(text& out, const tensor& t, std::int64_t flat) {
  std::int64_t rest = flat, idx[64] = {};
  const std::int64_t n = t.ndim() < 64 ? t.ndim() : 64;
  for (std::int64_t k = n - 1; k >= 0; --k) {
    idx[k] = rest % t.shape()[k];
    rest /= t.shape()[k];
  }
  out << '[';
  for (std::int64_t k = 0; k < n; ++k) out << (k ? ", " : "") << idx[k];
  out << ']';
}

inline tensor_difference compare_tensors(const tensor& a, const tensor& b, const tolerance* tol) noexcept {
  using reason = tensor_difference::reason;
  if (!a.defined() || !b.defined()) return {a.defined() == b.defined() ? reason::none : reason::defined, -1};
  if (a.dtype() != b.dtype()) return {reason::dtype, -1};
  if (a.shape() != b.shape()) return {reason::shape, -1};
  const std::int64_t n = a.numel();
  if (n == 0 || a.get() == b.get()) return {};
  auto readable = [](const tensor& t) { return t.device().device_type == kDLCPU && t.raw_data() != nullptr; };
  if (!readable(a) || !readable(b)) return {reason::not_host, -1};
  const dtype t = a.dtype();
  for (std::int64_t e = 0; e < n; ++e)
    if (!elements_match(load_element(element_address(a, e), t), load_element(element_address(b, e), t), tol))
      return {reason::element, e};
  return {};
}

// Tuples nested deeper than this compare as different unless they are the same object: a tuple
// can hold itself (vm.builtin.tuple_reset_item), and comparing must end.
inline constexpr int max_compare_depth = 64;

// Tuple pairs a comparison walks before it starts again with a memo (values_equal below).
inline constexpr int compare_memo_after = 256;

// Pairs of tuples found equal, each with the deepest level it was found equal at: a pair found
// equal at level d is equal wherever it appears at level d or above (with as many levels left to
// it), so that the memo gives the answer the walk without it would. A hosted table grows; firmware
// mode's holds 32 pairs on the stack. Either stops recording when it cannot grow, which costs time,
// never the answer.
class equal_pairs {
 public:
  equal_pairs() noexcept = default;
  equal_pairs(const equal_pairs&) = delete;
  equal_pairs& operator=(const equal_pairs&) = delete;
#if RELAXVM_HEAP
  ~equal_pairs() { ::operator delete(slots_, std::nothrow); }
#endif

  bool known(const object* a, const object* b, int depth) const noexcept {
    const entry* e = find(a, b);
    return e != nullptr && e->a == a && e->depth >= depth;
  }
  void add(const object* a, const object* b, int depth) noexcept {
    if (entry* e = find(a, b); e != nullptr && e->a == a) {
      if (depth > e->depth) e->depth = depth;
      return;
    }
    if (2 * (count_ + 1) > capacity() && !grow()) return;
    place({a, b, depth});
    ++count_;
  }

 private:
  struct entry {
    const object* a = nullptr;  // null: empty
    const object* b = nullptr;
    int depth = 0;
  };
  std::size_t capacity() const noexcept { return mask_ + (slots_ != nullptr ? 1 : 0); }
  std::size_t bucket(const object* a, const object* b) const noexcept {
    std::uint64_t h = hash_mix(hash_mix(hash_seed, reinterpret_cast<std::uintptr_t>(a)),
                               reinterpret_cast<std::uintptr_t>(b));
    return static_cast<std::size_t>(h ^ (h >> 29)) & mask_;
  }
  // The entry of (a, b), or the empty slot where it would go; null when there is no table.
  entry* find(const object* a, const object* b) const noexcept {
    if (slots_ == nullptr) return nullptr;
    for (std::size_t i = bucket(a, b);; i = (i + 1) & mask_) {
      entry& e = slots_[i];
      if (e.a == nullptr || (e.a == a && e.b == b)) return &e;
    }
  }
  void place(const entry& x) noexcept { *find(x.a, x.b) = x; }
#if RELAXVM_HEAP
  bool grow() noexcept {
    const std::size_t n = slots_ == nullptr ? 64 : 2 * capacity();
    auto* fresh = static_cast<entry*>(::operator new(n * sizeof(entry), std::nothrow));
    if (fresh == nullptr) return false;
    for (std::size_t i = 0; i < n; ++i) ::new (fresh + i) entry();
    entry* old = slots_;
    const std::size_t old_n = capacity();
    slots_ = fresh;
    mask_ = n - 1;
    for (std::size_t i = 0; i < old_n; ++i)
      if (old[i].a != nullptr) place(old[i]);
    ::operator delete(old, std::nothrow);
    return true;
  }
  entry* slots_ = nullptr;
  std::size_t mask_ = 0;
#else
  bool grow() noexcept {
    if (slots_ != nullptr) return false;
    slots_ = fixed_;
    mask_ = std::size(fixed_) - 1;
    return true;
  }
  entry fixed_[64];
  entry* slots_ = nullptr;
  std::size_t mask_ = 0;
#endif
  std::size_t count_ = 0;
};

// One comparison of two values. Without a memo it counts the tuple pairs it compares and gives
// up past compare_memo_after: a tuple DAG (one tuple held twice, 40 times over) unfolds into a
// tree of 2^40 pairs, and values_equal then compares again with a memo, where each pair is
// compared once per level it is proved at (at most max_compare_depth times). Small values, the
// common case, never make the memo.
struct compare_walk {
  equal_pairs* memo = nullptr;
  int pairs = 0;
  bool gave_up = false;

  bool equal(const value& a, const value& b, int depth) noexcept {
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
      case value_kind::null: return true;
      case value_kind::int64:
      case value_kind::boolean:
      case value_kind::dtype:
      case value_kind::device: return a.raw_int() == b.raw_int();
      case value_kind::float64: return a.raw_double() == b.raw_double() || (detail::is_nan(a.raw_double()) && detail::is_nan(b.raw_double()));
      case value_kind::context: return a.raw_context() == b.raw_context();
      case value_kind::string: return a.as<std::string_view>() == b.as<std::string_view>();
      case value_kind::shape: return a.as<shape>() == b.as<shape>();
      case value_kind::tensor: return !compare_tensors(a.as<tensor>(), b.as<tensor>(), nullptr);
      case value_kind::tuple: {
        const object* oa = a.get_object();
        const object* ob = b.get_object();
        if (oa == ob) return true;
        const tuple x = a.as<tuple>(), y = b.as<tuple>();
        if (x.tag() != y.tag() || x.size() != y.size() || depth >= max_compare_depth) return false;
        if (memo != nullptr) {
          if (memo->known(oa, ob, depth)) return true;
        } else if (++pairs > compare_memo_after) {
          gave_up = true;  // false from here up: the caller compares again with a memo
          return false;
        }
        for (std::int64_t i = 0; i < x.size(); ++i)
          if (!equal(x[i], y[i], depth + 1)) return false;
        if (memo != nullptr) memo->add(oa, ob, depth);
        return true;
      }
      case value_kind::closure:
      case value_kind::object: return a.get_object() == b.get_object();
    }
    return false;
  }
};

// Out of line: the memo's table stays off the stack of the common comparison.
RELAXVM_NOINLINE inline bool values_equal_with_memo(const value& a, const value& b) noexcept {
  equal_pairs memo;
  compare_walk w{&memo};
  return w.equal(a, b, 0);
}

inline bool values_equal(const value& a, const value& b) noexcept {
  compare_walk w;
  const bool same = w.equal(a, b, 0);
  return w.gave_up ? values_equal_with_memo(a, b) : same;
}

}  // namespace detail

/// Where tensors a and b first differ (exactly; NaN matches NaN), or reason::none.
inline tensor_difference first_difference(const tensor& a, const tensor& b) noexcept {
  return detail::compare_tensors(a, b, nullptr);
}
/// Where tensors a and b first differ beyond `tol`, or reason::none.
inline tensor_difference first_difference(const tensor& a, const tensor& b, tolerance tol) noexcept {
  return detail::compare_tensors(a, b, &tol);
}

/// Same dtype, same shape, every element equal (NaN matches NaN, -0 equals +0). Two undefined
/// tensors are equal; tensors the host cannot read equal only themselves.
inline bool equal(const tensor& a, const tensor& b) noexcept { return !first_difference(a, b); }

/// Same dtype, same shape, every element within |a - b| <= atol + rtol * |b| (NumPy's rule; NaN
/// matches NaN, an infinity only the same infinity; integers are exact when equal, else compared
/// as doubles).
inline bool allclose(const tensor& a, const tensor& b, double rtol = 1e-5, double atol = 1e-8) noexcept {
  return !first_difference(a, b, tolerance{rtol, atol});
}

/// Tensors compare by contents (rv::equal). Compare t.get() for the same object.
inline bool operator==(const tensor& a, const tensor& b) noexcept { return equal(a, b); }

/// Tuples compare by tag and fields (value ==).
inline bool operator==(const tuple& a, const tuple& b) noexcept {
  return detail::values_equal(value(a), value(b));
}

/// Values are equal when they have the same kind and
///   null: always; int64, bool, dtype, device: the same value; float64: == (NaN matches NaN);
///   string: the same characters; shape: the same dimensions; tensor: rv::equal;
///   tuple: the same tag and equal fields (nested deeper than 64: only the same tuple); a tuple
///     held many times (a DAG) is compared once per pair, not once per path to it;
///   closure, object, VM context: the same object.
/// No conversions: value(1) != value(1.0), value(true) != value(1).
inline bool operator==(const value& a, const value& b) noexcept { return detail::values_equal(a, b); }

/// A sentence saying how tensors a and b differ (beyond `tol` when given), naming the first
/// differing element with its index and both values; empty when they do not differ. For test
/// messages (see <relaxvm/doctest.hpp>).
inline std::string describe_difference(const tensor& a, const tensor& b, const tolerance* tol = nullptr) {
  const tensor_difference d = detail::compare_tensors(a, b, tol);
  detail::text out;
  using reason = tensor_difference::reason;
  switch (d.why) {
    case reason::none: return {};
    case reason::defined: out << (a.defined() ? "the second" : "the first") << " tensor is undefined"; break;
    case reason::dtype: out << "dtypes differ: " << a.dtype() << " and " << b.dtype(); break;
    case reason::shape:
      out << "shapes differ: " << detail::dims_text{a.shape().dims()} << " and " << detail::dims_text{b.shape().dims()};
      break;
    case reason::not_host: out << "a tensor is on " << (a.device().device_type == kDLCPU ? b.device() : a.device())
                               << " or has no data: the host cannot read it"; break;
    case reason::element: {
      out << "element ";
      detail::append_element_index(out, a, d.index);
      out << " (flat index " << d.index << ") differs: ";
      detail::append_element_value(out, detail::load_element(detail::element_address(a, d.index), a.dtype()));
      out << " and ";
      detail::append_element_value(out, detail::load_element(detail::element_address(b, d.index), b.dtype()));
      if (tol != nullptr) {
        out << " (rtol ";
        detail::append_double(out, tol->rtol);
        out << ", atol ";
        detail::append_double(out, tol->atol);
        out << ')';
      }
      break;
    }
  }
  return std::string(out.view());
}

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_COMPARE_HPP
