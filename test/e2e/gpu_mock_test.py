"""KIND_GPU end to end on two mock GPUs: the server loads a stand-in CUDA
runtime (test/cuda_mock, first on LD_LIBRARY_PATH) where there is no GPU,
so its GPU path runs here: pools at start-up, a KIND_GPU group with `count`
instances on each GPU, each instance told its kind and device (the recorder
backend writes them), requests answered, Triton's gpu id message; GPUs
below --min-supported-compute-capability left out."""

import ctypes
import os
import tempfile
import unittest

import grpc
import numpy as np

import harness
import grpc_service_pb2 as pb

MOCK_LIB = os.path.abspath("test/cuda_mock/lib")


class MockGpuCase(unittest.TestCase):
    """A server on the mock GPUs with FLAGS and ENV; load() loads a
    recorder model with the given instance groups."""
    FLAGS = ()
    ENV = {}

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="records", dir=os.environ.get("TEST_TMPDIR"))
        env = {"LD_LIBRARY_PATH": MOCK_LIB, "NEREID_RECORD_DIR": cls.dir}
        env.update({k: v.format(dir=cls.dir) for k, v in cls.ENV.items()})
        cls.server = harness.Server("--model-control-mode=explicit", *cls.FLAGS,
                                    backends=harness.TEST_BACKENDS, env=env)
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        harness.stop_clean(cls.server)

    def load(self, name, groups):
        req = pb.RepositoryModelLoadRequest(model_name=name)
        req.parameters["config"].string_param = harness.recorder_config(name, groups)
        req.parameters["file:1/README.md"].bytes_param = b"made by gpu_mock_test"
        return self.stub.RepositoryModelLoad(req)


class GpuMockTest(MockGpuCase):
    FLAGS = ("--log-verbose=1", "--cuda-memory-pool-byte-size=1:1048576")
    ENV = {"NEREID_MOCK_CUDA_LOG": "{dir}/cuda.log"}

    def test_pools_on_each_gpu(self):
        text = self.server.text()
        self.assertIn("CUDA memory pool is created on device 0 with size 67108864", text)
        self.assertIn("CUDA memory pool is created on device 1 with size 1048576", text)
        self.assertIn("Pinned memory pool is created at", text)

    def test_instances_on_every_gpu(self):
        self.load("on_gpus", [{"kind": "KIND_GPU", "count": 2}])
        with open(os.path.join(self.dir, "on_gpus.log")) as f:
            lines = [line.split() for line in f if line.startswith("model_instance_init")]
        placed = sorted((fields[3], fields[4], fields[5]) for fields in lines)
        self.assertEqual(placed, [
            ("instance=on_gpus_0", "kind=GPU", "device=0"),
            ("instance=on_gpus_0", "kind=GPU", "device=1"),
            ("instance=on_gpus_1", "kind=GPU", "device=0"),
            ("instance=on_gpus_1", "kind=GPU", "device=1")])
        cfg = self.stub.ModelConfig(pb.ModelConfigRequest(name="on_gpus")).config
        self.assertEqual(list(cfg.instance_group[0].gpus), [0, 1])
        self.assertTrue(self.server.wait_text("instance 'on_gpus_1' on GPU 1"),
                        self.server.text())
        r = self.stub.ModelInfer(harness.int32_request("on_gpus", [4, 5, 6]))
        np.testing.assert_array_equal(
            np.frombuffer(r.raw_output_contents[0], dtype=np.int32), [4, 5, 6])
        # The thread that executed made its instance's GPU current first.
        with open(os.path.join(self.dir, "on_gpus.log")) as f:
            start = [dict(kv.split("=", 1) for kv in line.split()[1:])
                     for line in f if line.startswith("execute_start")][0]
        with open(os.path.join(self.dir, "cuda.log")) as f:
            sets = [dict(kv.split("=", 1) for kv in line.split()[1:])
                    for line in f if line.startswith("set_device ")]
        on_thread = [s["device"] for s in sets if s["tid"] == start["tid"]]
        self.assertEqual(len(on_thread), 1, sets)  # once, before the first execute
        self.assertIn(on_thread[0], ("0", "1"))

    def test_listed_gpu_only(self):
        self.load("on_gpu1", [{"kind": "KIND_GPU", "gpus": [1]}])
        with open(os.path.join(self.dir, "on_gpu1.log")) as f:
            devices = [line.split()[5] for line in f
                       if line.startswith("model_instance_init")]
        self.assertEqual(devices, ["device=1"])

    def test_unknown_gpu_is_refused(self):
        with self.assertRaises(grpc.RpcError) as ctx:
            self.load("on_gpu7", [{"name": "g", "kind": "KIND_GPU", "gpus": [7]}])
        self.assertIn("instance group g of model on_gpu7 specifies invalid or unsupported "
                      "gpu id 7. GPUs with at least the minimum required CUDA compute "
                      "compatibility of 6.000000 are: 0, 1", ctx.exception.details())

    def test_instance_limit_counts_every_gpu(self):
        # 600 on each of 2 GPUs: 1200, above the limit of 1024.
        with self.assertRaises(grpc.RpcError) as ctx:
            self.load("too_many", [{"kind": "KIND_GPU", "count": 600}])
        self.assertIn("1200 instances, above the limit of 1024", ctx.exception.details())


class MinComputeCapabilityTest(MockGpuCase):
    """GPU 1 has compute capability 5.2, below the flag's 7.0: KIND_GPU
    groups leave it out, and a group that lists it fails, as in Triton."""
    FLAGS = ("--min-supported-compute-capability=7.0",)
    ENV = {"NEREID_MOCK_CC": "9.0,5.2"}

    def test_old_gpu_left_out(self):
        self.load("new_gpus", [{"kind": "KIND_GPU"}])
        cfg = self.stub.ModelConfig(pb.ModelConfigRequest(name="new_gpus")).config
        self.assertEqual(list(cfg.instance_group[0].gpus), [0])
        with open(os.path.join(self.dir, "new_gpus.log")) as f:
            devices = [line.split()[5] for line in f
                       if line.startswith("model_instance_init")]
        self.assertEqual(devices, ["device=0"])

    def test_listing_old_gpu_fails(self):
        with self.assertRaises(grpc.RpcError) as e:
            self.load("old_gpu", [{"kind": "KIND_GPU", "gpus": [1]}])
        self.assertIn("specifies invalid or unsupported gpu id 1. GPUs with at least the "
                      "minimum required CUDA compute compatibility of 7.000000 are: 0",
                      e.exception.details())

    def test_auto_group_naming_old_gpu_is_cpu(self):
        # As for a GPU the server lacks: KIND_CPU, which may not list GPUs.
        with self.assertRaises(grpc.RpcError) as e:
            self.load("auto_old", [{"name": "a", "kind": "KIND_AUTO", "gpus": [1]}])
        self.assertIn("instance group 'a' is KIND_CPU but lists GPUs", e.exception.details())


class LoadLimitTest(MockGpuCase):
    """Half of each mock GPU's memory is in use: a load on GPU 1, limited to
    40%, is refused; GPU 0, limited to 60%, loads."""
    FLAGS = ("--model-load-gpu-limit=1:0.4", "--model-load-gpu-limit=0:0.6")
    ENV = {"NEREID_MOCK_GPU_USED": "0.5"}

    def test_gpu_past_its_limit_refuses_the_load(self):
        with self.assertRaises(grpc.RpcError) as e:
            self.load("on_full_gpu", [{"kind": "KIND_GPU", "gpus": [1]}])
        self.assertIn("model 'on_full_gpu': GPU 1 has 50.0% of its memory in use, more "
                      "than its --model-load-gpu-limit of 40.0%", e.exception.details())
        self.load("on_roomy_gpu", [{"kind": "KIND_GPU", "gpus": [0]}])
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name="on_roomy_gpu")).ready)


def numa_policies_usable():
    """Whether this process may set NUMA memory policies (libnuma's probe)."""
    try:
        return ctypes.CDLL("libnuma.so.1").numa_available() >= 0
    except OSError:
        return False


@unittest.skipUnless(numa_policies_usable(), "no NUMA memory policies here")
class PinnedPoolPerNodeTest(MockGpuCase):
    """A host policy naming NUMA node 0: the pinned pool is made for that
    node, with the memory bound to it while cudaHostAlloc runs (the mock
    logs the caller's memory policy; 2 is MPOL_BIND)."""
    FLAGS = ("--host-policy=gpu_0,numa-node=0", "--pinned-memory-pool-byte-size=8192")
    ENV = {"NEREID_MOCK_CUDA_LOG": "{dir}/cuda.log"}

    def test_pool_made_on_the_named_node(self):
        self.assertTrue(self.server.wait_text("with size 8192 (NUMA node 0)"),
                        self.server.text())
        with open(os.path.join(self.dir, "cuda.log")) as f:
            allocs = [line.split()[1:4] for line in f if line.startswith("host_alloc ")]
        self.assertEqual(allocs, [["bytes=8192", "mempolicy=2", "nodes=0x1"]])


if __name__ == "__main__":
    harness.main()
