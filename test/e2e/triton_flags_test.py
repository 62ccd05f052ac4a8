"""End to end: tritonserver's flags beyond the basic ones. --model-config-name
(<model>/configs/<name>.pbtxt where it exists, else config.pbtxt; a `config`
load override wins; polling sees edits of the custom file),
--model-load-retry-count (a failing version is created again that many
times), --id (ServerMetadata's name on gRPC and HTTP), --reuse-grpc-port and
--reuse-http-port (SO_REUSEPORT), and the flags of features Nereid lacks,
refused naming the feature."""

import json
import os
import shutil
import tempfile
import time
import unittest
import urllib.request

import grpc

import harness
from harness import Server, run_nereid
import grpc_service_pb2 as pb

IDENTITY = """name: "%s"
backend: "identity"
max_batch_size: %d
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU } ]
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def identity_model(root, name, batch, custom=None):
    """<root>/<name> with config.pbtxt (max_batch_size `batch`) and, when
    `custom` is (config name, batch), configs/<config name>.pbtxt."""
    os.makedirs(os.path.join(root, name, "1"), exist_ok=True)
    write(os.path.join(root, name, "config.pbtxt"), IDENTITY % (name, batch))
    if custom is not None:
        write(os.path.join(root, name, "configs", custom[0] + ".pbtxt"),
              IDENTITY % (name, custom[1]))


def new_root():
    return tempfile.mkdtemp(prefix="repo", dir=os.environ.get("TEST_TMPDIR"))


class ExplicitMode(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.records = tempfile.mkdtemp(prefix="records", dir=os.environ.get("TEST_TMPDIR"))
        root = new_root()
        identity_model(root, "custom", 8, custom=("small", 4))
        identity_model(root, "other_name", 8, custom=("large", 2))
        identity_model(root, "plain", 8)
        shutil.copytree(os.path.join(harness.TEST_MODELS, "recorder_fail_model_init"),
                        os.path.join(root, "recorder_fail_model_init"))
        cls.server = Server("--model-control-mode=explicit", "--model-config-name=small",
                            "--model-load-retry-count=2", "--id=edge-7",
                            "--load-model=custom", "--load-model=other_name",
                            "--load-model=plain", repo=root,
                            backends=harness.combined_backends(),
                            env={"NEREID_RECORD_DIR": cls.records})
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        harness.stop_clean(cls.server)

    def batch(self, name):
        return self.stub.ModelConfig(pb.ModelConfigRequest(name=name)).config.max_batch_size

    def test_custom_config_where_it_exists(self):
        self.assertEqual(self.batch("custom"), 4)
        # configs/large.pbtxt is not the name asked for; no configs/ at all.
        self.assertEqual(self.batch("other_name"), 8)
        self.assertEqual(self.batch("plain"), 8)

    def test_config_override_wins(self):
        req = pb.RepositoryModelLoadRequest(model_name="custom")
        req.parameters["config"].string_param = json.dumps({
            "name": "custom", "backend": "identity", "maxBatchSize": 16,
            "input": [{"name": "INPUT0", "dataType": "TYPE_INT32", "dims": [-1]}],
            "output": [{"name": "OUTPUT0", "dataType": "TYPE_INT32", "dims": [-1]}]})
        self.stub.RepositoryModelLoad(req)
        self.assertEqual(self.batch("custom"), 16)
        # Loaded again from the folder: the custom file once more.
        self.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="custom"))
        self.assertEqual(self.batch("custom"), 4)

    def test_failed_load_is_retried(self):
        with self.assertRaises(grpc.RpcError):
            self.stub.RepositoryModelLoad(
                pb.RepositoryModelLoadRequest(model_name="recorder_fail_model_init"))
        with open(os.path.join(self.records, "recorder_fail_model_init.log")) as f:
            inits = [line for line in f if line.startswith("model_initialize")]
        self.assertEqual(len(inits), 3)  # the load and two retries
        self.assertTrue(self.server.wait_text("; retry 2 of 2"))

    def test_server_id_is_the_metadata_name(self):
        md = self.stub.ServerMetadata(pb.ServerMetadataRequest())
        self.assertEqual(md.name, "edge-7")
        with urllib.request.urlopen(self.server.http_url + "/v2") as r:
            self.assertEqual(json.loads(r.read())["name"], "edge-7")


class PollMode(unittest.TestCase):
    def test_poll_sees_the_custom_config(self):
        root = new_root()
        identity_model(root, "custom", 8, custom=("small", 4))
        server = Server("--model-control-mode=poll", "--repository-poll-secs=1",
                        "--model-config-name=small", repo=root)
        try:
            stub = server.inference()

            def batch_becomes(n):
                deadline = time.monotonic() + 20 * harness.SLOW
                while time.monotonic() < deadline:
                    got = stub.ModelConfig(
                        pb.ModelConfigRequest(name="custom")).config.max_batch_size
                    if got == n:
                        return True
                    time.sleep(0.1)
                return False

            self.assertTrue(batch_becomes(4))
            write(os.path.join(root, "custom", "configs", "small.pbtxt"),
                  IDENTITY % ("custom", 2))
            self.assertTrue(batch_becomes(2), server.text())
            # Without the custom file: config.pbtxt again.
            os.remove(os.path.join(root, "custom", "configs", "small.pbtxt"))
            self.assertTrue(batch_becomes(8), server.text())
        finally:
            harness.stop_clean(server)


class ReusePorts(unittest.TestCase):
    def test_reuse_shares_and_no_reuse_refuses(self):
        first = Server("--reuse-grpc-port", "--reuse-http-port")
        try:
            grpc_port, http_port = first.port, first.http_port
            second = Server("--grpc-port=%d" % grpc_port, "--reuse-grpc-port",
                            "--http-port=%d" % http_port, "--reuse-http-port=true")
            try:
                self.assertEqual(second.port, grpc_port)
                self.assertEqual(second.http_port, http_port)
            finally:
                harness.stop_clean(second)
            code, out = run_nereid("--model-repository=" + new_root(),
                                   "--grpc-address=127.0.0.1",
                                   "--grpc-port=%d" % grpc_port)
            self.assertNotEqual(code, 0, out)
            code, out = run_nereid("--model-repository=" + new_root(),
                                   "--grpc-address=127.0.0.1", "--grpc-port=0",
                                   "--http-port=%d" % http_port)
            self.assertNotEqual(code, 0, out)
            self.assertIn("HTTP: cannot listen on 127.0.0.1:%d" % http_port, out)
        finally:
            harness.stop_clean(first)

    def test_http_loops_share_one_socket_without_reuse(self):
        server = Server("--http-thread-count=3")
        try:
            for _ in range(6):
                with urllib.request.urlopen(server.http_url + "/v2/health/live") as r:
                    self.assertEqual(r.status, 200)
        finally:
            harness.stop_clean(server)


class HostPolicy(unittest.TestCase):
    """cpu-cores is the CPU affinity of the threads of the instances whose
    host policy it names: the group's host_policy, else "cpu"."""

    def test_cpu_cores_bind_instance_threads(self):
        records = tempfile.mkdtemp(prefix="records", dir=os.environ.get("TEST_TMPDIR"))
        server = Server("--model-control-mode=explicit", "--host-policy=cpu,cpu-cores=0",
                        "--host-policy=pinned,cpu-cores=1",
                        backends=harness.TEST_BACKENDS,
                        env={"NEREID_RECORD_DIR": records})
        try:
            stub = server.inference()
            for name, groups in (("by_kind", [{"kind": "KIND_CPU"}]),
                                 ("by_name", [{"kind": "KIND_CPU", "hostPolicy": "pinned"}])):
                req = pb.RepositoryModelLoadRequest(model_name=name)
                req.parameters["config"].string_param = harness.recorder_config(name, groups)
                req.parameters["file:1/README.md"].bytes_param = b"triton_flags_test"
                stub.RepositoryModelLoad(req)
                stub.ModelInfer(harness.int32_request(name, [1, 2]))
            allowed = {}
            for name in ("by_kind", "by_name"):
                with open(os.path.join(records, name + ".log")) as f:
                    start = [dict(kv.split("=", 1) for kv in line.split()[1:])
                             for line in f if line.startswith("execute_start")][0]
                status = "/proc/%d/task/%s/status" % (server.proc.pid, start["tid"])
                with open(status) as f:
                    allowed[name] = [line.split()[1] for line in f
                                     if line.startswith("Cpus_allowed_list")][0]
            self.assertEqual(allowed, {"by_kind": "0", "by_name": "1"})
        finally:
            harness.stop_clean(server)


class MissingFeatures(unittest.TestCase):
    def refused(self, flag, needle):
        code, out = run_nereid("--model-repository=" + new_root(), "--grpc-port=0", flag)
        self.assertNotEqual(code, 0, out)
        self.assertIn(needle, out)
        self.assertNotIn("unknown flag", out)

    def test_refused_naming_the_feature(self):
        self.refused("--response-cache-byte-size=1048576", "Nereid has no response cache")
        self.refused("--cache-config=local,size=1048576", "Nereid has no response cache")
        self.refused("--model-namespacing=true", "Nereid has no model namespaces")
        self.refused("--host-policy=gpu_0,numa-node=0", "Nereid binds no memory to NUMA nodes")

    def test_defaults_accepted(self):
        server = Server("--rate-limit=off", "--response-cache-byte-size=0",
                        "--model-namespacing=false", "--allow-gpu-metrics=true",
                        "--buffer-manager-thread-count=4",
                        "--cuda-virtual-address-size=0:1073741824",
                        "--model-load-gpu-limit=0:0.5",
                        "--min-supported-compute-capability=7.0")
        harness.stop_clean(server)


if __name__ == "__main__":
    unittest.main(verbosity=2)
