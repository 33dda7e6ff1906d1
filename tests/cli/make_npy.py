#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the .npy files the `relaxvm embed` compile test embeds (tests/cli/embed_check.cpp checks
their values), with the standard library only:

    make_npy.py OUTDIR
"""
import os
import struct
import sys

# name: (descr, shape, struct format, values); the names need sanitizing into identifiers.
FILES = {
    'dense-1.weight.npy': ('<f4', (2, 3), 'f', [1.5, -0.0, float('inf'), -float('inf'), 1e-45, 3.4028234663852886e38]),
    'positions.npy': ('<i8', (4,), 'q', [0, -1, -9223372036854775808, 9223372036854775807]),
    'mask.npy': ('|b1', (2, 2), '?', [True, False, False, True]),
    'empty.npy': ('<f4', (0, 3), 'f', []),
    '2scale.npy': ('<f8', (), 'd', [0.1]),
    'bytes.npy': ('|u1', (3,), 'B', [0, 128, 255]),
    'nan.npy': ('<f4', (2,), 'I', [0x7FC00001, 0xFFC00000]),  # NaNs by their bits: a payload, a sign
}


def npy(descr, shape, fmt, values):
    dims = ', '.join(str(d) for d in shape) + (',' if len(shape) == 1 else '')
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode() + struct.pack('<%d%s' % (len(values), fmt), *values)


def main():
    for name, spec in FILES.items():
        with open(os.path.join(sys.argv[1], name), 'wb') as f:
            f.write(npy(*spec))
    return 0


if __name__ == '__main__':
    sys.exit(main())
