// SPDX-License-Identifier: Apache-2.0
// std::function, std::mutex and the classic algorithms without the rest of <functional>, <mutex>
// and <algorithm>. libstdc++'s <functional> also brings <unordered_map> (for the C++17
// searchers), <mutex> brings <chrono> and <system_error>, and <algorithm> the ranges algorithms
// and the parallel ones' declarations: together about 0.13 s of compile time in every translation
// unit that includes relaxvm.hpp, for parts the core does not use. With another standard library
// (or a libstdc++ that moves them), the whole headers are used.
#ifndef RELAXVM_BASE_STD_PARTS_HPP
#define RELAXVM_BASE_STD_PARTS_HPP

#include <cstddef>  // defines __GLIBCXX__ under libstdc++

#include "config.hpp"

#if defined(__GLIBCXX__) && __has_include(<bits/std_function.h>)
#include <bits/std_function.h>
#else
#include <functional>
#endif

// std::sort, std::equal, std::min, std::max, std::fill, ...: not std::ranges.
#if defined(__GLIBCXX__) && __has_include(<bits/stl_algo.h>) && __has_include(<bits/stl_algobase.h>)
#include <bits/stl_algobase.h>
#include <bits/stl_algo.h>
#else
#include <algorithm>
#endif

#if RELAXVM_THREADS
#if defined(__GLIBCXX__) && __has_include(<bits/std_mutex.h>)
#include <bits/std_mutex.h>
#else
#include <mutex>
#endif
#endif

#endif  // RELAXVM_BASE_STD_PARTS_HPP
