"""Tracing as Triton's: TraceSetting over gRPC and HTTP (global and per
model, clearing, bad values), traffic traced at rate 1 and rate N with
trace_count, the trace file's JSON (ids, every timestamp present and in
order, tensors at level TENSORS), log_frequency's indexed files, an
ensemble's child traces, a backend's custom activity, and the start-up
refusals (bad trace file, OpenTelemetry)."""

import json
import os
import shutil
import tempfile
import threading
import unittest

import grpc
import numpy as np
import requests

import harness
from harness import Server, run_nereid, stop_clean
import grpc_service_pb2 as pb

ORDER = ["REQUEST_START", "QUEUE_START", "COMPUTE_START", "COMPUTE_INPUT_END",
         "COMPUTE_OUTPUT_START", "COMPUTE_END", "REQUEST_END"]


def tmpdir():
    return tempfile.mkdtemp(prefix="trace", dir=os.environ.get("TEST_TMPDIR"))


def load_traces(path):
    """The file's entries grouped by trace id: id -> {"info", "stamps"
    (name -> ns, in file order as a list too), "tensors"}."""
    with open(path) as f:
        entries = json.load(f)
    traces = {}
    for e in entries:
        t = traces.setdefault(e["id"], {"info": None, "stamps": [], "tensors": []})
        if "model_name" in e:
            t["info"] = e
        for s in e.get("timestamps", []):
            t["stamps"].append((s["name"], s["ns"]))
        if "activity" in e:
            t["tensors"].append(e)
    return traces


def trace_setting(stub, model="", **settings):
    """TraceSetting: settings name -> list of strings ([] clears)."""
    req = pb.TraceSettingRequest(model_name=model)
    for k, v in settings.items():
        req.settings[k].value.extend(v)
    r = stub.TraceSetting(req, timeout=10)
    return {k: list(v.value) for k, v in r.settings.items()}


def simple_infer(stub, rid=""):
    req = harness.simple_request()
    req.id = rid
    return stub.ModelInfer(req, timeout=10)


HTTP_BODY = json.dumps({"id": "h1", "inputs": [
    {"name": n, "datatype": "INT32", "shape": [1, 16], "data": list(range(16))}
    for n in ("INPUT0", "INPUT1")]})


class Settings(harness.ServerTestCase):
    DIR = tmpdir()
    ARGS = ("--trace-config", "triton,file=" + os.path.join(DIR, "t.json"),
            "--trace-config", "level=TIMESTAMPS", "--trace-config", "rate=1000")

    def http(self, method, path, body=None):
        return requests.request(method, self.server.http_url + path, data=body,
                                timeout=10)

    def test_grpc_global(self):
        s = trace_setting(self.stub)
        self.assertEqual(s, {"trace_level": ["TIMESTAMPS"], "trace_rate": ["1000"],
                             "trace_count": ["-1"], "log_frequency": ["0"],
                             "trace_file": [os.path.join(self.DIR, "t.json")],
                             "trace_mode": ["triton"]})

    def test_grpc_model_set_follow_and_clear(self):
        s = trace_setting(self.stub, "simple", trace_rate=["5"],
                          trace_level=["TIMESTAMPS", "TENSORS"])
        self.assertEqual(s["trace_rate"], ["5"])
        self.assertEqual(s["trace_level"], ["TIMESTAMPS", "TENSORS"])
        # What the model did not set follows a global change.
        trace_setting(self.stub, log_frequency=["3"])
        self.assertEqual(trace_setting(self.stub, "simple")["log_frequency"], ["3"])
        self.assertEqual(trace_setting(self.stub)["trace_rate"], ["1000"])
        # Cleared: the global values again; a cleared global: the flags'.
        s = trace_setting(self.stub, "simple", trace_rate=[], trace_level=[])
        self.assertEqual(s["trace_rate"], ["1000"])
        self.assertEqual(s["trace_level"], ["TIMESTAMPS"])
        self.assertEqual(trace_setting(self.stub, log_frequency=[])["log_frequency"],
                         ["0"])

    def test_grpc_bad_values(self):
        cases = [({"trace_rate": ["0"]}, grpc.StatusCode.INVALID_ARGUMENT,
                  "trace_rate must be non-zero"),
                 ({"trace_rate": ["fast"]}, grpc.StatusCode.INVALID_ARGUMENT,
                  "Unable to parse 'trace_rate'"),
                 ({"trace_count": ["-2"]}, grpc.StatusCode.INVALID_ARGUMENT,
                  "Unable to parse 'trace_count'"),
                 ({"trace_rate": ["1", "2"]}, grpc.StatusCode.INVALID_ARGUMENT,
                  "expect only 1 value for 'trace_rate'"),
                 ({"trace_level": ["OFF", "TENSORS"]}, grpc.StatusCode.INVALID_ARGUMENT,
                  "Expect only one trace level 'OFF' is specified"),
                 ({"trace_level": ["LOUD"]}, grpc.StatusCode.INVALID_ARGUMENT,
                  "unknown trace level 'LOUD'"),
                 ({"trace_file": ["/etc/passwd"]}, grpc.StatusCode.UNIMPLEMENTED,
                  "trace file location can not be updated through network protocol"),
                 ({"colour": ["blue"]}, grpc.StatusCode.INVALID_ARGUMENT,
                  "unknown trace setting 'colour'")]
        for settings, code, text in cases:
            with self.assertRaises(grpc.RpcError, msg=settings) as cm:
                trace_setting(self.stub, **settings)
            self.assertEqual(cm.exception.code(), code, settings)
            self.assertIn(text, cm.exception.details(), settings)
        many = {"s%d" % i: ["1"] for i in range(17)}
        with self.assertRaises(grpc.RpcError) as cm:
            trace_setting(self.stub, **many)
        self.assertIn("more than 16 settings, the limit", cm.exception.details())
        with self.assertRaises(grpc.RpcError) as cm:
            trace_setting(self.stub, trace_level=["TIMESTAMPS"] * 9)
        self.assertIn("'trace_level' has 9 values, above the limit of 8",
                      cm.exception.details())
        with self.assertRaises(grpc.RpcError) as cm:
            trace_setting(self.stub, "nope")
        self.assertEqual(cm.exception.details(), "Request for unknown model : nope")
        # Nothing changed.
        self.assertEqual(trace_setting(self.stub)["trace_rate"], ["1000"])

    def test_http_global_model_and_clear(self):
        r = self.http("GET", "/v2/trace/setting")
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.json()["trace_level"], ["TIMESTAMPS"])
        self.assertEqual(r.json()["trace_rate"], "1000")
        r = self.http("POST", "/v2/models/simple/trace/setting",
                      json.dumps({"trace_count": "4", "trace_level": ["TENSORS"]}))
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json()["trace_count"], "4")
        self.assertEqual(r.json()["trace_level"], ["TENSORS"])
        self.assertEqual(r.json()["trace_rate"], "1000")
        self.assertEqual(self.http("GET", "/v2/models/simple/trace/setting").json(),
                         r.json())
        r = self.http("POST", "/v2/models/simple/trace/setting",
                      json.dumps({"trace_count": None, "trace_level": None}))
        self.assertEqual(r.json(), self.http("GET", "/v2/trace/setting").json())

    def test_http_bad_values(self):
        cases = [({"trace_file": "x.json"}, 501, "trace file location can not be updated"),
                 ({"trace_rate": 5}, 400, "expects a string"),
                 ({"trace_rate": "-1"}, 400, "Unable to parse 'trace_rate'"),
                 ({"trace_level": ["TIMESTAMPS"] * 9}, 400, "at most 8 strings"),
                 ({"s%d" % i: "1" for i in range(40)}, 400, "more than 16 settings")]
        for body, code, text in cases:
            r = self.http("POST", "/v2/trace/setting", json.dumps(body))
            self.assertEqual(r.status_code, code, body)
            self.assertIn(text, r.json()["error"], body)
        r = self.http("POST", "/v2/trace/setting", "{nope")
        self.assertEqual(r.status_code, 400)
        r = self.http("POST", "/v2/models/nope/trace/setting", "{}")
        self.assertEqual(r.json()["error"], "Request for unknown model : nope")
        self.assertEqual(self.http("PUT", "/v2/trace/setting").status_code, 405)

    def test_metadata_lists_trace(self):
        r = self.stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=10)
        self.assertIn("trace", r.extensions)


class Traffic(unittest.TestCase):
    """One server per case: the file is complete once the server stopped."""

    def run_server(self, *flags, repo=None, backends=None):
        self.dir = tmpdir()
        self.file = os.path.join(self.dir, "trace.json")
        server = Server("--trace-config", "triton,file=" + self.file, *flags,
                        repo=repo or harness.EXAMPLES, backends=backends)
        return server, server.inference()

    def check_order(self, t):
        names = [n for n, _ in t["stamps"]]
        stamps = dict(t["stamps"])
        for name in ORDER:
            self.assertIn(name, names)
        times = [stamps[n] for n in ORDER]
        self.assertEqual(times, sorted(times), t["stamps"])

    def test_rate_1_grpc_and_http(self):
        server, stub = self.run_server("--trace-config", "level=TIMESTAMPS",
                                       "--trace-config", "rate=1")
        for i in range(3):
            simple_infer(stub, rid="g%d" % i)
        for _ in range(2):
            r = requests.post(server.http_url + "/v2/models/simple/infer", data=HTTP_BODY,
                              timeout=10)
            self.assertEqual(r.status_code, 200)
        stop_clean(server)
        traces = load_traces(self.file)
        self.assertEqual(len(traces), 5)
        rids = sorted(t["info"].get("request_id", "") for t in traces.values())
        self.assertEqual(rids, ["g0", "g1", "g2", "h1", "h1"])
        for t in traces.values():
            self.assertEqual(t["info"]["model_name"], "simple")
            self.assertEqual(t["info"]["model_version"], 1)
            self.assertNotIn("parent_id", t["info"])
            self.assertEqual(t["tensors"], [])
            self.check_order(t)
            # The frontend's own: its send, after the request was queued.
            proto = "GRPC" if t["info"]["request_id"].startswith("g") else "HTTP"
            stamps = dict(t["stamps"])
            self.assertLessEqual(stamps["QUEUE_START"], stamps[proto + "_SEND_START"])
            self.assertLessEqual(stamps[proto + "_SEND_START"], stamps[proto + "_SEND_END"])

    def test_concurrent_clients_and_updates(self):
        """Four clients (gRPC and HTTP) at rate 1 while settings of other
        models change: every request is one complete trace, the file is
        one valid array."""
        server, stub = self.run_server("--trace-config", "level=TIMESTAMPS",
                                       "--trace-config", "rate=1",
                                       "--http-thread-count=2")
        errors = []

        def grpc_client():
            try:
                for i in range(25):
                    simple_infer(stub)
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        def http_client():
            try:
                with requests.Session() as s:
                    for i in range(25):
                        r = s.post(server.http_url + "/v2/models/simple/infer",
                                   data=HTTP_BODY, timeout=10)
                        assert r.status_code == 200, r.text
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        def updater():
            try:
                for i in range(25):
                    trace_setting(stub, "simple_int8", trace_rate=[str(1 + i % 3)])
                    trace_setting(stub, "simple_int8", trace_rate=[])
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=f) for f in
                   (grpc_client, grpc_client, http_client, http_client, updater)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        stop_clean(server)
        traces = load_traces(self.file)
        self.assertEqual(len(traces), 100)
        for t in traces.values():
            self.check_order(t)

    def test_stream(self):
        server, stub = self.run_server("--trace-config", "level=TIMESTAMPS",
                                       "--trace-config", "rate=1")
        reqs = []
        for i in range(3):
            r = harness.simple_request()
            r.id = "s%d" % i
            reqs.append(r)
        answers = list(stub.ModelStreamInfer(iter(reqs), timeout=10))
        self.assertEqual([a.error_message for a in answers], [""] * 3)
        stop_clean(server)
        traces = load_traces(self.file)
        self.assertEqual(sorted(t["info"]["request_id"] for t in traces.values()),
                         ["s0", "s1", "s2"])
        for t in traces.values():
            self.check_order(t)
            stamps = dict(t["stamps"])
            self.assertLessEqual(stamps["QUEUE_START"], stamps["GRPC_SEND_START"])
            self.assertLessEqual(stamps["GRPC_SEND_START"], stamps["GRPC_SEND_END"])

    def test_rate_n_and_count(self):
        server, stub = self.run_server("--trace-level=TIMESTAMPS", "--trace-rate=3",
                                       "--trace-count=2")
        for _ in range(5):
            simple_infer(stub)
        self.assertEqual(trace_setting(stub)["trace_count"], ["1"])
        for _ in range(10):
            simple_infer(stub)
        self.assertEqual(trace_setting(stub)["trace_count"], ["0"])
        stop_clean(server)
        self.assertEqual(len(load_traces(self.file)), 2)

    def test_tensors(self):
        server, stub = self.run_server("--trace-config", "level=TENSORS",
                                       "--trace-config", "level=TIMESTAMPS",
                                       "--trace-config", "rate=1")
        simple_infer(stub)
        stop_clean(server)
        (t,) = load_traces(self.file).values()
        self.check_order(t)
        seen = {(e["activity"], e["tensor"]["name"]): e["tensor"] for e in t["tensors"]}
        for act in ("TENSOR_QUEUE_INPUT", "TENSOR_BACKEND_INPUT"):
            x = seen[(act, "INPUT0")]
            self.assertEqual(x["data"], ",".join(str(i) for i in range(16)))
            self.assertEqual((x["shape"], x["dtype"]), ("1,16", "INT32"))
        out = seen[("TENSOR_BACKEND_OUTPUT", "OUTPUT0")]
        self.assertEqual(out["data"], ",".join(str(2 * i) for i in range(16)))

    def test_log_frequency_files(self):
        server, stub = self.run_server("--trace-config", "level=TIMESTAMPS",
                                       "--trace-config", "rate=1",
                                       "--trace-config", "triton,log-frequency=2")
        for _ in range(5):
            simple_infer(stub)
        stop_clean(server)
        self.assertFalse(os.path.exists(self.file))
        counts = [len(load_traces("%s.%d" % (self.file, i))) for i in range(3)]
        self.assertEqual(counts, [2, 2, 1])
        self.assertFalse(os.path.exists(self.file + ".3"))

    def test_ensemble_children(self):
        server, stub = self.run_server("--trace-config", "level=TIMESTAMPS",
                                       "--trace-config", "rate=1")
        stub.ModelInfer(harness.simple_request("simple_ensemble"), timeout=10)
        stop_clean(server)
        traces = load_traces(self.file)
        (root,) = [i for i, t in traces.items() if "parent_id" not in t["info"]]
        self.assertEqual(traces[root]["info"]["model_name"], "simple_ensemble")
        children = [t for t in traces.values() if t["info"].get("parent_id") == root]
        self.assertEqual(len(children), len(traces) - 1)
        self.assertGreaterEqual(len(children), 1)
        for c in children:
            self.check_order(c)
        names = [n for n, _ in traces[root]["stamps"]]
        self.assertEqual(sorted(names), sorted(["REQUEST_START", "QUEUE_START", "REQUEST_END",
                                                "GRPC_SEND_START", "GRPC_SEND_END"]))

    def test_backend_custom_activity(self):
        repo = tmpdir()
        os.makedirs(os.path.join(repo, "recorder", "1"))
        with open(os.path.join(harness.TEST_MODELS, "recorder", "config.pbtxt")) as f:
            config = f.read()
        config += ('parameters [ { key: "trace_activity" value: { string_value: "true" }'
                   ' } ]\n')
        with open(os.path.join(repo, "recorder", "config.pbtxt"), "w") as f:
            f.write(config)
        server, stub = self.run_server("--trace-config", "level=TIMESTAMPS",
                                       "--trace-config", "rate=1", repo=repo,
                                       backends=harness.TEST_BACKENDS)
        stub.ModelInfer(harness.int32_request("recorder", [1, 2, 3]), timeout=10)
        stop_clean(server)
        (t,) = load_traces(self.file).values()
        stamps = dict(t["stamps"])
        self.assertLessEqual(stamps["CUSTOM_ACTIVITY_START"], stamps["CUSTOM_ACTIVITY_END"])
        self.assertLessEqual(stamps["QUEUE_START"], stamps["CUSTOM_ACTIVITY_START"])
        self.assertLessEqual(stamps["CUSTOM_ACTIVITY_END"], stamps["REQUEST_END"])
        shutil.rmtree(repo)

    def test_bls_child_trace(self):
        repo = tmpdir()
        for model in ("simple", "bls_simple"):
            src = os.path.join(harness.EXAMPLES if model == "simple" else harness.TEST_MODELS,
                               model)
            shutil.copytree(src, os.path.join(repo, model))
        server, stub = self.run_server("--trace-config", "level=TIMESTAMPS",
                                       "--trace-config", "rate=1", repo=repo,
                                       backends=harness.combined_backends())
        stub.ModelInfer(harness.simple_request("bls_simple"), timeout=10)
        stop_clean(server)
        traces = load_traces(self.file)
        self.assertEqual(len(traces), 2)
        (root,) = [i for i, t in traces.items() if "parent_id" not in t["info"]]
        (child,) = [t for i, t in traces.items() if i != root]
        self.assertEqual(traces[root]["info"]["model_name"], "bls_simple")
        self.assertEqual(child["info"]["model_name"], "simple")
        self.assertEqual(child["info"]["parent_id"], root)
        self.check_order(child)
        # The call happened within the outer request's execution.
        outer = dict(traces[root]["stamps"])
        self.assertLessEqual(outer["QUEUE_START"], dict(child["stamps"])["REQUEST_START"])
        self.assertLessEqual(dict(child["stamps"])["REQUEST_END"], outer["REQUEST_END"])
        shutil.rmtree(repo)

    def test_untraced_model_writes_nothing(self):
        server, stub = self.run_server("--trace-config", "level=TIMESTAMPS",
                                       "--trace-config", "rate=1")
        trace_setting(stub, "simple", trace_level=["OFF"])
        simple_infer(stub)
        stop_clean(server)
        self.assertFalse(os.path.exists(self.file))


class Restricted(harness.ServerTestCase):
    """The `trace` group restricts both endpoints; other groups stay open."""
    ARGS = ("--trace-config", "triton,file=" + os.path.join(tmpdir(), "t.json"),
            "--grpc-restricted-protocol=trace:tk=tv", "--http-restricted-api=trace:tk=tv")

    def test_grpc(self):
        with self.assertRaises(grpc.RpcError) as cm:
            trace_setting(self.stub)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE)
        r = self.stub.TraceSetting(pb.TraceSettingRequest(model_name="simple"),
                                   metadata=[("triton-grpc-protocol-tk", "tv")], timeout=10)
        self.assertEqual(list(r.settings["trace_level"].value), ["OFF"])
        simple_infer(self.stub)  # inference is not in the group

    def test_http(self):
        url = self.server.http_url + "/v2/models/simple/trace/setting"
        self.assertEqual(requests.get(url, timeout=10).status_code, 403)
        r = requests.post(url, data='{"trace_rate": "9"}', headers={"tk": "tv"}, timeout=10)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json()["trace_rate"], "9")


class StartUp(unittest.TestCase):
    def refused(self, *flags):
        code, out = run_nereid("--model-repository=" + harness.empty_repo(), *flags)
        self.assertNotEqual(code, 0, out)
        return out

    def test_bad_file(self):
        self.assertIn("folder '/nonexistent-xyz' does not exist",
                      self.refused("--trace-config", "triton,file=/nonexistent-xyz/t.json"))
        self.assertIn("is not a regular file",
                      self.refused("--trace-file", tmpdir()))

    def test_opentelemetry_is_refused(self):
        self.assertIn("no OpenTelemetry exporter",
                      self.refused("--trace-config", "mode=opentelemetry"))

    def test_bad_values(self):
        self.assertIn("--trace-config rate: expects an integer in [1, 2147483647], got 'x'",
                      self.refused("--trace-config", "rate=x"))
        self.assertIn("--trace-level level: expects OFF, TIMESTAMPS or TENSORS",
                      self.refused("--trace-level", "loud"))


if __name__ == "__main__":
    harness.main()
