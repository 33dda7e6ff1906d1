#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the relaxvm command-line tool on real files and checks what it prints and its exit status.

    check_cli.py RELAXVM MAKE_PROGRAM FIXTURES_DIR

MAKE_PROGRAM writes a relaxvm executable (tests/cli/make_program.cpp); FIXTURES_DIR holds the files
TVM v0.19.0 wrote (tests/fixtures/tvm).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

failures = []


def run(tool, *args, status=0, cwd=None):
    r = subprocess.run([tool, *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    if r.returncode != status:
        failures.append(f"relaxvm {' '.join(args)}: exit {r.returncode}, expected {status}\n{r.stdout}{r.stderr}")
    return r.stdout, r.stderr


def expect(cond, what, detail=""):
    if not cond:
        failures.append(f"{what}\n{detail}")


def read_npy_floats(path):
    """A float32 .npy file's shape and values (C order), read with the standard library."""
    with open(path, 'rb') as f:
        data = f.read()
    assert data[:6] == b'\x93NUMPY', path
    header_len = struct.unpack('<H', data[8:10])[0]
    header = data[10:10 + header_len].decode('latin1')
    assert "'descr': '<f4'" in header and "'fortran_order': False" in header, header
    shape = tuple(int(d) for d in header.split("'shape': (")[1].split(')')[0].split(',') if d.strip())
    body = data[10 + header_len:]
    return shape, list(struct.unpack(f'<{len(body) // 4}f', body))


def main():
    tool, make_program, fixtures = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, 'prog.rvx')
        subprocess.run([make_program, prog], check=True)

        # --help and bad usage
        out, _ = run(tool, '--help')
        for sub in ('info', 'text', 'cpp', 'verify', 'run', 'time', 'graph', 'convert'):
            expect(sub in out, f'--help lists {sub}', out)
        out, _ = run(tool, 'run', '--help')
        expect('float32:[[1, 2], [3, 4]]' in out, 'run --help explains inputs', out)
        run(tool, status=2)
        run(tool, 'frobnicate', status=2)
        run(tool, 'time', prog, '--format', 'xml', status=2)

        # info, text, cpp, verify
        out, _ = run(tool, 'info', prog)
        expect('relaxvm executable' in out and 'verified: yes, 1 warning' in out and 'unused' in out, 'info', out)
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
        expect("cannot open" in err, 'a missing file', err)
        with open(os.path.join(tmp, 'text.txt'), 'w') as f:
            f.write('hello, not an executable')
        _, err = run(tool, 'info', os.path.join(tmp, 'text.txt'), status=1)
        expect('not an executable relaxvm reads' in err, 'a text file', err)

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

    if failures:
        print('\n\n'.join(failures))
        return 1
    print('relaxvm command-line tool: all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
