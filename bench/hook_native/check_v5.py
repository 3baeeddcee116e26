#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check hook_v5.S against the v5 vmlinux: every kernel block the hooks
execute must appear, instruction for instruction, in hook_native.

    check_v5.py VMLINUX HOOK_NATIVE_BINARY

Kernel addresses are normalised (branch and call targets, RIP-relative and
absolute operands), and the run-time forms are checked first: the
__jump_table entries whose key is coarse_stat_key give the hook sites (a
NOP5 in the vmlinux, patched to a JMP to the block) and the alternatives at
each rdtsc site (rdtsc; nop; nop; nop in the vmlinux) give what the kernel
patches it to; the binary's form of the site (lfence; rdtsc, or rdtscp) is
substituted for it before the search.
"""
import os
import re
import struct
import subprocess
import sys

vml, hn = sys.argv[1], sys.argv[2]

# The blocks the hooks execute, or branch to (name, function, start, end:
# offsets in the function).  The fallbacks that call ktime_get_mono_fast_ns()
# or __ktime_get_mono_vdso_ns_slow() are left out (ud2 in hook_v5.S).
S, W, C = '__schedule', 'try_to_wake_up', 'coarse_stat_copy_counters'
BLOCKS = [
    ('switch: in-line block, to the jmp back', S, 0x616, 0x74f),
    ('switch: blocked, state by /proc letter', S, 0x1512, 0x1566),
    ('switch: prev unregistered', S, 0x15f6, 0x16a0),
    ('switch: counter copy call', S, 0x16ee, 0x1709),
    ('switch: iowait unless still queued', S, 0x173a, 0x174f),
    ('switch: odd vDSO seq, pause (1)', S, 0x16d1, 0x16d8),
    ('switch: odd vDSO seq, pause (2)', S, 0x171d, 0x1724),
    ('wakeup: try_to_wake_up block, to the jmp back', W, 0x3f2, 0x4d0),
    ('wakeup: odd vDSO seq, pause', W, 0xa30, 0xa37),
    ('coarse_stat_copy_counters, but the return thunk jump', C, 0x0, 0xff),
]
# The hook sites: (function, offset of the block the site jumps to)
SITES = [(S, 0x616), (W, 0x3f2)]
X86_FEATURE = {1 * 32 + 27: 'RDTSCP', 20 * 32 + 2: 'LFENCE_RDTSC'}


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def symbols(f):
    m = os.path.join(os.path.dirname(f), 'System.map')
    out = open(m).read() if os.path.basename(f) == 'vmlinux' and os.path.exists(m) else run('nm', '-n', f)
    syms = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 3:
            syms.setdefault(p[2], int(p[0], 16))
    return syms


def norm(s):
    s = re.sub(r'\s+#.*$', '', s).strip()
    s = re.sub(r'^(j\w+|call)\s+\S+.*$', r'\1 X', s)            # branch targets
    s = re.sub(r'-?0x[0-9a-f]+\(%rip\)', 'M(%rip)', s)           # RIP-relative symbols
    s = re.sub(r'-?0x[0-9a-f]{6,}\(,', 'M(,', s)                # absolute + index
    return re.sub(r'\s+', ' ', s)


def dis(f, lo, hi):
    out = run('objdump', '-d', '--no-show-raw-insn', '--start-address=%#x' % lo,
              '--stop-address=%#x' % hi, f)
    r = []
    for line in out.splitlines():
        m = re.match(r'\s*([0-9a-f]+):\t(.*)$', line)
        if m:
            r.append((int(m.group(1), 16), norm(m.group(2))))
    return r


class Image:
    """The loaded bytes of an ELF file, by virtual address."""
    def __init__(self, f):
        self.data = open(f, 'rb').read()
        self.segs = []
        for line in run('readelf', '-lW', f).splitlines():
            p = line.split()
            if p and p[0] == 'LOAD':
                self.segs.append((int(p[2], 16), int(p[1], 16), int(p[4], 16)))

    def read(self, addr, n):
        for va, off, size in self.segs:
            if va <= addr and addr + n <= va + size:
                return self.data[off + addr - va:off + addr - va + n]
        raise SystemExit('%#x not in the file' % addr)


def dis_bytes(b):
    p = '/tmp/hook_native_alt.%d' % os.getpid()
    open(p, 'wb').write(b)
    try:
        out = run('objdump', '-D', '-b', 'binary', '-m', 'i386:x86-64', '--no-show-raw-insn', p)
    finally:
        os.unlink(p)
    return [norm(m.group(1)) for m in re.finditer(r'^\s*[0-9a-f]+:\t(.*)$', out, re.M)]


ks, hs = symbols(vml), symbols(hn)
img = Image(vml)
ok = total = 0

# 1. The hook sites: coarse_stat_key's entries in __jump_table.
lo, hi = ks['__start___jump_table'], ks['__stop___jump_table']
jt = img.read(lo, hi - lo)
key = ks['coarse_stat_key']
entries = []
for i in range(0, hi - lo, 16):
    c, t, k = struct.unpack_from('<iiq', jt, i)
    a = lo + i
    if ((a + 8 + k) & (2**64 - 1)) & ~3 == key:
        entries.append((a + c, a + 4 + t))
print('coarse_stat_key: %d __jump_table entries' % len(entries))
for f, off in SITES:
    tgt = ks[f] + off
    site = [c for c, t in entries if t == tgt]
    nop5 = bool(site) and img.read(site[0], 5) == b'\x0f\x1f\x44\x00\x00'
    good = len(site) == 1 and nop5
    total += 1
    ok += good
    print('%s\tsite %s+%#x: NOP5 in the vmlinux, JMP to %s+%#x with the key on' %
          ('same' if good else 'DIFFERENT', f, site[0] - ks[f] if site else -1, f, off))

# 2. The clock read's alternatives (struct alt_instr: s32, s32, u32, u8, u8).
lo, hi = ks['__alt_instructions'], ks['__alt_instructions_end']
at = img.read(lo, hi - lo)
alts = {}
for i in range(0, hi - lo, 14):
    io, ro, ff, il, rl = struct.unpack_from('<iiIBB', at, i)
    alts.setdefault(lo + i + io, []).append((ff & 0xffff, ff >> 16, lo + i + 4 + ro, il, rl))
kernel_blocks = []
for name, f, a, b in BLOCKS:
    kernel_blocks.append((name, dis(vml, ks[f] + a, ks[f] + b)))
sites = [addr for _, k in kernel_blocks for j, (addr, ins) in enumerate(k)
         if ins == 'rdtsc' and [x[1] for x in k[j + 1:j + 4]] == ['nop'] * 3]
seen = set()
for s in sites:
    for feat, flags, repl, il, rl in alts.get(s, []):
        r = '; '.join(dis_bytes(img.read(repl, rl))) if rl else '(none)'
        seen.add((X86_FEATURE.get(feat, feat), r))
print('rdtsc sites in the blocks: %d, each with the alternatives %s' %
      (len(sites), ', '.join('%s: %s' % x for x in sorted(seen))))
good = all(len(alts.get(s, [])) == 2 for s in sites) and \
    seen == {('LFENCE_RDTSC', 'lfence; rdtsc'), ('RDTSCP', 'rdtscp')}
total += 1
ok += good
print('%s\trdtsc_ordered(): rdtsc; nop; nop; nop, patched to lfence; rdtsc or rdtscp' %
      ('same' if good else 'DIFFERENT'))

# 3. The blocks, with the binary's form of the clock read.
end = min(a for n, a in hs.items() if a > hs['v5_rt_bare'])
h = [ins for _, ins in dis(hn, hs['hook_v5_text'], end)]
hstr = '\n' + '\n'.join(h) + '\n'
if '\nrdtscp\nxchg %ax,%ax\n' in hstr:
    form, fname = ['rdtscp', 'xchg %ax,%ax'], 'rdtscp'
else:
    form, fname = ['lfence', 'rdtsc'], 'lfence; rdtsc'
for (name, k), (_, f, a, b) in zip(kernel_blocks, BLOCKS):
    ins = [x[1] for x in k]
    out, j = [], 0
    while j < len(ins):
        if ins[j] == 'rdtsc' and ins[j + 1:j + 4] == ['nop'] * 3:
            out += form
            j += 4
        else:
            out.append(ins[j])
            j += 1
    found = ('\n' + '\n'.join(out) + '\n') in hstr
    total += 1
    ok += found
    print('%s\t%d insns\t%s (%s+%#x-%#x)' % ('same' if found else 'DIFFERENT', len(k), name, f, a, b))
print('%d of %d found: v5 sites, clock read and blocks instruction for instruction in %s (clock read: %s)' %
      (ok, total, os.path.basename(hn), fname))
sys.exit(0 if ok == total else 1)
