"""End to end: ModelInfer on the example models, every request error the
server must catch, model metadata/config/readiness, and statistics that add
up exactly under concurrent clients."""

import concurrent.futures
import os
import shutil
import tempfile
import threading
import unittest

import grpc
import numpy as np

import harness
from harness import Server, infer_request, stop_clean
import grpc_service_pb2 as pb


def bytes_tensor(values):
    """BYTES wire format: 4-byte little-endian length + bytes, per element."""
    out = b""
    for v in values:
        v = v if isinstance(v, bytes) else str(v).encode()
        out += len(v).to_bytes(4, "little") + v
    return out


def bytes_elements(raw):
    out, i = [], 0
    while i < len(raw):
        n = int.from_bytes(raw[i:i + 4], "little")
        out.append(raw[i + 4:i + 4 + n])
        i += 4 + n
    return out


def output(resp, name, dtype):
    for i, o in enumerate(resp.outputs):
        if o.name == name:
            return np.frombuffer(resp.raw_output_contents[i], dtype=dtype).reshape(o.shape)
    raise AssertionError("no output %s in %s" % (name, [o.name for o in resp.outputs]))


class Infer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(repo=harness.EXAMPLES)
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, "exit code %d\n%s" % (code, cls.server.text())

    def simple_inputs(self, batch=1, dtype=np.int32, name="INT32"):
        a = np.arange(16 * batch, dtype=dtype).reshape(batch, 16)
        b = np.full((batch, 16), 3, dtype=dtype)
        return a, b, [("INPUT0", name, a), ("INPUT1", name, b)]

    def expect_error(self, req, code, *needles):
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.ModelInfer(req, timeout=30)
        self.assertEqual(cm.exception.code(), code, cm.exception.details())
        for n in needles:
            self.assertIn(n, cm.exception.details())

    def test_simple_add_sub(self):
        a, b, inputs = self.simple_inputs()
        r = self.stub.ModelInfer(infer_request("simple", inputs, rid="my-id"))
        self.assertEqual(r.model_name, "simple")
        self.assertEqual(r.model_version, "1")
        self.assertEqual(r.id, "my-id")
        self.assertEqual([o.name for o in r.outputs], ["OUTPUT0", "OUTPUT1"])
        self.assertEqual(list(r.outputs[0].shape), [1, 16])
        self.assertEqual(r.outputs[0].datatype, "INT32")
        np.testing.assert_array_equal(output(r, "OUTPUT0", np.int32), a + b)
        np.testing.assert_array_equal(output(r, "OUTPUT1", np.int32), a - b)

    def test_simple_full_batch_and_version(self):
        a, b, inputs = self.simple_inputs(batch=8)
        r = self.stub.ModelInfer(infer_request("simple", inputs, version="1"))
        np.testing.assert_array_equal(output(r, "OUTPUT0", np.int32), a + b)

    def test_typed_contents(self):
        req = pb.ModelInferRequest(model_name="simple")
        for name, vals in (("INPUT0", range(16)), ("INPUT1", [2] * 16)):
            t = req.inputs.add()
            t.name, t.datatype = name, "INT32"
            t.shape.extend([1, 16])
            t.contents.int_contents.extend(vals)
        r = self.stub.ModelInfer(req)
        np.testing.assert_array_equal(output(r, "OUTPUT1", np.int32)[0],
                                      np.arange(16) - 2)

    def test_requested_output_subset(self):
        a, b, inputs = self.simple_inputs()
        r = self.stub.ModelInfer(infer_request("simple", inputs, outputs=["OUTPUT1"]))
        self.assertEqual([o.name for o in r.outputs], ["OUTPUT1"])
        np.testing.assert_array_equal(output(r, "OUTPUT1", np.int32), a - b)

    def test_int8_wraps(self):
        a = np.full((1, 16), 127, dtype=np.int8)
        b = np.full((1, 16), 1, dtype=np.int8)
        r = self.stub.ModelInfer(infer_request(
            "simple_int8", [("INPUT0", "INT8", a), ("INPUT1", "INT8", b)]))
        np.testing.assert_array_equal(output(r, "OUTPUT0", np.int8), np.full((1, 16), -128))
        np.testing.assert_array_equal(output(r, "OUTPUT1", np.int8), np.full((1, 16), 126))

    def test_string_add_sub(self):
        req = pb.ModelInferRequest(model_name="simple_string")
        for name, vals in (("INPUT0", range(16)), ("INPUT1", [5] * 16)):
            t = req.inputs.add()
            t.name, t.datatype = name, "BYTES"
            t.shape.extend([1, 16])
            req.raw_input_contents.append(bytes_tensor(vals))
        r = self.stub.ModelInfer(req)
        sums = [int(x) for x in bytes_elements(r.raw_output_contents[0])]
        diffs = [int(x) for x in bytes_elements(r.raw_output_contents[1])]
        self.assertEqual(sums, [i + 5 for i in range(16)])
        self.assertEqual(diffs, [i - 5 for i in range(16)])

    def test_string_bad_element(self):
        req = pb.ModelInferRequest(model_name="simple_string")
        for name in ("INPUT0", "INPUT1"):
            t = req.inputs.add()
            t.name, t.datatype = name, "BYTES"
            t.shape.extend([1, 16])
            req.raw_input_contents.append(bytes_tensor(["x"] * 16))
        self.expect_error(req, grpc.StatusCode.INVALID_ARGUMENT, "INPUT0")

    def test_identity_bytes(self):
        vals = [b"", b"a", b"\x00\xff binary", "ünïcode".encode()]
        req = pb.ModelInferRequest(model_name="simple_identity")
        t = req.inputs.add()
        t.name, t.datatype = "INPUT0", "BYTES"
        t.shape.extend([1, len(vals)])
        req.raw_input_contents.append(bytes_tensor(vals))
        r = self.stub.ModelInfer(req)
        self.assertEqual(bytes_elements(r.raw_output_contents[0]), vals)
        self.assertEqual(list(r.outputs[0].shape), [1, len(vals)])

    def test_decoupled_model_refused_on_unary(self):
        req = infer_request("repeat_int32", [
            ("IN", "INT32", np.arange(3, dtype=np.int32)),
            ("DELAY", "UINT32", np.zeros(3, dtype=np.uint32)),
            ("WAIT", "UINT32", np.zeros(1, dtype=np.uint32))])
        self.expect_error(req, grpc.StatusCode.UNIMPLEMENTED, "decoupled", "repeat_int32")

    def repeat_request(self, values, delays=None):
        n = len(values)
        req = infer_request("repeat_int32", [
            ("IN", "INT32", np.asarray(values, dtype=np.int32)),
            ("DELAY", "UINT32", np.asarray(delays or [0] * n, dtype=np.uint32)),
            ("WAIT", "UINT32", np.zeros(1, dtype=np.uint32))])
        req.parameters["nereid_aggregate_responses"].bool_param = True
        return req

    def test_decoupled_responses_aggregated_on_request(self):
        values = list(range(100, 400, 3))
        r = self.stub.ModelInfer(self.repeat_request(values, [0] * 99 + [20]))
        self.assertEqual(output(r, "OUT", np.int32).tolist(), values)
        self.assertEqual(output(r, "IDX", np.uint32).tolist(), list(range(len(values))))
        # No element: no response, only the final flag; the reply is empty.
        r = self.stub.ModelInfer(self.repeat_request([]))
        self.assertEqual(len(r.outputs), 0)
        # Setting it to false is the same as not setting it.
        req = self.repeat_request([1])
        req.parameters["nereid_aggregate_responses"].bool_param = False
        self.expect_error(req, grpc.StatusCode.UNIMPLEMENTED, "decoupled")

    def test_request_errors(self):
        a, b, inputs = self.simple_inputs()
        E = grpc.StatusCode
        self.expect_error(infer_request("nosuch", inputs), E.UNAVAILABLE, "nosuch")
        self.expect_error(infer_request("simple", inputs, version="7"), E.UNAVAILABLE,
                          "simple", "7")
        self.expect_error(infer_request("simple", inputs, version="x1"),
                          E.INVALID_ARGUMENT, "x1")
        self.expect_error(infer_request("simple", inputs[:1]), E.INVALID_ARGUMENT,
                          "INPUT1", "simple")
        self.expect_error(infer_request("simple", inputs + [("INPUT9", "INT32", a)]),
                          E.INVALID_ARGUMENT, "INPUT9")
        self.expect_error(infer_request("simple", [("INPUT0", "FP32", a.astype(np.float32)),
                                                   inputs[1]]),
                          E.INVALID_ARGUMENT, "INPUT0", "FP32", "INT32")
        self.expect_error(infer_request("simple", [("INPUT0", "INT32", a[:, :15]),
                                                   inputs[1]]),
                          E.INVALID_ARGUMENT, "INPUT0", "[-1,16]", "[1,15]")
        big = np.zeros((9, 16), dtype=np.int32)
        self.expect_error(infer_request("simple", [("INPUT0", "INT32", big),
                                                   ("INPUT1", "INT32", big)]),
                          E.INVALID_ARGUMENT, "batch-size must be <= 8")
        self.expect_error(infer_request("simple", inputs, outputs=["OUTPUT7"]),
                          E.INVALID_ARGUMENT, "OUTPUT7")
        req = infer_request("simple", inputs)
        req.raw_input_contents[0] = req.raw_input_contents[0][:-4]
        self.expect_error(req, E.INVALID_ARGUMENT, "byte size", "INPUT0")
        req = infer_request("simple", inputs)
        del req.raw_input_contents[1]
        self.expect_error(req, E.INVALID_ARGUMENT,
                          "unable to find data for input tensor 'INPUT1' for model "
                          "'simple' in request.")
        req = infer_request("simple", inputs)
        req.inputs[0].contents.int_contents.extend(range(16))
        self.expect_error(req, E.INVALID_ARGUMENT, "contents", "INPUT0")
        call = self.server.connect().unary_unary(
            "/inference.GRPCInferenceService/ModelInfer")
        with self.assertRaises(grpc.RpcError) as cm:
            call(b"\x0a\xff\xff", timeout=10)
        self.assertEqual(cm.exception.code(), E.INVALID_ARGUMENT)
        # Still serving.
        self.stub.ModelInfer(infer_request("simple", inputs))

    def test_sequence_parameters(self):
        """Triton's sequence extension parameters are read (and, for a model
        without sequence batching, have no effect); the wrong types get
        Triton's texts."""
        a, b, inputs = self.simple_inputs()
        E = grpc.StatusCode
        for kind, value in (("int64_param", 7), ("uint64_param", 2**64 - 1),
                            ("string_param", "conversation-1")):
            req = infer_request("simple", inputs)
            setattr(req.parameters["sequence_id"], kind, value)
            req.parameters["sequence_start"].bool_param = True
            req.parameters["sequence_end"].bool_param = True
            r = self.stub.ModelInfer(req, timeout=30)
            np.testing.assert_array_equal(output(r, "OUTPUT0", np.int32), a + b)
        for key, kind, value, text in (
                ("sequence_id", "bool_param", True,
                 "invalid value type for 'sequence_id' parameter, expected "
                 "int64_param or string_param."),
                ("sequence_start", "int64_param", 1,
                 "invalid value type for 'sequence_start' parameter, expected "
                 "bool_param."),
                ("sequence_end", "string_param", "true",
                 "invalid value type for 'sequence_end' parameter, expected "
                 "bool_param."),
                ("sequence_id", "string_param", "x" * 257,
                 "parameter 'sequence_id' is a string of 257 bytes, above the limit "
                 "of 256")):
            req = infer_request("simple", inputs)
            setattr(req.parameters[key], kind, value)
            self.expect_error(req, E.INVALID_ARGUMENT, "model 'simple': " + text)

    def test_metadata_config_ready(self):
        md = self.stub.ModelMetadata(pb.ModelMetadataRequest(name="simple"))
        self.assertEqual(md.name, "simple")
        self.assertEqual(list(md.versions), ["1"])
        self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in md.inputs],
                         [("INPUT0", "INT32", [-1, 16]), ("INPUT1", "INT32", [-1, 16])])
        cfg = self.stub.ModelConfig(pb.ModelConfigRequest(name="simple")).config
        self.assertEqual(cfg.name, "simple")
        self.assertEqual(cfg.max_batch_size, 8)
        self.assertEqual(len(cfg.instance_group), 1)
        self.assertEqual(cfg.instance_group[0].count, 1)
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name="simple")).ready)
        self.assertTrue(self.stub.ModelReady(
            pb.ModelReadyRequest(name="simple", version="1")).ready)
        self.assertFalse(self.stub.ModelReady(
            pb.ModelReadyRequest(name="simple", version="2")).ready)
        self.assertFalse(self.stub.ModelReady(pb.ModelReadyRequest(name="nosuch")).ready)
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.ModelMetadata(pb.ModelMetadataRequest(name="nosuch"))
        self.assertIn("nosuch", cm.exception.details())


class Statistics(unittest.TestCase):
    """Each case starts its own server, so counts start at zero."""
    def test_counts_add_up_under_concurrency(self):
        """16 clients x 50 requests of batch 2 on one model: every result is
        right and the statistics count exactly what was sent."""
        server = Server(repo=harness.EXAMPLES)
        try:
            errors = []

            def client(seed):
                try:
                    with grpc.insecure_channel(server.address) as ch:
                        stub = __import__("grpc_service_pb2_grpc").GRPCInferenceServiceStub(ch)
                        for i in range(50):
                            a = np.full((2, 16), seed * 1000 + i, dtype=np.int32)
                            b = np.arange(32, dtype=np.int32).reshape(2, 16)
                            r = stub.ModelInfer(infer_request(
                                "simple", [("INPUT0", "INT32", a), ("INPUT1", "INT32", b)]),
                                timeout=60)
                            np.testing.assert_array_equal(output(r, "OUTPUT0", np.int32), a + b)
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(repr(e))

            threads = [threading.Thread(target=client, args=(s,)) for s in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(300)
            self.assertEqual(errors, [])
            stub = server.inference()
            stats = stub.ModelStatistics(pb.ModelStatisticsRequest(name="simple"))
            self.assertEqual(len(stats.model_stats), 1)
            s = stats.model_stats[0]
            self.assertEqual(s.inference_stats.success.count, 800)
            self.assertEqual(s.inference_stats.fail.count, 0)
            self.assertEqual(s.inference_count, 1600)
            self.assertEqual(s.execution_count, 800)
            self.assertEqual([(b.batch_size, b.compute_infer.count) for b in s.batch_stats],
                             [(2, 800)])
            self.assertGreater(s.last_inference, 0)
            self.assertGreater(s.inference_stats.compute_infer.ns, 0)
            every = stub.ModelStatistics(pb.ModelStatisticsRequest())
            self.assertIn("simple", [m.name for m in every.model_stats])
        finally:
            self.assertEqual(server.stop(), 0)

    def test_several_models_and_instances(self):
        """Two repository roots; 12 clients on four models at once (recorder
        has two instances): every result right, every model's statistics
        exact, and both recorder instances executed."""
        server = Server("--model-repository=" + harness.TEST_MODELS, "--exit-on-error=false",
                        repo=harness.EXAMPLES,
                        backends=harness.combined_backends())
        try:
            errors = []
            plan = {"simple": 40, "simple_int8": 40, "simple_string": 20, "recorder": 60}

            def request_for(model, i):
                if model == "simple_string":
                    req = pb.ModelInferRequest(model_name=model)
                    for name, vals in (("INPUT0", [i] * 16), ("INPUT1", [1] * 16)):
                        t = req.inputs.add()
                        t.name, t.datatype = name, "BYTES"
                        t.shape.extend([1, 16])
                        req.raw_input_contents.append(bytes_tensor(vals))
                    return req, lambda r: [int(x) for x in bytes_elements(
                        r.raw_output_contents[0])] == [i + 1] * 16
                if model == "recorder":
                    a = np.full((1, 5), i, dtype=np.int32)
                    return (infer_request(model, [("INPUT0", "INT32", a)]),
                            lambda r: (output(r, "OUTPUT0", np.int32) == a).all())
                dt, name = (np.int32, "INT32") if model == "simple" else (np.int8, "INT8")
                a = np.full((1, 16), i % 100, dtype=dt)
                b = np.ones((1, 16), dtype=dt)
                return (infer_request(model, [("INPUT0", name, a), ("INPUT1", name, b)]),
                        lambda r: (output(r, "OUTPUT0", dt) == a + b).all())

            def client(model, count):
                try:
                    with grpc.insecure_channel(server.address) as ch:
                        stub = __import__("grpc_service_pb2_grpc").GRPCInferenceServiceStub(ch)
                        for i in range(count):
                            req, ok = request_for(model, i)
                            if not ok(stub.ModelInfer(req, timeout=60)):
                                errors.append("%s: wrong result for %d" % (model, i))
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(repr(e))

            threads = [threading.Thread(target=client, args=(m, n // 3))
                       for m, n in plan.items() for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(300)
            self.assertEqual(errors, [])
            stats = {m.name: m for m in server.inference().ModelStatistics(
                pb.ModelStatisticsRequest()).model_stats}
            for model, n in plan.items():
                sent = (n // 3) * 3
                self.assertEqual(stats[model].inference_stats.success.count, sent, model)
                self.assertEqual(stats[model].inference_count, sent, model)
                self.assertEqual(stats[model].execution_count, sent, model)
                self.assertEqual(stats[model].inference_stats.fail.count, 0, model)
        finally:
            self.assertEqual(server.stop(), 0)


BIG_IDENTITY = """name: "big_identity"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ -1 ] },
        { name: "INPUT2" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ -1 ] },
         { name: "OUTPUT2" data_type: TYPE_STRING dims: [ -1 ] } ]
"""


class LargeOutputs(unittest.TestCase):
    """Outputs of 64 KiB and more go out in slices that reference the
    backend's buffers (server/grpc/infer_slices.h), small ones inline: the
    reply must read back the same, in the order asked for, under load."""

    @classmethod
    def setUpClass(cls):
        cls.repo = tempfile.mkdtemp(prefix="bigrepo", dir=os.environ.get("TEST_TMPDIR"))
        os.makedirs(os.path.join(cls.repo, "big_identity", "1"))
        with open(os.path.join(cls.repo, "big_identity", "config.pbtxt"), "w") as f:
            f.write(BIG_IDENTITY)
        cls.server = Server(repo=cls.repo)
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.server)
        shutil.rmtree(cls.repo, ignore_errors=True)

    def request(self, n_big, outputs=()):
        big = np.arange(n_big, dtype=np.int32)
        small = np.array([7, -7, 70, -70], dtype=np.int32)
        strings = [b"x" * 70000, b"", b"tail"]
        req = pb.ModelInferRequest(model_name="big_identity", id="big")
        for name, dt, shape, data in (("INPUT0", "INT32", big.shape, big.tobytes()),
                                      ("INPUT1", "INT32", small.shape, small.tobytes()),
                                      ("INPUT2", "BYTES", [len(strings)],
                                       bytes_tensor(strings))):
            t = req.inputs.add()
            t.name, t.datatype = name, dt
            t.shape.extend(shape)
            req.raw_input_contents.append(data)
        for o in outputs:
            req.outputs.add().name = o
        return req, big, small, strings

    def check(self, resp, big, small, strings, names):
        self.assertEqual([o.name for o in resp.outputs], names)
        self.assertEqual(resp.id, "big")
        self.assertEqual(len(resp.raw_output_contents), len(names))
        for i, name in enumerate(names):
            raw = resp.raw_output_contents[i]
            if name == "OUTPUT0":
                np.testing.assert_array_equal(np.frombuffer(raw, np.int32), big)
            elif name == "OUTPUT1":
                np.testing.assert_array_equal(np.frombuffer(raw, np.int32), small)
            else:
                self.assertEqual(bytes_elements(raw), strings)

    def test_large_and_small_outputs(self):
        for n_big in (16383, 16384, 200000):  # just under, at, and over 64 KiB
            req, big, small, strings = self.request(n_big)
            self.check(self.stub.ModelInfer(req, timeout=60), big, small, strings,
                       ["OUTPUT0", "OUTPUT1", "OUTPUT2"])
        order = ["OUTPUT2", "OUTPUT1", "OUTPUT0"]
        req, big, small, strings = self.request(300000, order)
        self.check(self.stub.ModelInfer(req, timeout=60), big, small, strings, order)

    def test_large_outputs_on_a_stream(self):
        req, big, small, strings = self.request(150000)
        replies = list(self.stub.ModelStreamInfer(iter([req, req]), timeout=60))
        self.assertEqual(len(replies), 2)
        for reply in replies:
            self.assertEqual(reply.error_message, "")
            self.check(reply.infer_response, big, small, strings,
                       ["OUTPUT0", "OUTPUT1", "OUTPUT2"])
            self.assertTrue(
                reply.infer_response.parameters["triton_final_response"].bool_param)

    def test_concurrent_large_replies(self):
        req, big, small, strings = self.request(100000)
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(self.stub.ModelInfer, req, timeout=60) for _ in range(64)]
            for f in futures:
                self.check(f.result(), big, small, strings, ["OUTPUT0", "OUTPUT1", "OUTPUT2"])


if __name__ == "__main__":
    harness.main()
