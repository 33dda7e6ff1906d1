#!/usr/bin/env bash
# Builds and runs every test: with g++ 12, and with clang 16 under AddressSanitizer (with
# LeakSanitizer) and UndefinedBehaviorSanitizer. Both use -Wall -Wextra -Werror, and both run the
# unit tests and the compile-fail tests; g++ also builds the tests with -fno-exceptions -fno-rtti and
# runs the single-header tests, packaging and the firmware suite (with --quick, the examples too);
# then the thread test (tests/threads/) with clang 16 under ThreadSanitizer, the examples and the
# benchmarks (a short run) at -O3 (the build tools/bench.sh uses),
# and each libFuzzer target for 5 seconds (tools/fuzz.sh; built in the sanitizer build).
# Installs the Debian packages it needs first.
#
#   tools/check.sh [MESON_TEST_ARGS...]     e.g. --timeout-multiplier 3 on a slow or busy machine
#   tools/check.sh --quick [MESON_TEST_ARGS...]
#                                            the edit loop: the g++ build and its tests only
#                                            (build-gcc, as the full run makes it; incremental)
#
# Every stage runs even when an earlier one failed (the builds do not depend on each other, and
# each build keeps going past a failed target), and the end lists every stage that failed; the
# exit status is 1 when any did.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
tools/setup.sh || { echo "tools/check.sh: tools/setup.sh could not install what the build needs" >&2; exit 1; }
jobs=$(nproc)
quick=0
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi
extra_test_args=("$@")
test_args=()  # more `meson test` arguments for the builds that follow

failed=()
passed=0
stage() {  # name, command...: runs one stage, notes whether it failed, and returns its status
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  if "$@"; then
    passed=$((passed + 1))
    echo "== $name: passed in $((SECONDS - start)) s"
  else
    echo "== $name: FAILED after $((SECONDS - start)) s"
    failed+=("$name")
    return 1
  fi
}

setup() {  # dir, compiler, meson options...: a directory made by an earlier version of this script
  local dir=$1 cxx=$2  # gets the options this one passes (an edit loop's build-gcc, an old build-clang)
  shift 2
  if [ -d "$dir" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    CXX=$cxx meson setup "$dir" "$@" >/dev/null
  fi
}

run() {  # name, compiler, extra meson options...
  local dir=build-$1 cxx=$2
  shift 2
  stage "$dir: setup" setup "$dir" "$cxx" "$@" || return 0  # noted; the next build goes on
  # -k 0: build every target that can be built, so a failed one fails its tests, not all of them.
  stage "$dir: build" ninja -C "$dir" -j "$jobs" -k 0
  stage "$dir: test" meson test -C "$dir" --no-rebuild --num-processes "$jobs" --print-errorlogs "${test_args[@]}" \
    "${extra_test_args[@]}" || failed[-1]+=": $(failed_tests "$dir")"
}

failed_tests() {  # dir: the names of the tests that failed in its last `meson test`
  python3 - "$1/meson-logs/testlog.json" <<'PY'
import json, sys
try:
    with open(sys.argv[1]) as f:
        results = [json.loads(line) for line in f if line.strip()]
except OSError:
    results = [{'name': 'no test log', 'result': 'ERROR'}]
print(', '.join(r['name'] + ' (' + r['result'] + ')' for r in results
                if r['result'] not in ('OK', 'SKIP', 'EXPECTEDFAIL')))
PY
}

# Sanitizer options are set per test in meson.build (test_env).
if [ -x /usr/lib/llvm-16/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer
fi

# The test builds do not optimize and keep no debug information (clang keeps line tables for the
# sanitizers' reports): compiling is most of this script's time; g++ -O1 costs 1.7x -O0 per test
# file, -O2 -g 2x more (clang with ASan: 4x). The -O3 build below keeps the optimizer's warnings.
# The full run builds and runs the examples once, in the -O3 build below; --quick (the edit loop)
# runs them here.
gcc_examples=false
if [ $quick -eq 1 ]; then gcc_examples=true; fi
run gcc g++ -Doptimization=0 -Ddebug=false -Dbench=false -Dexamples=$gcc_examples
if [ $quick -eq 1 ]; then
  echo
  if [ ${#failed[@]} -eq 0 ]; then
    echo "== quick check passed (g++ 12 build and its tests; tools/check.sh without --quick runs the rest)"
  else
    echo "== ${#failed[@]} stage(s) failed (the test log: build-gcc/meson-logs/testlog.txt):"
    printf '  %s\n' "${failed[@]}"
  fi
  [ ${#failed[@]} -eq 0 ]
  exit
fi
# The firmware suite (arm-none-eabi-g++ and QEMU) does not depend on the host compiler: once is enough.
test_args=(--no-suite firmware)
# The -fno-exceptions variants already ran in the g++ build, and the benchmarks and the examples
# run in the -O3 build: the sanitizer build skips them (it builds every test and the library code
# the examples call).
# It also builds the libFuzzer targets (fuzz/, run at the end): with -fsanitize=fuzzer-no-link
# everywhere they share its objects (the compiled libraries) instead of a build of their own.
run clang clang++-16 -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=0 -Ddebug=false \
  "-Dcpp_args=['-fno-sanitize-recover=all','-gline-tables-only','-fsanitize=fuzzer-no-link']" -Dnoexcept_tests=false \
  -Dbench=false -Dexamples=false -Dfuzz=true
# ThreadSanitizer: only the thread test (8 threads, each with its own VM over one executable;
# docs/threads.md), which is one file to build and runs in seconds. TSan needs a build of its own;
# line tables are all its reports need, and build faster than full debug information.
tsan() {
  setup build-tsan clang++-16 -Db_sanitize=thread -Db_lundef=false -Dcpp_args=-gline-tables-only \
    -Dnoexcept_tests=false -Dexamples=false -Dbench=false -Dtool=false -Dpython=false || return
  ninja -C build-tsan -j "$jobs" tests/test_threads || return
  # clang 16's TSan stops with "unexpected memory mapping" on kernels that randomize mmap with more
  # bits than it expects (vm.mmap_rnd_bits = 32 on some recent ones); without randomization it runs.
  local no_aslr=()
  if setarch -R true >/dev/null 2>&1; then
    no_aslr=(setarch -R)
  fi
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "${no_aslr[@]}" build-tsan/tests/test_threads
}
stage "build-tsan: tests/test_threads under ThreadSanitizer" tsan
# The examples and benchmarks as tools/bench.sh builds them (-O3), where g++ warns differently.
run release g++ --buildtype=release -Dtests=false -Dtool=false -Dpython=false
# Each fuzz target briefly, over its past findings and the seed corpus (tools/fuzz.sh runs longer).
stage "fuzz: each target for 5 s" tools/fuzz.sh 5 build-clang

echo
if [ ${#failed[@]} -eq 0 ]; then
  echo "== all tests passed (g++ 12; clang 16 with ASan, LSan and UBSan; clang 16 with TSan, the thread test; g++ 12 -O3 examples and benchmarks; fuzzing)"
else
  echo "== ${#failed[@]} stage(s) failed (each test stage's log: build-*/meson-logs/testlog.txt):"
  printf '  %s\n' "${failed[@]}"
fi
echo "stages: $passed passed, ${#failed[@]} failed, in $SECONDS s"
[ ${#failed[@]} -eq 0 ]
