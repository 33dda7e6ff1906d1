// SPDX-License-Identifier: Apache-2.0
// Object memory: where objects (runtime/object.hpp) live. Blocks come from a small per-thread
// cache (32 to 512 bytes), so that a program that makes and drops the same objects on every run
// (tensors, storages, shapes) stops calling the system allocator after its first run;
// RELAXVM_OBJECT_CACHE=0 turns the cache off. In firmware mode (RELAXVM_HEAP=0) every object
// comes from the buffer given to set_object_memory(), and running out is an error, not a trap.
// Also the heap entry points of tensor data and allocator blocks (heap_allocate, heap_free).
#ifndef RELAXVM_RUNTIME_OBJECT_MEMORY_HPP
#define RELAXVM_RUNTIME_OBJECT_MEMORY_HPP

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../base/std_parts.hpp"  // std::min, std::max without the rest of <algorithm>

#if RELAXVM_OBJECT_CACHE && defined(RELAXVM_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace relaxvm::RELAXVM_ABI {
namespace detail {

// Blocks of 32 << c bytes (c < size_classes) are kept on per-thread free lists, at most
// max_cached_blocks each; larger or surplus blocks go back to the system.
inline constexpr std::uint32_t size_classes = 5;
inline constexpr std::uint32_t uncached_class = 0xFF;
inline constexpr std::size_t max_cached_blocks = 256;

constexpr std::uint32_t size_class_of(std::size_t n) {
  // The c with 32 << (c - 1) < n <= 32 << c, from n - 1's highest bit (no loop of tests).
  const std::uint32_t c = n <= 32 ? 0 : static_cast<std::uint32_t>(std::bit_width(n - 1)) - 5;
  return c < size_classes ? c : uncached_class;
}

}  // namespace detail

/// What an object of `object_bytes` (its type's size and its tail) takes of firmware mode's object
/// memory: the block of its size class (32 to 512 bytes); 0 when it is larger than the largest
/// block, so that it cannot be made there.
constexpr std::size_t object_block_bytes(std::size_t object_bytes) {
  const std::uint32_t c = detail::size_class_of(object_bytes);
  return c == detail::uncached_class ? 0 : std::size_t{32} << c;
}

namespace detail {

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
}  // namespace detail

/// The largest single request for tensor data or an allocator block that goes to the system
/// heap (RELAXVM_MAX_SYSTEM_REQUEST, default 2^40 bytes, 1 TiB, on 64-bit targets): a larger one
/// is an error before the system is asked, so that a program cannot reach the system allocator
/// with a 2^62-byte request (which some allocators, and AddressSanitizer's, treat as fatal).
#ifdef RELAXVM_MAX_SYSTEM_REQUEST
inline constexpr std::size_t max_system_request = RELAXVM_MAX_SYSTEM_REQUEST;
#else
inline constexpr std::size_t max_system_request =
    sizeof(std::size_t) >= 8 ? static_cast<std::size_t>(std::uint64_t{1} << 40) : static_cast<std::size_t>(PTRDIFF_MAX);
#endif

namespace detail {
/// Tensor data and allocator blocks from the system heap: null when there is no room or the
/// request is over max_system_request, and always in firmware mode (RELAXVM_HEAP=0), which has
/// no heap and links no operator new.
inline void* heap_allocate(std::size_t nbytes, std::size_t alignment) noexcept {
#if RELAXVM_HEAP
  if (nbytes > max_system_request) return nullptr;
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

/// A VM's memory budget (vm_options::max_memory) as the memory it counts sees it: what storages
/// made through the VM's devices hold, and, while the VM runs on this thread, the objects made
/// since its invocation began. Shared by the VM and its devices' allocators (which storages
/// keep alive), so it outlives the VM while its storages do.
struct memory_meter {
  std::int64_t limit = 0;                      ///< bytes; 0: no limit
  std::atomic<std::int64_t> storage_bytes{0};  ///< held by storages of the VM's devices (any thread frees them)
  std::int64_t object_base = 0;                ///< thread_object_bytes when the running invocation began
  std::int64_t* stop = nullptr;                ///< the running invocation's instruction budget: zeroed to stop it
  std::size_t over_request = 0;                ///< the object that went over the limit (0: none)
  std::int64_t over_total = 0;                 ///< and what the VM held with it
};
/// Object memory this thread has taken and not given back (blocks, headers included), with a
/// heap (firmware mode's object memory is its own cap). An object freed on another thread than
/// the one that made it moves bytes between the threads' counts.
inline RELAXVM_THREAD_LOCAL std::int64_t thread_object_bytes = 0;
/// The meter of the VM running on this thread, when it has a budget; else null.
inline RELAXVM_THREAD_LOCAL memory_meter* object_meter = nullptr;
/// Objects large enough to bypass the size classes carry their block size in a header this long
/// (the new-expression alignment, so the object after it stays aligned).
inline constexpr std::size_t large_object_header = __STDCPP_DEFAULT_NEW_ALIGNMENT__;

/// Bytes `m`'s VM holds with `more` bytes added: its storages, and its running invocation's
/// objects when it runs on this thread.
inline std::int64_t metered_total(const memory_meter& m, std::int64_t more) noexcept {
  const std::int64_t objects = object_meter == &m ? std::max<std::int64_t>(thread_object_bytes - m.object_base, 0) : 0;
  return m.storage_bytes.load(std::memory_order_relaxed) + objects + more;
}
/// An object of `bytes` was just made while a metered VM runs: past its limit, the running
/// invocation stops at its next instruction (its instruction budget is zeroed; the VM reports
/// the memory budget, see over_request). Objects are made where no error can be returned.
RELAXVM_NOINLINE inline void meter_object(std::size_t bytes) noexcept {
  memory_meter& m = *object_meter;
  if (m.limit <= 0 || m.over_request != 0) return;
  if (const std::int64_t total = metered_total(m, 0); total > m.limit) {
    m.over_request = bytes;
    m.over_total = total;
    if (m.stop) *m.stop = 0;
  }
}
/// Counts `bytes` of object memory taken on this thread.
RELAXVM_ALWAYS_INLINE void count_object_bytes(std::size_t bytes) noexcept {
  thread_object_bytes += static_cast<std::int64_t>(bytes);
  if (RELAXVM_UNLIKELY(object_meter != nullptr)) meter_object(bytes);
}

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
#if RELAXVM_HEAP
  if (RELAXVM_LIKELY(size_class != uncached_class)) {
    count_object_bytes(std::size_t{32} << size_class);
#if RELAXVM_OBJECT_CACHE
    if (!object_cache_gone) {
      object_cache& cache = thread_object_cache();
      if (object_cache::block* b = cache.heads[size_class]) {
        unpoison_block(b, size_class);
        cache.heads[size_class] = b->next;
        --cache.counts[size_class];
        return b;
      }
    }
#endif
    return ::operator new(std::size_t{32} << size_class);
  }
  // Larger than every size class: its size goes in a header, for free_object_memory to count.
  const std::size_t bytes = n + large_object_header;
  auto* raw = static_cast<std::byte*>(::operator new(bytes));
  std::memcpy(raw, &bytes, sizeof bytes);
  count_object_bytes(bytes);
  return raw + large_object_header;
#endif
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
#else
  if (RELAXVM_LIKELY(size_class != uncached_class)) {
    thread_object_bytes -= std::int64_t{32} << size_class;
#if RELAXVM_OBJECT_CACHE
    if (!object_cache_gone) {
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
    return;
  }
  std::byte* raw = static_cast<std::byte*>(p) - large_object_header;
  std::size_t bytes = 0;
  std::memcpy(&bytes, raw, sizeof bytes);
  thread_object_bytes -= static_cast<std::int64_t>(bytes);
  ::operator delete(raw);
#endif
}

}  // namespace detail

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
  // No aligned byte in the buffer: an empty object memory.
  const std::size_t skip = std::min(static_cast<std::size_t>(start - reinterpret_cast<std::uintptr_t>(buffer.data())),
                                    buffer.size());
  m = {};
  m.size = buffer.size() - skip;
  m.next = buffer.data() + skip;
  m.end = m.next + m.size;
}
inline std::size_t object_memory_peak() noexcept { return detail::object_memory().peak; }

/// A buffer for set_object_memory, aligned as its blocks are (so that all N bytes are used); see
/// static_vm::object_memory, which checks N against what a linked program needs.
template <std::size_t N>
struct object_buffer {
  alignas(32) std::byte bytes[N > 0 ? N : 1];
  static constexpr std::size_t size = N;
  std::span<std::byte> span() noexcept { return std::span<std::byte>(bytes, N); }
};
#endif

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_OBJECT_MEMORY_HPP
