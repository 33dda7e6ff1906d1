// SPDX-License-Identifier: Apache-2.0
// Lowering benchmark: how long the lowering layer (relaxvm/lower.hpp) takes on an IR function of
// 100, 300, 1,000 and 3,000 bindings with a symbolic batch size (the chain of bench/lower_chain.hpp:
// call_dps kernels, reshapes, shape_of, prim_value, match_cast and shape values), per phase:
//
//   build:   ir::module_builder and the chain's calls, then get() (which copies and checks)
//   check:   ir::check alone, on the built module (part of build)
//   lower:   ir::lower, every pass up to code generation
//   codegen: ir::codegen of the lowered module into an exec_builder
//   finish:  exec_builder::try_get<executable>(): formalization, verification, the executable
//   build(): ir::build(module), all of lower, codegen and finish (what users call)
//
// and each pass of ir::lower alone (ir::pass::*, in the pipeline's order, each on a copy of the
// previous pass's output), to show which grows faster than the bindings. Every run times all of
// them one after another, for each size in turn; each figure is the median over the runs.
//
//   bench_lower [--quick]   (--quick: 3 runs, for the test suite)
//   bench_lower --only N    each phase and pass once on N bindings, each in a function of its own
//                           (only_*), for callgrind:
//     valgrind --tool=callgrind bench_lower --only 3000; callgrind_annotate --inclusive=yes | grep only_
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <relaxvm.hpp>
#include <relaxvm/lower.hpp>
#include <vector>

#include "common.hpp"
#include "lower_chain.hpp"

namespace rv = relaxvm;
namespace ir = relaxvm::ir;
using bench::clock_type;
using bench::median;

namespace {

constexpr int sizes[] = {100, 300, 1000, 3000};
constexpr int num_sizes = 4;

// The measured phases, in the order they are printed.
enum phase : int { p_build, p_check, p_lower, p_codegen, p_finish, p_total, num_phases };
constexpr const char* phase_names[num_phases] = {"build", "check", "lower", "codegen", "finish", "build()"};

enum pass_no : int {
  s_to_non_dataflow,
  s_call_tir_rewrite,
  s_plan_memory,
  s_lower_alloc_tensor,
  s_kill_after_last_use,
  s_lower_runtime_builtin,
  s_shape_lower,
  num_passes
};
constexpr const char* pass_names[num_passes] = {"to_non_dataflow",       "call_tir_rewrite", "static_plan_block_memory",
                                                "lower_alloc_tensor",    "kill_after_last_use",
                                                "lower_runtime_builtin", "shape_lower"};

double micros(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

std::size_t count_bindings(const ir::module& m) {
  std::size_t k = 0;
  for (const ir::function& f : m.funcs) ir::for_each_binding(f.body, [&](const ir::binding&) { ++k; });
  return k;
}

ir::module make_module(int bindings) {
  ir::module_builder m;
  bench::lower_chain(m, bindings);
  return m.get();
}

struct sample {
  double phase[num_phases];
  double pass[num_passes];
};

// One run of every measurement on a program of `bindings` bindings.
sample run_once(int bindings, std::int64_t& instructions, std::size_t& lowered_bindings, int& failures) {
  sample s{};
  auto t0 = clock_type::now();
  const ir::module mod = make_module(bindings);
  auto t1 = clock_type::now();
  s.phase[p_build] = micros(t0, t1);

  {
    rv::detail::text err;
    t0 = clock_type::now();
    failures += !ir::check(mod, err);
    t1 = clock_type::now();
    s.phase[p_check] = micros(t0, t1);
  }

  ir::module copy = mod;
  t0 = clock_type::now();
  const ir::module lowered = ir::lower(static_cast<ir::module&&>(copy));
  t1 = clock_type::now();
  s.phase[p_lower] = micros(t0, t1);
  lowered_bindings = count_bindings(lowered);

  {
    rv::exec_builder b;
    rv::detail::text err;
    t0 = clock_type::now();
    failures += !ir::codegen(lowered, b, err);
    t1 = clock_type::now();
    rv::result<rv::executable> exe = b.try_get<rv::executable>();
    const auto t2 = clock_type::now();
    s.phase[p_codegen] = micros(t0, t1);
    s.phase[p_finish] = micros(t1, t2);
    failures += !exe.ok();
  }

  t0 = clock_type::now();
  const rv::executable exe = ir::build(mod);
  t1 = clock_type::now();
  s.phase[p_total] = micros(t0, t1);
  instructions = exe.view().num_instructions();

  // The passes one by one, as ir::try_lower runs them; each input is copied before the clock.
  ir::module m = mod;
  t0 = clock_type::now();
  m = ir::pass::to_non_dataflow(ir::pass::rewrite_dataflow_reshape(static_cast<ir::module&&>(m)));
  t1 = clock_type::now();
  s.pass[s_to_non_dataflow] = micros(t0, t1);
  const auto timed = [&](pass_no k, auto&& fn) {
    ir::module in = m;
    const auto a = clock_type::now();
    m = fn(static_cast<ir::module&&>(in));
    const auto b = clock_type::now();
    s.pass[k] = micros(a, b);
  };
  timed(s_call_tir_rewrite, [](ir::module x) { return ir::pass::call_tir_rewrite(static_cast<ir::module&&>(x)); });
  timed(s_plan_memory, [](ir::module x) { return ir::pass::static_plan_block_memory(static_cast<ir::module&&>(x)); });
  timed(s_lower_alloc_tensor, [](ir::module x) { return ir::pass::lower_alloc_tensor(static_cast<ir::module&&>(x)); });
  timed(s_kill_after_last_use, [](ir::module x) { return ir::pass::kill_after_last_use(static_cast<ir::module&&>(x)); });
  timed(s_lower_runtime_builtin,
        [](ir::module x) { return ir::pass::lower_runtime_builtin(static_cast<ir::module&&>(x)); });
  timed(s_shape_lower, [](ir::module x) { return ir::pass::shape_lower(static_cast<ir::module&&>(x)); });
  failures += count_bindings(m) != lowered_bindings;
  return s;
}

// --only: one call of each phase, out of line so that callgrind counts each apart.
RELAXVM_NOINLINE ir::module only_build(int bindings) { return make_module(bindings); }
RELAXVM_NOINLINE ir::module only_to_non_dataflow(ir::module m) {
  return ir::pass::to_non_dataflow(ir::pass::rewrite_dataflow_reshape(static_cast<ir::module&&>(m)));
}
RELAXVM_NOINLINE ir::module only_call_tir_rewrite(ir::module m) {
  return ir::pass::call_tir_rewrite(static_cast<ir::module&&>(m));
}
RELAXVM_NOINLINE ir::module only_plan_memory(ir::module m) {
  return ir::pass::static_plan_block_memory(static_cast<ir::module&&>(m));
}
RELAXVM_NOINLINE ir::module only_lower_alloc_tensor(ir::module m) {
  return ir::pass::lower_alloc_tensor(static_cast<ir::module&&>(m));
}
RELAXVM_NOINLINE ir::module only_kill_after_last_use(ir::module m) {
  return ir::pass::kill_after_last_use(static_cast<ir::module&&>(m));
}
RELAXVM_NOINLINE ir::module only_lower_runtime_builtin(ir::module m) {
  return ir::pass::lower_runtime_builtin(static_cast<ir::module&&>(m));
}
RELAXVM_NOINLINE ir::module only_shape_lower(ir::module m) { return ir::pass::shape_lower(static_cast<ir::module&&>(m)); }
RELAXVM_NOINLINE rv::executable only_codegen_finish(const ir::module& m) {
  rv::exec_builder b;
  rv::detail::text err;
  if (!ir::codegen(m, b, err)) return {};
  return b.get<rv::executable>();
}

int run_only(int bindings) {
  ir::module m = only_build(bindings);
  m = only_to_non_dataflow(static_cast<ir::module&&>(m));
  m = only_call_tir_rewrite(static_cast<ir::module&&>(m));
  m = only_plan_memory(static_cast<ir::module&&>(m));
  m = only_lower_alloc_tensor(static_cast<ir::module&&>(m));
  m = only_kill_after_last_use(static_cast<ir::module&&>(m));
  m = only_lower_runtime_builtin(static_cast<ir::module&&>(m));
  m = only_shape_lower(static_cast<ir::module&&>(m));
  const rv::executable exe = only_codegen_finish(m);
  std::printf("%d bindings: %zu after lowering, %lld instructions\n", bindings, count_bindings(m),
              static_cast<long long>(exe.view().num_instructions()));
  return exe.view().num_instructions() > 0 ? 0 : 1;
}

void print_time(double us) {
  if (us >= 10000) std::printf(" %9.1f ms", us / 1000);
  else if (us >= 1000) std::printf(" %9.2f ms", us / 1000);
  else std::printf(" %9.1f us", us);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--only") == 0) return run_only(std::atoi(argv[2]));
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int runs = quick ? 3 : 21;

  // samples[size][run]
  std::vector<std::vector<sample>> samples(num_sizes);
  std::int64_t instructions[num_sizes] = {};
  std::size_t lowered[num_sizes] = {};
  int failures = 0;
  for (int r = 0; r < runs; ++r)
    for (int i = 0; i < num_sizes; ++i)
      samples[static_cast<std::size_t>(i)].push_back(run_once(sizes[i], instructions[i], lowered[i], failures));

  double med[num_sizes][num_phases] = {}, med_pass[num_sizes][num_passes] = {};
  for (int i = 0; i < num_sizes; ++i) {
    std::vector<double> v;
    for (int p = 0; p < num_phases; ++p) {
      v.clear();
      for (const sample& s : samples[static_cast<std::size_t>(i)]) v.push_back(s.phase[p]);
      med[i][p] = median(v);
    }
    for (int p = 0; p < num_passes; ++p) {
      v.clear();
      for (const sample& s : samples[static_cast<std::size_t>(i)]) v.push_back(s.pass[p]);
      med_pass[i][p] = median(v);
    }
  }

  std::printf("relaxvm %s lowering benchmark (bench/lower_chain.hpp, batch size n symbolic): median of %d runs\n\n",
              RELAXVM_VERSION_STRING, runs);
  std::printf("%8s", "bindings");
  for (const char* p : phase_names) std::printf(" %12s", p);
  std::printf(" %9s %8s %12s\n", "lowered", "instrs", "build()/bind");
  for (int i = 0; i < num_sizes; ++i) {
    std::printf("%8d", sizes[i]);
    for (int p = 0; p < num_phases; ++p) print_time(med[i][p]);
    std::printf(" %9zu %8lld %9.2f us\n", lowered[i], static_cast<long long>(instructions[i]),
                med[i][p_total] / sizes[i]);
  }

  std::printf("\nthe passes of lower, one by one\n%8s", "bindings");
  for (const char* p : pass_names) std::printf(" %24s", p);
  std::printf("\n");
  for (int i = 0; i < num_sizes; ++i) {
    std::printf("%8d", sizes[i]);
    for (int p = 0; p < num_passes; ++p) std::printf("            %9.1f us", med_pass[i][p]);
    std::printf("\n");
  }

  // Growth: time(3,000) / time(300) is 10 for a linear cost, 100 for a quadratic one.
  std::printf("\ngrowth from 300 to 3,000 bindings (linear: 10x, quadratic: 100x)\n");
  for (int p = 0; p < num_phases; ++p) std::printf("  %-24s %6.1fx\n", phase_names[p], med[3][p] / med[1][p]);
  for (int p = 0; p < num_passes; ++p) std::printf("  %-24s %6.1fx\n", pass_names[p], med_pass[3][p] / med_pass[1][p]);

  if (failures) std::fprintf(stderr, "bench_lower: %d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
