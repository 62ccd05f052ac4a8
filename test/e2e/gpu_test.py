"""The GPU path end to end. Without a GPU (the CI machines): GPU models fail
to load with the reason and the server goes on. With one: the addsub_cuda
backend computes add and sub on the GPU, KIND_GPU instances sit on their
devices, and the memory pools exist. The GPU cases skip, printing why, when
the server finds no GPU (its own srv_cuda_device_count, read from its log)."""

import json
import os
import re
import unittest

import numpy as np

import harness
import grpc_service_pb2

GPU_EXAMPLES = os.path.abspath("examples/gpu_models")
POOLS_DISABLED = re.compile(r"CUDA memory pools disabled: (.*)")


def gpu_config(name, dtype="TYPE_INT32", groups=None):
    """A config override for an addsub_cuda model of [16] tensors."""
    tensor = lambda n: {"name": n, "dataType": dtype, "dims": [16]}  # noqa: E731
    cfg = {"name": name, "backend": "addsub_cuda", "maxBatchSize": 8,
           "input": [tensor("INPUT0"), tensor("INPUT1")],
           "output": [tensor("OUTPUT0"), tensor("OUTPUT1")]}
    if groups is not None:
        cfg["instanceGroup"] = groups
    return json.dumps(cfg)


class GpuTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Explicit mode: the GPU example is loaded by the tests, so the
        # server starts on every machine.
        cls.server = harness.Server("--model-control-mode=explicit",
                                    repo=GPU_EXAMPLES)
        cls.stub = cls.server.inference()
        m = POOLS_DISABLED.search(cls.server.text())
        cls.no_gpu = m.group(1) if m else None

    @classmethod
    def tearDownClass(cls):
        harness.stop_clean(cls.server)

    def need_gpu(self):
        if self.no_gpu is not None:
            print("  skipped: no GPU: %s" % self.no_gpu)
            self.skipTest("no GPU: " + self.no_gpu)

    def need_no_gpu(self):
        if self.no_gpu is None:
            print("  skipped: this machine has a GPU")
            self.skipTest("this machine has a GPU")

    def load(self, name, config=None):
        req = grpc_service_pb2.RepositoryModelLoadRequest(model_name=name)
        if config is not None:
            # A model made by the request alone: its config and a version
            # folder (a file in it).
            req.parameters["config"].string_param = config
            req.parameters["file:1/README.md"].bytes_param = b"made by gpu_test"
        return self.stub.RepositoryModelLoad(req)

    def index_reason(self, name):
        index = self.stub.RepositoryIndex(grpc_service_pb2.RepositoryIndexRequest())
        for m in index.models:
            if m.name == name:
                return m.state, m.reason
        raise AssertionError("%s not in the index" % name)

    def infer(self, model, dtype, a, b):
        req = harness.infer_request(model, [("INPUT0", dtype, a), ("INPUT1", dtype, b)])
        resp = self.stub.ModelInfer(req)
        np_type = np.int32 if dtype == "INT32" else np.float32
        outs = {o.name: np.frombuffer(raw, dtype=np_type).reshape(tuple(o.shape))
                for o, raw in zip(resp.outputs, resp.raw_output_contents)}
        return outs["OUTPUT0"], outs["OUTPUT1"]

    # ---- without a GPU ----------------------------------------------------

    def test_kind_gpu_without_gpu_is_refused_with_the_reason(self):
        self.need_no_gpu()
        with self.assertRaises(harness.grpc.RpcError) as ctx:
            self.load("simple_cuda")
        message = ctx.exception.details()
        self.assertIn("instance group 'simple_cuda' asks for KIND_GPU, but no GPU is "
                      "available to this server: " + self.no_gpu, message)
        state, reason = self.index_reason("simple_cuda")
        self.assertEqual(state, "UNAVAILABLE")
        self.assertIn("asks for KIND_GPU", reason)
        # The server goes on serving.
        self.stub.ServerLive(grpc_service_pb2.ServerLiveRequest())

    def test_cuda_backend_without_gpu_is_unavailable(self):
        self.need_no_gpu()
        # No instance_group: KIND_AUTO is KIND_CPU without GPUs, so the
        # backend itself refuses, naming CUDA's reason.
        with self.assertRaises(harness.grpc.RpcError) as ctx:
            self.load("auto_cuda", gpu_config("auto_cuda"))
        message = ctx.exception.details()
        self.assertIn("model 'auto_cuda' (backend 'addsub_cuda') needs a GPU: ", message)

    # ---- with a GPU -------------------------------------------------------

    def test_simple_cuda_adds_and_subtracts_on_the_gpu(self):
        self.need_gpu()
        self.load("simple_cuda")
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        b = np.full((1, 16), 3, dtype=np.int32)
        s, d = self.infer("simple_cuda", "INT32", a, b)
        np.testing.assert_array_equal(s, a + b)
        np.testing.assert_array_equal(d, a - b)
        # INT32 wraps, as the CPU backend.
        big = np.full((2, 16), 2**31 - 1, dtype=np.int32)
        one = np.ones((2, 16), dtype=np.int32)
        s, d = self.infer("simple_cuda", "INT32", big, one)
        np.testing.assert_array_equal(s, np.full((2, 16), -2**31, dtype=np.int32))
        np.testing.assert_array_equal(d, big - one)

    def test_fp32_model_and_instance_devices(self):
        self.need_gpu()
        groups = [{"kind": "KIND_GPU", "count": 2}]
        self.load("fp32_cuda", gpu_config("fp32_cuda", "TYPE_FP32", groups))
        a = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)
        b = np.full((1, 16), 0.5, dtype=np.float32)
        s, d = self.infer("fp32_cuda", "FP32", a, b)
        np.testing.assert_allclose(s, a + b, rtol=1e-6)
        np.testing.assert_allclose(d, a - b, rtol=1e-6)
        cfg = self.stub.ModelConfig(
            grpc_service_pb2.ModelConfigRequest(name="fp32_cuda")).config
        group = cfg.instance_group[0]
        self.assertEqual(group.kind, 1)  # KIND_GPU
        self.assertGreaterEqual(len(group.gpus), 1)  # every GPU when none listed
        text = self.server.text()
        for gpu in group.gpus:
            for k in range(2):
                self.assertIn("addsub_cuda instance '%s_%d' on GPU %d"
                              % (group.name, k, gpu), text)

    def test_bad_gpu_id_is_refused_with_tritons_text(self):
        self.need_gpu()
        groups = [{"kind": "KIND_GPU", "gpus": [999]}]
        with self.assertRaises(harness.grpc.RpcError) as ctx:
            self.load("bad_gpu", gpu_config("bad_gpu", groups=groups))
        self.assertIn("specifies invalid or unsupported gpu id 999. GPUs with at least "
                      "the minimum required CUDA compute compatibility of 6.000000 are: 0",
                      ctx.exception.details())

    def test_pools_are_created(self):
        self.need_gpu()
        self.assertIn("CUDA memory pool is created on device 0 with size 67108864",
                      self.server.text())
        self.assertTrue(self.server.wait_text("Pinned memory pool is created at"),
                        self.server.text())


if __name__ == "__main__":
    harness.main()
