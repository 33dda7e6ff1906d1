// SPDX-License-Identifier: Apache-2.0
// tensor: an n-dimensional array over DLPack's DLTensor. Zero-copy exchange with other frameworks
// through to_dlpack()/from_dlpack(), honouring DLPack's ownership rules.
#ifndef RELAXVM_RUNTIME_TENSOR_HPP
#define RELAXVM_RUNTIME_TENSOR_HPP

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/checked_math.hpp"
#include "../base/device.hpp"
#include "../base/dtype.hpp"
#include "../base/error.hpp"
#include "../base/text_builder.hpp"
#include "object.hpp"
#include "shape.hpp"
#include "value_kind.hpp"

namespace relaxvm::RELAXVM_ABI {

struct storage_object;

/// Data of tensors made by empty() and from() is aligned to this many bytes.
inline constexpr std::size_t tensor_alignment = 64;

struct tensor_object : object {
  static constexpr std::string_view type_name = "relaxvm.tensor";
  tensor_object() = default;
  /// A tensor of shape `s` over `data`, which `keep` (may be null; it gains a reference) keeps
  /// alive: every member set where it is made (zeroing them first, then assigning, costs code).
  tensor_object(void* data, const shape& s, dtype t, device d, object* keep, bool ro, std::int64_t n,
                std::uint64_t byte_offset) noexcept
      : dl{data, d, 0, t, nullptr, nullptr, byte_offset},
        dims(s),
        numel(n),
        owner(object_ref<object>::retain(keep)),
        read_only(ro) {
    if (shape_object* o = dims.get()) {  // the empty shape has no object: ndim 0, no dimensions
      dl.ndim = static_cast<int>(o->size);
      dl.shape = o->dims();
    }
  }
  ~tensor_object() {
    if (own_data) detail::heap_free(own_data, tensor_alignment);
  }
  void share_children() noexcept {
    if (owner) owner->share();
    if (auto* s = dims.get()) s->share();
    if (auto* s = strides.get()) s->share();
  }

  DLTensor dl{};          ///< dl.shape and dl.strides point into `dims` and `strides`
  shape dims;
  shape strides;          ///< empty when the tensor is compact (dl.strides == nullptr)
  std::int64_t numel = 0;
  object_ref<object> owner;  ///< keeps foreign data alive (DLPack, an executable, a storage)
  void* own_data = nullptr;  ///< data this tensor allocated itself
  bool read_only = false;
#if RELAXVM_HEAP
  /// The storage (its owner) whose kept_views list this tensor is on, while an instruction slot
  /// keeps it (see keep_view in runtime/context.hpp); null otherwise.
  storage_object* kept_in = nullptr;
#endif
};

/// What a tensor view of `ndim` dimensions (tensor::try_view: a caller's input, a kernel's view)
/// takes of firmware mode's object memory: its object and its shape's.
constexpr std::size_t tensor_view_object_bytes(std::size_t ndim) {
  return object_block_bytes(sizeof(tensor_object)) +
         (ndim > 0 ? object_block_bytes(sizeof(shape_object) + ndim * sizeof(std::int64_t)) : 0);
}

namespace detail {

/// Keeps a DLManagedTensor until the last tensor viewing it is gone, then calls its deleter once.
struct dlpack_owner : object {
  static constexpr std::string_view type_name = "relaxvm.dlpack_owner";
  explicit dlpack_owner(DLManagedTensor* m) : managed(m) {}
  ~dlpack_owner() {
    if (managed->deleter) managed->deleter(managed);
  }
  DLManagedTensor* managed;
};

/// What to_dlpack() hands out: the consumer's deleter call drops our reference.
struct dlpack_export {
  DLManagedTensor managed;
  tensor_object* keep;
  static void deleter(DLManagedTensor* self) {
    auto* e = static_cast<dlpack_export*>(self->manager_ctx);
    e->keep->dec_ref();
    delete e;
  }
};

/// Keeps a shared_ptr alive for tensors that view memory it owns (an executable's constants).
struct keep_alive_owner : object {
  static constexpr std::string_view type_name = "relaxvm.keep_alive";
  explicit keep_alive_owner(std::shared_ptr<const void> p) : keep(std::move(p)) {}
  std::shared_ptr<const void> keep;
};

inline status check_tensor_layout(std::span<const std::int64_t> dims, dtype t, std::int64_t& numel,
                                  std::int64_t& nbytes, std::string_view what) {
  if (!t.valid_for_tensor())
    return value_error(what, ": ", t, " is not a valid tensor element type");
  numel = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) return value_error(what, ": dimension ", i, " is ", dims[i], "; dimensions must be 0 or more");
    if (!checked_mul(numel, dims[i], numel))
      return value_error(what, ": the element count of shape ", dims_text{dims}, " overflows int64");
  }
  if (!checked_mul(numel, t.bytes(), nbytes))
    return value_error(what, ": ", numel, " elements of ", t, " overflow int64 bytes");
  return {};
}

}  // namespace detail

class tensor : public object_handle_base<tensor_object, value_kind::tensor> {
 public:

  /// An undefined tensor (no object).
  tensor() noexcept = default;
  tensor(detail::borrow_t b, tensor_object* o) noexcept : object_handle_base(b, o) {}
  explicit tensor(object_ref<tensor_object> o) noexcept : object_handle_base(std::move(o)) {}

  /// A new uninitialized host tensor; `d` must be a CPU device (any id).
  static result<tensor> try_empty(const relaxvm::shape& s, relaxvm::dtype t,
                                  relaxvm::device d = relaxvm::device::cpu()) {
    if (d.device_type != kDLCPU)
      return detail::value_error("tensor::empty: cannot allocate on ", d,
                                 "; relaxvm allocates host (cpu) memory only");
    std::int64_t numel = 0, nbytes = 0;
    RELAXVM_TRY(detail::check_tensor_layout(s.dims(), t, numel, nbytes, detail::literal("tensor::empty")));
    // A program asking for more memory than there is gets an error, not an exception (or, without
    // exceptions, termination).
    void* data = detail::heap_allocate(static_cast<std::size_t>(nbytes), tensor_alignment);
    if (data == nullptr) return detail::runtime_error("tensor::empty: cannot allocate ", nbytes, " bytes", detail::no_heap_note);
    result<object_ref<tensor_object>> made =
        try_make_object<tensor_object>(data, s, t, d, nullptr, false, numel, std::uint64_t{0});
    if (!made.ok()) {
      detail::heap_free(data, tensor_alignment);
      return std::move(made).error();
    }
    object_ref<tensor_object> o = std::move(*made);
    o->own_data = data;
    return tensor(std::move(o));
  }
  static tensor empty(const relaxvm::shape& s, relaxvm::dtype t, relaxvm::device d = relaxvm::device::cpu()) {
    return try_empty(s, t, d).value();
  }

  /// A new host tensor holding a copy of `data` (row-major); data.size() must equal the element
  /// count of `s`.
  template <class T>
  static result<tensor> try_from(std::span<const T> data, const relaxvm::shape& s) {
    std::int64_t numel = 0;
    if (!s.numel(numel) || numel != static_cast<std::int64_t>(data.size()))
      return detail::value_error("tensor::from: ", data.size(), " values do not fill shape ",
                                 detail::dims_text{s.dims()});
    RELAXVM_TRY_ASSIGN(tensor t, try_empty(s, dtype_of<T>()));
    if (!data.empty()) std::memcpy(t.raw_data(), data.data(), data.size() * sizeof(T));
    return t;
  }
  template <class T>
  static tensor from(std::span<const T> data, const relaxvm::shape& s) {
    return try_from<T>(data, s).value();
  }
  template <class T>
  static tensor from(std::initializer_list<T> data, const relaxvm::shape& s) {
    return try_from<T>(std::span<const T>(data.begin(), data.size()), s).value();
  }
  /// A 0-d tensor holding `v`.
  template <class T>
  static tensor scalar(T v) {
    return from<T>(std::span<const T>(&v, 1), relaxvm::shape());
  }

  /// A tensor over memory it does not own; `owner` (may be null) keeps that memory alive.
  static result<tensor> try_view(void* data, const relaxvm::shape& s, relaxvm::dtype t, relaxvm::device d,
                                 object_ref<object> owner, bool read_only) {
    std::int64_t numel = 0, nbytes = 0;
    RELAXVM_TRY(detail::check_tensor_layout(s.dims(), t, numel, nbytes, detail::literal("tensor::view")));
    if (data == nullptr && nbytes > 0) return detail::value_error("tensor::view: null data for ", nbytes, " bytes");
    return try_view_checked(data, s, t, d, owner.get(), read_only, numel);
  }
  /// try_view of a layout its caller has checked already (check_tensor_layout gave `numel`, and
  /// data is not null unless there are no bytes): only makes the object. `owner` (may be null)
  /// gains a reference; the first element is `byte_offset` bytes after `data`.
  static result<tensor> try_view_checked(void* data, const relaxvm::shape& s, relaxvm::dtype t, relaxvm::device d,
                                         object* owner, bool read_only, std::int64_t numel,
                                         std::uint64_t byte_offset = 0) {
    tensor_object* made =
        detail::make_raw_object_or_null<tensor_object>(0, data, s, t, d, owner, read_only, numel, byte_offset);
#if !RELAXVM_HEAP
    if (made == nullptr) return detail::object_memory_error(sizeof(tensor_object));
#endif
    return tensor(object_ref<tensor_object>::adopt(made));
  }

  /// Takes ownership of a DLPack tensor without copying its data; its deleter is called once, when
  /// the last tensor viewing it is gone. On error `m` is left untouched and still belongs to the
  /// caller.
  static result<tensor> try_from_dlpack(DLManagedTensor* m) {
    if (m == nullptr) return detail::value_error("from_dlpack: the DLManagedTensor pointer is null");
    const DLTensor& dl = m->dl_tensor;
    if (m->deleter == &detail::dlpack_export::deleter) {
      // One of ours coming back: the same object, not a wrapper around a wrapper.
      auto* e = static_cast<detail::dlpack_export*>(m->manager_ctx);
      if (dl.data == e->keep->dl.data && dl.byte_offset == e->keep->dl.byte_offset && dl.ndim == e->keep->dl.ndim) {
        tensor t(object_ref<tensor_object>::retain(e->keep));
        m->deleter(m);
        return t;
      }
    }
    if (dl.ndim < 0) return detail::value_error("from_dlpack: ndim is ", dl.ndim);
    if (dl.ndim > 0 && dl.shape == nullptr) return detail::value_error("from_dlpack: ndim is ", dl.ndim, " but shape is null");
    relaxvm::shape s(std::span<const std::int64_t>(dl.shape, static_cast<std::size_t>(dl.ndim)));
    std::int64_t numel = 0, nbytes = 0;
    RELAXVM_TRY(detail::check_tensor_layout(s.dims(), dl.dtype, numel, nbytes, "from_dlpack"));
    if (dl.data == nullptr && nbytes > 0) return detail::value_error("from_dlpack: data is null for ", nbytes, " bytes");
    auto o = make_object<tensor_object>(dl.data, s, relaxvm::dtype(dl.dtype), relaxvm::device(dl.device), nullptr, false,
                                        numel, dl.byte_offset);
    if (dl.strides != nullptr) {
      o->strides = relaxvm::shape(std::span<const std::int64_t>(dl.strides, static_cast<std::size_t>(dl.ndim)));
      o->dl.strides = const_cast<std::int64_t*>(o->strides.data());
    }
    o->owner = make_object<detail::dlpack_owner>(m);
    return tensor(std::move(o));
  }
  static tensor from_dlpack(DLManagedTensor* m) { return try_from_dlpack(m).value(); }

  /// A DLPack view of this tensor that keeps it alive until the consumer calls the deleter. The
  /// tensor becomes shared (see object::share), since the consumer may call the deleter on any
  /// thread. DLPack 0.6 has no read-only flag: do not hand read-only tensors to writers.
  result<DLManagedTensor*> try_to_dlpack() const {
    if (!obj_) return detail::value_error("to_dlpack: the tensor is undefined");
    obj_->share();
    auto* e = new detail::dlpack_export{};
    e->managed.dl_tensor = obj_->dl;
    e->managed.manager_ctx = e;
    e->managed.deleter = &detail::dlpack_export::deleter;
    e->keep = obj_.get();
    e->keep->inc_ref();
    return &e->managed;
  }
  DLManagedTensor* to_dlpack() const { return try_to_dlpack().value(); }

  bool defined() const noexcept { return static_cast<bool>(obj_); }
  const relaxvm::shape& shape() const noexcept { return obj_->dims; }
  std::int64_t ndim() const noexcept { return obj_->dl.ndim; }
  relaxvm::dtype dtype() const noexcept { return obj_->dl.dtype; }
  relaxvm::device device() const noexcept { return obj_->dl.device; }
  std::int64_t numel() const noexcept { return obj_->numel; }
  std::int64_t nbytes() const noexcept { return obj_->numel * dtype().bytes(); }
  std::uint64_t byte_offset() const noexcept { return obj_->dl.byte_offset; }
  /// Explicit strides, or an empty shape when the tensor is compact row-major.
  const relaxvm::shape& strides() const noexcept { return obj_->strides; }
  bool is_contiguous() const noexcept {
    if (obj_->strides.empty()) return true;
    const std::span<const std::int64_t> dims = obj_->dims.dims(), strides = obj_->strides.dims();
    std::int64_t expected = 1;
    for (std::size_t i = dims.size(); i-- > 0;) {
      if (dims[i] != 1 && strides[i] != expected) return false;
      expected *= dims[i];
    }
    return true;
  }
  /// True for tensors that view memory they must not write, such as an executable's constants.
  bool read_only() const noexcept { return obj_->read_only; }
  const DLTensor& dl() const noexcept { return obj_->dl; }
  /// The first element's address (data + byte_offset); check read_only() before writing through
  /// it, and device() before reading it on the host. Null for a tensor without data (DLPack allows
  /// null data for zero elements, with any byte_offset).
  void* raw_data() const noexcept {
    return obj_->dl.data ? static_cast<char*>(obj_->dl.data) + obj_->dl.byte_offset : nullptr;
  }

  /// The data as T*, checking that T matches the dtype. A read-only tensor (a constant of an
  /// executable, shared by every VM) gives its data only as const: data<const float>().
  template <class T>
  result<T*> try_data() const {
    if (RELAXVM_UNLIKELY(!data_ok<T>())) return data_error(obj_.get(), dtype_of<std::remove_const_t<T>>());
    return static_cast<T*>(raw_data());
  }
  template <class T>
  T* data() const {
#if RELAXVM_HEAP
    if (RELAXVM_UNLIKELY(!data_ok<T>())) detail::raise(data_error(obj_.get(), dtype_of<std::remove_const_t<T>>()));
    return static_cast<T*>(raw_data());
#else  // firmware mode: one copy of the checks for every T
    return static_cast<T*>(checked_data(dtype_of<std::remove_const_t<T>>(), !std::is_const_v<T>));
#endif
  }

  /// A compact host copy with its own (writable) data.
  result<tensor> try_copy() const {
    if (!obj_) return detail::value_error("tensor::copy: the tensor is undefined");
    if (!is_contiguous()) return detail::value_error("tensor::copy: strided tensors are not supported yet");
    if (device().device_type != kDLCPU)
      return detail::value_error("tensor::copy: the tensor is on ", device(), ", whose memory the host cannot read");
    RELAXVM_TRY_ASSIGN(tensor t, try_empty(shape(), dtype()));
    if (nbytes() > 0) std::memcpy(t.raw_data(), raw_data(), static_cast<std::size_t>(nbytes()));
    return t;
  }
  tensor copy() const { return try_copy().value(); }

  // == compares contents: runtime/compare.hpp (t.get() tells the same object).

 private:
  // try_data's checks, and (out of line, one for every T) why they failed.
  template <class T>
  bool data_ok() const noexcept {
    return data_ok(dtype_of<std::remove_const_t<T>>(), !std::is_const_v<T>);
  }
  bool data_ok(relaxvm::dtype want, bool writable) const noexcept {
    return obj_ && dtype() == want && device().device_type == kDLCPU && (!writable || !obj_->read_only);
  }
#if !RELAXVM_HEAP
  // data<T>()'s checks for a T of dtype `want`, writable or const.
  RELAXVM_NOINLINE void* checked_data(relaxvm::dtype want, bool writable) const {
    if (RELAXVM_UNLIKELY(!data_ok(want, writable))) detail::raise(data_error(obj_.get(), want));
    return raw_data();
  }
#endif
  RELAXVM_NOINLINE static error data_error(const tensor_object* o, relaxvm::dtype want) {
    if (!o) return detail::value_error("tensor::data: the tensor is undefined");
    const relaxvm::dtype have = o->dl.dtype;
    if (want != have) return detail::type_error("tensor::data<", want, ">: the tensor holds ", have);
    if (o->dl.device.device_type != kDLCPU)
      return detail::value_error("tensor::data<", want, ">: the tensor is on ", relaxvm::device(o->dl.device),
                                 ", whose memory the host cannot read");
    // The one check left: a read-only tensor's data asked for as writable.
    return detail::value_error("tensor::data<", want,
                               ">: the tensor is read-only (a constant of an executable); read it through data<const ",
                               want, ">()");
  }
};

namespace detail {

inline void append_element(text& out, const void* p, dtype t) {
  auto load = [&](auto tag) {
    decltype(tag) x;
    std::memcpy(&x, p, sizeof(x));
    return x;
  };
  if (t.is_bool()) out << (load(std::uint8_t{}) != 0);
  else if (t == dtype::float32()) append_float(out, load(float{}));
  else if (t == dtype::float64()) append_double(out, load(double{}));
  else if (t == dtype::int8()) out << load(std::int8_t{});
  else if (t == dtype::int16()) out << load(std::int16_t{});
  else if (t == dtype::int32()) out << load(std::int32_t{});
  else if (t == dtype::int64()) out << load(std::int64_t{});
  else if (t == dtype::uint8()) out << load(std::uint8_t{});
  else if (t == dtype::uint16()) out << load(std::uint16_t{});
  else if (t == dtype::uint32()) out << load(std::uint32_t{});
  else if (t == dtype::uint64()) out << load(std::uint64_t{});
  else out << '?';
}

/// "tensor([[1, 2], [3, 4]], shape=[2, 2], dtype=float32, device=cpu:0)"; at most `limit`
/// elements are written.
inline void append_tensor(text& out, const tensor& t, std::int64_t limit = 64) {
  if (!t.defined()) {
    out << "tensor(undefined)";
    return;
  }
  out << "tensor(";
  const std::int64_t n = t.ndim();
  if (t.device().device_type == kDLCPU && t.is_contiguous()) {
    const auto* base = static_cast<const unsigned char*>(t.raw_data());
    const std::int64_t esize = t.dtype().bytes();
    std::int64_t written = 0;
    // Walk the elements in row-major order, opening and closing brackets at dimension edges.
    std::int64_t idx[64] = {};
    if (n > 64) {
      out << "...";
    } else if (t.numel() == 0) {
      for (std::int64_t d = 0; d < n; ++d) out << '[';
      for (std::int64_t d = 0; d < n; ++d) out << ']';
    } else {
      for (std::int64_t d = 0; d < n; ++d) out << '[';
      for (std::int64_t e = 0; e < t.numel(); ++e) {
        if (written == limit) {
          out << "...";
          break;
        }
        append_element(out, base + e * esize, t.dtype());
        ++written;
        std::int64_t d = n - 1;
        while (d >= 0 && ++idx[d] == t.shape()[d]) {
          idx[d] = 0;
          out << ']';
          --d;
        }
        if (d >= 0) {
          out << ", ";
          for (std::int64_t k = d + 1; k < n; ++k) out << '[';
        }
      }
    }
  } else {
    out << "...";
  }
  out << ", shape=";
  append_shape(out, t.shape().dims());
  out << ", dtype=" << t.dtype() << ", device=" << t.device() << ')';
}

}  // namespace detail

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_TENSOR_HPP
