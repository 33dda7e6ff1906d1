// SPDX-License-Identifier: Apache-2.0
// The kernels' threads: a pool of N - 1 workers that, with the calling thread, share the work of
// one large kernel call (Conv, Gemm, MatMul). Off by default: with one thread (the default) no
// pool exists and every kernel runs on its caller, as before. RELAXVM_KERNEL_THREADS=N in the
// environment (read at the first kernel call) or set_kernel_threads(N) turns it on.
//
// A call is split only over independent outputs (blocks of C's rows or columns, groups, batches,
// output rows), never over a sum, and each part runs the code one thread runs on the same
// elements: the results are bit-identical whatever the number of threads. The workers are made
// once and sleep between calls; a call's parts are counted out through one atomic counter, and
// the caller takes parts too, so a worker that is late (a loaded machine) only takes fewer.
//
// One pool serves the program. A caller that finds it busy (another thread's kernel, or a kernel
// called inside a part) runs its call alone, so calls never wait on each other and never mix.
// The pool's workers are joined when the program exits (a static's destructor); a kernel called
// later, from another static's destructor, runs alone.
//
// Firmware mode (no heap or no threads) compiles none of it: kernel_threads() is 1.
#ifndef RELAXVM_KERNELS_THREADS_HPP
#define RELAXVM_KERNELS_THREADS_HPP

#include <cstdint>

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_THREADS, RELAXVM_HEAP, RELAXVM_HOSTED

/// 1: the kernels' pool is compiled (hosted, with a heap and threads). Predefine 0 to leave it out.
#ifndef RELAXVM_KERNEL_POOL
#if RELAXVM_THREADS && RELAXVM_HEAP && RELAXVM_HOSTED
#define RELAXVM_KERNEL_POOL 1
#else
#define RELAXVM_KERNEL_POOL 0
#endif
#endif

#if RELAXVM_KERNEL_POOL
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>
// Without exceptions std::thread's constructor aborts when the system refuses a thread: there the
// workers are POSIX threads, whose refusal is a return code (the pool then has fewer workers).
#if !defined(__cpp_exceptions) && __has_include(<pthread.h>)
#define RELAXVM_DETAIL_POOL_PTHREADS 1
#include <new>
#include <pthread.h>
#else
#define RELAXVM_DETAIL_POOL_PTHREADS 0
#endif
#endif

namespace relaxvm::RELAXVM_ABI::kernels {

/// The most threads a kernel call uses.
inline constexpr int max_kernel_threads = 64;

namespace detail {

/// RELAXVM_KERNEL_THREADS's value: a whole decimal number from 1 to max_kernel_threads, or 0
/// for anything else (absent, empty, signed, not a number, out of range), which keeps the default.
inline int parse_kernel_threads(const char* text) noexcept {
  if (text == nullptr || *text == '\0') return 0;
  int n = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return 0;
    n = n * 10 + (*p - '0');
    if (n > max_kernel_threads) return 0;
  }
  return n;
}

/// The work (multiply-adds) below which a kernel call runs on its caller alone: waking a worker
/// and waiting for it cost about 30 us on the machine we measure, so a call must take some
/// 0.3 ms to gain; 2^24 multiply-adds are 0.2-0.35 ms with AVX-512 (bench/README.md, Threads).
#ifndef RELAXVM_KERNEL_THREADS_MIN_WORK
#define RELAXVM_KERNEL_THREADS_MIN_WORK (1 << 24)
#endif
inline constexpr double parallel_min_work = RELAXVM_KERNEL_THREADS_MIN_WORK;

#if RELAXVM_KERNEL_POOL

// Set while one kernel call uses the pool (or while it is resized); namespace-scope and
// constant-initialized, so they stay valid while statics are destroyed at exit.
inline std::atomic<bool> kernel_pool_busy{false};
inline std::atomic<bool> kernel_pool_closed{false};  // the pool's destructor ran
inline std::atomic<bool> kernel_pool_made{false};
// The threads in use; 0 until the first call reads the environment.
inline std::atomic<int> kernel_threads_slot{0};

// Counts the pool's releases (and its closing): what a thread waiting for the pool sleeps on
// (std::atomic::wait, a futex under Linux), so that it does not spin while a call runs.
inline std::atomic<std::uint32_t> kernel_pool_released{0};

inline bool acquire_kernel_pool() noexcept { return !kernel_pool_busy.exchange(true, std::memory_order_acquire); }
inline void release_kernel_pool() noexcept {
  kernel_pool_busy.store(false, std::memory_order_release);
  kernel_pool_released.fetch_add(1, std::memory_order_release);
  kernel_pool_released.notify_all();
}

// Waits, asleep, for the pool to be free (a call in flight ends); false once the pool is gone.
inline bool acquire_kernel_pool_wait() noexcept {
  for (;;) {
    // Read before trying: a release between the try and the wait changes it, and the wait returns.
    const std::uint32_t seen = kernel_pool_released.load(std::memory_order_acquire);
    if (acquire_kernel_pool()) return true;
    if (kernel_pool_closed.load(std::memory_order_acquire)) return false;
    kernel_pool_released.wait(seen, std::memory_order_acquire);
  }
}

class kernel_pool {
 public:
  using part_fn = void (*)(void*, std::int64_t) noexcept;

  kernel_pool() { kernel_pool_made.store(true, std::memory_order_release); }
  kernel_pool(const kernel_pool&) = delete;
  kernel_pool& operator=(const kernel_pool&) = delete;
  // At exit: waits for a call in flight, joins the workers and keeps the pool marked busy, so
  // that a kernel called afterwards runs alone.
  ~kernel_pool() {
    if (!acquire_kernel_pool_wait()) return;  // (closed already: a second destructor never runs)
    kernel_pool_closed.store(true, std::memory_order_release);
    // Waiters wake and see the pool closed; it stays busy, so no call uses it again.
    kernel_pool_released.fetch_add(1, std::memory_order_release);
    kernel_pool_released.notify_all();
    stop_all();
  }

  /// Workers running now.
  int workers() const noexcept { return static_cast<int>(threads_.size()); }

  /// Makes it `n` workers (the pool held). A thread the system refuses is left out: the calls
  /// run with the workers made.
  void resize(int n) noexcept {
    if (n == target_) return;
    target_ = n;
    stop_all();
    // The calls a new worker has seen: read here, not when it starts running, or it would skip
    // a call posted before then.
    std::uint64_t seen = 0;
    {
      std::lock_guard<std::mutex> lock(m_);
      seen = generation_;
    }
#if defined(__cpp_exceptions)
    try {
      threads_.reserve(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) threads_.emplace_back([this, seen] { work(seen); });
    } catch (...) {  // std::system_error or std::bad_alloc: fewer workers
    }
#elif RELAXVM_DETAIL_POOL_PTHREADS
    threads_.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      auto* arg = new (std::nothrow) start{this, seen};
      pthread_t t;
      if (arg == nullptr) break;
      if (pthread_create(&t, nullptr, &start::run, arg) != 0) {
        delete arg;
        break;
      }
      threads_.push_back(t);
    }
#else  // no exceptions and no POSIX threads: a refused thread aborts in the standard library
    threads_.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) threads_.emplace_back([this, seen] { work(seen); });
#endif
  }

  /// Runs fn(ctx, part) for every part in [0, parts) on the workers and the calling thread (the
  /// pool held); returns when all are done.
  void run(part_fn fn, void* ctx, std::int64_t parts) noexcept {
    {
      std::lock_guard<std::mutex> lock(m_);
      fn_ = fn, ctx_ = ctx, parts_ = parts;
      next_.store(0, std::memory_order_relaxed);
      open_ = true;
      ++generation_;
    }
    wake_.notify_all();
    take(fn, ctx, parts);
    // Every part is taken; those a worker took are done when it has left.
    std::unique_lock<std::mutex> lock(m_);
    open_ = false;
    left_.wait(lock, [&] { return joined_ == 0; });
  }

 private:
  void take(part_fn fn, void* ctx, std::int64_t parts) noexcept {
    for (std::int64_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < parts;) fn(ctx, i);
  }

  void work(std::uint64_t seen) noexcept {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      // A call joins only while it is open: one that already waits for its workers gets no more.
      wake_.wait(lock, [&] { return stop_ || (open_ && generation_ != seen); });
      if (stop_) return;
      seen = generation_;
      ++joined_;
      const part_fn fn = fn_;
      void* const ctx = ctx_;
      const std::int64_t parts = parts_;
      lock.unlock();
      take(fn, ctx, parts);
      lock.lock();
      if (--joined_ == 0) left_.notify_one();
    }
  }

  void stop_all() noexcept {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    wake_.notify_all();
#if RELAXVM_DETAIL_POOL_PTHREADS
    for (pthread_t t : threads_) pthread_join(t, nullptr);
#else
    for (std::thread& t : threads_) t.join();
#endif
    threads_.clear();
    std::lock_guard<std::mutex> lock(m_);
    stop_ = false;
  }

  std::mutex m_;
  std::condition_variable wake_, left_;
#if RELAXVM_DETAIL_POOL_PTHREADS
  struct start {  // a POSIX worker's argument
    kernel_pool* pool;
    std::uint64_t seen;
    static void* run(void* p) noexcept {
      const start s = *static_cast<start*>(p);
      delete static_cast<start*>(p);
      s.pool->work(s.seen);
      return nullptr;
    }
  };
  std::vector<pthread_t> threads_;
#else
  std::vector<std::thread> threads_;
#endif
  int target_ = 0;
  part_fn fn_ = nullptr;
  void* ctx_ = nullptr;
  std::int64_t parts_ = 0;
  std::atomic<std::int64_t> next_{0};
  std::uint64_t generation_ = 0;
  int joined_ = 0;
  bool open_ = false, stop_ = false;
};

inline kernel_pool& the_kernel_pool() {
  static kernel_pool pool;
  return pool;
}

#endif  // RELAXVM_KERNEL_POOL

}  // namespace detail

/// The threads a large kernel call runs on (1: the caller alone, the default).
inline int kernel_threads() noexcept {
#if RELAXVM_KERNEL_POOL
  int n = detail::kernel_threads_slot.load(std::memory_order_relaxed);
  if (RELAXVM_UNLIKELY(n == 0)) {
    // Only the first choice is stored: a set_kernel_threads that came between is not undone.
    const int env = detail::parse_kernel_threads(std::getenv("RELAXVM_KERNEL_THREADS"));
    const int chosen = env > 0 ? env : 1;
    n = detail::kernel_threads_slot.compare_exchange_strong(n, chosen, std::memory_order_relaxed) ? chosen : n;
  }
  return n;
#else
  return 1;
#endif
}

/// Runs large kernel calls on `n` threads (the caller and n - 1 workers; clamped to [1,
/// max_kernel_threads]) and returns the number in use. Waits for a call using the pool to end,
/// then makes or joins the workers; 1 joins them all. Without the pool (firmware mode) it is 1.
inline int set_kernel_threads(int n) noexcept {
#if RELAXVM_KERNEL_POOL
  n = n < 1 ? 1 : n > max_kernel_threads ? max_kernel_threads : n;
  detail::kernel_threads_slot.store(n, std::memory_order_relaxed);
  if (n == 1 && !detail::kernel_pool_made.load(std::memory_order_acquire)) return n;
  if (detail::acquire_kernel_pool_wait()) {
    detail::the_kernel_pool().resize(n - 1);
    detail::release_kernel_pool();
  }
  return n;
#else
  (void)n;
  return 1;
#endif
}

namespace detail {

/// The pool's workers running now (0 without a pool): for tests.
inline int kernel_pool_workers() noexcept {
#if RELAXVM_KERNEL_POOL
  if (!kernel_pool_made.load(std::memory_order_acquire) || !acquire_kernel_pool_wait()) return 0;
  const int n = the_kernel_pool().workers();
  release_kernel_pool();
  return n;
#else
  return 0;
#endif
}

/// The threads a kernel call of `work` multiply-adds may use: 1 below parallel_min_work.
inline int kernel_width(double work) noexcept {
  if (work < parallel_min_work) return 1;
  return kernel_threads();
}

/// Calls f(part) for every part in [0, parts): on the pool's workers and the caller where the
/// pool is on and free, else on the caller, in order. The parts must write disjoint outputs.
template <class F>
void run_parts(std::int64_t parts, F& f) noexcept {
#if RELAXVM_KERNEL_POOL
  const int n = kernel_threads();
  if (parts > 1 && n > 1 && acquire_kernel_pool()) {
    kernel_pool& pool = the_kernel_pool();
    pool.resize(n - 1);
    if (pool.workers() > 0) {
      pool.run([](void* ctx, std::int64_t i) noexcept { (*static_cast<F*>(ctx))(i); }, &f, parts);
      release_kernel_pool();
      return;
    }
    release_kernel_pool();
  }
#endif
  for (std::int64_t i = 0; i < parts; ++i) f(i);
}

/// [begin, end) of part i when `units` are cut into `parts` runs of (nearly) equal length.
inline void part_range(std::int64_t units, std::int64_t parts, std::int64_t i, std::int64_t& begin, std::int64_t& end) noexcept {
  begin = units * i / parts;
  end = units * (i + 1) / parts;
}

}  // namespace detail

}  // namespace relaxvm::RELAXVM_ABI::kernels

#endif  // RELAXVM_KERNELS_THREADS_HPP
