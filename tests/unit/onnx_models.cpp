// SPDX-License-Identifier: Apache-2.0
// Models that others wrote: architectures exported from PyTorch (tools/export_models.py; random
// weights, torch's own outputs) run through onnx::load and the VM, equal to torch's outputs within
// 1e-4 of the output's scale; a dynamic batch axis runs at two batch sizes from one executable,
// and with upper bounds its planned memory is finite and enough.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <relaxvm/onnx.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace onnx = relaxvm::onnx;

namespace {

std::vector<std::byte> read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), p);
  std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  if (!c.empty()) std::memcpy(b.data(), c.data(), c.size());
  return b;
}
std::string fixture(const std::string& name) { return std::string(RELAXVM_ONNX_FIXTURES) + "/" + name; }
bool exists(const std::string& p) { return std::ifstream(p).good(); }

// The largest |got - want| over the largest |want|.
double relative_error(const rv::tensor& got, const rv::tensor& want) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == rv::dtype::float32());
  double err = 0, scale = 0;
  for (std::int64_t k = 0; k < want.numel(); ++k) {
    const double a = got.data<const float>()[k], b = want.data<const float>()[k];
    err = std::fmax(err, std::fabs(a - b));
    scale = std::fmax(scale, std::fabs(b));
  }
  return err / scale;
}

// Runs `name`.onnx on each of its inputs (and, for a dynamic batch, its batch-5 inputs; for a
// data-dependent branch, the negated input).
void check_model(const std::string& name, const onnx::options& opt = {}) {
  const std::vector<std::byte> bytes = read_file(fixture(name + ".onnx"));
  rv::result<rv::executable> exe = onnx::load(bytes, opt);
  REQUIRE_MESSAGE(exe.ok(), exe.error().message());
  rv::registry reg;
  onnx::register_kernels(reg);
  rv::virtual_machine vm(*exe, reg);
  for (const std::string suffix : {"", ".batch5", ".neg"}) {
    if (!exists(fixture(name + suffix + ".input.pb"))) continue;
    CAPTURE(suffix);
    const rv::tensor x = onnx::read_tensor(read_file(fixture(name + suffix + ".input.pb"))).value();
    const rv::tensor want = onnx::read_tensor(read_file(fixture(name + suffix + ".output.pb"))).value();
    rv::result<rv::value> y = vm.try_invoke("main", std::vector<rv::value>{x});
    REQUIRE_MESSAGE(y.ok(), y.error().message());
    CHECK(relative_error(y->as<rv::tensor>(), want) <= 1e-4);
  }
}

}  // namespace

TEST_CASE("an MLP exported from torch gives torch's outputs") { check_model("mlp"); }

TEST_CASE("onnx::load_file gives load()'s program from the mapped file; the weight hook sees each weight it copied") {
  const std::string path = fixture("dscnn.onnx");
  const std::vector<std::byte> bytes = read_file(path);
  rv::result<rv::executable> from_bytes = onnx::load(bytes), from_file = onnx::load_file(path);
  REQUIRE_MESSAGE(from_file.ok(), from_file.error().message());
  CHECK(from_file->as_text() == from_bytes->as_text());
  rv::registry reg;
  onnx::register_kernels(reg);
  rv::virtual_machine vm(*from_file, reg);
  const rv::tensor x = onnx::read_tensor(read_file(fixture("dscnn.input.pb"))).value();
  rv::result<rv::value> y = vm.try_invoke("main", std::vector<rv::value>{x});
  REQUIRE_MESSAGE(y.ok(), y.error().message());
  CHECK(relative_error(y->as<rv::tensor>(), onnx::read_tensor(read_file(fixture("dscnn.output.pb"))).value()) <= 1e-4);

  struct seen {
    std::span<const std::byte> file;
    std::size_t calls = 0;
    bool inside = true;
  } s{bytes};
  onnx::options opt;
  opt.weight_copied = [](std::span<const std::byte> proto, void* context) {
    seen& c = *static_cast<seen*>(context);
    ++c.calls;
    const auto at = reinterpret_cast<std::uintptr_t>(proto.data()), begin = reinterpret_cast<std::uintptr_t>(c.file.data());
    c.inside = c.inside && at >= begin && at + proto.size() <= begin + c.file.size();
  };
  opt.weight_copied_context = &s;
  REQUIRE(onnx::load(bytes, opt).ok());
  const std::size_t initializers = onnx::parse_model(bytes)->graph.initializers.size();
  CHECK(s.calls > 0);
  CHECK(s.calls <= initializers);
  CHECK(s.inside);

  CHECK(onnx::load_file(path + ".missing").error().message().find("onnx: cannot open '" + path + ".missing'") == 0);
  CHECK(onnx::load_file(RELAXVM_ONNX_FIXTURES).error().message() == "onnx: '" + std::string(RELAXVM_ONNX_FIXTURES) + "' is not a regular file");

  // A file mapped first (to look at its bytes) loads into the same program; its errors can
  // name another caller, or none.
  rv::result<onnx::mapped_file> mapped = onnx::mapped_file::open(path);
  REQUIRE(mapped.ok());
  CHECK(std::ranges::equal(mapped->bytes(), bytes));
  rv::result<rv::executable> from_mapped = onnx::load_mapped(*mapped);
  REQUIRE_MESSAGE(from_mapped.ok(), from_mapped.error().message());
  CHECK(from_mapped->as_text() == from_bytes->as_text());
  CHECK(onnx::mapped_file::open(path + ".missing", "").error().message().find("cannot open '" + path + ".missing'") == 0);
  CHECK(onnx::mapped_file::open(RELAXVM_ONNX_FIXTURES, "tool").error().message() ==
        "tool: '" + std::string(RELAXVM_ONNX_FIXTURES) + "' is not a regular file");
}
TEST_CASE("LeNet-5 (Conv, MaxPool, Flatten, Gemm) gives torch's outputs") { check_model("lenet"); }
TEST_CASE("a keyword-spotting DS-CNN (depthwise-separable convolutions, GlobalAveragePool) gives torch's outputs") {
  check_model("dscnn");
}

TEST_CASE("data-dependent control flow scripted in torch (an If whose outputs differ in shape) gives torch's outputs") {
  // x takes the else branch ((2, 8)), -x the then branch ((1, 8)).
  check_model("gate");
}

TEST_CASE("a dynamic batch axis runs at batch 1 and 5 from one executable") {
  check_model("mlp.dynbatch");
  // The batch is a symbolic variable of main's parameter.
  const std::vector<std::byte> bytes = read_file(fixture("mlp.dynbatch.onnx"));
  const rv::ir::module m = onnx::import(bytes).value();
  CHECK(rv::ir::to_text(m).find("batch") != std::string::npos);
  // Without a bound the planned memory is not bounded; with one it is, and enough: the VM runs
  // batch 5 out of an arena of exactly that size.
  CHECK(rv::ir::planned_bytes(m, "main") == -1);
  const onnx::options bounded{.upper_bounds = {{"batch", 8}}};
  const rv::ir::module mb = onnx::import(bytes, bounded).value();
  const std::int64_t planned = rv::ir::planned_bytes(mb, "main");
  REQUIRE(planned > 0);
  struct alignas(64) block {
    std::byte b[64];
  };
  std::vector<block> memory(static_cast<std::size_t>(planned) / 64 + 1);
  rv::allocator arena = rv::allocator::arena(std::span<std::byte>(memory[0].b, static_cast<std::size_t>(planned)));
  rv::vm_options vo;
  vo.devices = {{rv::device::cpu(), arena}};
  rv::registry reg;
  onnx::register_kernels(reg);
  rv::result<rv::executable> exe = onnx::load(bytes, bounded);
  REQUIRE(exe.ok());
  rv::virtual_machine vm(*exe, reg, vo);
  const rv::tensor x = onnx::read_tensor(read_file(fixture("mlp.dynbatch.batch5.input.pb"))).value();
  const rv::tensor want = onnx::read_tensor(read_file(fixture("mlp.dynbatch.batch5.output.pb"))).value();
  {
    rv::result<rv::value> y = vm.try_invoke("main", std::vector<rv::value>{x});
    REQUIRE_MESSAGE(y.ok(), y.error().message());
    CHECK(relative_error(y->as<rv::tensor>(), want) <= 1e-4);
  }  // the output's memory goes back to the arena
  // Past the bound: an error naming it, and the VM stays usable.
  const rv::tensor big = rv::tensor::empty({9, 784}, rv::dtype::float32());
  rv::result<rv::value> over = vm.try_invoke("main", std::vector<rv::value>{big});
  REQUIRE(!over.ok());
  CHECK(std::string(over.error().message()).find("batch") != std::string::npos);
  rv::result<rv::value> again = vm.try_invoke("main", std::vector<rv::value>{x});
  CHECK_MESSAGE(again.ok(), again.error().message());
}

TEST_CASE("a transformer encoder layer (attention, GELU, layer norm decomposed) gives torch's outputs") {
  check_model("transformer");
  check_model("transformer.opset17");  // LayerNormalization as one op
}

TEST_CASE("a transformer with a dynamic batch: its Shape arithmetic folds, and one executable runs batch 1 and 5") {
  check_model("transformer.dynbatch");
  const std::vector<std::byte> bytes = read_file(fixture("transformer.dynbatch.onnx"));
  const rv::ir::module m = onnx::import(bytes).value();
  // The Reshape targets torch computes at run time (Shape -> Gather -> Unsqueeze -> Concat) are
  // symbolic shapes: no shape is turned into a tensor, and with a bound the memory is planned.
  CHECK(rv::ir::to_text(m).find("shape_to_tensor") == std::string::npos);
  CHECK(rv::ir::planned_bytes(onnx::import(bytes, {.upper_bounds = {{"batch", 8}}}).value(), "main") > 0);
}

#ifdef RELAXVM_ONNX_TESTDATA
TEST_CASE("a model with unsupported operators lists every one, with its nodes") {
  const std::string path = std::string(RELAXVM_ONNX_TESTDATA) + "/node/test_gru_defaults/model.onnx";
  if (!exists(path)) {
    MESSAGE("libonnx-testdata is not installed: skipped");
    return;
  }
  rv::result<rv::ir::module> m = onnx::import(read_file(path));
  REQUIRE(!m.ok());
  CHECK(m.error().kind() == rv::error_kind::unsupported);  // "not implemented", not "malformed"
  const std::string msg(m.error().message());
  CHECK(msg.find("operators relaxvm does not support") != std::string::npos);
  CHECK(msg.find("ai.onnx GRU (opset 14): 1 node: node 0 (GRU)") != std::string::npos);
}
#endif
