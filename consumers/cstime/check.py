#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of cstime's output against cstest's own measurements.

    check.py CHECK ARGS...

Prints one line of measured values (the TAP diagnostic) and exits 0 if the
check passes, 1 if not.  Times in the diagnostic are ms.
"""
import json
import re
import sys

MS = 1e6
KEYS = ("wall_ns", "cpu_ns", "runq_ns", "sleep_ns", "dsleep_ns", "iowait_ns",
        "preempt", "block", "migrate", "minflt", "majflt", "read_bytes",
        "write_bytes", "rchar", "wchar", "sum_exec_ns", "run_delay_ns")
BUCKETS = ("cpu_ns", "runq_ns", "sleep_ns", "dsleep_ns", "iowait_ns")


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def cstime_out(path):
    objs = load_jsonl(path)
    threads = [o for o in objs if o.get("type") == "thread"]
    totals = [o for o in objs if o.get("type") == "total"]
    return threads, totals


def meas(path, name):
    for o in load_jsonl(path):
        if o.get("name") == name:
            return o
    raise SystemExit("no measurement of %s in %s" % (name, path))


def thread_by_tid(threads, tid, name):
    for t in threads:
        if t["tid"] == tid and t["comm"] == name:
            return t
    raise SystemExit("cstime reports no thread %s tid %d" % (name, tid))


def fmt(t):
    return " ".join("%s=%.3f" % (k[:-3], t[k] / MS) for k in
                    ("wall_ns",) + BUCKETS)


def outside(t, m):
    """Time of the thread cstime saw outside the window the thread measured
    itself: its registration before, its exit after."""
    return max(0, t["wall_ns"] - m["wall_ns"])


def result(ok, diag):
    print(diag)
    sys.exit(0 if ok else 1)


def c_json(path):
    """Every line parses; thread lines, then exactly one total, last."""
    with open(path) as f:
        lines = [line for line in f if line.strip()]
    objs = [json.loads(line) for line in lines]
    threads = [o for o in objs if o.get("type") == "thread"]
    missing = [k for t in threads for k in KEYS + ("comm", "pid", "tid")
               if k not in t]
    ok = (len(objs) >= 2 and objs[-1].get("type") == "total" and
          len(threads) == len(objs) - 1 and not missing and
          all(isinstance(t["comm"], str) for t in threads))
    result(ok, "%d lines, %d threads, last type %s, missing keys %s" %
           (len(objs), len(threads), objs[-1].get("type") if objs else None,
            missing[:3]))


def c_total(path):
    """The total line is the sum of the thread lines; each wall = buckets."""
    threads, totals = cstime_out(path)
    bad = [k for k in KEYS if sum(t[k] for t in threads) != totals[0][k]]
    walls = [t for t in threads
             if t["wall_ns"] != sum(t[b] for b in BUCKETS) or
             (t["final"] and t["wall_ns"] != t["end_ns"] - t["start_ns"])]
    result(len(totals) == 1 and not bad and not walls and
           totals[0]["threads"] == len(threads),
           "%d threads, total wall %.3f ms = sum %.3f ms; fields differing "
           "%s; threads whose buckets do not add up %d" %
           (len(threads), totals[0]["wall_ns"] / MS,
            sum(t["wall_ns"] for t in threads) / MS, bad, len(walls)))


def c_text_total(path, n):
    """Text output: the total row is the sum of the rows (ms truncated)."""
    rows, total = [], None
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 16 and re.match(r"^\d+\.\d{3}$", w[3]):
                if w[0] == "total":
                    total = w
                else:
                    rows.append(w)
    n = int(n)
    if total is None or not rows:
        result(False, "no rows or no total in %s" % path)
    diffs = []
    for col in range(3, 9):      # WALL_MS .. IOWAIT_MS
        s = sum(float(r[col]) for r in rows)
        diffs.append(float(total[col]) - s)
    ints = [sum(int(r[col]) for r in rows) - int(total[col])
            for col in range(9, 16)]
    # Each row is truncated to the us: the total is up to 1 us per row more.
    ok = (len(rows) == n and
          all(-0.0005 <= d <= 0.001 * len(rows) + 0.0005 for d in diffs) and
          not any(ints))
    result(ok, "%d rows (want %d); total - sum of rows, ms: %s; counters "
           "differing: %s" % (len(rows), n,
                              " ".join("%.4f" % d for d in diffs), ints))


def c_spin(path, mpath):
    threads, _ = cstime_out(path)
    m = meas(mpath, "spinner")
    t = thread_by_tid(threads, m["tid"], "spinner")
    cpu, own, out = t["cpu_ns"], m["cpu_ns"], outside(t, m)
    # Its CPU clock leaves out interrupt time, which cstime counts as cpu:
    # at most the part of its own window that clock did not count.
    irq = max(0, m["wall_ns"] - own)
    ok = (own - 0.05 * own - 5 * MS <= cpu <=
          own + 0.05 * own + 5 * MS + irq + out and
          cpu >= 0.9 * t["wall_ns"])
    result(ok, "spinner: cstime %s; its own thread CPU clock %.3f, schedstat "
           "%.3f, own wall %.3f, outside its window %.3f (want cpu >= its CPU "
           "clock - 5%% - 5ms, <= it + 5%% + 5ms + own wall not in its CPU "
           "clock + outside, >= 90%% of wall)" %
           (fmt(t), own / MS, m["schedstat_cpu_ns"] / MS, m["wall_ns"] / MS,
            out / MS))


def c_sleep(path, mpath):
    threads, _ = cstime_out(path)
    m = meas(mpath, "sleeper")
    t = thread_by_tid(threads, m["tid"], "sleeper")
    s, out = t["sleep_ns"], outside(t, m)
    ok = (0.95 * m["req_ns"] <= s <= m["in_sleep_ns"] + out + 1 * MS and
          s == max(t[b] for b in BUCKETS))
    result(ok, "sleeper: cstime %s; requested %.3f, measured in nanosleep "
           "%.3f, outside its own window %.3f (want req*0.95 <= sleep <= "
           "measured+outside+1ms, sleep largest)" %
           (fmt(t), m["req_ns"] / MS, m["in_sleep_ns"] / MS, out / MS))


def c_disk(path, mpath):
    """iowait (+dsleep) is where the reader's off-CPU time went.  Its own
    clocks give an upper bound (the thread CPU clock leaves out interrupt
    time, which cstime counts as cpu); delay accounting's blkio ticks, when
    the kernel keeps them, the same quantity at 10 ms resolution."""
    threads, _ = cstime_out(path)
    m = meas(mpath, "reader")
    t = thread_by_tid(threads, m["tid"], "reader")
    io, out = t["iowait_ns"] + t["dsleep_ns"], outside(t, m)
    off = m["in_read_ns"] - m["cpu_in_read_ns"]
    # 20 % of the off-CPU time by the thread's own clock, which also holds
    # interrupt time that cstime counts as cpu (runs: 28 % reading a file
    # of the scratch ext4, 44-58 % reading the raw device).
    ok = (m["bytes"] > 0 and io >= 0.2 * off and
          io <= off + out + 1 * MS and
          io > t["sleep_ns"] and io > t["runq_ns"] and
          t["read_bytes"] >= m["bytes"])
    ticks = "; no delayacct blkio ticks"
    if m["blkio_ticks"]:
        tick = 1e9 / m["clk_tck"]
        blk = m["blkio_ticks"] * tick
        ticks = "; delayacct blkio %.0f ms over %d blocks" % (blk / MS,
                                                             t["block"])
        # blkio starts where the task is dequeued, iowait at the switch
        # that follows (up to 100 us of switching per block in a TCG
        # guest), and ends at the enqueue, iowait at the wakeup: a wakeup
        # through another CPU's wakelist is enqueued after an IPI, a wait
        # the page counts as runq (one CI run: iowait 2285, runq 535,
        # blkio 2710 ms).  So iowait <= blkio <= iowait + runq, each with
        # 10% + 3 ticks.
        ok = ok and (blk - 0.1 * blk - 3 * tick - t["block"] * 0.1 * MS <=
                     t["iowait_ns"] + t["runq_ns"] and
                     t["iowait_ns"] <= blk + 0.1 * blk + 3 * tick)
    result(ok, "reader: cstime %s read_bytes=%d; read %d bytes, in read() "
           "%.3f of which own CPU clock %.3f, off CPU %.3f%s (want "
           "iowait+dsleep >= 20%% of off-CPU, <= off-CPU+outside, > sleep and "
           "runq, iowait <= blkio + 10%%+3 ticks, blkio - 10%%-3 ticks "
           "-100us per block <= iowait + runq, "
           "read_bytes >= read)" %
           (fmt(t), t["read_bytes"], m["bytes"], m["in_read_ns"] / MS,
            m["cpu_in_read_ns"] / MS, off / MS, ticks))


def c_starve(path, mpath):
    threads, _ = cstime_out(path)
    v = meas(mpath, "victim")
    h = meas(mpath, "hog")
    t = thread_by_tid(threads, v["tid"], "victim")
    rq, out = t["runq_ns"], outside(t, v)
    ok = (rq >= 0.8 * h["cpu_ns"] and rq <= v["offcpu_ns"] + out + 2 * MS and
          abs(rq - v["run_delay_ns"]) <=
          0.1 * v["run_delay_ns"] + out + 5 * MS)
    result(ok, "victim: cstime %s; SCHED_FIFO hog's own CPU %.3f; victim's "
           "own off-CPU %.3f, schedstat run_delay %.3f, outside its window "
           "%.3f (want runq >= 80%% of hog CPU, <= off-CPU+outside+2ms, "
           "within 10%%+outside+5ms of run_delay)" %
           (fmt(t), h["cpu_ns"] / MS, v["offcpu_ns"] / MS,
            v["run_delay_ns"] / MS, out / MS))


def c_count(path, mpath):
    threads, totals = cstime_out(path)
    main = meas(mpath, "main")
    fork = meas(mpath, "fork")
    pool = meas(mpath, "pool")["created"]
    names = {}
    for t in threads:
        names.setdefault((t["pid"], t["comm"]), []).append(t)
    npool = len(names.get((main["pid"], "pool"), []))
    child = sorted(t["comm"] for t in threads if t["pid"] == fork["pid"])
    phase = [n for n in ("spinner", "sleeper", "reader", "victim", "hog")
             if len(names.get((main["pid"], n), [])) == 1]
    mains = [t for t in threads if t["tid"] == main["tid"]]
    want = 1 + 5 + pool + 3
    ok = (npool == pool and child == ["execd", "forkchild", "forkthr"] and
          len(phase) == 5 and len(mains) == 1 and len(threads) == want and
          totals[0]["processes"] == 2 and all(t["final"] for t in threads))
    result(ok, "%d threads (want %d) in %d processes: pool %d/%d, phase "
           "threads %s, main %d, fork child's %s" %
           (len(threads), want, totals[0]["processes"], npool, pool, phase,
            len(mains), child))


def c_pool(path, n):
    threads, totals = cstime_out(path)
    n = int(n)
    npool = sum(1 for t in threads if t["comm"] == "pool")
    result(len(threads) == n + 1 and npool == n and
           all(t["final"] for t in threads) and totals[0]["lost"] == 0,
           "%d threads reported (want %d + main), %d named pool, lost %d, "
           "not counted %d" % (len(threads), n, npool, totals[0]["lost"],
                               totals[0]["not_counted"]))


CHECKS = {"json": c_json, "total": c_total, "text-total": c_text_total,
          "spin": c_spin, "sleep": c_sleep, "disk": c_disk,
          "starve": c_starve, "count": c_count, "pool": c_pool}

if __name__ == "__main__":
    try:
        CHECKS[sys.argv[1]](*sys.argv[2:])
    except SystemExit:
        raise
    except Exception as e:       # a parse error is a failure, with a reason
        result(False, "%s: %s" % (type(e).__name__, e))
