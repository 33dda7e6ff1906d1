#!/usr/bin/env bash
# Builds and runs every test: with g++ 12, and with clang 16 under AddressSanitizer (with
# LeakSanitizer) and UndefinedBehaviorSanitizer. Both use -Wall -Wextra -Werror, and both run the
# unit tests (g++ also builds them with -fno-exceptions -fno-rtti), the single-header tests, the compile-fail
# tests and the examples; then the thread test (tests/threads/) with clang 16 under ThreadSanitizer,
# the examples again and the benchmarks (a short run) at -O3 (the build tools/bench.sh uses),
# and each libFuzzer target for 5 seconds (tools/fuzz.sh).
# Installs the Debian packages it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
jobs=$(nproc)

run() {  # name, compiler, extra meson options... (test_args: extra `meson test` arguments)
  local dir=build-$1 cxx=$2
  shift 2
  if [ ! -d "$dir" ]; then
    CXX=$cxx meson setup "$dir" "$@" >/dev/null
  fi
  echo "== $dir: build"
  ninja -C "$dir" -j "$jobs"
  echo "== $dir: test"
  meson test -C "$dir" --num-processes "$jobs" --print-errorlogs ${test_args:-}
}

# Sanitizer options are set per test in meson.build (test_env).
if [ -x /usr/lib/llvm-16/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer
fi

# The test builds optimize little and keep no debug information (g++ -O1, clang -O0 with line tables
# for the sanitizers' reports): compiling is most of this script's time, and -O2 -g costs 2x (g++)
# to 4x (clang with ASan) per test file. The -O3 build below keeps the optimizer's warnings.
run gcc g++ -Doptimization=1 -Ddebug=false -Dbench=false
# The firmware suite (arm-none-eabi-g++ and QEMU) does not depend on the host compiler: once is enough.
test_args="--no-suite firmware"
# The -fno-exceptions variants already ran in the g++ build, and the benchmarks run in the -O3
# build: the sanitizer build skips both.
run clang clang++-16 -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=0 -Ddebug=false \
  "-Dcpp_args=['-fno-sanitize-recover=all','-gline-tables-only']" -Dnoexcept_tests=false -Dbench=false
# ThreadSanitizer: only the thread test (8 threads, each with its own VM over one executable;
# docs/threads.md), which is one file to build and runs in seconds. TSan needs a build of its own;
# line tables are all its reports need, and build faster than full debug information.
if [ ! -d build-tsan ]; then
  CXX=clang++-16 meson setup build-tsan -Db_sanitize=thread -Db_lundef=false -Dcpp_args=-gline-tables-only \
    -Dnoexcept_tests=false -Dexamples=false -Dbench=false -Dtool=false -Dpython=false >/dev/null
fi
echo "== build-tsan: build and run tests/test_threads under ThreadSanitizer"
ninja -C build-tsan -j "$jobs" tests/test_threads
# clang 16's TSan stops with "unexpected memory mapping" on kernels that randomize mmap with more
# bits than it expects (vm.mmap_rnd_bits = 32 on some recent ones); without randomization it runs.
no_aslr=()
if setarch -R true >/dev/null 2>&1; then
  no_aslr=(setarch -R)
fi
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "${no_aslr[@]}" build-tsan/tests/test_threads
# The examples and benchmarks as tools/bench.sh builds them (-O3), where g++ warns differently.
run release g++ --buildtype=release -Dtests=false -Dtool=false -Dpython=false
# Each fuzz target briefly, over its past findings and the seed corpus (tools/fuzz.sh runs longer).
tools/fuzz.sh 5
echo "== all tests passed (g++ 12; clang 16 with ASan, LSan and UBSan; clang 16 with TSan, the thread test; g++ 12 -O3 examples and benchmarks; fuzzing)"
