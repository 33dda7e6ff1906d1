// SPDX-License-Identifier: Apache-2.0
// A profiler for the virtual machine, like the reference's (`relax.VirtualMachine(exec, dev,
// profile=True)` then `vm.profile("main", *args)`): runs a function with the instrument hook
// timing every Call, and reports per callee the number of calls, the total and mean time, and
// the share of the invocation, longest first, as a table, CSV or JSON.
//
//   #include <relaxvm/profiler.hpp>
//   rv::result<rv::vm_profile> p = rv::profile(vm, "main", args, 100);   // 100 runs
//   std::puts(p->table().c_str());
//
// It costs nothing when not profiling: the hook is installed for the profiled runs only (the
// VM's fast paths for packed calls are off while a hook is set), and the hook that was set
// before is put back. Times include the hook's own cost (two clock reads per Call). A vm function
// called by a Call is timed inclusively (its own callees are also rows), so shares of nested rows
// add up to more than 100%.
#ifndef RELAXVM_PROFILER_HPP
#define RELAXVM_PROFILER_HPP

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/config.hpp"  // RELAXVM_ABI
#include "relaxvm/base/error.hpp"
#include "relaxvm/vm/virtual_machine.hpp"

namespace relaxvm::RELAXVM_ABI {

/// What rv::profile measured.
struct vm_profile {
  struct row {
    std::string callee;        ///< the called function's name
    bool vm_function = false;  ///< bytecode (timed inclusively) or packed
    std::int64_t calls = 0;    ///< over all runs
    double total_us = 0;       ///< over all runs
    double mean_us = 0;        ///< per call
    double percent = 0;        ///< total_us / the invocations' time, in percent
  };
  std::vector<row> rows;  ///< longest total first
  double total_us = 0;    ///< the profiled invocations, end to end, over all runs
  std::size_t runs = 0;

  /// Name, calls, total (us), mean (us) and share, longest first, then the invocations' total.
  std::string table() const {
    std::size_t w = 6;
    for (const row& r : rows) w = std::max(w, r.callee.size() + (r.vm_function ? 5 : 0));
    std::string out;
    char line[160];
    std::snprintf(line, sizeof line, "%-*s %10s %14s %12s %8s\n", static_cast<int>(w), "Callee", "Calls", "Total(us)",
                  "Mean(us)", "Time(%)");
    out += line;
    for (const row& r : rows) {
      const std::string name = r.vm_function ? r.callee + " (vm)" : r.callee;
      out += name;
      out.append(w - name.size(), ' ');
      std::snprintf(line, sizeof line, " %10lld %14.3f %12.3f %8.2f\n", static_cast<long long>(r.calls), r.total_us,
                    r.mean_us, r.percent);
      out += line;
    }
    std::snprintf(line, sizeof line, "%-*s %10zu %14.3f %12.3f %8.2f\n", static_cast<int>(w), "Total (runs)", runs,
                  total_us, runs ? total_us / static_cast<double>(runs) : 0.0, 100.0);
    out += line;
    return out;
  }
  /// One line per callee: callee,kind,calls,total_us,mean_us,percent (kind: packed or vm).
  std::string csv() const {
    std::string out = "callee,kind,calls,total_us,mean_us,percent\n";
    char line[96];
    for (const row& r : rows) {
      out += csv_field(r.callee);
      std::snprintf(line, sizeof line, ",%s,%lld,%.3f,%.3f,%.2f\n", r.vm_function ? "vm" : "packed",
                    static_cast<long long>(r.calls), r.total_us, r.mean_us, r.percent);
      out += line;
    }
    return out;
  }
  /// {"runs": N, "total_us": T, "calls": [{"callee": ..., "kind": ..., "calls": ..., "total_us": ...,
  /// "mean_us": ..., "percent": ...}, ...]}
  std::string json() const {
    char num[96];
    std::snprintf(num, sizeof num, "{\"runs\": %zu, \"total_us\": %.3f, \"calls\": [", runs, total_us);
    std::string out = num;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const row& r = rows[i];
      out += i ? ",\n  {\"callee\": " : "\n  {\"callee\": ";
      out += json_string(r.callee);
      std::snprintf(num, sizeof num, ", \"kind\": \"%s\", \"calls\": %lld, \"total_us\": %.3f, \"mean_us\": %.3f, ",
                    r.vm_function ? "vm" : "packed", static_cast<long long>(r.calls), r.total_us, r.mean_us);
      out += num;
      std::snprintf(num, sizeof num, "\"percent\": %.2f}", r.percent);
      out += num;
    }
    out += rows.empty() ? "]}\n" : "\n]}\n";
    return out;
  }

 private:
  static std::string csv_field(std::string_view s) {
    if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char c : s) {
      if (c == '"') out += '"';
      out += c;
    }
    return out + '"';
  }
  static std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (u < 0x20) {
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\u%04x", u);
        out += esc;
      } else {
        out += c;
      }
    }
    return out + '"';
  }
};

/// Runs `function` `runs` times (at least 1) with `args`, timing every Call; an error of any run
/// is returned. The VM's instrument hook is replaced for the runs and put back afterwards.
inline result<vm_profile> profile(virtual_machine& vm, std::string_view function, std::span<const value> args,
                                  std::size_t runs = 1) {
  using clock = std::chrono::steady_clock;
  if (runs == 0) return value_error("profile: runs must be at least 1");
  RELAXVM_TRY_ASSIGN(vm_function f, vm.try_function(function));
  struct tally {
    std::string name;
    bool vm_function = false;
    std::int64_t calls = 0;
    double ns = 0;
  };
  struct open_call {
    std::int64_t index;
    clock::time_point start;
  };
  std::unordered_map<std::int64_t, tally> by_callee;
  std::vector<open_call> open;
  const instrument_fn previous = vm.instrument();
  vm.set_instrument([&by_callee, &open](const call_event& e) {
    if (e.before) {
      open.push_back({e.callee_index, clock::now()});
      return instrument_action::proceed;
    }
    const clock::time_point end = clock::now();
    // The matching "before" is the innermost open call of this callee (an error unwinds without
    // "after" events: those calls stay open and are not counted).
    for (std::size_t k = open.size(); k-- > 0;) {
      if (open[k].index != e.callee_index) continue;
      tally& t = by_callee[e.callee_index];
      if (t.calls == 0) {
        t.name = std::string(e.callee);
        t.vm_function = e.callee_is_vm_function;
      }
      ++t.calls;
      t.ns += std::chrono::duration<double, std::nano>(end - open[k].start).count();
      open.resize(k);
      break;
    }
    return instrument_action::proceed;
  });
  vm_profile out;
  out.runs = runs;
  double total_ns = 0;
  status failed;
  for (std::size_t r = 0; r < runs && failed.ok(); ++r) {
    open.clear();
    const clock::time_point t0 = clock::now();
    result<value> y = f.try_call(args);
    total_ns += std::chrono::duration<double, std::nano>(clock::now() - t0).count();
    if (!y.ok()) failed = std::move(y).error();
  }
  vm.set_instrument(previous);
  RELAXVM_TRY(std::move(failed));
  out.total_us = total_ns / 1000.0;
  for (auto& [index, t] : by_callee) {
    vm_profile::row row;
    row.callee = std::move(t.name);
    row.vm_function = t.vm_function;
    row.calls = t.calls;
    row.total_us = t.ns / 1000.0;
    row.mean_us = row.total_us / static_cast<double>(t.calls);
    row.percent = out.total_us > 0 ? 100.0 * row.total_us / out.total_us : 0.0;
    out.rows.push_back(std::move(row));
  }
  std::sort(out.rows.begin(), out.rows.end(), [](const vm_profile::row& a, const vm_profile::row& b) {
    return a.total_us != b.total_us ? a.total_us > b.total_us : a.callee < b.callee;
  });
  return out;
}

}  // namespace relaxvm

#endif  // RELAXVM_PROFILER_HPP
