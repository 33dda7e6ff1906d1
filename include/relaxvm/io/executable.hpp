// SPDX-License-Identifier: Apache-2.0
// executable: an immutable, verified program. Copies share one layout, so an executable is cheap
// to pass around and safe to share between threads and VMs.
#ifndef RELAXVM_IO_EXECUTABLE_HPP
#define RELAXVM_IO_EXECUTABLE_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../bytecode/builder.hpp"
#include "../bytecode/facts.hpp"
#include "../bytecode/layout.hpp"
#include "../bytecode/static_executable.hpp"
#include "../bytecode/verify.hpp"
#include "binary_reader.hpp"
#include "binary_writer.hpp"
#include "text.hpp"

#if RELAXVM_HOSTED
#include <cstdio>
#endif

namespace relaxvm::RELAXVM_ABI {

/// Use it as `executable`. A class template (of a parameter nobody sets), like the VM, so that a
/// translation unit which includes relaxvm.hpp but uses no executable does not compile its body.
template <class Unused = void>
class basic_executable {
  using executable = basic_executable;  // inside, the name users know

 public:
  /// An executable with no functions.
  basic_executable() : data_(std::make_shared<const storage>()) {}
  // An executable is an immutable value: moving one copies the handle, so a moved-from
  // executable is still the same, usable program (and never a null one).
  basic_executable(const basic_executable&) = default;
  executable& operator=(const executable&) = default;
  ~basic_executable() = default;

  /// A compile-time executable, copied into vectors. build() verified it; its pools are public,
  /// so one whose pools no longer match the digest build() recorded (modified since) is verified
  /// again, and fails as a loaded one would: relaxvm::error (or RELAXVM_ON_ERROR without
  /// exceptions). A program with warnings is verified again too, for their text. from_static()
  /// is the non-throwing form.
  template <layout_sizes S>
  basic_executable(const static_executable<S>& s)  // NOLINT: implicit, so a VM takes either kind
      : basic_executable(from_static(s).value()) {}
  template <layout_sizes S>
  static result<executable> from_static(const static_executable<S>& s) {
    if (s.num_warnings == 0 && s.digest == layout_digest(s.view()))
      return executable(make(to_layout(s.view()), {}));  // as build() verified it
    return from_layout(to_layout(s.view()));
  }

  /// Verifies `layout` and wraps it.
  static result<executable> from_layout(exec_layout layout);

  /// Reads bytes written by save(); every malformed, truncated or hostile input is an error
  /// (kind value) that names what is wrong.
  static result<executable> try_load(std::span<const std::byte> bytes);
  /// Throwing form of try_load().
  static executable load(std::span<const std::byte> bytes) { return try_load(bytes).value(); }

  /// The format of docs/format.md; load(save()) gives back the same executable.
  std::vector<std::byte> save() const;

#if RELAXVM_HOSTED
  /// Writes save() to a file.
  status try_save_file(const char* path) const;
  void save_file(const char* path) const { try_save_file(path).value(); }

  /// Reads a file written by save_file() (or save()).
  static result<executable> try_load_file(const char* path);
  static executable load_file(const char* path) { return try_load_file(path).value(); }
#endif

  /// The reference's text dump.
  std::string as_text() const;
  /// The reference's statistics: constant pool and function table.
  std::string stats(constant_style style = constant_style::reference) const;
  /// Builder code that rebuilds this executable (see relaxvm::as_cpp).
  std::string as_cpp() const;

  /// What the verifier found worth saying but not wrong: inputs never read, code never run.
  std::span<const std::string> warnings() const { return data_->warnings; }
  /// What the program says of each function (frame slots, first use, ...), indexed like the
  /// function table: learned once, when the executable was made.
  std::span<const function_facts> facts() const { return {data_->facts.get(), data_->layout.funcs.size()}; }

  /// The layout. Its tensor data lies in a buffer aligned to tensor_data_alignment, so every
  /// tensor constant starts on a 64-byte boundary.
  exec_view view() const { return data_->layout.view(); }
  bool has_function(std::string_view name) const { return view().find(name) >= 0; }
  /// Index of function `name` in the function table, or -1.
  std::int64_t function_index(std::string_view name) const { return view().find(name); }

  /// Keeps the layout alive, e.g. under tensors that view constant data without copying it.
  std::shared_ptr<const void> keep_alive() const { return data_; }

  /// Same functions, constants and code.
  friend bool operator==(const executable& a, const executable& b) {
    return a.data_ == b.data_ || a.save() == b.save();
  }

 private:
  template <class> friend class basic_exec_builder;  // get() wraps what finish() verified
  explicit basic_executable(build_output out);

  struct storage {
    exec_layout layout;  // its tensor data is aligned (exec_layout::bytes): kept as it is, not copied
    std::unique_ptr<function_facts[]> facts;  // one per function
    std::vector<std::string> warnings;
  };

  static std::shared_ptr<const storage> make(exec_layout layout, const verify_report& report);
  explicit basic_executable(std::shared_ptr<const storage> d) : data_(std::move(d)) {}

  std::shared_ptr<const storage> data_;
};
/// An immutable, verified program (see basic_executable).

// Defined outside the class: in separate compilation the library's explicit instantiation holds
// them (and the verifier, the reader and the writer they call).
template <class Unused>
result<basic_executable<Unused>> basic_executable<Unused>::from_layout(exec_layout layout) {
  verify_report report = verify(layout.view());
  if (!report.ok())
    return detail::value_error("invalid executable: ", report.message);
  return executable(make(std::move(layout), report));
}

template <class Unused>
result<basic_executable<Unused>> basic_executable<Unused>::try_load(std::span<const std::byte> bytes) {
  RELAXVM_TRY_ASSIGN(exec_layout layout, binary::read(bytes));
  return from_layout(std::move(layout));
}

template <class Unused>
std::vector<std::byte> basic_executable<Unused>::save() const {
  return binary::save(view());
}

#if RELAXVM_HOSTED
template <class Unused>
status basic_executable<Unused>::try_save_file(const char* path) const {
  std::vector<std::byte> bytes = save();
  std::FILE* f = std::fopen(path, "wb");
  if (!f) return detail::runtime_error("save_file: cannot open '", path, "' for writing");
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) return detail::runtime_error("save_file: cannot write '", path, "'");
  return {};
}

template <class Unused>
result<basic_executable<Unused>> basic_executable<Unused>::try_load_file(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) return detail::runtime_error("load_file: cannot open '", path, "'");
  std::vector<std::byte> bytes;
  std::byte buf[1 << 14];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return detail::runtime_error("load_file: cannot read '", path, "'");
  return try_load(bytes);
}
#endif

template <class Unused>
std::string basic_executable<Unused>::as_text() const {
  return relaxvm::as_text(view());
}

template <class Unused>
std::string basic_executable<Unused>::stats(constant_style style) const {
  return relaxvm::stats(view(), style);
}

template <class Unused>
std::string basic_executable<Unused>::as_cpp() const {
  return relaxvm::as_cpp(view());
}

template <class Unused>
basic_executable<Unused>::basic_executable(build_output out) : data_(make(std::move(out.layout), out.report)) {}

template <class Unused>
auto basic_executable<Unused>::make(exec_layout layout, const verify_report& report) -> std::shared_ptr<const storage> {
  auto s = std::make_shared<storage>();
  s->layout = std::move(layout);
  const std::size_t num_funcs = s->layout.funcs.size();
  s->facts.reset(new function_facts[num_funcs]);
  collect_facts(s->layout.view(), {s->facts.get(), num_funcs}, {});
  for (const verify_warning& w : report.warnings) {
    detail::text t;
    append_warning(t, s->layout.view(), w);
    s->warnings.emplace_back(t.view());
  }
  if (report.warnings_dropped > 0) {
    detail::text t;
    t << "... and " << report.warnings_dropped << " more warnings";
    s->warnings.emplace_back(t.view());
  }
  return s;
}

using executable = basic_executable<>;
RELAXVM_EXTERN_TEMPLATE(class basic_executable<void>)

}  // namespace relaxvm

#endif  // RELAXVM_IO_EXECUTABLE_HPP
