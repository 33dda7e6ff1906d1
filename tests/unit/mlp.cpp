// SPDX-License-Identifier: Apache-2.0
// The MLP of examples/mlp_program.hpp: correct for several batch sizes, and, with a pooled
// allocator, free of system allocations from its second run on.
#include <doctest/doctest.h>
#include <relaxvm/doctest.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../../examples/mlp_ir.hpp"

namespace rv = relaxvm;

// Counts every allocation from the system heap, aligned ones included.
#include "../support/counting_new.hpp"
using relaxvm_test::heap_allocations;

namespace {
double max_error(const rv::tensor& y, const xt::xarray<float>& expected) {
  double err = 0;
  for (std::int64_t i = 0; i < y.numel(); ++i)
    err = std::fmax(err, std::fabs(static_cast<double>(y.data<const float>()[i] - expected.data()[i])));
  return err;
}
}  // namespace

TEST_CASE("the MLP matches a direct xtensor computation for n = 1, 7 and 64") {
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  rv::virtual_machine vm(mlp::build(w), reg);
  for (std::int64_t n : {1, 7, 64}) {
    const rv::tensor x = mlp::make_input(n);
    const rv::tensor y = vm["main"](x).as<rv::tensor>();
    CHECK(y.shape() == rv::shape{n, mlp::out_features});
    CHECK(max_error(y, mlp::reference(w, x)) < 1e-5);
  }
}

TEST_CASE("with a pooled allocator, the second and later runs make no system allocation") {
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  rv::allocator pool = rv::allocator::pooled();
  rv::vm_options opts;
  opts.devices = {{rv::device::cpu(), pool}};
  rv::virtual_machine vm(mlp::build(w), reg, opts);
  const rv::vm_function main = vm["main"];
  const rv::tensor x1 = mlp::make_input(1), x7 = mlp::make_input(7), x64 = mlp::make_input(64);
  const rv::tensor* inputs[] = {&x1, &x7, &x64};
  // Two runs of each batch size: the pool, the object cache and the VM's frames warm up (the
  // storages a run keeps go back to the pool in the next run of another size).
  for (int warm = 0; warm < 2; ++warm)
    for (const rv::tensor* x : inputs) {
      std::array<rv::value, 1> args{rv::value(*x)};
      CHECK(main.try_call(args).ok());
    }
  const std::int64_t system_before = pool.stats().system_allocations;
  const long heap_before = heap_allocations();
  double checksum = 0;
  for (int round = 0; round < 5; ++round) {
    for (const rv::tensor* x : inputs) {
      std::array<rv::value, 1> args{rv::value(*x)};
      rv::result<rv::value> y = main.try_call(args);
      REQUIRE(y.ok());
      checksum += y->as<rv::tensor>().data<const float>()[0];
    }
  }
  CHECK(heap_allocations() == heap_before);
  CHECK(pool.stats().system_allocations == system_before);
  // Every output has been dropped: what is still in use is what the VM keeps for its next run.
  CHECK(pool.stats().bytes_in_use > 0);
  vm.release_kept();
  CHECK(pool.stats().bytes_in_use == 0);
  CHECK(std::isfinite(checksum));
}

TEST_CASE("vm_options::reuse_allocations: a run with the same shapes as the last one allocates nothing") {
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  const rv::executable exe = relaxvm::ir::build(mlp::build_ir(w), {.reuse_shapes = true});
  for (const bool reuse : {true, false}) {
    CAPTURE(reuse);
    rv::allocator pool = rv::allocator::pooled();
    rv::vm_options opts;
    opts.devices = {{rv::device::cpu(), pool}};
    opts.reuse_allocations = reuse;
    rv::virtual_machine vm(exe, reg, opts);
    const rv::tensor x = mlp::make_input(7);
    const xt::xarray<float> want = mlp::reference(w, x);
    CHECK(max_error(vm["main"](x).as<rv::tensor>(), want) < 1e-5);
    // The heap and the three storages, once; then nothing while the shapes stay the same.
    std::int64_t before = pool.stats().allocations;
    for (int run = 0; run < 3; ++run) CHECK(max_error(vm["main"](x).as<rv::tensor>(), want) < 1e-5);
    CHECK(pool.stats().allocations - before == (reuse ? 0 : 3 * 4));
    // An output the caller still holds is never handed out again: its storage stays the caller's.
    const rv::tensor held = vm["main"](x).as<rv::tensor>();
    const std::vector<float> copy(held.data<const float>(), held.data<const float>() + held.numel());
    const rv::tensor x2 = mlp::make_input(7);
    for (std::int64_t i = 0; i < x2.numel(); ++i) x2.data<float>()[i] *= 0.5f;
    const rv::tensor next = vm["main"](x2).as<rv::tensor>();
    CHECK(max_error(next, mlp::reference(w, x2)) < 1e-5);
    CHECK(next.raw_data() != held.raw_data());
    CHECK(std::vector<float>(held.data<const float>(), held.data<const float>() + held.numel()) == copy);
    CHECK(max_error(held, want) < 1e-5);
    // Another batch size: the kept storages that no longer fit go back first.
    before = pool.stats().allocations;
    const rv::tensor x3 = mlp::make_input(3);
    CHECK(max_error(vm["main"](x3).as<rv::tensor>(), mlp::reference(w, x3)) < 1e-5);
    CHECK(pool.stats().allocations - before == (reuse ? 3 : 4));
    vm.release_kept();
  }
}

TEST_CASE("vm_options::reuse_allocations: kept tensors are handed out again only when nothing else holds them") {
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  const rv::executable exe = relaxvm::ir::build(mlp::build_ir(w), {.reuse_shapes = true});
  rv::allocator pool = rv::allocator::pooled();
  rv::vm_options opts;
  opts.devices = {{rv::device::cpu(), pool}};
  std::optional<rv::virtual_machine> vm(std::in_place, exe, reg, opts);
  const rv::tensor x = mlp::make_input(7);
  const xt::xarray<float> want = mlp::reference(w, x);
  // A dropped output comes back as the same tensor object, over the same storage.
  const rv::tensor_object* first = nullptr;
  {
    const rv::tensor y = (*vm)["main"](x).as<rv::tensor>();
    first = y.get();
  }
  {
    const rv::tensor y = (*vm)["main"](x).as<rv::tensor>();
    CHECK(y.get() == first);
    CHECK(max_error(y, want) < 1e-5);
  }
  // An intermediate that the instrument hook holds on to pins its storage: the next run writes
  // elsewhere, and what the hook holds keeps its values.
  rv::tensor caught;
  vm->set_instrument([&](const rv::call_event& e) {
    if (e.before && e.callee == "ops.relu_out" && !caught.defined()) caught = e.args[1].as<rv::tensor>();
    return rv::instrument_action::proceed;
  });
  CHECK(max_error((*vm)["main"](x).as<rv::tensor>(), want) < 1e-5);
  REQUIRE(caught.defined());
  const std::vector<float> seen(caught.data<const float>(), caught.data<const float>() + caught.numel());
  const rv::tensor x2 = mlp::make_input(7);
  for (std::int64_t i = 0; i < x2.numel(); ++i) x2.data<float>()[i] = -x2.data<float>()[i];
  for (int run = 0; run < 3; ++run) {
    const rv::tensor y = (*vm)["main"](x2).as<rv::tensor>();
    CHECK(max_error(y, mlp::reference(w, x2)) < 1e-5);
  }
  CHECK(std::vector<float>(caught.data<const float>(), caught.data<const float>() + caught.numel()) == seen);
  vm->set_instrument(nullptr);
  // An output may outlive its VM, kept or not.
  const rv::tensor last = (*vm)["main"](x).as<rv::tensor>();
  vm.reset();
  CHECK(max_error(last, want) < 1e-5);
  caught = rv::tensor();
}

TEST_CASE("vm_options::reuse_allocations: nothing is kept over an arena, so each run starts it empty") {
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  const rv::executable exe = relaxvm::ir::build(mlp::build_ir(w), {.reuse_shapes = true});
  // Room for about two runs at n = 7: a view kept over one run's storage would hold that
  // storage, so the arena could not take its memory back and the third run would not fit.
  alignas(64) static std::byte buffer[6144];
  rv::allocator arena = rv::allocator::arena(buffer);
  rv::vm_options opts;
  opts.devices = {{rv::device::cpu(), arena}};
  rv::virtual_machine vm(exe, reg, opts);
  const rv::tensor x = mlp::make_input(7);
  const xt::xarray<float> want = mlp::reference(w, x);
  for (int run = 0; run < 8; ++run) {
    CAPTURE(run);
    rv::result<rv::value> y = vm["main"].try_call(std::array<rv::value, 1>{rv::value(x)});
    REQUIRE_MESSAGE(y.ok(), y.error().message());
    CHECK(max_error(y->as<rv::tensor>(), want) < 1e-5);
    CHECK(arena.stats().bytes_in_use > 0);
  }
  // The outputs are gone and the VM keeps nothing from the arena.
  CHECK(arena.stats().bytes_in_use == 0);
}

TEST_CASE("a wrong input is caught by the program's checks, with the reference's error context") {
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  rv::virtual_machine vm(mlp::build(w), reg);
  rv::result<rv::value> r = vm.try_invoke("main", std::vector<rv::value>{rv::value(mlp::pseudo_random({3, 15}, 1))});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::runtime);
  CHECK(std::string(r.error().message()).find("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n, 16), "
                                              "dtype=\"float32\")) match_cast error,  shape[1] mismatch to specified "
                                              "constant. (15 is not 16)") == 0);
  r = vm.try_invoke("main", std::vector<rv::value>{rv::value(rv::tensor::from<double>({1, 2}, {1, 2}))});
  CHECK(r.error().kind() == rv::error_kind::value);
  CHECK(std::string(r.error().message()).find("expect Tensor with dtype float32 but get float64") != std::string::npos);
  CHECK(vm["main"](mlp::make_input(2)).as<rv::tensor>().shape() == rv::shape{2, 10});  // still usable
}

TEST_CASE("the MLP written as IR lowers to a program with the hand-written one's outputs") {
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  rv::virtual_machine by_hand(mlp::build(w), reg);
  rv::virtual_machine lowered(relaxvm::ir::build(mlp::build_ir(w)), reg);
  for (std::int64_t n : {1, 7, 64}) {
    const rv::tensor x = mlp::make_input(n);
    const rv::tensor a = by_hand["main"](x).as<rv::tensor>();
    const rv::tensor b = lowered["main"](x).as<rv::tensor>();
    RELAXVM_CHECK_EQUAL(a, b);
  }
  const rv::result<rv::value> bad = lowered["main"].try_call(std::vector<rv::value>{rv::tensor::from<float>(std::vector<float>(15), {1, 15})});
  REQUIRE(!bad.ok());
  CHECK(std::string_view(bad.error().message()).find("shape[1] mismatch to specified constant") != std::string_view::npos);
}

TEST_CASE("the MLP as IR, planned: (n, 32) intermediates alternate between two storages, the output has its own") {
  // The reference's program 9 (docs/lowering.md). Storages as vm.builtin.alloc_storage makes them.
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  rv::virtual_machine by_hand(mlp::build(w), reg);
  for (const std::int64_t bound : {std::int64_t{0}, std::int64_t{8}}) {
    CAPTURE(bound);
    rv::virtual_machine vm(relaxvm::ir::build(mlp::build_ir(w, bound)), reg);
    std::vector<std::int64_t> sizes;
    std::vector<const void*> data;  // where each kernel writes its output
    vm.set_instrument([&](const rv::call_event& e) {
      if (e.before && e.callee == "vm.builtin.alloc_storage") sizes.push_back(e.args[1].as<rv::shape>()[0]);
      if (e.before && e.callee.substr(0, 4) == "ops.") data.push_back(e.args.back().as<rv::tensor>().raw_data());
      return rv::instrument_action::proceed;
    });
    for (const std::int64_t n : {1, 3, 8}) {
      sizes.clear();
      data.clear();
      const rv::tensor x = mlp::make_input(n);
      const rv::tensor want = by_hand["main"](x).as<rv::tensor>();
      const rv::tensor got = vm["main"](x).as<rv::tensor>();
      RELAXVM_CHECK_EQUAL(got, want);
      // Two storages of 128 n bytes (1,024 with n <= 8) for the four (n, 32) tensors, then 40 n
      // bytes for the returned (n, 10).
      const std::int64_t hidden_bytes = bound > 0 ? 4 * 32 * bound : 4 * 32 * n;
      CHECK(sizes == std::vector<std::int64_t>{hidden_bytes, hidden_bytes, 40 * n});
      REQUIRE(data.size() == 5);
      CHECK(data[0] != data[1]);
      CHECK((data[2] == data[0] && data[3] == data[1]));
      CHECK((data[4] != data[0] && data[4] != data[1]));
    }
  }
}

TEST_CASE("the MLP as IR with reuse_shapes: four shapes made instead of eight, the same storages and outputs") {
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  rv::virtual_machine by_hand(mlp::build(w), reg);
  for (const bool reuse : {false, true}) {
    CAPTURE(reuse);
    rv::virtual_machine vm(relaxvm::ir::build(mlp::build_ir(w), {.reuse_shapes = reuse}), reg);
    int shapes = 0, kills = 0;
    std::vector<std::int64_t> sizes;
    vm.set_instrument([&](const rv::call_event& e) {
      if (!e.before) return rv::instrument_action::proceed;
      shapes += e.callee == "vm.builtin.make_shape";
      kills += e.callee == "vm.builtin.null_value";  // with a hook set, kills are calls it sees
      if (e.callee == "vm.builtin.alloc_storage") sizes.push_back(e.args[1].as<rv::shape>()[0]);
      return rv::instrument_action::proceed;
    });
    for (const std::int64_t n : {1, 7, 64}) {
      shapes = kills = 0;
      sizes.clear();
      const rv::tensor x = mlp::make_input(n);
      const rv::tensor want = by_hand["main"](x).as<rv::tensor>();
      const rv::tensor got = vm["main"](x).as<rv::tensor>();
      RELAXVM_CHECK_EQUAL(got, want);
      CHECK(shapes == (reuse ? 4 : 8));
      CHECK(kills == 7);
      CHECK(sizes == std::vector<std::int64_t>{128 * n, 128 * n, 40 * n});
    }
    // Without the hook the kills are not calls, and the program still frees what it kills: the
    // pool holds the same storages from run to run.
    vm.set_instrument(nullptr);
    for (int run = 0; run < 3; ++run) CHECK(vm["main"](mlp::make_input(7)).as<rv::tensor>().shape() == rv::shape{7, 10});
  }
}

#ifdef RELAXVM_README
TEST_CASE("the README shows the MLP written as IR, its lowered form and its bytecode") {
  std::ifstream in(RELAXVM_README);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  const std::size_t begin = readme.find("```\n@main:\n");
  REQUIRE(begin != std::string::npos);
  const std::size_t end = readme.find("```", begin + 3);
  const std::string shown = readme.substr(begin + 4, end - begin - 4);
  const relaxvm::ir::module mod = mlp::build_ir(mlp::make_weights());
  const std::string text = relaxvm::ir::build(mod).as_text();
  CHECK(text.substr(0, shown.size()) == shown);
  // The IR before and after the passes: the first two blocks that start with @R.function.
  const std::string ir_texts[2] = {relaxvm::ir::to_text(mod), relaxvm::ir::to_text(relaxvm::ir::lower(mod))};
  std::size_t at = 0;
  for (const std::string& expected : ir_texts) {
    at = readme.find("```\n@R.function\n", at);
    REQUIRE(at != std::string::npos);
    const std::size_t stop = readme.find("```", at + 3);
    CHECK(readme.substr(at + 4, stop - at - 4) == expected);
    at = stop + 3;
  }
}
#endif
