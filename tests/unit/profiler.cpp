// SPDX-License-Identifier: Apache-2.0
// relaxvm/profiler.hpp: per-callee counts and times of a profiled function, as table, CSV and
// JSON; the VM's own hook is put back; errors come back.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>

#include <relaxvm.hpp>
#include <relaxvm/profiler.hpp>

namespace rv = relaxvm;

namespace {
// main(n) calls test.spin n times in a loop and helper(n) once; helper calls test.spin once.
constexpr auto program = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("main", 1);
    b.emit_call("test.add", {b.imm(0), b.imm(0)}, b.r(1));  // i = 0
    b.emit_call("test.lt", {b.r(1), b.r(0)}, b.r(2));       // 1: i < n
    b.emit_if(b.r(2), 4);                                   // false: to 6
    b.emit_call("test.spin", {b.r(1)}, b.r(3));
    b.emit_call("test.add", {b.r(1), b.imm(1)}, b.r(1));
    b.emit_goto(-4);
    b.emit_call("helper", {b.r(0)}, b.r(4));  // 6
    b.emit_ret(b.r(4));
  }
  {
    auto fn = b.function("helper", 1);
    b.emit_call("test.spin", {b.r(0)}, b.r(1));
    b.emit_ret(b.r(1));
  }
});

rv::registry make_registry() {
  rv::registry reg;
  reg.def("test.add", [](std::int64_t a, std::int64_t b) { return a + b; });
  reg.def("test.lt", [](std::int64_t a, std::int64_t b) { return a < b; });
  reg.def("test.spin", [](std::int64_t x) -> rv::result<std::int64_t> {
    if (x < 0) return rv::value_error("test.spin: negative");
    std::this_thread::sleep_for(std::chrono::microseconds(500));  // far above the hook's overhead, also under ASan on a busy machine
    return x;
  });
  return reg;
}
}  // namespace

TEST_CASE("profile counts every call of every callee over the runs, longest total first") {
  rv::registry reg = make_registry();
  rv::virtual_machine vm(program, reg);
  const std::array<rv::value, 1> args{rv::value(4)};
  rv::result<rv::vm_profile> p = rv::profile(vm, "main", args, 3);
  REQUIRE(p.ok());
  CHECK(p->runs == 3);
  REQUIRE(p->rows.size() == 4);
  auto row = [&](std::string_view name) -> const rv::vm_profile::row& {
    for (const auto& r : p->rows)
      if (r.callee == name) return r;
    FAIL("no row for " << name);
    return p->rows.front();
  };
  CHECK(row("test.spin").calls == 3 * 5);  // 4 in the loop, 1 in helper
  CHECK(row("test.add").calls == 3 * 5);   // i = 0, then 4 increments
  CHECK(row("test.lt").calls == 3 * 5);
  CHECK(row("helper").calls == 3);
  CHECK(row("helper").vm_function);
  CHECK_FALSE(row("test.spin").vm_function);
  // test.spin sleeps 500 us a call: it is the longest; helper's time includes its one spin.
  // (Which of helper and the short callees comes next depends on how the machine schedules
  // them: a loaded machine may pause test.add longer than helper's 1.5 ms.)
  CHECK(p->rows[0].callee == "test.spin");
  CHECK(row("helper").total_us >= 3 * 500.0);
  for (std::size_t i = 1; i < p->rows.size(); ++i) CHECK(p->rows[i - 1].total_us >= p->rows[i].total_us);
  CHECK(row("test.spin").total_us >= 15 * 500.0);
  CHECK(row("test.spin").mean_us == doctest::Approx(row("test.spin").total_us / 15));
  CHECK(row("test.spin").percent > 50.0);
  CHECK(row("test.spin").percent <= 100.0);
  CHECK(p->total_us >= row("test.spin").total_us);
  for (std::size_t i = 1; i < p->rows.size(); ++i) CHECK(p->rows[i - 1].total_us >= p->rows[i].total_us);
}

TEST_CASE("the report as a table, CSV and JSON") {
  rv::registry reg = make_registry();
  rv::virtual_machine vm(program, reg);
  const std::array<rv::value, 1> args{rv::value(2)};
  const rv::vm_profile p = rv::profile(vm, "main", args, 2).value();
  const std::string table = p.table();
  CHECK(table.starts_with("Callee"));
  CHECK(table.find("Calls") != std::string::npos);
  CHECK(table.find("helper (vm)") != std::string::npos);
  CHECK(table.find("\nTotal (runs)") != std::string::npos);
  const std::string csv = p.csv();
  CHECK(csv.starts_with("callee,kind,calls,total_us,mean_us,percent\ntest.spin,packed,6,"));
  CHECK(csv.find("\nhelper,vm,2,") != std::string::npos);
  const std::string json = p.json();
  CHECK(json.starts_with("{\"runs\": 2, \"total_us\": "));
  CHECK(json.find("{\"callee\": \"test.spin\", \"kind\": \"packed\", \"calls\": 6, ") != std::string::npos);
  CHECK(json.ends_with("\n]}\n"));
}

TEST_CASE("profile puts the VM's hook back, and returns a run's error") {
  rv::registry reg = make_registry();
  rv::virtual_machine vm(program, reg);
  int seen = 0;
  vm.set_instrument([&seen](const rv::call_event& e) {
    seen += e.before ? 1 : 0;
    return rv::instrument_action::proceed;
  });
  const std::array<rv::value, 1> args{rv::value(1)};
  REQUIRE(rv::profile(vm, "main", args).ok());
  CHECK(seen == 0);  // the profiler's hook ran instead
  CHECK(vm["main"](1).as<std::int64_t>() == 1);
  CHECK(seen == 7);  // the user's hook is back: add, lt, spin, add, lt, helper, and helper's spin
  const std::array<rv::value, 1> bad{rv::value(-1)};
  rv::result<rv::vm_profile> failed = rv::profile(vm, "main", bad, 5);
  REQUIRE_FALSE(failed.ok());
  CHECK(std::string(failed.error().message()).starts_with("test.spin: negative"));
  CHECK(rv::profile(vm, "main", args, 0).error().message() == "profile: runs must be at least 1");
  CHECK(std::string(rv::profile(vm, "nope", args).error().message()).find("no function 'nope'") != std::string::npos);
}
