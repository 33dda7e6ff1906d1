// SPDX-License-Identifier: Apache-2.0
// A growable character buffer usable in constant expressions. std::string is not (clang 16 with
// libstdc++ 12), and the verifier's messages must be computed at compile time too.
#ifndef RELAXVM_BASE_TEXT_BUILDER_HPP
#define RELAXVM_BASE_TEXT_BUILDER_HPP

#include "config.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <memory>
#include <vector>

namespace relaxvm::RELAXVM_ABI::detail {

#if !RELAXVM_HEAP
/// Firmware mode: text's growable buffer serves constant evaluation only (at run time the fixed
/// buffer does), so no run-time path may reach operator new or delete, and none is linked.
template <class T>
struct compile_time_allocator {
  using value_type = T;
  constexpr compile_time_allocator() noexcept = default;
  template <class U>
  constexpr compile_time_allocator(const compile_time_allocator<U>&) noexcept {}
  constexpr T* allocate(std::size_t n) {
    if (std::is_constant_evaluated()) return std::allocator<T>().allocate(n);
    __builtin_trap();
  }
  constexpr void deallocate(T* p, std::size_t n) noexcept {
    if (std::is_constant_evaluated()) std::allocator<T>().deallocate(p, n);
  }
  friend constexpr bool operator==(compile_time_allocator, compile_time_allocator) noexcept { return true; }
};
#endif

/// v / 10, and v % 10 in `rem`, with 32-bit divisions only: (hi, lo) divided in 16-bit steps, each
/// partial dividend below 10 * 2^16. What a 32-bit target formats numbers with, so that it links
/// no 64-bit division helper (870 B of libgcc on a Cortex-M3).
constexpr std::uint64_t divide_by_10_narrow(std::uint64_t v, std::uint32_t& rem) noexcept {
  const auto hi = static_cast<std::uint32_t>(v >> 32), lo = static_cast<std::uint32_t>(v);
  const std::uint32_t upper = (hi % 10) << 16 | lo >> 16;
  const std::uint32_t lower = (upper % 10) << 16 | (lo & 0xffffu);
  rem = lower % 10;
  return static_cast<std::uint64_t>(hi / 10) << 32 | ((upper / 10) << 16 | lower / 10);
}

class text {
 public:
  constexpr text() = default;
  constexpr explicit text(std::string_view s) { append(s); }

  constexpr text& append(std::string_view s) {
    if (fixed()) {
      for (char c : s) push(c);
      return *this;
    }
    // A loop rather than insert(): g++ 12 at -O3 sees a null source in insert()'s memmove for an
    // empty view and warns (-Wnonnull), which -Werror makes fatal.
    const std::size_t need = chars_.size() + s.size();
    if (chars_.capacity() < need) chars_.reserve(need > 2 * chars_.capacity() ? need : 2 * chars_.capacity());
    for (char c : s) chars_.push_back(c);
    return *this;
  }
  constexpr text& append(char c) {
    push(c);
    return *this;
  }
  constexpr text& append_int(std::int64_t v) {
    if (v < 0) push('-');
    return append_uint(v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v));
  }
  constexpr text& append_uint(std::uint64_t v) {
    char digits[20]{};
    int n = 0;
    do {
      if constexpr (sizeof(std::size_t) >= 8) {
        digits[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
      } else {
        std::uint32_t digit = 0;
        v = divide_by_10_narrow(v, digit);
        digits[n++] = static_cast<char>('0' + digit);
      }
    } while (v != 0);
    while (n > 0) push(digits[--n]);
    return *this;
  }
  /// Appends `c` until the text is `width` characters long (std::setw with std::left).
  constexpr text& pad_to(std::size_t width, char c = ' ') {
    while (size() < width) {
      const std::size_t before = size();
      push(c);
      if (size() == before) break;  // full (firmware mode)
    }
    return *this;
  }

  constexpr text& operator<<(std::string_view s) { return append(s); }
  constexpr text& operator<<(const char* s) { return append(std::string_view(s)); }
  constexpr text& operator<<(char c) { return append(c); }
  constexpr text& operator<<(bool b) { return append(b ? std::string_view("true") : "false"); }
  template <std::signed_integral T>
  constexpr text& operator<<(T v) {
    return append_int(static_cast<std::int64_t>(v));
  }
  template <std::unsigned_integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, char>)
  constexpr text& operator<<(T v) {
    return append_uint(static_cast<std::uint64_t>(v));
  }
  constexpr text& operator<<(const text& t) { return append(t.view()); }

  constexpr std::string_view view() const noexcept {
#if !RELAXVM_HEAP
    if (fixed()) return std::string_view(small_, small_size_);
#endif
    return std::string_view(chars_.data(), chars_.size());
  }
  constexpr std::size_t size() const noexcept { return view().size(); }
  constexpr bool empty() const noexcept { return size() == 0; }
  constexpr void clear() noexcept {
#if !RELAXVM_HEAP
    small_size_ = 0;
#endif
    chars_.clear();
  }

 private:
  // Whether the characters live in the fixed buffer: at run time in firmware mode. Constant
  // evaluation (the builder, the verifier) always uses the vector.
  constexpr bool fixed() const noexcept {
#if RELAXVM_HEAP
    return false;
#else
    return !std::is_constant_evaluated();
#endif
  }
  constexpr void push(char c) {
#if !RELAXVM_HEAP
    if (fixed()) {
      if (small_size_ < RELAXVM_TEXT_CAPACITY) small_[small_size_++] = c;
      else small_[RELAXVM_TEXT_CAPACITY - 1] = small_[RELAXVM_TEXT_CAPACITY - 2] = small_[RELAXVM_TEXT_CAPACITY - 3] = '.';
      return;
    }
#endif
    chars_.push_back(c);
  }

#if RELAXVM_HEAP
  std::vector<char> chars_;
#else
  std::vector<char, compile_time_allocator<char>> chars_;
  char small_[RELAXVM_TEXT_CAPACITY]{};
  std::size_t small_size_ = 0;
#endif
};

#if RELAXVM_HEAP
/// Appends the shortest text that reads back as exactly `v` ("2.5", "1e+20", "-0", "nan", "inf").
/// Run time only: std::to_chars is not constexpr for floating point in C++20. Defined below with
/// the core (in separate compilation, in the compiled library: <charconv> is not read elsewhere).
RELAXVM_DECL void append_double(text& out, double v);
/// The shortest text that reads back as exactly the float `v`.
RELAXVM_DECL void append_float(text& out, float v);
#else
/// Firmware mode (RELAXVM_HEAP=0): six decimals, without the tables of std::to_chars (tens of
/// KiB of flash).
inline void append_double(text& out, double v) {
  if (v != v) {
    out.append("nan");
    return;
  }
  if (v < 0) {
    out.append('-');
    v = -v;
  }
  if (v >= 1e18) {
    out.append(v - v != 0 ? "inf" : "1e18 or more");  // inf - inf is nan
    return;
  }
  auto whole = static_cast<std::uint64_t>(v);
  auto micros = static_cast<std::uint64_t>((v - static_cast<double>(whole)) * 1e6 + 0.5);
  if (micros >= 1000000) {
    ++whole;
    micros -= 1000000;
  }
  out.append_uint(whole);
  out.append('.');
  for (std::uint64_t d = 100000; d > 0; d /= 10) out.append(static_cast<char>('0' + micros / d % 10));
}
inline void append_float(text& out, float v) { append_double(out, static_cast<double>(v)); }
#endif

}  // namespace relaxvm::detail

#if RELAXVM_HEAP && RELAXVM_DEFINES_CORE
#include <charconv>

namespace relaxvm::RELAXVM_ABI::detail {
RELAXVM_DECL void append_double(text& out, double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
}
RELAXVM_DECL void append_float(text& out, float v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
}
}  // namespace relaxvm::detail
#endif

namespace relaxvm::RELAXVM_ABI::detail {

/// Concatenates the arguments into a text: cat("expected ", 3, " arguments").
template <class... Args>
constexpr text cat(const Args&... args) {
  text t;
  (t << ... << args);
  return t;
}

}  // namespace relaxvm::detail

#endif  // RELAXVM_BASE_TEXT_BUILDER_HPP
