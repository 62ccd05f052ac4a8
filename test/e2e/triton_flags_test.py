"""End to end: tritonserver's flags beyond the basic ones. --model-config-name
(<model>/configs/<name>.pbtxt where it exists, else config.pbtxt; a `config`
load override wins; polling sees edits of the custom file),
--model-load-retry-count (a failing version is created again that many
times), --id (ServerMetadata's name on gRPC and HTTP), --reuse-grpc-port and
--reuse-http-port (SO_REUSEPORT), --host-policy (cpu-cores and numa-node
read back from the kernel for the instances' threads), and the flags of
features Nereid lacks, refused naming the feature."""

import ctypes
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


def cpu_list(text):
    """The kernel's CPU list form, "0-3,6", as a set."""
    cpus = set()
    for part in filter(None, text.strip().split(",")):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def numa_usable():
    """Whether this process may set NUMA memory policies (not under a
    seccomp profile that forbids them): libnuma's own probe."""
    return ctypes.CDLL("libnuma.so.1").numa_available() == 0


class HostPolicy(unittest.TestCase):
    """cpu-cores is the CPU affinity of the threads of the instances whose
    host policy it names: the group's host_policy, else "cpu". numa-node
    binds their memory to the node (the kernel shows "bind:<node>" for the
    thread), and without cpu-cores runs them on the node's CPUs."""

    def test_cpu_cores_and_numa_node_bind_instance_threads(self):
        numa = numa_usable()
        flags = ["--host-policy=cpu,cpu-cores=0", "--host-policy=pinned,cpu-cores=1",
                 "--host-policy=offline,cpu-cores=1023"]
        models = [("by_kind", [{"kind": "KIND_CPU"}]),
                  ("by_name", [{"kind": "KIND_CPU", "hostPolicy": "pinned"}])]
        if numa:
            flags += ["--host-policy=pinned,numa-node=0", "--host-policy=node,numa-node=0"]
            models.append(("by_node", [{"kind": "KIND_CPU", "hostPolicy": "node"}]))
        records = tempfile.mkdtemp(prefix="records", dir=os.environ.get("TEST_TMPDIR"))
        server = Server("--model-control-mode=explicit", *flags,
                        backends=harness.TEST_BACKENDS,
                        env={"NEREID_RECORD_DIR": records})
        try:
            stub = server.inference()
            for name, groups in models:
                req = pb.RepositoryModelLoadRequest(model_name=name)
                req.parameters["config"].string_param = harness.recorder_config(name, groups)
                req.parameters["file:1/README.md"].bytes_param = b"triton_flags_test"
                stub.RepositoryModelLoad(req)
                stub.ModelInfer(harness.int32_request(name, [1, 2]))
            allowed, memory = {}, {}
            for name, _ in models:
                with open(os.path.join(records, name + ".log")) as f:
                    start = [dict(kv.split("=", 1) for kv in line.split()[1:])
                             for line in f if line.startswith("execute_start")][0]
                task = "/proc/%d/task/%s/" % (server.proc.pid, start["tid"])
                with open(task + "status") as f:
                    allowed[name] = cpu_list([line.split()[1] for line in f
                                              if line.startswith("Cpus_allowed_list")][0])
                with open(task + "numa_maps") as f:
                    memory[name] = f.readline().split()[1]
            expected = {"by_kind": {0}, "by_name": {1}}
            if numa:
                with open("/sys/devices/system/node/node0/cpulist") as f:
                    expected["by_node"] = cpu_list(f.read()) & os.sched_getaffinity(0)
            self.assertEqual(allowed, expected)
            self.assertEqual(memory["by_kind"], "default")
            if numa:
                self.assertEqual(memory["by_name"], "bind:0")
                self.assertEqual(memory["by_node"], "bind:0")
            else:
                print("no NUMA memory policies here: numa-node not applied")
            # A policy that cannot be applied (no core 1023 online) fails
            # the load, naming the instance and the policy, as in Triton.
            req = pb.RepositoryModelLoadRequest(model_name="offline")
            req.parameters["config"].string_param = harness.recorder_config(
                "offline", [{"kind": "KIND_CPU", "hostPolicy": "offline"}])
            req.parameters["file:1/README.md"].bytes_param = b"triton_flags_test"
            with self.assertRaises(grpc.RpcError) as failed:
                stub.RepositoryModelLoad(req)
            self.assertIn("host policy 'offline': cannot run on cpu-cores 1023",
                          failed.exception.details())
        finally:
            harness.stop_clean(server)

    def test_absent_numa_node_refused(self):
        absent = ctypes.CDLL("libnuma.so.1").numa_max_node() + 1
        setting = "gpu_0,numa-node=%d" % absent
        code, out = run_nereid("--model-repository=" + new_root(), "--grpc-port=0",
                               "--host-policy=" + setting)
        self.assertNotEqual(code, 0, out)
        if numa_usable():
            self.assertIn("--host-policy '%s': NUMA node %d is not a node this process "
                          "may allocate memory on" % (setting, absent), out)
        else:
            self.assertIn("--host-policy '%s': this process cannot set NUMA memory "
                          "policies" % setting, out)


class MissingFeatures(unittest.TestCase):
    def refused(self, flag, needle):
        code, out = run_nereid("--model-repository=" + new_root(), "--grpc-port=0", flag)
        self.assertNotEqual(code, 0, out)
        self.assertIn(needle, out)
        self.assertNotIn("unknown flag", out)

    def test_refused_naming_the_feature(self):
        # The response cache exists (response_cache_test); a cache library
        # that is not there stops the start, in Triton's words.
        self.refused("--cache-config=redis,host=localhost",
                     "unable to find 'libtritoncache_redis.so' for cache. Searched: "
                     "/opt/tritonserver/caches")

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
