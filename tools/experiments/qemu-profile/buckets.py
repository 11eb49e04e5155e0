#!/usr/bin/env python3
# buckets.py DATA...: perf samples of each recording (watch.py) by what QEMU
# was doing, one column per recording: "jit" the translated guest code,
# "q:qht" the global hash of translation blocks, "q:cpu-exec.c@ADDR" the
# unnamed code between cpu_loop_exit and cpu_exec (cpu-exec.c's static
# functions: finding the next block and entering it) in Debian's
# qemu-system-x86 1:7.2+dfsg-7+deb12u18, whose binary is stripped but for
# its exported symbols, so a static function shows as an address (here
# rounded down to 256 bytes), "q:softmmu" the soft TLB's fills and slow
# loads, "q:ADDR" other unnamed code by 4 KiB, "hostkernel" the host
# kernel, "lib:NAME" libraries. -g: coarse groups instead (the JIT's code,
# finding blocks, the exported soft-TLB functions, two unnamed ranges near
# them, other QEMU code, host kernel, libraries).
import subprocess, sys, collections
def cls(dso, sym):
    if dso.startswith('[JIT]'): return 'jit'
    if 'kernel' in dso: return 'hostkernel'
    if 'qemu' not in dso: return 'lib:' + dso.split('/')[-1]
    if sym.startswith('0x'):
        a = int(sym, 16)
        if 0x7d7e00 <= a < 0x7d8c00: return 'q:cpu-exec.c@' + hex(a & ~0xff)
        return 'q:' + hex(a & ~0xfff)
    if sym.startswith('qht_'): return 'q:qht'
    if 'tlb' in sym or sym.startswith('helper_le') or 'probe_access' in sym or 'get_page_addr' in sym or 'iotlb' in sym: return 'q:softmmu'
    return 'q:' + sym
def group(b):
    if b.startswith('q:qht') or b.startswith('q:cpu-exec.c') or b == 'q:cpu_exec': return 'finding blocks'
    if b == 'q:softmmu': return 'soft TLB'
    # unnamed code just before x86_cpu_tlb_fill (0x658300), and between
    # plugin_gen_tb_end (0x7e1d00) and tlb_init (0x7e4e00)
    if b in ('q:0x657000', 'q:0x658000'): return 'unnamed@0x657000'
    if b in ('q:0x7e2000', 'q:0x7e3000', 'q:0x7e4000'): return 'unnamed@0x7e2000'
    if b.startswith('q:'): return 'other QEMU'
    if b.startswith('lib:'): return 'libraries'
    return b
coarse = sys.argv[1:2] == ['-g']
files = sys.argv[2:] if coarse else sys.argv[1:]
res = {}
for f in files:
    out = subprocess.run(['perf', 'report', '-i', f, '--sort', 'dso,sym', '--stdio', '-F', 'sample,dso,sym'], capture_output=True, text=True).stdout
    c = collections.Counter()
    for line in out.splitlines():
        if not line.strip() or line.startswith('#'): continue
        p = line.split()
        n = int(p[0]); dso = p[1]; 
        if dso == '[JIT]': dso = '[JIT]'; sym = p[-1]
        else: sym = p[-1]
        k = cls(dso, sym)
        c[group(k) if coarse else k] += n
    res[f] = c
keys = collections.Counter()
for c in res.values(): keys.update(c)
print('%-28s' % 'bucket' + ''.join('%12s' % f.split('/')[-1].replace('.data','') for f in files))
print('%-28s' % 'TOTAL' + ''.join('%12d' % sum(res[f].values()) for f in files))
for k, _ in keys.most_common(12 if coarse else 30):
    print('%-28s' % k + ''.join('%12d' % res[f][k] for f in files))
