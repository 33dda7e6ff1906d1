#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang 16 (ASan, UBSan, LeakSanitizer) and runs each
# for SECONDS (default 60): first over every past finding in fuzz/regressions/<target>/ (each must
# pass now), then from the seed corpus that fuzz/make_corpus writes. A finding stops the script
# with a failure; its input is in BUILD_DIR/findings-<target>-*: add it to fuzz/regressions/.
#
#   tools/fuzz.sh [SECONDS] [BUILD_DIR]
#
# BUILD_DIR: a clang build configured with -Dfuzz=true and -fsanitize=fuzzer-no-link in its
# cpp_args (tools/check.sh passes its sanitizer build, build-clang, which it has built already);
# without it, build-fuzz, configured here so.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
secs="${1:-60}"
dir="${2:-build-fuzz}"
if [ ! -d "$dir" ]; then
  # Line tables are all the sanitizers' reports need (full debug information doubles the build).
  CXX=clang++-16 meson setup "$dir" -Dfuzz=true -Dtests=false -Dexamples=false -Dbench=false -Dtool=false -Dpython=false \
    -Db_sanitize=address,undefined -Db_lundef=false -Ddebug=false \
    "-Dcpp_args=['-fno-sanitize-recover=all','-gline-tables-only','-fsanitize=fuzzer-no-link']" >/dev/null
fi
# The fuzz targets and what they need, not the rest of a shared build.
targets=(fuzz/make_corpus)
for t in load run build graph tvm_relax tvm_relay onnx; do
  if ninja -C "$dir" -t query "fuzz/fuzz_$t" >/dev/null 2>&1; then targets+=("fuzz/fuzz_$t"); fi
done
ninja -C "$dir" "${targets[@]}"
"$dir/fuzz/make_corpus" "$dir/corpus"
# Huge requests from hostile inputs must come back as errors (null from nothrow new), not aborts.
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
for t in load run build graph tvm_relax tvm_relay onnx; do
  [ -x "$dir/fuzz/fuzz_$t" ] || { echo "== fuzz_$t: not built (needs xtensor, and nlohmann/json for graph)"; continue; }
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
    echo "== fuzz_$t: past findings"
    "$dir/fuzz/fuzz_$t" -timeout=10 fuzz/regressions/$t/* 2>&1 | tail -1
  fi
  echo "== fuzz_$t: $secs s"
  rc=0
  "$dir/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/findings-$t-" "$dir/corpus/$t" >"$dir/fuzz_$t.log" 2>&1 || rc=$?
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY" "$dir/fuzz_$t.log" || true
  if [ "$rc" -ne 0 ]; then
    tail -40 "$dir/fuzz_$t.log" >&2
    echo "fuzz_$t found a problem: its input is $dir/findings-$t-*; add it to fuzz/regressions/$t/" >&2
    exit 1
  fi
done
echo "== fuzzing: no findings"
