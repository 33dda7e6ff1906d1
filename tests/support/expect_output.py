#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a program and checks its exit status and that its output holds every expected line.

    expect_output.py EXPECTED_FILE [--fail] -- PROGRAM [ARGS...]

EXPECTED_FILE: one text per line that must appear in the program's stdout + stderr (blank lines
and lines starting with '#' are skipped). --fail: the program must exit non-zero (else zero).
"""
import subprocess
import sys


def main() -> int:
    args = sys.argv[1:]
    if '--' not in args or not args:
        print(__doc__, file=sys.stderr)
        return 2
    cut = args.index('--')
    expected_file, options, command = args[0], args[1:cut], args[cut + 1:]
    must_fail = '--fail' in options
    with open(expected_file, encoding='utf-8') as f:
        expected = [line.rstrip('\n') for line in f if line.strip() and not line.startswith('#')]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    output = run.stdout + run.stderr
    problems = []
    if must_fail and run.returncode == 0:
        problems.append('exited 0, but it must fail')
    if not must_fail and run.returncode != 0:
        problems.append(f'exited {run.returncode}')
    problems += [f'missing: {line}' for line in expected if line not in output]
    if problems:
        print(output)
        print('\n'.join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
