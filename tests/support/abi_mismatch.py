#!/usr/bin/env python3
"""Translation units built with different layout settings must not link together.

    abi_mismatch.py BUILD_DIR -- COMPILER ARGS...

Builds tests/abi/main.cpp and tests/abi/describe.cpp (a function taking relaxvm::error) with the
same settings (they must link and run), then describe.cpp with each setting that selects another
ABI namespace (base/config.hpp: RELAXVM_ABI): each must fail to link, with the linker naming the
missing function with the caller's relaxvm::v<major>_<minor> namespace.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ABI = os.path.join(os.path.dirname(HERE), "abi")
# Settings that change the library's layouts or code, hosted builds (firmware mode needs a board).
OTHER_SETTINGS = [["-DRELAXVM_ERROR_TEXT=0"], ["-DRELAXVM_ATOMIC_REFCOUNT=1"], ["-DRELAXVM_OBJECT_CACHE=0"],
                  ["-DRELAXVM_THREADS=0"]]


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    sep = sys.argv.index("--")
    out_dir, compiler = sys.argv[1], sys.argv[sep + 1:]
    os.makedirs(out_dir, exist_ok=True)

    def build(name, defines):
        obj = os.path.join(out_dir, f"{name}{'_'.join(d.split('=')[0][9:] for d in defines)}.o")
        r = run(compiler + ["-std=c++20", "-c", os.path.join(ABI, name + ".cpp"), "-o", obj] + defines)
        if r.returncode != 0:
            sys.exit(f"compiling {name}.cpp {' '.join(defines)} failed:\n{r.stderr}")
        return obj

    main_obj = build("main", [])
    exe = os.path.join(out_dir, "abi_same")
    r = run(compiler + [main_obj, build("describe", []), "-o", exe])
    if r.returncode != 0:
        sys.exit(f"same settings: linking failed:\n{r.stderr}")
    r = run([exe])
    if r.returncode != 0 or r.stdout.strip() != "ValueError: abi test: 42":
        sys.exit(f"same settings: the program printed {r.stdout!r} (exit {r.returncode})")
    print("same settings: linked and ran")

    missing = re.compile(r"undefined reference to [`']describe\[?[^(]*\(relaxvm::v\d+_\d+::error const&\)")
    for defines in OTHER_SETTINGS:
        r = run(compiler + [main_obj, build("describe", defines), "-o", os.path.join(out_dir, "abi_mixed")])
        if r.returncode == 0:
            sys.exit(f"describe.cpp built with {' '.join(defines)} linked with a caller built without: "
                     "the ABI namespace does not tell the two apart")
        if not missing.search(r.stderr):
            sys.exit(f"with {' '.join(defines)}: linking failed, but not as expected:\n{r.stderr}")
        print(f"{' '.join(defines)}: fails to link, as it must")


if __name__ == "__main__":
    main()
