"""End to end: model repository behaviour in model control mode 'none'
(tritonserver's default): --exit-on-error, RepositoryIndex with states and
reasons, load/unload refused as tritonserver does, --strict-readiness, and
the control modes not built yet."""

import os
import shutil
import tempfile
import unittest

import grpc

import harness
from harness import Server, run_nereid
import grpc_service_pb2 as pb

BROKEN_CONFIG = """name: "broken"
backend: "addsub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FOOBAR dims: [ 16 ] } ]
"""


def make_repo():
    """simple (good), broken (config error at a known line and column)."""
    root = tempfile.mkdtemp(prefix="repo", dir=os.environ.get("TEST_TMPDIR"))
    shutil.copytree(os.path.join(harness.EXAMPLES, "simple"), os.path.join(root, "simple"))
    os.makedirs(os.path.join(root, "broken", "1"))
    with open(os.path.join(root, "broken", "config.pbtxt"), "w") as f:
        f.write(BROKEN_CONFIG)
    with open(os.path.join(root, "not_a_model.txt"), "w") as f:
        f.write("files at the top of a repository are not models\n")
    return root


class ExitOnError(unittest.TestCase):
    def test_default_exits_when_a_model_fails(self):
        code, out = run_nereid("--model-repository=" + make_repo(), "--grpc-port=0",
                               "--backend-directory=" + harness.BACKENDS)
        self.assertNotEqual(code, 0)
        self.assertIn("failed to load all models", out)
        self.assertIn("TYPE_FOOBAR", out)  # the model's own reason is logged

    def test_unknown_control_mode(self):
        code, out = run_nereid("--model-repository=" + harness.empty_repo(), "--model-control-mode=sometimes")
        self.assertNotEqual(code, 0)
        self.assertIn("sometimes", out)


class Index(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--exit-on-error=false", repo=make_repo())
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0, cls.server.text()

    def test_index_lists_states_and_reasons(self):
        models = self.stub.RepositoryIndex(pb.RepositoryIndexRequest()).models
        self.assertEqual([(m.name, m.version, m.state) for m in models],
                         [("broken", "", "UNAVAILABLE"), ("simple", "1", "READY")])
        self.assertIn("config.pbtxt:5:", models[0].reason)
        self.assertIn("TYPE_FOOBAR", models[0].reason)
        self.assertEqual(models[1].reason, "")

    def test_index_ready_filter(self):
        models = self.stub.RepositoryIndex(pb.RepositoryIndexRequest(ready=True)).models
        self.assertEqual([m.name for m in models], ["simple"])

    def test_load_unload_refused_without_model_control(self):
        for call in (lambda: self.stub.RepositoryModelLoad(
                         pb.RepositoryModelLoadRequest(model_name="simple")),
                     lambda: self.stub.RepositoryModelUnload(
                         pb.RepositoryModelUnloadRequest(model_name="simple"))):
            with self.assertRaises(grpc.RpcError) as cm:
                call()
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE)
            self.assertEqual(cm.exception.details(),
                             "explicit model load / unload is not allowed if polling is enabled")
        raw = self.server.connect().unary_unary(
            "/inference.GRPCInferenceService/RepositoryModelLoad")
        with self.assertRaises(grpc.RpcError) as cm:
            raw(b"\x0a\xff", timeout=10)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name="simple")).ready)

    def test_strict_readiness(self):
        self.assertFalse(self.stub.ServerReady(pb.ServerReadyRequest()).ready)
        relaxed = Server("--exit-on-error=false", "--strict-readiness=false", repo=make_repo())
        try:
            self.assertTrue(relaxed.inference().ServerReady(pb.ServerReadyRequest()).ready)
        finally:
            self.assertEqual(relaxed.stop(), 0)


if __name__ == "__main__":
    harness.main()
