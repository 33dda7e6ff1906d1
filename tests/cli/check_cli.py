#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the relaxvm command-line tool on real files and checks what it prints and its exit status.

    check_cli.py RELAXVM MAKE_PROGRAM FIXTURES_DIR PLUGIN PLUGIN_OTHER_ABI PLUGIN_FAILING NOT_A_PLUGIN

MAKE_PROGRAM writes a relaxvm executable (tests/cli/make_program.cpp); FIXTURES_DIR holds the files
TVM v0.19.0 wrote (tests/fixtures/tvm); the PLUGIN files are kernel libraries for --kernels
(examples/plugin/my_kernels.cpp, built for this ABI and for another; tests/cli/bad_plugin.cpp).
"""
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import tempfile

failures = []
# Whether the tool is built with AddressSanitizer, which reserves terabytes of address space for
# its shadow memory: an address-space limit would stop it from starting.
sanitized = False


def cap_address_space(gib):
    """A preexec_fn that caps the tool's address space, so that a tool allocating without bound
    fails the check (bad_alloc, abort) instead of taking the machine's memory."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))
    return None if sanitized else cap


def run(tool, *args, status=0, cwd=None, memory_gib=4, piped=None):
    """Runs the tool; `piped`: the path of a file whose bytes go to its standard input through a
    pipe (which, unlike a file given as < FILE, can be read once)."""
    stdin = None
    if piped is not None:
        with open(piped, 'rb') as f:
            stdin = f.read()
    r = subprocess.run([tool, *args], capture_output=True, input=stdin, timeout=120, cwd=cwd,
                       preexec_fn=cap_address_space(memory_gib))
    out, err = r.stdout.decode(errors='replace'), r.stderr.decode(errors='replace')
    if r.returncode != status:
        failures.append(f"relaxvm {' '.join(args)}: exit {r.returncode}, expected {status}\n{out}{err}")
    return out, err


def expect(cond, what, detail=""):
    if not cond:
        failures.append(f"{what}\n{detail}")


def read_npy(path):
    """A .npy file's format version, header and data, read with the standard library."""
    with open(path, 'rb') as f:
        data = f.read()
    assert data[:6] == b'\x93NUMPY', path
    version = data[6]
    start = 10 if version == 1 else 12
    header_len = struct.unpack('<H' if version == 1 else '<I', data[8:start])[0]
    assert (start + header_len) % 64 == 0, 'the data is 64-byte aligned'
    return version, data[start:start + header_len].decode('latin1'), data[start + header_len:]


def read_npy_floats(path):
    """A float32 .npy file's shape and values (C order), read with the standard library."""
    _, header, body = read_npy(path)
    assert "'descr': '<f4'" in header and "'fortran_order': False" in header, header
    shape = tuple(int(d) for d in header.split("'shape': (")[1].split(')')[0].split(',') if d.strip())
    return shape, list(struct.unpack(f'<{len(body) // 4}f', body))


def main():
    global sanitized
    tool, make_program, fixtures = sys.argv[1:4]
    tool = os.path.abspath(tool)  # one check runs in another directory
    plugin, plugin_other_abi, plugin_failing, not_a_plugin = (os.path.abspath(p) for p in sys.argv[4:8])
    with open(tool, 'rb') as f:
        sanitized = b'__asan_init' in f.read()
    with tempfile.TemporaryDirectory() as tmp:
        prog, grow = os.path.join(tmp, 'prog.rvx'), os.path.join(tmp, 'grow.rvx')
        uses_plugin = os.path.join(tmp, 'plugin.rvx')
        subprocess.run([make_program, prog, grow, uses_plugin], check=True)

        # --help and bad usage
        out, _ = run(tool, '--help')
        for sub in ('info', 'text', 'cpp', 'verify', 'run', 'time', 'graph', 'convert', 'embed'):
            expect(sub in out, f'--help lists {sub}', out)
        out, _ = run(tool, 'run', '--help')
        expect('float32:[[1, 2], [3, 4]]' in out, 'run --help explains inputs', out)
        run(tool, status=2)
        run(tool, 'frobnicate', status=2)
        run(tool, 'time', prog, '--format', 'xml', status=2)

        # info, text, cpp, verify
        out, _ = run(tool, 'info', prog)
        expect('relaxvm executable' in out and 'verified: yes, 1 warning' in out and 'unused' in out, 'info', out)
        out, _ = run(tool, 'info', '/dev/stdin', piped=prog)
        expect('relaxvm executable' in out and 'verified: yes, 1 warning' in out, 'info on a piped executable', out)
        out, _ = run(tool, 'text', prog)
        expect('@main:\n  call  ops.add          in: %0, %1       dst: %2\n' in out, 'text', out)
        out, _ = run(tool, 'cpp', prog)
        expect('emit_call("ops.relu"' in out, 'cpp', out)
        out, err = run(tool, 'verify', prog)
        expect(out.endswith('ok (relaxvm executable, 1 warning)\n') and 'warning:' in err, 'verify', out + err)
        run(tool, 'verify', '--strict', prog, status=1)
        junk = os.path.join(tmp, 'junk.rvx')
        with open(prog, 'rb') as f:
            good = f.read()
        with open(junk, 'wb') as f:
            f.write(good[:len(good) // 2])
        _, err = run(tool, 'verify', junk, status=1)
        expect(err.startswith('relaxvm: error: ') and 'junk.rvx' in err, 'a truncated file is an error', err)
        _, err = run(tool, 'info', os.path.join(tmp, 'missing.rvx'), status=1)
        expect("cannot open" in err and 'No such file or directory' in err, 'a missing file, and why', err)
        _, err = run(tool, 'info', tmp, status=1)
        expect('is a directory, not a file' in err, 'a directory', err)
        with open(os.path.join(tmp, 'text.txt'), 'w') as f:
            f.write('hello, not an executable')
        _, err = run(tool, 'info', os.path.join(tmp, 'text.txt'), status=1)
        expect('not a file relaxvm reads' in err and 'nor an ONNX model' in err, 'a text file', err)

        # run: literals, .npy in and out, tuples, errors
        out, _ = run(tool, 'run', prog, '[1, -2, 3]', 'float32:[1, 1, -5]')
        expect(out == 'tensor([2, 0, 0], shape=[3], dtype=float32, device=cpu:0)\n', 'run main with literals', out)
        y = os.path.join(tmp, 'y.npy')
        run(tool, 'run', prog, '[[1, 2], [3, -4]]', '[[0.5, 0.5], [0.5, 0.5]]', '-o', y)
        expect(read_npy_floats(y) == ((2, 2), [1.5, 2.5, 3.5, 0.0]), 'run -o writes .npy', str(read_npy_floats(y)))
        out, _ = run(tool, 'run', prog, y, y)  # .npy inputs
        expect(out.startswith('tensor([[3, 5], [7, 0]]'), 'run with .npy inputs', out)
        a, b = os.path.join(tmp, 'a.npy'), os.path.join(tmp, 'b.npy')
        out, _ = run(tool, 'run', prog, '-f', 'pair', '[-1, 2]', '-o', a, '-o', b)
        expect(out.startswith('(tensor([-1, 2]'), 'run pair prints the tuple', out)
        expect(read_npy_floats(a)[1] == [-1.0, 2.0] and read_npy_floats(b)[1] == [0.0, 2.0], 'tuple -o', '')
        _, err = run(tool, 'run', prog, '[1, 2]', 'int64:[1, 2]', status=1)
        expect('ops.add' in err and "in function 'main'" in err, 'a kernel error names the kernel and the function', err)
        _, err = run(tool, 'run', prog, '-f', 'nope', status=1)
        expect("no function 'nope'" in err, 'an unknown function', err)
        _, err = run(tool, 'run', prog, '[1, [2]]', '[1]', status=1)
        expect('ragged' in err or 'different lengths' in err or "'[' after" in err, 'a ragged literal', err)
        _, err = run(tool, 'run', prog, 'what?', status=1)
        expect("input 'what?' is not understood" in err, 'a bad literal', err)
        out, _ = run(tool, 'run', prog, '-f', 'unused', 'shape:2,3', '"text"')
        expect(out == 'shape[2, 3]\n', 'shape literal', out)

        # Tensor literals are parsed in their dtype: integers exactly, and nothing out of range.
        for literal, printed in [('int64:[9007199254740993, -9223372036854775808]', '[9007199254740993, -9223372036854775808]'),
                                 ('uint64:[18446744073709551615]', '[18446744073709551615]'),
                                 ('int8:[-128, 127, +5]', '[-128, 127, 5]'), ('uint16:[65535]', '[65535]'),
                                 ('float32:[3.4028235e38, -inf]', '[3.4028235e+38, -inf]'), ('bool:[true, 0]', '[true, false]')]:
            out, _ = run(tool, 'run', prog, '-f', 'unused', literal, '1')
            expect(out.startswith('tensor(' + printed), f'the literal {literal}', out)
        for literal, why in [('int8:[300]', "'300' is out of int8's range [-128, 127]"),
                             ('uint8:[-1]', "'-1' is out of uint8's range [0, 255]"),
                             ('int64:[9223372036854775808]', "is out of int64's range"),
                             ('uint64:[18446744073709551616]', "is out of uint64's range"),
                             ('int64:[1e30]', "'1e30' is not an integer"), ('int32:[nan]', "'nan' is not an integer"),
                             ('int16:[2.5]', "'2.5' is not an integer"), ('float32:[1e39]', "'1e39' is out of float32's range"),
                             ('float64:[1e400]', "is out of float64's range"), ('bool:[2]', "'2' is not a bool"),
                             ('99999999999999999999', "is out of int64's range"), ('1e400', "is out of float64's range")]:
            _, err = run(tool, 'run', prog, '-f', 'unused', literal, '1', status=1)
            expect(why in err and literal in err, f'the literal {literal} is refused', err)

        # Files are read up to --max-file-size (256 MiB by default), whatever their size says
        # (/dev/zero says 0). The default is checked in --help: reading 256 MiB is slow under ASan.
        for sub in ('info', 'text', 'cpp', 'verify', 'run', 'time', 'convert'):
            out, _ = run(tool, sub, '--help')
            expect('--max-file-size UINT:SIZE [b, kb(=1024b), ...]=268435456' in out, f'{sub} --help: file limit', out)
        _, err = run(tool, 'info', '/dev/zero', '--max-file-size', '16MiB', status=1)
        expect("'/dev/zero' is larger than --max-file-size (16777216 bytes)" in err, 'info /dev/zero', err)
        _, err = run(tool, 'info', prog, '--max-file-size', '100', status=1)
        expect('is larger than --max-file-size (100 bytes)' in err, 'a file over --max-file-size', err)
        run(tool, 'info', prog, '--max-file-size', '1MiB')
        # A limit that is negative or past 2^64 - 1 is a usage error, not "no limit".
        for limit, why in [('-1', 'a size cannot be negative'), ('18446744073709551616', 'is past 2^64 - 1'),
                           ('99999999999999999999KiB', 'is past 2^64 - 1')]:
            _, err = run(tool, 'info', prog, '--max-file-size', limit, status=2)
            expect(why in err, f'--max-file-size {limit} is refused', err)
        _, err = run(tool, 'run', prog, '[1]', '[2]', '--max-memory', '-1', status=2)
        expect('a size cannot be negative' in err, '--max-memory -1 is refused', err)
        wide = os.path.join(tmp, 'wide.npy')  # 8 KiB, more than prog.rvx
        run(tool, 'run', prog, '-f', 'unused', '[' + ', '.join(['1'] * 2048) + ']', '1', '-o', wide)
        _, err = run(tool, 'run', prog, '-f', 'unused', wide, '1', '--max-file-size', '4KiB', status=1)
        expect('wide.npy' in err and 'larger than --max-file-size (4096 bytes)' in err, 'an input over --max-file-size', err)
        _, err = run(tool, 'graph', 'run', prog, '--max-file-size', '64', status=1)
        expect('larger than --max-file-size' in err, 'graph run reads within --max-file-size', err)
        if not sanitized:  # AddressSanitizer stops the process on a failed new; the others throw bad_alloc
            _, err = run(tool, 'info', '/dev/zero', '--max-file-size', '64GiB', status=1, memory_gib=1)
            expect(err == 'relaxvm: error: out of memory: a file, an input or the program needed more than this machine '
                   'gives\n', 'running out of memory is an error, not an abort', err)

        # A hostile program: an endless loop making tuples stops at the default instruction budget.
        _, err = run(tool, 'run', grow, status=1)
        expect('instruction budget exceeded: this invocation ran 10000000 instructions' in err, 'run has a budget', err)
        _, err = run(tool, 'time', grow, '--max-instructions', '100000', '--runs', '1', status=1)
        expect('instruction budget exceeded: this invocation ran 100000 instructions' in err, 'time --max-instructions', err)
        run(tool, 'run', prog, '[1]', '[2]', '--max-instructions', '2', status=1)
        run(tool, 'run', prog, '[1]', '[2]', '--max-instructions', '3')
        run(tool, 'run', prog, '[1]', '[2]', '--max-instructions', '0', '--max-memory', '64MiB')
        run(tool, 'run', prog, '[1]', '[2]', '--max-instructions', '-1', status=2)
        for sub in ('run', 'time'):
            out, _ = run(tool, sub, '--help')
            expect('--max-instructions INT:NONNEGATIVE=10000000' in out and '=2147483648' in out, f'{sub} --help: limits', out)

        # .npy: a header's shape is checked against the file's size before anything is allocated,
        # and a header over 65,535 bytes is written in format 2.0.
        huge = os.path.join(tmp, 'huge.npy')
        header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 2), }"
        header += ' ' * (128 - 10 - len(header) - 1) + '\n'
        with open(huge, 'wb') as f:
            f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode())
        _, err = run(tool, 'run', prog, '-f', 'unused', huge, '1', status=1)
        expect('the data is 0 bytes, not the 34359738368 its shape and dtype need' in err, 'a .npy claiming 32 GiB', err)
        deep = os.path.join(tmp, 'deep.npy')
        literal = 'int32:' + '[' * 30000 + '7' + ']' * 30000
        out, _ = run(tool, 'run', prog, '-f', 'unused', literal, '1', '-o', deep)
        version, header, body = read_npy(deep)
        expect(version == 2 and header.count('1, ') == 29999 and body == struct.pack('<i', 7), '30,000 dimensions: format 2.0',
               header[:100])
        again, _ = run(tool, 'run', prog, '-f', 'unused', deep, '1')
        expect(again == out and out.startswith('tensor('), 'the format 2.0 file reads back', again[:200])

        # time, with the profiler
        out, _ = run(tool, 'time', prog, '[1, 2]', '[3, 4]', '--runs', '20', '--warmup', '2')
        expect(out.startswith('main: median ') and 'over 20 runs (2 warm-up)' in out, 'time', out)
        out, _ = run(tool, 'time', prog, '[1, 2]', '[3, 4]', '--runs', '10', '--profile')
        expect('Callee' in out and 'ops.add' in out and 'Total (runs)' in out, 'time --profile table', out)
        out, _ = run(tool, 'time', prog, '[1, 2]', '[3, 4]', '--runs', '10', '--profile', '--format', 'csv')
        rows = [line for line in out.splitlines() if line.startswith('ops.')]
        expect(len(rows) == 2 and all(',packed,10,' in r for r in rows), 'time --profile csv: 10 calls each', out)
        out, _ = run(tool, 'time', prog, '[1, 2]', '[3, 4]', '--runs', '5', '--profile', '--format', 'json')
        doc = json.loads(out[out.index('{'):])
        expect(doc['runs'] == 5 and {c['callee'] for c in doc['calls']} == {'ops.add', 'ops.relu'}, 'json', out)

        # --kernels: a kernel library's kernels run through run, time and graph run; what is not a
        # library of this ABI, or fails to register, is refused with exit 1 and the reason.
        _, err = run(tool, 'run', uses_plugin, '[1, 2]', '2', status=1)
        expect("'example.scale'" in err, 'without --kernels the kernel is missing', err)
        out, _ = run(tool, 'run', '--kernels', plugin, uses_plugin, '[1, -2.5]', '2')
        expect(out == 'tensor([2, -5], shape=[2], dtype=float32, device=cpu:0)\n', 'run --kernels', out)
        out, _ = run(tool, 'run', uses_plugin, '--kernels', plugin, '[1, -2.5]', '2')  # one path per --kernels
        expect(out.startswith('tensor([2, -5]'), 'run --kernels before the inputs', out)
        out, _ = run(tool, 'run', uses_plugin, '--kernels', plugin, '--kernels', plugin_failing, '[1]', '2', status=1)
        expect(out == '', 'a failing library stops the run', out)
        out, _ = run(tool, 'time', uses_plugin, '[1, 2]', '0.5', '--runs', '3', '--kernels', plugin, '--profile')
        expect(out.startswith('main: median ') and 'example.scale' in out, 'time --kernels', out)
        # The library sees the tool's running VM (the tool exports its symbols, so the two share
        # relaxvm's thread-local state): its kernel's work counts against --max-instructions.
        out, _ = run(tool, 'run', uses_plugin, '-f', 'fill', '3', '1.5', '--kernels', plugin)
        expect(out.startswith('tensor([1.5, 1.5, 1.5]'), 'run a library kernel that allocates', out)
        _, err = run(tool, 'run', uses_plugin, '-f', 'fill', '100000', '1', '--kernels', plugin, '--max-instructions', '1000',
                     status=1)
        expect('instruction budget exceeded' in err, "a library kernel's work counts against the tool's budget", err)
        abi = re.search(r'relaxvm ABI \((\w+)\)', run(tool, 'run', '--help')[0].replace('\n', ' '))
        expect(abi is not None, 'run --help names the ABI tag', '')
        _, err = run(tool, 'run', uses_plugin, '[1]', '2', '--kernels', plugin_other_abi, status=1)
        expect(f"'{plugin_other_abi}' was built for relaxvm ABI '{abi.group(1) if abi else ''}_atomicrc', but this program "
               f"is '{abi.group(1) if abi else ''}'" in err, 'a library of another ABI is refused, naming both', err)
        _, err = run(tool, 'run', uses_plugin, '[1]', '2', '--kernels', plugin_failing, status=1)
        expect(f"kernel library '{plugin_failing}': its registration failed: " in err and 'ops.add' in err,
               'a failing registration', err)
        _, err = run(tool, 'run', uses_plugin, '[1]', '2', '--kernels', not_a_plugin, status=1)
        expect('is not a relaxvm kernel library: it exports no relaxvm_plugin_abi_tag' in err, 'not a kernel library', err)
        _, err = run(tool, 'run', uses_plugin, '[1]', '2', '--kernels', os.path.join(tmp, 'missing.so'), status=1)
        expect("kernel library '" in err and "missing.so' does not load" in err, 'a missing library', err)
        _, err = run(tool, 'run', uses_plugin, '[1]', '2', '--kernels', 'text.txt', status=1, cwd=tmp)
        expect("kernel library 'text.txt' does not load: ./text.txt" in err, 'a bare name is a file here', err)

        # embed: .npy files (written by the tool) as a C++ header; the compile test is cli_embed.
        w1, w2 = os.path.join(tmp, 'fc1.weight.npy'), os.path.join(tmp, 'bias.npy')
        run(tool, 'run', prog, '-f', 'unused', 'float32:[[1.5, -0.0], [inf, 1e-45]]', '1', '-o', w1)
        run(tool, 'run', prog, '-f', 'unused', 'int64:[-9223372036854775808, 7]', '1', '-o', w2)
        hpp = os.path.join(tmp, 'w.hpp')
        out, _ = run(tool, 'embed', w1, w2, '-o', hpp, '--namespace', 'model::weights')
        expect(out == f'2 tensors -> {hpp} (namespace model::weights)\n', 'embed prints what it wrote', out)
        with open(hpp) as f:
            text = f.read()
        for want in ('namespace model::weights {', 'inline constexpr std::array<std::int64_t, 2> fc1_weight_shape{2, 2};',
                     'inline constexpr char fc1_weight_dtype[] = "float32";',
                     'inline constexpr std::array<float, 4> fc1_weight_data{\n    1.5f, -0.0f, '
                     'std::numeric_limits<float>::infinity(), 1e-45f,\n};',
                     'inline constexpr std::array<std::int64_t, 2> bias_data{\n    (-9223372036854775807 - 1), 7,\n};'):
            expect(want in text, f'embed writes {want}', text)
        _, err = run(tool, 'embed', w1, os.path.join(tmp, 'fc1-weight.npy'), '-o', hpp, status=1)
        expect("cannot open" in err, 'embed: a missing file', err)
        os.makedirs(os.path.join(tmp, 'sub'))
        shutil.copy(w1, os.path.join(tmp, 'sub', 'fc1-weight.npy'))
        _, err = run(tool, 'embed', w1, os.path.join(tmp, 'sub', 'fc1-weight.npy'), '-o', hpp, status=1)
        expect("both give the name 'fc1_weight'" in err, 'embed: a name collision', err)
        _, err = run(tool, 'embed', w1, '-o', hpp, '--namespace', '2x', status=1)
        expect("--namespace '2x' is not a C++ namespace name" in err, 'embed: a bad namespace', err)
        for ns in ('class', 'model::int', 'std', 'relaxvm::weights'):  # keywords; namespaces not the user's
            _, err = run(tool, 'embed', w1, '-o', hpp, '--namespace', ns, status=1)
            expect(f"--namespace '{ns}' is not a C++ namespace name" in err, f'embed: namespace {ns} is refused', err)
        half = os.path.join(tmp, 'half.npy')
        with open(half, 'wb') as f:
            header = "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }"
            header += ' ' * (64 - 10 - len(header) - 1) + '\n'
            f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode() + b'\x00\x3c')
        _, err = run(tool, 'embed', half, '-o', hpp, status=1)
        expect('holds float16, which has no C++ element type' in err, 'embed: float16 is refused', err)
        _, err = run(tool, 'embed', huge, '-o', hpp, status=1)
        expect('not the 34359738368 its shape and dtype need' in err, 'embed reads with the .npy checks', err)
        run(tool, 'embed', w1, status=2)  # no -o

        # TVM's files: info, text, run, convert both ways
        rxe = os.path.join(fixtures, 'relax_shape.rxe')
        out, _ = run(tool, 'info', rxe)
        expect('TVM Relax VM executable (v0.19.0)' in out, 'info on a TVM .rxe', out)
        out, _ = run(tool, 'text', rxe)
        expect('call  vm.builtin.shape_of in: %0           dst: %1' in out, 'text of a TVM .rxe (TVM\'s layout)', out)
        # Its main calls a kernel of TVM's test harness, which the tool does not have.
        _, err = run(tool, 'run', rxe, '-f', 'shape', 'float32:[[1, 2, 3, 4], [5, 6, 7, 8], [0, 0, 0, 0]]', status=1)
        expect("'test.add_one_f32', needed by function 'main', instruction 6" in err,
               'a kernel the tool does not have is named with the instruction that needs it', err)
        converted = os.path.join(tmp, 'shape.rvx')
        out, _ = run(tool, 'convert', rxe, converted)
        expect('-> ' + converted + ' (relaxvm executable' in out, 'convert to relaxvm', out)
        text_rxe, _ = run(tool, 'text', rxe)
        text_rvx, _ = run(tool, 'text', converted)
        expect(text_rxe == text_rvx, 'the converted file holds the same program', text_rvx)
        out, _ = run(tool, 'verify', converted)
        expect(out.endswith('ok (relaxvm executable, 0 warnings)\n'), 'the converted file verifies', out)
        back = os.path.join(tmp, 'back.rxe')
        run(tool, 'convert', converted, back, '--to', 'tvm-relax')
        with open(rxe, 'rb') as f1, open(back, 'rb') as f2:
            expect(f1.read() == f2.read(), 'relax -> relaxvm -> relax gives TVM\'s bytes back')
        ro = os.path.join(fixtures, 'relay_tensor_lb.ro')
        _, err = run(tool, 'info', ro, status=1)
        expect('late-bound' in err or 'params' in err, 'a Relay file without its constants', err)
        out, _ = run(tool, 'info', ro, '--params', os.path.join(fixtures, 'relay_tensor_lb.consts'))
        expect('TVM Relay VM executable (v0.19.0)' in out, 'info on a TVM .ro with --params', out)
        _, err = run(tool, 'info', prog, '--params', os.path.join(fixtures, 'relay_tensor_lb.consts'), status=1)
        expect('--params is for TVM Relay executables' in err, '--params on another format', err)

        # graph run: a graph of ops.add_out, with a params file TVM wrote for its inputs' names
        graph = {
            "nodes": [{"op": "null", "name": "a", "inputs": []}, {"op": "null", "name": "b", "inputs": []},
                      {"op": "tvm_op", "name": "add", "inputs": [[0, 0, 0], [1, 0, 0]],
                       "attrs": {"num_inputs": "2", "num_outputs": "1", "flatten_data": "0", "func_name": "ops.add_out"}}],
            "arg_nodes": [0, 1], "heads": [[2, 0, 0]], "node_row_ptr": [0, 1, 2, 3],
            "attrs": {"dltype": ["list_str", ["float32"] * 3], "shape": ["list_shape", [[2]] * 3],
                      "storage_id": ["list_int", [0, 1, 2]]}}
        gpath = os.path.join(tmp, 'add.json')
        with open(gpath, 'w') as f:
            json.dump(graph, f)
        out, _ = run(tool, 'graph', 'run', gpath, 'a=[1, 2]', 'b=[10, 20]', '-o', os.path.join(tmp, 'g.npy'), '--profile')
        expect(out.startswith('output 0: tensor([11, 22], shape=[2]') and 'Node Name' in out, 'graph run', out)
        expect(read_npy_floats(os.path.join(tmp, 'g.npy'))[1] == [11.0, 22.0], 'graph run -o', '')
        _, err = run(tool, 'graph', 'run', gpath, 'c=[1, 2]', status=1)
        expect("'c'" in err, 'an unknown graph input', err)
        _, err = run(tool, 'graph', 'run', os.path.join(fixtures, 'graph_mlp3.json'), '--params',
                     os.path.join(fixtures, 'graph_mlp3.params'), status=1)
        expect('fx.' in err, "TVM's graph names kernels the tool lacks", err)

        # ONNX models (tests/fixtures/onnx, exported from torch): detected by content, imported,
        # run on .npy and TensorProto (.pb) inputs, equal to torch's outputs.
        onnx_dir = os.path.join(os.path.dirname(fixtures), 'onnx')
        mlp, dyn = os.path.join(onnx_dir, 'mlp.onnx'), os.path.join(onnx_dir, 'mlp.dynbatch.onnx')
        _, want = read_npy_floats(os.path.join(onnx_dir, 'mlp.output.npy'))

        def close_to_torch(path):
            shape, got = read_npy_floats(path)
            scale = max(abs(v) for v in want)
            return shape == (1, 10) and max(abs(a - b) for a, b in zip(got, want)) <= 1e-4 * scale

        out, _ = run(tool, 'info', mlp)
        expect('ONNX model' in out and 'Gemm x3' in out and 'symbolic dims: none' in out and 'planned memory:' in out,
               'info on an ONNX model', out)
        # A pipe can be read once: the format is told and the model loaded from the same bytes.
        out, _ = run(tool, 'info', '/dev/stdin', piped=mlp)
        expect('/dev/stdin: ONNX model' in out and 'Gemm x3' in out and 'planned memory:' in out, 'info on a piped ONNX model', out)
        out, _ = run(tool, 'run', '/dev/stdin', os.path.join(onnx_dir, 'mlp.input.npy'), piped=mlp)
        expect('shape=[1, 10]' in out, 'run a piped ONNX model', out)
        out, _ = run(tool, 'info', dyn)
        expect('symbolic dims: batch' in out and 'not bounded' in out, 'info: a dynamic batch', out)
        out, _ = run(tool, 'info', dyn, '--upper-bound', 'batch=8')
        expect('bytes per call' in out, 'info: a bounded dynamic batch', out)
        for given in ('mlp.input.npy', 'mlp.input.pb'):
            y = os.path.join(tmp, 'y_' + given + '.npy')
            out, _ = run(tool, 'run', mlp, os.path.join(onnx_dir, given), '-o', y)
            expect(os.path.exists(y) and close_to_torch(y), 'run an ONNX model on ' + given, out)
        out, _ = run(tool, 'run', dyn, os.path.join(onnx_dir, 'mlp.dynbatch.batch5.input.npy'), '--upper-bound', 'batch=8')
        expect('shape=[5, 10]' in out, 'run a dynamic batch of 5', out)
        _, err = run(tool, 'run', dyn, os.path.join(onnx_dir, 'mlp.dynbatch.batch5.input.npy'), '--upper-bound', 'batch=4',
                     status=1)
        expect('batch' in err, 'past an upper bound', err)
        _, err = run(tool, 'run', dyn, os.path.join(onnx_dir, 'mlp.input.npy'), '--upper-bound', 'width=8', status=1)
        expect("no input has a dimension of that name" in err, 'an upper bound for an unknown name', err)
        _, err = run(tool, 'run', prog, '1', '--upper-bound', 'batch=8', status=1)
        expect('--upper-bound is for ONNX models' in err, '--upper-bound on an executable', err)
        out, _ = run(tool, 'text', mlp)
        expect('@main' in out and 'onnx.Relu' in out, 'text: an ONNX model as IR, then bytecode', out)
        out, _ = run(tool, 'time', mlp, os.path.join(onnx_dir, 'mlp.input.npy'), '--runs', '3', '--warmup', '1')
        expect('median' in out, 'time an ONNX model', out)
        rvx = os.path.join(tmp, 'mlp.rvx')
        run(tool, 'convert', mlp, rvx)
        # Tensor constants (the weights) show their kind and dtype ("tensor float32[256, 784]"), and
        # no entry of the pool is bare dims, as the reference's stats print a tensor ("[256, 784]").
        out, _ = run(tool, 'info', rvx)
        pool = next((line for line in out.splitlines() if 'Constant pool' in line), '')
        expect('tensor float32[256, 784], tensor float32[256]' in pool and not re.search(r'(, |: \[)\[\d', pool),
               'info names tensor constants with their dtype', out)
        y = os.path.join(tmp, 'y_rvx.npy')
        run(tool, 'run', rvx, os.path.join(onnx_dir, 'mlp.input.npy'), '-o', y)
        expect(os.path.exists(y) and close_to_torch(y), 'an ONNX model converted to .rvx runs the same', '')

    if failures:
        print('\n\n'.join(failures))
        return 1
    print('relaxvm command-line tool: all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
