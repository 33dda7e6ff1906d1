// SPDX-License-Identifier: Apache-2.0
// Memory: allocators as values, and storage (a buffer from an allocator that tensors view).
//
//   allocator::naive()         the system heap, freed at once
//   allocator::pooled(opts)    a size-bucketed cache over the system heap; release() returns it
//   allocator::arena(buffer)   bump allocation in a caller-provided buffer: no heap at all
//
// An allocator is a reference-counted handle: every storage it made keeps it alive.
#ifndef RELAXVM_RUNTIME_ALLOCATOR_HPP
#define RELAXVM_RUNTIME_ALLOCATOR_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/checked_math.hpp"
#include "../base/config.hpp"
#include "../base/flat_map.hpp"
#include "../base/std_parts.hpp"
#include "../base/device.hpp"
#include "../base/dtype.hpp"
#include "../base/error.hpp"
#include "object.hpp"
#include "shape.hpp"
#include "tensor.hpp"

namespace relaxvm::RELAXVM_ABI {

/// Data is aligned to at least this many bytes (the reference's kAllocAlignment).
inline constexpr std::size_t alloc_alignment = 64;

struct allocator_stats {
  std::int64_t bytes_in_use = 0;       ///< held by live storages
  std::int64_t peak_bytes_in_use = 0;  ///< the most ever held at once (an arena's high-water mark)
  std::int64_t bytes_cached = 0;       ///< pooled: freed blocks kept for reuse
  std::int64_t allocations = 0;        ///< requests served
  std::int64_t cache_hits = 0;         ///< pooled: requests served from the cache
  std::int64_t system_allocations = 0; ///< calls to the system allocator (0 for an arena)
  std::int64_t system_frees = 0;       ///< memory returned to the system
};

/// What allocators implement. Use the allocator handle below.
class allocator_object : public object {
 public:
  static constexpr std::string_view type_name = "relaxvm.allocator";
  /// `nbytes` bytes aligned to `alignment` (a power of two), or an error naming the request.
  virtual result<void*> allocate(std::size_t nbytes, std::size_t alignment) = 0;
  virtual void deallocate(void* p, std::size_t nbytes, std::size_t alignment) noexcept = 0;
  /// Returns cached memory to the system (pooled) or forgets everything (arena, once nothing is live).
  virtual void release() noexcept {}
  virtual allocator_stats stats() const = 0;
  virtual std::string_view kind_name() const = 0;
  /// Whether memory freed in any order can serve later requests (false for an arena, which takes
  /// back only its top block): the VM keeps allocations between runs only from such allocators
  /// (vm_options::reuse_allocations), as kept blocks would pin an arena.
  virtual bool reuses_any_order() const { return true; }

 protected:
  allocator_object() = default;
  ~allocator_object() = default;
};

namespace detail {
#if RELAXVM_THREADS
using mutex = std::mutex;
using lock_guard = std::lock_guard<std::mutex>;
#else
// One thread (bare metal): nothing to lock.
struct mutex {};
struct lock_guard {
  explicit lock_guard(mutex&) noexcept {}
};
#endif
}  // namespace detail

namespace detail {

inline void* system_allocate(std::size_t nbytes, std::size_t alignment) noexcept {
  return heap_allocate(nbytes, std::max(alignment, alloc_alignment));
}
inline void system_free(void* p, std::size_t alignment) noexcept { heap_free(p, std::max(alignment, alloc_alignment)); }
/// Records a request served straight from the system.
inline void count_system_allocation(allocator_stats& s, std::size_t nbytes) noexcept {
  ++s.allocations;
  ++s.system_allocations;
  s.bytes_in_use += static_cast<std::int64_t>(nbytes);
  s.peak_bytes_in_use = std::max(s.peak_bytes_in_use, s.bytes_in_use);
}
inline error out_of_memory(std::string_view who, std::size_t nbytes) {
  if (RELAXVM_HEAP && nbytes > max_system_request)
    return runtime_error(who, ": cannot allocate ", static_cast<std::uint64_t>(nbytes),
                         " bytes: more than the largest request that goes to the system (",
                         static_cast<std::uint64_t>(max_system_request), " bytes, RELAXVM_MAX_SYSTEM_REQUEST)");
  return runtime_error(who, ": cannot allocate ", static_cast<std::uint64_t>(nbytes), " bytes", no_heap_note);
}

class naive_allocator final : public allocator_object {
 public:
  static constexpr std::string_view type_name = "relaxvm.allocator.naive";
  result<void*> allocate(std::size_t nbytes, std::size_t alignment) override {
    void* p = system_allocate(nbytes, alignment);
    if (!p) return out_of_memory(literal("naive allocator"), nbytes);
    detail::lock_guard lock(mutex_);
    count_system_allocation(stats_, nbytes);
    return p;
  }
  void deallocate(void* p, std::size_t nbytes, std::size_t alignment) noexcept override {
    system_free(p, alignment);
    detail::lock_guard lock(mutex_);
    ++stats_.system_frees;
    stats_.bytes_in_use -= static_cast<std::int64_t>(nbytes);
  }
  allocator_stats stats() const override {
    detail::lock_guard lock(mutex_);
    return stats_;
  }
  std::string_view kind_name() const override { return literal("naive"); }

 private:
  mutable detail::mutex mutex_;
  allocator_stats stats_;
};

// Only with a heap (RELAXVM_HEAP): its cache is std::vector, and merely defining the class in a
// firmware unit built with -flto made the linker pull operator new, and with it libstdc++'s
// exception pool, which allocates from the heap before main.
#if RELAXVM_HEAP
class pooled_allocator final : public allocator_object {
 public:
  static constexpr std::string_view type_name = "relaxvm.allocator.pooled";
  explicit pooled_allocator(std::int64_t max_cached) : max_cached_(max_cached) {
    detail::lock_guard lock(registry_mutex());
    next_ = registry_head();
    if (next_) next_->prev_ = this;
    registry_head() = this;
  }
  ~pooled_allocator() {
    {
      detail::lock_guard lock(registry_mutex());
      (prev_ ? prev_->next_ : registry_head()) = next_;
      if (next_) next_->prev_ = prev_;
    }
    release();
  }

  /// Releases the cache of every pooled allocator of the process (the reference's global
  /// MemoryManager clear: vm.builtin.memory_manager.clear without a VM context).
  static void release_all() noexcept {
    detail::lock_guard lock(registry_mutex());
    for (pooled_allocator* a = registry_head(); a; a = a->next_) a->release();
  }

  /// Requests round up to a multiple of 64 bytes below 4 KiB and of 4 KiB pages above; each
  /// rounded size has its own free list. `n` is at most max_request (allocator::try_allocate).
  static std::size_t bucket_of(std::size_t n) {
    const std::size_t unit = n < 4096 ? 64 : 4096;
    return (std::max<std::size_t>(n, 1) + unit - 1) / unit * unit;
  }

  result<void*> allocate(std::size_t nbytes, std::size_t alignment) override {
    if (alignment > alloc_alignment) return direct(nbytes, alignment);
    const std::size_t size = bucket_of(nbytes);
    detail::lock_guard lock(mutex_);
    std::vector<void*>* blocks = free_.find(size);
    void* p = nullptr;
    if (blocks && !blocks->empty()) {
      p = blocks->back();
      blocks->pop_back();
      ++stats_.cache_hits;
      stats_.bytes_cached -= static_cast<std::int64_t>(size);
    } else {
      p = system_allocate(size, alloc_alignment);
      if (!p) {
        // Give the cache back and try once more, as the reference does.
        release_locked();
        p = system_allocate(size, alloc_alignment);
        if (!p) return out_of_memory("pooled allocator", size);
      }
      ++stats_.system_allocations;
    }
    ++stats_.allocations;
    stats_.bytes_in_use += static_cast<std::int64_t>(size);
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
    return p;
  }
  void deallocate(void* p, std::size_t nbytes, std::size_t alignment) noexcept override {
    if (alignment > alloc_alignment) {
      system_free(p, alignment);
      detail::lock_guard lock(mutex_);
      ++stats_.system_frees;
      stats_.bytes_in_use -= static_cast<std::int64_t>(nbytes);
      return;
    }
    const std::size_t size = bucket_of(nbytes);
    detail::lock_guard lock(mutex_);
    stats_.bytes_in_use -= static_cast<std::int64_t>(size);
    if (max_cached_ >= 0 && stats_.bytes_cached + static_cast<std::int64_t>(size) > max_cached_) {
      system_free(p, alloc_alignment);
      ++stats_.system_frees;
      return;
    }
#if RELAXVM_USE_EXCEPTIONS
    try {
      free_[size].push_back(p);
    } catch (...) {  // no memory to remember the block: give it back instead
      system_free(p, alloc_alignment);
      ++stats_.system_frees;
      return;
    }
#else
    free_[size].push_back(p);
#endif
    stats_.bytes_cached += static_cast<std::int64_t>(size);
  }
  void release() noexcept override {
    detail::lock_guard lock(mutex_);
    release_locked();
  }
  allocator_stats stats() const override {
    detail::lock_guard lock(mutex_);
    return stats_;
  }
  std::string_view kind_name() const override { return literal("pooled"); }

 private:
  result<void*> direct(std::size_t nbytes, std::size_t alignment) {
    void* p = system_allocate(nbytes, alignment);
    if (!p) return out_of_memory("pooled allocator", nbytes);
    detail::lock_guard lock(mutex_);
    count_system_allocation(stats_, nbytes);
    return p;
  }
  void release_locked() noexcept {
    for (auto& [size, blocks] : free_) {
      for (void* p : blocks) system_free(p, alloc_alignment);
      stats_.system_frees += static_cast<std::int64_t>(blocks.size());
      blocks.clear();
    }
    stats_.bytes_cached = 0;
  }

  // Every live pooled allocator, in an intrusive list (no allocation), for release_all().
  static detail::mutex& registry_mutex() {
    static detail::mutex m;
    return m;
  }
  static pooled_allocator*& registry_head() {
    static pooled_allocator* head = nullptr;
    return head;
  }
  pooled_allocator* prev_ = nullptr;
  pooled_allocator* next_ = nullptr;

  std::int64_t max_cached_;  // -1: no limit
  mutable detail::mutex mutex_;
  detail::flat_map<std::size_t, std::vector<void*>> free_;  // by bucket_of size
  allocator_stats stats_;
};

#endif
class arena_allocator final : public allocator_object {
 public:
  static constexpr std::string_view type_name = "relaxvm.allocator.arena";
  explicit arena_allocator(std::span<std::byte> buffer) : buffer_(buffer) {}

  result<void*> allocate(std::size_t nbytes, std::size_t alignment) override {
    alignment = std::max(alignment, alloc_alignment);
    detail::lock_guard lock(mutex_);
    const auto base = reinterpret_cast<std::uintptr_t>(buffer_.data());
    const std::uintptr_t start = (base + top_ + alignment - 1) / alignment * alignment;
    const std::size_t offset = start - base;
    if (offset > buffer_.size() || nbytes > buffer_.size() - offset)
      return runtime_error("arena allocator: exhausted: ", static_cast<std::uint64_t>(nbytes), " bytes (aligned to ",
                           static_cast<std::uint64_t>(alignment), ") do not fit in the ",
                           static_cast<std::uint64_t>(buffer_.size() - std::min(top_, buffer_.size())),
                           " bytes left of ", static_cast<std::uint64_t>(buffer_.size()),
                           "; give the arena a larger buffer (its peak use is in stats())");
    ++allocations_;
    // A zero-byte block holds no memory: it is neither live nor part of the top, so that every
    // live block lies below the top (the test deallocate relies on) and its free has nothing to
    // give back.
    if (nbytes == 0) return reinterpret_cast<void*>(start);
    top_ = offset + nbytes;
    ++live_;
    peak_ = std::max(peak_, top_);
    return reinterpret_cast<void*>(start);
  }
  /// The last block given out can be taken back at once; the rest is reclaimed when nothing
  /// allocated from the arena is live any more.
  /// A block this arena did not give out (or with nothing live), or of zero bytes, is ignored.
  void deallocate(void* p, std::size_t nbytes, std::size_t) noexcept override {
    const auto addr = reinterpret_cast<std::uintptr_t>(p), base = reinterpret_cast<std::uintptr_t>(buffer_.data());
    detail::lock_guard lock(mutex_);
    if (nbytes == 0 || live_ == 0 || addr < base || addr - base >= top_ || nbytes > top_ - (addr - base)) return;
    const std::size_t offset = addr - base;
    if (offset + nbytes == top_) top_ = offset;
    if (--live_ == 0) top_ = 0;
  }
  void release() noexcept override {
    detail::lock_guard lock(mutex_);
    if (live_ == 0) top_ = 0;
  }
  allocator_stats stats() const override {
    detail::lock_guard lock(mutex_);
    allocator_stats s;
    s.bytes_in_use = static_cast<std::int64_t>(top_);
    s.peak_bytes_in_use = static_cast<std::int64_t>(peak_);
    s.allocations = allocations_;
    return s;
  }
  std::string_view kind_name() const override { return literal("arena"); }
  bool reuses_any_order() const override { return false; }

 private:
  std::span<std::byte> buffer_;
  mutable detail::mutex mutex_;
  // What stats() reports (bytes in use are the top), kept in the target's word size: a
  // firmware arena counts in 32 bits.
  std::size_t top_ = 0;
  std::size_t live_ = 0;
  std::size_t peak_ = 0;
  std::int64_t allocations_ = 0;
};

}  // namespace detail

namespace detail {
/// The error of a request of `nbytes` (`what`: where from) that would take a VM past its memory
/// budget (vm_options::max_memory), to `total` bytes.
RELAXVM_NOINLINE inline error memory_budget_error(std::uint64_t nbytes, std::string_view what, std::int64_t total,
                                                  std::int64_t limit) {
  return runtime_error("memory budget exceeded: ", nbytes, " bytes ", what, " would bring what the VM holds to ",
                       total, " bytes, over its limit of ", limit,
                       " bytes (vm_options::max_memory: tensors, storages and objects, all devices)");
}

/// A VM's device allocator under its memory budget: what storages take is counted in the VM's
/// meter, and a request that would take the VM past its limit is an error before the device's
/// own allocator is asked. Everything else is the device allocator's.
class metered_allocator final : public allocator_object {
 public:
  static constexpr std::string_view type_name = "relaxvm.allocator.metered";
  metered_allocator(allocator_object* inner, std::shared_ptr<memory_meter> meter)
      : inner_(object_ref<allocator_object>::retain(inner)), meter_(std::move(meter)) {}
  result<void*> allocate(std::size_t nbytes, std::size_t alignment) override {
    const auto n = static_cast<std::int64_t>(std::min<std::size_t>(nbytes, PTRDIFF_MAX));
    if (const std::int64_t limit = meter_->limit; limit > 0) {
      const std::int64_t total = metered_total(*meter_, n);
      if (total > limit || total < 0) return memory_budget_error(nbytes, "for a storage", total, limit);
    }
    RELAXVM_TRY_ASSIGN(void* p, inner_->allocate(nbytes, alignment));
    meter_->storage_bytes.fetch_add(n, std::memory_order_relaxed);
    return p;
  }
  void deallocate(void* p, std::size_t nbytes, std::size_t alignment) noexcept override {
    inner_->deallocate(p, nbytes, alignment);
    meter_->storage_bytes.fetch_sub(static_cast<std::int64_t>(nbytes), std::memory_order_relaxed);
  }
  void release() noexcept override { inner_->release(); }
  allocator_stats stats() const override { return inner_->stats(); }
  std::string_view kind_name() const override { return inner_->kind_name(); }
  bool reuses_any_order() const override { return inner_->reuses_any_order(); }
  void share_children() noexcept { inner_->share(); }

 private:
  object_ref<allocator_object> inner_;
  std::shared_ptr<memory_meter> meter_;
};
}  // namespace detail

/// What an arena allocator (allocator::arena) takes of firmware mode's object memory.
inline constexpr std::size_t arena_object_bytes = object_block_bytes(sizeof(detail::arena_allocator));

/// Memory for an arena allocator (allocator::arena), aligned as the arena aligns its blocks, so
/// that a figure counted in blocks (a linked program's arena_bytes) fits it exactly; what
/// static_vm::arena takes.
template <std::size_t N>
struct arena_buffer {
  alignas(alloc_alignment) std::byte bytes[N > 0 ? N : 1];
  static constexpr std::size_t size = N;
  std::span<std::byte> span() noexcept { return std::span<std::byte>(bytes, N); }
};

/// A handle to an allocator. Copies share it.
class allocator {
 public:
  allocator() = default;
  /// Allocators are used from every thread that holds a storage of theirs, so their reference
  /// count is atomic from the start (docs/threads.md).
  explicit allocator(object_ref<allocator_object> a) : obj_(std::move(a)) {
    if (obj_) obj_->share();
  }

  /// The largest request: PTRDIFF_MAX bytes (2^63 - 1 on 64-bit hosts, 2^31 - 1 on 32-bit
  /// targets), so that no size or pointer computation wraps.
  static constexpr std::size_t max_request = static_cast<std::size_t>(PTRDIFF_MAX);

  /// The system heap: every allocation and free goes to the system.
  static allocator naive() { return allocator(make_object<detail::naive_allocator>()); }
#if RELAXVM_HEAP
  /// A cache over the system heap: freed blocks are kept per rounded size and reused. When
  /// `max_cached_bytes` is not negative, blocks beyond it go back to the system at once; release()
  /// gives every cached block back (the reference's pool never does). Only with a heap: its
  /// cache is made of std::vector.
  static allocator pooled(std::int64_t max_cached_bytes = -1) {
    return allocator(make_object<detail::pooled_allocator>(max_cached_bytes));
  }
#endif
  /// Allocates inside `buffer` only, which must outlive every storage made from it. Running out
  /// is an error; stats().peak_bytes_in_use says how large the buffer needs to be.
  static allocator arena(std::span<std::byte> buffer) {
    return allocator(make_object<detail::arena_allocator>(buffer));
  }

  /// `nbytes` (at most max_request) aligned to `alignment` (a power of two; at least 64 is given).
  result<void*> try_allocate(std::size_t nbytes, std::size_t alignment) const {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      return detail::value_error(obj_->kind_name(), " allocator: alignment ", static_cast<std::uint64_t>(alignment),
                                 " is not a power of two");
    if (nbytes > max_request)
      return detail::runtime_error(obj_->kind_name(), " allocator: cannot allocate ", static_cast<std::uint64_t>(nbytes),
                                   " bytes");
    return obj_->allocate(nbytes, alignment);
  }
  /// try_allocate for a request that passes its tests (nbytes at most max_request, alignment a
  /// power of two) whatever the program runs with: alloc_storage's, checked before.
  result<void*> allocate_checked(std::size_t nbytes, std::size_t alignment) const {
    return obj_->allocate(nbytes, alignment);
  }
  void deallocate(void* p, std::size_t nbytes, std::size_t alignment) const noexcept {
    obj_->deallocate(p, nbytes, alignment);
  }
  void release() const noexcept { obj_->release(); }
  allocator_stats stats() const { return obj_->stats(); }
  std::string_view kind_name() const { return obj_->kind_name(); }
  bool reuses_any_order() const { return obj_->reuses_any_order(); }
  bool defined() const noexcept { return static_cast<bool>(obj_); }
  allocator_object* get() const noexcept { return obj_.get(); }
  friend bool operator==(const allocator& a, const allocator& b) noexcept { return a.obj_ == b.obj_; }

 private:
  object_ref<allocator_object> obj_;
};

/// A device and the allocator that serves it; a VM takes a list of these (the last is the host).
struct device_allocator {
  relaxvm::device device;
  relaxvm::allocator allocator;
};

/// A buffer from an allocator, on a device. Tensors view it (alloc_tensor) and keep it alive.
struct storage_object : object {
  static constexpr std::string_view type_name = "relaxvm.storage";
  storage_object(void* d, std::size_t n, std::size_t a, device v, allocator al)
      : data(d), size(n), alignment(a), dev(v), alloc(std::move(al)) {}
  ~storage_object() { alloc.deallocate(data, size, alignment); }
  void share_children() noexcept {
    if (auto* a = alloc.get()) a->share();
  }
  void* data;
  std::size_t size;
  std::size_t alignment;
  device dev;
  allocator alloc;
#if RELAXVM_HEAP
  /// Reuse between runs (runtime/context.hpp): the VM (its vm_context) whose instruction slot
  /// keeps this storage, set once when it is made, and the views of it that the same VM's slots
  /// keep. Only that VM, on the thread running it, changes or reads the list.
  static constexpr std::size_t max_kept_views = 4;
  const void* keeper = nullptr;
  std::array<tensor_object*, max_kept_views> kept_views{};
  std::uint8_t num_kept_views = 0;
#endif
};

namespace detail {
/// The error of a view of `nbytes` at `offset` that does not fit a storage of `capacity` bytes.
RELAXVM_ERROR_FN error view_outside_storage(std::string_view who, std::int64_t nbytes, std::int64_t offset,
                                            std::size_t capacity) {
  return value_error(who, ": storage allocation failure, attempted to allocate ", nbytes, " at offset ", offset,
                     " in region that is ", static_cast<std::uint64_t>(capacity), " bytes");
}
/// Checks that [offset, offset + size of shape x dtype) lies inside a storage of `capacity` bytes.
inline status check_view(std::string_view who, std::int64_t offset, const shape& s, dtype t, std::size_t capacity,
                         std::int64_t& numel, std::int64_t& nbytes) {
  RELAXVM_TRY(check_tensor_layout(s.dims(), t, numel, nbytes, who));
  std::int64_t end = 0;
  if (offset < 0 || !checked_add(offset, nbytes, end) || static_cast<std::uint64_t>(end) > capacity)
    return view_outside_storage(who, nbytes, offset, capacity);
  const std::int64_t element = t.scalar_alignment();
  if ((offset & (element - 1)) != 0)  // a power of two, and offset >= 0: no 64-bit division
    return value_error(who, ": offset ", offset, " is not aligned for ", t, " (", element, " bytes)");
  return {};
}
}  // namespace detail

namespace detail {
/// Whether an allocator can serve `nbytes` (on 32-bit targets, less than 2 GiB).
constexpr bool servable(std::int64_t nbytes) noexcept {
  return nbytes >= 0 && static_cast<std::uint64_t>(nbytes) <= allocator::max_request;
}
/// A byte count as size_t, or an error when it is not servable.
inline result<std::size_t> to_size(std::string_view who, std::int64_t nbytes) {
  if (!servable(nbytes)) return runtime_error(who, ": cannot allocate ", nbytes, " bytes");
  return static_cast<std::size_t>(nbytes);
}
}  // namespace detail

namespace detail {
/// The storage object for `data`, `nbytes` that `alloc` gave aligned to `alignment`, on `dev`; in
/// firmware mode null when the object memory has no room (the memory given back to `alloc`).
inline storage_object* storage_object_for(void* data, const allocator& alloc, std::size_t nbytes, std::size_t alignment,
                                          device dev) {
  storage_object* st = make_raw_object_or_null<storage_object>(0, data, nbytes, alignment, dev, alloc);
#if !RELAXVM_HEAP
  if (st == nullptr) alloc.deallocate(data, nbytes, alignment);
#endif
  return st;
}
/// The storage of what `alloc` gave for `nbytes` aligned to `alignment` on `dev` (`data`, or
/// its error, passed on).
inline result<object_ref<storage_object>> storage_of(result<void*>&& data, const allocator& alloc, std::size_t nbytes,
                                                     std::size_t alignment, device dev) {
  RELAXVM_TRY_ASSIGN(void* p, std::move(data));
  storage_object* st = storage_object_for(p, alloc, nbytes, std::max(alignment, alloc_alignment), dev);
#if !RELAXVM_HEAP
  if (st == nullptr) return object_memory_error(sizeof(storage_object));
#endif
  return object_ref<storage_object>::adopt(st);
}
}  // namespace detail

/// Allocates storage of `nbytes` (aligned to at least alloc_alignment) from `alloc`, on `dev`.
inline result<object_ref<storage_object>> make_storage(const allocator& alloc, std::size_t nbytes,
                                                       std::size_t alignment, device dev) {
  return detail::storage_of(alloc.try_allocate(nbytes, alignment), alloc, nbytes, alignment, dev);
}

/// A tensor viewing `st` at byte `offset`: data is the storage's base and byte_offset is `offset`,
/// as in the reference. The view keeps the storage alive.
namespace detail {
/// The error of a view of `nbytes` of a storage whose data is null.
inline error null_storage_data(std::int64_t nbytes) {
  return value_error("tensor::view: null data for ", nbytes, " bytes");
}
/// view_storage once check_view has passed (it gave numel and nbytes).
inline result<tensor> view_checked_storage(const object_ref<storage_object>& st, std::int64_t offset, const shape& s,
                                           dtype t, std::int64_t numel, std::int64_t nbytes) {
  if (st->data == nullptr && nbytes > 0) return null_storage_data(nbytes);
  return tensor::try_view_checked(st->data, s, t, st->dev, st.get(), false, numel, static_cast<std::uint64_t>(offset));
}
}  // namespace detail

inline result<tensor> view_storage(const object_ref<storage_object>& st, std::int64_t offset, const shape& s, dtype t,
                                   std::string_view who = "alloc_tensor") {
  std::int64_t numel = 0, nbytes = 0;
  RELAXVM_TRY(detail::check_view(who, offset, s, t, st->size, numel, nbytes));
  return detail::view_checked_storage(st, offset, s, t, numel, nbytes);
}

/// A new compact tensor from `alloc`, on `dev`.
inline result<tensor> empty_tensor(const shape& s, dtype t, const allocator& alloc, device dev) {
  std::int64_t numel = 0, nbytes = 0;
  constexpr std::string_view fn = "tensor::empty";  // a constant: no strlen call at -Os
  RELAXVM_TRY(detail::check_tensor_layout(s.dims(), t, numel, nbytes, fn));
  RELAXVM_TRY_ASSIGN(std::size_t size, detail::to_size(fn, nbytes));
  RELAXVM_TRY_ASSIGN(object_ref<storage_object> st, make_storage(alloc, size, alloc_alignment, dev));
  return view_storage(st, 0, s, t, fn);
}

/// A compact copy of `src` on `dev`, allocated from `alloc`. Every device here is host memory,
/// so the copy is a memcpy whatever the device ids.
inline result<tensor> copy_to(const tensor& src, device dev, const allocator& alloc) {
  if (!src.defined()) return detail::value_error("copy_to: the tensor is undefined");
  if (!src.is_contiguous()) return detail::value_error("copy_to: strided tensors are not supported");
  if (src.device().device_type != kDLCPU || dev.device_type != kDLCPU)
    return detail::value_error("copy_to: cannot copy from ", src.device(), " to ", dev,
                               "; relaxvm runs on host (cpu) devices only");
  RELAXVM_TRY_ASSIGN(tensor out, empty_tensor(src.shape(), src.dtype(), alloc, dev));
  if (src.nbytes() > 0) std::memcpy(out.raw_data(), src.raw_data(), static_cast<std::size_t>(src.nbytes()));
  return out;
}

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_ALLOCATOR_HPP
