// SPDX-License-Identifier: Apache-2.0
// A hash index usable in constant expressions: it maps a 64-bit hash to the positions (in some
// table the caller owns) of the entries with that hash, so that finding a name or a constant
// costs a hash and a comparison or two instead of a walk over the table. The builder finds
// functions and equal constants through it, and formalize() renamed registers, which keeps
// building a program of N instructions linear in N, at compile time too (constexpr steps).
#ifndef RELAXVM_BASE_HASH_INDEX_HPP
#define RELAXVM_BASE_HASH_INDEX_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "config.hpp"  // RELAXVM_ABI
#include "trivial_vector.hpp"

namespace relaxvm::RELAXVM_ABI::detail {

/// FNV-1a, 64-bit (its offset basis and prime), folded over further words by hash_mix.
inline constexpr std::uint64_t hash_seed = 14695981039346656037ull;
inline constexpr std::uint64_t hash_prime = 1099511628211ull;

constexpr std::uint64_t hash_mix(std::uint64_t h, std::uint64_t word) {
  // One multiply per word (not per byte): a word's bytes all reach the high bits through it, and
  // the final xor-shift in hash_index brings them down to the bucket bits.
  return (h ^ word) * hash_prime;
}

constexpr std::uint64_t hash_chars(std::uint64_t h, std::string_view s) {
  // The FNV step written out rather than a hash_mix call per character: fewer constexpr steps.
  const char* p = s.data();
  for (std::size_t i = 0, n = s.size(); i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * hash_prime;
  return h;
}

/// a == b, in fewer constexpr steps than std::string_view's operator== (libstdc++ 12 compares
/// through char_traits, a few calls per character).
constexpr bool same_chars(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  for (std::size_t i = 0, n = a.size(); i < n; ++i)
    if (p[i] != q[i]) return false;
  return true;
}

/// Its address moves with the program's load address (ASLR): part of hash_index's salt.
inline constexpr char hash_salt_anchor = 0;

/// Positions keyed by hash, with open addressing (linear probing) in a power-of-two table kept at
/// most half full. find() takes the caller's equality test, since equal hashes need not mean
/// equal entries.
///
/// Hashes are computed from the program, and a loader's program comes from a file: at run time
/// each index mixes its hashes with a salt of its own (from addresses, which ASLR moves) before
/// choosing buckets, so that a file cannot be made whose keys all fall in one run of buckets.
/// (During constant evaluation the salt is 0: those programs are the programmer's own.) What an
/// index finds never depends on the salt, only how fast it finds it.
class hash_index {
 public:
  constexpr hash_index() : salt_(make_salt()) {}

  /// A position with hash `h` for which `same(position)` is true, or -1.
  template <class Same>
  constexpr std::int64_t find(std::uint64_t h, Same&& same) const {
    if (slots_.empty()) return -1;
    for (std::size_t i = bucket(h);; i = (i + 1) & mask_) {
      const slot& s = slots_[i];
      if (s.position < 0) return -1;
      if (s.hash == h && same(s.position)) return s.position;
    }
  }
  /// Records `position` under hash `h` (a position may be recorded once).
  constexpr void insert(std::uint64_t h, std::int64_t position) {
    if (2 * (count_ + 1) > slots_.size()) grow(slots_.empty() ? 16 : 2 * slots_.size());
    place(h, position);
    ++count_;
  }
  /// Makes room for `n` positions in all, so that recording them takes one table, never two
  /// while it grows (a VM's index of a file's function names counts against docs/security.md's
  /// bound on memory).
  constexpr void reserve(std::size_t n) {
    std::size_t size = slots_.empty() ? 16 : slots_.size();
    while (2 * n > size) size *= 2;
    if (size > slots_.size()) grow(size);
  }

 private:
  struct slot {
    std::uint64_t hash = 0;
    std::int64_t position = -1;  // -1: empty
  };
  // The murmur3 finalizer: every bit of h (and of the salt) reaches the bucket bits.
  constexpr std::size_t bucket(std::uint64_t h) const {
    h ^= salt_;
    h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
    h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return static_cast<std::size_t>(h ^ (h >> 33)) & mask_;
  }
  constexpr std::uint64_t make_salt() const {
    if (std::is_constant_evaluated()) return 0;
    return hash_mix(hash_mix(hash_seed, reinterpret_cast<std::uintptr_t>(this)),
                    reinterpret_cast<std::uintptr_t>(&hash_salt_anchor));
  }
  constexpr void place(std::uint64_t h, std::int64_t position) {
    std::size_t i = bucket(h);
    while (slots_[i].position >= 0) i = (i + 1) & mask_;
    slots_[i] = {h, position};
  }
  constexpr void grow(std::size_t n) {
    trivial_vector<slot> old = static_cast<trivial_vector<slot>&&>(slots_);
    slots_ = trivial_vector<slot>();
    slots_.resize(n, slot{});
    mask_ = n - 1;
    for (const slot& s : old)
      if (s.position >= 0) place(s.hash, s.position);
  }

  trivial_vector<slot> slots_;
  std::uint64_t salt_ = 0;
  std::size_t mask_ = 0;
  std::size_t count_ = 0;
};

}  // namespace relaxvm::detail

#endif  // RELAXVM_BASE_HASH_INDEX_HPP
