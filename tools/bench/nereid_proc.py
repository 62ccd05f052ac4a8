"""What the benchmark drivers share: a nereid of their own (optimized build,
gRPC only, on a free port of 127.0.0.1, its log in the work folder) and
its CPU time."""

import os
import re
import subprocess

HZ = os.sysconf("SC_CLK_TCK")


def start(bin_dir, work, *flags):
    """Starts BIN/server/nereid with the built-in backends and flags; returns
    (process, "127.0.0.1:PORT") once it serves, or exits with its log."""
    log = open(os.path.join(work, "nereid.log"), "wb+")
    proc = subprocess.Popen(
        [os.path.join(bin_dir, "server/nereid"), "--grpc-address=127.0.0.1",
         "--grpc-port=0", "--allow-http=false", "--allow-metrics=false",
         "--backend-directory=" + os.path.join(bin_dir, "backends")] + list(flags),
        stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        log.seek(0)
        m = re.search(rb"Started GRPCInferenceService at (\S+):(\d+)", log.read())
        if m:
            return proc, "127.0.0.1:%s" % m.group(2).decode()
        if proc.poll() is not None:
            break
        subprocess.run(["sleep", "0.1"])
    log.seek(0)
    raise SystemExit("nereid did not start:\n" + log.read().decode(errors="replace"))


def cpu_ticks(pid):
    """utime + stime of process pid, in clock ticks (HZ per second)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])
