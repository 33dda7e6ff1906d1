// SPDX-License-Identifier: Apache-2.0
// value_stack: the memory of virtual_machine's frames. Slots are taken from the top of a stack of
// segments that never move (so register pointers stay valid while the stack grows) and given back
// in reverse order; segments are kept for the next call.
#ifndef RELAXVM_VM_VALUE_STACK_HPP
#define RELAXVM_VM_VALUE_STACK_HPP

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../runtime/value.hpp"

namespace relaxvm::RELAXVM_ABI::detail {

/// A class template (of a parameter nobody sets), like the VM, so that a translation unit which
/// makes no VM does not compile it.
template <class Unused = void>
class value_stack {
 public:
  /// Where a range of slots begins; give it back to pop() to free them and all above.
  struct mark {
    std::size_t segment = 0, offset = 0;
  };

  /// n slots at the top, or nullptr when memory runs out (nothing changes then). `at`: where
  /// they begin.
  value* push(std::size_t n, mark& at) {
    std::size_t s = seg_, t = top_;
    if (segments_.empty() || t + n > segments_[s].size) {
      if (!segments_.empty()) ++s;
      t = 0;
      if (s == segments_.size() || segments_[s].size < n) {
        const std::size_t size = n > segment_slots ? n : segment_slots;
        value* mem = new (std::nothrow) value[size];
        if (mem == nullptr) return nullptr;
        if (s == segments_.size()) segments_.push_back({});
        segments_[s] = {std::unique_ptr<value[]>(mem), size};
      }
    }
    at = {s, t};
    seg_ = s;
    top_ = t + n;
    return segments_[s].data.get() + t;
  }
  /// Frees the slots from `at` up (the caller has cleared them).
  void pop(const mark& at) {
    seg_ = at.segment;
    top_ = at.offset;
  }

 private:
  struct segment {
    std::unique_ptr<value[]> data;
    std::size_t size = 0;
  };
  static constexpr std::size_t segment_slots = 4096;

  std::vector<segment> segments_;
  std::size_t seg_ = 0, top_ = 0;
};

}  // namespace relaxvm::RELAXVM_ABI::detail

#endif  // RELAXVM_VM_VALUE_STACK_HPP
