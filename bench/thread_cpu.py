#!/usr/bin/env python3
"""Runs a command and prints the CPU time each of its threads used, by thread name.

    python3 bench/thread_cpu.py [-n RUNS] -- cg-inject -i IN --perf-map MAP -o OUT

A run's wall time is its longest chain of work; which thread is on that chain is what this
tells (callgrind's --separate-threads cannot: it runs one thread at a time). Every thread's
/proc/PID/task/TID/schedstat (nanoseconds on a CPU) is read every half millisecond until the
process exits; a thread that ends keeps its last reading, so up to that much of its end is
missed. Output: one line per run, the wall time and each thread name's CPU seconds (threads
of one name summed) with the span in which it ran (from the first to the last sample in which
its CPU time grew, in seconds since the start), in order of first appearance; the command's own
output goes to /dev/null unless --keep-output.
"""
import argparse
import os
import subprocess
import sys
import time


def sample(pid, seen, names, spans, now):
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            # Read again each time: a thread names itself after it starts, and the first
            # thread takes the program's name only at exec.
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names[tid] = f.read().strip()
        except (OSError, ValueError, IndexError):
            continue  # the thread ended between the listing and the read
        if ns != seen.get(tid, 0):
            first, _ = spans.get(tid, (now, now))
            spans[tid] = (first, now)
        seen[tid] = ns


def run_once(command, keep_output):
    out = None if keep_output else subprocess.DEVNULL
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=out)
    seen, names, spans = {}, {}, {}
    while proc.poll() is None:
        sample(proc.pid, seen, names, spans, time.monotonic() - start)
        time.sleep(0.0005)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"thread_cpu.py: {command[0]} exited with {proc.returncode}")
    per_name = {}
    for tid, ns in seen.items():
        cpu, first, last = per_name.get(names[tid], (0, wall, 0))
        span = spans.get(tid, (wall, 0))
        per_name[names[tid]] = (cpu + ns / 1e9, min(first, span[0]), max(last, span[1]))
    return wall, per_name


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--keep-output", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    for _ in range(args.runs):
        wall, per_name = run_once(command, args.keep_output)
        threads = "  ".join(f"{name} {cpu:.3f} ({first:.3f}-{last:.3f})"
                            for name, (cpu, first, last) in per_name.items())
        print(f"wall {wall:.3f} s  CPU s by thread: {threads}", flush=True)


if __name__ == "__main__":
    main()
