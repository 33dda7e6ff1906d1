// SPDX-License-Identifier: Apache-2.0
// The object model: intrusively reference-counted objects identified by a type descriptor (no RTTI).
//
// Reference counts are plain integers unless the object is shared (share(), or
// RELAXVM_ATOMIC_REFCOUNT=1), because an atomic increment and decrement cost about 11 ns on the
// machines we measure, several times a whole VM call. docs/threads.md says what this means for
// threads. Where objects live: runtime/object_memory.hpp.
#ifndef RELAXVM_RUNTIME_OBJECT_HPP
#define RELAXVM_RUNTIME_OBJECT_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../base/config.hpp"
#include "../base/error.hpp"
#include "object_memory.hpp"
#include "value_kind.hpp"
#if RELAXVM_HEAP
#include <vector>
#endif

namespace relaxvm::RELAXVM_ABI {

class object;

namespace detail {
void release_object(object* o) noexcept;
void share_object(object* o) noexcept;
}  // namespace detail

/// What every object of one C++ type shares: its name, how to destroy it, and how to share what
/// it refers to.
struct object_type {
  std::string_view name;
  void (*destroy)(object*) noexcept;
  void (*share_children)(object*) noexcept = nullptr;
};

namespace detail {
template <class T>
void destroy_object(object* o) noexcept;
template <class T>
struct type_of_impl;
template <class T, class... Args>
T* make_raw_object_or_null(std::size_t tail_bytes, Args&&... args);
}  // namespace detail

/// The descriptor of object type T. T names itself with `static constexpr std::string_view
/// type_name`; it may define `void share_children() noexcept` if it holds other objects.
template <class T>
inline constexpr object_type type_of = detail::type_of_impl<T>::value;

/// Base of every heap object a value can refer to. Objects are created by make_object<T>().
class object {
 public:
  object(const object&) = delete;
  object& operator=(const object&) = delete;

  const object_type* type() const noexcept { return type_; }
  std::string_view type_name() const noexcept { return type_->name; }
  template <class T>
  bool is() const noexcept {
    return type_ == &type_of<T>;
  }

  /// The current number of references (for tests and diagnostics).
  std::uint32_t use_count() const noexcept {
    return atomic_rc() ? std::atomic_ref<std::uint32_t>(const_cast<std::uint32_t&>(refcount_)).load()
                       : refcount_;
  }
  bool is_shared() const noexcept { return (flags_ & flag_shared) != 0; }

  /// Makes this object's reference count (and those of the objects it holds) atomic, so that
  /// handles to it may be copied and dropped on several threads at once. Call it before the
  /// object is visible to a second thread. Values nested however deep are shared without deep
  /// recursion (see detail::share_object). Without threads (RELAXVM_THREADS=0) no count is
  /// atomic (see atomic_rc), so only this object is marked, and what it holds is not walked.
  void share() noexcept {
#if RELAXVM_THREADS
    if (!is_shared()) detail::share_object(this);
#else
    flags_ |= flag_shared;
#endif
  }

  // Named inc_ref/dec_ref, not retain/release, so that no object type's own methods can hide them.
  void inc_ref() noexcept {
    if (atomic_rc()) std::atomic_ref<std::uint32_t>(refcount_).fetch_add(1, std::memory_order_relaxed);
    else ++refcount_;
  }
  void dec_ref() noexcept {
    if (atomic_rc()) {
      if (std::atomic_ref<std::uint32_t>(refcount_).fetch_sub(1, std::memory_order_acq_rel) == 1) detail::release_object(this);
    } else if (--refcount_ == 0) {
      detail::release_object(this);
    }
  }

 protected:
  object() = default;
  ~object() = default;

 private:
  template <class T, class... Args>
  friend T* detail::make_raw_object_or_null(std::size_t tail_bytes, Args&&... args);

  static constexpr std::uint32_t flag_shared = 1;
  static constexpr std::uint32_t size_class_shift = 8;  // bits 8-15 of flags_: the memory's size class
  template <class T>
  friend void detail::destroy_object(object* o) noexcept;
  friend void detail::release_object(object* o) noexcept;
  friend void detail::share_object(object* o) noexcept;
  std::uint32_t size_class() const noexcept { return (flags_ >> size_class_shift) & 0xFF; }

  // A dead object waiting in the deferred list (see detail::release_object) no longer needs its
  // count or flags: those 8 bytes hold the link to the next one. On 64-bit targets the link
  // overwrites the size class too, so it travels in the link's low bits (objects are 8-aligned);
  // where a pointer fits in 4 bytes, flags_ is left alone.
  static constexpr std::uintptr_t link_code_mask = 7;
  void set_dead_link(object* next) noexcept {
    static_assert(sizeof(std::uintptr_t) <= sizeof(std::uint32_t) ||
                      (alignof(object) > link_code_mask && sizeof(std::uintptr_t) <= 2 * sizeof(std::uint32_t)),
                  "a dead object's link must fit in its count and flags");
    auto bits = reinterpret_cast<std::uintptr_t>(next);
    if constexpr (sizeof(std::uintptr_t) > sizeof(refcount_)) {
      const std::uint32_t c = size_class();
      bits |= c == detail::uncached_class ? link_code_mask : c;
      std::memcpy(static_cast<void*>(&refcount_), &bits, sizeof bits);
    } else {
      std::memcpy(static_cast<void*>(&refcount_), &bits, sizeof bits);
    }
  }
  /// Undoes set_dead_link (restoring the size class) and returns the link.
  object* take_dead_link() noexcept {
    std::uintptr_t bits = 0;
    std::memcpy(&bits, static_cast<const void*>(&refcount_), sizeof bits);
    if constexpr (sizeof(std::uintptr_t) > sizeof(refcount_)) {
      const std::uintptr_t code = bits & link_code_mask;
      bits &= ~link_code_mask;
      refcount_ = 0;
      flags_ = (code == link_code_mask ? detail::uncached_class : static_cast<std::uint32_t>(code)) << size_class_shift;
    }
    return reinterpret_cast<object*>(bits);
  }
  // Without threads (RELAXVM_THREADS=0: the library is used from one thread or one interrupt
  // priority, docs/threads.md) a shared object's count needs no atomics either.
  bool atomic_rc() const noexcept {
    return RELAXVM_ATOMIC_REFCOUNT || (RELAXVM_THREADS && (flags_ & flag_shared) != 0);
  }

  alignas(4) std::uint32_t refcount_ = 1;
  std::uint32_t flags_ = 0;
  const object_type* type_ = nullptr;
};

namespace detail {
#if !RELAXVM_HEAP
/// The infallible forms' failure (make_raw_object_with_tail), raised from one place.
[[noreturn]] RELAXVM_NOINLINE inline void raise_object_memory_error(std::size_t n) { raise(object_memory_error(n)); }
#endif

/// try_make_raw_object_with_tail without the result: null when the object memory has no room
/// (firmware mode; object_memory_error(sizeof(T) + tail_bytes) says why), so that callers that
/// return their own result make the error once.
template <class T, class... Args>
T* make_raw_object_or_null(std::size_t tail_bytes, Args&&... args) {
  static_assert(std::is_base_of_v<object, T>, "relaxvm::make_object<T>: T must derive from relaxvm::object");
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "relaxvm::make_object<T>: T must not be over-aligned");
  std::uint32_t size_class = 0;
  void* mem = detail::try_allocate_object_memory(sizeof(T) + tail_bytes, size_class);
#if !RELAXVM_HEAP
  if (mem == nullptr) return nullptr;
#endif
  T* p;
#if RELAXVM_USE_EXCEPTIONS
  try {
    p = ::new (mem) T(std::forward<Args>(args)...);
  } catch (...) {
    detail::free_object_memory(mem, size_class);
    throw;
  }
#else
  p = ::new (mem) T(std::forward<Args>(args)...);
#endif
  p->type_ = &type_of<T>;
  p->flags_ |= size_class << object::size_class_shift;
  return p;
}
}  // namespace detail

/// Like try_make_object, with `tail_bytes` of storage after the object (for shapes, strings,
/// tuples). T must be destroyed by detail::destroy_object<T>, which frees the whole block. In
/// firmware mode, an error when the object memory has no room: what programs make goes through
/// here, so that no program can halt the device by filling it.
template <class T, class... Args>
result<T*> try_make_raw_object_with_tail(std::size_t tail_bytes, Args&&... args) {
  T* p = detail::make_raw_object_or_null<T>(tail_bytes, std::forward<Args>(args)...);
#if !RELAXVM_HEAP
  if (p == nullptr) return detail::object_memory_error(sizeof(T) + tail_bytes);
#endif
  return p;
}

/// The infallible form for host code: a T with `tail_bytes` after it; running out of object
/// memory (firmware mode) is raised like any error (RELAXVM_ON_ERROR without exceptions).
template <class T, class... Args>
T* make_raw_object_with_tail(std::size_t tail_bytes, Args&&... args) {
  T* p = detail::make_raw_object_or_null<T>(tail_bytes, std::forward<Args>(args)...);
#if !RELAXVM_HEAP
  if (p == nullptr) detail::raise_object_memory_error(sizeof(T) + tail_bytes);
#endif
  return p;
}

/// Creates a T (derived from object) with one reference, owned by the caller.
template <class T, class... Args>
T* make_raw_object(Args&&... args) {
  return make_raw_object_with_tail<T>(0, std::forward<Args>(args)...);
}

namespace detail {

/// Objects freed inside the destruction of others, deeper than this, wait in a list instead:
/// dropping a value nested a million deep (a tuple in a tuple ..., closures capturing closures,
/// a Relay cons list) takes this many C++ frames at most and no extra memory.
inline constexpr std::uint32_t max_destroy_depth = 32;
struct destroy_state {
  std::uint32_t depth = 0;
  object* deferred = nullptr;  // linked through the dead objects themselves (object::set_dead_link)
};
inline RELAXVM_THREAD_LOCAL destroy_state destroying;  // trivially destructible: safe in any thread

/// Destroys an object whose last reference is gone (object::dec_ref). Out of line: every
/// reference drop would otherwise carry this code.
RELAXVM_NOINLINE inline void release_object(object* o) noexcept {
  destroy_state& s = destroying;
  if (s.depth >= max_destroy_depth) {
    o->set_dead_link(s.deferred);
    s.deferred = o;
    return;
  }
  ++s.depth;
  o->type_->destroy(o);
  if (s.depth == 1) {
    // The outermost destruction empties the list; what those free may defer more.
    while (object* d = s.deferred) {
      s.deferred = d->take_dead_link();
      d->type_->destroy(d);
    }
  }
  --s.depth;
}

/// Objects reached deeper than this while sharing go to a work list (heap builds; without a heap
/// there are no threads, so a deeper part left unshared changes nothing).
inline constexpr std::uint32_t max_share_depth = 32;
struct share_state {
  std::uint32_t depth = 0;
#if RELAXVM_HEAP
  std::vector<object*> pending;
#endif
};
inline share_state& sharing() {
  static RELAXVM_THREAD_LOCAL share_state s;
  return s;
}

/// Marks `o` and everything it holds shared (object::share).
RELAXVM_NOINLINE inline void share_object(object* o) noexcept {
  share_state& s = sharing();
  if (s.depth >= max_share_depth) {
#if RELAXVM_HEAP
#if RELAXVM_USE_EXCEPTIONS
    try {
      s.pending.push_back(o);
      return;
    } catch (...) {
      // No memory for the work list: share this one by recursing after all (below).
    }
#else
    s.pending.push_back(o);
    return;
#endif
#else
    return;
#endif
  }
  auto visit = [&s](object* x) {
    if (x->is_shared()) return;
    x->flags_ |= object::flag_shared;
    ++s.depth;
    if (x->type_->share_children) x->type_->share_children(x);
    --s.depth;
  };
  visit(o);
#if RELAXVM_HEAP
  if (s.depth == 0) {
    while (!s.pending.empty()) {
      object* x = s.pending.back();
      s.pending.pop_back();
      visit(x);
    }
  }
#endif
}

template <class T>
void destroy_object(object* o) noexcept {
  T* p = static_cast<T*>(o);
  const std::uint32_t size_class = o->size_class();
  p->~T();
  free_object_memory(static_cast<void*>(p), size_class);
}
template <class T>
concept has_share_children = requires(T& t) { t.share_children(); };
template <class T>
void share_children_of(object* o) noexcept {
  static_cast<T*>(o)->share_children();
}
template <class T>
constexpr void (*share_children_fn())(object*) noexcept {
  if constexpr (has_share_children<T> && RELAXVM_THREADS) return &share_children_of<T>;
  else return nullptr;
}
template <class T>
struct type_of_impl {
  static constexpr object_type value{T::type_name, &destroy_object<T>, share_children_fn<T>()};
};
struct borrow_t {
  explicit borrow_t() = default;
};
inline constexpr borrow_t borrow{};
}  // namespace detail

/// An owning, reference-counting pointer to an object of type T.
template <class T>
class object_ref {
 public:
  using element_type = T;

  constexpr object_ref() noexcept = default;
  constexpr object_ref(std::nullptr_t) noexcept {}  // NOLINT
  /// Takes over the reference `p` already holds (from make_raw_object).
  static object_ref adopt(T* p) noexcept {
    object_ref r;
    r.ptr_ = p;
    return r;
  }
  /// Adds a reference to `p`.
  static object_ref retain(T* p) noexcept {
    if (p) p->inc_ref();
    return adopt(p);
  }
  /// A reference that does not count: the VM uses these for arguments it lends to a callee.
  object_ref(detail::borrow_t, T* p) noexcept : ptr_(p) {}

  object_ref(const object_ref& o) noexcept : ptr_(o.ptr_) {
    if (ptr_) ptr_->inc_ref();
  }
  object_ref(object_ref&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  template <class U>
    requires std::is_convertible_v<U*, T*>
  object_ref(const object_ref<U>& o) noexcept : ptr_(o.get()) {  // NOLINT: upcast
    if (ptr_) ptr_->inc_ref();
  }
  object_ref& operator=(const object_ref& o) noexcept {
    if (o.ptr_) o.ptr_->inc_ref();
    reset_to(o.ptr_);
    return *this;
  }
  object_ref& operator=(object_ref&& o) noexcept {
    if (this != &o) reset_to(std::exchange(o.ptr_, nullptr));
    return *this;
  }
  ~object_ref() {
    if (ptr_) ptr_->dec_ref();
  }

  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  /// Gives up the reference without releasing it.
  T* release() noexcept { return std::exchange(ptr_, nullptr); }
  void reset() noexcept { reset_to(nullptr); }

  friend bool operator==(const object_ref& a, const object_ref& b) noexcept { return a.ptr_ == b.ptr_; }

 private:
  void reset_to(T* p) noexcept {
    T* old = std::exchange(ptr_, p);
    if (old) old->dec_ref();
  }
  T* ptr_ = nullptr;
};

/// make_object<T>(args...): a new T with one reference.
template <class T, class... Args>
object_ref<T> make_object(Args&&... args) {
  return object_ref<T>::adopt(make_raw_object<T>(std::forward<Args>(args)...));
}
/// The non-throwing form: in firmware mode, an error when the object memory has no room.
template <class T, class... Args>
result<object_ref<T>> try_make_object(Args&&... args) {
  T* p = detail::make_raw_object_or_null<T>(0, std::forward<Args>(args)...);
#if !RELAXVM_HEAP
  if (p == nullptr) return detail::object_memory_error(sizeof(T));
#endif
  return object_ref<T>::adopt(p);
}

/// What every object handle (shape, string, tensor, tuple, closure) has in common: the reference
/// it holds and the members through which value and the typed adapters move it in and out of
/// registers (the object_handle concept). Each handle adds its own constructors and operations.
template <class Object, value_kind Kind>
class object_handle_base {
 public:
  using object_type = Object;
  static constexpr value_kind kind = Kind;

  /// Marks the object (and what it holds) as used by several threads (docs/threads.md).
  void share() const noexcept {
    if (obj_) obj_->share();
  }
  Object* get() const noexcept { return obj_.get(); }
  /// Gives up the reference without releasing it (value takes it over).
  object* detach() noexcept { return obj_.release(); }

 protected:
  object_handle_base() noexcept = default;
  explicit object_handle_base(object_ref<Object>&& o) noexcept : obj_(std::move(o)) {}
  object_handle_base(detail::borrow_t b, Object* o) noexcept : obj_(b, o) {}

  object_ref<Object> obj_;
};

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_OBJECT_HPP
