// SPDX-License-Identifier: Apache-2.0
// Load benchmark: what loading an executable and making a VM for it cost, against the size of the
// file, for programs shaped to stress the loader (issue 14: "loading or creating a VM for any file
// of N bytes is O(N) time and memory"). For each shape and each size (1 KiB to 16 MiB) it times
// executable::try_load and virtual_machine::create (with the builtins' registry), and counts the
// heap bytes each adds and the peak while it runs, as bytes and as a multiple of the file's size.
//
//   huge_frames        many functions of 2 instructions, each declaring 2^20 registers
//   long_function      one function of many Calls, each with 3 register arguments
//   const_int64, const_float64, const_dtype, const_bool, const_tensor, const_string, const_shape
//                      many small constants of one kind (int8 vector dtypes, 1-element float32 tensors, 8-char
//                      strings, 1-dimension shapes)
//   missing_functions  many packed functions that the registry lacks, each called once: making
//                      the VM fails, and that failure is what is timed
//   many_params        many functions of 64 named inputs, of which each reads one (the verifier
//                      warns about the other 63)
//   long_names         many functions with a 512-character name and four 128-character
//                      parameter names
//   dead_code          one function whose first instruction returns, followed by many that
//                      never run (the verifier warns about each)
//
// A shape is a function from an item count to a program whose file grows by the same number of
// bytes per item; the sizes are met by choosing the count (see `shapes` to add one).
//
//   bench_load [--max-bytes N] [--shape NAME]... [--runs N] [--timeout S] [--slow S] [--quick] [--list]
//
//   --max-bytes N  sizes up to N bytes (suffix K or M: 1024, 1024^2); default 16M
//   --shape NAME   only this shape (repeatable); --list names them
//   --runs N       at most N runs per case (default 9; fewer once 0.5 s is spent); --runs 1 suits
//                  callgrind: valgrind --tool=callgrind --toggle-collect='*timed_load*' bench_load ...
//                  counts the instructions of try_load (timed_create: of virtual_machine::create)
//   --timeout S    each case (one shape, one size) is killed after S seconds; default 120
//   --slow S       once a case of a shape took more than S seconds (load + create, or killed), the
//                  shape's larger sizes are skipped; default 20
//   --quick        sizes up to 16K, one run each (for the test suite)
//
// Each case runs in a child process (fork): a case that runs away can be killed without losing the
// others, and every case starts from a fresh heap, so the peaks are not the leftovers of the last.
// Linux and glibc only (fork, poll, malloc_usable_size).
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <relaxvm.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "adversarial.hpp"

#include "common.hpp"

namespace rv = relaxvm;
using bench::clock_type;

// ---- heap accounting ------------------------------------------------------------------------
//
// Every operator new and delete of the process goes through these, so the benchmark sees what
// the library allocates without any hook in it. A block counts as what malloc really reserved
// for it (malloc_usable_size): the figures are what the heap pays, rounding included. The
// benchmark is single-threaded, so plain counters do.

namespace heap {

std::size_t live = 0;  // bytes in blocks not yet freed
std::size_t peak = 0;  // the most `live` has been since reset_peak()

void reset_peak() { peak = live; }

void* allocate(std::size_t n, std::size_t align) noexcept {
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(n > 0 ? n : 1);
  } else if (posix_memalign(&p, align, n > 0 ? n : 1) != 0) {
    p = nullptr;
  }
  if (p) {
    live += malloc_usable_size(p);
    peak = std::max(peak, live);
  }
  return p;
}

void release(void* p) noexcept {
  if (!p) return;
  live -= malloc_usable_size(p);
  std::free(p);
}

void* allocate_or_throw(std::size_t n, std::size_t align) {
  void* p = allocate(n, align);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace heap

void* operator new(std::size_t n) { return heap::allocate_or_throw(n, 0); }
void* operator new[](std::size_t n) { return heap::allocate_or_throw(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  return heap::allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return heap::allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return heap::allocate(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return heap::allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return heap::allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return heap::allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { heap::release(p); }
void operator delete[](void* p) noexcept { heap::release(p); }
void operator delete(void* p, std::size_t) noexcept { heap::release(p); }
void operator delete[](void* p, std::size_t) noexcept { heap::release(p); }
void operator delete(void* p, std::align_val_t) noexcept { heap::release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { heap::release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { heap::release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { heap::release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { heap::release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { heap::release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { heap::release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { heap::release(p); }

namespace {

using adversarial::shape;
using adversarial::shapes;

// The smallest file of the shape with at least `target` bytes (and at least one item): its size
// grows linearly with the item count, so two small programs give the slope.
std::vector<std::byte> file_of(const shape& s, std::size_t target) {
  auto size_with = [&](std::int64_t n) {
    return static_cast<std::int64_t>(rv::binary::save(s.make(n).view()).size());
  };
  const std::int64_t small = size_with(16), per_item = (size_with(32) - small) / 16;
  const std::int64_t fixed = small - 16 * per_item;
  const std::int64_t wanted = static_cast<std::int64_t>(target) - fixed;
  const std::int64_t n = std::max<std::int64_t>(1, (wanted + per_item - 1) / per_item);
  return rv::binary::save(s.make(n).view());
}

// ---- one case, in a child process ---------------------------------------------------------

// What the child sends back through its pipe.
struct case_result {
  std::int64_t bytes = 0;
  int runs = 0;
  double load_us = 0, create_us = 0;  // medians over the runs
  double first_s = 0;                 // load + create of the first run, in seconds
  std::int64_t load_peak = 0;         // heap bytes above the baseline: the most during try_load,
  std::int64_t load_live = 0;         //   what the executable keeps,
  std::int64_t create_peak = 0;       //   the most while the VM was made,
  std::int64_t create_live = 0;       //   and executable and VM together after
  bool ok = false;
  char note[512] = {};
};

void set_note(case_result& r, std::string_view text) {
  const std::size_t n = std::min(text.size(), sizeof r.note - 1);
  std::memcpy(r.note, text.data(), n);
  r.note[n] = '\0';
}

// Out of line, so that a profiler can single out what is measured
// (callgrind --toggle-collect=*timed_load* or *timed_create*).
RELAXVM_NOINLINE rv::result<rv::executable> timed_load(std::span<const std::byte> bytes) {
  return rv::executable::try_load(bytes);
}
RELAXVM_NOINLINE rv::result<rv::virtual_machine> timed_create(const rv::executable& exe, const rv::registry& reg) {
  return rv::virtual_machine::create(exe, reg);
}

double micros(clock_type::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

case_result measure(const shape& s, std::size_t target, int max_runs) {
  case_result r;
  const std::vector<std::byte> bytes = file_of(s, target);
  r.bytes = static_cast<std::int64_t>(bytes.size());
  const rv::registry reg;  // the builtins; made before the baseline, as a program would have it
  std::vector<double> load_us, create_us;
  // Small cases run several times for a stable median; memory is the first run's (they repeat).
  double spent_s = 0;
  while (static_cast<int>(load_us.size()) < max_runs && (load_us.empty() || spent_s < 0.5)) {
    const bool first = load_us.empty();
    const std::size_t base = heap::live;
    heap::reset_peak();
    const auto t0 = clock_type::now();
    rv::result<rv::executable> exe = timed_load(bytes);
    const auto t1 = clock_type::now();
    if (!exe.ok()) {
      set_note(r, std::string("load failed: ") + std::string(exe.error().message()));
      return r;
    }
    if (first) {
      r.load_peak = static_cast<std::int64_t>(heap::peak - base);
      r.load_live = static_cast<std::int64_t>(heap::live - base);
    }
    const auto t2 = clock_type::now();
    rv::result<rv::virtual_machine> vm = timed_create(*exe, reg);
    const auto t3 = clock_type::now();
    if (first) {
      r.create_peak = static_cast<std::int64_t>(heap::peak - base);
      r.create_live = static_cast<std::int64_t>(heap::live - base);
      r.first_s = (micros(t1 - t0) + micros(t3 - t2)) / 1e6;
      if (vm.ok() == s.create_fails) {
        set_note(r, vm.ok() ? "create succeeded where it should fail"
                            : std::string("create failed: ") + std::string(vm.error().message()));
        return r;
      }
      if (!vm.ok()) {
        const std::string_view m = vm.error().message();
        set_note(r, "create failed as expected, with a message of " + std::to_string(m.size()) + " bytes");
      }
      if (exe->save() != bytes) {
        set_note(r, "the loaded executable saves to other bytes than were loaded");
        return r;
      }
    }
    load_us.push_back(micros(t1 - t0));
    create_us.push_back(micros(t3 - t2));
    spent_s += (micros(t1 - t0) + micros(t3 - t2)) / 1e6;
  }
  r.runs = static_cast<int>(load_us.size());
  r.load_us = bench::median(load_us);
  r.create_us = bench::median(create_us);
  r.ok = true;
  return r;
}

enum class outcome { done, killed, crashed };

// Runs measure() in a child, killed after `timeout_s`.
outcome run_case(const shape& s, std::size_t target, int max_runs, double timeout_s, case_result& out) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("bench_load: pipe");
    std::exit(1);
  }
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    std::perror("bench_load: fork");
    std::exit(1);
  }
  if (child == 0) {
    close(fds[0]);
    const case_result r = measure(s, target, max_runs);
    const bool sent = write(fds[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
    _exit(sent ? 0 : 1);  // no destructors: the parent has what it needs
  }
  close(fds[1]);
  pollfd p{fds[0], POLLIN, 0};
  int ready = 0;
  const auto deadline = clock_type::now() + std::chrono::duration<double>(timeout_s);
  do {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
    ready = left > 0 ? poll(&p, 1, static_cast<int>(left)) : 0;
  } while (ready < 0 && errno == EINTR);
  outcome o = outcome::crashed;
  if (ready == 0) {
    kill(child, SIGKILL);
    o = outcome::killed;
  } else if (read(fds[0], &out, sizeof out) == static_cast<ssize_t>(sizeof out)) {
    o = outcome::done;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return o;
}

// ---- the report ---------------------------------------------------------------------------

std::string grouped(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

// "12,345,678 (3.2x)": bytes, and their multiple of the file's size.
std::string memory(std::int64_t b, std::int64_t file) {
  char m[32];
  std::snprintf(m, sizeof m, " (%.1fx)", static_cast<double>(b) / static_cast<double>(file));
  return grouped(b) + m;
}

std::string size_name(std::size_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown cpu";
}

double per_kib(double us, std::int64_t bytes) { return us / (static_cast<double>(bytes) / 1024.0); }
double multiple(std::int64_t b, std::int64_t file) { return static_cast<double>(b) / static_cast<double>(file); }

// How each figure per byte grew between a size and the largest (16x or more smaller when there
// is one): about 1x is linear, 16x means the cost grows with the square of the size.
void print_scaling(const shape& s, const std::vector<case_result>& done) {
  if (done.size() < 2) return;
  const case_result& big = done.back();
  const case_result* small = &done.front();
  for (const case_result& r : done)
    if (r.bytes * 16 <= big.bytes) small = &r;
  std::printf("  %s per byte, from %s to %s bytes (%.0fx the size): load time x%.2f, create time x%.2f, "
              "load peak x%.2f, after load x%.2f, create peak x%.2f, after create x%.2f\n",
              s.name, grouped(small->bytes).c_str(), grouped(big.bytes).c_str(),
              multiple(big.bytes, small->bytes),
              per_kib(big.load_us, big.bytes) / per_kib(small->load_us, small->bytes),
              per_kib(big.create_us, big.bytes) / per_kib(small->create_us, small->bytes),
              multiple(big.load_peak, big.bytes) / multiple(small->load_peak, small->bytes),
              multiple(big.load_live, big.bytes) / multiple(small->load_live, small->bytes),
              multiple(big.create_peak, big.bytes) / multiple(small->create_peak, small->bytes),
              multiple(big.create_live, big.bytes) / multiple(small->create_live, small->bytes));
}

std::size_t parse_bytes(const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  std::size_t scale = 1;
  if (*end == 'K' || *end == 'k') scale = std::size_t{1} << 10, ++end;
  else if (*end == 'M' || *end == 'm') scale = std::size_t{1} << 20, ++end;
  if (end == text || *end != '\0') {
    std::fprintf(stderr, "bench_load: '%s' is not a size (a number, optionally followed by K or M)\n", text);
    std::exit(1);
  }
  return static_cast<std::size_t>(v) * scale;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_bytes = std::size_t{16} << 20;
  std::vector<std::string> only;
  double timeout_s = 120, slow_s = 20;
  int max_runs = 9;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--max-bytes" && has_value) {
      max_bytes = parse_bytes(argv[++i]);
    } else if (a == "--shape" && has_value) {
      only.emplace_back(argv[++i]);
    } else if (a == "--runs" && has_value) {
      max_runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--timeout" && has_value) {
      timeout_s = std::atof(argv[++i]);
    } else if (a == "--slow" && has_value) {
      slow_s = std::atof(argv[++i]);
    } else if (a == "--quick") {
      max_runs = 1;
      max_bytes = std::min(max_bytes, std::size_t{16} << 10);
    } else if (a == "--list") {
      for (const shape& s : shapes) std::printf("%s\n", s.name);
      return 0;
    } else {
      std::fprintf(stderr,
                   "usage: bench_load [--max-bytes N[K|M]] [--shape NAME]... [--runs N] [--timeout S] [--slow S]\n"
                   "                  [--quick] [--list]\n");
      return 1;
    }
  }
  for (const std::string& name : only)
    if (std::none_of(std::begin(shapes), std::end(shapes), [&](const shape& s) { return name == s.name; })) {
      std::fprintf(stderr, "bench_load: no shape '%s' (--list names them)\n", name.c_str());
      return 1;
    }

  std::printf("relaxvm %s load benchmark: executable::try_load and virtual_machine::create (builtins' registry)\n",
              RELAXVM_VERSION_STRING);
  std::printf("machine: %s; compiler: %s\n", cpu_name().c_str(), __VERSION__);
  std::printf("times: medians of up to %d runs (fewer once 0.5 s is spent); memory: heap bytes above the baseline "
              "(operator new, as malloc reserves them), and their multiple of the file's size\n",
              max_runs);
  std::printf("load peak: the most during try_load; after load: what the executable keeps; create peak: the most "
              "while the VM was made; after create: executable and VM\n\n");
  std::printf("%-17s %6s %11s %12s %9s %24s %24s %12s %9s %24s %24s  %s\n", "shape", "size", "bytes", "load us",
              "us/KiB", "load peak", "after load", "create us", "us/KiB", "create peak", "after create", "runs");

  bool failed = false;
  for (const shape& s : shapes) {
    if (!only.empty() && std::find(only.begin(), only.end(), s.name) == only.end()) continue;
    std::vector<case_result> done;
    std::string skip_why;  // set once a case of this shape was too slow: its larger sizes are skipped
    for (std::size_t target = 1024; target <= max_bytes; target *= 4) {
      if (!skip_why.empty()) {
        std::printf("%-17s %6s skipped: %s\n", s.name, size_name(target).c_str(), skip_why.c_str());
        continue;
      }
      case_result r;
      const auto t0 = clock_type::now();
      const outcome o = run_case(s, target, max_runs, timeout_s, r);
      const double wall_s = std::chrono::duration<double>(clock_type::now() - t0).count();
      if (o != outcome::done || !r.ok) {
        char msg[64];
        std::snprintf(msg, sizeof msg, "after %.1f s", wall_s);
        std::printf("%-17s %6s %s %s\n", s.name, size_name(target).c_str(),
                    o == outcome::killed ? "killed (--timeout)" : o == outcome::crashed ? "crashed" : r.note, msg);
        failed = failed || o != outcome::killed;
        skip_why = "the " + size_name(target) + " case did not finish";
        continue;
      }
      std::printf("%-17s %6s %11s %12.0f %9.2f %24s %24s %12.0f %9.2f %24s %24s  %d%s%s\n", s.name,
                  size_name(target).c_str(), grouped(r.bytes).c_str(), r.load_us, per_kib(r.load_us, r.bytes),
                  memory(r.load_peak, r.bytes).c_str(), memory(r.load_live, r.bytes).c_str(), r.create_us,
                  per_kib(r.create_us, r.bytes), memory(r.create_peak, r.bytes).c_str(),
                  memory(r.create_live, r.bytes).c_str(), r.runs, r.note[0] ? "  " : "", r.note);
      std::fflush(stdout);
      done.push_back(r);
      if (r.first_s > slow_s) {
        char msg[96];
        std::snprintf(msg, sizeof msg, "the %s case took %.1f s (--slow %.0f)", size_name(target).c_str(), r.first_s,
                      slow_s);
        skip_why = msg;
      }
    }
    print_scaling(s, done);
  }
  return failed ? 1 : 0;
}
