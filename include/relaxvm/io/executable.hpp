// SPDX-License-Identifier: Apache-2.0
// executable: an immutable, verified program. Copies share one layout, so an executable is cheap
// to pass around and safe to share between threads and VMs.
#ifndef RELAXVM_IO_EXECUTABLE_HPP
#define RELAXVM_IO_EXECUTABLE_HPP

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/error.hpp"
#include "../bytecode/builder.hpp"
#include "../bytecode/layout.hpp"
#include "../bytecode/static_executable.hpp"
#include "../bytecode/verify.hpp"
#include "binary.hpp"
#include "text.hpp"

#if RELAXVM_HOSTED
#include <cstdio>
#endif

namespace relaxvm {

class executable {
 public:
  /// An executable with no functions.
  executable() : data_(std::make_shared<const storage>()) {}

  /// What exec_builder::get() makes. `out` must be ok().
  explicit executable(build_output out) : data_(make(std::move(out.layout), out.report)) {}

  /// A compile-time executable (already verified), copied into vectors.
  template <layout_sizes S>
  executable(const static_executable<S>& s)  // NOLINT: implicit, so a VM takes either kind
      : data_(make(to_layout(s.view()), verify(s.view()))) {}

  /// Verifies `layout` and wraps it.
  static result<executable> from_layout(exec_layout layout) {
    verify_report report = verify(layout.view());
    if (!report.ok())
      return detail::value_error("invalid executable: ", report.message);
    return executable(make(std::move(layout), report));
  }

  /// Reads bytes written by save(); every malformed, truncated or hostile input is an error
  /// (kind value) that names what is wrong.
  static result<executable> try_load(std::span<const std::byte> bytes) {
    RELAXVM_TRY_ASSIGN(exec_layout layout, binary::read(bytes));
    return from_layout(std::move(layout));
  }
  /// Throwing form of try_load().
  static executable load(std::span<const std::byte> bytes) { return try_load(bytes).value(); }

  /// The format of docs/format.md; load(save()) gives back the same executable.
  std::vector<std::byte> save() const { return binary::save(view()); }

#if RELAXVM_HOSTED
  /// Writes save() to a file.
  status try_save_file(const char* path) const {
    std::vector<std::byte> bytes = save();
    std::FILE* f = std::fopen(path, "wb");
    if (!f) return detail::runtime_error("save_file: cannot open '", path, "' for writing");
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed) return detail::runtime_error("save_file: cannot write '", path, "'");
    return {};
  }
  void save_file(const char* path) const { try_save_file(path).value(); }

  /// Reads a file written by save_file() (or save()).
  static result<executable> try_load_file(const char* path) {
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
  static executable load_file(const char* path) { return try_load_file(path).value(); }
#endif

  /// The reference's text dump.
  std::string as_text() const { return relaxvm::as_text(view()); }
  /// The reference's statistics: constant pool and function table.
  std::string stats() const { return relaxvm::stats(view()); }
  /// Builder code that rebuilds this executable (see relaxvm::as_cpp).
  std::string as_cpp() const { return relaxvm::as_cpp(view()); }

  /// What the verifier found worth saying but not wrong: inputs never read, code never run.
  std::span<const std::string> warnings() const { return data_->warnings; }

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
  struct storage {
    exec_layout layout;
    std::vector<std::string> warnings;
  };

  static std::shared_ptr<const storage> make(exec_layout layout, const verify_report& report) {
    auto s = std::make_shared<storage>();
    s->layout = std::move(layout);
    for (const verify_warning& w : report.warnings) {
      detail::text t;
      append_warning(t, s->layout.view(), w);
      s->warnings.emplace_back(t.view());
    }
    return s;
  }
  explicit executable(std::shared_ptr<const storage> d) : data_(std::move(d)) {}

  std::shared_ptr<const storage> data_;
};

}  // namespace relaxvm

#endif  // RELAXVM_IO_EXECUTABLE_HPP
