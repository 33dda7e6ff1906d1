// SPDX-License-Identifier: Apache-2.0
// detail::flat_map: a map kept as one sorted std::vector of (key, value) pairs, for the maps of
// the core that hold few entries: a registry's functions, a pool's free lists (one per block
// size), a VM's saved functions, inputs and outputs. A lookup is a binary search over contiguous
// memory; an insertion moves the entries after it. Keys compare with `<`, also against another
// type (a std::string key is found by a std::string_view).
//
// It replaces std::map there because <map> and its instantiations cost every translation unit
// that includes relaxvm.hpp about 0.1 s of compile time.
#ifndef RELAXVM_BASE_FLAT_MAP_HPP
#define RELAXVM_BASE_FLAT_MAP_HPP

#include <cstddef>
#include <utility>
#include <vector>

#include "config.hpp"  // RELAXVM_ABI

namespace relaxvm::RELAXVM_ABI::detail {

template <class Key, class Value>
class flat_map {
 public:
  using entry = std::pair<Key, Value>;

  /// The value of `key`, or nullptr.
  template <class K>
  Value* find(const K& key) {
    const std::size_t i = position(key);
    return i < items_.size() ? &items_[i].second : nullptr;
  }
  template <class K>
  const Value* find(const K& key) const {
    const std::size_t i = position(key);
    return i < items_.size() ? &items_[i].second : nullptr;
  }
  /// The value of `key`, made from `v...` when the key is new; and whether it is new.
  template <class K, class... V>
  std::pair<Value*, bool> try_emplace(const K& key, V&&... v) {
    const std::size_t i = lower(key);
    if (i < items_.size() && !(key < items_[i].first)) return {&items_[i].second, false};
    auto it = items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(i), entry(Key(key), Value(std::forward<V>(v)...)));
    return {&it->second, true};
  }
  /// The value of `key`, default-made when the key is new.
  template <class K>
  Value& operator[](const K& key) {
    return *try_emplace(key).first;
  }
  template <class K, class V>
  void insert_or_assign(const K& key, V&& v) {
    if (Value* p = find(key)) *p = std::forward<V>(v);
    else try_emplace(key, std::forward<V>(v));
  }
  /// Removes `key`; whether it was there.
  template <class K>
  bool erase(const K& key) {
    const std::size_t i = position(key);
    if (i == items_.size()) return false;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
    return true;
  }

  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  /// The entries in key order.
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  // The first entry whose key is not below `key`.
  template <class K>
  std::size_t lower(const K& key) const {
    std::size_t lo = 0, hi = items_.size();
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (items_[mid].first < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  // The entry of `key`, or size() when there is none.
  template <class K>
  std::size_t position(const K& key) const {
    const std::size_t i = lower(key);
    return i < items_.size() && !(key < items_[i].first) ? i : items_.size();
  }

  std::vector<entry> items_;
};

}  // namespace relaxvm::detail

#endif  // RELAXVM_BASE_FLAT_MAP_HPP
