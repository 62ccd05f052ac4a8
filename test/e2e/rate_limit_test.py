"""The rate limiter (--rate-limit=execution_count) end to end: two recorder
models whose instances both ask for the one copy of resource R never run
at once with it, and do without it; the wait counts as queue time; a model
asking for more than --rate-limit-resource gives fails its load with
Triton's text; a model unloading while its batch waits for the limiter
answers it and unloads; bad flags stop the start with tritonserver's text.
"""

import os
import signal
import tempfile
import time
import unittest

import harness
from harness import Server, int32_request, run_nereid

import grpc
import grpc_service_pb2 as pb
# A repository of {name: config.pbtxt text}, each with version 1.
from ensemble_test import write_repo as make_repo

DELAY_MS = 300


def model_config(name, count=1, priority=0, delay_ms=DELAY_MS, fail=False, limiter=None):
    return """name: "%s"
backend: "recorder"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ {
  count: 1
  kind: KIND_CPU
  rate_limiter { %s }
} ]
parameters [
  { key: "record_file" value: { string_value: "%s.log" } },
  { key: "execute_delay_ms" value: { string_value: "%d" } }%s
]
""" % (name, limiter or 'resources [ { name: "R" count: %d } ] priority: %d' % (count, priority),
       name, delay_ms,
       ',\n  { key: "fail_at" value: { string_value: "execute" } }' if fail else "")


SEQUENCE = """name: "seq"
backend: "recorder"
max_batch_size: 8
sequence_batching {
  oldest { max_candidate_sequences: 4 }
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }
  ]
}
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ {
  count: 1
  kind: KIND_CPU
  rate_limiter { resources [ { name: "R" count: 1 } ] }
} ]
parameters [
  { key: "record_file" value: { string_value: "seq.log" } },
  { key: "execute_delay_ms" value: { string_value: "%d" } }
]
""" % DELAY_MS


class RateLimit(unittest.TestCase):

    def start(self, *flags, models=None):
        self.records = tempfile.mkdtemp(prefix="rl_rec", dir=os.environ.get("TEST_TMPDIR"))
        repo = make_repo(models or {"a": model_config("a"), "b": model_config("b")})
        self.server = Server(*flags, repo=repo, backends=harness.TEST_BACKENDS,
                             env={"NEREID_RECORD_DIR": self.records})
        self.stub = self.server.inference()

    def tearDown(self):
        if getattr(self, "server", None) is not None:
            harness.stop_clean(self.server)
            self.server = None

    def intervals(self, model):
        """[(start_ns, end_ns)] of the model's executions that ended."""
        starts, out = [], []
        with open(os.path.join(self.records, model + ".log")) as f:
            for line in f:
                words = line.split()
                fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
                if words and words[0] == "execute_start":
                    starts.append(int(fields["t_ns"]))
                elif words and words[0] == "execute_end":
                    out.append((starts.pop(0), int(fields["t_ns"])))
        return out

    def started(self, model):
        path = os.path.join(self.records, model + ".log")
        if not os.path.exists(path):
            return False
        with open(path) as f:
            return any(line.startswith("execute_start") for line in f)

    def ended(self, model, n):
        """The model's first n executions, once they ended (execute_end is
        written after the responses went out)."""
        deadline = time.monotonic() + 5 * harness.SLOW
        while len(self.intervals(model)) < n and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.intervals(model)[:n]

    def run_both(self):
        """Two requests to each model at once; all answered."""
        futures = [self.stub.ModelInfer.future(int32_request(m, [k]), timeout=30 * harness.SLOW)
                   for k in range(2) for m in ("a", "b")]
        for f in futures:
            f.result()
        # execute_end is written after the responses went out.
        deadline = time.monotonic() + 5 * harness.SLOW
        while True:
            runs = sorted(self.intervals("a") + self.intervals("b"))
            if len(runs) >= 4 or time.monotonic() > deadline:
                return runs
            time.sleep(0.02)

    def queue_ns(self, model):
        s = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name=model))
        return s.model_stats[0].inference_stats.queue.ns

    def test_limited_executions_never_overlap(self):
        self.start("--rate-limit=execution_count")
        runs = self.run_both()
        self.assertEqual(len(runs), 4, runs)
        for (s0, e0), (s1, e1) in zip(runs, runs[1:]):
            self.assertGreaterEqual(s1, e0, "executions overlap: %r" % runs)
        # The second model's first request waited for the first one's run:
        # its queue time holds that wait (as in Triton).
        waited = max(self.queue_ns("a"), self.queue_ns("b"))
        self.assertGreater(waited, (DELAY_MS - 50) * 1e6)

    def test_sequence_model_waits_too(self):
        self.start("--rate-limit=execution_count",
                   models={"a": model_config("a"), "seq": SEQUENCE})
        for step in range(2):  # each step with one request to a, at once
            req = int32_request("seq", [step])
            req.parameters["sequence_id"].uint64_param = 7
            req.parameters["sequence_start"].bool_param = step == 0
            req.parameters["sequence_end"].bool_param = step == 1
            calls = [self.stub.ModelInfer.future(r, timeout=30 * harness.SLOW)
                     for r in (req, int32_request("a", [step]))]
            for c in calls:
                c.result()
        runs = sorted(self.ended("a", 2) + self.ended("seq", 2))
        self.assertEqual(len(runs), 4, runs)
        for (s0, e0), (s1, e1) in zip(runs, runs[1:]):
            self.assertGreaterEqual(s1, e0, "executions overlap: %r" % runs)

    def test_off_executions_overlap(self):
        self.start("--rate-limit=off")
        runs = self.run_both()
        self.assertEqual(len(runs), 4, runs)
        overlapping = any(s1 < e0 for (s0, e0), (s1, e1) in zip(runs, runs[1:]))
        self.assertTrue(overlapping, "no overlap without the limiter: %r" % runs)

    def test_explicit_count_lets_both_run(self):
        # R:2 on every device: both instances hold one copy at once.
        self.start("--rate-limit=execution_count", "--rate-limit-resource=r:2",
                   "--log-verbose=1")
        self.assertTrue(self.server.wait_text("rate limiter: resource 'R' on device 0: 2"),
                        self.server.text())
        runs = self.run_both()
        self.assertTrue(any(s1 < e0 for (s0, e0), (s1, e1) in zip(runs, runs[1:])), runs)

    def test_over_asking_instance_fails_its_load(self):
        models = {"a": model_config("a"), "big": model_config("big", count=2)}
        self.start("--rate-limit=execution_count", "--rate-limit-resource=R:1:0",
                   "--exit-on-error=false", "--strict-readiness=false", models=models)
        self.assertTrue(self.server.wait_text(
            'Resource count for "R" is limited to 1 which will prevent scheduling of one '
            "or more model instances, the minimum required count is 2"), self.server.text())
        ready = lambda m: self.stub.ModelReady(pb.ModelReadyRequest(name=m)).ready  # noqa
        self.assertTrue(ready("a"))
        self.assertFalse(ready("big"))
        self.stub.ModelInfer(int32_request("a", [1]), timeout=30 * harness.SLOW)

    def test_config_refusals(self):
        many = ", ".join('{ name: "X%d" count: 1 }' % i for i in range(65))
        models = {
            "ok": model_config("ok"),
            "noname": model_config("noname", limiter='resources [ { name: "" count: 1 } ]'),
            "many": model_config("many", limiter="resources [ %s ]" % many),
            "glob": model_config("glob", limiter='resources [ { name: "R" global: true '
                                                 'count: 1 } ]'),
        }
        self.start("--rate-limit=execution_count", "--exit-on-error=false",
                   "--strict-readiness=false", models=models)
        for needle in ("model 'noname': instance_group[0].rate_limiter.resources[0].name: "
                       "expected 1 to 1024 bytes, got 0",
                       "model 'many': instance_group[0].rate_limiter.resources lists 65 "
                       "resources, above the limit of 64",
                       'Resource "R" is present as both global and device-specific resource '
                       "in the model configuration."):
            self.assertTrue(self.server.wait_text(needle), needle + "\n" + self.server.text())
        ready = lambda m: self.stub.ModelReady(pb.ModelReadyRequest(name=m)).ready  # noqa
        # ok and glob load in either order: the second to come is refused.
        self.assertEqual([ready("noname"), ready("many")], [False, False])
        self.assertEqual(ready("ok") + ready("glob"), 1)

    def test_rate_limiter_config_ignored_when_off(self):
        models = {"big": model_config("big", count=2)}
        self.start("--rate-limit-resource=R:1", models=models)
        self.stub.ModelInfer(int32_request("big", [1]), timeout=30 * harness.SLOW)

    def hold_and_wait(self, hold_ms, *flags, fail=False):
        """a's run holds R for hold_ms; b's request waits for the limiter.
        With `fail`, a's Execute fails after its sleep, which then ignores
        cancellation (the recorder's fail_at: execute)."""
        models = {"a": model_config("a", delay_ms=hold_ms, fail=fail), "b": model_config("b")}
        self.start("--rate-limit=execution_count", *flags, models=models)
        first = self.stub.ModelInfer.future(int32_request("a", [1]), timeout=30 * harness.SLOW)
        deadline = time.monotonic() + 10 * harness.SLOW
        while not self.started("a") and time.monotonic() < deadline:
            time.sleep(0.01)  # a holds R from here on
        waiting = self.stub.ModelInfer.future(int32_request("b", [2]),
                                              timeout=30 * harness.SLOW)
        time.sleep(0.3)  # b's batch reaches the limiter
        return first, waiting

    def test_failed_execute_gives_the_resource_back(self):
        first, waiting = self.hold_and_wait(600, fail=True)
        with self.assertRaises(grpc.RpcError) as cm:
            first.result()
        self.assertIn("recorder: failing at execute", cm.exception.details())
        waiting.result()  # never granted if a's failure kept R
        self.assertEqual(len(self.ended("b", 1)), 1)
        self.stub.ModelInfer(int32_request("b", [3]), timeout=30 * harness.SLOW)

    def test_unload_lets_the_waiting_batch_run(self):
        # As Triton, an unload waits for the requests in flight: b's batch
        # waiting for the limiter runs once a's run gave R back.
        first, waiting = self.hold_and_wait(1000, "--model-control-mode=explicit",
                                            "--load-model=a", "--load-model=b")
        self.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="b"))
        first.result()
        waiting.result()
        (a_start, a_end), = self.ended("a", 1)
        (b_start, b_end), = self.ended("b", 1)
        self.assertGreaterEqual(b_start, a_end)
        # b loads again and runs: its old tickets left the limiter.
        self.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="b"))
        self.stub.ModelInfer(int32_request("b", [3]), timeout=30 * harness.SLOW)

    def test_shutdown_withdraws_the_waiting_batch(self):
        # Past the exit timeout, what waits is cancelled: b's batch comes
        # back from the limiter unrun, and the server exits cleanly once
        # a's (uncancellable) run ended.
        # a's run (2.5 s) ends within the 5 s the server gives backends
        # after the exit timeout's cancel.
        first, waiting = self.hold_and_wait(2500, "--exit-timeout-secs=0", fail=True)
        server, self.server = self.server, None
        server.proc.send_signal(signal.SIGINT)  # the channel stays open for the answers
        # The frontend ends the calls itself ("Cancelling all calls").
        for call in (waiting, first):
            with self.assertRaises(grpc.RpcError):
                call.result()
        harness.stop_clean(server)
        # Without the withdrawal, a's run would hand R to b's batch at its
        # end, and b's batch would start.
        self.assertEqual(len(self.intervals("a")), 1)
        self.assertFalse(self.started("b"))


class Flags(unittest.TestCase):

    def refused(self, flag, needle):
        code, out = run_nereid("--model-repository=" + make_repo({}), "--grpc-port=0", flag)
        self.assertNotEqual(code, 0, out)
        self.assertIn(needle, out)

    def test_bad_mode(self):
        self.refused("--rate-limit=sometimes",
                     "invalid argument for --rate-limit: expected off or execution_count, "
                     "got 'sometimes'")

    def test_bad_resources(self):
        for text in ("R1", ":4", "R1:-1", "R1:4:1:2", "R1:4:gpu"):
            self.refused("--rate-limit-resource=" + text,
                         "--rate-limit-resource option format is "
                         "'<resource_name>:<count>:<device>' or '<resource_name>:<count>'. "
                         "Got " + text)

    def test_mode_in_any_case(self):
        server = Server("--rate-limit=EXECUTION_COUNT", "--rate-limit-resource=R1:4:-1")
        harness.stop_clean(server)


if __name__ == "__main__":
    harness.main()
