// SPDX-License-Identifier: Apache-2.0
// relaxvm: inspect, verify, run, time and convert executables from the command line.
//
//   relaxvm info FILE                  format, size, functions, constants, warnings
//   relaxvm text FILE | cpp FILE       the text form / builder code that rebuilds it
//   relaxvm verify FILE [--strict]     exit 0 when it loads and verifies (warnings printed)
//   relaxvm run FILE [-f main] [INPUT...] [-o OUT.npy...] [--kernels LIB.so...]
//   relaxvm time FILE [-f main] [INPUT...] [--runs N] [--warmup N] [--profile [--format F]] [--kernels LIB.so...]
//   relaxvm graph run GRAPH.json [--params FILE] [NAME=INPUT...] [-o OUT.npy...] [--profile] [--kernels LIB.so...]
//   relaxvm convert IN OUT [--to relaxvm|tvm-relax] [--params FILE]
//   relaxvm embed A.npy [B.npy...] -o weights.hpp [--namespace NS]
//
// FILE is a relaxvm executable, or an executable TVM v0.19.0 wrote (Relax .rxe, Relay .ro with
// --params for its late-bound constants); the format is told from the bytes. Exit status: 0 ok,
// 1 an error (the message on stderr), 2 bad usage.
//
// --kernels LIB.so loads a kernel library (include/relaxvm/plugin.hpp, docs/cli.md) and adds its
// kernels to the builtins and the ops kernels; embed writes .npy files as a C++ header of
// constexpr arrays (cli/embed.hpp).
//
// Every file and program may be hostile, so each cost has a finite default limit: --max-file-size
// (every command; 256 MiB) for each file read, and --max-instructions (10 million per invocation)
// and --max-memory (2 GiB) for run and time.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <relaxvm.hpp>
#include <relaxvm/graph.hpp>
#include <relaxvm/onnx.hpp>
#include <relaxvm/profiler.hpp>
#include <relaxvm/tvm.hpp>

#include <relaxvm/io/npy.hpp>
#include <relaxvm/plugin.hpp>

#if RELAXVM_DETAIL_ONNX_MMAP  // onnx/file.hpp: this system maps files
#include <signal.h>
#include <unistd.h>
#endif

#include "cpp.hpp"
#include "embed.hpp"

namespace rv = relaxvm;

namespace {

struct failure {
  std::string message;
};

[[noreturn]] void fail(std::string message) { throw failure{std::move(message)}; }

template <class T>
T check(rv::result<T> r, std::string_view what = {}) {
  if (!r.ok()) fail((what.empty() ? std::string() : std::string(what) + ": ") + std::string(r.error().message()));
  return std::move(r).value();
}
void check(rv::status s, std::string_view what = {}) {
  if (!s.ok()) fail((what.empty() ? std::string() : std::string(what) + ": ") + std::string(s.error().message()));
}

// What the command line lets a file or a program cost.
struct limits {
  std::uint64_t max_file_size = 0;    // bytes of any file read
  std::int64_t max_instructions = 0;  // per invocation; 0: none
  std::uint64_t max_memory = 0;       // bytes a VM may allocate; 0: none
  std::vector<std::string> upper_bounds;  // an ONNX model's named dims: NAME=N
  std::vector<std::string> kernel_libraries;  // --kernels: shared libraries with more kernels
};

[[noreturn]] void too_large(const std::string& path, std::uint64_t limit) {
  fail("'" + path + "' is larger than --max-file-size (" + std::to_string(limit) + " bytes); raise it to read the file");
}

// The whole file, refused past `limit` bytes: what a file holds is what is allocated for it, and
// /dev/zero or a pipe has no size to check first, so the reading stops one byte past the limit.
std::vector<std::byte> read_file(const std::string& path, std::uint64_t limit) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("'" + path + "' is a directory, not a file");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '" + path + "'" + (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  constexpr std::uint64_t chunk = std::uint64_t{1} << 20;
  std::vector<std::byte> out;
  if (std::filesystem::is_regular_file(path, ec)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > limit) too_large(path, limit);
    // Room for the last read, which finds the end: growing past a reservation of exactly the
    // size would copy the whole file into a block twice its size (2x the file, resident).
    if (!ec) out.reserve(static_cast<std::size_t>(size) + chunk);
  }
  for (;;) {
    const std::size_t have = out.size();
    const std::uint64_t left = limit - have;  // the file so far is within the limit
    const auto want = static_cast<std::size_t>(left < chunk ? left + 1 : chunk);
    out.resize(have + want);
    in.read(reinterpret_cast<char*>(out.data() + have), static_cast<std::streamsize>(want));
    out.resize(have + static_cast<std::size_t>(in.gcount()));
    if (out.size() > limit) too_large(path, limit);
    if (!in) break;
  }
  if (in.bad()) fail("cannot read '" + path + "'");
  return out;
}

void write_file(const std::string& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("cannot write '" + path + "'");
}

// ---- executables in any format ------------------------------------------------------------

enum class format { relaxvm, tvm_relax, tvm_relay, onnx };

std::string_view format_name(format f) {
  switch (f) {
    case format::relaxvm: return "relaxvm executable";
    case format::tvm_relax: return "TVM Relax VM executable (v0.19.0)";
    case format::tvm_relay: return "TVM Relay VM executable (v0.19.0)";
    case format::onnx: return "ONNX model";
  }
  return "?";
}

std::uint64_t u64_at(std::span<const std::byte> b, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i) v |= std::to_integer<std::uint64_t>(b[at + i]) << (8 * i);
  return v;
}

// The format an executable's first 16 bytes name (relaxvm's and TVM's magic numbers), if any.
std::optional<format> magic_format(std::span<const std::byte> head) {
  if (head.size() >= rv::binary::magic.size() &&
      std::equal(rv::binary::magic.begin(), rv::binary::magic.end(), head.begin(),
                 [](std::uint8_t m, std::byte b) { return std::to_integer<std::uint8_t>(b) == m; }))
    return format::relaxvm;
  if (head.size() >= 8 && u64_at(head, 0) == rv::tvm::vm_bytecode_magic) return format::tvm_relay;
  if (head.size() >= 16 && u64_at(head, 8) == rv::tvm::vm_bytecode_magic) return format::tvm_relax;
  return std::nullopt;
}

format detect(std::span<const std::byte> bytes, const std::string& path) {
  if (const std::optional<format> f = magic_format(bytes)) return *f;
  // ONNX files have no magic number: a ModelProto that reads, with a graph, is one.
  if (const rv::result<rv::onnx::model_info> m = rv::onnx::parse_model(bytes); m.ok()) return format::onnx;
  fail("'" + path + "' is not a file relaxvm reads (neither relaxvm's magic bytes, nor TVM's VM bytecode magic, nor an ONNX model)");
}

// A program file the tool loads, its bytes read once however often they are looked at (its
// format told from them, then loaded; `info` on an ONNX model also parses them for the listing).
// An executable (relaxvm's or TVM's magic number in its first 16 bytes) is read into memory. Any
// other regular file with a size, an ONNX model or nothing the tool reads, is mapped, as
// onnx::load_file maps it: a model's weights then give their pages back as they are copied into
// the program (onnx::load_mapped). Anything else (a pipe, /dev/stdin, /dev/zero, a /proc file
// that says it is empty, a file system that cannot map) is read, up to the limit.
struct input_file {
  std::string path;
  rv::onnx::mapped_file mapped;
  std::vector<std::byte> read;  // when not mapped
  bool is_mapped = false;
  std::span<const std::byte> bytes() const { return is_mapped ? mapped.bytes() : std::span<const std::byte>(read); }
};

#if RELAXVM_DETAIL_ONNX_MMAP
// A mapped file that shrinks while it is read raises SIGBUS where a page past its new end is
// touched: the tool then says so and exits with 1, as for any unreadable file, instead of dying.
// The message is made before the mapping, so the handler only writes it (async-signal-safe).
std::string bus_message;
extern "C" void on_sigbus(int) {
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, bus_message.data(), bus_message.size());
  ::_exit(1);
}
void report_shrinking(const std::string& path) {
  bus_message = "relaxvm: error: '" + path + "' shrank while it was read; replace a file the tool may be reading by "
                "renaming a new one over it\n";
  struct sigaction sa {};
  sa.sa_handler = on_sigbus;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, nullptr);
}
#else
void report_shrinking(const std::string&) {}
#endif

input_file open_input(const std::string& path, std::uint64_t limit) {
  input_file in{path, {}, {}, false};
  std::error_code ec;
  const bool regular = std::filesystem::is_regular_file(path, ec);
  const std::uintmax_t size = regular ? std::filesystem::file_size(path, ec) : 0;
  if (regular && !ec && size > limit) too_large(path, limit);
  if (regular && !ec && size > 0) {
    std::array<std::byte, 16> head{};
    std::ifstream f(path, std::ios::binary);  // one that cannot be opened reads nothing: read_file says why
    f.read(reinterpret_cast<char*>(head.data()), head.size());
    const auto got = static_cast<std::size_t>(f.gcount());
    if (got > 0 && !magic_format(std::span<const std::byte>(head.data(), got))) {
      report_shrinking(path);
      if (rv::result<rv::onnx::mapped_file> m = rv::onnx::mapped_file::open(path, ""); m.ok()) {
        in.mapped = std::move(*m);
        if (in.mapped.bytes().size() > limit) too_large(path, limit);  // it grew since
        in.is_mapped = true;
        return in;
      }
    }
  }
  in.read = read_file(path, limit);
  return in;
}

struct loaded {
  rv::executable exe;
  format kind;
  std::size_t bytes;
  std::optional<rv::ir::module> ir;  // an ONNX model's imported program
};

// --upper-bound NAME=N, for an ONNX model's named dimensions.
rv::onnx::options onnx_options(const limits& lim) {
  rv::onnx::options opt;
  for (const std::string& b : lim.upper_bounds) {
    const std::size_t eq = b.find('=');
    std::int64_t n = -1;
    const char* end = b.data() + b.size();
    if (eq == std::string::npos || eq == 0 || std::from_chars(b.data() + eq + 1, end, n).ptr != end || n < 0)
      fail("--upper-bound '" + b + "' must be NAME=N with N a non-negative integer");
    opt.upper_bounds.emplace_back(b.substr(0, eq), n);
  }
  return opt;
}

// keep_ir: also keep an ONNX model's imported program (`text` prints it).
loaded load(const input_file& in, const std::string& params_path, const limits& lim, bool keep_ir = false) {
  const std::string& path = in.path;
  const std::span<const std::byte> bytes = in.bytes();
  const format f = detect(bytes, path);
  if (!params_path.empty() && f != format::tvm_relay)
    fail("--params is for TVM Relay executables; '" + path + "' is a " + std::string(format_name(f)));
  if (!lim.upper_bounds.empty() && f != format::onnx)
    fail("--upper-bound is for ONNX models; '" + path + "' is a " + std::string(format_name(f)));
  switch (f) {
    case format::onnx: {
      if (!keep_ir) {
        const rv::onnx::options o = onnx_options(lim);
        return {check(in.is_mapped ? rv::onnx::load_mapped(in.mapped, o) : rv::onnx::load(bytes, o), path), f, bytes.size(), {}};
      }
      rv::ir::module m = check(rv::onnx::import(bytes, onnx_options(lim)), path);
      rv::executable exe = check(rv::ir::try_build(m, rv::onnx::plan), path);  // copies the weights: `m` is kept
      return {std::move(exe), f, bytes.size(), std::move(m)};
    }
    case format::relaxvm: return {check(rv::executable::try_load(bytes), path), f, bytes.size(), {}};
    case format::tvm_relax: return {check(rv::tvm::load_relax(bytes), path), f, bytes.size(), {}};
    case format::tvm_relay: {
      if (params_path.empty()) return {check(rv::tvm::load_relay(bytes), path), f, bytes.size(), {}};
      const std::vector<std::byte> params = read_file(params_path, lim.max_file_size);
      return {check(rv::tvm::load_relay(bytes, params), path), f, bytes.size(), {}};
    }
  }
  fail("unreachable");
}
loaded load(const std::string& path, const std::string& params_path, const limits& lim, bool keep_ir = false) {
  return load(open_input(path, lim.max_file_size), params_path, lim, keep_ir);
}

// ---- inputs ---------------------------------------------------------------------------------

rv::dtype parse_dtype(std::string_view s) {
  static constexpr std::pair<std::string_view, rv::dtype> known[] = {
      {"float16", rv::dtype::float16()}, {"float32", rv::dtype::float32()}, {"float64", rv::dtype::float64()},
      {"int8", rv::dtype::int8()},       {"int16", rv::dtype::int16()},     {"int32", rv::dtype::int32()},
      {"int64", rv::dtype::int64()},     {"uint8", rv::dtype::uint8()},     {"uint16", rv::dtype::uint16()},
      {"uint32", rv::dtype::uint32()},   {"uint64", rv::dtype::uint64()},   {"bool", rv::dtype::bool_()}};
  for (const auto& [name, t] : known)
    if (name == s) return t;
  fail("unknown dtype '" + std::string(s) + "' (float16/32/64, int8-64, uint8-64, bool)");
}

bool parse_int(std::string_view s, std::int64_t& out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, out);
  return r.ec == std::errc() && r.ptr == end;
}
bool parse_double(std::string_view s, double& out) {
  if (s.empty()) return false;
  std::string copy(s);
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size();
}
// A number that became infinite without saying "inf": past the range of the type it was read as
// (strtod gives HUGE_VAL for 1e400; a float gives inf for 1e39).
bool overflowed(std::string_view text, double v) { return std::isinf(v) && text.find_first_of("iI") == std::string_view::npos; }
// "-12", "+7": what a person means as an integer, whether or not it fits.
bool looks_integral(std::string_view s) {
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// One element of a tensor literal, parsed in the tensor's own dtype: integers exactly (a double
// holds 53 bits, and casting one out of range is undefined), every value within the dtype's
// range, so what is stored is what was written or an error.
void store_element(std::string_view text, rv::dtype t, unsigned char* at, const std::string& input) {
  const std::string dtype_name = rv::to_string(rv::value(t));
  auto bad = [&](std::string_view why) { fail("input '" + input + "': '" + std::string(text) + "' " + std::string(why)); };
  auto put = [&](auto x) { std::memcpy(at, &x, sizeof x); };
  if (t.is_bool()) {
    if (text == "true" || text == "1") put(std::uint8_t{1});
    else if (text == "false" || text == "0") put(std::uint8_t{0});
    else bad("is not a bool (true, false, 1 or 0)");
    return;
  }
  if (t.lanes == 1 && t.is_float() && (t.bits == 32 || t.bits == 64)) {
    double v = 0;
    if (!parse_double(text, v)) bad("is not a number");
    // Halfway between float's largest value and 2^128, and beyond, round to infinity.
    constexpr double float32_overflow = 0x1.ffffffp127;
    if (overflowed(text, v) || (t.bits == 32 && std::isfinite(v) && std::abs(v) >= float32_overflow))
      bad("is out of " + dtype_name + "'s range");
    if (t.bits == 32) return put(static_cast<float>(v));
    return put(v);
  }
  if (t.lanes == 1 && (t.is_int() || t.is_uint()) && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)) {
    if (!looks_integral(text)) bad("is not an integer (" + dtype_name + " literals are integers)");
    // The dtype's range; uint64's top does not fit int64, so the two signs are parsed apart.
    const int b = t.bits;
    const std::int64_t lo = t.is_uint() ? 0 : b == 64 ? INT64_MIN : -(std::int64_t{1} << (b - 1));
    const std::uint64_t hi = t.is_uint() ? (b == 64 ? UINT64_MAX : (std::uint64_t{1} << b) - 1)
                                         : (std::uint64_t{1} << (b - 1)) - 1;
    const std::string range = "is out of " + dtype_name + "'s range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (text.front() == '+') text.remove_prefix(1);  // from_chars takes no '+'
    const char* end = text.data() + text.size();
    std::uint64_t bits = 0;  // the value in two's complement, stored in its low b bits
    if (text.front() == '-') {
      std::int64_t v = 0;
      const auto r = std::from_chars(text.data(), end, v);
      if (r.ec != std::errc() || v < lo) bad(range);
      bits = static_cast<std::uint64_t>(v);
    } else {
      const auto r = std::from_chars(text.data(), end, bits);
      if (r.ec != std::errc() || bits > hi) bad(range);
    }
    if (b == 8) put(static_cast<std::uint8_t>(bits));
    else if (b == 16) put(static_cast<std::uint16_t>(bits));
    else if (b == 32) put(static_cast<std::uint32_t>(bits));
    else put(bits);
    return;
  }
  fail("input '" + input + "': literals of " + dtype_name + " are not supported; use a .npy file");
}

// A nested list of numbers, "[[1, 2], [3, 4]]", as a tensor of dtype t.
rv::tensor parse_tensor(std::string_view text, rv::dtype t, const std::string& input) {
  std::vector<std::string> elements;
  std::vector<std::int64_t> dims, counts;
  int depth = 0, max_depth = -1, number_depth = -1;
  std::string number;
  auto flush = [&] {
    if (number.empty()) return;
    if (number_depth >= 0 && number_depth != depth) fail("input '" + input + "': ragged nesting");
    number_depth = depth;
    elements.push_back(std::move(number));
    ++counts.back();
    number.clear();
  };
  for (char c : text) {
    if (c == '[') {
      if (!number.empty()) fail("input '" + input + "': a '[' after a number");
      if (depth > 0) ++counts.back();
      ++depth;
      if (static_cast<std::size_t>(depth) > counts.size()) counts.resize(static_cast<std::size_t>(depth), 0);
      counts[static_cast<std::size_t>(depth - 1)] = 0;
      counts.resize(static_cast<std::size_t>(depth));
    } else if (c == ']') {
      flush();
      if (depth == 0) fail("input '" + input + "': unbalanced ']'");
      const std::int64_t n = counts.back();
      const auto level = static_cast<std::size_t>(depth - 1);
      if (dims.size() <= level) dims.resize(level + 1, -1);
      if (dims[level] >= 0 && dims[level] != n) fail("input '" + input + "': rows of different lengths");
      dims[level] = n;
      max_depth = std::max(max_depth, depth);
      counts.pop_back();
      --depth;
    } else if (c == ',' || c == ' ') {
      flush();
    } else {
      if (depth == 0) fail("input '" + input + "': numbers must be inside [ ]");
      number += c;
    }
  }
  if (depth != 0) fail("input '" + input + "': unbalanced '['");
  if (static_cast<int>(dims.size()) != max_depth || (number_depth >= 0 && number_depth != max_depth))
    fail("input '" + input + "': ragged nesting");
  // Nested empty lists give -1 for the levels never reached.
  for (std::int64_t& d : dims) d = std::max<std::int64_t>(d, 0);
  rv::tensor out = check(rv::tensor::try_empty(rv::shape(std::span<const std::int64_t>(dims)), t), "input '" + input + "'");
  if (static_cast<std::int64_t>(elements.size()) != out.numel()) fail("input '" + input + "': ragged nesting");
  auto* p = static_cast<unsigned char*>(out.raw_data());
  const auto size = static_cast<std::size_t>(t.bytes());
  for (std::size_t i = 0; i < elements.size(); ++i) store_element(elements[i], t, p + i * size, input);
  return out;
}

constexpr std::string_view input_help =
    "INPUT: 3 (int64), 2.5 (float64), true/false, \"text\" (a string), shape:2,3 (a shape), "
    "[1, 2] or float32:[[1, 2], [3, 4]] (a tensor; float32 when no dtype is given), a .npy file, or an ONNX TensorProto (.pb)";

rv::value parse_input(const std::string& s, const limits& lim) {
  if (s.size() > 4 && s.ends_with(".npy")) return check(rv::npy::read(read_file(s, lim.max_file_size), s));
  if (s.size() > 3 && s.ends_with(".pb")) return check(rv::onnx::read_tensor(read_file(s, lim.max_file_size)), s);  // an ONNX TensorProto
  std::int64_t i = 0;
  double d = 0;
  if (parse_int(s, i)) return i;
  if (looks_integral(s)) fail("input '" + s + "' is out of int64's range (write it as a float, 1e20, if a float is meant)");
  if (s == "true" || s == "false") return s == "true";
  if (parse_double(s, d)) {
    if (overflowed(s, d)) fail("input '" + s + "' is out of float64's range");
    return d;
  }
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return rv::string(std::string_view(s).substr(1, s.size() - 2));
  if (s.starts_with("shape:")) {
    std::vector<std::int64_t> dims;
    std::string_view rest = std::string_view(s).substr(6);
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      std::int64_t v = 0;
      if (!parse_int(rest.substr(0, comma), v)) fail("input '" + s + "': a shape is shape:D0,D1,... of integers");
      dims.push_back(v);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return rv::shape(std::span<const std::int64_t>(dims));
  }
  if (s.starts_with("[")) return parse_tensor(s, rv::dtype::float32(), s);
  if (const std::size_t colon = s.find(':'); colon != std::string::npos && s.substr(colon + 1).starts_with("["))
    return parse_tensor(std::string_view(s).substr(colon + 1), parse_dtype(std::string_view(s).substr(0, colon)), s);
  fail("input '" + s + "' is not understood. " + std::string(input_help));
}

std::vector<rv::value> parse_inputs(const std::vector<std::string>& inputs, const limits& lim) {
  std::vector<rv::value> out;
  for (const std::string& s : inputs) out.push_back(parse_input(s, lim));
  return out;
}

// ---- outputs --------------------------------------------------------------------------------

// Writes the result's tensors to the .npy paths: a tensor to the first, a tuple's fields in order.
void write_outputs(const rv::value& result, const std::vector<std::string>& paths) {
  if (paths.empty()) return;
  std::vector<rv::tensor> tensors;
  if (result.kind() == rv::value_kind::tensor) {
    tensors.push_back(result.as<rv::tensor>());
  } else if (result.kind() == rv::value_kind::tuple) {
    for (const rv::value& f : result.as<rv::tuple>()) {
      if (f.kind() != rv::value_kind::tensor) fail("-o: the result's fields must be tensors, but one is " + rv::to_string(f));
      tensors.push_back(f.as<rv::tensor>());
    }
  } else {
    fail("-o: the result is " + rv::to_string(result) + ", not a tensor");
  }
  if (paths.size() > tensors.size())
    fail("-o: " + std::to_string(paths.size()) + " files for " + std::to_string(tensors.size()) + " tensors");
  for (std::size_t i = 0; i < paths.size(); ++i) write_file(paths[i], check(rv::npy::write(tensors[i]), paths[i]));
}

// The VM's limits from the command line: a program from a file is untrusted (docs/security.md).
template <class Options>
void set_max_memory(Options& opts, std::uint64_t bytes) {
  // --max-memory is passed as vm_options::max_memory, the cap on what one VM allocates, in VM
  // versions that have it.
  if constexpr (requires { opts.max_memory; }) opts.max_memory = static_cast<decltype(opts.max_memory)>(bytes);
}
rv::vm_options vm_options_of(const limits& lim) {
  rv::vm_options opts;
  opts.max_instructions = lim.max_instructions;
  set_max_memory(opts, lim.max_memory);
  return opts;
}

// The builtins, the ops kernels and those of the --kernels libraries, in order.
rv::registry kernels(const std::vector<std::string>& libraries) {
  rv::registry reg;  // the builtins are there already
  rv::onnx::register_kernels(reg);  // the portable kernels and relaxvm/ops'
  for (const std::string& lib : libraries) check(rv::load_kernels(reg, lib));
  return reg;
}

// ---- commands -------------------------------------------------------------------------------

// An ONNX model's inputs, outputs, named dimensions, operators and planned memory.
void onnx_info(const input_file& in, const limits& lim) {
  const std::string& path = in.path;
  const std::span<const std::byte> bytes = in.bytes();
  const rv::onnx::model_info m = check(rv::onnx::parse_model(bytes), path);
  std::printf("%s: ONNX model, %zu bytes, IR version %lld, producer '%.*s %.*s'\n", path.c_str(), bytes.size(),
              static_cast<long long>(m.ir_version), static_cast<int>(m.producer_name.size()), m.producer_name.data(),
              static_cast<int>(m.producer_version.size()), m.producer_version.data());
  std::printf("opsets:");
  for (const rv::onnx::opset_id& o : m.opset_import)
    std::printf(" %.*s %lld", static_cast<int>(o.domain.empty() ? 7 : o.domain.size()), o.domain.empty() ? "ai.onnx" : o.domain.data(),
                static_cast<long long>(o.version));
  std::printf("\n");
  std::vector<std::string_view> names;
  auto describe = [&](const char* what, const std::vector<rv::onnx::value_info>& list, bool skip_initializers) {
    for (const rv::onnx::value_info& v : list) {
      if (skip_initializers && std::any_of(m.graph.initializers.begin(), m.graph.initializers.end(),
                                           [&](const rv::onnx::tensor_info& t) { return t.name == v.name; }))
        continue;
      std::string dims;
      for (const rv::onnx::dimension& d : v.type.shape) {
        if (!dims.empty()) dims += ", ";
        if (d.known()) dims += std::to_string(d.value);
        else if (!d.param.empty()) {
          dims += std::string(d.param);
          if (std::find(names.begin(), names.end(), d.param) == names.end()) names.push_back(d.param);
        } else dims += "?";
      }
      const std::string_view dt = rv::onnx::data_type_name(v.type.elem_type);
      std::printf("%s %.*s: %.*s [%s]\n", what, static_cast<int>(v.name.size()), v.name.data(), static_cast<int>(dt.size()), dt.data(),
                  dims.c_str());
    }
  };
  describe("input", m.graph.inputs, true);
  describe("output", m.graph.outputs, false);
  std::printf("symbolic dims:");
  for (std::string_view n : names) std::printf(" %.*s", static_cast<int>(n.size()), n.data());
  std::printf(names.empty() ? " none\n" : "\n");
  std::vector<std::pair<std::string_view, int>> ops;
  for (const rv::onnx::node_info& n : m.graph.nodes) {
    auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return o.first == n.op_type; });
    if (it == ops.end()) ops.emplace_back(n.op_type, 1);
    else ++it->second;
  }
  std::printf("%zu nodes, %zu initializers; ops:", m.graph.nodes.size(), m.graph.initializers.size());
  for (const auto& [op, n] : ops) std::printf(" %.*s x%d", static_cast<int>(op.size()), op.data(), n);
  std::printf("\n");
  const rv::ir::module ir = check(rv::onnx::import(m, onnx_options(lim)), path);
  const std::int64_t planned = rv::ir::planned_bytes(ir, "main", rv::onnx::plan);
  if (planned >= 0) std::printf("planned memory: %lld bytes per call (at the upper bounds)\n", static_cast<long long>(planned));
  else std::printf("planned memory: not bounded (give --upper-bound NAME=N for each symbolic dim)\n");
  const rv::executable exe = check(rv::ir::try_build(ir, rv::onnx::plan), path);
  std::printf("%s", exe.stats().c_str());
}

void info(const std::string& path, const std::string& params, const limits& lim) {
  const input_file in = open_input(path, lim.max_file_size);
  if (detect(in.bytes(), path) == format::onnx) {
    if (!params.empty()) fail("--params is for TVM Relay executables; '" + path + "' is an ONNX model");
    onnx_info(in, lim);
    return;
  }
  const loaded l = load(in, params, lim);
  std::printf("%s: %s, %zu bytes\n", path.c_str(), std::string(format_name(l.kind)).c_str(), l.bytes);
  std::printf("%s", l.exe.stats(rv::constant_style::typed).c_str());
  const auto warnings = l.exe.warnings();
  std::printf("verified: yes, %zu warning%s\n", warnings.size(), warnings.size() == 1 ? "" : "s");
  for (const std::string& w : warnings) std::printf("  warning: %s\n", w.c_str());
}

int verify(const std::string& path, const std::string& params, bool strict, const limits& lim) {
  const loaded l = load(path, params, lim);
  for (const std::string& w : l.exe.warnings()) std::fprintf(stderr, "%s: warning: %s\n", path.c_str(), w.c_str());
  const bool bad = strict && !l.exe.warnings().empty();
  std::printf("%s: %s (%s, %zu warning%s)\n", path.c_str(), bad ? "verified, but warnings are errors (--strict)" : "ok",
              std::string(format_name(l.kind)).c_str(), l.exe.warnings().size(), l.exe.warnings().size() == 1 ? "" : "s");
  return bad ? 1 : 0;
}

void run(const std::string& path, const std::string& params, const std::string& function,
         const std::vector<std::string>& inputs, const std::vector<std::string>& outputs, const limits& lim) {
  const loaded l = load(path, params, lim);
  const rv::registry reg = kernels(lim.kernel_libraries);
  rv::virtual_machine vm = check(rv::virtual_machine::create(l.exe, reg, vm_options_of(lim)));
  const std::vector<rv::value> args = parse_inputs(inputs, lim);
  const rv::value y = check(vm.try_invoke(function, args));
  std::printf("%s\n", rv::to_string(y).c_str());
  write_outputs(y, outputs);
}

void time_it(const std::string& path, const std::string& params, const std::string& function,
             const std::vector<std::string>& inputs, int runs, int warmup, bool profile, const std::string& fmt, const limits& lim) {
  if (runs < 1) fail("--runs must be at least 1");
  const loaded l = load(path, params, lim);
  const rv::registry reg = kernels(lim.kernel_libraries);
  rv::virtual_machine vm = check(rv::virtual_machine::create(l.exe, reg, vm_options_of(lim)));
  const std::vector<rv::value> args = parse_inputs(inputs, lim);
  const rv::vm_function f = check(vm.try_function(function));
  for (int i = 0; i < warmup; ++i) check(f.try_call(args));
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    check(f.try_call(args));
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[static_cast<std::size_t>(q * static_cast<double>(us.size() - 1) + 0.5)]; };
  std::printf("%s: median %.3f us, min %.3f, p10 %.3f, p90 %.3f, max %.3f over %d runs (%d warm-up)\n",
              function.c_str(), at(0.5), us.front(), at(0.1), at(0.9), us.back(), runs, warmup);
  if (!profile) return;
  const rv::vm_profile p = check(rv::profile(vm, function, args, static_cast<std::size_t>(runs)), "profile");
  if (fmt == "csv") std::printf("%s", p.csv().c_str());
  else if (fmt == "json") std::printf("%s", p.json().c_str());
  else std::printf("%s", p.table().c_str());
}

void graph_run(const std::string& path, const std::string& params, const std::vector<std::string>& inputs,
               const std::vector<std::string>& outputs, bool profile, const limits& lim) {
  const std::vector<std::byte> json = read_file(path, lim.max_file_size);
  const rv::registry reg = kernels(lim.kernel_libraries);
  rv::graph::executor g = check(rv::graph::executor::create(
      std::string_view(reinterpret_cast<const char*>(json.data()), json.size()), reg), path);
  if (!params.empty()) check(g.load_params(read_file(params, lim.max_file_size)), params);
  for (const std::string& in : inputs) {
    const std::size_t eq = in.find('=');
    if (eq == std::string::npos || eq == 0) fail("graph input '" + in + "' must be NAME=INPUT");
    const rv::value v = parse_input(in.substr(eq + 1), lim);
    if (v.kind() != rv::value_kind::tensor) fail("graph input '" + in + "' must be a tensor");
    check(g.set_input(std::string_view(in).substr(0, eq), v.as<rv::tensor>()), "set_input");
  }
  check(g.run(), "run");
  std::vector<rv::value> results;
  for (std::size_t i = 0; i < g.get_num_outputs(); ++i) {
    const rv::tensor t = check(g.get_output(i));
    results.emplace_back(t);
    std::printf("output %zu: %s\n", i, rv::to_string(rv::value(t)).c_str());
  }
  if (!outputs.empty()) write_outputs(results.size() == 1 ? results[0] : rv::value(rv::tuple(results)), outputs);
  if (profile) std::printf("%s", check(g.profile(10), "profile").table().c_str());
}

void embed(const std::vector<std::string>& files, const std::string& out, const std::string& ns, const limits& lim) {
  std::vector<rv::cli::embedded> tensors;
  for (const std::string& f : files) tensors.push_back({f, check(rv::npy::read(read_file(f, lim.max_file_size), f))});
  const std::string text = check(rv::cli::embed_header(tensors, ns));
  write_file(out, std::as_bytes(std::span<const char>(text)));
  std::printf("%zu tensor%s -> %s (namespace %s)\n", tensors.size(), tensors.size() == 1 ? "" : "s", out.c_str(), ns.c_str());
}

// `relaxvm cpp MODEL.onnx --name NAME -o NAME.hpp`: the model as a header for firmware (cli/cpp.hpp).
void model_cpp(const std::string& path, const std::string& name, const std::string& out, const limits& lim) {
  const std::vector<std::byte> bytes = read_file(path, lim.max_file_size);
  if (detect(bytes, path) != format::onnx) fail("cpp --name takes an ONNX model; '" + path + "' is not one");
  const rv::onnx::model_info m = check(rv::onnx::parse_model(bytes), path);
  const rv::ir::module ir = check(rv::onnx::import(m, onnx_options(lim)), path);
  const std::int64_t planned = rv::ir::planned_bytes(ir, "main", rv::onnx::plan);
  if (planned < 0) fail("'" + path + "': its memory is not bounded: give --upper-bound NAME=N for each symbolic dim");
  const rv::executable exe = check(rv::ir::try_build(ir, rv::onnx::plan), path);
  rv::cli::model_header_spec spec{name, path, planned, {}, {}};
  const auto ports = [&](const std::vector<rv::onnx::value_info>& list, bool skip_initializers, std::vector<rv::cli::model_port>& to) {
    for (const rv::onnx::value_info& v : list) {
      if (skip_initializers && std::any_of(m.graph.initializers.begin(), m.graph.initializers.end(),
                                           [&](const rv::onnx::tensor_info& t) { return t.name == v.name; }))
        continue;
      if (v.type.what != rv::onnx::type_info::kind::tensor || !v.type.has_shape)
        fail("'" + path + "': '" + std::string(v.name) + "' is not a tensor of known rank");
      rv::cli::model_port p{std::string(v.name), check(rv::onnx::to_dtype(v.type.elem_type), path), {}};
      for (const rv::onnx::dimension& d : v.type.shape) p.dims.push_back(d.known() ? d.value : -1);
      to.push_back(std::move(p));
    }
  };
  ports(m.graph.inputs, true, spec.inputs);
  ports(m.graph.outputs, false, spec.outputs);
  const std::string text = check(rv::cli::model_header(exe, spec), path);
  write_file(out, std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size()));
  std::printf("%s -> %s (namespace %s; arena %lld bytes)\n", path.c_str(), out.c_str(), name.c_str(), static_cast<long long>(planned));
}

void convert(const std::string& in, const std::string& out, const std::string& params, const std::string& to,
             const limits& lim) {
  const loaded l = load(in, params, lim);
  std::vector<std::byte> bytes;
  if (to == "relaxvm") bytes = l.exe.save();
  else bytes = check(rv::tvm::save_relax(l.exe), out);
  write_file(out, bytes);
  std::printf("%s (%s) -> %s (%s, %zu bytes)\n", in.c_str(), std::string(format_name(l.kind)).c_str(), out.c_str(),
              to == "relaxvm" ? "relaxvm executable" : "TVM Relax VM executable (v0.19.0)", bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"relaxvm " RELAXVM_VERSION_STRING
               ": inspect, verify, run, time and convert VM executables (relaxvm's, and those TVM v0.19.0 writes)"};
  app.require_subcommand(1);
  std::string file, params, function = "main", fmt = "table", to = "relaxvm", out_file;
  std::vector<std::string> inputs, outputs;
  bool strict = false, profile = false;
  int runs = 100, warmup = 5;
  // Finite by default: the files and programs the tool is given may be hostile (docs/security.md).
  limits lim{.max_file_size = std::uint64_t{256} << 20, .max_instructions = 10'000'000, .max_memory = std::uint64_t{2} << 30,
             .upper_bounds = {}, .kernel_libraries = {}};
  std::vector<std::string> npy_files;
  std::string ns = "weights";

  // CLI11's sizes take "-1" as 2^64 - 1 and a number past 2^64 as some other number, without a
  // word: a limit given so is refused. (A transform, so that it runs before AsSizeValue's: CLI11
  // runs an option's transforms last added first.)
  const CLI::Validator size_in_range(
      [](std::string& s) -> std::string {
        const std::size_t at = s.find_first_not_of(" \t");
        if (at == std::string::npos) return {};
        if (s[at] == '-') return "a size cannot be negative: " + s;
        std::uint64_t n = 0;
        if (std::from_chars(s.data() + at, s.data() + s.size(), n).ec == std::errc::result_out_of_range)
          return "the number in " + s + " is past 2^64 - 1";
        return {};
      },
      "", "SIZE");
  auto add_file_limit = [&](CLI::App* c) {
    c->add_option("--max-file-size", lim.max_file_size, "refuse files larger than this (bytes, or 64MiB, 2GiB, ...)")
        ->transform(CLI::AsSizeValue(false))
        ->transform(size_in_range)
        ->capture_default_str();
  };
  auto add_file = [&](CLI::App* c) {
    c->add_option("FILE", file, "the executable (relaxvm, or TVM Relax .rxe / Relay .ro) or an ONNX model (.onnx)")->required();
    c->add_option("--params", params, "a TVM params file with a Relay executable's late-bound constants");
    c->add_option("--upper-bound", lim.upper_bounds, "NAME=N: an ONNX model's named dimension NAME is at most N (repeatable)");
    add_file_limit(c);
  };
  auto add_kernels = [&](CLI::App* c) {
    c->add_option("--kernels", lim.kernel_libraries,
                  "a kernel library (a shared library defining RELAXVM_PLUGIN, <relaxvm/plugin.hpp>) whose kernels the "
                  "program may call; repeatable. It must be built for this tool's relaxvm ABI (" +
                      std::string(rv::abi_tag) + ")")
        ->allow_extra_args(false);  // one path per --kernels: `--kernels LIB.so FILE` leaves FILE alone
  };
  auto add_vm_limits = [&](CLI::App* c) {
    c->add_option("--max-instructions", lim.max_instructions,
                  "stop an invocation after this many instructions (0: no limit)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    c->add_option("--max-memory", lim.max_memory, "the most the VM may allocate (bytes, or 512MiB, 4GiB, ...; 0: no limit)")
        ->transform(CLI::AsSizeValue(false))
        ->transform(size_in_range)
        ->capture_default_str();
  };
  CLI::App* info_cmd = app.add_subcommand("info", "format, size, functions, constants and warnings");
  add_file(info_cmd);
  CLI::App* text_cmd = app.add_subcommand("text", "the executable as text (the reference's as_text)");
  add_file(text_cmd);
  CLI::App* cpp_cmd = app.add_subcommand("cpp", "C++ builder code that rebuilds the executable; with --name, an ONNX model "
                                                 "as a header for firmware (docs/firmware.md)");
  add_file(cpp_cmd);
  std::string model_name;
  cpp_cmd->add_option("--name", model_name, "write an ONNX model as a firmware header: the namespace of its program, weights and run()");
  cpp_cmd->add_option("-o,--output", out_file, "the header to write (with --name)");
  CLI::App* verify_cmd = app.add_subcommand("verify", "load and verify; exit 0 when valid, warnings on stderr");
  add_file(verify_cmd);
  verify_cmd->add_flag("--strict", strict, "warnings make the exit status 1");
  // The inputs are what the subcommand does not parse (remaining()), taken whole: as an option's
  // values CLI11 would split "[1, 2]" into two.
  const std::string inputs_help(input_help);
  CLI::App* run_cmd = app.add_subcommand("run", "run a function with the builtins and the ops kernels; print its result");
  add_file(run_cmd);
  run_cmd->add_option("-f,--function", function, "the function to call")->capture_default_str();
  run_cmd->allow_extras()->footer(inputs_help);
  run_cmd->add_option("-o,--output", outputs, "write the result (a tensor, or a tuple's tensors in order) to .npy files");
  add_vm_limits(run_cmd);
  add_kernels(run_cmd);
  CLI::App* time_cmd = app.add_subcommand("time", "time a function: median and spread over runs");
  add_file(time_cmd);
  time_cmd->add_option("-f,--function", function, "the function to call")->capture_default_str();
  time_cmd->allow_extras()->footer(inputs_help);
  time_cmd->add_option("--runs", runs, "timed runs")->capture_default_str();
  time_cmd->add_option("--warmup", warmup, "untimed runs first")->capture_default_str();
  time_cmd->add_flag("--profile", profile, "also time each callee over the runs (rv::profile)");
  time_cmd->add_option("--format", fmt, "the profile as table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  add_vm_limits(time_cmd);
  add_kernels(time_cmd);
  CLI::App* graph_cmd = app.add_subcommand("graph", "the graph executor (TVM graph JSON)");
  graph_cmd->require_subcommand(1);
  CLI::App* graph_run_cmd = graph_cmd->add_subcommand("run", "run a graph and print its outputs");
  graph_run_cmd->add_option("GRAPH", file, "the graph JSON file")->required();
  graph_run_cmd->add_option("--params", params, "a params file (TVM's save_param_dict format)");
  graph_run_cmd->allow_extras()->footer("NAME=INPUT for each graph input. " + inputs_help);
  graph_run_cmd->add_option("-o,--output", outputs, "write the outputs to .npy files, in order");
  graph_run_cmd->add_flag("--profile", profile, "print the per-node timing table of 10 runs");
  add_file_limit(graph_run_cmd);
  add_kernels(graph_run_cmd);
  CLI::App* convert_cmd = app.add_subcommand("convert", "write an executable in another format");
  convert_cmd->add_option("IN", file, "the executable to read (any format relaxvm reads)")->required();
  convert_cmd->add_option("OUT", out_file, "the file to write")->required();
  convert_cmd->add_option("--to", to, "the format to write: relaxvm or tvm-relax")
      ->check(CLI::IsMember({"relaxvm", "tvm-relax"}))
      ->capture_default_str();
  convert_cmd->add_option("--params", params, "a params file with a Relay executable's late-bound constants");
  convert_cmd->add_option("--upper-bound", lim.upper_bounds, "NAME=N: an ONNX model's named dimension NAME is at most N (repeatable)");
  add_file_limit(convert_cmd);
  CLI::App* embed_cmd = app.add_subcommand("embed", "write .npy files as a C++ header of constexpr arrays (weights for a compile-time program or a firmware table)");
  embed_cmd->add_option("NPY", npy_files, "the .npy files; each gives NAME_data, NAME_shape and NAME_dtype, NAME from its file name")
      ->required();
  embed_cmd->add_option("-o,--output", out_file, "the header to write")->required();
  embed_cmd->add_option("--namespace", ns, "the namespace of the arrays (a::b nests)")->capture_default_str();
  embed_cmd->footer("Use one in a program: b.add_tensor(std::span<const float>(weights::NAME_data), weights::NAME_shape). "
                    "bool, int8-64, uint8-64, float32 and float64 are embedded; values read back bit for bit.");
  add_file_limit(embed_cmd);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, or the error and a hint
    return code == 0 ? 0 : 2;
  }
  for (CLI::App* c : {run_cmd, time_cmd, graph_run_cmd})
    if (*c) inputs = c->remaining();
  try {
    if (*info_cmd) info(file, params, lim);
    else if (*text_cmd) {
      const loaded l = load(file, params, lim, /*keep_ir=*/true);
      if (l.ir) std::printf("%s\n", rv::ir::to_text(*l.ir).c_str());  // an ONNX model: its IR, then its bytecode
      std::printf("%s", l.exe.as_text().c_str());
    }
    else if (*cpp_cmd && !model_name.empty()) {
      if (out_file.empty()) fail("cpp --name needs -o FILE, the header to write");
      model_cpp(file, model_name, out_file, lim);
    } else if (*cpp_cmd) {
      if (!out_file.empty()) fail("cpp -o is for --name NAME (a model's firmware header); without it the builder code goes to stdout");
      std::printf("%s", load(file, params, lim).exe.as_cpp().c_str());
    }
    else if (*verify_cmd) return verify(file, params, strict, lim);
    else if (*run_cmd) run(file, params, function, inputs, outputs, lim);
    else if (*time_cmd) time_it(file, params, function, inputs, runs, warmup, profile, fmt, lim);
    else if (*graph_run_cmd) graph_run(file, params, inputs, outputs, profile, lim);
    else if (*convert_cmd) convert(file, out_file, params, to, lim);
    else if (*embed_cmd) embed(npy_files, out_file, ns, lim);
  } catch (const failure& f) {
    std::fprintf(stderr, "relaxvm: error: %s\n", f.message.c_str());
    return 1;
  } catch (const rv::error& e) {
    std::fprintf(stderr, "relaxvm: error: %s\n", std::string(e.message()).c_str());
    return 1;
  } catch (const std::bad_alloc&) {
    // A file, an input or a program needing more memory than the machine gives: an error like
    // any other, not an abort.
    std::fprintf(stderr, "relaxvm: error: out of memory: a file, an input or the program needed more than this machine gives\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "relaxvm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
