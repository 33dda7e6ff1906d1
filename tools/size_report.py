#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Size report and gates for firmware (Cortex-M3, thumb, RELAXVM_HEAP=0).

usage: size_report.py [--out DIR] [--no-gates] [--skip-variants]

Builds four probes, each with full error messages and with terse ones (RELAXVM_ERROR_TEXT=0),
with tools/firmware.sh (arm-none-eabi-g++ -Os and the flags of tools/firmware_flags.txt, linked
with --gc-sections and a linker map; the script is the one place that knows each toolchain):

  interpreter          tools/size/interpreter.cpp: static_vm running one vm function that calls
                       one typed int64 function (static_dispatch::interpret)
  interpreter, compile the same, static_dispatch::compile
  firmware example     examples/firmware/main.cpp (built and run under QEMU by tools/firmware.sh)
  all 23 builtins      tools/size/builtins.cpp: every builtin of the shape and memory tables called

What it counts as relaxvm's, from the map and the line table (the measured builds use -g, which
does not change the code): every input section named after a symbol of namespace relaxvm (its
mangled name's outermost scope, so a user function that takes relaxvm types is not counted), the
code the line table attributes to relaxvm's headers wherever the compiler inlined it (a user
function that calls the VM once gets the VM's loop inlined), and what relaxvm's code and data
point at in the program's other read-only data: string literals (the bytes of each string it
refers to) and unnamed constant tables. Library code is not relaxvm's; the report names the libgcc 64-bit
division helpers an image links, as they cost about 870 B.

The gates (they fail the run, and the test that runs it):
- each terse probe's relaxvm .text + .rodata is at most its ceiling (the issue's target where it
  is met, else today's figure: a regression gate), and the report says how far from the target;
- no terse probe links malloc, _malloc_r, operator new, __cxa_*, __gxx_personality*, _Unwind*, or
  a 64-bit division helper unless the program divides 64-bit numbers itself (the builtins do:
  shape arithmetic); the same check again with g++ -flto and with clang 16 -Oz;
- the firmware examples (main.cpp, and ir.cpp written as IR) run under QEMU with no heap
  allocation counted from reset, built with g++ -Os, g++ -flto and clang 16 -Oz.

--skip-variants leaves out the -flto and clang builds (faster, for looking at sizes)."""

import argparse
import bisect
import concurrent.futures
import os
import pathlib
import re
import struct
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TARGET_NOTE = "Cortex-M3, -Os, terse errors: relaxvm's .text + .rodata (from the linker map)"

# name, source, extra compile flags, whether the program itself divides 64-bit numbers,
# the target (terse .text + .rodata), and the ceiling the gate holds today.
PROBES = [
    ("interpreter", "tools/size/interpreter.cpp", ["-DPROBE_COMPILE=0"], False, 2560, 2560),
    ("interpreter, compile mode", "tools/size/interpreter.cpp", ["-DPROBE_COMPILE=1"], False, 2048, 2048),
    ("firmware example", "examples/firmware/main.cpp", [], False, 6144, 6144),
    ("all 23 builtins", "tools/size/builtins.cpp", [], True, 16384, 16384),
]

HEAP_SYMBOLS = re.compile(r"^(malloc|_malloc_r|calloc|_calloc_r|realloc|_realloc_r|_Zn[wa]j.*|__cxa_\w+|"
                          r"__gxx_personality\w*|_Unwind_\w+)$")
DIV64_SYMBOLS = re.compile(r"^(__aeabi_ldivmod|__aeabi_uldivmod|__udivmoddi4|__divmoddi4|"
                           r"__divdi3|__udivdi3|__moddi3|__umoddi3)$")
LIBGCC_DIV64_OBJECTS = r"libgcc\.a\((_aeabi_u?ldivmod|_u?divmoddi4|_u?divdi3|_u?moddi3|_dvmd_tls)\.o\)"
# A symbol of namespace relaxvm: its outermost scope (after special-name prefixes: local
# statics' Z, guard variables, vtables and type info, thunks) is `relaxvm`.
RELAXVM_SYMBOL = re.compile(r"^_Z(?:Z|GVZ|TV|TS|TI|T[hv][n0-9_]*_)?N[KVRO]*7relaxvm")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{r.stdout}{r.stderr}")
    return r.stdout


def build_probe(source, out_dir, extra, toolchain="gcc"):
    """Builds a probe (entry point relaxvm_size_probe) with tools/firmware.sh --probe into
    out_dir/probe.elf and .map."""
    run([str(ROOT / "tools" / "firmware.sh"), "--probe", str(out_dir), source, toolchain, *extra])
    return out_dir / "probe.elf", out_dir / "probe.map"


def build_example(example, out_dir, toolchain, extra):
    """Builds and runs examples/firmware/EXAMPLE.cpp with tools/firmware.sh; (elf, map, output)."""
    for stale in (out_dir / f"{example}.elf", out_dir / f"{example}.map"):  # a failed build leaves none
        stale.unlink(missing_ok=True)
    r = subprocess.run([str(ROOT / "tools" / "firmware.sh"), str(out_dir), example, toolchain, *extra],
                       capture_output=True, text=True)
    output = r.stdout + r.stderr  # QEMU writes semihosting output to stderr
    return out_dir / f"{example}.elf", out_dir / f"{example}.map", r.returncode, output


# ---- reading the image ----------------------------------------------------------------------

def parse_map(mapfile):
    """Input sections placed in the image: (name, address, size, file)."""
    text = pathlib.Path(mapfile).read_text(errors="replace")
    text = text.split("Linker script and memory map", 1)[1]
    sections, pending = [], None
    full = re.compile(r"^ (\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
    cont = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
    for line in text.splitlines():
        m = full.match(line)
        if m:
            sections.append((m.group(1), int(m.group(2), 16), int(m.group(3), 16), m.group(4)))
            pending = None
            continue
        if pending is not None:
            m = cont.match(line)
            if m:
                sections.append((pending, int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
            pending = None
            continue
        if re.match(r"^ \.\S+$", line):
            pending = line.strip()
    return [s for s in sections if s[2] > 0]


class Image:
    """The loadable bytes of an ELF32 little-endian image, by address."""

    def __init__(self, path):
        data = pathlib.Path(path).read_bytes()
        shoff, = struct.unpack_from("<I", data, 0x20)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
        self.chunks = []
        for i in range(shnum):
            _, kind, flags, addr, off, size = struct.unpack_from("<IIIIII", data, shoff + i * shentsize)
            if kind == 1 and flags & 2 and size:  # PROGBITS, allocated
                self.chunks.append((addr, data[off:off + size]))

    def read(self, addr, n):
        for base, chunk in self.chunks:
            if base <= addr < base + len(chunk):
                return chunk[addr - base:addr - base + n]
        return b""

    def c_string_end(self, addr, limit):
        for base, chunk in self.chunks:
            if base <= addr < base + len(chunk):
                end = chunk.find(b"\0", addr - base, limit - base)
                return base + (end if end >= 0 else limit - base - 1) + 1
        return addr


def literal_words(elf):
    """(address, value) of every word in the literal pools of the image's code."""
    words = []
    out = run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", str(elf)])
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+\.word\s+0x([0-9a-f]+)", line)
        if m:
            words.append((int(m.group(1), 16), int(m.group(2), 16)))
    return words


def relaxvm_lines(elf, prefix="include/relaxvm/"):
    """Code ranges the line table attributes to relaxvm's headers (include/relaxvm/, or the
    headers under `prefix`): what the compiler inlined into functions of the program counts as
    relaxvm's too. (The probes are built with -g, which does not change the code.)"""
    ranges, path, start, mine = [], "", None, False
    out = run(["arm-none-eabi-objdump", "--dwarf=decodedline", str(elf)])
    for line in out.splitlines():
        if line.endswith(":") and not line.startswith(" ") and "/" in line:
            path = line[:-1]
            continue
        fields = line.split()
        if len(fields) < 3 or not fields[2].startswith("0x") and not fields[2].isdigit():
            continue
        addr = int(fields[2], 16) if fields[2].startswith("0x") else int(fields[2])
        if start is not None and mine and addr > start:
            ranges.append((start, addr))
        if fields[1] == "-":  # the end of a sequence
            start, mine = None, False
        else:
            start, mine = addr, prefix in path
    return ranges


def is_relaxvm(section_name):
    parts = section_name.split(".", 2)  # "", "text", "<symbol>"
    return len(parts) == 3 and RELAXVM_SYMBOL.match(parts[2]) is not None


def union_size(ranges):
    """Bytes covered by (start, end) ranges: merged string sections overlap where strings share a tail."""
    total, reach = 0, 0
    for start, end in sorted(ranges):
        start = max(start, reach)
        if end > start:
            total += end - start
            reach = end
    return total


def measure(elf, mapfile):
    """relaxvm's bytes by section kind, the 64-bit division helpers linked with their bytes, and
    all the image's symbols."""
    sections = parse_map(mapfile)
    image = Image(elf)
    ranges = {".text": [], ".rodata": [], ".data": [], ".bss": []}
    owned = []
    for name, addr, size, _ in sections:
        kind = "." + name.split(".")[1]
        # With -fdata-sections, g++ puts a function's string literals in .rodata.<function>.str1.N:
        # named after the function, they are counted with it.
        if kind in ranges and is_relaxvm(name):
            ranges[kind].append((addr, addr + size))
            owned.append((name, addr, size))
    # relaxvm's code inlined into the program's functions.
    program_text = [(a, a + s) for n, a, s, f in sections if n.startswith(".text") and ".a(" not in f]
    for start, end in relaxvm_lines(elf):
        if any(a <= start < b for a, b in program_text):
            ranges[".text"].append((start, end))
    code = []  # the same ranges, merged, in address order
    for start, end in sorted(ranges[".text"]):
        if code and start <= code[-1][1]:
            code[-1] = (code[-1][0], max(code[-1][1], end))
        else:
            code.append((start, end))
    starts = [start for start, _ in code]

    def in_code(addr):
        k = bisect.bisect_right(starts, addr) - 1
        return k >= 0 and addr < code[k][1]

    # What relaxvm's code (literal pools) and data (pointers) refer to among the program's other
    # read-only data: string literals (the bytes of each string), unnamed constants.
    pointers = {value for addr, value in literal_words(elf) if in_code(addr)}
    for name, addr, size in owned:
        if not name.startswith((".text.", ".bss.")):
            data = image.read(addr, size)
            pointers.update(struct.unpack_from("<I", data, k)[0] for k in range(0, len(data) - 3, 4))
    unnamed = re.compile(r"^\.rodata(\.str\d|\.cst\d|\.CSWTCH\.|\.\.L|$)")
    program_rodata = [(n, a, s) for n, a, s, f in sections
                      if n.startswith(".rodata") and ".a(" not in f and not is_relaxvm(n)
                      and (unnamed.match(n) or ".str" in n)]
    for p in pointers:
        for n, a, s in program_rodata:
            if a <= p < a + s:
                ranges[".rodata"].append((p, image.c_string_end(p, a + s)) if ".str" in n else (a, a + s))
    sizes = {kind: union_size(r) for kind, r in ranges.items()}
    symbols = set()
    for line in run(["arm-none-eabi-nm", str(elf)]).splitlines():
        parts = line.split()
        if len(parts) >= 3:
            symbols.add(parts[-1])
    div64 = sorted(s for s in symbols if DIV64_SYMBOLS.match(s))
    # libgcc's objects for them (and __aeabi_ldiv0's), as the map places them.
    div64_bytes = sum(s for n, _, s, f in sections if n == ".text" and re.search(LIBGCC_DIV64_OBJECTS, f))
    return sizes, div64, div64_bytes, symbols


def forbidden(symbols, may_divide):
    bad = sorted(s for s in symbols if HEAP_SYMBOLS.match(s))
    if not may_divide:
        bad += sorted(s for s in symbols if DIV64_SYMBOLS.match(s))
    return bad


# ---- the report -------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "build-firmware"))
    ap.add_argument("--no-gates", action="store_true", help="report only")
    ap.add_argument("--skip-variants", action="store_true", help="no -flto and clang builds")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    terse_flag = "-DRELAXVM_ERROR_TEXT=0"
    failures = []

    # Every build is independent: two at a time on a 2-core machine.
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        for i, (name, source, extra, _, _, _) in enumerate(PROBES):
            for terse in (False, True):
                variants = ["gcc"] + ([] if args.skip_variants or not terse else ["gcc-lto", "clang"])
                for tc in variants:
                    tag = f"probe{i}-{'terse' if terse else 'full'}-{tc}"
                    # -g (which does not change the code) gives the line table measure() reads.
                    extra_flags = [*extra, *([terse_flag] if terse else []), *(["-g"] if tc == "gcc" else [])]
                    if source.startswith("examples/"):
                        jobs[(i, terse, tc)] = pool.submit(build_example, "main", out / tag, tc, extra_flags)
                    else:
                        jobs[(i, terse, tc)] = pool.submit(build_probe, source, out / tag, extra_flags, tc)
        ir_jobs = {tc: pool.submit(build_example, "ir", out / f"ir-{tc}", tc, ["-g"] if tc == "gcc" else [])
                   for tc in (["gcc"] + ([] if args.skip_variants else ["gcc-lto", "clang"]))}
        results = {}
        for key, job in jobs.items():
            try:
                results[key] = job.result()
            except RuntimeError as e:
                failures.append(f"{PROBES[key[0]][0]} ({'terse' if key[1] else 'full'}, {key[2]}): {e}")
        ir_results = {tc: j.result() for tc, j in ir_jobs.items()}

    print(f"relaxvm size report: {TARGET_NOTE}; arm-none-eabi-g++ "
          f"{run(['arm-none-eabi-g++', '-dumpversion']).strip()}, -mcpu=cortex-m3 -Os, RELAXVM_HEAP=0")
    print(f"{'probe':27} {'full':>14} {'terse':>14} {'target':>7} {'gate':>6}  libgcc 64-bit division (terse)")
    examples_run = {}
    for i, (name, source, _, may_divide, target, ceiling) in enumerate(PROBES):
        row = {}
        for terse in (False, True):
            res = results.get((i, terse, "gcc"))
            if res is None:
                continue
            if source.startswith("examples/"):
                elf, mapfile, rc, output = res
                examples_run[("main", terse, "gcc")] = (rc, output)
                if not elf.exists():  # it did not build: its failure is reported below
                    continue
            else:
                elf, mapfile = res
            row[terse] = measure(elf, mapfile)
        if len(row) < 2:
            continue
        cells = []
        for terse in (False, True):
            s = row[terse][0]
            cells.append(f"{s['.text']:>6}+{s['.rodata']:<5} B")
        total = row[True][0][".text"] + row[True][0][".rodata"]
        div = row[True][1]
        div_text = f"{', '.join(div)} ({row[True][2]} B)" if div else "none"
        status = "met" if total <= target else f"{total - target} B over"
        print(f"{name:27} {cells[0]:>14} {cells[1]:>14} {target:>7} {ceiling:>6}  {div_text}; target {status}")
        if total > ceiling:
            failures.append(f"{name}: relaxvm's .text + .rodata is {total} B with terse errors, above its gate of "
                            f"{ceiling} B (target {target} B)")
        for tc in ("gcc", "gcc-lto", "clang"):
            res = results.get((i, True, tc))
            if res is None:
                continue
            elf = res[0]
            if source.startswith("examples/"):
                examples_run[("main", True, tc)] = (res[2], res[3])
                continue  # the example links the counting wrappers of malloc: it is checked at run time
            symbols = row[True][3] if tc == "gcc" else measure(elf, res[1])[3]
            bad = forbidden(symbols, may_divide)
            if bad:
                failures.append(f"{name} (terse, {tc}) links {', '.join(bad[:8])}")
    print("(full / terse: .text+.rodata; target: the terse build's goal; gate: the run fails above it)")

    print("The firmware examples under QEMU (heap allocations counted from reset):")
    for (example, terse, tc), (rc, output) in sorted(examples_run.items()) + \
            [(("ir", False, tc), (r[2], r[3])) for tc, r in ir_results.items()]:
        heap = [l for l in output.splitlines() if l.startswith("heap allocations:")]
        ram = [l for l in output.splitlines() if l.startswith("memory:")]
        what = f"{example}.cpp, {tc}{', terse' if terse else ''}"
        if rc != 0 or not heap:
            failures.append(f"{what} failed:\n{output}")
            continue
        size = ""
        if tc == "gcc":  # relaxvm's bytes in it
            tag = f"probe2-{'terse' if terse else 'full'}-gcc" if example == "main" else "ir-gcc"
            own = measure(out / tag / f"{example}.elf", out / tag / f"{example}.map")[0]
            size = f"relaxvm .text {own['.text']} B, .rodata {own['.rodata']} B; "
        print(f"  {what:24} {size}{heap[0]}; {ram[0][len('memory: '):] if ram else ''}")

    if failures:
        print("\nFAILED:\n" + "\n".join(failures), file=sys.stderr)
        return 0 if args.no_gates else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
