// SPDX-License-Identifier: Apache-2.0
// Kernel libraries: your kernels in a shared library that a program built elsewhere loads at run
// time (the command-line tool's `relaxvm run --kernels libmine.so`, or your own host through
// load_kernels below, where dlopen is). Hosted builds only. docs/cli.md has a walk-through.
//
// The library, in one .cpp built as a shared library (-shared -fPIC) with the same relaxvm
// configuration as the host (docs/configuration.md):
//
//   #include <relaxvm/plugin.hpp>
//   RELAXVM_PLUGIN(reg) {                       // reg: relaxvm::basic_registry&
//     reg.def("mine.scale", [](const relaxvm::tensor& x, double k) -> relaxvm::result<relaxvm::tensor> { ... });
//     return {};                                // a relaxvm::status: an error refuses the library
//   }
//
// RELAXVM_PLUGIN defines two exported C functions, the library's whole interface:
//   const char* relaxvm_plugin_abi_tag(void);   the relaxvm ABI it was built for ("v0_1", ...)
//   int relaxvm_plugin_register(relaxvm::basic_registry* reg, const char* host_abi_tag,
//                               char* message, size_t capacity);
//       registers the kernels; 0 on success, else 1 with the reason in message (NUL-terminated).
// The host reads the tag first and refuses a library built for another ABI (other settings of the
// ABI macros, or another relaxvm version), naming both tags, before it passes any relaxvm object
// across; the registration checks the host's tag again.
#ifndef RELAXVM_PLUGIN_HPP
#define RELAXVM_PLUGIN_HPP

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

#include "base/config.hpp"
#if !RELAXVM_HOSTED || !RELAXVM_HEAP
#error "relaxvm/plugin.hpp needs a hosted build with a heap"
#endif
#include "base/error.hpp"
#include "runtime/registry.hpp"

// dlopen: POSIX systems. Elsewhere the macro below still defines a library's functions.
#if defined(__has_include)
#if __has_include(<dlfcn.h>)
#include <dlfcn.h>
#define RELAXVM_HAS_DLOPEN 1
#endif
#endif
#ifndef RELAXVM_HAS_DLOPEN
#define RELAXVM_HAS_DLOPEN 0
#endif

#define RELAXVM_DETAIL_STRINGIFY_IMPL(x) #x
#define RELAXVM_DETAIL_STRINGIFY(x) RELAXVM_DETAIL_STRINGIFY_IMPL(x)
/// The name of this translation unit's ABI namespace as a string: "v0_1" with the defaults.
#define RELAXVM_ABI_TAG RELAXVM_DETAIL_STRINGIFY(RELAXVM_ABI_NAME)

#if defined(_WIN32)
#define RELAXVM_PLUGIN_EXPORT __declspec(dllexport)
#else
#define RELAXVM_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

namespace relaxvm::RELAXVM_ABI {

/// This program's ABI tag (RELAXVM_ABI_TAG): what a kernel library must have been built for.
inline constexpr std::string_view abi_tag = RELAXVM_ABI_TAG;

namespace detail {
// Copies `text` into the host's buffer, cut to fit, always NUL-terminated.
inline void plugin_message(std::string_view text, char* out, std::size_t capacity) {
  if (out == nullptr || capacity == 0) return;
  const std::size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
  for (std::size_t i = 0; i < n; ++i) out[i] = text[i];
  out[n] = '\0';
}

// The body of relaxvm_plugin_register: the host's tag checked, the user's function called, its
// error (or exception: none may cross into a host that may have been built without them) turned
// into the message.
template <class F>
int plugin_register(F f, basic_registry* reg, const char* host_tag, char* message, std::size_t capacity) {
  if (host_tag == nullptr || std::string_view(host_tag) != abi_tag) {
    plugin_message("the library was built for relaxvm ABI '" RELAXVM_ABI_TAG "', the host is '" +
                       std::string(host_tag ? host_tag : "(none)") + "'",
                   message, capacity);
    return 1;
  }
#if RELAXVM_USE_EXCEPTIONS
  try {
#endif
    const status s = f(*reg);
    if (s.ok()) return 0;
    plugin_message(s.error().message(), message, capacity);
    return 1;
#if RELAXVM_USE_EXCEPTIONS
  } catch (const relaxvm::error& e) {
    plugin_message(e.message(), message, capacity);
  } catch (const std::exception& e) {
    plugin_message(e.what(), message, capacity);
  } catch (...) {
    plugin_message("an exception that is not a std::exception", message, capacity);
  }
  return 1;
#endif
}
}  // namespace detail

#if RELAXVM_HAS_DLOPEN
/// Loads the kernel library at `path` and adds its kernels to `reg` (dlopen). The library stays
/// loaded for the rest of the process: the functions it registered point into it. Errors name
/// the path: a file that does not load, a library without RELAXVM_PLUGIN's functions, one built
/// for another ABI (both tags named), a registration that failed (its message; `reg` may then
/// hold some of the library's kernels). A path without a '/' is a file in the current directory,
/// not a name looked up in the system's library path.
inline status load_kernels(basic_registry& reg, const std::string& path) {
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* lib = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return value_error("kernel library '", path, "' does not load: ", why ? why : "dlopen failed");
  }
  using tag_fn = const char* (*)();
  using register_fn = int (*)(basic_registry*, const char*, char*, std::size_t);
  const auto tag = reinterpret_cast<tag_fn>(::dlsym(lib, "relaxvm_plugin_abi_tag"));
  const auto add = reinterpret_cast<register_fn>(::dlsym(lib, "relaxvm_plugin_register"));
  if (tag == nullptr || add == nullptr) {
    ::dlclose(lib);
    return value_error("kernel library '", path, "' is not a relaxvm kernel library: it exports no ",
                       tag == nullptr ? "relaxvm_plugin_abi_tag" : "relaxvm_plugin_register",
                       " (define the library's registration with RELAXVM_PLUGIN from <relaxvm/plugin.hpp>)");
  }
  const char* theirs = tag();
  if (theirs == nullptr || std::string_view(theirs) != abi_tag) {
    const std::string built_for = theirs ? theirs : "(none)";
    ::dlclose(lib);
    return value_error("kernel library '", path, "' was built for relaxvm ABI '", built_for, "', but this program is '",
                       abi_tag, "': rebuild it with the same relaxvm version and configuration macros (docs/configuration.md)");
  }
  char message[1024] = {};
  if (add(&reg, RELAXVM_ABI_TAG, message, sizeof message) != 0)
    return value_error("kernel library '", path, "': its registration failed: ", message);
  return {};
}
#endif

}  // namespace relaxvm::RELAXVM_ABI

/// Defines a kernel library's exported functions; the braces that follow are the registration's
/// body, with `reg` (a relaxvm::basic_registry&) in scope; it returns a relaxvm::status.
#define RELAXVM_PLUGIN(reg)                                                                             \
  static ::relaxvm::status relaxvm_plugin_register_impl(::relaxvm::basic_registry& reg);              \
  extern "C" RELAXVM_PLUGIN_EXPORT const char* relaxvm_plugin_abi_tag() { return RELAXVM_ABI_TAG; }    \
  extern "C" RELAXVM_PLUGIN_EXPORT int relaxvm_plugin_register(::relaxvm::basic_registry* r, const char* host, \
                                                               char* message, ::std::size_t capacity) {  \
    return ::relaxvm::detail::plugin_register(relaxvm_plugin_register_impl, r, host, message, capacity);  \
  }                                                                                                     \
  static ::relaxvm::status relaxvm_plugin_register_impl(::relaxvm::basic_registry& reg)

#endif  // RELAXVM_PLUGIN_HPP
