// SPDX-License-Identifier: Apache-2.0
// Prepared call sites (vm_options::prepare_calls, closure_object::prepare): the hook sees each
// call site's fixed arguments once, when the VM is made, and the version it picks runs that site.
// The shape and memory builtins' prepared versions must give exactly the results, the kept
// objects, the errors and the shape-heap writes of their general functions: the same programs run
// on two VMs, one preparing its calls and one not, on hand-picked and on random arguments
// (invalid codes, slots outside the heap, overflows, wrong kinds, changing shapes), and every
// outcome is compared.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <relaxvm.hpp>
#include <string>
#include <variant>
#include <vector>

namespace rv = relaxvm;

namespace {

// ---- the mechanism, with a packed function of the test's own --------------------------------

std::uint64_t seen_fixed = 0;
std::vector<std::string> seen_args;

rv::value general_f(std::span<const rv::value> args) { return rv::value(static_cast<std::int64_t>(args.size())); }
bool prepared_f(const rv::closure_object&, const rv::value*, std::uint32_t, rv::value& ret, std::optional<rv::error>&) {
  ret = rv::value(std::int64_t{-1});
  return true;
}
rv::packed_invoke prepare_f(const rv::value* args, std::uint32_t nargs, std::uint64_t fixed) {
  seen_fixed = fixed;
  seen_args.clear();
  for (std::uint32_t k = 0; k < nargs; ++k) seen_args.push_back(rv::to_string(args[k]));
  return nargs == 3 ? &prepared_f : nullptr;  // only sites with three arguments
}
constexpr auto test_table = rv::make_table(rv::packed<"test.f">(&general_f, &prepare_f));

rv::executable calls_of_f() {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("test.f", {b.r(0), b.imm(7), b.c(b.add_constant(std::string("s")))}, b.r(1));  // prepared
    b.emit_call("test.f", {b.imm(1), b.r(0)}, b.r(2));                                          // declined
    b.emit_call("test.f", {b.r(0), b.r(1), b.r(2)}, b.r(3));  // no fixed argument: not asked
    b.emit_call("vm.builtin.make_tuple", {b.r(1), b.r(2), b.r(3)}, b.r(4));
    b.emit_ret(b.r(4));
  }
  return b.get();
}

TEST_CASE("a prepare hook sees each site's fixed arguments once, and its invoke runs that site") {
  rv::registry reg;  // starts with the builtins
  reg.add_table(test_table);
  const rv::executable exe = calls_of_f();
  seen_fixed = 0;
  rv::virtual_machine vm(exe, reg);
  // The last site asked was the second: argument 0 fixed, the register argument still null.
  CHECK(seen_fixed == 0b01);
  CHECK(seen_args == std::vector<std::string>{"1", "null"});
  CHECK(rv::to_string(vm.invoke("main", {std::int64_t{5}})) == "(-1, 2, 3)");

  rv::vm_options general;
  general.prepare_calls = false;
  seen_fixed = 0;
  rv::virtual_machine plain(exe, reg, general);
  CHECK(seen_fixed == 0);  // never asked
  CHECK(rv::to_string(plain.invoke("main", {std::int64_t{5}})) == "(3, 2, 3)");
}

// ---- the builtins: two VMs, the same outcomes -------------------------------------------------

/// An argument of the call site: a register (a parameter of f, the index of the input) or a fixed
/// value (a constant; null is %void) or %vm.
struct vm_arg {};
using site_arg = std::variant<int, std::int64_t, rv::value, vm_arg>;

struct site {
  std::string builtin;
  std::vector<site_arg> args;
  int params = 0;
};

rv::executable program_of(const site& s) {
  rv::exec_builder b;
  {
    auto fn = b.function("f", s.params);
    std::vector<rv::arg> args;
    for (const site_arg& a : s.args) {
      if (const int* r = std::get_if<int>(&a)) args.push_back(b.r(*r));
      else if (const std::int64_t* i = std::get_if<std::int64_t>(&a)) args.push_back(b.c(b.add_constant(*i)));
      else if (const rv::value* v = std::get_if<rv::value>(&a)) args.push_back(v->is_null() ? b.void_arg() : b.c(b.add_constant(*v)));
      else args.push_back(b.vm_state());
    }
    b.emit_call(s.builtin, args, b.r(s.params));
    b.emit_ret(b.r(s.params));
  }
  return b.get();
}

/// What a run gave, without addresses: a storage by its size, a tensor by its view (shape, dtype,
/// offset into its storage), anything else printed.
std::string describe(const rv::value& v) {
  if (v.kind() == rv::value_kind::tensor) {
    const rv::tensor t = v.as<rv::tensor>();
    return "tensor " + rv::to_string(rv::value(t.shape())) + " " + rv::to_string(rv::value(t.dtype())) + " +" +
           std::to_string(t.byte_offset());
  }
  if (rv::value_traits<rv::object_ref<rv::storage_object>>::check(v))
    return "storage of " + std::to_string(static_cast<const rv::storage_object*>(v.raw_object())->size) + " bytes";
  return rv::to_string(v);
}

rv::tensor int_tensor(const std::vector<std::int64_t>& xs) {
  rv::tensor t = rv::tensor::empty({static_cast<std::int64_t>(xs.size())}, rv::dtype::int64());
  for (std::size_t i = 0; i < xs.size(); ++i) t.data<std::int64_t>()[i] = xs[i];
  return t;
}
std::vector<std::int64_t> slots_of(const rv::tensor& t) {
  return std::vector<std::int64_t>(t.data<const std::int64_t>(), t.data<const std::int64_t>() + t.numel());
}

/// Runs each input list on two VMs, one preparing its calls and one not, in order, and checks that
/// every outcome agrees: success or the error's kind and whole message, the result, the shape heaps
/// (int64 tensor inputs, one copy per VM) and, with the default allocator, whether the result is
/// the object the previous run gave (a kept one handed out again). Three times: with the default
/// pooled allocator, without reuse_allocations, and with an arena (from which nothing is kept).
struct twin {
  rv::registry reg;  // the builtins

  void run(const site& s, const std::vector<std::vector<rv::value>>& runs) {
    const rv::executable exe = program_of(s);
    for (int setup = 0; setup < 3; ++setup) {
      std::vector<std::byte> arenas[2] = {std::vector<std::byte>(1 << 16), std::vector<std::byte>(1 << 16)};
      const auto options = [&](int k) {
        rv::vm_options opts;
        opts.prepare_calls = k == 0;
        opts.reuse_allocations = setup != 1;
        if (setup == 2) opts.devices = {{rv::device::cpu(), rv::allocator::arena(arenas[k])}};
        return opts;
      };
      rv::virtual_machine vms[2] = {rv::virtual_machine(exe, reg, options(0)), rv::virtual_machine(exe, reg, options(1))};
      compare(s, runs, vms, setup == 0);
    }
  }

  static void compare(const site& s, const std::vector<std::vector<rv::value>>& runs, rv::virtual_machine* vms,
                      bool identity) {
    const rv::object* previous[2] = {nullptr, nullptr};
    for (const std::vector<rv::value>& inputs : runs) {
      std::string outcome[2];
      std::vector<std::vector<std::int64_t>> heaps[2];
      bool same_as_before[2] = {false, false};
      for (int k = 0; k < 2; ++k) {
        // Each VM gets its own copy of the int64 tensors (the shape heaps it writes).
        std::vector<rv::value> args;
        for (const rv::value& in : inputs) {
          if (in.kind() == rv::value_kind::tensor && in.as<rv::tensor>().dtype() == rv::dtype::int64() &&
              in.as<rv::tensor>().ndim() == 1)
            args.push_back(int_tensor(slots_of(in.as<rv::tensor>())));
          else
            args.push_back(in);
        }
        rv::result<rv::value> r = vms[k].try_invoke("f", args);
        if (r.ok()) {
          outcome[k] = "ok " + describe(*r);
          const rv::object* o = r->get_object();
          same_as_before[k] = o != nullptr && o == previous[k];
          previous[k] = o;  // compared by address only; the result is dropped before the next run
        } else {
          outcome[k] = "error " + std::string(rv::to_string(r.error().kind())) + ": " + std::string(r.error().message());
          previous[k] = nullptr;
        }
        for (const rv::value& a : args)
          if (a.kind() == rv::value_kind::tensor && a.as<rv::tensor>().dtype() == rv::dtype::int64())
            heaps[k].push_back(slots_of(a.as<rv::tensor>()));
      }
      INFO(s.builtin);
      CHECK(outcome[0] == outcome[1]);
      CHECK(heaps[0] == heaps[1]);
      if (identity) CHECK(same_as_before[0] == same_as_before[1]);
    }
  }
};

// Counts the sites the builtins prepare, to show the tests reach the prepared versions.
int prepared_count = 0;
template <rv::packed_prepare P>
rv::packed_invoke counting(const rv::value* args, std::uint32_t nargs, std::uint64_t fixed) {
  const rv::packed_invoke p = P(args, nargs, fixed);
  prepared_count += p != nullptr;
  return p;
}
void count_prepares(rv::registry& reg) {
  reg.find("vm.builtin.alloc_shape_heap")->get()->prepare = &counting<rv::builtins::detail::prepare_alloc_shape_heap>;
  reg.find("vm.builtin.match_shape")->get()->prepare = &counting<rv::builtins::detail::prepare_match_shape>;
  reg.find("vm.builtin.make_shape")->get()->prepare = &counting<rv::builtins::detail::prepare_make_shape>;
  reg.find("vm.builtin.shape_arith")->get()->prepare = &counting<rv::builtins::detail::prepare_shape_arith>;
  reg.find("vm.builtin.check_tensor_info")->get()->prepare = &counting<rv::builtins::detail::prepare_check_tensor_info>;
  reg.find("vm.builtin.alloc_storage")->get()->prepare = &counting<rv::builtins::detail::prepare_alloc_storage>;
  reg.find("vm.builtin.alloc_tensor")->get()->prepare = &counting<rv::builtins::detail::prepare_alloc_tensor>;
}

constexpr std::int64_t imm = 0, store = 1, skip = 2, load = 3;  // match codes
constexpr std::int64_t use_imm = 0, load_shape = 1;             // make codes
constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();

rv::value f32(std::vector<std::int64_t> dims) { return rv::tensor::empty(rv::shape(dims), rv::dtype::float32()); }
rv::value str(const char* s) { return rv::value(rv::string(s)); }

TEST_CASE("prepared shape builtins: the general functions' results, heap writes and errors") {
  twin t;
  count_prepares(t.reg);
  prepared_count = 0;
  const rv::value heap = int_tensor({0, 5, 0, 0});
  // match_shape(x, heap, n, ...): stores, loads, constants; a square; each mismatch; wrong input.
  t.run({"vm.builtin.match_shape", {0, 1, std::int64_t{2}, store, std::int64_t{0}, load, std::int64_t{0}, str("ctx: ")}, 2},
        {{f32({3, 3}), heap}, {f32({3, 4}), heap}, {f32({3}), heap}, {std::int64_t{1}, heap}, {f32({2, 2}), heap}});
  t.run({"vm.builtin.match_shape", {0, 1, std::int64_t{3}, load, std::int64_t{1}, imm, std::int64_t{4}, skip, std::int64_t{9}}, 2},
        {{rv::shape{5, 4, 1}, heap}, {rv::shape{5, 3, 1}, heap}, {rv::shape{6, 4, 1}, heap}, {rv::shape{5, 4, 1}, rv::value()}});
  // A load before a store of the same slot is not prepared: after the store, the general function
  // would see another value at the load, and fail there instead of at shape[2].
  t.run({"vm.builtin.match_shape",
         {0, 1, std::int64_t{3}, load, std::int64_t{2}, store, std::int64_t{2}, imm, std::int64_t{9}}, 2},
        {{f32({0, 7, 1}), heap}, {f32({1, 7, 9}), heap}, {f32({0, 7, 9}), heap}});
  // Slots outside the heap: the first store fails after nothing, the second after a store.
  t.run({"vm.builtin.match_shape", {0, 1, std::int64_t{2}, store, std::int64_t{3}, store, std::int64_t{4}}, 2},
        {{f32({1, 2}), heap}, {f32({1, 2}), int_tensor({0})}, {f32({1, 2}), f32({4})}});
  // make_shape(heap, n, ...): kept and handed out again, changed, a slot outside the heap, no heap.
  t.run({"vm.builtin.make_shape", {0, std::int64_t{2}, load_shape, std::int64_t{1}, use_imm, std::int64_t{-3}}, 1},
        {{heap}, {heap}, {int_tensor({0, 6})}, {int_tensor({0, 6})}, {int_tensor({1})}, {rv::value()}, {f32({2})}});
  t.run({"vm.builtin.make_shape", {rv::value(), std::int64_t{1}, use_imm, std::int64_t{8}}, 0}, {{}, {}, {}});
  // shape_arith: overflow and division by zero after earlier groups wrote; slots outside.
  const std::int64_t mul = 2, floordiv = 3, add = 0;
  t.run({"vm.builtin.shape_arith",
         {0, mul, std::int64_t{2}, load_shape, std::int64_t{1}, use_imm, std::int64_t{3}, add, std::int64_t{3},
          load_shape, std::int64_t{2}, load_shape, std::int64_t{0}},
         1},
        {{int_tensor({1, 5, 0, 0})}, {int_tensor({i64max, 5, 0, 0})}, {int_tensor({1, i64max, 0, 0})}, {int_tensor({1, 2, 3})}});
  t.run({"vm.builtin.shape_arith",
         {0, add, std::int64_t{2}, use_imm, std::int64_t{1}, use_imm, std::int64_t{1}, floordiv, std::int64_t{3},
          load_shape, std::int64_t{0}, load_shape, std::int64_t{1}},
         1},
        {{int_tensor({9, 2, 0, 0})}, {int_tensor({9, 0, 0, 0})}, {int_tensor({i64min, -1, 0, 0})}});
  // A temporary slot used again, as shape_lower does for two composites in one call: t = n * 2,
  // A = t + 1, t = m * 3, B = t + 1 (n, m, A, B, t in slots 0 to 4). Prepared: a re-run computes t
  // again before each read. Then the last group overflows after the others wrote.
  const int before = prepared_count;
  t.run({"vm.builtin.shape_arith",
         {0, mul, std::int64_t{4}, load_shape, std::int64_t{0}, use_imm, std::int64_t{2},
          add, std::int64_t{2}, load_shape, std::int64_t{4}, use_imm, std::int64_t{1},
          mul, std::int64_t{4}, load_shape, std::int64_t{1}, use_imm, std::int64_t{3},
          add, std::int64_t{3}, load_shape, std::int64_t{4}, use_imm, std::int64_t{1}},
         1},
        {{int_tensor({5, 7, 0, 0, 0})}, {int_tensor({5, i64max / 3, 0, 0, 0})}, {int_tensor({5, 7, 0, 0})}});
  CHECK(prepared_count > before);
  // check_tensor_info: ndim, dtype, kind.
  t.run({"vm.builtin.check_tensor_info", {0, std::int64_t{2}, rv::value(rv::dtype::float32()), str("E ")}, 1},
        {{f32({1, 2})}, {f32({1})}, {rv::tensor::empty({1, 2}, rv::dtype::int32())}, {std::int64_t{3}}});
  t.run({"vm.builtin.check_tensor_info", {0, std::int64_t{-1}, rv::value()}, 1}, {{f32({})}, {rv::shape{1}}});
  // alloc_shape_heap(%vm, size): kept and zeroed again.
  t.run({"vm.builtin.alloc_shape_heap", {vm_arg{}, std::int64_t{3}}, 0}, {{}, {}, {}});
  CHECK(prepared_count >= 10);
}

TEST_CASE("prepared memory builtins: the general functions' storages, views and errors") {
  twin t;
  count_prepares(t.reg);
  prepared_count = 0;
  // alloc_storage(%vm, shape, device, dtype, [scope]): kept, resized, a bad device, a bad size.
  t.run({"vm.builtin.alloc_storage", {vm_arg{}, 0, std::int64_t{-1}, rv::value(rv::dtype::uint8()), str("global")}, 1},
        {{rv::shape{64}}, {rv::shape{64}}, {rv::shape{32}}, {rv::shape{-1}}, {rv::shape{i64max}}, {std::int64_t{2}},
         {rv::shape{32}}});
  // float32: a kept storage of 4 bytes is not one of 4 elements.
  t.run({"vm.builtin.alloc_storage", {vm_arg{}, 0, std::int64_t{0}, rv::value(rv::dtype::float32())}, 1},
        {{rv::shape{1}}, {rv::shape{4}}, {rv::shape{4}}, {rv::shape{2, 2}}});
  t.run({"vm.builtin.alloc_storage", {vm_arg{}, 0, std::int64_t{1}, rv::value(rv::dtype::float32())}, 1},
        {{rv::shape{4}}});  // the VM has one device
  t.run({"vm.builtin.alloc_storage", {vm_arg{}, 0, std::int64_t{0}, rv::value(rv::dtype::float32()), str("shared")}, 1},
        {{rv::shape{4}}});
  // alloc_tensor(storage, offset, shape, dtype): kept, another storage, out of its storage.
  rv::allocator pool = rv::allocator::pooled();
  const rv::value st = rv::make_storage(pool, 256, 64, rv::device::cpu()).value();
  const rv::value other = rv::make_storage(pool, 256, 64, rv::device::cpu()).value();
  t.run({"vm.builtin.alloc_tensor", {0, std::int64_t{64}, 1, rv::value(rv::dtype::float32())}, 2},
        {{st, rv::shape{2, 8}}, {st, rv::shape{2, 8}}, {other, rv::shape{2, 8}}, {st, rv::shape{2, 9}},
         {st, rv::shape{100}}, {st, f32({1})}, {std::int64_t{1}, rv::shape{2}}});
  t.run({"vm.builtin.alloc_tensor", {0, std::int64_t{-8}, 1, rv::value(rv::dtype::float32()), str("global")}, 2},
        {{st, rv::shape{2}}});
  CHECK(prepared_count >= 4);
}

// Random call sites: the fixed arguments drawn from small ranges around the valid ones, so that
// most sites are prepared and many runs fail in each possible way.
TEST_CASE("prepared builtins on random sites give the general functions' outcomes") {
  twin t;
  count_prepares(t.reg);
  prepared_count = 0;
  std::mt19937_64 rng(20261126);
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  const auto dims = [&](std::int64_t max_ndim) {
    std::vector<std::int64_t> d(static_cast<std::size_t>(pick(0, max_ndim)));
    for (std::int64_t& x : d) x = pick(0, 3);
    return d;
  };
  const auto heap = [&]() -> rv::value {
    switch (pick(0, 9)) {
      case 0: return rv::value();
      case 1: return f32({3});
      default: {
        std::vector<std::int64_t> s(static_cast<std::size_t>(pick(0, 5)));
        for (std::int64_t& x : s) x = pick(0, 3);
        return int_tensor(s);
      }
    }
  };
  const auto value_of = [&]() -> std::int64_t {
    switch (pick(0, 11)) {
      case 0: return i64max;
      case 1: return i64min;
      case 2: return -1;
      default: return pick(0, 5);
    }
  };
  int sites = 0;
  for (int i = 0; i < 1500; ++i) {
    site s;
    std::vector<std::vector<rv::value>> runs;
    const int kind = static_cast<int>(pick(0, 4));
    if (kind == 0) {  // match_shape
      const std::int64_t n = pick(0, 3);
      s = {"vm.builtin.match_shape", {0, 1, pick(0, 5) == 0 ? n + 1 : n}, 2};
      for (std::int64_t k = 0; k < n; ++k) {
        s.args.push_back(pick(0, 12) == 0 ? std::int64_t{4} : pick(0, 3));
        s.args.push_back(pick(-1, 5));
      }
      if (pick(0, 1)) s.args.push_back(pick(0, 5) == 0 ? rv::value(std::int64_t{1}) : str("ctx "));
      for (int r = 0; r < 4; ++r)
        runs.push_back({pick(0, 4) == 0 ? rv::value(rv::shape(dims(3))) : f32(dims(3)), heap()});
    } else if (kind == 1) {  // make_shape
      const std::int64_t n = pick(1, 3);
      s = {"vm.builtin.make_shape", {0, pick(0, 6) == 0 ? n - 1 : n}, 1};
      for (std::int64_t k = 0; k < n; ++k) {
        s.args.push_back(pick(0, 10) == 0 ? std::int64_t{2} : pick(0, 1));
        s.args.push_back(pick(-1, 5));
      }
      const rv::value h = heap();
      for (int r = 0; r < 4; ++r) runs.push_back({pick(0, 1) ? h : heap()});
    } else if (kind == 2) {  // shape_arith
      s = {"vm.builtin.shape_arith", {0}, 1};
      for (std::int64_t g = pick(1, 3); g > 0; --g) {
        s.args.push_back(pick(0, 15));
        s.args.push_back(pick(-1, 5));
        for (int k = 0; k < 2; ++k) {
          s.args.push_back(pick(0, 8) == 0 ? std::int64_t{2} : pick(0, 1));
          s.args.push_back(value_of());
        }
      }
      for (int r = 0; r < 3; ++r) {
        std::vector<std::int64_t> h(static_cast<std::size_t>(pick(3, 6)));
        for (std::int64_t& x : h) x = value_of();
        runs.push_back({int_tensor(h)});
      }
    } else if (kind == 3) {  // check_tensor_info
      const rv::dtype types[] = {rv::dtype::float32(), rv::dtype::int64(), rv::dtype::void_()};
      s = {"vm.builtin.check_tensor_info", {0, pick(-1, 3)}, 1};
      if (pick(0, 1)) s.args.push_back(rv::value(types[pick(0, 2)]));
      s.args.push_back(pick(0, 1) ? str("E ") : rv::value());
      for (int r = 0; r < 3; ++r)
        runs.push_back({pick(0, 5) == 0 ? rv::value(std::int64_t{1})
                                        : rv::value(rv::tensor::empty(rv::shape(dims(3)), types[pick(0, 1)]))});
    } else {  // alloc_storage and alloc_tensor
      const rv::dtype types[] = {rv::dtype::uint8(), rv::dtype::float32(), rv::dtype::float16()};
      if (pick(0, 1)) {
        s = {"vm.builtin.alloc_storage", {vm_arg{}, 0, pick(-2, 1), rv::value(types[pick(0, 2)])}, 1};
        if (pick(0, 3) == 0) s.args.push_back(pick(0, 1) ? str("global") : str("texture"));
        const rv::value shp = rv::shape(dims(2));
        for (int r = 0; r < 4; ++r) runs.push_back({pick(0, 2) ? shp : rv::value(rv::shape(dims(2)))});
      } else {
        static rv::allocator pool = rv::allocator::pooled();
        const rv::value st = rv::make_storage(pool, static_cast<std::size_t>(pick(0, 96)), 64, rv::device::cpu()).value();
        s = {"vm.builtin.alloc_tensor", {0, pick(-1, 4) * 16, 1, rv::value(types[pick(0, 2)])}, 2};
        const rv::value shp = rv::shape(dims(2));
        for (int r = 0; r < 4; ++r) runs.push_back({st, pick(0, 2) ? shp : rv::value(rv::shape(dims(2)))});
      }
    }
    t.run(s, runs);
    ++sites;
  }
  // Most sites are prepared (the rest have fixed arguments the general function rejects).
  CHECK(prepared_count > sites / 2);
}

}  // namespace
