#!/usr/bin/env python3
"""bounded_run.py SECONDS MEGABYTES OUT ERR CMD...: runs CMD in a session of its own with stdout
in OUT and stderr in ERR; kills it when it runs longer than SECONDS or its resident set passes
MEGABYTES (polled every 50 ms). Prints "EXIT SECONDS PEAK_MB": EXIT is CMD's status, or "time" /
"memory" when it was killed for that."""
import os, signal, subprocess, sys, time

limit_s, limit_mb = float(sys.argv[1]), int(sys.argv[2])
with open(sys.argv[3], 'wb') as out, open(sys.argv[4], 'wb') as err:
    start = time.monotonic()
    p = subprocess.Popen(sys.argv[5:], stdout=out, stderr=err, start_new_session=True)
    peak, verdict = 0, None
    while p.poll() is None:
        try:
            with open('/proc/%d/status' % p.pid) as f:
                for line in f:
                    if line.startswith(('VmHWM:', 'VmRSS:')):
                        peak = max(peak, int(line.split()[1]) // 1024)
        except OSError:
            pass
        if peak > limit_mb:
            verdict = 'memory'
        elif time.monotonic() - start > limit_s:
            verdict = 'time'
        if verdict:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            break
        time.sleep(0.05)
    took = time.monotonic() - start
print(verdict or p.returncode, '%.1f' % took, peak)
