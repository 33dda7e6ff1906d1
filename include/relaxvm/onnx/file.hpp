// SPDX-License-Identifier: Apache-2.0
// A file's bytes for onnx::load_file and onnx::load_mapped: mapped read-only where the system has
// mmap (POSIX), so that the pages of each weight can be given back once the importer has copied it
// (a model's weights are then in memory once while it loads, not twice); read into memory elsewhere.
// The command-line tool maps a file without an executable's magic number this way, so that
// telling an ONNX model from other files and then loading it reads the file once.
#ifndef RELAXVM_ONNX_FILE_HPP
#define RELAXVM_ONNX_FILE_HPP

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"

#if __has_include(<sys/mman.h>) && __has_include(<sys/stat.h>) && __has_include(<fcntl.h>) && __has_include(<unistd.h>)
#define RELAXVM_DETAIL_ONNX_MMAP 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#else
#define RELAXVM_DETAIL_ONNX_MMAP 0
#endif

namespace relaxvm::RELAXVM_ABI::onnx {

/// A whole file's bytes, read-only, for as long as this lives.
class mapped_file {
 public:
  mapped_file() = default;
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;
  mapped_file(mapped_file&& o) noexcept { *this = std::move(o); }
  mapped_file& operator=(mapped_file&& o) noexcept {
    if (this != &o) {
      unmap();
      map_ = std::exchange(o.map_, nullptr);
      size_ = std::exchange(o.size_, 0);
      read_ = std::move(o.read_);
    }
    return *this;
  }
  ~mapped_file() { unmap(); }

  /// Opens `path`, a regular file. While it is mapped the file must not shrink: reading a page
  /// past a new end is SIGBUS, as with every mapped file (replace a model by renaming a new file
  /// over it, which keeps the old one whole, not by writing into it). An error's message starts
  /// with `who` and ": " ("onnx: cannot open 'm.onnx': ..."), or with nothing when `who` is empty.
  static result<mapped_file> open(const std::string& path, std::string_view who = "onnx") {
    const std::string_view sep = who.empty() ? "" : ": ";
    mapped_file f;
#if RELAXVM_DETAIL_ONNX_MMAP
    // A FIFO would block open() until a writer came: look first, and never wait (O_NONBLOCK).
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return runtime_error(who, sep, "cannot open '", path, "': ", std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return runtime_error(who, sep, "'", path, "' is not a regular file");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return runtime_error(who, sep, "cannot open '", path, "': ", std::strerror(errno));
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced since
      ::close(fd);
      return runtime_error(who, sep, "'", path, "' is not a regular file");
    }
    f.size_ = static_cast<std::size_t>(st.st_size);
    if (f.size_ > 0) {
      void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        return runtime_error(who, sep, "cannot map '", path, "' (", f.size_, " bytes): ", std::strerror(err));
      }
      f.map_ = static_cast<const std::byte*>(p);
    }
    ::close(fd);  // the mapping keeps the file
#else
    std::FILE* in = std::fopen(path.c_str(), "rb");
    if (in == nullptr) return runtime_error(who, sep, "cannot open '", path, "'");
    std::byte buf[1 << 16];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;) f.read_.insert(f.read_.end(), buf, buf + n);
    const bool bad = std::ferror(in) != 0;
    std::fclose(in);
    if (bad) return runtime_error(who, sep, "cannot read '", path, "'");
    f.size_ = f.read_.size();
#endif
    return f;
  }

  std::span<const std::byte> bytes() const { return {map_ != nullptr ? map_ : read_.data(), size_}; }

  /// The pages wholly inside `part` (a range of bytes()) are not needed again soon: their memory
  /// goes back to the system. Reading them later reads the file again (the mapping is private and
  /// never written), so this changes what is resident, never what is read.
  void release(std::span<const std::byte> part) const {
#if RELAXVM_DETAIL_ONNX_MMAP
    if (map_ == nullptr || part.empty()) return;
    const long page_size = ::sysconf(_SC_PAGESIZE);
    if (page_size <= 0) return;
    const auto page = static_cast<std::uintptr_t>(page_size);
    const auto begin = reinterpret_cast<std::uintptr_t>(part.data()), end = begin + part.size();
    const std::uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
    if (first < last) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
#else
    (void)part;
#endif
  }

 private:
  void unmap() {
#if RELAXVM_DETAIL_ONNX_MMAP
    if (map_ != nullptr) ::munmap(const_cast<std::byte*>(map_), size_);
#endif
    map_ = nullptr;
    size_ = 0;
  }

  const std::byte* map_ = nullptr;
  std::size_t size_ = 0;
  std::vector<std::byte> read_;  // without mmap
};

}  // namespace relaxvm::onnx

#endif  // RELAXVM_ONNX_FILE_HPP
