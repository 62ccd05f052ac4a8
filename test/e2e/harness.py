"""End-to-end test harness: starts the real nereid binary on a free port and
gives tests gRPC stubs generated from our own protos.

Run by test/e2e/run_py.sh under Debian's /usr/bin/python3. Every test module
ends with harness.main(), which prints the closing line that tools/test adds
up: "unit: N passed, N failed".
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest

NEREID = os.environ.get("NEREID_BIN", "server/nereid")
# Built-in backends (<dir>/<name>/libtriton_<name>.so) and example models,
# from the test's runfiles.
BACKENDS = os.path.abspath(os.environ.get("NEREID_BACKENDS", "backends"))
EXAMPLES = os.path.abspath(os.environ.get("NEREID_EXAMPLES", "examples/models"))
TEST_BACKENDS = os.path.abspath("test/backends")


def combined_backends():
    """A backend directory (one folder) holding both the built-in and the
    test backends, as symlinks, for servers that serve models of both."""
    path = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "all_backends")
    os.makedirs(path, exist_ok=True)
    for root in (BACKENDS, TEST_BACKENDS):
        for name in os.listdir(root):
            link = os.path.join(path, name)
            if os.path.isdir(os.path.join(root, name)) and not os.path.exists(link):
                os.symlink(os.path.join(root, name), link)
    return path
TEST_MODELS = os.path.abspath("test/backends/models")
sys.path.insert(0, os.environ.get("NEREID_STUBS", "proto"))

import grpc  # noqa: E402
import numpy as np  # noqa: E402
import grpc_service_pb2  # noqa: E402,F401
import grpc_service_pb2_grpc  # noqa: E402
import health_pb2  # noqa: E402,F401
import health_pb2_grpc  # noqa: E402



def infer_request(model, inputs, outputs=None, version="", rid="", params=None):
    """A ModelInferRequest. inputs: (name, datatype, numpy array) tuples,
    sent as raw contents; outputs: names to ask for (default: all); params:
    name -> bool, int or str."""
    req = grpc_service_pb2.ModelInferRequest(model_name=model, model_version=version,
                                             id=rid)
    for name, dtype, arr in inputs:
        t = req.inputs.add()
        t.name, t.datatype = name, dtype
        t.shape.extend(arr.shape)
        req.raw_input_contents.append(arr.tobytes())
    for name in outputs or []:
        req.outputs.add().name = name
    for key, value in (params or {}).items():
        p = req.parameters[key]
        if isinstance(value, bool):
            p.bool_param = value
        elif isinstance(value, int):
            p.int64_param = value
        else:
            p.string_param = value
    return req


def recorder_config(name, groups):
    """The JSON config of a recorder model (test/backends/recorder) with
    INT32 INPUT0 -> OUTPUT0, these instance groups, and record file
    <name>.log."""
    tensor = lambda n: {"name": n, "dataType": "TYPE_INT32", "dims": [-1]}  # noqa: E731
    return json.dumps({
        "name": name, "backend": "recorder", "maxBatchSize": 8,
        "input": [tensor("INPUT0")], "output": [tensor("OUTPUT0")],
        "instanceGroup": groups,
        "parameters": {"record_file": {"stringValue": name + ".log"}}})


def int32_request(model, values, name="INPUT0", rid=""):
    """One INT32 input of shape [1, len(values)]."""
    arr = np.asarray(values, dtype=np.int32).reshape(1, -1)
    return infer_request(model, [(name, "INT32", arr)], rid=rid)


STARTED = re.compile(rb"Started GRPCInferenceService at (\S+):(\d+)")
HTTP_STARTED = re.compile(rb"Started HTTPService at (\S+):(\d+)")
HEALTH_STARTED = re.compile(rb"Started GRPCHealthService at (\S+):(\d+)")
# Sanitizer builds start and stop more slowly.
SLOW = float(os.environ.get("NEREID_TEST_SLOWDOWN", "1"))
# Which sanitizer the server was built with ("" for none), for tests whose
# memory bounds must allow for its shadow memory: .bazelrc sets these
# options in the matching test environment only.
SANITIZER = ("tsan" if "TSAN_OPTIONS" in os.environ else
             "asan" if "ASAN_OPTIONS" in os.environ else "")


class Server:
    """One nereid process; its log is collected for assertions."""

    def __init__(self, *args, repo=None, backends=None, env=None, expect_start=True,
                 binary=None):
        self.log = b""
        self._log_lock = threading.Lock()
        self._started = threading.Event()
        self.port = None
        self.http_port = None  # the HTTP service's (LOCAL_HTTP: a free port)
        self.health_port = None  # --grpc-health-port's, when given
        repo = repo if repo is not None else empty_repo()
        # binary: another nereid (an installed one); backends="": no
        # --backend-directory, the server's default.
        argv = [binary or NEREID, "--grpc-address=127.0.0.1", "--grpc-port=0"] + LOCAL_HTTP
        if backends != "":
            argv.append("--backend-directory=" + (backends or BACKENDS))
        if repo:
            argv.append("--model-repository=" + repo)
        argv += list(args)
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT,
                                     env=dict(os.environ, **(env or {})))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if expect_start:
            self._started.wait(30 * SLOW)
            if self.port is None:
                self.proc.kill()
                raise AssertionError("nereid did not start:\n" + self.text())
        self.channel = None

    def _read(self):
        for line in iter(self.proc.stdout.readline, b""):
            with self._log_lock:
                self.log += line
            g = HEALTH_STARTED.search(line)
            if g and self.health_port is None:
                self.health_port = int(g.group(2))
            h = HTTP_STARTED.search(line)
            if h and self.http_port is None:
                self.http_port = int(h.group(2))
            m = STARTED.search(line)
            if m and self.port is None:
                self.port = int(m.group(2))
                self._started.set()
        self._started.set()  # exited: stop waiting for the start line

    def text(self):
        with self._log_lock:
            return self.log.decode(errors="replace")

    def wait_text(self, needle, timeout=10):
        """Whether the log shows `needle` within `timeout` (scaled) seconds:
        a line the server wrote before answering may still be on its way
        through the reader thread."""
        deadline = time.monotonic() + timeout * SLOW
        while needle not in self.text():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    @property
    def address(self):
        return "127.0.0.1:%d" % self.port

    @property
    def http_url(self):
        return "http://127.0.0.1:%d" % self.http_port

    def connect(self):
        if self.channel is None:
            self.channel = grpc.insecure_channel(self.address)
        return self.channel

    def inference(self):
        return grpc_service_pb2_grpc.GRPCInferenceServiceStub(self.connect())

    def health(self):
        return health_pb2_grpc.HealthStub(self.connect())

    def status_kib(self, field):
        """A size field of /proc/<pid>/status (VmRSS, VmHWM: the peak RSS),
        in KiB."""
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise AssertionError("no %s for nereid (pid %d)" % (field, self.proc.pid))

    def rss_mib(self):
        return self.status_kib("VmRSS") / 1024.0

    def peak_rss_mib(self):
        return self.status_kib("VmHWM") / 1024.0

    def rss_guard(self, limit_mib):
        """A watchdog for code that may blow memory up: it kills nereid
        (SIGKILL) as soon as its RSS passes limit_mib, so that a regression
        fails the test instead of exhausting the machine. Use as a context
        manager; its `tripped` holds the RSS that tripped it, or None."""
        return _RssGuard(self, limit_mib)

    def wait(self, timeout):
        """Exit code, after the process and its log reader are done."""
        code = self.proc.wait(timeout * SLOW)
        self._reader.join(5)
        return code

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Sends sig and returns the exit code."""
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.wait(10)
            raise AssertionError("nereid did not exit within %ss:\n%s"
                                 % (timeout, self.text()))


SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     "WARNING: ThreadSanitizer", "runtime error:")


def wait_until(pred, timeout=30):
    """Whether pred() turns true within `timeout` (scaled) seconds. For what
    the server records after its answer is out (statistics, log lines)."""
    deadline = time.monotonic() + timeout * SLOW
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def stop_clean(server):
    """SIGINT: exit code 0, and no sanitizer report in the log."""
    code = server.stop(sig=signal.SIGINT, timeout=60)
    text = server.text()
    if code != 0:
        raise AssertionError("exit code %d on SIGINT\n%s" % (code, text))
    for needle in SANITIZER_REPORTS:
        if needle in text:
            raise AssertionError("%r in the server's log\n%s" % (needle, text))


class ServerTestCase(unittest.TestCase):
    """Tests that share one server per class: ARGS are its flags, REPO its
    model repository (default: the examples), ENV extra environment. The
    server must stop clean (stop_clean)."""

    ARGS = ()
    REPO = None
    ENV = None

    @classmethod
    def setUpClass(cls):
        cls.server = Server(*cls.ARGS, repo=cls.REPO or EXAMPLES, env=cls.ENV)
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.server)


# An identity model as a client's config override (JSON of
# inference.ModelConfig); it loads from a file override alone.
IDENTITY_CONFIG = {
    "backend": "identity", "maxBatchSize": 8,
    "input": [{"name": "INPUT0", "dataType": "TYPE_INT32", "dims": [-1]}],
    "output": [{"name": "OUTPUT0", "dataType": "TYPE_INT32", "dims": [-1]}],
    "instanceGroup": [{"kind": "KIND_CPU"}]}


def simple_request(model="simple", input0="INPUT0"):
    """A request for the example model `simple` (two INT32 [1, 16] inputs)
    sent to `model`, its first input named `input0`."""
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    return infer_request(model, [(input0, "INT32", a), ("INPUT1", "INT32", a)])


class _RssGuard:
    def __init__(self, server, limit_mib):
        self.server, self.limit_mib, self.tripped = server, limit_mib, None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self):
        while not self._done.wait(0.01):
            try:
                rss = self.server.rss_mib()
            except (OSError, AssertionError):
                return  # exited
            if rss > self.limit_mib:
                self.tripped = rss
                self.server.proc.kill()
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        return False


def empty_repo():
    """A new, empty model repository (every folder in a repository is a
    model, so shared folders such as /tmp are not usable)."""
    import tempfile
    return tempfile.mkdtemp(prefix="empty_repo", dir=os.environ.get("TEST_TMPDIR"))


# Every test server listens on free ports of the loopback for HTTP and
# metrics too (on by default, as tritonserver), with one HTTP loop unless a
# test asks for more: tests run in parallel.
LOCAL_HTTP = ["--http-address=127.0.0.1", "--http-port=0", "--http-thread-count=1",
              "--metrics-address=127.0.0.1", "--metrics-port=0"]


def run_nereid(*args, timeout=30):
    """Runs nereid to completion (for start-up errors): (code, output)."""
    p = subprocess.run([NEREID] + LOCAL_HTTP + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout * SLOW)
    return p.returncode, p.stdout.decode(errors="replace")


class _CountingResult(unittest.TextTestResult):
    pass


def main():
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2,
                                     resultclass=_CountingResult)
    suite = unittest.defaultTestLoader.loadTestsFromModule(
        sys.modules["__main__"])
    result = runner.run(suite)
    failed = len(result.failures) + len(result.errors) + len(
        result.unexpectedSuccesses)
    # A failing setUpClass is an error without a run test: never below 0.
    passed = max(0, result.testsRun - failed - len(result.skipped))
    print("unit: %d passed, %d failed" % (passed, failed), flush=True)
    sys.exit(0 if failed == 0 else 1)
