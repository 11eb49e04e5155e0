#!/usr/bin/env python3
# Host half of the emulator's profile (README). watch.py DIR, started just
# before tools/vm-run: finds the console log of the VM that starts next and
# its QEMU process, and records QEMU with perf (2,000 samples a second) from
# each "PHASE NAME start" line to the next "PHASE NAME end" line, into
# DIR/NAME.N.data (N: the phase's repetition); prints each phase's host
# seconds beside its line. Ends when QEMU does.
import glob, os, signal, subprocess, sys, time
out = sys.argv[1]
start = time.time()
# the VM started after this: vm-run's work directory made since, its QEMU the
# one whose initrd lies there (other VMs may run beside it)
log = pid = None
while pid is None:
    d = [p for p in glob.glob('/tmp/pt-vm.*') if os.stat(p).st_ctime >= start - 1]
    if d and os.path.exists(max(d, key=os.path.getctime) + '/console.log'):
        w = max(d, key=os.path.getctime)
        log = w + '/console.log'
        r = subprocess.run(['pgrep', '-f', w + '/initrd.gz'], capture_output=True, text=True)
        pid = r.stdout.split()[0] if r.stdout.split() else None
    time.sleep(0.5)
print('log', log, 'pid', pid, flush=True)
f = open(log, 'rb')
buf = b''
perf = None
n = {}
while True:
    chunk = f.read()
    if not chunk:
        if not os.path.exists('/proc/' + pid):
            break
        time.sleep(0.05)
        continue
    buf += chunk
    while b'\n' in buf:
        line, buf = buf.split(b'\n', 1)
        line = line.decode(errors='replace').strip()
        if line.startswith('PHASE '):
            w = line.split()
            if w[2] == 'start':
                k = n.get(w[1], 0); n[w[1]] = k + 1
                perf = subprocess.Popen(['perf', 'record', '-q', '-F', '2000', '-p', pid, '-o', f'{out}/{w[1]}.{k}.data'],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                t0 = time.time()
            elif perf:
                perf.send_signal(signal.SIGINT); perf.wait(); perf = None
                print(w[1], n[w[1]] - 1, 'host_s=%.2f' % (time.time() - t0), line, flush=True)
