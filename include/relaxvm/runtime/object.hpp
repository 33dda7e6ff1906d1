// SPDX-License-Identifier: Apache-2.0
// The object model: intrusively reference-counted objects identified by a type descriptor (no RTTI).
//
// Reference counts are plain integers unless the object is shared (share(), or
// RELAXVM_ATOMIC_REFCOUNT=1), because an atomic increment and decrement cost about 11 ns on the
// machines we measure, several times a whole VM call. docs/threads.md says what this means for
// threads.
//
// Object memory comes from a small per-thread cache of blocks (32 to 512 bytes), so that a program
// that makes and drops the same objects on every run (tensors, storages, shapes) stops calling the
// system allocator after its first run. RELAXVM_OBJECT_CACHE=0 turns the cache off.
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
#include "value_kind.hpp"
#include "../base/error.hpp"
#if RELAXVM_HEAP
#include <vector>
#endif

#if RELAXVM_OBJECT_CACHE && defined(RELAXVM_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace relaxvm::RELAXVM_ABI {

class object;

namespace detail {
void release_object(object* o) noexcept;
void share_object(object* o) noexcept;

// Blocks of 32 << c bytes (c < size_classes) are kept on per-thread free lists, at most
// max_cached_blocks each; larger or surplus blocks go back to the system.
inline constexpr std::uint32_t size_classes = 5;
inline constexpr std::uint32_t uncached_class = 0xFF;
inline constexpr std::size_t max_cached_blocks = 256;

constexpr std::uint32_t size_class_of(std::size_t n) {
  for (std::uint32_t c = 0; c < size_classes; ++c)
    if (n <= (std::size_t{32} << c)) return c;
  return uncached_class;
}

#if RELAXVM_OBJECT_CACHE
// Under AddressSanitizer a cached block is poisoned, so a use after free is still reported.
#if defined(RELAXVM_ASAN)
inline void poison_block(void* p, std::uint32_t c) noexcept { ASAN_POISON_MEMORY_REGION(p, std::size_t{32} << c); }
inline void unpoison_block(void* p, std::uint32_t c) noexcept { ASAN_UNPOISON_MEMORY_REGION(p, std::size_t{32} << c); }
#else
inline void poison_block(void*, std::uint32_t) noexcept {}
inline void unpoison_block(void*, std::uint32_t) noexcept {}
#endif

struct object_cache {
  struct block {
    block* next;
  };
  block* heads[size_classes] = {};
  std::size_t counts[size_classes] = {};
  object_cache() = default;
  object_cache(const object_cache&) = delete;
  object_cache& operator=(const object_cache&) = delete;
  ~object_cache();
};
// Set when this thread's cache is destroyed: objects freed later (by static destructors) go
// straight back to the system. A trivially destructible thread_local, so it outlives the cache.
inline RELAXVM_THREAD_LOCAL bool object_cache_gone = false;
inline object_cache::~object_cache() {
  for (std::uint32_t c = 0; c < size_classes; ++c)
    while (block* b = heads[c]) {
      unpoison_block(b, c);
      heads[c] = b->next;
      ::operator delete(static_cast<void*>(b));
    }
  object_cache_gone = true;
}
inline object_cache& thread_object_cache() {
  static RELAXVM_THREAD_LOCAL object_cache cache;
  return cache;
}
#endif

/// Ends the message of a failed heap allocation.
inline constexpr std::string_view no_heap_note =
    RELAXVM_HEAP ? "" : " (firmware mode, RELAXVM_HEAP=0, has no heap: allocate from an arena allocator)";
/// Tensor data and allocator blocks from the system heap: null when there is no room, and always
/// in firmware mode (RELAXVM_HEAP=0), which has no heap and links no operator new.
inline void* heap_allocate(std::size_t nbytes, std::size_t alignment) noexcept {
#if RELAXVM_HEAP
  return ::operator new(nbytes > 0 ? nbytes : 1, std::align_val_t{alignment}, std::nothrow);
#else
  (void)nbytes;
  (void)alignment;
  return nullptr;
#endif
}
inline void heap_free(void* p, std::size_t alignment) noexcept {
#if RELAXVM_HEAP
  ::operator delete(p, std::align_val_t{alignment});
#else
  (void)p;  // heap_allocate gave nothing to free
  (void)alignment;
#endif
}

#if !RELAXVM_HEAP
// Firmware mode: every object comes from the buffer given to set_object_memory(), in blocks of
// the size classes, and goes back to a free list of its class; nothing comes from the heap.
struct object_memory_state {
  struct block {
    block* next;
  };
  std::byte* next = nullptr;
  std::byte* end = nullptr;
  std::size_t size = 0;
  std::size_t peak = 0;
  std::size_t live = 0;  // objects not yet freed
  block* heads[size_classes] = {};
};
inline object_memory_state& object_memory() {
  static object_memory_state state;
  return state;
}
/// Why an object of `n` bytes found no room in the object memory.
RELAXVM_NOINLINE inline error object_memory_error(std::size_t n) {
  if (n > (std::size_t{32} << (size_classes - 1)))
    return runtime_error("relaxvm: an object of ", n, " bytes is larger than firmware mode's largest block (",
                         std::size_t{32} << (size_classes - 1), " bytes): a string, shape or tuple too long");
  return runtime_error("relaxvm: the object memory (", object_memory().size, " bytes) has no room for an object of ", n,
                       " bytes; give set_object_memory() a larger buffer");
}
#endif

/// Memory for an object of `n` bytes; `size_class` receives what free_object_memory needs. In
/// firmware mode null when the object memory has no room (try_make_raw_object_with_tail turns
/// that into an error); with a heap, operator new's behaviour.
inline void* try_allocate_object_memory(std::size_t n, std::uint32_t& size_class) {
  size_class = size_class_of(n);
#if !RELAXVM_HEAP
  object_memory_state& m = object_memory();
  if (size_class == uncached_class) return nullptr;
  if (object_memory_state::block* b = m.heads[size_class]) {
    ++m.live;
    m.heads[size_class] = b->next;
    return b;
  }
  const std::size_t bytes = std::size_t{32} << size_class;
  if (static_cast<std::size_t>(m.end - m.next) < bytes) return nullptr;
  ++m.live;
  void* p = m.next;
  m.next += bytes;
  const auto used = static_cast<std::size_t>(m.next - (m.end - m.size));
  m.peak = used > m.peak ? used : m.peak;
  return p;
#endif
#if RELAXVM_OBJECT_CACHE
  if (size_class != uncached_class && !object_cache_gone) {
    object_cache& cache = thread_object_cache();
    if (object_cache::block* b = cache.heads[size_class]) {
      unpoison_block(b, size_class);
      cache.heads[size_class] = b->next;
      --cache.counts[size_class];
      return b;
    }
  }
#endif
  return ::operator new(size_class != uncached_class ? std::size_t{32} << size_class : n);
}

inline void free_object_memory(void* p, std::uint32_t size_class) noexcept {
  (void)size_class;  // not needed without the cache
#if !RELAXVM_HEAP
  auto* b = static_cast<object_memory_state::block*>(p);
  object_memory_state& m = object_memory();
  b->next = m.heads[size_class];
  m.heads[size_class] = b;
  --m.live;
  return;
#endif
#if RELAXVM_OBJECT_CACHE
  if (size_class != uncached_class && !object_cache_gone) {
    object_cache& cache = thread_object_cache();
    if (cache.counts[size_class] < max_cached_blocks) {
      auto* b = static_cast<object_cache::block*>(p);
      b->next = cache.heads[size_class];
      cache.heads[size_class] = b;
      ++cache.counts[size_class];
      poison_block(b, size_class);
      return;
    }
  }
#endif
  ::operator delete(p);
}

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
  /// recursion (see detail::share_object).
  void share() noexcept {
    if (!is_shared()) detail::share_object(this);
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
  friend result<T*> try_make_raw_object_with_tail(std::size_t tail_bytes, Args&&... args);

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
  bool atomic_rc() const noexcept { return RELAXVM_ATOMIC_REFCOUNT || (flags_ & flag_shared) != 0; }

  alignas(4) std::uint32_t refcount_ = 1;
  std::uint32_t flags_ = 0;
  const object_type* type_ = nullptr;
};

/// Like try_make_object, with `tail_bytes` of storage after the object (for shapes, strings,
/// tuples). T must be destroyed by detail::destroy_object<T>, which frees the whole block. In
/// firmware mode, an error when the object memory has no room: what programs make goes through
/// here, so that no program can halt the device by filling it.
template <class T, class... Args>
result<T*> try_make_raw_object_with_tail(std::size_t tail_bytes, Args&&... args) {
  static_assert(std::is_base_of_v<object, T>, "relaxvm::make_object<T>: T must derive from relaxvm::object");
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "relaxvm::make_object<T>: T must not be over-aligned");
  std::uint32_t size_class = 0;
  void* mem = detail::try_allocate_object_memory(sizeof(T) + tail_bytes, size_class);
#if !RELAXVM_HEAP
  if (mem == nullptr) return detail::object_memory_error(sizeof(T) + tail_bytes);
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

/// The infallible form for host code: a T with `tail_bytes` after it; running out of object
/// memory (firmware mode) is raised like any error (RELAXVM_ON_ERROR without exceptions).
template <class T, class... Args>
T* make_raw_object_with_tail(std::size_t tail_bytes, Args&&... args) {
  return try_make_raw_object_with_tail<T>(tail_bytes, std::forward<Args>(args)...).value();
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
  if constexpr (has_share_children<T>) return &share_children_of<T>;
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

#if !RELAXVM_HEAP
/// Firmware mode (RELAXVM_HEAP=0): gives the library the memory its objects (tensors, shapes,
/// strings, closures, storage records; at most 512 bytes each) live in. Call it before making
/// any object, or again once every object is gone; the buffer must outlive them all.
/// object_memory_peak() says how much a program used.
inline void set_object_memory(std::span<std::byte> buffer) {
  detail::object_memory_state& m = detail::object_memory();
  if (m.live != 0)
    RELAXVM_ON_ERROR(detail::runtime_error("relaxvm: set_object_memory while ", m.live,
                                           " objects still live in the previous buffer"));
  // Blocks are handed out at multiples of 32 bytes from an aligned start.
  const auto start = (reinterpret_cast<std::uintptr_t>(buffer.data()) + 31) & ~std::uintptr_t{31};
  const std::size_t skip = start - reinterpret_cast<std::uintptr_t>(buffer.data());
  m = {};
  m.size = buffer.size() > skip ? buffer.size() - skip : 0;
  m.next = buffer.data() + (buffer.size() > skip ? skip : buffer.size());
  m.end = m.next + m.size;
}
inline std::size_t object_memory_peak() noexcept { return detail::object_memory().peak; }
#endif

/// make_object<T>(args...): a new T with one reference.
template <class T, class... Args>
object_ref<T> make_object(Args&&... args) {
  return object_ref<T>::adopt(make_raw_object<T>(std::forward<Args>(args)...));
}
/// The non-throwing form: in firmware mode, an error when the object memory has no room.
template <class T, class... Args>
result<object_ref<T>> try_make_object(Args&&... args) {
  RELAXVM_TRY_ASSIGN(T * p, try_make_raw_object_with_tail<T>(0, std::forward<Args>(args)...));
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
