// SPDX-License-Identifier: Apache-2.0
// trivial_vector<T>: a growable array of trivially copyable elements, with the part of
// std::vector's interface the executable's layout uses. It exists for constant evaluation: in
// libstdc++ 12 a std::vector::push_back costs clang 16 about 45 constexpr steps (19 of them with
// room reserved, the rest moving elements one by one through allocator_traits when it grows);
// this one costs about 6: its blocks are arrays made with new[], whose elements are alive from the
// start, so that a push is one assignment (std::allocator's storage would need a construct_at per
// element). The builder pushes every word of a program into these pools at compile time, where
// clang allows 1,048,576 steps in all by default. At run time it copies with memmove.
//
// The price: since every element up to capacity() is alive, constant evaluation does not reject
// a read past size() as it does with std::vector; the layout's readers check their indexes (the
// verifier) instead.
#ifndef RELAXVM_BASE_TRIVIAL_VECTOR_HPP
#define RELAXVM_BASE_TRIVIAL_VECTOR_HPP

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>

#include "config.hpp"  // RELAXVM_ABI

namespace relaxvm::RELAXVM_ABI::detail {

/// `Align`: at run time the elements start at a multiple of it (the layout's tensor data does,
/// so that an executable keeps the loader's bytes as they are rather than copying them).
template <class T, std::size_t Align = alignof(T)>
class trivial_vector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  constexpr trivial_vector() noexcept = default;
  constexpr trivial_vector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  template <class It>
    requires(std::is_same_v<It, const T*> || std::is_same_v<It, T*> || std::forward_iterator<It>)  // see copy_into
  constexpr trivial_vector(It first, It last) {
    assign(first, last);
  }
  constexpr trivial_vector(const trivial_vector& o) { assign(o.begin(), o.end()); }
  constexpr trivial_vector(trivial_vector&& o) noexcept
      : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  constexpr trivial_vector& operator=(const trivial_vector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  constexpr trivial_vector& operator=(trivial_vector&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      o.data_ = nullptr;
      o.size_ = o.capacity_ = 0;
    }
    return *this;
  }
  constexpr trivial_vector& operator=(std::initializer_list<T> init) {
    assign(init.begin(), init.end());
    return *this;
  }
  constexpr ~trivial_vector() { release(); }

  constexpr size_type size() const noexcept { return size_; }
  constexpr size_type capacity() const noexcept { return capacity_; }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr T* data() noexcept { return data_; }
  constexpr const T* data() const noexcept { return data_; }
  constexpr T* begin() noexcept { return data_; }
  constexpr const T* begin() const noexcept { return data_; }
  constexpr T* end() noexcept { return data_ + size_; }
  constexpr const T* end() const noexcept { return data_ + size_; }
  constexpr T& operator[](size_type i) noexcept { return data_[i]; }
  constexpr const T& operator[](size_type i) const noexcept { return data_[i]; }
  constexpr T& front() noexcept { return data_[0]; }
  constexpr const T& front() const noexcept { return data_[0]; }
  constexpr T& back() noexcept { return data_[size_ - 1]; }
  constexpr const T& back() const noexcept { return data_[size_ - 1]; }

  constexpr void push_back(const T& v) {
    if (size_ == capacity_) {
      const T copy = v;  // v may live in this vector
      grow_to(size_ + 1);
      data_[size_++] = copy;
      return;
    }
    data_[size_++] = v;
  }
  /// Appends the n elements at `first` (which must not point into this vector).
  constexpr void append(const T* first, size_type n) {
    if (size_ + n > capacity_) grow_to(size_ + n);
    append_n(first, n);
  }
  constexpr void pop_back() noexcept { --size_; }
  constexpr void clear() noexcept { size_ = 0; }
  constexpr void reserve(size_type n) {
    if (n > capacity_) reallocate(n);
  }
  /// New elements are value-initialized (zero for the layout's types).
  constexpr void resize(size_type n) { resize(n, T{}); }
  constexpr void resize(size_type n, const T& v) {
    if (n > size_) {
      const T copy = v;
      if (n > capacity_) grow_to(n);
      for (size_type i = size_; i < n; ++i) data_[i] = copy;
    }
    size_ = n;
  }
  template <class It>
    requires(std::is_same_v<It, const T*> || std::is_same_v<It, T*> || std::forward_iterator<It>)  // see copy_into
  constexpr void assign(It first, It last) {
    const auto n = static_cast<size_type>(std::distance(first, last));
    if (n > capacity_) {
      // The source may be this vector's own elements: copy before the old block goes.
      trivial_vector fresh;
      fresh.reallocate(n);
      fresh.append_n(first, n);
      *this = static_cast<trivial_vector&&>(fresh);
      return;
    }
    size_ = 0;
    append_n(first, n);
  }
  /// Inserts [first, last) before `pos`; returns an iterator to the first inserted element.
  template <class It>
    requires(std::is_same_v<It, const T*> || std::is_same_v<It, T*> || std::forward_iterator<It>)  // see copy_into
  constexpr T* insert(const T* pos, It first, It last) {
    const auto at = static_cast<size_type>(pos - data_);
    const auto n = static_cast<size_type>(std::distance(first, last));
    if (n == 0) return data_ + at;
    if (at == size_ && size_ + n <= capacity_) {  // appending into room: the common case
      append_n(first, n);
      return data_ + at;
    }
    trivial_vector out;  // a fresh block, so that [first, last) may point into this vector
    out.reallocate(grown(size_ + n > 2 * capacity_ ? size_ + n : 2 * capacity_));
    out.append_n(data_, at);
    out.append_n(first, n);
    out.append_n(data_ + at, size_ - at);
    *this = static_cast<trivial_vector&&>(out);
    return data_ + at;
  }
  constexpr T* insert(const T* pos, const T& v) { return insert(pos, &v, &v + 1); }
  constexpr T* erase(const T* first, const T* last) {
    const auto at = static_cast<size_type>(first - data_);
    const auto n = static_cast<size_type>(last - first);
    for (size_type i = at; i + n < size_; ++i) data_[i] = data_[i + n];
    size_ -= n;
    return data_ + at;
  }
  constexpr T* erase(const T* pos) { return erase(pos, pos + 1); }

  friend constexpr bool operator==(const trivial_vector& a, const trivial_vector& b) {
    if (a.size_ != b.size_) return false;
    for (size_type i = 0; i < a.size_; ++i)
      if (!(a.data_[i] == b.data_[i])) return false;
    return true;
  }

 private:
  static constexpr size_type grown(size_type need) { return need < 16 ? 16 : need; }
  // Room for `need` elements at least, doubling so that pushes cost O(1) amortized.
  constexpr void grow_to(size_type need) {
    const size_type twice = 2 * capacity_;
    reallocate(grown(need > twice ? need : twice));
  }
  static constexpr bool over_aligned = Align > alignof(T);
  constexpr void reallocate(size_type n) {
    T* fresh = nullptr;
    if (over_aligned && !std::is_constant_evaluated())
      fresh = static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t{Align}));
    else
      fresh = new T[n];
    copy_into(fresh, data_, size_);
    release();
    data_ = fresh;
    capacity_ = n;
  }
  constexpr void release() noexcept {
    if (over_aligned && !std::is_constant_evaluated()) {
      if (data_) ::operator delete[](data_, std::align_val_t{Align});
    } else {
      delete[] data_;
    }
    data_ = nullptr;
    capacity_ = 0;
  }
  template <class It>
  constexpr void append_n(It first, size_type n) {
    copy_into(data_ + size_, first, n);
    size_ += n;
  }
  // Copies n elements from `first` to `out` (room for them is there).
  // (The source may overlap the destination when a vector is assigned part of itself.)
  template <class It>
  static constexpr void copy_into(T* out, It first, size_type n) {
    // Pointers, as the layout's callers pass, are told apart first: the iterator concepts cost
    // every translation unit a good part of a tenth of a second per element type to check.
    if constexpr (std::is_same_v<It, const T*> || std::is_same_v<It, T*>) {
      if (!std::is_constant_evaluated()) {
        if (n > 0) std::memmove(static_cast<void*>(out), static_cast<const void*>(first), n * sizeof(T));
        return;
      }
    } else if constexpr (std::contiguous_iterator<It> && std::is_same_v<std::iter_value_t<It>, T>) {
      if (!std::is_constant_evaluated()) {
        if (n > 0) std::memmove(static_cast<void*>(out), static_cast<const void*>(std::to_address(first)), n * sizeof(T));
        return;
      }
    }
    for (size_type i = 0; i < n; ++i, ++first) out[i] = *first;
  }

  T* data_ = nullptr;
  size_type size_ = 0;
  size_type capacity_ = 0;
};

}  // namespace relaxvm::detail

#endif  // RELAXVM_BASE_TRIVIAL_VECTOR_HPP
