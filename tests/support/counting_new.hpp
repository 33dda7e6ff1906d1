// SPDX-License-Identifier: Apache-2.0
// Replaces the global operator new/delete (plain, aligned and nothrow) with versions that count
// every allocation from the system heap, and the bytes live and at their peak (as malloc reserves
// them). Include it in exactly one file of a program; read the count with
// relaxvm_test::heap_allocations(), the bytes with heap_live_bytes() and heap_peak_bytes().
#ifndef RELAXVM_TESTS_COUNTING_NEW_HPP
#define RELAXVM_TESTS_COUNTING_NEW_HPP

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <malloc.h>  // malloc_usable_size (glibc)
#include <new>

#include <relaxvm.hpp>  // RELAXVM_USE_EXCEPTIONS (also from the single header)

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // posix_memalign/free behind a replaced new/delete
#endif

namespace relaxvm_test {
inline std::atomic<long> heap_allocation_count{0};
inline std::atomic<long> heap_live{0}, heap_peak{0};
inline long heap_allocations() { return heap_allocation_count.load(std::memory_order_relaxed); }
inline long heap_live_bytes() { return heap_live.load(std::memory_order_relaxed); }
inline long heap_peak_bytes() { return heap_peak.load(std::memory_order_relaxed); }
/// Starts a new peak from what is live now.
inline void reset_heap_peak() { heap_peak.store(heap_live_bytes(), std::memory_order_relaxed); }
inline void* counted_allocate(std::size_t n, std::size_t align) noexcept {
  heap_allocation_count.fetch_add(1, std::memory_order_relaxed);
  void* p = nullptr;
  if (posix_memalign(&p, align < sizeof(void*) ? sizeof(void*) : align, n ? n : 1) != 0) return nullptr;
  const long live = heap_live.fetch_add(static_cast<long>(malloc_usable_size(p)), std::memory_order_relaxed) +
                    static_cast<long>(malloc_usable_size(p));
  long peak = heap_peak.load(std::memory_order_relaxed);
  while (live > peak && !heap_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  return p;
}
inline void counted_free(void* p) noexcept {
  if (p) heap_live.fetch_sub(static_cast<long>(malloc_usable_size(p)), std::memory_order_relaxed);
  std::free(p);
}
inline void* counted_or_throw(std::size_t n, std::size_t align) {
  if (void* p = counted_allocate(n, align)) return p;
#if RELAXVM_USE_EXCEPTIONS
  throw std::bad_alloc();
#else
  std::abort();
#endif
}
}  // namespace relaxvm_test

// Every replaceable form, plain and array, so that no allocation reaches a sanitizer's own
// operator new while its delete comes here (or the other way round).
void* operator new(std::size_t n) { return relaxvm_test::counted_or_throw(n, alignof(std::max_align_t)); }
void* operator new[](std::size_t n) { return relaxvm_test::counted_or_throw(n, alignof(std::max_align_t)); }
void* operator new(std::size_t n, std::align_val_t a) { return relaxvm_test::counted_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return relaxvm_test::counted_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return relaxvm_test::counted_allocate(n, alignof(std::max_align_t));
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return relaxvm_test::counted_allocate(n, alignof(std::max_align_t));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return relaxvm_test::counted_allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return relaxvm_test::counted_allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { relaxvm_test::counted_free(p); }
void operator delete[](void* p) noexcept { relaxvm_test::counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { relaxvm_test::counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { relaxvm_test::counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { relaxvm_test::counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { relaxvm_test::counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { relaxvm_test::counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { relaxvm_test::counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { relaxvm_test::counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { relaxvm_test::counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { relaxvm_test::counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { relaxvm_test::counted_free(p); }

#endif  // RELAXVM_TESTS_COUNTING_NEW_HPP
