"""End to end with test backends on the real server: the lifecycle order
Triton's backends rely on, load failures that leave the server healthy,
execute errors answered by the server, instances running in parallel, and a
C++ backend built against our headers."""

import os
import tempfile
import threading
import time
import unittest

import grpc
import numpy as np

import harness
from harness import Server, int32_request
import grpc_service_pb2 as pb


def records(path):
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


class Lifecycle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="records", dir=os.environ.get("TEST_TMPDIR"))
        cls.backend_log = os.path.join(cls.dir, "backend.log")
        # Some test models fail to load on purpose: keep serving the others.
        cls.server = Server("--exit-on-error=false",
                            "--backend-config=recorder,record_file=" + cls.backend_log,
                            repo=harness.TEST_MODELS, backends=harness.TEST_BACKENDS,
                            env={"NEREID_RECORD_DIR": cls.dir})
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        cls.exit_code = cls.server.stop()

    def ready(self, name):
        return self.stub.ModelReady(pb.ModelReadyRequest(name=name)).ready

    def test_failed_loads_leave_server_healthy(self):
        self.assertTrue(self.ready("recorder"))
        self.assertTrue(self.ready("cpp_minimal"))
        self.assertFalse(self.ready("recorder_fail_model_init"))
        self.assertFalse(self.ready("recorder_fail_instance_init"))
        # Strict readiness: not every model loaded.
        self.assertFalse(self.stub.ServerReady(pb.ServerReadyRequest()).ready)
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest()).live)
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.ModelInfer(int32_request("recorder_fail_model_init", [1]))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertIn("failing at model_initialize", cm.exception.details())

    def test_recorder_answers(self):
        r = self.stub.ModelInfer(int32_request("recorder", [4, 5, 6]))
        np.testing.assert_array_equal(
            np.frombuffer(r.raw_output_contents[0], dtype=np.int32), [4, 5, 6])

    def test_execute_error_answered_by_server(self):
        for model in ("recorder_fail_execute", "recorder_fail_request"):
            with self.assertRaises(grpc.RpcError) as cm:
                self.stub.ModelInfer(int32_request(model, [1]), timeout=30)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INTERNAL, model)
            self.assertIn("recorder: failing at", cm.exception.details())
        self.assertTrue(self.ready("recorder"))

    def test_cpp_backend(self):
        r = self.stub.ModelInfer(int32_request("cpp_minimal", [7, 8, 9, 10], name="IN0"))
        np.testing.assert_array_equal(
            np.frombuffer(r.raw_output_contents[0], dtype=np.int32), [7, 8, 9, 10])

    def test_one_instance_serializes_executions(self):
        """recorder_slow has one instance and sleeps 200 ms per execute: three
        concurrent requests take at least 600 ms, and all succeed."""
        errors = []

        def call():
            try:
                self.stub.ModelInfer(int32_request("recorder_slow", [1]),
                                     timeout=60)
            except grpc.RpcError as e:
                errors.append(e.details())

        start = time.monotonic()
        threads = [threading.Thread(target=call) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        self.assertGreaterEqual(time.monotonic() - start, 0.6)

    def test_zz_lifecycle_order_after_shutdown(self):
        """Runs last (name order): stops the server, then reads the records."""
        self.assertEqual(self.server.stop(), 0, self.server.text())
        rec = records(os.path.join(self.dir, "recorder.log"))
        events = [r[0] for r in rec]
        self.assertEqual(events[0], "model_initialize")
        self.assertEqual(events[1:3], ["model_instance_initialize"] * 2)
        self.assertEqual(events[-3:-1], ["model_instance_finalize"] * 2)
        self.assertEqual(events[-1], "model_finalize")
        self.assertIn("execute_start", events)
        instances = {f for r in rec if r[0] == "model_instance_initialize" for f in r
                     if f.startswith("instance=")}
        self.assertEqual(len(instances), 2)
        backend = [r[0] for r in records(self.backend_log)]
        self.assertEqual(backend[0], "initialize")
        self.assertEqual(backend[-1], "finalize")
        # A failed instance load is followed by the model's finalize.
        failed = [r[0] for r in records(os.path.join(self.dir, "recorder_fail_instance_init.log"))]
        self.assertEqual(failed[0], "model_initialize")
        self.assertIn("model_instance_initialize", failed)
        self.assertEqual(failed[-1], "model_finalize")
        # ModelInitialize failed: ModelFinalize must not follow.
        init_failed = [r[0] for r in records(os.path.join(self.dir, "recorder_fail_model_init.log"))]
        self.assertEqual(init_failed, ["model_initialize"])

    def test_bls_backend_calls_simple(self):
        """test/backends/bls answers by sending each request on to `simple`
        through the in-process API; own server, as it needs both models."""
        import shutil
        tmp = os.environ.get("TEST_TMPDIR")
        repo = tempfile.mkdtemp(prefix="bls_repo", dir=tmp)
        backends = tempfile.mkdtemp(prefix="bls_backends", dir=tmp)
        for name, src in (("simple", harness.EXAMPLES), ("bls_simple", harness.TEST_MODELS)):
            shutil.copytree(os.path.join(src, name), os.path.join(repo, name))
        for name, src in (("addsub", harness.BACKENDS), ("bls", harness.TEST_BACKENDS)):
            os.symlink(os.path.join(src, name), os.path.join(backends, name))
        server = Server(repo=repo, backends=backends)
        try:
            stub = server.inference()
            errors = []

            def call(seed):
                a = np.arange(seed, seed + 16, dtype=np.int32).reshape(1, 16)
                b = np.full((1, 16), seed % 7, dtype=np.int32)
                req = int32_request("bls_simple", a)
                t = req.inputs.add()
                t.name, t.datatype = "INPUT1", "INT32"
                t.shape.extend(b.shape)
                req.raw_input_contents.append(b.tobytes())
                req.id = "bls-%d" % seed
                try:
                    r = stub.ModelInfer(req, timeout=60)
                except grpc.RpcError as e:
                    errors.append(e.details())
                    return
                out = {o.name: np.frombuffer(r.raw_output_contents[i], dtype=np.int32)
                       for i, o in enumerate(r.outputs)}
                if r.id != req.id or not (np.array_equal(out["OUTPUT0"], (a + b).ravel()) and
                                          np.array_equal(out["OUTPUT1"], (a - b).ravel())):
                    errors.append("wrong answer for seed %d: %s" % (seed, out))

            call(1)
            self.assertEqual(errors, [])
            threads = [threading.Thread(target=lambda k=k: [call(100 * k + j) for j in range(10)])
                       for k in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            self.assertEqual(errors, [])
            # Every forwarded request counts in `simple`'s statistics.
            stats = stub.ModelStatistics(pb.ModelStatisticsRequest(name="simple"))
            self.assertEqual(stats.model_stats[0].inference_stats.success.count, 41)
        finally:
            self.assertEqual(server.stop(), 0, server.text())


GROUPLESS_CONFIG = """name: "groupless"
backend: "recorder"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
parameters [ { key: "record_file" value: { string_value: "groupless.log" } } ]
"""


class PreferredGroups(unittest.TestCase):
    """A config without instance_group takes the backend's preferred group
    (TRITONBACKEND_GetBackendAttribute), as Triton does."""

    def serve(self, *args):
        root = tempfile.mkdtemp(prefix="groupless", dir=os.environ.get("TEST_TMPDIR"))
        os.makedirs(os.path.join(root, "groupless", "1"))
        with open(os.path.join(root, "groupless", "config.pbtxt"), "w") as f:
            f.write(GROUPLESS_CONFIG)
        server = Server(*args, repo=root, backends=harness.TEST_BACKENDS,
                        env={"NEREID_RECORD_DIR": root})
        group = server.inference().ModelConfig(
            pb.ModelConfigRequest(name="groupless")).config.instance_group
        self.assertEqual(server.stop(), 0)
        inits = [r for r in records(os.path.join(root, "groupless.log"))
                 if r[0] == "model_instance_initialize"]
        return group, inits

    def test_backend_preference_applies(self):
        group, inits = self.serve("--backend-config=recorder,preferred_instance_count=3")
        self.assertEqual(len(group), 1)
        self.assertEqual(group[0].count, 3)
        self.assertEqual(group[0].kind, 2)  # KIND_CPU
        self.assertEqual(len(inits), 3)

    def test_default_without_preference_count(self):
        group, inits = self.serve()
        self.assertEqual(group[0].count, 1)
        self.assertEqual(len(inits), 1)


if __name__ == "__main__":
    harness.main()
