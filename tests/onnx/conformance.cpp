// SPDX-License-Identifier: Apache-2.0
// ONNX's backend conformance data through relaxvm: each case's model.onnx through onnx::load, the
// VM and the kernels, its test_data_set_0 inputs in, every output compared with ONNX's expected
// one at ONNX's backend tolerances (rtol 1e-3, atol 1e-7; integers and booleans exactly).
//
//   onnx_conformance DATA_ROOT [--expected FILE] [--table] [--verbose] [FOLDER ...]
//
// DATA_ROOT is Debian's libonnx-testdata (/usr/share/libonnx-testdata/data); FOLDERs are its
// node, pytorch-converted, pytorch-operator and simple (all four by default). Prints a line per
// case that fails (with why), with --verbose per unsupported case too, with --table a per-op table,
// then the totals. With --expected, exits 1 when a case listed there (one "folder/case" per line)
// does not pass, and names the cases that pass but are not listed.
#include <relaxvm/onnx.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace fs = std::filesystem;

namespace {

std::vector<std::byte> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  if (!c.empty()) std::memcpy(b.data(), c.data(), c.size());
  return b;
}

enum class outcome { pass, fail, unsupported };

struct case_result {
  outcome what = outcome::fail;
  std::string why;
};

// Element k of a tensor as a double (exact for the integers the tests hold).
double element(const rv::tensor& t, std::int64_t k) {
  const auto* p = static_cast<const char*>(t.raw_data());
  const rv::dtype d = t.dtype();
  const auto i = static_cast<std::size_t>(k);
  if (d.is_bool()) return reinterpret_cast<const std::uint8_t*>(p)[i] != 0 ? 1 : 0;
  if (d == rv::dtype::float32()) return reinterpret_cast<const float*>(p)[i];
  if (d == rv::dtype::float64()) return reinterpret_cast<const double*>(p)[i];
  if (d == rv::dtype::float16()) {  // sign, 5 exponent bits, 10 mantissa bits
    const std::uint16_t h = reinterpret_cast<const std::uint16_t*>(p)[i];
    const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    const double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m != 0 ? std::nan("") : HUGE_VAL) : std::ldexp(1024 + m, e - 25);
    return (h & 0x8000) != 0 ? -v : v;
  }
  if (d == rv::dtype::int8()) return reinterpret_cast<const std::int8_t*>(p)[i];
  if (d == rv::dtype::int16()) return reinterpret_cast<const std::int16_t*>(p)[i];
  if (d == rv::dtype::int32()) return reinterpret_cast<const std::int32_t*>(p)[i];
  if (d == rv::dtype::int64()) return static_cast<double>(reinterpret_cast<const std::int64_t*>(p)[i]);
  if (d == rv::dtype::uint8()) return reinterpret_cast<const std::uint8_t*>(p)[i];
  if (d == rv::dtype::uint16()) return reinterpret_cast<const std::uint16_t*>(p)[i];
  if (d == rv::dtype::uint32()) return reinterpret_cast<const std::uint32_t*>(p)[i];
  if (d == rv::dtype::uint64()) return static_cast<double>(reinterpret_cast<const std::uint64_t*>(p)[i]);
  return std::nan("");
}

// Why `got` differs from `want`, or "".
std::string compare(const rv::tensor& got, const rv::tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    rv::detail::text t;
    t << rv::detail::dims_text{got.shape().dims()} << " " << got.dtype() << " instead of " << rv::detail::dims_text{want.shape().dims()} << " " << want.dtype();
    return std::string(t.view());
  }
  const bool exact = !want.dtype().is_float();
  for (std::int64_t k = 0; k < want.numel(); ++k) {
    const double a = element(got, k), b = element(want, k);
    if (std::isnan(a) && std::isnan(b)) continue;
    const bool close = exact ? a == b : (a == b || std::fabs(a - b) <= 1e-7 + 1e-3 * std::fabs(b));
    if (!close) return "element " + std::to_string(k) + " is " + std::to_string(a) + " instead of " + std::to_string(b);
  }
  return "";
}

case_result run_case(const fs::path& dir) {
  const std::vector<std::byte> model = read_file(dir / "model.onnx");
  rv::result<rv::executable> exe = rv::onnx::load(model);
  if (!exe.ok()) {
    // The importer says which failures are "not implemented" (error_kind::unsupported): every
    // other error is a failure, however it is worded.
    const bool unsupported = exe.error().kind() == rv::error_kind::unsupported;
    return {unsupported ? outcome::unsupported : outcome::fail, std::string(exe.error().message())};
  }
  rv::registry reg;
  rv::onnx::register_kernels(reg);
  rv::result<rv::virtual_machine> vm = rv::virtual_machine::create(*exe, reg);
  if (!vm.ok()) return {outcome::fail, std::string(vm.error().message())};
  const fs::path data = dir / "test_data_set_0";
  std::vector<rv::value> inputs;
  for (int k = 0;; ++k) {
    const fs::path p = data / ("input_" + std::to_string(k) + ".pb");
    if (!fs::exists(p)) break;
    rv::result<rv::tensor> t = rv::onnx::read_tensor(read_file(p));
    if (!t.ok())
      return {t.error().kind() == rv::error_kind::unsupported ? outcome::unsupported : outcome::fail,
              "input " + std::to_string(k) + ": " + std::string(t.error().message())};
    inputs.push_back(std::move(*t));
  }
  rv::result<rv::value> out = vm->try_invoke("main", inputs);
  if (!out.ok()) return {outcome::fail, std::string(out.error().message())};
  std::vector<rv::tensor> got;
  if (out->kind() == rv::value_kind::tensor) {
    got.push_back(out->as<rv::tensor>());
  } else if (out->kind() == rv::value_kind::tuple) {
    const rv::tuple t = out->as<rv::tuple>();
    for (std::int64_t i = 0; i < t.size(); ++i) {
      if (t[i].kind() != rv::value_kind::tensor) return {outcome::fail, "output " + std::to_string(i) + " is not a tensor"};
      got.push_back(t[i].as<rv::tensor>());
    }
  } else {
    return {outcome::fail, "the result is not a tensor or a tuple: " + rv::to_string(*out)};
  }
  for (std::size_t k = 0;; ++k) {
    const fs::path p = data / ("output_" + std::to_string(k) + ".pb");
    if (!fs::exists(p)) {
      if (k != got.size()) return {outcome::fail, std::to_string(got.size()) + " outputs instead of " + std::to_string(k)};
      break;
    }
    rv::result<rv::tensor> want = rv::onnx::read_tensor(read_file(p));
    if (!want.ok())
      return {want.error().kind() == rv::error_kind::unsupported ? outcome::unsupported : outcome::fail,
              "output " + std::to_string(k) + ": " + std::string(want.error().message())};
    if (k >= got.size()) return {outcome::fail, "fewer outputs than expected"};
    if (std::string why = compare(got[k], *want); !why.empty()) return {outcome::fail, "output " + std::to_string(k) + ": " + why};
  }
  return {outcome::pass, ""};
}

// The op a case tests: for node/ the op type whose snake_case name starts the case's name (the
// longest such), else the first node's; for the others the folder name.
std::string op_of(const fs::path& dir, const std::string& folder) {
  if (folder != "node") return folder;
  const std::vector<std::byte> bytes = read_file(dir / "model.onnx");
  rv::result<rv::onnx::model_info> m = rv::onnx::parse_model(bytes);
  if (!m.ok() || m->graph.nodes.empty()) return "?";
  const std::string name = dir.filename().string().substr(5);  // after "test_"
  std::string best;
  for (const rv::onnx::node_info& n : m->graph.nodes) {
    std::string snake;
    for (char ch : n.op_type) {
      if (std::isupper(static_cast<unsigned char>(ch)) && !snake.empty() && !std::isupper(static_cast<unsigned char>(snake.back()))) snake += '_';
      snake += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    std::string flat = snake;
    flat.erase(std::remove(flat.begin(), flat.end(), '_'), flat.end());
    std::string flat_name = name;
    flat_name.erase(std::remove(flat_name.begin(), flat_name.end(), '_'), flat_name.end());
    if ((name.rfind(snake, 0) == 0 || flat_name.rfind(flat, 0) == 0) && n.op_type.size() > best.size()) best = std::string(n.op_type);
  }
  return best.empty() ? std::string(m->graph.nodes[0].op_type) : best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: onnx_conformance DATA_ROOT [--expected FILE] [--table] [--verbose] [FOLDER ...]\n");
    return 2;
  }
  const fs::path root(argv[1]);
  std::string expected_file;
  bool table = false, verbose = false;
  std::vector<std::string> folders;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--expected" && i + 1 < argc) expected_file = argv[++i];
    else if (a == "--table") table = true;
    else if (a == "--verbose") verbose = true;
    else folders.push_back(a);
  }
  if (folders.empty()) folders = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  if (!fs::exists(root)) {
    std::fprintf(stderr, "onnx_conformance: %s does not exist (install Debian's libonnx-testdata)\n", root.c_str());
    return 2;
  }

  struct tally {
    int pass = 0, fail = 0, unsupported = 0;
  };
  std::map<std::string, tally> per_op, per_folder;
  std::set<std::string> passed;
  for (const std::string& folder : folders) {
    std::vector<fs::path> cases;
    for (const fs::directory_entry& e : fs::directory_iterator(root / folder))
      if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    for (const fs::path& c : cases) {
      const std::string id = folder + "/" + c.filename().string();
      const case_result r = run_case(c);
      tally& op = per_op[op_of(c, folder)];
      tally& f = per_folder[folder];
      switch (r.what) {
        case outcome::pass:
          ++op.pass, ++f.pass;
          passed.insert(id);
          break;
        case outcome::fail:
          ++op.fail, ++f.fail;
          std::printf("FAIL %s: %s\n", id.c_str(), r.why.c_str());
          break;
        case outcome::unsupported:
          ++op.unsupported, ++f.unsupported;
          if (verbose) std::printf("UNSUPPORTED %s: %s\n", id.c_str(), r.why.c_str());
          break;
      }
    }
  }
  if (table) {
    std::printf("\n| op | pass | fail | unsupported |\n|---|---:|---:|---:|\n");
    for (const auto& [op, t] : per_op) std::printf("| %s | %d | %d | %d |\n", op.c_str(), t.pass, t.fail, t.unsupported);
  }
  std::printf("\n| folder | cases | pass | fail | unsupported |\n|---|---:|---:|---:|---:|\n");
  tally all;
  for (const auto& [folder, t] : per_folder) {
    std::printf("| %s | %d | %d | %d | %d |\n", folder.c_str(), t.pass + t.fail + t.unsupported, t.pass, t.fail, t.unsupported);
    all.pass += t.pass, all.fail += t.fail, all.unsupported += t.unsupported;
  }
  std::printf("| all | %d | %d | %d | %d |\n", all.pass + all.fail + all.unsupported, all.pass, all.fail, all.unsupported);

  int status = 0;
  if (!expected_file.empty()) {
    std::ifstream in(expected_file);
    if (!in) {
      std::fprintf(stderr, "onnx_conformance: cannot read %s\n", expected_file.c_str());
      return 2;
    }
    std::set<std::string> expected;
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') expected.insert(line);
    int lost = 0, gained = 0;
    for (const std::string& e : expected)
      if (passed.count(e) == 0 && std::find_if(folders.begin(), folders.end(), [&](const std::string& f) { return e.rfind(f + "/", 0) == 0; }) != folders.end()) {
        std::printf("REGRESSION %s: listed as passing, but it does not\n", e.c_str());
        ++lost;
      }
    for (const std::string& p : passed)
      if (expected.count(p) == 0) {
        std::printf("NEW PASS %s: add it to %s\n", p.c_str(), expected_file.c_str());
        ++gained;
      }
    std::printf("%d expected passes lost, %d new passes\n", lost, gained);
    if (lost > 0) status = 1;
  }
  return status;
}
