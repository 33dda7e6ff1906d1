// SPDX-License-Identifier: Apache-2.0
// shape: an immutable list of int64 dimensions (the reference's ShapeTuple). The empty shape ()
// needs no allocation.
#ifndef RELAXVM_RUNTIME_SHAPE_HPP
#define RELAXVM_RUNTIME_SHAPE_HPP

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/checked_math.hpp"
#include "../base/text_builder.hpp"
#include "object.hpp"
#include "value_kind.hpp"

namespace relaxvm::RELAXVM_ABI {

struct shape_object : object {
  static constexpr std::string_view type_name = "relaxvm.shape";
  explicit shape_object(std::int64_t n) : size(n) {}
  std::int64_t size;
  std::int64_t* dims() noexcept { return reinterpret_cast<std::int64_t*>(this + 1); }
  const std::int64_t* dims() const noexcept { return reinterpret_cast<const std::int64_t*>(this + 1); }
};
static_assert(sizeof(shape_object) % alignof(std::int64_t) == 0);

class shape : public object_handle_base<shape_object, value_kind::shape> {
 public:
  static constexpr bool empty_is_value = true;  // no object: the empty shape

  /// The empty shape ().
  shape() noexcept = default;
  shape(std::initializer_list<std::int64_t> dims) : shape(std::span<const std::int64_t>(dims.begin(), dims.size())) {}
  /// The non-throwing form: in firmware mode, an error when the object memory has no room.
  static result<shape> try_make(std::span<const std::int64_t> dims) {
    std::int64_t* out = nullptr;
    // Returned as made (no second result to copy an error into): `out` is null unless there
    // are dimensions to write.
    result<shape> s = try_uninitialized(dims.size(), out);
    if (out != nullptr)
      for (std::size_t i = 0; i < dims.size(); ++i) out[i] = dims[i];
    return s;
  }
  /// try_make's shape, its error (firmware mode: no room in the object memory) raised.
  explicit shape(std::span<const std::int64_t> dims) : shape(try_make(dims).value()) {}
  shape(detail::borrow_t b, shape_object* o) noexcept : object_handle_base(b, o) {}
  explicit shape(object_ref<shape_object>&& o) noexcept : object_handle_base(std::move(o)) {}

  /// A shape of `n` dimensions, the i-th being `dim(i)` (a result<std::int64_t>), built in place
  /// without a scratch buffer; the first error of `dim` is returned.
  template <class F>
  static result<shape> generate(std::size_t n, F&& dim) {
    std::int64_t* dims = nullptr;
    RELAXVM_TRY_ASSIGN(shape s, try_uninitialized(n, dims));
    for (std::size_t i = 0; i < n; ++i) {
      RELAXVM_TRY_ASSIGN(dims[i], dim(i));
    }
    return s;
  }

  /// A shape of `n` dimensions whose values the caller writes through `dims` (null for n = 0)
  /// before anyone else sees the shape: for builtins that have checked every dimension already.
  static result<shape> try_uninitialized(std::size_t n, std::int64_t*& dims) {
    dims = nullptr;
    if (n == 0) return shape();
    const std::size_t tail = n * sizeof(std::int64_t);
    shape_object* o = detail::make_raw_object_or_null<shape_object>(tail, static_cast<std::int64_t>(n));
#if !RELAXVM_HEAP
    if (o == nullptr) return detail::object_memory_error(sizeof(shape_object) + tail);
#endif
    dims = o->dims();
    return shape(object_ref<shape_object>::adopt(o));
  }

  std::int64_t size() const noexcept { return obj_ ? obj_->size : 0; }
  bool empty() const noexcept { return size() == 0; }
  const std::int64_t* data() const noexcept { return obj_ ? obj_->dims() : nullptr; }
  /// Dimension i (0 <= i < size(): a shape with dimensions has its object).
  std::int64_t operator[](std::int64_t i) const noexcept { return obj_->dims()[i]; }
  const std::int64_t* begin() const noexcept { return data(); }
  const std::int64_t* end() const noexcept { return data() + size(); }
  std::span<const std::int64_t> dims() const noexcept {
    return {data(), static_cast<std::size_t>(size())};
  }

  /// The product of the dimensions; false when it overflows int64 or a dimension is negative.
  bool numel(std::int64_t& out) const noexcept { return detail::checked_numel(dims(), out); }

  friend bool operator==(const shape& a, const shape& b) noexcept { return same_dims(a.get(), b.get()); }

 private:
  // operator=='s loop: inline with a heap, one copy in firmware mode (kernels compare shapes).
#if RELAXVM_HEAP
  RELAXVM_ALWAYS_INLINE
#else
  RELAXVM_NOINLINE
#endif
  static bool same_dims(const shape_object* a, const shape_object* b) noexcept {
    if (a == b) return true;  // the same object, or both the empty shape
    // Only the empty shape has no object (a shape object has dimensions).
    if (a == nullptr || b == nullptr || a->size != b->size) return false;
    for (std::size_t i = 0; i < static_cast<std::size_t>(a->size); ++i)  // it fits: the dimensions are in memory
      if (a->dims()[i] != b->dims()[i]) return false;
    return true;
  }

};

namespace detail {
/// "[32, 16]"
inline void append_shape(text& out, std::span<const std::int64_t> dims) {
  out << '[';
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) out << ", ";
    out << dims[i];
  }
  out << ']';
}
/// Dimensions for a message ("[32, 16]"), written when streamed into a text.
struct dims_text {
  std::span<const std::int64_t> dims;
  friend text& operator<<(text& out, const dims_text& d) {
    append_shape(out, d.dims);
    return out;
  }
};
}  // namespace detail

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_SHAPE_HPP
