"""End to end: the /metrics page over the real metrics port (issue 18),
parsed by prometheus_client's parser (Debian's python3-prometheus-client)
and checked against gRPC ModelStatistics taken after the same traffic:
every per-model family and failure reason, the pending gauge, the latency
summaries and histograms with their --metrics-config keys, Nereid's queue
depth, ensemble step and sequence gauges, the CPU gauges and
--metrics-interval-ms, a backend's custom metrics (the recorder's
metric_tag), and the port's flags and methods.

Slow requests use the recorder test backend with delay_from_input: a
request whose INPUT0 starts with N sleeps N ms in execute, watching for
cancellation, so a test holds the instance as long as it needs and then
frees it by cancelling that request. Conditions are waited for with a
deadline (wait_until), never by sleeping a fixed time."""

import concurrent.futures
import math
import os
import re
import socket
import tempfile
import time
import unittest

import grpc
import numpy as np
import requests
from prometheus_client.parser import text_string_to_metric_families

import harness
from harness import Server, int32_request, stop_clean
import grpc_service_pb2 as pb
from ensemble_test import ensemble, identity, load_order, recorder, wait_until, write_repo
from sequence_test import ONE_SLOT, seq_request

SLOW = harness.SLOW
RPC_TIMEOUT = 60 * SLOW
HOLD_MS = 600000  # a blocker's execute time: until the test cancels it
DURATIONS = ("request", "queue", "compute_input", "compute_infer", "compute_output")
# ModelStatistics' inference_stats field of each duration counter: the
# request duration counts successful requests (metrics.md).
DURATION_FIELD = {"request": "success", "queue": "queue", "compute_input": "compute_input",
                  "compute_infer": "compute_infer", "compute_output": "compute_output"}
REASONS = ("REJECTED", "CANCELED", "BACKEND", "OTHER")


def held(name, extra="", **params):
    """A recorder model whose execute sleeps as long as INPUT0[0] says."""
    return recorder(name, delay_ms=0, extra=extra, delay_from_input="true", **params)


class Page:
    """One scrape: {family: (type, help, {(sample name, labels): value})};
    counter samples keep the family's name (the parser adds _total)."""

    def __init__(self, text):
        self.text = text
        self.families = {}
        for f in text_string_to_metric_families(text):
            samples = {}
            for s in f.samples:
                name = f.name if f.type == "counter" else s.name
                samples[(name, tuple(sorted(s.labels.items())))] = s.value
            self.families[f.name] = (f.type, f.documentation, samples)

    def series(self, family, sample=None, **labels):
        """{labels: value} of `sample` (default: the family's own name) in
        `family`, restricted to the series that carry `labels`."""
        want = set(labels.items())
        out = {}
        for (name, lab), value in self.families.get(family, ("", "", {}))[2].items():
            if name == (sample or family) and want <= set(lab):
                out[lab] = value
        return out

    def value(self, family, sample=None, **labels):
        """The one value of `family` with exactly these labels."""
        key = tuple(sorted(labels.items()))
        return self.families[family][2][(sample or family, key)]


def metrics_port(server):
    """The port the server's log says its metrics service took."""
    if not server.wait_text("Started Metrics Service at"):
        raise AssertionError("no metrics service:\n" + server.text())
    return int(re.search(r"Started Metrics Service at \S+:(\d+)", server.text()).group(1))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MetricsCase(unittest.TestCase):
    """A server on MODELS (explicit model control, every model loaded,
    composing models first) with FLAGS; recorder lines in self.dir."""
    MODELS = {}
    FLAGS = ()

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="records", dir=os.environ.get("TEST_TMPDIR"))
        cls.server = Server("--model-control-mode=explicit", *cls.FLAGS,
                            repo=write_repo(cls.MODELS), backends=harness.combined_backends(),
                            env={"NEREID_RECORD_DIR": cls.dir})
        cls.stub = cls.server.inference()
        for name in load_order(cls.MODELS):
            cls.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name),
                                         timeout=RPC_TIMEOUT)
        cls.pool = concurrent.futures.ThreadPoolExecutor(4)

    @classmethod
    def tearDownClass(cls):
        cls.pool.shutdown()
        stop_clean(cls.server)

    # ---- the page ----

    def port(self):
        return metrics_port(self.server)

    def get(self, path="/metrics", method="GET", host="127.0.0.1"):
        return requests.request(method, "http://%s:%d%s" % (host, self.port(), path),
                                timeout=10 * SLOW)

    def scrape(self):
        r = self.get()
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        return Page(r.text)

    def wait_page(self, pred, what, timeout=20):
        """The first page for which pred(page) holds, within the deadline."""
        got = []

        def check():
            got[:] = [self.scrape()]
            return pred(got[0])
        self.assertTrue(wait_until(check, timeout), "%s; last page:\n%s" % (what, got[0].text))
        return got[0]

    # ---- statistics ----

    def stats(self, model):
        s = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name=model),
                                      timeout=RPC_TIMEOUT)
        self.assertEqual(len(s.model_stats), 1, s)
        return s.model_stats[0]

    def settled(self, model, done=None):
        """(statistics, page) with nothing of `model` changing in between:
        the statistics read the same before and after the scrape (a backend
        reports a request's statistics after its response), and done(stats)
        holds."""
        seen = []

        def same():
            before = self.stats(model)
            page = self.scrape()
            after = self.stats(model)
            seen[:] = [after, page]
            return before == after and (done is None or done(after))
        self.assertTrue(wait_until(same, 20), "statistics of %s did not settle:\n%s"
                        % (model, seen[0]))
        return seen

    def assert_matches_stats(self, model, done=None):
        """Every per-model family of `model` against its statistics."""
        st, page = self.settled(model, done)
        inf = st.inference_stats
        m = {"model": model, "version": "1"}
        self.assertEqual(page.value("nv_inference_request_success", **m), inf.success.count)
        reasons = {dict(k)["reason"]: v
                   for k, v in page.series("nv_inference_request_failure", **m).items()}
        self.assertEqual(sorted(reasons), sorted(REASONS))
        self.assertEqual(sum(reasons.values()), inf.fail.count, reasons)
        self.assertEqual(page.value("nv_inference_count", **m), st.inference_count)
        self.assertEqual(page.value("nv_inference_exec_count", **m), st.execution_count)
        for d in DURATIONS:
            # The counter is the statistics' nanoseconds / 1000, truncated.
            ns = getattr(inf, DURATION_FIELD[d]).ns
            self.assertEqual(page.value("nv_inference_%s_duration_us" % d, **m), ns // 1000, d)
        self.assertEqual(page.value("nv_inference_pending_request_count", **m), 0)
        return st, page, reasons

    # ---- traffic ----

    def send(self, model, value=0, rid="", priority=None, timeout=RPC_TIMEOUT):
        """A ModelInfer future: INPUT0 = [value]."""
        req = int32_request(model, [value], rid=rid)
        if priority is not None:
            req.parameters["priority"].uint64_param = priority
        return self.stub.ModelInfer.future(req, timeout=timeout)

    def executing(self, model, rid):
        """Waits until `model`'s instance has started executing request
        `rid` (the recorder's execute_start line)."""
        def started():
            try:
                with open(os.path.join(self.dir, model + ".log")) as f:
                    return any(line.startswith("execute_start ") and
                               re.search(r"ids=\S*\b%s\b" % rid, line) for line in f)
            except FileNotFoundError:
                return False
        self.assertTrue(wait_until(started, 20), "%s never started %s" % (model, rid))

    def block(self, model, **kw):
        """A request that holds `model`'s only instance until cancelled."""
        f = self.send(model, HOLD_MS, rid="blocker", **kw)
        self.executing(model, "blocker")
        return f

    def expect_code(self, future, code):
        with self.assertRaises(grpc.RpcError) as cm:
            future.result()
        self.assertEqual(cm.exception.code(), code, cm.exception.details())

    def pending(self, page, model):
        return page.value("nv_inference_pending_request_count", model=model, version="1")


# ---- 1. the per-model families --------------------------------------------------

class PerModelFamilies(MetricsCase):
    MODELS = {
        # Batches of up to 8 gathered for 200 ms: fewer executions than
        # inferences.
        "batched": recorder("batched", delay_ms=20,
                            extra="dynamic_batching { max_queue_delay_microseconds: 200000 }\n"),
        "held": held("held"),
        # One request may wait; one waiting longer than 100 ms is rejected.
        "rejecting": held("rejecting", extra=(
            "dynamic_batching { default_queue_policy { max_queue_size: 1 "
            "timeout_action: REJECT default_timeout_microseconds: 100000 } }\n")),
        "fail_request": recorder("fail_request", delay_ms=0, fail_at="request"),
        "fail_execute": recorder("fail_execute", delay_ms=0, fail_at="execute"),
        "refusing": identity("refusing"),
    }

    def test_success_count_exec_and_durations(self):
        futures = [self.send("batched", rid="b%d" % i) for i in range(12)]
        for f in futures:
            f.result()
        st, page, reasons = self.assert_matches_stats(
            "batched", lambda s: s.inference_stats.success.count == 12)
        self.assertEqual(st.inference_count, 12)
        self.assertLess(st.execution_count, st.inference_count, st)
        self.assertEqual(reasons, dict.fromkeys(REASONS, 0))
        # Real time went into them: each request's 20 ms execution.
        self.assertGreaterEqual(
            page.value("nv_inference_request_duration_us", model="batched", version="1"),
            20000 * 12)
        # Types and HELP texts are tritonserver's.
        kind, help_, _ = page.families["nv_inference_request_success"]
        self.assertEqual((kind, help_), ("counter", "Number of successful inference requests, "
                                                    "all batch sizes"))
        self.assertEqual(page.families["nv_inference_pending_request_count"][0], "gauge")

    def test_pending_gauge_and_canceled(self):
        blocker = self.block("held")
        waiting = [self.send("held", rid="w%d" % i) for i in range(3)]
        self.wait_page(lambda p: self.pending(p, "held") == 3, "3 requests pending")
        # One cancelled while queued: CANCELED, and no longer pending.
        self.assertTrue(waiting[0].cancel())
        self.wait_page(lambda p: self.pending(p, "held") == 2, "2 requests pending")
        # The blocker cancelled during execute (the backend reports it failed,
        # cancelled): CANCELED too; the two others then run.
        self.assertTrue(blocker.cancel())
        for f in waiting[1:]:
            f.result()
        st, page, reasons = self.assert_matches_stats(
            "held", lambda s: (s.inference_stats.success.count,
                               s.inference_stats.fail.count) == (2, 2))
        self.assertEqual(reasons, {"REJECTED": 0, "CANCELED": 2, "BACKEND": 0, "OTHER": 0})

    def test_rejected_queue_full_and_timeout(self):
        blocker = self.block("rejecting")
        timed_out = self.send("rejecting", rid="late")  # waits, past its 100 ms
        full = self.send("rejecting", rid="full")  # the queue holds one already
        for f in (full, timed_out):
            self.expect_code(f, grpc.StatusCode.UNAVAILABLE)
        self.assertTrue(blocker.cancel())
        st, page, reasons = self.assert_matches_stats(
            "rejecting", lambda s: s.inference_stats.fail.count == 3)
        self.assertEqual(reasons, {"REJECTED": 2, "CANCELED": 1, "BACKEND": 0, "OTHER": 0})

    def test_backend_failures(self):
        for model in ("fail_request", "fail_execute"):
            for i in range(3):
                self.expect_code(self.send(model, rid="f%d" % i), grpc.StatusCode.INTERNAL)
            st, page, reasons = self.assert_matches_stats(
                model, lambda s: s.inference_stats.fail.count == 3)
            self.assertEqual(reasons, {"REJECTED": 0, "CANCELED": 0, "BACKEND": 3, "OTHER": 0},
                             model)

    def test_other_refused_inputs(self):
        bad = int32_request("refusing", [1], name="NO_SUCH_INPUT")
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.ModelInfer(bad, timeout=RPC_TIMEOUT)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        st, page, reasons = self.assert_matches_stats(
            "refusing", lambda s: s.inference_stats.fail.count == 1)
        self.assertEqual(reasons, {"REJECTED": 0, "CANCELED": 0, "BACKEND": 0, "OTHER": 1})


# ---- 2 and 3. latency summaries and histograms ------------------------------------

QUANTILES = (0.5, 0.9, 0.99, 0.1234567)
BUCKETS = (100, 1023, 262143, 1048575, 33554431)


class LatencyFamilies(MetricsCase):
    MODELS = {"lat": recorder("lat", delay_ms=2)}
    FLAGS = ("--metrics-config=summary_latencies=true",
             "--metrics-config=summary_quantiles=" +
             ",".join("%s:0.01" % q for q in QUANTILES),
             "--metrics-config=histogram_latencies=true",
             "--metrics-config=histogram_buckets=" + ",".join(map(str, BUCKETS)))
    sent = 0

    def setUp(self):
        for i in range(10):
            self.send("lat", rid="l%d" % i).result()
        LatencyFamilies.sent += 10
        self.st, self.page, _ = self.assert_matches_stats(
            "lat", lambda s: s.inference_stats.success.count == self.sent)

    def check_count_and_sum(self, name, kind, d):
        """Family `name` of duration `d`: its type, HELP, _count (the
        observations the statistics hold) and _sum (the duration counter)."""
        m = {"model": "lat", "version": "1"}
        type_, help_, _ = self.page.families[name]
        self.assertEqual(type_, kind)
        self.assertTrue(help_.startswith(kind.capitalize() + " of "), help_)
        self.assertEqual(self.page.value(name, name + "_count", **m),
                         getattr(self.st.inference_stats, DURATION_FIELD[d]).count)
        self.assertEqual(self.page.value(name, name + "_sum", **m),
                         self.page.value("nv_inference_%s_duration_us" % d, **m))

    def test_summaries(self):
        m = {"model": "lat", "version": "1"}
        for d in DURATIONS:
            name = "nv_inference_%s_summary_us" % d
            self.check_count_and_sum(name, "summary", d)
            lines = {float(dict(k)["quantile"]): v for k, v in self.page.series(name, **m).items()}
            self.assertEqual(sorted(lines), sorted(QUANTILES), (d, self.page.text))
            values = [lines[q] for q in sorted(QUANTILES)]
            self.assertFalse(any(math.isnan(v) for v in values), values)
            self.assertEqual(values, sorted(values), d)
            # An estimate lies inside its bucket, at most 12.5% above its value.
            self.assertLessEqual(values[-1],
                                 self.page.value(name, name + "_sum", **m) * 1.125 + 1)
        # Every request slept 2 ms in execute.
        median = self.page.value("nv_inference_request_summary_us", quantile="0.5", **m)
        self.assertGreaterEqual(median, 2000 * 0.875)

    def test_histograms(self):
        m = {"model": "lat", "version": "1"}
        for d in DURATIONS:
            name = "nereid_inference_%s_histogram_us" % d
            self.check_count_and_sum(name, "histogram", d)
            buckets = self.page.series(name, name + "_bucket", **m)
            les = [dict(k)["le"] for k in buckets]
            self.assertEqual(sorted(float(le) for le in les),
                             [float(b) for b in BUCKETS] + [math.inf], (d, self.page.text))
            counts = [buckets[k] for k in sorted(buckets, key=lambda k: float(dict(k)["le"]))]
            self.assertEqual(counts, sorted(counts), (d, counts))  # cumulative
            self.assertEqual(counts[-1], self.page.value(name, name + "_count", **m))  # +Inf
        # Every request took more than 2 ms: none at most 1023 us (exact).
        req = "nereid_inference_request_histogram_us"
        self.assertEqual(self.page.value(req, req + "_bucket", le="1023", **m), 0)
        self.assertEqual(self.page.value(req, req + "_count", **m), self.sent)


class MetricsConfigRefused(unittest.TestCase):
    def refused(self, setting, message):
        code, out = harness.run_nereid("--model-repository=" + harness.empty_repo(),
                                       "--grpc-address=127.0.0.1", "--grpc-port=0",
                                       "--metrics-config=" + setting)
        self.assertNotEqual(code, 0, out)
        self.assertIn("--metrics-config '%s': %s" % (setting, message), out)
        self.assertNotIn("Started Metrics Service", out)

    def test_bad_values(self):
        self.refused("summary_latencies=yes", "the value must be 'true' or 'false'")
        self.refused("histogram_buckets=10,5",
                     "bucket '5' is not above the one before it (buckets must ascend)")
        self.refused("summary_quantiles=1.5:0.01",
                     "quantile '1.5' is not a number in [0, 1]")
        self.refused("no_such_key=1", "unknown key 'no_such_key'")


# ---- 4. queue depth, ensemble steps, sequences ----------------------------------------

class NereidFamilies(MetricsCase):
    MODELS = {
        "prio": held("prio", extra="dynamic_batching { priority_levels: 2 "
                                    "default_priority_level: 2 }\n"),
        "id_a": identity("id_a"),
        "id_b": identity("id_b"),
        "ens": ensemble("ens", [("IN", "INT32", "-1")], [("OUT", "INT32", "-1")],
                        [("id_a", {"INPUT0": "IN"}, {"OUTPUT0": "mid"}),
                         ("id_b", {"INPUT0": "mid"}, {"OUTPUT0": "OUT"})]),
        # One sequence slot; no sequence goes idle during the test.
        "seq": ONE_SLOT.replace('"one_slot"', '"seq"') % 600000000,
    }

    def depth(self, page, model):
        return {dict(k)["priority"]: v
                for k, v in page.series("nereid_queue_depth", model=model, version="1").items()}

    def test_queue_depth_per_priority(self):
        blocker = self.block("prio", priority=1)
        high = [self.send("prio", rid="h%d" % i, priority=1) for i in range(2)]
        low = [self.send("prio", rid="l%d" % i, priority=2) for i in range(3)]
        page = self.wait_page(lambda p: self.depth(p, "prio") == {"1": 2, "2": 3},
                              "2 queued at priority 1 and 3 at priority 2")
        self.assertEqual(page.families["nereid_queue_depth"][0], "gauge")
        # A model without priority levels has level 1; an ensemble none.
        self.assertEqual(self.depth(page, "id_a"), {"1": 0})
        self.assertEqual(self.depth(page, "ens"), {})
        self.assertEqual(self.pending(page, "prio"), 5)
        self.assertTrue(blocker.cancel())
        for f in high + low:
            f.result()
        self.wait_page(lambda p: self.depth(p, "prio") == {"1": 0, "2": 0} and
                       self.pending(p, "prio") == 0, "the queues drained")

    def test_ensemble_steps(self):
        n = 7
        for i in range(n):
            arr = np.asarray([[i, i + 1]], dtype=np.int32)
            self.stub.ModelInfer(harness.infer_request("ens", [("IN", "INT32", arr)]),
                                 timeout=RPC_TIMEOUT)
        st, page = self.settled("ens", lambda s: all(
            x.time.count == n for x in s.ensemble_step_stats))
        self.assertEqual(len(st.ensemble_step_stats), 2, st)
        for name in ("nereid_ensemble_step_count", "nereid_ensemble_step_duration_us"):
            self.assertEqual(page.families[name][0], "counter")
            self.assertEqual(len(page.series(name, model="ens")), 2, page.text)
        for x in st.ensemble_step_stats:
            labels = {"model": "ens", "version": "1", "step": str(x.step),
                      "step_model": x.model_name, "step_version": x.model_version}
            self.assertEqual(page.value("nereid_ensemble_step_count", **labels), x.time.count)
            self.assertEqual(page.value("nereid_ensemble_step_duration_us", **labels),
                             x.time.ns // 1000)
        self.assertEqual([(x.step, x.model_name, x.model_version)
                          for x in st.ensemble_step_stats], [(0, "id_a", "1"), (1, "id_b", "1")])
        self.assertEqual(page.value("nv_inference_request_success", model="ens", version="1"),
                         st.inference_stats.success.count)

    def test_sequence_gauges(self):
        def gauges(page):
            m = {"model": "seq", "version": "1"}
            return (page.value("nereid_sequence_active", **m),
                    page.value("nereid_sequence_backlog", **m))

        def agree(expect):
            def check():
                st, page = self.settled("seq")
                q = st.sequence_stats
                return gauges(page) == (q.active, q.backlog) == expect
            self.assertTrue(wait_until(check, 20), (expect, gauges(self.scrape()),
                                                    self.stats("seq").sequence_stats))

        self.stub.ModelInfer(seq_request("seq", 1, 71, start=True), timeout=RPC_TIMEOUT)
        agree((1, 0))
        # One slot: a second sequence waits for it.
        waiting = self.stub.ModelInfer.future(seq_request("seq", 1, 72, start=True),
                                              timeout=RPC_TIMEOUT)
        agree((1, 1))
        page = self.scrape()
        for name in ("nereid_sequence_active", "nereid_sequence_backlog"):
            self.assertEqual(page.families[name][0], "gauge")
            self.assertEqual(list(page.series(name)), [(("model", "seq"), ("version", "1"))])
        self.stub.ModelInfer(seq_request("seq", 1, 71, end=True), timeout=RPC_TIMEOUT)
        waiting.result()
        agree((1, 0))
        self.stub.ModelInfer(seq_request("seq", 1, 72, end=True), timeout=RPC_TIMEOUT)
        agree((0, 0))


# ---- 5. CPU gauges -----------------------------------------------------------------

CPU_FAMILIES = ("nv_cpu_utilization", "nv_cpu_memory_total_bytes", "nv_cpu_memory_used_bytes")


def burn(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


class CpuMetrics(MetricsCase):
    FLAGS = ("--metrics-interval-ms=50",)

    def test_present_and_sane(self):
        def cpu(page):
            return {name: page.value(name) for name in CPU_FAMILIES}

        def busy(page):
            c = cpu(page)
            self.assertTrue(0 <= c["nv_cpu_utilization"] <= 1, c)
            self.assertGreater(c["nv_cpu_memory_total_bytes"], 0)
            self.assertLessEqual(c["nv_cpu_memory_used_bytes"], c["nv_cpu_memory_total_bytes"])
            self.assertGreater(c["nv_cpu_memory_used_bytes"], 0)
            burn(0.06)  # past the interval, with some CPU used meanwhile
            return c["nv_cpu_utilization"] > 0
        page = self.wait_page(busy, "a CPU utilization above 0")
        for name in CPU_FAMILIES:
            self.assertEqual(page.families[name][0], "gauge")


class CpuMetricsInterval(MetricsCase):
    """Sampled once at start-up, not again before an hour: the utilization
    reads 0 (there is no second sample) and the memory does not move."""
    FLAGS = ("--metrics-interval-ms=3600000",)

    def test_not_resampled_before_the_interval(self):
        first = self.scrape()
        for _ in range(5):
            burn(0.05)
            page = self.scrape()
            for name in CPU_FAMILIES:
                self.assertEqual(page.value(name), first.value(name), name)
        self.assertEqual(first.value("nv_cpu_utilization"), 0)

    def test_first_pages_read_zero(self):
        """Two samples at start-up, microseconds apart, would publish a
        utilization of 0 or 1 for the whole interval; a few more servers
        make that likely to show."""
        for _ in range(4):
            server = Server("--metrics-interval-ms=3600000")
            try:
                page = Page(requests.get("http://127.0.0.1:%d/metrics" % metrics_port(server),
                                         timeout=10 * SLOW).text)
                self.assertEqual(page.value("nv_cpu_utilization"), 0)
            finally:
                stop_clean(server)


class CpuMetricsOff(MetricsCase):
    FLAGS = ("--allow-cpu-metrics=false",)

    def test_absent(self):
        page = self.scrape()
        for name in CPU_FAMILIES:
            self.assertNotIn(name, page.families)


# ---- 6. a backend's custom metrics -----------------------------------------------------

TAG = 'a "quoted" \\ tag'


def pbtxt_string(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


class CustomMetrics(MetricsCase):
    MODELS = {"custom": recorder("custom", delay_ms=0, metric_tag=pbtxt_string(TAG))}
    N = 5

    def test_recorder_metrics(self):
        for i in range(self.N):
            self.send("custom", rid="c%d" % i).result()
        labels = {"model": "custom", "tag": TAG}
        page = self.wait_page(lambda p: p.series("recorder_requests", **labels) ==
                              {tuple(sorted(labels.items())): self.N}, "the counter at N")
        self.assertEqual(page.families["recorder_requests"][:2],
                         ("counter", "Requests a recorder model received\n"
                                     "per model (test\\recorder)"))
        self.assertEqual(page.families["recorder_requests_gauge"][0], "gauge")
        self.assertEqual(page.value("recorder_requests_gauge", **labels), self.N)
        self.assertEqual(page.families["recorder_last_batch_requests"][0], "gauge")
        self.assertEqual(page.value("recorder_last_batch_requests", **labels), 1)
        # The label value reaches the page escaped, as the format wants.
        self.assertIn('tag="a \\"quoted\\" \\\\ tag"', page.text)


# ---- 7. the port ---------------------------------------------------------------------

def refused(host, port):
    with socket.socket() as s:
        s.settimeout(10)
        return s.connect_ex((host, port)) != 0


class MetricsPort(MetricsCase):
    PORT = free_port()
    FLAGS = ("--metrics-address=127.0.0.1", "--metrics-port=%d" % PORT)

    def test_address_and_port(self):
        self.assertEqual(self.port(), self.PORT)
        self.assertIn("Started Metrics Service at 127.0.0.1:%d" % self.PORT, self.server.text())
        self.scrape()
        # Bound to 127.0.0.1 only: another loopback address is refused.
        self.assertTrue(refused("127.0.0.2", self.PORT))

    def test_methods_and_paths(self):
        # metrics_endpoint.c: /metrics only, GET only.
        for method in ("HEAD", "POST", "PUT", "DELETE"):
            self.assertEqual(self.get(method=method).status_code, 405, method)
        for path in ("/", "/metrics/", "/metricsx", "/v2/health/live", "/v2/models/stats"):
            self.assertEqual(self.get(path).status_code, 404, path)
        self.scrape()


class MetricsOff(MetricsCase):
    PORT = free_port()
    FLAGS = ("--allow-metrics=false", "--metrics-port=%d" % PORT)

    def test_nothing_listens(self):
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest(), timeout=RPC_TIMEOUT).live)
        self.assertNotIn("Metrics Service", self.server.text())
        self.assertTrue(refused("127.0.0.1", self.PORT))


if __name__ == "__main__":
    harness.main()
