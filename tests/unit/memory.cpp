// SPDX-License-Identifier: Apache-2.0
// runtime/allocator.hpp: naive, pooled and arena allocators, storage, views, device copies.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <relaxvm.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../support/foreign.hpp"
#include "../support/probe.hpp"

namespace rv = relaxvm;
using relaxvm_test::contains;
using relaxvm_test::probe;

namespace {
bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }
std::string message(const rv::error& e) { return std::string(e.message()); }
}  // namespace

TEST_CASE("the naive allocator goes to the system every time") {
  rv::allocator a = rv::allocator::naive();
  CHECK(a.kind_name() == "naive");
  void* p = *a.try_allocate(100, 64);
  void* q = *a.try_allocate(10, 256);
  CHECK(aligned(p, 64));
  CHECK(aligned(q, 256));
  CHECK(a.stats().bytes_in_use == 110);
  a.deallocate(p, 100, 64);
  a.deallocate(q, 10, 256);
  const rv::allocator_stats s = a.stats();
  CHECK(s.bytes_in_use == 0);
  CHECK(s.peak_bytes_in_use == 110);
  CHECK(s.system_allocations == 2);
  CHECK(s.system_frees == 2);
}

TEST_CASE("the pooled allocator caches by rounded size, and release() gives the cache back") {
  CHECK(rv::detail::pooled_allocator::bucket_of(1) == 64);
  CHECK(rv::detail::pooled_allocator::bucket_of(100) == 128);
  CHECK(rv::detail::pooled_allocator::bucket_of(4095) == 4096);
  CHECK(rv::detail::pooled_allocator::bucket_of(4097) == 8192);
  rv::allocator a = rv::allocator::pooled();
  void* p = *a.try_allocate(100, 64);
  a.deallocate(p, 100, 64);
  CHECK(a.stats().bytes_cached == 128);
  void* q = *a.try_allocate(120, 64);  // the same bucket: served from the cache
  CHECK(q == p);
  CHECK(a.stats().cache_hits == 1);
  CHECK(a.stats().system_allocations == 1);
  a.deallocate(q, 120, 64);
  a.release();
  CHECK(a.stats().bytes_cached == 0);
  CHECK(a.stats().system_frees == 1);
  void* big = *a.try_allocate(100, 4096);  // alignment beyond the pool's: straight to the system
  CHECK(aligned(big, 4096));
  a.deallocate(big, 100, 4096);
  CHECK(a.stats().bytes_cached == 0);
}

TEST_CASE("a pooled allocator with a cache limit frees what does not fit") {
  rv::allocator a = rv::allocator::pooled(4096);
  void* p = *a.try_allocate(4096, 64);
  void* q = *a.try_allocate(4096, 64);
  a.deallocate(p, 4096, 64);
  a.deallocate(q, 4096, 64);
  CHECK(a.stats().bytes_cached == 4096);
  CHECK(a.stats().system_frees == 1);
}

TEST_CASE("the arena allocates inside the caller's buffer, and says when it is full") {
  alignas(64) static std::byte buffer[1024];
  rv::allocator a = rv::allocator::arena(buffer);
  CHECK(a.kind_name() == "arena");
  void* p = *a.try_allocate(100, 64);
  void* q = *a.try_allocate(100, 64);
  CHECK(p == buffer);
  CHECK(q == buffer + 128);  // aligned to 64
  rv::result<void*> full = a.try_allocate(900, 64);
  REQUIRE_FALSE(full.ok());
  CHECK(full.error().kind() == rv::error_kind::runtime);
  CHECK(message(full.error()) ==
        "arena allocator: exhausted: 900 bytes (aligned to 64) do not fit in the 796 bytes left of 1024; give the "
        "arena a larger buffer (its peak use is in stats())");
  a.deallocate(q, 100, 64);  // the last block comes back at once
  CHECK(a.stats().bytes_in_use == 128);  // the top: p and the padding after it
  void* r = *a.try_allocate(100, 64);
  CHECK(r == q);
  a.deallocate(p, 100, 64);  // not the last: reclaimed when nothing is live
  a.deallocate(r, 100, 64);
  CHECK(a.stats().bytes_in_use == 0);
  CHECK(a.stats().peak_bytes_in_use == 228);
  CHECK(a.stats().system_allocations == 0);
  CHECK(*a.try_allocate(1024, 64) == buffer);
}

TEST_CASE("storage: views with bounds, alignment and dtype checks") {
  rv::allocator a = rv::allocator::pooled();
  rv::object_ref<rv::storage_object> st = *rv::make_storage(a, 256, 64, rv::device::cpu());
  CHECK(st->size == 256);
  CHECK(aligned(st->data, 64));
  rv::tensor t = *rv::view_storage(st, 64, rv::shape{4, 4}, rv::dtype::float32());
  CHECK(t.byte_offset() == 64);
  CHECK(t.raw_data() == static_cast<char*>(st->data) + 64);
  CHECK(t.data<float>() != nullptr);
  auto fails = [&](std::int64_t offset, rv::shape s, rv::dtype d) { return message(rv::view_storage(st, offset, s, d).error()); };
  CHECK(fails(200, {4, 4}, rv::dtype::float32()) ==
        "alloc_tensor: storage allocation failure, attempted to allocate 64 at offset 200 in region that is 256 bytes");
  CHECK(fails(-8, {1}, rv::dtype::float32()).find("at offset -8") != std::string::npos);
  CHECK(fails(2, {1}, rv::dtype::float32()) == "alloc_tensor: offset 2 is not aligned for float32 (4 bytes)");
  CHECK(fails(0, {1}, rv::dtype(kDLFloat, 12)) == "alloc_tensor: float12 is not a valid tensor element type");
  CHECK(fails(0, {std::int64_t{1} << 62, 8}, rv::dtype::float32()).find("overflows int64") != std::string::npos);
  CHECK(fails(std::numeric_limits<std::int64_t>::max(), {1}, rv::dtype::int8()).find("storage allocation failure") !=
        std::string::npos);
  // A view keeps its storage (and the storage its allocator) alive.
  rv::tensor kept = t;
  st.reset();
  t = rv::tensor();
  a = rv::allocator();
  kept.data<float>()[15] = 1.5f;
  CHECK(kept.data<float>()[15] == 1.5f);
}

TEST_CASE("empty tensors and copies across devices") {
  rv::allocator a0 = rv::allocator::pooled(), a1 = rv::allocator::naive();
  rv::tensor t = *rv::empty_tensor({2, 3}, rv::dtype::int32(), a0, rv::device::cpu(0));
  for (int i = 0; i < 6; ++i) t.data<std::int32_t>()[i] = i * 7;
  rv::tensor u = *rv::copy_to(t, rv::device::cpu(1), a1);
  CHECK(u.device() == rv::device::cpu(1));
  CHECK(u.device().device_id == 1);
  CHECK(u.raw_data() != t.raw_data());
  CHECK(u.data<std::int32_t>()[5] == 35);
  CHECK(a1.stats().bytes_in_use == 24);
  CHECK(message(rv::copy_to(t, rv::device(kDLCUDA, 0), a1).error()) ==
        "copy_to: cannot copy from cpu:0 to cuda:0; relaxvm runs on host (cpu) devices only");
  CHECK(message(rv::copy_to(rv::tensor(), rv::device::cpu(), a1).error()) == "copy_to: the tensor is undefined");
}

TEST_CASE("a VM's devices") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    b.emit_ret(b.void_arg());
  }
  rv::registry reg;
  rv::vm_options opts;
  opts.devices = {{rv::device::cpu(0), rv::allocator::pooled()}, {rv::device(kDLCUDA, 0), rv::allocator::naive()}};
  rv::result<rv::virtual_machine> vm = rv::virtual_machine::create(b.get(), reg, opts);
  REQUIRE_FALSE(vm.ok());
  CHECK(message(vm.error()) == "virtual_machine: device 1 is cuda:0; relaxvm runs on host (cpu) devices only (any device id)");
  opts.devices = {{rv::device::cpu(0), rv::allocator()}};
  CHECK(message(rv::virtual_machine::create(b.get(), reg, opts).error()) == "virtual_machine: device 0 has no allocator");
  rv::virtual_machine plain(b.get(), reg);
  REQUIRE(plain.context().devices().size() == 1);
  CHECK(plain.context().host_device() == rv::device::cpu());
  CHECK(plain.context().devices()[0].allocator.kind_name() == "pooled");
}

// ---- the memory builtins ---------------------------------------------------------------------

namespace {
rv::vm_options two_cpus(rv::allocator a0, rv::allocator host) {
  rv::vm_options o;
  o.devices = {{rv::device::cpu(1), std::move(a0)}, {rv::device::cpu(0), std::move(host)}};
  o.reuse_allocations = false;  // what the allocators see is what each call does
  return o;
}
}  // namespace

TEST_CASE("alloc_storage takes a device index into the VM's devices; -1 is the host") {
  rv::allocator dev = rv::allocator::naive(), host = rv::allocator::pooled();
  probe p("vm.builtin.alloc_storage", 3, true, two_cpus(dev, host));
  rv::value st = p.ok({rv::shape{100}, 0, rv::dtype::uint8()});
  CHECK(dev.stats().bytes_in_use == 100);
  CHECK(p.ok({rv::shape{4, 5}, -1, rv::dtype::float32()}).kind() == rv::value_kind::object);
  CHECK(host.stats().allocations == 1);
  CHECK(host.stats().bytes_in_use == 0);  // dropped at once: back in the cache
  CHECK(host.stats().bytes_cached == 128);
  p.ok({rv::shape{0}, 1, rv::dtype::float64()});  // empty storage is fine
  CHECK(p.fails({rv::shape{8}, 2, rv::dtype::uint8()}, rv::error_kind::value) ==
        "vm.builtin.alloc_storage: device index 2 is out of the VM's 2 devices (use -1 for the host)");
  CHECK(p.fails({rv::shape{8}, -2, rv::dtype::uint8()}, rv::error_kind::value) ==
        "vm.builtin.alloc_storage: device index -2 is out of the VM's 2 devices (use -1 for the host)");
  CHECK(p.fails({rv::shape{std::int64_t{1} << 40, std::int64_t{1} << 40}, 0, rv::dtype::uint8()}, rv::error_kind::value) ==
        "vm.builtin.alloc_storage: the size of shape [1099511627776, 1099511627776] x uint8 is negative or overflows int64");
  CHECK(p.fails({rv::shape{std::int64_t{1} << 61}, 0, rv::dtype::float64()}, rv::error_kind::value) ==
        "vm.builtin.alloc_storage: the size of shape [2305843009213693952] x float64 is negative or overflows int64");
  CHECK(p.fails({rv::shape{-1}, 0, rv::dtype::uint8()}, rv::error_kind::value) ==
        "vm.builtin.alloc_storage: the size of shape [-1] x uint8 is negative or overflows int64");
  CHECK(p.fails({rv::shape{8}, 0, rv::dtype(kDLFloat, 7)}, rv::error_kind::value) ==
        "vm.builtin.alloc_storage: float7 is not a valid element type");
  CHECK(p.fails({rv::shape{std::int64_t{1} << 60}, 0, rv::dtype::uint8()}, rv::error_kind::runtime) ==
        "naive allocator: cannot allocate 1152921504606846976 bytes: more than the largest request that goes to the "
        "system (1099511627776 bytes, RELAXVM_MAX_SYSTEM_REQUEST)");
  CHECK(p.fails({8, 0, rv::dtype::uint8()}, rv::error_kind::type) ==
        "vm.builtin.alloc_storage: argument 1 expects shape but got int64 8");
  probe scoped("vm.builtin.alloc_storage", 4, true);
  scoped.ok({rv::shape{8}, -1, rv::dtype::uint8(), "global"});
  CHECK(scoped.fails({rv::shape{8}, -1, rv::dtype::uint8(), "shared"}, rv::error_kind::value) ==
        "vm.builtin.alloc_storage: memory scope 'shared' is not supported; use \"global\"");
  CHECK(scoped.fails({rv::shape{8}, -1, rv::dtype::uint8(), 3}, rv::error_kind::type) ==
        "vm.builtin.alloc_storage: the memory scope must be a string, but got int64 3");
  st = rv::value();
  CHECK(dev.stats().bytes_in_use == 0);
}

TEST_CASE("alloc_tensor views storage at an offset, checked") {
  rv::registry reg;
  probe storage("vm.builtin.alloc_storage", 3, true);
  rv::value st = storage.ok({rv::shape{256}, -1, rv::dtype::uint8()});
  probe p("vm.builtin.alloc_tensor", 4);
  rv::tensor a = p.ok({st, 0, rv::shape{4, 4}, rv::dtype::float32()}).as<rv::tensor>();
  rv::tensor b = p.ok({st, 64, rv::shape{4, 4}, rv::dtype::float32()}).as<rv::tensor>();
  CHECK(b.byte_offset() == 64);
  CHECK(a.raw_data() == static_cast<char*>(b.raw_data()) - 64);
  a.data<float>()[0] = 3.0f;
  CHECK(p.ok({st, 192, rv::shape{8}, rv::dtype::float64()}).as<rv::tensor>().device() == rv::device::cpu());
  CHECK(p.fails({st, 200, rv::shape{4, 4}, rv::dtype::float32()}, rv::error_kind::value) ==
        "vm.builtin.alloc_tensor: storage allocation failure, attempted to allocate 64 at offset 200 in region that is "
        "256 bytes");
  CHECK(p.fails({st, 2, rv::shape{1}, rv::dtype::float32()}, rv::error_kind::value) ==
        "vm.builtin.alloc_tensor: offset 2 is not aligned for float32 (4 bytes)");
  CHECK(p.fails({st, 0, rv::shape{1}, rv::dtype(kDLInt, 3)}, rv::error_kind::value) ==
        "vm.builtin.alloc_tensor: int3 is not a valid tensor element type");
  CHECK(contains(p.fails({st, 0, rv::shape{std::int64_t{1} << 62, 4}, rv::dtype::float32()}, rv::error_kind::value),
                 "overflows int64"));
  CHECK(p.fails({rv::tensor::empty({4}, rv::dtype::uint8()), 0, rv::shape{1}, rv::dtype::uint8()}, rv::error_kind::type) ==
        "vm.builtin.alloc_tensor: argument 0 expects relaxvm.storage but got tensor");
  CHECK(p.fails({rv::object_ref<rv::object>(), 0, rv::shape{1}, rv::dtype::uint8()}, rv::error_kind::type) ==
        "vm.builtin.alloc_tensor: argument 0 expects relaxvm.storage but got null");
  // The tensors keep the storage alive after the last reference to it goes.
  st = rv::value();
  storage.last_good.clear();
  p.last_good.clear();
  CHECK(a.data<float>()[0] == 3.0f);
}

TEST_CASE("kill_object drops the register's reference") {
  rv::allocator host = rv::allocator::naive();
  rv::vm_options o;
  o.devices = {{rv::device::cpu(), host}};
  o.reuse_allocations = false;  // else the storage is kept for the next run
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({64})), b.imm(0), b.c(b.add_dtype(rv::dtype::uint8()))},
                b.r(0));
    b.emit_call("vm.builtin.kill_object", {b.r(0)}, b.r(0));
    b.emit_call("test.bytes_in_use", {}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::registry reg;
  reg.def("test.bytes_in_use", [&] { return host.stats().bytes_in_use; });
  rv::virtual_machine vm(b.get(), reg, o);
  CHECK(vm.invoke("main", {}).as<std::int64_t>() == 0);
  CHECK(host.stats().allocations == 1);
}

TEST_CASE("vm_options::reuse_allocations: a storage whose views the VM keeps is made again only when they are in use") {
  // One storage and `views` views of it. The storage lists up to max_kept_views views that the
  // VM keeps; one more pins it (it might be in use), so it is made again on every run.
  for (const std::int64_t views : {std::int64_t{1}, std::int64_t{rv::storage_object::max_kept_views},
                                   std::int64_t{rv::storage_object::max_kept_views + 1}}) {
    CAPTURE(views);
    rv::allocator pool = rv::allocator::pooled();
    rv::vm_options o;
    o.devices = {{rv::device::cpu(), pool}};
    rv::exec_builder b;
    {
      auto fn = b.function("main", 0);
      b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({64})), b.imm(0), b.c(b.add_dtype(rv::dtype::uint8()))},
                  b.r(0));
      for (std::int64_t i = 0; i < views; ++i)
        b.emit_call("vm.builtin.alloc_tensor", {b.r(0), b.imm(16 * (i % 4)), b.c(b.add_shape({4})), b.c(b.add_dtype(rv::dtype::float32()))},
                    b.r(1 + i));
      b.emit_ret(b.r(views));
    }
    rv::registry reg;
    rv::virtual_machine vm(b.get(), reg, o);
    const rv::tensor first = vm.invoke("main", {}).as<rv::tensor>();
    const rv::tensor held = vm.invoke("main", {}).as<rv::tensor>();  // held: its storage is not free
    CHECK(held.raw_data() != first.raw_data());
    held.data<float>()[0] = 42.0f;
    const std::int64_t before = pool.stats().allocations;
    for (int run = 0; run < 3; ++run) CHECK(vm.invoke("main", {}).as<rv::tensor>().shape() == rv::shape{4});
    const bool listed = views <= static_cast<std::int64_t>(rv::storage_object::max_kept_views);
    // The first of the three runs makes a storage (the kept one is pinned by `held`), then the
    // kept one serves when every view of it is listed.
    CHECK(pool.stats().allocations - before == (listed ? 1 : 3));
    CHECK(held.data<float>()[0] == 42.0f);
    vm.release_kept();
  }
}

TEST_CASE("reshape is a view with the element count checked") {
  probe p("vm.builtin.reshape", 2);
  rv::tensor t = rv::tensor::empty({2, 6}, rv::dtype::int32());
  t.data<std::int32_t>()[7] = 77;
  rv::tensor r = p.ok({t, rv::shape{3, 4}}).as<rv::tensor>();
  CHECK(r.shape() == rv::shape{3, 4});
  CHECK(r.raw_data() == t.raw_data());
  CHECK(r.data<std::int32_t>()[7] == 77);
  CHECK(p.ok({t, rv::shape{5}}).as<rv::tensor>().numel() == 5);  // smaller views are allowed, as in the reference
  CHECK(p.fails({t, rv::shape{13}}, rv::error_kind::value) ==
        "vm.builtin.reshape: View with shape [13] would have a size of 13 elements, but the tensor has 12");
  CHECK(p.fails({t, rv::shape{-1, 4}}, rv::error_kind::value) ==
        "vm.builtin.reshape: shape [-1, 4] has a negative dimension or overflows int64");
  CHECK(p.fails({t, rv::shape{std::int64_t{1} << 32, std::int64_t{1} << 32}}, rv::error_kind::value) ==
        "vm.builtin.reshape: shape [4294967296, 4294967296] has a negative dimension or overflows int64");
  CHECK(p.fails({rv::shape{2}, rv::shape{2}}, rv::error_kind::type) ==
        "vm.builtin.reshape: argument 0 expects tensor but got shape");
}

TEST_CASE("ensure_zero_offset folds the offset into the pointer, or copies") {
  rv::allocator a = rv::allocator::naive();
  rv::object_ref<rv::storage_object> st = *rv::make_storage(a, 256, 64, rv::device::cpu());
  probe p("vm.builtin.ensure_zero_offset", 1);
  rv::tensor at0 = *rv::view_storage(st, 0, rv::shape{4}, rv::dtype::int32());
  CHECK(p.ok({at0}).as<rv::tensor>().get() == at0.get());
  rv::tensor at64 = *rv::view_storage(st, 64, rv::shape{4}, rv::dtype::int32());
  at64.data<std::int32_t>()[0] = 9;
  rv::tensor folded = p.ok({at64}).as<rv::tensor>();
  CHECK(folded.byte_offset() == 0);
  CHECK(folded.raw_data() == at64.raw_data());  // a view: 64-byte aligned
  rv::tensor at4 = *rv::view_storage(st, 4, rv::shape{4}, rv::dtype::int32());
  at4.data<std::int32_t>()[1] = 5;
  rv::tensor copied = p.ok({at4}).as<rv::tensor>();
  CHECK(copied.byte_offset() == 0);
  CHECK(copied.raw_data() != at4.raw_data());
  CHECK(copied.data<std::int32_t>()[1] == 5);
  CHECK(p.fails({1}, rv::error_kind::type) == "vm.builtin.ensure_zero_offset: argument 0 expects tensor but got int64 1");
}

TEST_CASE("to_device copies between the VM's CPU devices, from their allocators") {
  constexpr std::int64_t cpu = kDLCPU, cuda = kDLCUDA;
  rv::allocator dev = rv::allocator::pooled(), host = rv::allocator::naive();
  probe p("vm.builtin.to_device", 3, true, two_cpus(dev, host));
  rv::tensor t = rv::tensor::empty({3}, rv::dtype::float64());
  for (int i = 0; i < 3; ++i) t.data<double>()[i] = i + 0.5;
  rv::tensor on1 = p.ok({t, cpu, 1}).as<rv::tensor>();
  CHECK(on1.device() == rv::device::cpu(1));
  CHECK(on1.data<double>()[2] == 2.5);
  CHECK(dev.stats().allocations == 1);
  rv::tensor back = p.ok({on1, cpu, 0}).as<rv::tensor>();
  CHECK(back.device() == rv::device::cpu(0));
  CHECK(back.data<double>()[1] == 1.5);
  CHECK(host.stats().allocations == 1);
  CHECK(p.fails({t, cpu, 2}, rv::error_kind::value) == "vm.builtin.to_device: the VM has no device cpu:2");
  CHECK(p.fails({t, cuda, 0}, rv::error_kind::value) == "vm.builtin.to_device: the VM has no device cuda:0");
  CHECK(p.fails({t, 99, 0}, rv::error_kind::value) == "vm.builtin.to_device: device type 99 id 0 is not a DLPack device");
  CHECK(p.fails({t, cpu, -1}, rv::error_kind::value) == "vm.builtin.to_device: device type 1 id -1 is not a DLPack device");
  CHECK(p.fails({rv::shape{3}, cpu, 0}, rv::error_kind::type) ==
        "vm.builtin.to_device: argument 0 expects tensor but got shape");
  CHECK(p.fails({t, rv::device::cpu(), 0}, rv::error_kind::type) == "vm.builtin.to_device: the device type and id must be int64");
  // Without %vm in a program: the devices of the VM running it, as with %vm (a program cannot
  // reach the system heap by leaving %vm out).
  probe free("vm.builtin.to_device", 3);
  CHECK(free.ok({t, cpu, 0}).as<rv::tensor>().device() == rv::device::cpu(0));
  CHECK(free.fails({t, cpu, 5}, rv::error_kind::value) == "vm.builtin.to_device: the VM has no device cpu:5");
  // From C++ outside every VM: any CPU id, from the system.
  const rv::value outside[] = {t, cpu, 5};
  CHECK(rv::builtins::to_device(outside).value().as<rv::tensor>().device() == rv::device::cpu(5));
  const rv::value to_cuda[] = {t, cuda, 0};
  CHECK(std::string(rv::builtins::to_device(to_cuda).error().message()) ==
        "copy_to: cannot copy from cpu:0 to cuda:0; relaxvm runs on host (cpu) devices only");
  probe two("vm.builtin.to_device", 2);
  CHECK(two.fails({t, kDLCPU}, rv::error_kind::type) ==
        "vm.builtin.to_device: expects ([ctx,] tensor, device_type, device_id, [scope])");
}

TEST_CASE("memory_manager.clear gives the VM's cached memory back") {
  rv::allocator pool = rv::allocator::pooled();
  rv::vm_options o;
  o.devices = {{rv::device::cpu(), pool}};
  o.reuse_allocations = false;
  probe alloc("vm.builtin.alloc_storage", 3, true, o);
  alloc.ok({rv::shape{1000}, -1, rv::dtype::uint8()});
  CHECK(pool.stats().bytes_cached == 1024);
  probe clear("vm.builtin.memory_manager.clear", 0, true, o);
  clear.ok({});
  CHECK(pool.stats().bytes_cached == 0);
  CHECK(pool.stats().system_frees == 1);
  probe no_ctx("vm.builtin.memory_manager.clear", 1);
  CHECK(no_ctx.fails({1}, rv::error_kind::type) == "vm.builtin.memory_manager.clear: expects ([ctx])");
}

TEST_CASE("memory_manager.clear without a VM context releases every pooled allocator's cache") {
  rv::allocator a = rv::allocator::pooled(), b = rv::allocator::pooled();
  a.deallocate(*a.try_allocate(100, 64), 100, 64);
  b.deallocate(*b.try_allocate(5000, 64), 5000, 64);
  CHECK(a.stats().bytes_cached == 128);
  CHECK(b.stats().bytes_cached == 8192);
  probe global("vm.builtin.memory_manager.clear", 0);
  CHECK(global.ok({}).kind() == rv::value_kind::null);
  CHECK(a.stats().bytes_cached == 0);
  CHECK(b.stats().bytes_cached == 0);
  probe two("vm.builtin.memory_manager.clear", 1, true);
  CHECK(two.fails({1}, rv::error_kind::type) == "vm.builtin.memory_manager.clear: expects ([ctx])");
}

TEST_CASE("allocators refuse alignments that are not powers of two and sizes beyond PTRDIFF_MAX") {
  alignas(64) static std::byte buffer[256];
  for (rv::allocator a : {rv::allocator::naive(), rv::allocator::pooled(), rv::allocator::arena(buffer)}) {
    CAPTURE(a.kind_name());
    const std::string kind(a.kind_name());
    rv::result<void*> odd = a.try_allocate(16, 48);
    REQUIRE_FALSE(odd.ok());
    CHECK(odd.error().kind() == rv::error_kind::value);
    CHECK(message(odd.error()) == kind + " allocator: alignment 48 is not a power of two");
    CHECK(message(a.try_allocate(16, 0).error()) == kind + " allocator: alignment 0 is not a power of two");
    rv::result<void*> huge = a.try_allocate(SIZE_MAX - 100, 64);
    REQUIRE_FALSE(huge.ok());
    CHECK(huge.error().kind() == rv::error_kind::runtime);
    CHECK(message(huge.error()) == kind + " allocator: cannot allocate " + std::to_string(SIZE_MAX - 100) + " bytes");
    CHECK(a.stats().bytes_in_use == 0);
    CHECK(a.stats().allocations == 0);
  }
}

TEST_CASE("vector dtypes need only their scalar's alignment in storage") {
  rv::object_ref<rv::storage_object> st = *rv::make_storage(rv::allocator::naive(), 1024, 64, rv::device::cpu());
  const rv::dtype wide(kDLFloat, 32, 100);  // float32x100: 400 bytes, not a power of two
  rv::tensor t = *rv::view_storage(st, 4, rv::shape{2}, wide);
  CHECK(t.byte_offset() == 4);
  CHECK(message(rv::view_storage(st, 2, rv::shape{1}, wide).error()) ==
        "alloc_tensor: offset 2 is not aligned for float32x100 (4 bytes)");
  CHECK(contains(message(rv::view_storage(st, 4, rv::shape{3}, wide).error()), "storage allocation failure"));
}

TEST_CASE("the arena ignores blocks that are not its own") {
  alignas(64) static std::byte buffer[512];
  alignas(64) static std::byte elsewhere[64];
  rv::allocator a = rv::allocator::arena(buffer);
  void* p = *a.try_allocate(100, 64);
  a.deallocate(elsewhere, 64, 64);        // another buffer's block
  a.deallocate(buffer + 300, 64, 64);     // inside, but never handed out
  CHECK(a.stats().bytes_in_use == 100);
  CHECK(*a.try_allocate(64, 64) == buffer + 128);  // the top did not move
  a.deallocate(p, 100, 64);
}

TEST_CASE("two threads share one pooled allocator") {
  rv::allocator a = rv::allocator::pooled();
  constexpr int rounds = 2000;
  auto work = [&a](std::size_t size) {
    for (int i = 0; i < rounds; ++i) {
      void* p = *a.try_allocate(size, 64);
      static_cast<volatile char*>(p)[0] = 1;
      void* q = *a.try_allocate(size * 2, 64);
      a.deallocate(p, size, 64);
      a.deallocate(q, size * 2, 64);
    }
  };
  std::thread t1(work, 100), t2(work, 5000);
  t1.join();
  t2.join();
  const rv::allocator_stats s = a.stats();
  CHECK(s.allocations == 4 * rounds);
  CHECK(s.bytes_in_use == 0);
  CHECK(s.system_allocations <= 4);  // each thread's two sizes, then the cache serves them
  CHECK(s.cache_hits == s.allocations - s.system_allocations);
}

TEST_CASE("alloc_tensor and to_device check their memory scope too") {
  rv::registry reg;
  probe storage("vm.builtin.alloc_storage", 3, true);
  rv::value st = storage.ok({rv::shape{64}, -1, rv::dtype::uint8()});
  probe p("vm.builtin.alloc_tensor", 5);
  p.ok({st, 0, rv::shape{4}, rv::dtype::float32(), "global"});
  CHECK(p.fails({st, 0, rv::shape{4}, rv::dtype::float32(), "texture"}, rv::error_kind::value) ==
        "vm.builtin.alloc_tensor: memory scope 'texture' is not supported; use \"global\"");
  probe extra("vm.builtin.alloc_storage", 5, true);
  CHECK(extra.fails({rv::shape{8}, -1, rv::dtype::uint8(), "global", 1}, rv::error_kind::type) ==
        "vm.builtin.alloc_storage: too many arguments");
  probe dev("vm.builtin.to_device", 4, true);
  rv::tensor t = rv::tensor::empty({2}, rv::dtype::int32());
  CHECK(dev.ok({t, kDLCPU, 0, ""}).kind() == rv::value_kind::tensor);
  CHECK(dev.fails({t, kDLCPU, 0, "local"}, rv::error_kind::value) ==
        "vm.builtin.to_device: memory scope 'local' is not supported; use \"global\"");
}

TEST_CASE("strided tensors from DLPack are refused where a compact one is needed") {
  const rv::tensor strided = relaxvm_test::column_major_2x2();
  probe reshape("vm.builtin.reshape", 2);
  CHECK(reshape.fails({strided, rv::shape{4}}, rv::error_kind::value) == "vm.builtin.reshape: the tensor must be compact");
  probe zero("vm.builtin.ensure_zero_offset", 1);
  CHECK(zero.ok({strided}).as<rv::tensor>().get() == strided.get());  // no offset to fold: the tensor itself, strides and all
  CHECK(message(rv::copy_to(strided, rv::device::cpu(1), rv::allocator::naive()).error()) ==
        "copy_to: strided tensors are not supported");
  probe dev("vm.builtin.to_device", 3, true, two_cpus(rv::allocator::naive(), rv::allocator::naive()));
  CHECK(dev.fails({strided, kDLCPU, 1}, rv::error_kind::value) == "copy_to: strided tensors are not supported");
  CHECK(strided.data<const double>()[1] == 3.0);  // untouched
}

TEST_CASE("a kernel that calls alloc_tensor and then make_shape leaves no view listed in the kept storage") {
  // Issue 33, point 3: both builtins keep what they make in the slot of the Call running them
  // (the kernel's). make_shape used to overwrite the kept view without taking it off its
  // storage's list, so the next run read the freed view in kept_free_storage.
  rv::allocator pool = rv::allocator::pooled();
  rv::vm_options o;
  o.devices = {{rv::device::cpu(), pool}};
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({64})), b.imm(0), b.c(b.add_dtype(rv::dtype::uint8()))},
                b.r(0));
    b.emit_call("test.view_then_shape", {b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::registry reg;
  reg.def("test.view_then_shape", [](const rv::object_ref<rv::storage_object>& st) {
    const rv::tensor view = *rv::builtins::alloc_tensor(st, 0, rv::shape{4}, rv::dtype::float32(), {});
    CHECK(st->num_kept_views == 1);  // the kernel's slot keeps the view, listed in the kept storage
    const rv::value args[] = {rv::value(), rv::value(std::int64_t{1}), rv::value(std::int64_t{0}), rv::value(std::int64_t{4})};
    CHECK(*rv::builtins::make_shape(args) == rv::shape{4});  // the same slot now keeps the shape
    return static_cast<std::int64_t>(st->num_kept_views);
  });
  rv::virtual_machine vm(b.get(), reg, o);
  for (int run = 0; run < 3; ++run) CHECK(vm.invoke("main", {}).as<std::int64_t>() == 0);
  vm.release_kept();
  CHECK(pool.stats().bytes_in_use == 0);
}

TEST_CASE("the arena takes its memory back after a zero-byte block, in any order") {
  // Issue 33, point 4: a zero-byte block at the top stayed live once the block below it was
  // freed (its offset was then above the lowered top), so the arena never emptied again.
  alignas(64) static std::byte buffer[8192];
  rv::allocator a = rv::allocator::arena(buffer);
  void* p = *a.try_allocate(64, 64);
  void* z = *a.try_allocate(0, 64);
  a.deallocate(p, 64, 64);
  a.deallocate(z, 0, 64);
  CHECK(a.stats().bytes_in_use == 0);
  // Then blocks freed out of order are reclaimed once none is live, run after run: two 1 KiB
  // storages per run in an 8 KiB arena.
  for (int run = 0; run < 20; ++run) {
    CAPTURE(run);
    void* x = *a.try_allocate(1024, 64);
    void* y = *a.try_allocate(1024, 64);
    void* e = *a.try_allocate(0, 64);
    a.deallocate(x, 1024, 64);
    a.deallocate(e, 0, 64);
    a.deallocate(y, 1024, 64);
    CHECK(a.stats().bytes_in_use == 0);
  }
  // Zero-byte blocks in a VM's arena, run after run.
  rv::vm_options o;
  o.devices = {{rv::device::cpu(), a}};
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    const auto u8 = b.c(b.add_dtype(rv::dtype::uint8()));
    const auto alloc = [&](std::int64_t n, std::int64_t r) {
      b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({n})), b.imm(0), u8}, b.r(r));
    };
    const auto kill = [&](std::int64_t r) { b.emit_call("vm.builtin.kill_object", {b.r(r)}, b.r(r)); };
    alloc(1024, 0);
    alloc(0, 1);
    kill(0);  // the top block, with the zero-byte block above it
    kill(1);
    alloc(1024, 2);
    alloc(1024, 3);
    kill(2);  // not the top: reclaimed once nothing is live
    b.emit_ret(b.r(3));
  }
  rv::registry reg;
  rv::virtual_machine vm(b.get(), reg, o);
  for (int run = 0; run < 20; ++run) {
    CAPTURE(run);
    REQUIRE(vm.try_invoke("main", {}).ok());
    CHECK(a.stats().bytes_in_use == 0);
  }
}

namespace {
// main(n): t = null; while (n > 0) { t = make_tuple(t[, alloc_storage(1 KiB)]); n = n - 1 }; return t
rv::executable hoarding_program(bool storages) {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1, {"n"});
    b.emit_call("vm.builtin.null_value", {}, b.r(1));
    b.emit_call("test.gt0", {b.r(0)}, b.r(2));  // 1
    b.emit_if(b.r(2), storages ? 5 : 4);        // 2: false -> the return
    if (storages) {
      b.emit_call("vm.builtin.alloc_storage",
                  {b.vm_state(), b.c(b.add_shape({1024})), b.imm(-1), b.c(b.add_dtype(rv::dtype::uint8()))}, b.r(3));
      b.emit_call("vm.builtin.make_tuple", {b.r(1), b.r(3)}, b.r(1));
    } else {
      b.emit_call("vm.builtin.make_tuple", {b.r(1)}, b.r(1));
    }
    b.emit_call("test.dec", {b.r(0)}, b.r(0));
    b.emit_goto(storages ? -5 : -4);  // -> 1
    b.emit_ret(b.r(1));
  }
  return b.get();
}
rv::registry hoarding_registry() {
  rv::registry reg;
  reg.def("test.gt0", [](std::int64_t n) { return n > 0; });
  reg.def("test.dec", [](std::int64_t n) { return n - 1; });
  return reg;
}
}  // namespace

TEST_CASE("vm_options::max_memory bounds what a program's tensors, storages and objects hold at once") {
  // Issue 33, point 10: a loop that keeps what it makes ran until the process died.
  const rv::registry reg = hoarding_registry();
  for (const bool storages : {false, true}) {
    CAPTURE(storages);
    rv::allocator pool = rv::allocator::pooled();
    rv::vm_options o;
    o.devices = {{rv::device::cpu(), pool}};
    o.max_memory = std::int64_t{256} << 10;
    rv::virtual_machine vm(hoarding_program(storages), reg, o);
    const rv::result<rv::value> r = vm.try_invoke("main", std::vector<rv::value>{rv::value(std::int64_t{1} << 40)});
    REQUIRE_FALSE(r.ok());
    const std::string m = message(r.error());
    CAPTURE(m);
    CHECK(r.error().kind() == rv::error_kind::runtime);
    CHECK(contains(m, storages ? "memory budget exceeded: 1024 bytes for a storage would bring what the VM holds to "
                               : "memory budget exceeded: 64 bytes for an object would bring what the VM holds to "));
    CHECK(contains(m, "bytes, over its limit of 262144 bytes (vm_options::max_memory: tensors, storages and objects, "
                      "all devices)"));
    CHECK(contains(m, storages ? "vm.builtin.alloc_storage" : "test.dec"));  // where it stopped
    // Everything was given back, and the VM is usable: under the budget a run is as before.
    CHECK(pool.stats().bytes_in_use <= 1024);  // at most the storage its instruction keeps
    const rv::value t = vm.invoke("main", {rv::value(std::int64_t{100})});
    CHECK(t.as<rv::tuple>().size() == (storages ? 2 : 1));
    // A larger budget lets the same run go further; a VM made without one has none to change.
    vm.set_memory_budget(std::int64_t{1} << 30);
    CHECK(vm.try_invoke("main", std::vector<rv::value>{rv::value(std::int64_t{150})}).ok());
  }
  rv::virtual_machine unmetered(hoarding_program(false), reg);
  CHECK(contains(message(unmetered.try_set_memory_budget(1024).error()), "made without a memory budget"));
  rv::vm_options negative;
  negative.max_memory = -1;
  CHECK(message(rv::virtual_machine::create(hoarding_program(false), reg, negative).error()) ==
        "virtual_machine: max_memory is -1; use 0 for no limit");
}

TEST_CASE("a storage request past the memory budget, or past the per-request limit, never reaches the system") {
  // Issue 33, point 10: a 2^62-byte storage request went to the system allocator.
  rv::exec_builder b;
  {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.alloc_storage",
                {b.vm_state(), b.c(b.add_shape({std::int64_t{1} << 62})), b.imm(0), b.c(b.add_dtype(rv::dtype::uint8()))},
                b.r(0));
    b.emit_ret(b.r(0));
  }
  const rv::executable exe = b.get();
  rv::registry reg;
  for (const std::int64_t budget : {std::int64_t{0}, std::int64_t{1} << 20}) {
    CAPTURE(budget);
    for (rv::allocator a : {rv::allocator::naive(), rv::allocator::pooled()}) {
      rv::vm_options o;
      o.devices = {{rv::device::cpu(), a}};
      o.max_memory = budget;
      rv::virtual_machine vm(exe, reg, o);
      const std::string m = message(vm.try_invoke("main", {}).error());
      CAPTURE(m);
      if (budget == 0) {
        CHECK(contains(m, std::string(a.kind_name()) + " allocator: cannot allocate 4611686018427387904 bytes: more than "
                          "the largest request that goes to the system (1099511627776 bytes, RELAXVM_MAX_SYSTEM_REQUEST)"));
      } else {
        CHECK(contains(m, "memory budget exceeded: 4611686018427387904 bytes for a storage"));
      }
      CHECK(a.stats().system_allocations == 0);
    }
  }
  CHECK_FALSE(rv::tensor::try_empty(rv::shape{std::int64_t{1} << 62}, rv::dtype::uint8()).ok());
}
