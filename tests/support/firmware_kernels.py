#!/usr/bin/env python3
"""The portable kernels in firmware mode on Cortex-M: each family's registration
(src/kernels_<family>.cpp, which includes kernels/register_<family>.hpp and so every kernel of
the family) compiled with arm-none-eabi-g++ and the firmware flags (tools/firmware_flags.txt:
-Os, -fno-exceptions, -fno-rtti, RELAXVM_HEAP=0), RELAXVM_THREADS=0, for the Cortex-M3 (soft
float; the Cortex-M4 with its FPU is built by mcu_models); prints each object's .text.

usage: firmware_kernels.py OUT_DIR

The gates (the run fails on any):
- a family that does not compile without warnings;
- an object referring to exception support (__cxa_*, __gxx_personality*, _Unwind*);
- a function that refers to the heap (operator new/delete, malloc and friends) or to libstdc++'s
  __throw_* helpers, other than the registry's name table (basic_registry keeps names as
  std::string in a vector: the hosted registration path). The kernels and their packed-function
  glue never allocate.
Exits 77 (meson's skip) when arm-none-eabi-g++ is missing."""

import concurrent.futures
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
FAMILIES = ["elementwise", "reduce", "linalg", "window", "data"]
# The Cortex-M3 (soft float) for every family; the Cortex-M4 with its FPU builds the kernels the
# firmware models call (mcu_models, tools/mcu.sh), so each family once is enough here.
CPUS = {
    "cortex-m3": ["-mcpu=cortex-m3"],
}
EXCEPTION_SYMBOLS = re.compile(r"^(__cxa_\w+|__gxx_personality\w*|_Unwind_\w+)$")
HEAP_SYMBOLS = re.compile(r"^(malloc|_malloc_r|calloc|_calloc_r|realloc|_realloc_r|free|_free_r|_Zn[wa]j\w*|_Zd[la]Pv\w*|"
                          r"_ZSt\d+__throw_\w+)$")
# The functions allowed to refer to the heap: the registry's table of names (a vector of
# (std::string, closure) pairs) and std::string itself, as their mangled section names start.
REGISTRY_STORAGE = re.compile(r"^\.text\._ZN(St6vectorISt4pairINSt7__cxx1112basic_string|St7__cxx1112basic_string)")


def compile_one(out, family, cpu):
    flags = [f for f in (ROOT / "tools" / "firmware_flags.txt").read_text().split() if not f.startswith("-mcpu=")]
    obj = out / f"{family}.{cpu}.o"
    cmd = (["arm-none-eabi-g++"] + CPUS[cpu] + flags +
           ["-DRELAXVM_THREADS=0", "-DRELAXVM_SEPARATE_COMPILATION", f"-I{ROOT / 'include'}", "-idirafter", "/usr/include",
            "-c", str(ROOT / "src" / f"kernels_{family}.cpp"), "-o", str(obj)])
    r = subprocess.run(cmd, capture_output=True, text=True)
    return obj, r


def problems(obj):
    bad = []
    undefined = subprocess.run(["arm-none-eabi-nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout.split()
    bad += [f"refers to exception support: {s}" for s in undefined if EXCEPTION_SYMBOLS.match(s)]
    section = None
    for line in subprocess.run(["arm-none-eabi-objdump", "-r", str(obj)], capture_output=True, text=True, check=True).stdout.splitlines():
        m = re.match(r"RELOCATION RECORDS FOR \[(.*)\]:", line)
        if m:
            section = m.group(1)
            continue
        parts = line.split()
        if len(parts) == 3 and HEAP_SYMBOLS.match(parts[2]) and not REGISTRY_STORAGE.match(section or ""):
            name = subprocess.run(["c++filt"], input=section.removeprefix(".text."), capture_output=True, text=True).stdout.strip()
            bad.append(f"{name[:160]} refers to {parts[2]}")
    return sorted(set(bad))


def main():
    if shutil.which("arm-none-eabi-g++") is None:
        print("arm-none-eabi-g++ is missing (tools/setup.sh installs gcc-arm-none-eabi): skipped")
        return 77
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build-firmware-kernels")
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(f, c) for f in FAMILIES for c in CPUS]
    failures = []
    sizes = {}
    # Two at a time: each compile takes up to a minute and 400 MB.
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for (family, cpu), (obj, r) in zip(jobs, pool.map(lambda j: compile_one(out, *j), jobs)):
            if r.returncode != 0 or r.stderr.strip():
                failures.append(f"{family} ({cpu}): does not compile cleanly:\n{r.stderr[-4000:]}")
                continue
            text = subprocess.run(["arm-none-eabi-size", str(obj)], capture_output=True, text=True, check=True).stdout
            sizes[(family, cpu)] = int(text.splitlines()[1].split()[0])
            failures += [f"{family} ({cpu}): {p}" for p in problems(obj)]
    print("The kernels' families in firmware mode, arm-none-eabi-g++ -Os: .text of each object (bytes)")
    print(f"{'family':12}" + "".join(f"{c:>11}" for c in CPUS))
    for family in FAMILIES:
        print(f"{family:12}" + "".join(f"{sizes.get((family, c), '-'):>11}" for c in CPUS))
    print(f"{'total':12}" + "".join(f"{sum(v for (f, c), v in sizes.items() if c == cpu):>11}" for cpu in CPUS))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
