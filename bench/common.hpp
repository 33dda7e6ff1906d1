// SPDX-License-Identifier: Apache-2.0
// What the benchmarks share: the clock, and the median they report.
#ifndef RELAXVM_BENCH_COMMON_HPP
#define RELAXVM_BENCH_COMMON_HPP

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace bench {

using clock_type = std::chrono::steady_clock;

/// The median of `v` (its upper median when the count is even); reorders v.
inline double median(std::vector<double>& v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace bench

#endif  // RELAXVM_BENCH_COMMON_HPP
