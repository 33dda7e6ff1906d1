#!/usr/bin/env python3
"""What one `#include <relaxvm.hpp>` costs a translation unit: compile time and peak memory.

Compiles an empty program that includes the header (and, for scale, one that includes only the
standard headers relaxvm's core uses, and one that includes nlohmann/json's json.hpp, a header-only
library users know) with each compiler at -O0, several times, and prints the fastest run of each:
the user + system CPU seconds and the peak resident memory of the compiler, and relaxvm's time over
json's.

Then, unless --no-program: a user's translation unit that builds a bytecode function at run time,
makes a registry and a VM and runs it (tests/packaging/main.cpp), at --program-opt (default -O1),
header-only and with RELAXVM_SEPARATE_COMPILATION (the core declared only; src/core.cpp holds it:
docs/configuration.md), and how many times less the second costs.

    tools/include_cost.py                     # g++ and clang++-16, 5 runs each
    tools/include_cost.py --runs 9 --cxx g++  # one compiler
    tools/include_cost.py --header relaxvm/ops.hpp --no-program

With --pch, the user's translation unit again in both modes, with <relaxvm.hpp> precompiled once
for it with the same flags (g++'s .gch, clang's -include-pch; tests/packaging/cmake_consumer shows
CMake's target_precompile_headers doing it): what the edit loop costs once the header is parsed.

Run it on an otherwise idle machine: the figures are CPU time, but a busy machine slows a
compiler's memory traffic too.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# For scale: the standard headers relaxvm's core is built on, included whole (the core includes
# only parts of <algorithm>, <functional> and <mutex> under libstdc++: base/std_parts.hpp).
STD_HEADERS = ["algorithm", "array", "atomic", "bit", "charconv", "concepts", "cstddef", "cstdint",
               "cstdio", "cstdlib", "cstring", "exception", "initializer_list", "iterator", "limits",
               "memory", "new", "optional", "span", "string", "string_view", "type_traits", "utility",
               "vector", "dlpack/dlpack.h"]


def timed(cmd):
    """Runs a compiler command: (CPU seconds, peak KiB) of it and what it ran."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # wait4 gives this child's own usage (the compiler driver and what it ran).
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr.read().decode()}")
    proc.stderr.close()
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def measure(cxx, source, include_dir, runs, flags=("-O0",), pch=False):
    """The fastest of `runs` compilations of `source`: (CPU seconds, peak KiB of that run). With
    `pch`, <relaxvm.hpp> is precompiled first, with the same flags, and `source` includes it as
    its first line; the precompilation is not counted."""
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "tu.cpp")
        common = [cxx, "-std=c++20", *flags, "-I" + include_dir]
        cmd = common + ["-c", src, "-o", os.path.join(tmp, "tu.o")]
        if pch:
            header = os.path.join(tmp, "relaxvm_pch.hpp")
            with open(header, "w") as f:
                f.write("#include <relaxvm.hpp>\n")
            if "#include <relaxvm.hpp>" not in source:
                sys.exit("include_cost.py --pch: the program does not include <relaxvm.hpp>")
            source = source.replace("#include <relaxvm.hpp>", '#include "relaxvm_pch.hpp"', 1)
            if "clang" in os.path.basename(cxx):
                timed(common + ["-x", "c++-header", header, "-o", header + ".pch"])
                cmd += ["-include-pch", header + ".pch"]
            else:
                timed(common + ["-x", "c++-header", header, "-o", header + ".gch"])
                cmd += ["-Winvalid-pch", "-Werror"]  # a .gch g++ cannot use is an error, not a silent parse
        with open(src, "w") as f:
            f.write(source)
        for _ in range(runs):
            cpu, kib = timed(cmd)
            if best is None or cpu < best[0]:
                best = (cpu, kib)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cxx", action="append", help="compiler (repeatable); default g++ and clang++-16")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--header", default="relaxvm.hpp", help="header to include (under include/)")
    ap.add_argument("--against", default="nlohmann/json.hpp", help="another library's header, for scale")
    ap.add_argument("--no-program", action="store_true", help="skip the user's translation unit")
    ap.add_argument("--program-opt", default="-O1", help="optimization of the user's translation unit")
    ap.add_argument("--pch", action="store_true", help="also the user's translation unit with <relaxvm.hpp> precompiled")
    args = ap.parse_args()
    compilers = [c for c in (args.cxx or ["g++", "clang++-16"])]
    include_dir = os.path.join(ROOT, "include")
    program = f"#include <{args.header}>\nint main() {{}}\n"
    against = f"#include <{args.against}>\nint main() {{}}\n"
    baseline = "".join(f"#include <{h}>\n" for h in STD_HEADERS) + "int main() {}\n"
    print(f"an empty program with #include <{args.header}>, -std=c++20 -O0, fastest of {args.runs} runs")
    print(f"{'compiler':<14} {'standard headers':>18} {args.header:>22} {'relaxvm share':>14} "
          f"{args.against:>24} {'ratio':>6}")
    for cxx in compilers:
        if shutil.which(cxx) is None:
            print(f"{cxx:<14} (not installed)")
            continue
        std_cpu, std_kib = measure(cxx, baseline, include_dir, args.runs)
        hdr_cpu, hdr_kib = measure(cxx, program, include_dir, args.runs)
        other_cpu, other_kib = measure(cxx, against, include_dir, args.runs)
        print(f"{cxx:<14} {std_cpu:7.2f} s {std_kib / 1024:5.0f} MiB "
              f"{hdr_cpu:11.2f} s {hdr_kib / 1024:5.0f} MiB {hdr_cpu - std_cpu:10.2f} s "
              f"{other_cpu:13.2f} s {other_kib / 1024:5.0f} MiB {hdr_cpu / other_cpu:5.2f}x", flush=True)
    if args.no_program:
        return
    with open(os.path.join(ROOT, "tests", "packaging", "main.cpp")) as f:
        user = f.read()
    print(f"\na user's translation unit (tests/packaging/main.cpp: builds a function at run time, makes a "
          f"registry and a VM, runs it), -std=c++20 {args.program_opt}, fastest of {args.runs} runs")
    print(f"{'compiler':<14} {'header-only':>20} {'separate compilation':>22} {'less':>6}")
    for cxx in compilers:
        if shutil.which(cxx) is None:
            continue
        whole_cpu, whole_kib = measure(cxx, user, include_dir, args.runs, (args.program_opt,))
        sep_cpu, sep_kib = measure(cxx, user, include_dir, args.runs,
                                   (args.program_opt, "-DRELAXVM_SEPARATE_COMPILATION"))
        print(f"{cxx:<14} {whole_cpu:9.2f} s {whole_kib / 1024:5.0f} MiB {sep_cpu:11.2f} s {sep_kib / 1024:5.0f} MiB "
              f"{whole_cpu / sep_cpu:5.1f}x", flush=True)
        if args.pch:
            whole_cpu, whole_kib = measure(cxx, user, include_dir, args.runs, (args.program_opt,), pch=True)
            sep_cpu, sep_kib = measure(cxx, user, include_dir, args.runs,
                                       (args.program_opt, "-DRELAXVM_SEPARATE_COMPILATION"), pch=True)
            print(f"{'  precompiled':<14} {whole_cpu:9.2f} s {whole_kib / 1024:5.0f} MiB {sep_cpu:11.2f} s "
                  f"{sep_kib / 1024:5.0f} MiB {whole_cpu / sep_cpu:5.1f}x", flush=True)


if __name__ == "__main__":
    main()
