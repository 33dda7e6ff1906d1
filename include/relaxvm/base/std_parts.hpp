// SPDX-License-Identifier: Apache-2.0
// std::function and std::mutex without the rest of <functional> and <mutex>. libstdc++'s
// <functional> also brings <unordered_map> (for the C++17 searchers), and <mutex> brings
// <chrono> and <system_error>: together about 0.1 s of compile time in every translation unit
// that includes relaxvm.hpp, for two class templates. With another standard library (or a
// libstdc++ that moves them), the whole headers are used.
#ifndef RELAXVM_BASE_STD_PARTS_HPP
#define RELAXVM_BASE_STD_PARTS_HPP

#include <cstddef>  // defines __GLIBCXX__ under libstdc++

#include "config.hpp"

#if defined(__GLIBCXX__) && __has_include(<bits/std_function.h>)
#include <bits/std_function.h>
#else
#include <functional>
#endif

#if RELAXVM_THREADS
#if defined(__GLIBCXX__) && __has_include(<bits/std_mutex.h>)
#include <bits/std_mutex.h>
#else
#include <mutex>
#endif
#endif

#endif  // RELAXVM_BASE_STD_PARTS_HPP
