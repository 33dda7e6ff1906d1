// SPDX-License-Identifier: Apache-2.0
// relaxvm: every configuration macro, with its default; each can be predefined by the user
// (docs/configuration.md). The macros that change the library's layouts or its code also select
// an inline namespace (RELAXVM_ABI, at the end), so that translation units built with different
// settings cannot be linked together by mistake.
#ifndef RELAXVM_BASE_CONFIG_HPP
#define RELAXVM_BASE_CONFIG_HPP

#if __cplusplus < 202002L
#error "relaxvm requires C++20 (g++ 12 or clang 16 with -std=c++20)"
#endif

#define RELAXVM_VERSION_MAJOR 0
#define RELAXVM_VERSION_MINOR 1
#define RELAXVM_VERSION_PATCH 0
#define RELAXVM_VERSION_STRING "0.1.0"

// Exceptions: the throwing API forms throw relaxvm::error when 1; when 0 they call RELAXVM_ON_ERROR.
#ifdef RELAXVM_USE_EXCEPTIONS
// Use the provided definition.
#elif defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define RELAXVM_USE_EXCEPTIONS 1
#else
#define RELAXVM_USE_EXCEPTIONS 0
#endif

// A hosted build may use <string>, <cstdio> and the heap; a freestanding one may not.
#ifdef RELAXVM_HOSTED
// Use the provided definition.
#elif defined(__STDC_HOSTED__) && __STDC_HOSTED__ == 0
#define RELAXVM_HOSTED 0
#else
#define RELAXVM_HOSTED 1
#endif

// Threads: 1 when the standard library has std::mutex and thread_local storage (hosted, and for
// libstdc++ built with thread support); 0 on bare-metal targets such as arm-none-eabi, where the
// allocators take no locks and the object cache is one for the program.
#ifndef RELAXVM_THREADS
#include <cstddef>  // the standard library's configuration (_GLIBCXX_HAS_GTHREADS)
#if RELAXVM_HOSTED && (!defined(__GLIBCXX__) || defined(_GLIBCXX_HAS_GTHREADS)) && !defined(_LIBCPP_HAS_NO_THREADS)
#define RELAXVM_THREADS 1
#else
#define RELAXVM_THREADS 0
#endif
#endif

// Heap: 1 lets the library use operator new (objects, vectors of the dynamic VM, error texts).
// 0 is the firmware mode: objects come from the buffer given to set_object_memory() (see
// runtime/object.hpp), error messages are kept in a fixed buffer, and only static_vm with arena
// allocators is meant to run.
#ifndef RELAXVM_HEAP
#define RELAXVM_HEAP 1
#endif
#if !RELAXVM_HEAP && RELAXVM_THREADS
#error "relaxvm: firmware mode (RELAXVM_HEAP=0) has one object memory without locks; define RELAXVM_THREADS=0 and use the library from one thread"
#endif

// Error texts: 1 (default) formats every message with the values that were wrong. 0, for the
// smallest firmware, keeps an error's kind and the name it starts with (the builtin's, or the
// program's error context) and drops the rest of the text and the code that formats it (as
// TF Lite Micro's TF_LITE_STRIP_ERROR_STRINGS does); see the README, Firmware mode.
#ifndef RELAXVM_ERROR_TEXT
#define RELAXVM_ERROR_TEXT 1
#endif

// Firmware mode (RELAXVM_HEAP=0): the characters a text (and an error message) holds at run
// time, in the object itself; longer texts are cut there, ending in "...". A decimal number.
#ifndef RELAXVM_TEXT_CAPACITY
#define RELAXVM_TEXT_CAPACITY 256
#endif

// 1: every reference count is atomic (like std::shared_ptr).
// 0 (default): counts are atomic only for objects marked shared with share(); see docs/threads.md.
#ifndef RELAXVM_ATOMIC_REFCOUNT
#define RELAXVM_ATOMIC_REFCOUNT 0
#endif

// Small objects (32 to 512 bytes) are recycled through free lists: per thread where there are
// threads, one for the program on bare metal. On by default in hosted builds with a heap.
#ifndef RELAXVM_OBJECT_CACHE
#define RELAXVM_OBJECT_CACHE (RELAXVM_HOSTED && RELAXVM_HEAP)
#endif
#if RELAXVM_THREADS
#define RELAXVM_THREAD_LOCAL thread_local
#else
#define RELAXVM_THREAD_LOCAL
#endif

// Separate compilation (docs/configuration.md): RELAXVM_SEPARATE_COMPILATION makes the heaviest
// parts declarations only (the VM's entry points, the verifier and lowering at run time, the
// builtins' registry, the loaders, the ONNX importer, the kernels' registration), so a translation
// unit that includes them compiles in a fraction of the time; one library defines them (meson's
// relaxvm_compiled_dep, CMake's relaxvm::compiled, built from src/). Without it (the default)
// everything is header-only. RELAXVM_DECL marks those functions: inline when header-only, external
// otherwise. RELAXVM_EXTERN_TEMPLATE(class X<void>) declares the explicit instantiation of a class
// template for the default configuration that the library holds (src/core.cpp), so a user's
// translation unit compiles none of its out-of-class members and generates no code for its
// inline ones. The core's definitions of RELAXVM_DECL functions, and headers only the library
// needs (vm/vm_impl.hpp), are compiled where RELAXVM_DEFINES_CORE is 1: every header-only
// translation unit, and src/core.cpp alone in separate compilation.
#ifdef RELAXVM_SEPARATE_COMPILATION
#define RELAXVM_DECL
#define RELAXVM_EXTERN_TEMPLATE(...) extern template __VA_ARGS__;
#ifndef RELAXVM_DEFINES_CORE
#define RELAXVM_DEFINES_CORE 0
#endif
#else
#define RELAXVM_DECL inline
#define RELAXVM_EXTERN_TEMPLATE(...)
#undef RELAXVM_DEFINES_CORE
#define RELAXVM_DEFINES_CORE 1
#endif

// RELAXVM_IF_CONSTEVAL { ... }: the branch a constexpr function takes in constant evaluation, where
// the code after it calls a run-time entry point of separate compilation. `if consteval` keeps
// that branch out of the object code even at -O0 (g++ -O0 compiles the dead branch of
// `if (std::is_constant_evaluated())`, and with it the verifier). It is C++23; g++ >= 12 and
// clang >= 14 accept it in C++20 with a warning that RELAXVM_IF_CONSTEVAL_BEGIN/END (around the
// function) silence. Other compilers get the std::is_constant_evaluated() form.
#if defined(__cpp_if_consteval)
#define RELAXVM_IF_CONSTEVAL if consteval
#define RELAXVM_IF_CONSTEVAL_BEGIN
#define RELAXVM_IF_CONSTEVAL_END
#elif defined(__clang__) && __clang_major__ >= 14
#define RELAXVM_IF_CONSTEVAL if consteval
#define RELAXVM_IF_CONSTEVAL_BEGIN _Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Wc++2b-extensions\"")
#define RELAXVM_IF_CONSTEVAL_END _Pragma("clang diagnostic pop")
#elif defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define RELAXVM_IF_CONSTEVAL if consteval
#define RELAXVM_IF_CONSTEVAL_BEGIN _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wc++23-extensions\"")
#define RELAXVM_IF_CONSTEVAL_END _Pragma("GCC diagnostic pop")
#else
#define RELAXVM_IF_CONSTEVAL if (std::is_constant_evaluated())
#define RELAXVM_IF_CONSTEVAL_BEGIN
#define RELAXVM_IF_CONSTEVAL_END
#endif

// RELAXVM_ON_ERROR(err): called by the throwing API forms when exceptions are disabled, and by
// result<T>::value() on an error (a const relaxvm::error&); it must not return. Predefine it to
// route errors to your own handler (declare the handler after #include <relaxvm/fwd.hpp>, which
// declares relaxvm::error). The default, defined in base/error.hpp because it names a function
// of the library, prints the error and aborts in hosted builds and traps in freestanding ones.

// Detected, not set: AddressSanitizer (cached objects are poisoned while they wait for reuse).
#if defined(__SANITIZE_ADDRESS__)
#define RELAXVM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RELAXVM_ASAN 1
#endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#define RELAXVM_LIKELY(x) __builtin_expect(!!(x), 1)
#define RELAXVM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RELAXVM_NOINLINE __attribute__((noinline))
#define RELAXVM_ALWAYS_INLINE inline __attribute__((always_inline))
#define RELAXVM_UNREACHABLE() __builtin_unreachable()
/// For lambdas: `[&]() RELAXVM_LAMBDA_INLINE { ... }`.
#define RELAXVM_LAMBDA_INLINE __attribute__((always_inline))
#else
#define RELAXVM_LIKELY(x) (x)
#define RELAXVM_UNLIKELY(x) (x)
#define RELAXVM_NOINLINE
#define RELAXVM_ALWAYS_INLINE inline
#define RELAXVM_UNREACHABLE() ((void)0)
#define RELAXVM_LAMBDA_INLINE
#endif

/// For the builtins' argument checks: inlined in hosted builds (speed), left to the compiler in
/// firmware mode (RELAXVM_HEAP=0), where code size counts.
#if RELAXVM_HEAP
#define RELAXVM_HOT_INLINE RELAXVM_ALWAYS_INLINE
#else
#define RELAXVM_HOT_INLINE inline
#endif

#define RELAXVM_DETAIL_CONCAT_IMPL(a, b) a##b
#define RELAXVM_DETAIL_CONCAT(a, b) RELAXVM_DETAIL_CONCAT_IMPL(a, b)

// The ABI namespace: every declaration of the library is in relaxvm::RELAXVM_ABI, an inline
// namespace (so it is spelled relaxvm::x all the same). Its name says the version and each
// setting that differs from the default: relaxvm::v0_1 by default, relaxvm::v0_1_noheap_nothreads_
// terse_text256 for the smallest firmware. A function of yours that takes relaxvm types and is
// defined in a translation unit built with other settings than its caller's then fails to link
// ("undefined reference"), instead of the two silently disagreeing on the types' layouts
// (tests/abi). RELAXVM_USE_EXCEPTIONS is not part of it: layouts do not depend on it, and libraries
// built with and without exceptions are linked together routinely.
#if RELAXVM_HEAP
#define RELAXVM_DETAIL_ABI_HEAP
#else
#define RELAXVM_DETAIL_ABI_HEAP _noheap
#endif
#if RELAXVM_THREADS
#define RELAXVM_DETAIL_ABI_THREADS
#else
#define RELAXVM_DETAIL_ABI_THREADS _nothreads
#endif
#if RELAXVM_HOSTED
#define RELAXVM_DETAIL_ABI_HOSTED
#else
#define RELAXVM_DETAIL_ABI_HOSTED _freestanding
#endif
#if RELAXVM_ERROR_TEXT
#define RELAXVM_DETAIL_ABI_TEXT
#else
#define RELAXVM_DETAIL_ABI_TEXT _terse
#endif
#if RELAXVM_ATOMIC_REFCOUNT
#define RELAXVM_DETAIL_ABI_REFCOUNT _atomicrc
#else
#define RELAXVM_DETAIL_ABI_REFCOUNT
#endif
#if RELAXVM_OBJECT_CACHE == (RELAXVM_HOSTED && RELAXVM_HEAP)
#define RELAXVM_DETAIL_ABI_CACHE
#elif RELAXVM_OBJECT_CACHE
#define RELAXVM_DETAIL_ABI_CACHE _cache
#else
#define RELAXVM_DETAIL_ABI_CACHE _nocache
#endif
// The text capacity matters only without a heap (texts live in their objects there).
#if RELAXVM_HEAP
#define RELAXVM_DETAIL_ABI_CAPACITY
#else
#define RELAXVM_DETAIL_ABI_CAPACITY RELAXVM_DETAIL_CONCAT(_text, RELAXVM_TEXT_CAPACITY)
#endif
#define RELAXVM_DETAIL_ABI_JOIN(v, a, b, c, d, e, f, g) v##a##b##c##d##e##f##g
#define RELAXVM_DETAIL_ABI_NAME(v, a, b, c, d, e, f, g) RELAXVM_DETAIL_ABI_JOIN(v, a, b, c, d, e, f, g)
#define RELAXVM_ABI_NAME                                                                                   \
  RELAXVM_DETAIL_ABI_NAME(RELAXVM_DETAIL_CONCAT(v, RELAXVM_DETAIL_CONCAT(RELAXVM_VERSION_MAJOR,                \
                                                                         RELAXVM_DETAIL_CONCAT(_, RELAXVM_VERSION_MINOR))), \
                          RELAXVM_DETAIL_ABI_HEAP, RELAXVM_DETAIL_ABI_THREADS, RELAXVM_DETAIL_ABI_HOSTED,         \
                          RELAXVM_DETAIL_ABI_TEXT, RELAXVM_DETAIL_ABI_REFCOUNT, RELAXVM_DETAIL_ABI_CACHE,         \
                          RELAXVM_DETAIL_ABI_CAPACITY)
/// How a header opens the library's namespace: `namespace relaxvm::RELAXVM_ABI { ... }`.
#define RELAXVM_ABI inline RELAXVM_ABI_NAME

#endif  // RELAXVM_BASE_CONFIG_HPP
