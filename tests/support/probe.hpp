// SPDX-License-Identifier: Apache-2.0
// A one-builtin program for tests: `f(p0, ..., pn-1) = builtin([%vm,] p0, ..., pn-1)`, run on its
// own VM. fails() checks the error's kind, returns the builtin's own line of the message, and
// then checks that the same VM still runs the last call that succeeded.
#ifndef RELAXVM_TESTS_PROBE_HPP
#define RELAXVM_TESTS_PROBE_HPP

#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace relaxvm_test {

namespace rv = relaxvm;

inline rv::executable one_call(std::string_view builtin, int arity, bool with_ctx) {
  rv::exec_builder b;
  {
    auto fn = b.function("f", arity);
    std::vector<rv::arg> args;
    if (with_ctx) args.push_back(b.vm_state());
    for (int i = 0; i < arity; ++i) args.push_back(b.r(i));
    b.emit_call(builtin, args, b.r(arity));
    b.emit_ret(b.r(arity));
  }
  return b.get();
}

struct probe {
  rv::registry reg;
  rv::virtual_machine vm;
  std::vector<rv::value> last_good;

  /// `extra` registers more functions (kernels) before the VM is made.
  probe(std::string_view builtin, int arity, bool with_ctx = false, rv::vm_options opts = {},
        void (*extra)(rv::basic_registry&) = nullptr)
      : vm(make(builtin, arity, with_ctx, std::move(opts), extra)) {}

  rv::virtual_machine make(std::string_view builtin, int arity, bool with_ctx, rv::vm_options opts,
                           void (*extra)(rv::basic_registry&)) {
    if (extra) extra(reg);
    return rv::virtual_machine(one_call(builtin, arity, with_ctx), reg, std::move(opts));
  }

  /// Runs f; a success is remembered for the usability check after an error.
  rv::result<rv::value> operator()(std::vector<rv::value> args) {
    rv::result<rv::value> r = vm.try_invoke("f", args);
    if (r.ok()) last_good = std::move(args);
    return r;
  }
  rv::value ok(std::vector<rv::value> args) {
    rv::result<rv::value> r = (*this)(std::move(args));
    if (!r.ok()) {
      FAIL_CHECK(std::string(r.error().message()));
      return rv::value();
    }
    return *std::move(r);
  }
  /// The first line of the error (the builtin's message, before the VM's "in f at ..." lines).
  std::string fails(std::vector<rv::value> args, rv::error_kind kind) {
    rv::result<rv::value> r = vm.try_invoke("f", args);
    if (r.ok()) {
      FAIL_CHECK("expected an error");
      return {};
    }
    CHECK(r.error().kind() == kind);
    std::string m(r.error().message());
    if (!last_good.empty()) CHECK(vm.try_invoke("f", last_good).ok());  // the VM is still usable
    return m.substr(0, m.find('\n'));
  }
};

inline bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace relaxvm_test

#endif  // RELAXVM_TESTS_PROBE_HPP
