// SPDX-License-Identifier: Apache-2.0
// The ONNX path under attack: every truncation of each fixture (tests/fixtures/onnx; inside
// weights' data, sampled) and byte flips at every kind of field in it (each message's each field:
// its key, its length, its payload's first, middle and last byte) through onnx::load and, when
// that loads, a VM run under a memory budget: each gives an error or a valid result, never a
// crash (the ASan and UBSan build is what proves it). Under ASan the bytes past a truncation are poisoned, so a read
// past its end is caught without copying the file once per length.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <relaxvm/kernels/elementwise.hpp>  // Add_out ... (relaxvm/onnx.hpp declares no kernels)
#include <relaxvm/onnx.hpp>
#include <sanitizer/asan_interface.h>  // its macros do nothing without ASan
#include <string>
#include <utility>
#include <vector>

namespace rv = relaxvm;
namespace onnx = relaxvm::onnx;

namespace {

std::vector<std::byte> read_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), p.string());
  f.seekg(0, std::ios::end);
  std::vector<std::byte> b(static_cast<std::size_t>(f.tellg()));  // exactly the file: ASan sees past its end
  f.seekg(0);
  f.read(reinterpret_cast<char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return b;
}

// The messages of onnx.proto the walk descends into, and which field of which holds which.
enum class msg : std::uint8_t { model, graph, node, attribute, tensor, value_info, type, tensor_type, shape, dim, opset, entry, none };
msg sub_message(msg m, std::uint64_t field) {
  switch (m) {
    case msg::model: return field == 7 ? msg::graph : field == 8 ? msg::opset : field == 14 ? msg::entry : msg::none;
    case msg::graph:
      return field == 1 ? msg::node : field == 5 ? msg::tensor : (field >= 11 && field <= 13) ? msg::value_info : msg::none;
    case msg::node: return field == 5 ? msg::attribute : msg::none;
    case msg::attribute:
      return field == 5 || field == 10 ? msg::tensor : field == 6 || field == 11 ? msg::graph : field == 14 ? msg::type : msg::none;
    case msg::tensor: return field == 13 ? msg::entry : msg::none;  // raw_data (9) is data, not a message
    case msg::value_info: return field == 2 ? msg::type : msg::none;
    case msg::type: return field == 1 || field == 8 ? msg::tensor_type : msg::none;
    case msg::tensor_type: return field == 2 ? msg::shape : msg::none;
    case msg::shape: return field == 1 ? msg::dim : msg::none;
    default: return msg::none;
  }
}

// Where each kind of field (a path of field numbers from the model down) lies in the file: the
// byte offsets worth flipping, per occurrence.
using field_sites = std::map<std::string, std::vector<std::vector<std::size_t>>>;
// Where tensors' raw_data lies: [begin, end) of each payload.
using data_ranges = std::vector<std::pair<std::size_t, std::size_t>>;

bool read_varint(const std::vector<std::byte>& b, std::size_t& at, std::size_t end, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && at < end; shift += 7) {
    const auto x = static_cast<std::uint8_t>(b[at++]);
    v |= static_cast<std::uint64_t>(x & 0x7F) << shift;
    if ((x & 0x80) == 0) return true;
  }
  return false;
}

void walk(const std::vector<std::byte>& b, std::size_t at, std::size_t end, msg m, const std::string& path, field_sites& out,
          data_ranges& data) {
  while (at < end) {
    const std::size_t key_at = at;
    std::uint64_t key = 0;
    if (!read_varint(b, at, end, key)) return;
    const std::uint64_t field = key >> 3;
    const auto wire = static_cast<int>(key & 7);
    const std::string here = path + "." + std::to_string(field);
    std::vector<std::size_t> sites{key_at};
    std::uint64_t n = 0;
    if (wire == 0) {
      const std::size_t v_at = at;
      if (!read_varint(b, at, end, n)) return;
      sites.push_back(v_at);
      sites.push_back(at - 1);
    } else if (wire == 1 || wire == 5) {
      const std::size_t size = wire == 1 ? 8 : 4;
      if (end - at < size) return;
      sites.push_back(at);
      sites.push_back(at + size - 1);
      at += size;
    } else if (wire == 2) {
      sites.push_back(at);  // the length
      if (!read_varint(b, at, end, n) || n > end - at) return;
      if (n > 0) {
        sites.push_back(at);
        sites.push_back(at + n / 2);
        sites.push_back(at + n - 1);
      }
      const msg sub = sub_message(m, field);
      if (sub != msg::none) walk(b, at, at + n, sub, here, out, data);
      if (m == msg::tensor && field == 9) data.emplace_back(at, at + n);
      at += n;
    } else {
      return;
    }
    out[here].push_back(std::move(sites));
  }
}

// Runs what loaded once, on zeros of its first input's declared shape (named dims 1), under a
// memory budget: a flipped attribute that imports must not make a kernel read out of bounds.
void run_once(const std::vector<std::byte>& bytes, const rv::executable& exe, const rv::registry& reg) {
  rv::result<onnx::model_info> m = onnx::parse_model(bytes);
  if (!m.ok() || m->graph.inputs.empty()) return;
  const onnx::type_info& t = m->graph.inputs[0].type;
  rv::result<rv::dtype> dt = onnx::to_dtype(t.elem_type);
  if (!dt.ok()) return;
  std::vector<std::int64_t> dims;
  std::int64_t numel = 1;
  for (const onnx::dimension& d : t.shape) {
    dims.push_back(d.known() ? d.value : 1);
    numel *= std::max<std::int64_t>(dims.back(), 1);
    if (numel > (std::int64_t{1} << 20)) return;
  }
  rv::vm_options opts;
  opts.max_memory = std::int64_t{1} << 28;
  opts.max_instructions = std::int64_t{1} << 20;
  rv::result<rv::virtual_machine> vm = rv::virtual_machine::create(exe, reg, opts);
  if (!vm.ok()) return;
  rv::result<rv::shape> s = rv::shape::try_make(dims);
  if (!s.ok()) return;
  rv::result<rv::tensor> x = rv::tensor::try_empty(*s, *dt);
  if (!x.ok()) return;
  if (x->nbytes() > 0) std::memset(x->raw_data(), 0, static_cast<std::size_t>(x->nbytes()));
  (void)vm->try_invoke("main", std::vector<rv::value>{*x});
}

}  // namespace

TEST_CASE("every truncation and field-wise byte flip of each fixture model is an error or a valid result") {
  namespace fs = std::filesystem;
  rv::registry reg;
  onnx::register_kernels(reg);
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(RELAXVM_ONNX_FIXTURES))
    if (e.path().extension() == ".onnx" && e.file_size() < (1u << 20)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 5);
  for (const fs::path& p : files) {
    CAPTURE(p.filename().string());
    std::vector<std::byte> bytes = read_bytes(p);
    REQUIRE_MESSAGE(onnx::load(bytes).ok(), p.string());

    field_sites sites;
    data_ranges data;
    walk(bytes, 0, bytes.size(), msg::model, "model", sites, data);

    // Every prefix, longest first (each step poisons one more byte under ASan), except inside
    // weights' data, where a cut is the same cut of the same field wherever it falls: there its
    // first and last 16 and every 61st.
    std::vector<char> sampled(bytes.size(), 1);
    for (const auto& [begin, end] : data)
      for (std::size_t k = begin + 16; k + 16 < end; ++k)
        if ((k - begin) % 61 != 0) sampled[k] = 0;
    std::size_t prefixes = 0, loaded_prefixes = 0;
    for (std::size_t n = bytes.size(); n-- > 0;) {
      // From byte n to the end of its 8-byte granule: ASan then marks the granule's first n % 8
      // bytes addressable (poisoning a byte in the middle of one would poison the rest of it).
      const std::size_t granule_end = std::min(bytes.size(), (n / 8 + 1) * 8);
      ASAN_POISON_MEMORY_REGION(bytes.data() + n, granule_end - n);
      if (sampled[n] == 0) continue;
      ++prefixes;
      if (onnx::load(std::span<const std::byte>(bytes.data(), n)).ok()) ++loaded_prefixes;
    }
    ASAN_UNPOISON_MEMORY_REGION(bytes.data(), bytes.size());

    // Each kind of field: its first two occurrences and its last, each flipped at its sites in a
    // few patterns (all bits, the lowest, the highest, zero).
    std::vector<std::size_t> positions;
    for (const auto& [path, list] : sites)
      for (std::size_t k = 0; k < list.size(); ++k)
        if (k < 2 || k + 1 == list.size()) positions.insert(positions.end(), list[k].begin(), list[k].end());
    std::sort(positions.begin(), positions.end());
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    std::size_t loaded = 0, refused = 0;
    for (std::size_t at : positions) {
      const std::byte was = bytes[at];
      for (int pattern = 0; pattern < 4; ++pattern) {
        bytes[at] = pattern == 0 ? was ^ std::byte{0xFF} : pattern == 1 ? was ^ std::byte{0x01} : pattern == 2 ? was ^ std::byte{0x80} : std::byte{0};
        if (bytes[at] == was) continue;
        rv::result<rv::executable> exe = onnx::load(bytes);
        if (exe.ok()) {
          ++loaded;
          run_once(bytes, *exe, reg);
        } else {
          ++refused;
          CHECK(!exe.error().message().empty());
        }
      }
      bytes[at] = was;
    }
    MESSAGE(p.filename().string() << ": " << prefixes << " of " << bytes.size() << " prefixes (" << loaded_prefixes << " load), " << sites.size()
                                  << " kinds of field, " << positions.size() << " positions flipped: " << loaded << " load, "
                                  << refused << " refused");
    // The walk reached the nodes' attributes and the initializers' dims (the deepest common kinds).
    CHECK(sites.count("model.7.1.5.1") == 1);
    CHECK(sites.count("model.7.5.1") == 1);
    CHECK(refused > 0);
  }
}

// Found by fuzz_onnx (fuzz/regressions/onnx/int64-mul-overflow-in-constant-fold): a flipped
// initializer made a Mul folded at import overflow int64, undefined in C++. ONNX's integers wrap.
TEST_CASE("integer Add, Sub, Mul, Neg and Abs wrap as two's complement does, never overflow") {
  namespace k = relaxvm::kernels;
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max(), min = std::numeric_limits<std::int64_t>::min();
  const rv::tensor a = rv::tensor::from<std::int64_t>(std::vector<std::int64_t>{max, min, 22987123098036971}, {3});
  const rv::tensor b = rv::tensor::from<std::int64_t>(std::vector<std::int64_t>{1, 1, 2305}, {3});
  const rv::tensor out = rv::tensor::empty(rv::shape{3}, rv::dtype::int64());
  const auto at = [&](std::int64_t i) { return out.data<std::int64_t>()[i]; };
  REQUIRE(k::Add_out(a, b, out).ok());
  CHECK(at(0) == min);
  REQUIRE(k::Sub_out(b, a, out).ok());
  CHECK(at(1) == min + 1);
  REQUIRE(k::Mul_out(a, b, out).ok());
  CHECK(at(2) == static_cast<std::int64_t>(22987123098036971ull * 2305ull));
  REQUIRE(k::Neg_out(a, out).ok());
  CHECK(at(1) == min);
  REQUIRE(k::Abs_out(a, out).ok());
  CHECK(at(1) == min);
  // uint16 x uint16 promotes to int in C++, where 65535 x 65535 overflows.
  const rv::tensor u = rv::tensor::from<std::uint16_t>(std::vector<std::uint16_t>{65535}, {1});
  const rv::tensor uo = rv::tensor::empty(rv::shape{1}, rv::dtype::uint16());
  REQUIRE(k::Mul_out(u, u, uo).ok());
  CHECK(uo.data<std::uint16_t>()[0] == 1);
}
