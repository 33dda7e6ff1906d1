// SPDX-License-Identifier: Apache-2.0
// builtins/: the builtins of the Relax VM design example, through the VM and called directly.
#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;

namespace {

struct captured_vm {
  std::string printed;
  rv::registry reg;
  rv::virtual_machine vm;
  explicit captured_vm(const rv::executable& exe) : vm(make(exe)) {}
  rv::virtual_machine make(const rv::executable& exe) {
    rv::vm_options opts;
    opts.print = [this](std::string_view s) { printed += s; };
    return rv::virtual_machine(exe, reg, opts);
  }
};

std::string error_of(const rv::result<rv::value>& r, rv::error_kind kind) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == kind);
  return std::string(r.error().message());
}

rv::result<rv::value> call(rv::basic_registry& reg, std::string_view name, std::vector<rv::value> args) {
  return reg.get(name).try_call(args);
}

}  // namespace

TEST_CASE("the Relax VM design example's shape heap") {
  rv::exec_builder b;
  rv::tensor x = rv::tensor::empty({32, 16}, rv::dtype::float64());
  {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.alloc_shape_heap", {b.imm(2)}, b.r(0));
    b.emit_call("vm.builtin.shape_of", {b.c(b.add_constant(x))}, b.r(1));
    b.emit_call("vm.builtin.store_shape", {b.r(1), b.r(0), b.imm(0), b.imm(1)});
    b.emit_call("vm.builtin.load_shape", {b.r(0), b.imm(0), b.imm(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::registry reg;
  rv::virtual_machine vm(b.get(), reg);
  CHECK(vm.invoke("main", {}).as<rv::shape>() == rv::shape{32, 16});
}

TEST_CASE("alloc_shape_heap, with or without the VM context") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.alloc_shape_heap", {b.vm_state(), b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::registry reg;
  rv::virtual_machine vm(b.get(), reg);
  rv::tensor heap = vm["main"](3).as<rv::tensor>();
  CHECK(heap.shape() == rv::shape{3});
  CHECK(heap.dtype() == rv::dtype::int64());
  CHECK(heap.device() == rv::device::cpu());
  CHECK(heap.data<std::int64_t>()[2] == 0);  // zeroed, never garbage
  CHECK(call(reg, "vm.builtin.alloc_shape_heap", {rv::value(0)})->as<rv::tensor>().numel() == 0);
  CHECK(error_of(vm["main"].try_call(std::vector<rv::value>{rv::value(-1)}), rv::error_kind::value)
            .find("vm.builtin.alloc_shape_heap: size is -1; it must be 0 or more") == 0);
  CHECK(error_of(call(reg, "vm.builtin.alloc_shape_heap", {rv::value(2.5)}), rv::error_kind::type) ==
        "vm.builtin.alloc_shape_heap: size must be an int64, but got float64 2.5");
  CHECK(error_of(call(reg, "vm.builtin.alloc_shape_heap", {}), rv::error_kind::type) ==
        "vm.builtin.alloc_shape_heap: expects ([ctx,] size) but got 0 arguments");
  CHECK(error_of(call(reg, "vm.builtin.alloc_shape_heap", {rv::value(1), rv::value(2)}), rv::error_kind::type) ==
        "vm.builtin.alloc_shape_heap: expects ([ctx,] size) but got 2 arguments");
  CHECK(error_of(call(reg, "vm.builtin.alloc_shape_heap", {rv::value(std::int64_t{1} << 62)}), rv::error_kind::value)
            .find("elements of int64 overflow int64 bytes") != std::string::npos);
}

TEST_CASE("shape_of returns the tensor's own shape") {
  rv::registry reg;
  rv::tensor t = rv::tensor::empty({4, 5, 6}, rv::dtype::int8());
  rv::shape s = call(reg, "vm.builtin.shape_of", {rv::value(t)})->as<rv::shape>();
  CHECK(s == rv::shape{4, 5, 6});
  CHECK(s.get() == t.shape().get());  // no new shape object
  CHECK(error_of(call(reg, "vm.builtin.shape_of", {rv::value(rv::shape{1})}), rv::error_kind::type) ==
        "vm.builtin.shape_of: argument 0 expects tensor but got shape");
}

TEST_CASE("store_shape and load_shape check the heap and every index") {
  rv::registry reg;
  rv::tensor heap = call(reg, "vm.builtin.alloc_shape_heap", {rv::value(4)})->as<rv::tensor>();
  CHECK(call(reg, "vm.builtin.store_shape", {rv::value(rv::shape{7, 8}), rv::value(heap), rv::value(3), rv::value(1)})->is_null());
  CHECK(heap.data<std::int64_t>()[3] == 7);
  CHECK(heap.data<std::int64_t>()[1] == 8);
  CHECK(call(reg, "vm.builtin.load_shape", {rv::value(heap), rv::value(1), rv::value(3), rv::value(1)})->as<rv::shape>() ==
        rv::shape{8, 7, 8});
  CHECK(call(reg, "vm.builtin.load_shape", {rv::value(heap)})->as<rv::shape>() == rv::shape{});
  CHECK(error_of(call(reg, "vm.builtin.store_shape", {rv::value(rv::shape{7, 8}), rv::value(heap), rv::value(0)}),
                 rv::error_kind::value) ==
        "vm.builtin.store_shape: the shape has 2 dimensions but 1 heap indices were given");
  CHECK(error_of(call(reg, "vm.builtin.store_shape", {rv::value(rv::shape{7}), rv::value(heap), rv::value(4)}),
                 rv::error_kind::value) ==
        "vm.builtin.store_shape: index 0 is slot 4, outside the shape heap of 4 slots");
  CHECK(error_of(call(reg, "vm.builtin.load_shape", {rv::value(heap), rv::value(-1)}), rv::error_kind::value) ==
        "vm.builtin.load_shape: index 0 is slot -1, outside the shape heap of 4 slots");
  CHECK(error_of(call(reg, "vm.builtin.load_shape", {rv::value(heap), rv::value("x")}), rv::error_kind::type) ==
        "vm.builtin.load_shape: index 0 must be an int64 slot number, but got string");
  rv::tensor not_a_heap = rv::tensor::empty({2, 2}, rv::dtype::int64());
  CHECK(error_of(call(reg, "vm.builtin.load_shape", {rv::value(not_a_heap), rv::value(0)}), rv::error_kind::value) ==
        "vm.builtin.load_shape: the shape heap must be a 1-d int64 host tensor, but got [2, 2] int64 on cpu:0");
  rv::tensor floats = rv::tensor::empty({2}, rv::dtype::float32());
  CHECK(error_of(call(reg, "vm.builtin.store_shape", {rv::value(rv::shape{1}), rv::value(floats), rv::value(0)}),
                 rv::error_kind::value)
            .find("must be a 1-d int64 host tensor, but got [2] float32") != std::string::npos);
  CHECK(error_of(call(reg, "vm.builtin.store_shape", {rv::value(1), rv::value(heap), rv::value(0)}), rv::error_kind::type) ==
        "vm.builtin.store_shape: argument 0 expects shape but got int64 1");
  // A failed store writes nothing.
  CHECK(!call(reg, "vm.builtin.store_shape", {rv::value(rv::shape{5, 6}), rv::value(heap), rv::value(0), rv::value(9)}).ok());
  CHECK(heap.data<std::int64_t>()[0] == 0);
}

TEST_CASE("a read-only heap cannot be written") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.store_shape", {b.c(b.add_shape({1})), b.c(b.add_tensor<std::int64_t>({0, 0}, {2})), b.imm(0)});
    b.emit_ret(b.void_arg());
  }
  rv::registry reg;
  rv::virtual_machine vm(b.get(), reg);
  CHECK(error_of(vm.try_invoke("main", {}), rv::error_kind::value).find("vm.builtin.store_shape: the shape heap is read-only") ==
        0);
}

TEST_CASE("copy and null_value") {
  rv::registry reg;
  rv::tensor t = rv::tensor::empty({1}, rv::dtype::int8());
  CHECK(call(reg, "vm.builtin.copy", {rv::value(t)})->as<rv::tensor>().get() == t.get());  // the reference, not the data
  CHECK(call(reg, "vm.builtin.null_value", {})->is_null());
  CHECK(error_of(call(reg, "vm.builtin.copy", {}), rv::error_kind::type) == "vm.builtin.copy: expects 1 argument but got 0");
}

TEST_CASE("print writes to the VM's print sink when given %vm, else to stdout") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("vm.builtin.print", {b.vm_state(), b.r(0), b.imm(3), b.c(b.add_string("s"))});
    b.emit_call("vm.builtin.print", {b.vm_state()});
    b.emit_ret(b.r(0));
  }
  captured_vm c(b.get());
  c.vm["main"](rv::shape{2, 3});
  CHECK(c.printed == "shape[2, 3] 3 s\n\n");
  CHECK(call(c.reg, "vm.builtin.print", {rv::value("to stdout")})->is_null());
}

TEST_CASE("a strided shape heap is refused, not written out of bounds") {
  std::int64_t data[4] = {0, 0, 0, 0};
  std::int64_t shape[1] = {4};
  std::int64_t strides[1] = {2};
  DLManagedTensor m{};
  m.dl_tensor.data = data;
  m.dl_tensor.device = {kDLCPU, 0};
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype = {kDLInt, 64, 1};
  m.dl_tensor.shape = shape;
  m.dl_tensor.strides = strides;
  m.deleter = nullptr;
  rv::tensor heap = rv::tensor::from_dlpack(&m);
  rv::registry reg;
  CHECK(error_of(call(reg, "vm.builtin.store_shape", {rv::value(rv::shape{9}), rv::value(heap), rv::value(3)}),
                 rv::error_kind::value) == "vm.builtin.store_shape: the shape heap must be compact and 8-byte aligned");
  CHECK(data[3] == 0);
}

TEST_CASE("a shape heap larger than memory is an error, not a crash") {
  rv::registry reg;
  CHECK(error_of(call(reg, "vm.builtin.alloc_shape_heap", {rv::value(std::int64_t{1} << 58)}), rv::error_kind::runtime) ==
        "tensor::empty: cannot allocate 2305843009213693952 bytes");
}
