#!/usr/bin/env python3
"""Instructions by phase and by function from insn_count.so's counts and
the guest's ksym lines (README). Usage:
  report.py COUNTS GUEST_OUT [COUNTS2 GUEST_OUT2]
prints the guest's phases (guest.sh: untraced, traced, untraced again;
the instructions between marks), each module's total and the functions of
the most instructions; with a second run, both side by side and the
difference."""
import bisect
import sys


def load(counts_path, guest_path):
    syms = []
    for line in open(guest_path):
        if not line.startswith('ksym '):
            continue
        parts = line.split()
        addr, name, mod = int(parts[1], 16), parts[3], parts[4].strip('[]')
        syms.append((addr, name, mod))
    syms.sort()
    starts = [s[0] for s in syms]
    by_func, by_mod, other, total = {}, {}, 0, None
    for line in open(counts_path):
        parts = line.split()
        if parts[0] == 'total':
            total = (int(parts[2]), int(parts[4]))
            continue
        if parts[0] != 'insn':
            continue
        addr, n = int(parts[1], 16), int(parts[2])
        i = bisect.bisect_right(starts, addr) - 1
        # a symbol's code ends where the next one begins (4 KiB at most)
        if i < 0 or addr - syms[i][0] > 4096:
            other += n
            continue
        _, name, mod = syms[i]
        by_func[(mod, name)] = by_func.get((mod, name), 0) + n
        by_mod[mod] = by_mod.get(mod, 0) + n
    return by_func, by_mod, other, total


def phases(counts_path):
    marks = []
    for line in open(counts_path):
        p = line.split()
        if p[0] == 'mark':
            marks.append((int(p[3]), int(p[5]), int(p[7])))
    out = []
    for i in range(0, len(marks) - 1, 2):
        a, b = marks[i], marks[i + 1]
        out.append((b[0] - a[0] + b[1] - a[1], b[2] - a[2]))
    return out


def mod_kind(mod):
    return 'pathtrace' if mod == 'pathtrace' else 'copies'


def main():
    a = load(sys.argv[1], sys.argv[2])
    b = load(sys.argv[3], sys.argv[4]) if len(sys.argv) > 4 else None
    for name, path in (('A', sys.argv[1]), ('B', sys.argv[3] if b else None)):
        ph = phases(path) if path else []
        if len(ph) == 3:
            print(f'{name}: untraced {ph[0][0]:,} instructions, traced {ph[1][0]:,} '
                  f'(pathtrace and copies {ph[1][1]:,}), untraced again {ph[2][0]:,}; '
                  f'traced / untraced {ph[1][0] / ph[0][0]:.3f}, / untraced again '
                  f'{ph[1][0] / ph[2][0]:.3f}')
    for name, run in (('A', a), ('B', b)):
        if not run:
            continue
        kinds = {}
        for mod, n in run[1].items():
            kinds[mod_kind(mod)] = kinds.get(mod_kind(mod), 0) + n
        print(f'{name}: kernel {run[3][0]:,} user {run[3][1]:,}; ' +
              ', '.join(f'{k} {v:,}' for k, v in sorted(kinds.items())) +
              f'; other module code {run[2]:,}')
    funcs = {}
    for key, n in a[0].items():
        if key[0] == 'pathtrace':
            funcs.setdefault(key[1], [0, 0])[0] = n
    if b:
        for key, n in b[0].items():
            if key[0] == 'pathtrace':
                funcs.setdefault(key[1], [0, 0])[1] = n
    print(f'{"pathtrace.ko function":40} {"A":>14} {"B":>14} {"B - A":>14}')
    for name, (x, y) in sorted(funcs.items(), key=lambda kv: -max(kv[1]))[:40]:
        print(f'{name:40} {x:14,} {y:14,} {y - x:14,}' if b else f'{name:40} {x:14,}')


main()
