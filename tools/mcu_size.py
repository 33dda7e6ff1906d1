#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The size of a model's firmware image: what `tools/mcu.sh size MODEL.onnx` prints.

usage: mcu_size.py WORK CPU

WORK holds model.hpp (what `relaxvm cpp MODEL.onnx --name model` wrote). Builds
examples/firmware/model.cpp around it with tools/firmware.sh (arm-none-eabi-g++ -Os, terse errors:
RELAXVM_ERROR_TEXT=0; -g, which does not change the code, for the line table; -fstack-usage and
-fcallgraph-info=su), runs it once on zeros under QEMU with -icount shift=0, and prints:

flash  relaxvm's own code and read-only data (the interpreter, builtins, kernel glue: what
       tools/size_report.py counts as relaxvm's, less the kernels), the kernels' arithmetic
       (functions of namespace relaxvm::kernels and the code inlined from include/relaxvm/kernels/),
       the weights (model::weights), the program (model::program: bytecode and its constants) and
       the rest (the startup code, newlib, libgcc: soft float on the M3);
RAM    the arena, frames and objects (the header's constexpr figures, the buffers the image
       declares), the other static data, and the stack: the worst case along the call graph of
       -fcallgraph-info=su (an indirect call counted as the deepest function whose address is
       taken; library functions, which the graph has no frames for, as 0), and what the run used
       (the stack painted before the inference);
time   the instructions of one inference: ticks of the board's 25 MHz timer, 40 instructions each
       under -icount shift=0."""

import pathlib
import re
import struct
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import size_report as sr  # noqa: E402

# A symbol of namespace relaxvm::<abi>::kernels (<abi>: the inline ABI namespace).
KERNEL_SYMBOL = re.compile(r"^_Z(?:Z|GVZ|TV|TS|TI|T[hv][n0-9_]*_)?N[KVRO]*7relaxvm(\d+)")


def is_kernel(section_name):
    parts = section_name.split(".", 2)
    if len(parts) != 3:
        return False
    m = KERNEL_SYMBOL.match(parts[2])
    if not m:
        return False
    rest = parts[2][m.end() + int(m.group(1)):]  # past the ABI namespace's name
    return rest.startswith("7kernels")


def write_zeros(work):
    """in.npy: zeros of the model's input shape (input0_dims in model.hpp)."""
    m = re.search(r"input0_dims\{([^}]*)\}", (work / "model.hpp").read_text())
    dims = [int(d) for d in m.group(1).split(",") if d.strip()] if m else []
    n = 1
    for d in dims:
        n *= d
    shape = "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    (work / "in.npy").write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(4 * n))


def worst_stack(ci):
    """The deepest stack along the call graph of -fcallgraph-info=su (VCG text)."""
    frames, edges = {}, {}
    for line in pathlib.Path(ci).read_text(errors="replace").splitlines():
        m = re.match(r'node: \{ title: "([^"]+)" label: "(.*)"', line)
        if m:
            b = re.search(r"\\n(\d+) bytes \((\w+)", m.group(2))
            frames[m.group(1)] = int(b.group(1)) if b else 0
            continue
        m = re.match(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', line)
        if m:
            edges.setdefault(m.group(1), set()).add(m.group(2))
    called = {t for ts in edges.values() for t in ts}
    # Reached only through a pointer (a table's thunks, virtual functions): an indirect call's
    # possible targets.
    roots = [f for f in frames if f.split(":")[-1] in ("reset_handler", "main")]
    indirect = [f for f in frames if f not in called and f not in roots and f != "__indirect_call"]
    memo, active = {}, set()

    def depth(f):
        if f in memo:
            return memo[f]
        if f in active:  # a cycle: counted once
            return 0
        active.add(f)
        targets = set(edges.get(f, ()))
        if "__indirect_call" in targets:
            targets.discard("__indirect_call")
            targets.update(indirect)
        deepest = max((depth(t) for t in targets), default=0)
        active.discard(f)
        memo[f] = frames.get(f, 0) + deepest
        return memo[f]

    sys.setrecursionlimit(100000)
    return max((depth(r) for r in roots), default=0)


def main():
    work, cpu = pathlib.Path(sys.argv[1]), sys.argv[2]
    out = work / "size"
    write_zeros(work)
    r = subprocess.run([str(ROOT / "tools" / "firmware.sh"), "--cpu", cpu, "--icount", str(out), "model", "gcc", f"-I{work}",
                        "-DRELAXVM_ERROR_TEXT=0", "-g", "-fstack-usage", "-fcallgraph-info=su"],
                       cwd=work, capture_output=True, text=True)
    log = r.stdout + r.stderr
    if r.returncode != 0 or "heap allocations: 0" not in log:
        raise SystemExit(f"the image failed:\n{log}")
    elf, mapfile = out / "model.elf", out / "model.map"

    sizes = sr.measure(elf, mapfile)[0]  # relaxvm's, the kernels included
    sections = sr.parse_map(mapfile)
    kernel_text = [(a, a + s) for n, a, s, f in sections if n.startswith(".text") and is_kernel(n)]
    program_text = [(a, a + s) for n, a, s, f in sections if n.startswith(".text") and ".a(" not in f]
    kernel_text += [(b, e) for b, e in sr.relaxvm_lines(elf, "include/relaxvm/kernels/") if any(a <= b < z for a, z in program_text)]
    kernels = sr.union_size(kernel_text)
    kernels_rodata = sum(s for n, a, s, f in sections if n.startswith(".rodata") and is_kernel(n))
    weights = sum(s for n, a, s, f in sections if n.startswith(".rodata") and "5model7weights" in n)
    program = sum(s for n, a, s, f in sections if n.startswith(".rodata") and "5model7program" in n)
    own_text, own_rodata = sizes[".text"] - kernels, sizes[".rodata"] - kernels_rodata

    totals = {}
    for line in subprocess.run(["arm-none-eabi-size", "-A", str(elf)], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            totals[parts[0]] = int(parts[1])
    flash = sum(v for k, v in totals.items() if k in (".vectors", ".text", ".rodata", ".ARM.exidx", ".ARM.extab", ".init_array",
                                                        ".preinit_array", ".data"))
    rest = flash - own_text - own_rodata - kernels - kernels_rodata - weights - program

    memory = re.search(r"memory: arena (\d+) B, frames (\d+) B, objects (\d+) B \(constexpr\); stack (\d+) B", log)
    arena, frames, objects, stack_used = (int(memory.group(i)) for i in range(1, 5))
    ticks = int(re.search(r"timer ticks: (\d+)", log).group(1))
    stack_bound = worst_stack(out / "model.ci")
    static_ram = totals.get(".data", 0) + totals.get(".bss", 0)
    version = subprocess.run(["arm-none-eabi-g++", "-dumpversion"], capture_output=True, text=True).stdout.strip()

    print(f"{cpu}, arm-none-eabi-g++ {version} -Os, RELAXVM_HEAP=0, terse errors (RELAXVM_ERROR_TEXT=0)")
    print("flash (bytes):")
    print(f"  relaxvm (interpreter, builtins, kernel glue) {own_text + own_rodata:>8}  (.text {own_text}, .rodata {own_rodata})")
    print(f"  kernels (their arithmetic)                   {kernels + kernels_rodata:>8}")
    print(f"  weights                                      {weights:>8}")
    print(f"  program (bytecode and constants)             {program:>8}")
    print(f"  the rest (startup, newlib, libgcc)           {rest:>8}")
    print(f"  total                                        {flash:>8}")
    print("RAM (bytes):")
    print(f"  arena {arena}, frames {frames}, objects {objects} (constexpr, proved when it compiles)")
    print(f"  static data in all {static_ram} (.data {totals.get('.data', 0)}, .bss {totals.get('.bss', 0)}: those buffers, the"
          f" input and the output included)")
    print(f"  stack: {stack_bound} worst case (-fcallgraph-info=su), {stack_used} used by the run")
    print(f"time: {ticks * 40} instructions per inference ({ticks} ticks of the 25 MHz timer under -icount shift=0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
