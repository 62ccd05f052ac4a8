"""End to end: model control modes explicit and poll, as tritonserver has
them. RepositoryModelLoad / Unload (loads, reloads that keep serving,
failures that leave the old model serving, config and file overrides and
their private folders), unloads that wait for in-flight requests,
concurrent loads of one model that load it once, a load/unload storm,
--model-load-thread-count, and a polled repository that follows the folders.

Every server here stops on SIGINT with exit code 0 and no sanitizer report
in its log. NEREID_STORM_SECS sets the storm's length (default 10 s)."""

import json
import os
import random
import shutil
import tempfile
import threading
import time
import unittest

import grpc
import numpy as np

import harness
from harness import Server, int32_request, stop_clean
import grpc_service_pb2 as pb
import grpc_service_pb2_grpc as pb_grpc

E = grpc.StatusCode
# One RPC never takes this long unless the server is stuck.
RPC_TIMEOUT = 60 * harness.SLOW
POLLING_REFUSED = "explicit model load / unload is not allowed if polling is enabled"

# Line 5, column 38: TYPE_FOOBAR is not a data type.
BROKEN_CONFIG = """name: "%s"
backend: "addsub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FOOBAR dims: [ 16 ] } ]
"""


# ---- repositories ----------------------------------------------------------

def tmpdir(prefix):
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TEST_TMPDIR"))


def write_atomic(path, text):
    """Replaces a file in one rename, so a polling server never reads half of
    it; the temporary file is made outside the model folder."""
    fd, tmp = tempfile.mkstemp(dir=os.environ.get("TEST_TMPDIR"))
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def add_model(repo, name, src=None, config=None):
    """Adds model folder `name` to repo: a copy of examples/models/<src>
    renamed to `name`, or a folder with `config` and version 1. Built beside
    the repository and renamed in, so a polling server sees it whole."""
    stage = tmpdir("stage")
    folder = os.path.join(stage, name)
    if src is not None:
        shutil.copytree(os.path.join(harness.EXAMPLES, src), folder)
        path = os.path.join(folder, "config.pbtxt")
        with open(path) as f:
            text = f.read()
        config = text.replace('name: "%s"' % src, 'name: "%s"' % name, 1)
    else:
        os.makedirs(os.path.join(folder, "1"))
    with open(os.path.join(folder, "config.pbtxt"), "w") as f:
        f.write(config)
    os.rename(folder, os.path.join(repo, name))
    os.rmdir(stage)
    return os.path.join(repo, name)


def recorder_config(name, instances=1, **params):
    """A recorder model (OUTPUT0 = INPUT0, INT32 [-1]) recording to
    <name>.log; params become string parameters (e.g. execute_delay_ms)."""
    params.setdefault("record_file", name + ".log")
    plist = ",\n".join('  { key: "%s" value: { string_value: "%s" } }' % kv
                       for kv in sorted(params.items()))
    return ("""name: "%s"
backend: "recorder"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { count: %d kind: KIND_CPU } ]
parameters [
%s
]
""" % (name, instances, plist))


def records(path):
    """The recorder's lines, split into fields; [] before the file exists."""
    try:
        with open(path) as f:
            return [line.split() for line in f if line.strip()]
    except FileNotFoundError:
        return []


def events(path):
    """The model lifecycle events (the backend's own lines left out)."""
    return [r[0] for r in records(path) if any(f.startswith("model=") for f in r)]


def wait_until(pred, timeout):
    """Polls pred until it is true (returns True) or timeout*SLOW passes."""
    deadline = time.monotonic() + timeout * harness.SLOW
    while True:
        if pred():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


# ---- requests ----------------------------------------------------------------

def load_request(name, config=None, files=None, **params):
    req = pb.RepositoryModelLoadRequest(model_name=name)
    if config is not None:
        req.parameters["config"].string_param = (
            config if isinstance(config, str) else json.dumps(config))
    for path, data in (files or {}).items():
        req.parameters["file:" + path].bytes_param = data
    for key, value in params.items():
        req.parameters[key].CopyFrom(value)
    return req


def simple_request(model="simple", batch=1, seed=0):
    a = (np.arange(16 * batch, dtype=np.int32) + seed).reshape(batch, 16)
    b = np.full((batch, 16), 3, dtype=np.int32)
    req = pb.ModelInferRequest(model_name=model)
    for name, arr in (("INPUT0", a), ("INPUT1", b)):
        t = req.inputs.add()
        t.name, t.datatype = name, "INT32"
        t.shape.extend(arr.shape)
        req.raw_input_contents.append(arr.tobytes())
    return req, a + b, a - b


def outputs(resp):
    return {o.name: np.frombuffer(resp.raw_output_contents[i], dtype=np.int32).reshape(o.shape)
            for i, o in enumerate(resp.outputs)}


class ControlTest(unittest.TestCase):
    """Helpers shared by the cases below; self.stub is the server's stub."""

    def load(self, name, **kw):
        return self.stub.RepositoryModelLoad(load_request(name, **kw), timeout=RPC_TIMEOUT)

    def unload(self, name, **params):
        req = pb.RepositoryModelUnloadRequest(model_name=name)
        for key, value in params.items():
            req.parameters[key].CopyFrom(value)
        return self.stub.RepositoryModelUnload(req, timeout=RPC_TIMEOUT)

    def index(self, ready=False):
        return [(m.name, m.version, m.state, m.reason) for m in self.stub.RepositoryIndex(
            pb.RepositoryIndexRequest(ready=ready), timeout=RPC_TIMEOUT).models]

    def ready(self, name):
        return self.stub.ModelReady(pb.ModelReadyRequest(name=name), timeout=RPC_TIMEOUT).ready

    def config(self, name):
        return self.stub.ModelConfig(pb.ModelConfigRequest(name=name),
                                     timeout=RPC_TIMEOUT).config

    def expect_error(self, call, code, *needles):
        with self.assertRaises(grpc.RpcError) as cm:
            call()
        self.assertEqual(cm.exception.code(), code, cm.exception.details())
        for n in needles:
            self.assertIn(n, cm.exception.details())
        return cm.exception.details()

    def check_simple(self, model="simple", batch=1):
        req, s, d = simple_request(model, batch)
        out = outputs(self.stub.ModelInfer(req, timeout=RPC_TIMEOUT))
        np.testing.assert_array_equal(out["OUTPUT0"], s)
        np.testing.assert_array_equal(out["OUTPUT1"], d)

    def expect_infer_unavailable(self, model):
        req, _, _ = simple_request(model)
        self.expect_error(lambda: self.stub.ModelInfer(req, timeout=RPC_TIMEOUT),
                          E.UNAVAILABLE, "Request for unknown model: '%s'" % model)


# ---- 1. explicit mode --------------------------------------------------------

class Explicit(ControlTest):
    def start(self, *args):
        repo = tmpdir("repo")
        for m in ("simple", "simple_identity", "simple_string"):
            add_model(repo, m, src=m)
        self.server = Server("--model-control-mode=explicit", *args, repo=repo)
        self.stub = self.server.inference()

    def tearDown(self):
        if hasattr(self, "server"):
            stop_clean(self.server)

    def test_load_unload_load(self):
        self.start()
        folders = [("simple", "", "", ""), ("simple_identity", "", "", ""),
                   ("simple_string", "", "", "")]
        self.assertEqual(self.index(), folders)
        self.assertEqual(self.index(ready=True), [])
        self.assertFalse(self.ready("simple"))
        self.expect_infer_unavailable("simple")

        self.assertIsNotNone(self.load("simple"))
        self.assertEqual(self.index(), [("simple", "1", "READY", "")] + folders[1:])
        self.assertEqual(self.index(ready=True), [("simple", "1", "READY", "")])
        self.assertTrue(self.ready("simple"))
        self.check_simple()
        self.check_simple(batch=8)

        self.unload("simple")
        self.assertEqual(self.index(),
                         [("simple", "", "UNAVAILABLE", "unloaded")] + folders[1:])
        self.assertEqual(self.index(ready=True), [])
        self.assertFalse(self.ready("simple"))
        self.expect_infer_unavailable("simple")

        self.load("simple")
        self.assertTrue(self.ready("simple"))
        self.check_simple()
        # Unloading what is not loaded succeeds and changes nothing.
        self.unload("simple_string")
        self.assertFalse(self.ready("simple_string"))
        self.unload("simple")
        self.unload("simple")
        self.assertEqual(self.index(ready=True), [])

    def test_load_model_flag_loads_only_those(self):
        self.start("--load-model=simple", "--load-model=simple_string")
        self.assertEqual(self.index(), [("simple", "1", "READY", ""),
                                        ("simple_identity", "", "", ""),
                                        ("simple_string", "1", "READY", "")])
        self.assertFalse(self.ready("simple_identity"))
        self.check_simple()
        md = self.stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=RPC_TIMEOUT)
        self.assertEqual(list(md.extensions)[:-1],
                         ["model_repository", "model_repository(unload_dependents)",
                          "model_configuration", "sequence", "statistics",
                          "system_shared_memory", "cuda_shared_memory", "logging", "trace"])

    def test_load_model_star_loads_all(self):
        self.start("--load-model=*")
        self.assertEqual(self.index(ready=True), [("simple", "1", "READY", ""),
                                                  ("simple_identity", "1", "READY", ""),
                                                  ("simple_string", "1", "READY", "")])
        self.check_simple()
        # Explicit control still applies to what --load-model loaded.
        self.unload("simple_identity")
        self.assertFalse(self.ready("simple_identity"))


# ---- 2. load errors ----------------------------------------------------------

class LoadErrors(ControlTest):
    @classmethod
    def setUpClass(cls):
        repo = tmpdir("repo")
        add_model(repo, "simple", src="simple")
        add_model(repo, "simple_identity", src="simple_identity")
        add_model(repo, "broken", config=BROKEN_CONFIG % "broken")
        cls.server = Server("--model-control-mode=explicit", "--load-model=simple", repo=repo)
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.server)

    def still_serving(self):
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest(), timeout=RPC_TIMEOUT).live)
        self.assertTrue(self.ready("simple"))
        self.check_simple()

    def test_unknown_model_not_found(self):
        # Triton's answer: its repository poll finds no such model.
        self.expect_error(lambda: self.load("nosuch"), E.INTERNAL,
                          "failed to load 'nosuch', failed to poll from model repository")
        self.assertFalse(self.ready("nosuch"))
        self.assertNotIn("nosuch", [row[0] for row in self.index()])
        self.still_serving()

    def test_bad_model_names(self):
        for name in ("../simple", "a/b", ".hidden"):
            self.expect_error(lambda: self.load(name), E.INVALID_ARGUMENT, name)
        self.still_serving()

    def test_broken_config(self):
        for _ in range(2):  # the second load fails the same way
            msg = self.expect_error(lambda: self.load("broken"), E.INVALID_ARGUMENT,
                                    "config.pbtxt:5:", "TYPE_FOOBAR")
        self.assertFalse(self.ready("broken"))
        rows = [row for row in self.index() if row[0] == "broken"]
        self.assertEqual([row[:3] for row in rows], [("broken", "", "UNAVAILABLE")], rows)
        self.assertIn("config.pbtxt:5:", rows[0][3])
        self.assertIn("TYPE_FOOBAR", rows[0][3])
        self.assertIn("TYPE_FOOBAR", msg)
        self.assertNotIn("broken", [row[0] for row in self.index(ready=True)])
        req, _, _ = simple_request("broken")
        self.expect_error(lambda: self.stub.ModelInfer(req, timeout=RPC_TIMEOUT),
                          E.UNAVAILABLE, "broken")
        self.still_serving()

    def test_missing_model_name(self):
        self.expect_error(lambda: self.load(""), E.INVALID_ARGUMENT, "model_name")
        self.expect_error(lambda: self.unload(""), E.INVALID_ARGUMENT, "model_name")
        self.still_serving()

    def test_malformed_request_bytes(self):
        for method in ("RepositoryModelLoad", "RepositoryModelUnload"):
            raw = self.server.connect().unary_unary(
                "/inference.GRPCInferenceService/" + method)
            self.expect_error(lambda: raw(b"\x12\xff", timeout=RPC_TIMEOUT),
                              E.INVALID_ARGUMENT)
        self.still_serving()

    def test_bad_parameters(self):
        req = load_request("simple")
        req.parameters["config"].bytes_param = b"{}"
        self.expect_error(lambda: self.stub.RepositoryModelLoad(req, timeout=RPC_TIMEOUT),
                          E.INVALID_ARGUMENT, "config")
        self.expect_error(lambda: self.load("simple", whatever=pb.ModelRepositoryParameter(
            string_param="x")), E.INVALID_ARGUMENT, "whatever")
        self.expect_error(lambda: self.unload("simple", unload_dependents=pb.ModelRepositoryParameter(
            string_param="yes")), E.INVALID_ARGUMENT, "unload_dependents")
        self.still_serving()

    def test_unload_dependents_parameter(self):
        self.load("simple_identity")
        self.unload("simple_identity",
                    unload_dependents=pb.ModelRepositoryParameter(bool_param=True))
        self.assertFalse(self.ready("simple_identity"))
        self.still_serving()


# ---- 3. config and file overrides ----------------------------------------------

def simple_config_json(max_batch, camel=True):
    """The `simple` model's config.pbtxt as protobuf JSON."""
    mb, dt, ig = (("maxBatchSize", "dataType", "instanceGroup") if camel else
                  ("max_batch_size", "data_type", "instance_group"))
    tensor = lambda n: {"name": n, dt: "TYPE_INT32", "dims": [16]}  # noqa: E731
    return json.dumps({"name": "simple", "backend": "addsub", mb: max_batch,
                       "input": [tensor("INPUT0"), tensor("INPUT1")],
                       "output": [tensor("OUTPUT0"), tensor("OUTPUT1")],
                       ig: [{"kind": "KIND_CPU"}]})


IDENTITY_JSON = json.dumps(harness.IDENTITY_CONFIG)


class Overrides(ControlTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tmpdir("server_tmp")  # the server's TMPDIR: private folders go here
        repo = tmpdir("repo")
        add_model(repo, "simple", src="simple")
        cls.server = Server("--model-control-mode=explicit", "--load-model=simple",
                            repo=repo, env={"TMPDIR": cls.tmp})
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.server)
        # Shutdown removes every private folder still in use.
        leftovers = cls.private_folders()
        assert leftovers == [], leftovers

    @classmethod
    def private_folders(cls):
        return sorted(n for n in os.listdir(cls.tmp) if n.startswith("nereid-model-"))

    def batch_limit(self, limit):
        self.assertEqual(self.config("simple").max_batch_size, limit)
        self.check_simple(batch=limit)
        req, _, _ = simple_request(batch=limit + 1)
        self.expect_error(lambda: self.stub.ModelInfer(req, timeout=RPC_TIMEOUT),
                          E.INVALID_ARGUMENT, "batch-size must be <= %d" % limit)

    def test_config_override_camel_and_snake_case(self):
        try:
            self.load("simple", config=simple_config_json(4, camel=True))
            self.batch_limit(4)
            self.load("simple", config=simple_config_json(2, camel=False))
            self.batch_limit(2)
            # No private folder for a config-only override.
            self.assertEqual(self.private_folders(), [])
            # A failed override load leaves the model serving as it was.
            for bad, needle in (('{"maxBatchSize": ', "invalid config override"),
                                ('{"maxBatchSizes": 4}', "invalid config override"),
                                ('{"name": "other", "maxBatchSize": 4}', "other")):
                self.expect_error(lambda: self.load("simple", config=bad),
                                  E.INVALID_ARGUMENT, "simple", needle)
                self.batch_limit(2)
            # Valid JSON, but a backend that does not exist: the load fails.
            cfg = json.loads(simple_config_json(4))
            cfg["backend"] = "nosuch_backend"
            with self.assertRaises(grpc.RpcError) as cm:
                self.load("simple", config=json.dumps(cfg))
            self.assertIn("nosuch_backend", cm.exception.details())
            self.batch_limit(2)
            self.assertEqual([r for r in self.index() if r[0] == "simple"],
                             [("simple", "1", "READY", "")])
        finally:
            # A plain load reads config.pbtxt again.
            self.load("simple")
        self.batch_limit(8)

    def test_file_override_new_model(self):
        files = {"1/dummy.txt": b"some bytes\n"}
        self.load("fresh", config=IDENTITY_JSON, files=files)
        self.assertTrue(self.ready("fresh"))
        out = outputs(self.stub.ModelInfer(int32_request("fresh", [5, 6, 7]),
                                           timeout=RPC_TIMEOUT))
        np.testing.assert_array_equal(out["OUTPUT0"], [[5, 6, 7]])
        self.assertEqual(self.config("fresh").name, "fresh")
        self.assertEqual(len(self.private_folders()), 1)
        # Serving, but not listed: Triton's index lists the folders of its
        # repositories, and no repository has a folder "fresh".
        self.assertEqual([r for r in self.index() if r[0] == "fresh"], [])
        # A reload from other files: one private folder again, the new one.
        first = self.private_folders()
        self.load("fresh", config=IDENTITY_JSON, files={"1/other.txt": b"x"})
        self.assertTrue(wait_until(lambda: len(self.private_folders()) == 1
                                   and self.private_folders() != first, 10),
                        self.private_folders())
        self.assertTrue(self.ready("fresh"))
        self.unload("fresh")
        self.assertFalse(self.ready("fresh"))
        self.assertTrue(wait_until(lambda: self.private_folders() == [], 10),
                        self.private_folders())
        self.expect_error(lambda: self.stub.ModelInfer(int32_request("fresh", [1]),
                                                       timeout=RPC_TIMEOUT),
                          E.UNAVAILABLE, "fresh")

    def test_file_override_of_repository_model(self):
        """A file override of a model in the repository serves from the
        private folder until a plain load reads the repository again."""
        self.load("simple", config=simple_config_json(3), files={"1/x.bin": b"\0\1"})
        self.batch_limit(3)
        self.assertEqual(len(self.private_folders()), 1)
        self.load("simple")
        self.batch_limit(8)
        self.assertTrue(wait_until(lambda: self.private_folders() == [], 10),
                        self.private_folders())

    def test_file_override_errors(self):
        data = b"bytes"
        # Triton's answer to files that cannot make a model folder; the
        # reason is in the log.
        poll = "failed to load 'fresh2', failed to poll from model repository"
        self.expect_error(lambda: self.load("fresh2", files={"1/a.txt": data}),
                          E.INTERNAL, poll)
        self.assertTrue(self.server.wait_text("'config' must be specified"))
        for path in ("../x", "1/../../x", "/etc/x", ""):
            self.expect_error(lambda: self.load("fresh2", config=IDENTITY_JSON,
                                                files={path: data}),
                              E.INTERNAL, poll)
            self.assertTrue(self.server.wait_text("'file:%s'" % path))
        as_string = pb.ModelRepositoryParameter(string_param="text")
        self.expect_error(lambda: self.load("fresh2", config=IDENTITY_JSON,
                                            **{"file:1/a.txt": as_string}),
                          E.INVALID_ARGUMENT, "file:1/a.txt")
        self.assertFalse(self.ready("fresh2"))
        self.assertEqual(self.private_folders(), [])
        # A load with files that fails to load leaves no folder behind.
        bad = json.loads(IDENTITY_JSON)
        bad["backend"] = "nosuch_backend"
        with self.assertRaises(grpc.RpcError):
            self.load("fresh2", config=json.dumps(bad), files={"1/a.txt": data})
        self.assertTrue(wait_until(lambda: self.private_folders() == [], 10),
                        self.private_folders())
        self.check_simple()


# ---- 4. reloads keep serving -----------------------------------------------------

class ReloadKeepsServing(ControlTest):
    def test_reload_under_load(self):
        repo = tmpdir("repo")
        folder = add_model(repo, "simple", src="simple")
        with open(os.path.join(folder, "config.pbtxt")) as f:
            original = f.read()
        self.server = Server("--model-control-mode=explicit", "--load-model=simple", repo=repo)
        self.stub = self.server.inference()
        try:
            stop = threading.Event()
            failures, done = [], [0]

            def client(seed):
                with grpc.insecure_channel(self.server.address) as ch:
                    stub = pb_grpc.GRPCInferenceServiceStub(ch)
                    i = 0
                    while not stop.is_set():
                        req, s, d = simple_request(seed=seed * 100000 + i)
                        i += 1
                        try:
                            out = outputs(stub.ModelInfer(req, timeout=RPC_TIMEOUT))
                        except grpc.RpcError as e:
                            failures.append("%s: %s" % (e.code(), e.details()))
                            continue
                        if not (np.array_equal(out["OUTPUT0"], s) and
                                np.array_equal(out["OUTPUT1"], d)):
                            failures.append("wrong answer %r" % out)
                        done[0] += 1

            threads = [threading.Thread(target=client, args=(k,)) for k in range(2)]
            for t in threads:
                t.start()
            for i in range(20):
                # Odd rounds change max_batch_size; even ones only a comment.
                limit = 7 if i % 2 else 8
                text = original.replace("max_batch_size: 8", "max_batch_size: %d" % limit)
                write_atomic(os.path.join(folder, "config.pbtxt"),
                             "# reload %d\n%s" % (i, text))
                self.load("simple")
                self.assertEqual(self.config("simple").max_batch_size, limit)
            stop.set()
            for t in threads:
                t.join(RPC_TIMEOUT)
            self.assertEqual(failures[:5], [])
            self.assertGreater(done[0], 0)
            self.check_simple()
        finally:
            stop_clean(self.server)


# ---- 5 and 6: with the recorder backend ------------------------------------------

class RecorderCases(ControlTest):
    def start(self, models, *args):
        """models: {name: config text}; the records go to self.dir."""
        self.dir = tmpdir("records")
        repo = tmpdir("repo")
        for name, config in models.items():
            add_model(repo, name, config=config)
        self.server = Server("--model-control-mode=explicit", *args, repo=repo,
                             backends=harness.combined_backends(),
                             env={"NEREID_RECORD_DIR": self.dir})
        self.stub = self.server.inference()

    def tearDown(self):
        if hasattr(self, "server"):
            stop_clean(self.server)

    def log(self, name):
        return os.path.join(self.dir, name + ".log")

    def test_unload_waits_for_requests_in_flight(self):
        self.start({"slow": recorder_config("slow", execute_delay_ms=200)}, "--load-model=slow")
        results = [None] * 8

        def call(k):
            try:
                out = outputs(self.stub.ModelInfer(int32_request("slow", [k, k + 1]),
                                                   timeout=RPC_TIMEOUT))
                results[k] = "ok" if np.array_equal(out["OUTPUT0"], [[k, k + 1]]) else \
                    "wrong answer %r" % out
            except grpc.RpcError as e:
                results[k] = (e.code(), e.details())

        threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        # The first request is executing and the others are queued behind it.
        self.assertTrue(wait_until(lambda: "execute_start" in events(self.log("slow")), 10))
        time.sleep(0.2)
        self.unload("slow")
        # Answered after the model was finalized, so after its last execute.
        ev = events(self.log("slow"))
        self.assertIn("model_finalize", ev, ev)
        self.assertEqual(ev[-1], "model_finalize", ev)
        last_exec = max(i for i, e in enumerate(ev) if e.startswith("execute_"))
        self.assertLess(last_exec, ev.index("model_instance_finalize"), ev)
        self.assertEqual(ev.count("execute_start"), ev.count("execute_end"), ev)
        for t in threads:
            t.join(RPC_TIMEOUT)
            self.assertFalse(t.is_alive())
        # Every request is answered: with its result, or refused as unavailable.
        for r in results:
            self.assertTrue(r == "ok" or (r[0] == E.UNAVAILABLE and "slow" in r[1]), results)
        executed = sum(int(f.split("=")[1]) for rec in records(self.log("slow"))
                       if rec[0] == "execute_start" for f in rec if f.startswith("requests="))
        self.assertEqual(results.count("ok"), executed, (results, ev))
        self.assertGreaterEqual(executed, 2, results)  # the unload waited for them
        self.expect_error(lambda: self.stub.ModelInfer(int32_request("slow", [1]),
                                                       timeout=RPC_TIMEOUT),
                          E.UNAVAILABLE, "slow")
        self.assertFalse(self.ready("slow"))
        self.assertIn(("slow", "", "UNAVAILABLE", "unloaded"), self.index())

    def test_concurrent_loads_load_once(self):
        # A slow ModelInitialize: all eight loads arrive while the first runs.
        self.start({"rec": recorder_config("rec", instances=2,
                                           model_initialize_delay_ms=500)})
        barrier = threading.Barrier(8)
        errors = []

        def load():
            barrier.wait()
            try:
                self.load("rec")
            except grpc.RpcError as e:
                errors.append((e.code(), e.details()))

        threads = [threading.Thread(target=load) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(RPC_TIMEOUT)
        self.assertEqual(errors, [])
        self.assertTrue(self.ready("rec"))
        ev = events(self.log("rec"))
        self.assertEqual(ev.count("model_initialize"), 1, ev)
        self.assertEqual(ev.count("model_instance_initialize"), 2, ev)
        out = outputs(self.stub.ModelInfer(int32_request("rec", [9]), timeout=RPC_TIMEOUT))
        np.testing.assert_array_equal(out["OUTPUT0"], [[9]])
        self.unload("rec")
        ev = events(self.log("rec"))
        self.assertEqual(ev.count("model_finalize"), 1, ev)
        self.assertEqual(ev.count("model_instance_finalize"), 2, ev)

    def timed_parallel_loads(self, threads_flag, delay_ms=1000):
        names = ["m%d" % i for i in range(4)]
        self.start({n: recorder_config(n, model_initialize_delay_ms=delay_ms) for n in names},
                   "--model-load-thread-count=%d" % threads_flag)
        errors = []

        def load(n):
            try:
                self.load(n)
            except grpc.RpcError as e:
                errors.append((n, e.code(), e.details()))

        threads = [threading.Thread(target=load, args=(n,)) for n in names]
        start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(RPC_TIMEOUT)
        elapsed = time.monotonic() - start
        self.assertEqual(errors, [])
        self.assertEqual([r[0] for r in self.index(ready=True)], names)
        return elapsed

    def test_load_threads_run_loads_in_parallel(self):
        elapsed = self.timed_parallel_loads(4)
        # Four 1 s initializations side by side, not one after another.
        self.assertLess(elapsed, 3.5, "4 loads on 4 threads took %.2f s" % elapsed)

    def test_one_load_thread_serializes_loads(self):
        elapsed = self.timed_parallel_loads(1)
        self.assertGreaterEqual(elapsed, 4.0, "4 loads on 1 thread took %.2f s" % elapsed)


# ---- 7. load/unload storm ------------------------------------------------------------

class Storm(ControlTest):
    def test_load_unload_storm(self):
        seconds = float(os.environ.get("NEREID_STORM_SECS", "10"))
        self.dir = tmpdir("records")
        repo = tmpdir("repo")
        adders, recorders = ["s0", "s1", "s2"], ["r0", "r1"]
        for n in adders:
            add_model(repo, n, src="simple")
        for n in recorders:
            add_model(repo, n, config=recorder_config(n, instances=2))
        models = sorted(adders + recorders)
        self.server = Server("--model-control-mode=explicit", repo=repo,
                             backends=harness.combined_backends(),
                             env={"NEREID_RECORD_DIR": self.dir})
        self.stub = self.server.inference()
        try:
            problems, counts = [], {"load": 0, "unload": 0, "infer": 0, "unavailable": 0}
            lock = threading.Lock()
            deadline = time.monotonic() + seconds

            def note(what, problem=None):
                with lock:
                    counts[what] = counts.get(what, 0) + 1
                    if problem is not None:
                        problems.append(problem)

            def controller(seed):
                rnd = random.Random(seed)
                with grpc.insecure_channel(self.server.address) as ch:
                    stub = pb_grpc.GRPCInferenceServiceStub(ch)
                    while time.monotonic() < deadline:
                        name = rnd.choice(models)
                        try:
                            if rnd.random() < 0.6:
                                stub.RepositoryModelLoad(load_request(name), timeout=RPC_TIMEOUT)
                                note("load")
                            else:
                                stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(
                                    model_name=name), timeout=RPC_TIMEOUT)
                                note("unload")
                        except grpc.RpcError as e:
                            note("failed", "%s %s: %s" % (name, e.code(), e.details()))

            def client(seed):
                rnd = random.Random(seed)
                with grpc.insecure_channel(self.server.address) as ch:
                    stub = pb_grpc.GRPCInferenceServiceStub(ch)
                    while time.monotonic() < deadline:
                        name = rnd.choice(models)
                        if name in adders:
                            req, s, _ = simple_request(name, seed=rnd.randrange(1000))
                            want, key = s, "OUTPUT0"
                        else:
                            vals = [rnd.randrange(1000) for _ in range(3)]
                            req, want, key = int32_request(name, vals), [vals], "OUTPUT0"
                        try:
                            out = outputs(stub.ModelInfer(req, timeout=RPC_TIMEOUT))
                        except grpc.RpcError as e:
                            if e.code() == E.UNAVAILABLE and name in e.details():
                                note("unavailable")
                            else:
                                note("failed", "infer %s %s: %s" % (name, e.code(), e.details()))
                            continue
                        if not np.array_equal(out[key], want):
                            note("failed", "infer %s: wrong answer %r" % (name, out))
                        else:
                            note("infer")

            threads = ([threading.Thread(target=controller, args=(k,)) for k in range(8)] +
                       [threading.Thread(target=client, args=(100 + k,)) for k in range(2)])
            for t in threads:
                t.start()
            for t in threads:
                t.join(seconds + 2 * RPC_TIMEOUT)
                self.assertFalse(t.is_alive(), "a client hangs")
            print("storm: %r" % counts, flush=True)
            self.assertEqual(problems[:10], [], counts)
            self.assertGreater(counts["load"], 0, counts)
            self.assertGreater(counts["unload"], 0, counts)
            self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest(),
                                                 timeout=RPC_TIMEOUT).live)

            # The state is consistent: all load, all serve, all unload.
            for n in models:
                self.load(n)
            self.assertEqual(self.index(ready=True), [(n, "1", "READY", "") for n in models])
            for n in adders:
                self.check_simple(n)
            for n in recorders:
                out = outputs(self.stub.ModelInfer(int32_request(n, [4]), timeout=RPC_TIMEOUT))
                np.testing.assert_array_equal(out["OUTPUT0"], [[4]])
            for n in models:
                self.unload(n)
            self.assertEqual(self.index(ready=True), [])
            for n in models:
                self.assertFalse(self.ready(n), n)
                self.assertIn((n, "", "UNAVAILABLE", "unloaded"), self.index())
            # Every recorder model initialized was finalized, instances too.
            for n in recorders:
                ev = events(os.path.join(self.dir, n + ".log"))
                self.assertGreater(ev.count("model_initialize"), 0)
                self.assertEqual(ev.count("model_initialize"), ev.count("model_finalize"), n)
                self.assertEqual(ev.count("model_instance_initialize"),
                                 ev.count("model_instance_finalize"), n)
                self.assertEqual(ev[-1], "model_finalize", n)
        finally:
            stop_clean(self.server)


# ---- 8. poll mode ---------------------------------------------------------------------

class Poll(ControlTest):
    def test_repository_is_followed(self):
        repo = tmpdir("repo")
        add_model(repo, "simple", src="simple")
        self.server = Server("--model-control-mode=poll", "--repository-poll-secs=1", repo=repo)
        self.stub = self.server.inference()
        try:
            self.poll_steps(repo)
        finally:
            stop_clean(self.server)

    def identity_ok(self):
        req = pb.ModelInferRequest(model_name="simple_identity")
        t = req.inputs.add()
        t.name, t.datatype = "INPUT0", "BYTES"
        t.shape.extend([1, 1])
        req.raw_input_contents.append(len(b"hi").to_bytes(4, "little") + b"hi")
        r = self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)
        self.assertEqual(r.raw_output_contents[0], b"\x02\x00\x00\x00hi")

    def poll_steps(self, repo):
        self.assertTrue(self.ready("simple"))
        self.check_simple()
        # Load and unload are the repository's business.
        for call in (lambda: self.load("simple"), lambda: self.unload("simple")):
            self.assertEqual(self.expect_error(call, E.UNAVAILABLE), POLLING_REFUSED)
        self.assertTrue(self.ready("simple"))

        # A new folder loads.
        ident = add_model(repo, "simple_identity", src="simple_identity")
        self.assertTrue(wait_until(lambda: self.ready("simple_identity"), 10), self.index())
        self.identity_ok()

        # An edited config reloads (a different size: the change is seen for sure).
        path = os.path.join(repo, "simple", "config.pbtxt")
        with open(path) as f:
            original = f.read()
        write_atomic(path, original.replace("max_batch_size: 8", "max_batch_size: 4 # edited"))
        self.assertTrue(wait_until(lambda: self.config("simple").max_batch_size == 4, 10),
                        self.server.text())
        self.check_simple(batch=4)

        # A broken config: the reload fails, the old version keeps serving.
        ipath = os.path.join(ident, "config.pbtxt")
        with open(ipath) as f:
            ioriginal = f.read()
        write_atomic(ipath, BROKEN_CONFIG % "simple_identity")
        self.assertTrue(wait_until(lambda: "failed to load 'simple_identity'"
                                   in self.server.text(), 10), self.server.text())
        self.assertTrue(self.ready("simple_identity"))
        self.identity_ok()
        self.assertIn(("simple_identity", "1", "READY", ""), self.index())
        # Fixed again (max_batch_size 2 this time): reloads.
        write_atomic(ipath, ioriginal.replace("max_batch_size: 8", "max_batch_size: 2"))
        self.assertTrue(wait_until(
            lambda: self.config("simple_identity").max_batch_size == 2, 10), self.server.text())
        self.identity_ok()

        # A new broken folder: the index says why it is not served.
        add_model(repo, "broken", config=BROKEN_CONFIG % "broken")

        def broken_row():
            rows = [r for r in self.index() if r[0] == "broken"]
            return rows if rows and rows[0][2] == "UNAVAILABLE" else None
        self.assertTrue(wait_until(broken_row, 10), self.index())
        rows = broken_row()
        self.assertEqual([r[:3] for r in rows], [("broken", "", "UNAVAILABLE")])
        self.assertIn("config.pbtxt:5:", rows[0][3])
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest(), timeout=RPC_TIMEOUT).live)

        # A removed folder unloads; put back, it loads again.
        saved = tmpdir("saved")
        shutil.move(os.path.join(repo, "simple"), os.path.join(saved, "simple"))
        self.assertTrue(wait_until(lambda: not self.ready("simple"), 10), self.index())
        self.expect_infer_unavailable("simple")
        self.assertNotIn("simple", [r[0] for r in self.index(ready=True)])
        self.assertEqual([r[0] for r in self.index(ready=True)], ["simple_identity"])
        os.rename(os.path.join(saved, "simple"), os.path.join(repo, "simple"))
        self.assertTrue(wait_until(lambda: self.ready("simple"), 10), self.index())
        self.assertEqual(self.config("simple").max_batch_size, 4)
        self.check_simple()


if __name__ == "__main__":
    harness.main()
