#!/usr/bin/env python3
"""Where the CPUs went: per thread of the given processes, the time it ran on a CPU, the time it waited runnable for
one, and how many times it was scheduled, over an interval, from Linux's /proc/PID/task/TID/schedstat (the same
statistics `bench` reads for its event loops). Threads of one process with the same name are added up.

Usage: bench/benchmark-client/threads.py SECONDS PID [PID...]
"""
import collections
import os
import sys
import time


def snapshot(pids):
    threads = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except FileNotFoundError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    run, wait, slices = map(int, f.read().split())
            except (FileNotFoundError, ProcessLookupError):
                continue
            threads[(pid, tid)] = (name, run, wait, slices)
    return threads


def main():
    seconds, pids = float(sys.argv[1]), sys.argv[2:]
    before = snapshot(pids)
    time.sleep(seconds)
    after = snapshot(pids)
    totals = collections.defaultdict(lambda: [0, 0, 0])
    for key, (name, run, wait, slices) in after.items():
        _, run0, wait0, slices0 = before.get(key, (name, 0, 0, 0))
        t = totals[(key[0], name)]
        t[0] += run - run0
        t[1] += wait - wait0
        t[2] += slices - slices0
    print(f"| process | thread | on a CPU (ms) | waiting for a CPU (ms) | times scheduled | mean wait (ms) |")
    print("|---|---|---|---|---|---|")
    for (pid, name), (run, wait, slices) in sorted(totals.items(), key=lambda x: -x[1][0]):
        if run >= 1_000_000:
            print(f"| {pid} | {name} | {run / 1e6:.0f} | {wait / 1e6:.0f} | {slices} | {wait / 1e6 / max(slices, 1):.3f} |")


if __name__ == "__main__":
    main()
