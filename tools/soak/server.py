"""The server under soak: its model repository (a temporary copy of the
examples and test models), the nereid process with its log in a file, the
RSS sampler, and the checks at the end (clean exit, sanitizer reports,
private folders left behind)."""

import os
import re
import shutil
import signal
import statistics
import subprocess
import threading
import time

STARTED = re.compile(r"Started GRPCInferenceService at (\S+):(\d+)")
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|"
                       r"WARNING: AddressSanitizer|runtime error:|"
                       r"UndefinedBehaviorSanitizer|WARNING: ThreadSanitizer|"
                       r"ERROR: ThreadSanitizer|SUMMARY: \w+Sanitizer")
EXAMPLES = ("simple", "simple_int8", "simple_string", "simple_identity", "repeat_int32",
            "simple_sequence", "simple_dyna_sequence", "simple_string_dyna_sequence",
            "simple_sequence_state")
TEST_MODELS = ("recorder", "recorder_slow")
CHURN_CONFIG = """# Reloaded by the soak with config overrides.
name: "churn"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU } ]
"""


# The example sequence models that keep Triton's default idle timeout (1 s),
# and that timeout: slow builds get it times --slow (idle_s), so that a
# stall of the loaded sanitizer build between two steps of a live
# sequence is not taken for a client that left.
IDLE_DEFAULT = ("simple_sequence", "simple_sequence_state")
IDLE_DEFAULT_S = 1.0


def idle_s(slow):
    """The idle timeout of IDLE_DEFAULT's models in the soak's repository."""
    return IDLE_DEFAULT_S * max(1.0, slow)


def make_repository(work, examples, test_models, slow):
    """work/models: the example models (IDLE_DEFAULT's with idle_s(slow)),
    repeat_churn (a copy of repeat_int32 that the churn unloads), the
    recorder test models and `churn` (an identity model the churn reloads
    with overrides)."""
    repo = os.path.join(work, "models")
    os.makedirs(repo)
    for name in EXAMPLES:
        shutil.copytree(os.path.join(examples, name), os.path.join(repo, name))
    for name in IDLE_DEFAULT:
        path = os.path.join(repo, name, "config.pbtxt")
        with open(path) as f:
            text = f.read()
        assert "max_sequence_idle_microseconds" not in text, path
        with open(path, "w") as f:
            f.write(text.replace("sequence_batching {", "sequence_batching {\n"
                                 "  max_sequence_idle_microseconds: %d"
                                 % int(idle_s(slow) * 1e6), 1))
    for name in TEST_MODELS:
        shutil.copytree(os.path.join(test_models, name), os.path.join(repo, name))
    src = os.path.join(examples, "repeat_int32")
    dst = os.path.join(repo, "repeat_churn")
    shutil.copytree(src, dst)
    path = os.path.join(dst, "config.pbtxt")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace('name: "repeat_int32"', 'name: "repeat_churn"', 1))
    os.makedirs(os.path.join(repo, "churn", "1"))
    with open(os.path.join(repo, "churn", "config.pbtxt"), "w") as f:
        f.write(CHURN_CONFIG)
    return repo


def combined_backends(work, *roots):
    """One backend directory with every <name>/libtriton_<name>.so of roots."""
    path = os.path.join(work, "backends")
    os.makedirs(path)
    for root in roots:
        for name in os.listdir(root):
            link = os.path.join(path, name)
            if os.path.isdir(os.path.join(root, name)) and not os.path.exists(link):
                os.symlink(os.path.join(root, name), link)
    return path


class Server:
    """One nereid process; stdout and stderr go to work/server.log."""

    def __init__(self, nereid, work, repo, backends, extra_args, env, start_timeout):
        self.work = work
        self.log_path = os.path.join(work, "server.log")
        self.tmp = os.path.join(work, "server_tmp")  # the server's TMPDIR
        os.makedirs(self.tmp)
        argv = [nereid, "--grpc-address=127.0.0.1", "--grpc-port=0", "--allow-http=false",
         "--allow-metrics=false",
                "--model-repository=" + repo, "--backend-directory=" + backends
                ] + list(extra_args)
        self.argv = argv
        self.sigterm_at = None
        env = dict(os.environ, TMPDIR=self.tmp, NEREID_RECORD_DIR=work, **env)
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=env, cwd=work)
        self.port = self._wait_started(start_timeout)

    def _wait_started(self, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = STARTED.search(self.text())
            if m:
                return int(m.group(2))
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.proc.kill()
        raise RuntimeError("nereid did not start:\n" + self.text()[-4000:])

    @property
    def address(self):
        return "127.0.0.1:%d" % self.port

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def alive(self):
        return self.proc.poll() is None

    def rss_kib(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None

    def terminate(self):
        """Sends SIGTERM (once); stop() then waits for the exit."""
        if self.sigterm_at is None:
            self.sigterm_at = time.monotonic()
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)

    def stop(self, timeout):
        """SIGTERM unless sent already; (exit code or None if it did not exit
        within timeout of the SIGTERM, seconds from SIGTERM to exit)."""
        self.terminate()
        try:
            code = self.proc.wait(max(0.0, self.sigterm_at + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)  # a core or a stack, if configured
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            code = None
        self._log.close()
        return code, time.monotonic() - self.sigterm_at

    def sanitizer_reports(self):
        """Lines of the log that start or sum up a sanitizer report."""
        return [line for line in self.text().splitlines() if SANITIZER.search(line)]

    def leftover_private_folders(self):
        return sorted(n for n in os.listdir(self.tmp) if n.startswith("nereid-model-"))


class RssSampler(threading.Thread):
    """VmRSS every `interval` seconds: (elapsed s, KiB) samples."""

    def __init__(self, server, interval, t0):
        super().__init__(daemon=True)
        self.server, self.interval, self.t0 = server, interval, t0
        self.samples = []
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            rss = self.server.rss_kib()
            if rss is not None:
                self.samples.append((time.monotonic() - self.t0, rss))
            self.stopped.wait(self.interval)

    def figures(self, warmup, window=60.0):
        """Medians (KiB) of the first window, of the baseline (the first
        window after `warmup` seconds, when the run is long enough for a
        later window that does not overlap it; else the first window) and
        of the last window; the max; medians and maxima by minute."""
        if not self.samples:
            return None
        start, end = self.samples[0][0], self.samples[-1][0]

        def median(lo, hi):
            return statistics.median([r for t, r in self.samples if lo <= t <= hi] or [0])
        first = median(start, start + window)
        base_at = start + warmup if end - window >= start + warmup + window else start
        minutes = {}
        for t, r in self.samples:
            minutes.setdefault(int(t // 60), []).append(r)
        by_minute = [(m, statistics.median(rs), max(rs)) for m, rs in sorted(minutes.items())]
        return {"first": first, "base": median(base_at, base_at + window),
                "base_at": base_at, "last": median(end - window, end),
                "max": max(r for _, r in self.samples), "by_minute": by_minute,
                "count": len(self.samples)}
