#!/usr/bin/env python3
"""Compares the frames the experiment's unwinder found (OUT/xunwind.txt)
with where pathregen attributes the same ENTERs (OUT/x1.bin, regenerated
from plans that block every loud call): per (function, call site) pair,
present on both sides and in the same share. Usage: compare.py OUT PATHREGEN"""
import collections, json, re, subprocess, sys

out, pathregen = sys.argv[1], sys.argv[2]
d = json.loads(subprocess.run([pathregen, '--json', out + '/x1.bin'],
                              capture_output=True, check=True, text=True).stdout)
funcs = {f['id']: f for f in d['functions']}


def sym(a):
    for f in d['functions']:
        for b in f['blocks']:
            ba = int(b['addr'], 16)
            if ba < a <= ba + b['size']:
                return f['name'] + '+0x%x' % (a - int(f['addr'], 16))
    return hex(a)


# ENTERs from untraced code (no return address) nested in a traced activation:
# the call site is the end of the caller's current block (its call)
reg = collections.Counter()
top = 0
for s in d['streams']:
    stack = []
    for ev in s['events']:
        t = ev['ev']
        if t == 'enter':
            if not stack:
                top += 1
            elif int(ev.get('ret', '0x1'), 16) == 0:
                b = funcs[stack[-1][0]]['blocks'][stack[-1][1]]
                reg[(ev['func'], sym(int(b['addr'], 16) + b['size']))] += 1
            stack.append([ev['func'], 0])
        elif t == 'block' and stack:
            stack[-1][1] = ev['block']
        elif t == 'exit' and stack:
            stack.pop()
        elif t in ('gap', 'truncated', 'resync'):
            stack = []
ker = collections.Counter()
for line in open(out + '/xunwind.txt'):
    m = re.search(r'xpair cpu=\d+ id=(\d+) res=1 n=(\d+) r=(\S+)', line)
    if m:
        ker[(int(m[1]), m[3].split('/')[0])] += int(m[2])
ks, rs = set(ker), set(reg)
tr, tk = sum(reg.values()), sum(ker.values())
print('regen: outermost ENTERs %d, nested ENTERs from untraced code %d' % (top, tr))
print('pairs: kernel %d, pathregen %d, both %d' % (len(ks), len(rs), len(ks & rs)))
print('pathregen only:', sorted(rs - ks))
print('kernel only:', sorted((k, ker[k]) for k in ks - rs))
off = [(k, reg[k] / tr, ker[k] / tk) for k in ks & rs if abs(reg[k] / tr - ker[k] / tk) > 0.01]
print('pairs whose shares differ by more than 1%:', off)
