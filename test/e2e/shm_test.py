"""End to end: Triton's system shared-memory extension over gRPC.

Regions are POSIX shared-memory objects that the test makes as Triton's
clients do (multiprocessing.shared_memory, i.e. shm_open under /dev/shm),
registered with SystemSharedMemoryRegister. Inputs that name a region are
read in place; outputs that name one are written there, and the reply
carries an empty raw_output_contents entry for them. Covered: Triton's
simple_grpc_shm_client flow, BYTES (simple_string), a stream, an ensemble
(whose outputs are copied into the region), every registration and use
error with Triton's texts and codes, unregistering while requests use a
region, a client shrinking the object under the server (no SIGBUS kills
it), and --allow-client-shm=false (the default) refusing everything.
Every server stops on SIGINT with exit code 0 and no sanitizer report."""

import concurrent.futures
import os
import shutil
import struct
import tempfile
import threading
import time
import unittest
from multiprocessing import shared_memory

import grpc
import numpy as np

import harness
from harness import Server, stop_clean
import grpc_service_pb2 as pb

E = grpc.StatusCode
RPC_TIMEOUT = 60 * harness.SLOW
ALLOW = "--allow-client-shm=true"


class Region:
    """A POSIX shared-memory object of `size` bytes, unlinked on close."""

    def __init__(self, size):
        self.shm = shared_memory.SharedMemory(create=True, size=size)
        self.key = "/" + self.shm.name
        self.size = size

    def write(self, offset, data):
        self.shm.buf[offset:offset + len(data)] = data

    def read(self, offset, n):
        return bytes(self.shm.buf[offset:offset + n])

    def path(self):
        return "/dev/shm/" + self.shm.name

    def close(self):
        try:
            self.shm.close()
            self.shm.unlink()
        except (FileNotFoundError, BufferError):
            pass


def shm_param(msg, region, size, offset=None):
    msg.parameters["shared_memory_region"].string_param = region
    msg.parameters["shared_memory_byte_size"].int64_param = size
    if offset is not None:
        msg.parameters["shared_memory_offset"].int64_param = offset


def shm_request(model, inputs, outputs, raw=None):
    """inputs: (name, datatype, shape, region, size, offset); outputs:
    (name, region, size, offset) or a plain name; raw: name -> array for
    inputs sent as raw contents."""
    req = pb.ModelInferRequest(model_name=model)
    for name, dtype, shape, region, size, offset in inputs:
        t = req.inputs.add()
        t.name, t.datatype = name, dtype
        t.shape.extend(shape)
        if region is None:
            req.raw_input_contents.append(raw[name].tobytes())
        else:
            shm_param(t, region, size, offset)
    for o in outputs:
        t = req.outputs.add()
        if isinstance(o, str):
            t.name = o
        else:
            t.name = o[0]
            shm_param(t, o[1], o[2], o[3])
    return req


def bytes_tensor(values):
    """Triton's BYTES serialization: a 4-byte little-endian length, then
    the bytes, per element."""
    return b"".join(struct.pack("<I", len(v)) + v for v in values)


def bytes_elements(data, n):
    out, off = [], 0
    for _ in range(n):
        (ln,) = struct.unpack_from("<I", data, off)
        out.append(data[off + 4:off + 4 + ln])
        off += 4 + ln
    return out


class ShmTest(unittest.TestCase):
    REPO = None
    ARGS = (ALLOW,)

    @classmethod
    def setUpClass(cls):
        cls.server = Server(*cls.ARGS, repo=cls.REPO or harness.EXAMPLES)
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.server)

    def setUp(self):
        self.regions = []

    def tearDown(self):
        self.stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(),
                                               timeout=RPC_TIMEOUT)
        for r in self.regions:
            r.close()

    def region(self, size):
        r = Region(size)
        self.regions.append(r)
        return r

    def register(self, name, key, size, offset=0):
        return self.stub.SystemSharedMemoryRegister(
            pb.SystemSharedMemoryRegisterRequest(name=name, key=key, offset=offset,
                                                 byte_size=size),
            timeout=RPC_TIMEOUT)

    def unregister(self, name=""):
        return self.stub.SystemSharedMemoryUnregister(
            pb.SystemSharedMemoryUnregisterRequest(name=name), timeout=RPC_TIMEOUT)

    def status(self, name=""):
        return self.stub.SystemSharedMemoryStatus(
            pb.SystemSharedMemoryStatusRequest(name=name), timeout=RPC_TIMEOUT).regions

    def fails(self, code, needle, fn, *args):
        with self.assertRaises(grpc.RpcError) as cm:
            fn(*args)
        self.assertEqual(cm.exception.code(), code, cm.exception.details())
        self.assertIn(needle, cm.exception.details())
        return cm.exception.details()

    def infer(self, req):
        return self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)


A = np.arange(16, dtype=np.int32).reshape(1, 16)
B = np.full((1, 16), 3, dtype=np.int32)


class Registration(ShmTest):
    def test_register_status_unregister(self):
        r = self.region(256)
        self.register("in", r.key, 128)
        self.register("out", r.key, 64, offset=128)
        st = self.status()
        self.assertEqual(sorted(st), ["in", "out"])
        self.assertEqual((st["out"].name, st["out"].key, st["out"].offset,
                          st["out"].byte_size), ("out", r.key, 128, 64))
        self.assertEqual(list(self.status("in")), ["in"])
        self.unregister("in")
        self.assertEqual(list(self.status()), ["out"])
        self.unregister("never-registered")  # no error, as in Triton
        self.unregister()
        self.assertEqual(len(self.status()), 0)
        # CUDA status and unregister see no system regions.
        self.register("sys", r.key, 64)
        self.assertEqual(len(self.stub.CudaSharedMemoryStatus(
            pb.CudaSharedMemoryStatusRequest(), timeout=RPC_TIMEOUT).regions), 0)
        self.fails(E.NOT_FOUND, "The region named 'sys' is registered as system shared "
                   "memory, not CUDA shared memory", self.stub.CudaSharedMemoryStatus,
                   pb.CudaSharedMemoryStatusRequest(name="sys"))
        self.stub.CudaSharedMemoryUnregister(pb.CudaSharedMemoryUnregisterRequest(),
                                             timeout=RPC_TIMEOUT)
        self.assertEqual(list(self.status()), ["sys"])

    def test_register_errors(self):
        r = self.region(128)
        self.register("dup", r.key, 64)
        self.fails(E.ALREADY_EXISTS, "shared memory region 'dup' already in manager",
                   self.register, "dup", r.key, 64)
        self.fails(E.INTERNAL, "Unable to open shared memory region: '/nereid-no-such'",
                   self.register, "missing", "/nereid-no-such", 64)
        self.fails(E.INVALID_ARGUMENT, "failed to register shared memory region 'big': "
                   "invalid args", self.register, "big", r.key, 129)
        self.fails(E.INVALID_ARGUMENT, "invalid args", self.register, "past", r.key, 64, 65)
        self.fails(E.INVALID_ARGUMENT, "invalid args", self.register, "zero", r.key, 0)
        self.fails(E.INVALID_ARGUMENT, "overflows", self.register, "wrap", r.key, 64,
                   2**64 - 8)
        self.fails(E.INVALID_ARGUMENT, "reserved prefix 'triton_python_backend_shm_region_'",
                   self.register, "py", "/triton_python_backend_shm_region_1", 64)
        # Keys name objects under /dev/shm and nothing else.
        for key in ("/../etc/passwd", "/a/b", "/", "", "/..", "x" * 300):
            self.fails(E.INVALID_ARGUMENT, "is not the name of a POSIX shared memory object",
                       self.register, "k", key, 8)
        self.fails(E.INVALID_ARGUMENT, "'region name' is necessary", self.register, "",
                   r.key, 8)
        self.fails(E.NOT_FOUND, "Unable to find system shared memory region: 'nope'",
                   self.status, "nope")
        self.assertEqual(list(self.status()), ["dup"])

    def test_offsets_need_not_be_page_aligned(self):
        r = self.region(8192)
        r.write(4100, A.tobytes())
        r.write(4164, B.tobytes())
        self.register("odd", r.key, 128, offset=4100)
        req = shm_request("simple", [("INPUT0", "INT32", [1, 16], "odd", 64, 0),
                                     ("INPUT1", "INT32", [1, 16], "odd", 64, 64)], [])
        resp = self.infer(req)
        out = np.frombuffer(resp.raw_output_contents[0], dtype=np.int32)
        np.testing.assert_array_equal(out, (A + B).ravel())


class Inference(ShmTest):
    def simple_regions(self):
        """Triton's simple_grpc_shm_client: input_data and output_data, 128
        bytes each, two INT32 [1,16] tensors in each."""
        rin, rout = self.region(128), self.region(128)
        rin.write(0, A.tobytes())
        rin.write(64, B.tobytes())
        self.register("input_data", rin.key, 128)
        self.register("output_data", rout.key, 128)
        return rin, rout

    def test_simple_inputs_and_outputs_in_shm(self):
        _, rout = self.simple_regions()
        req = shm_request("simple",
                          [("INPUT0", "INT32", [1, 16], "input_data", 64, 0),
                           ("INPUT1", "INT32", [1, 16], "input_data", 64, 64)],
                          [("OUTPUT0", "output_data", 64, 0),
                           ("OUTPUT1", "output_data", 64, 64)])
        for _ in range(3):
            resp = self.infer(req)
            self.assertEqual([o.name for o in resp.outputs], ["OUTPUT0", "OUTPUT1"])
            self.assertEqual(list(resp.outputs[0].shape), [1, 16])
            self.assertEqual(list(resp.raw_output_contents), [b"", b""])
            np.testing.assert_array_equal(
                np.frombuffer(rout.read(0, 64), dtype=np.int32), (A + B).ravel())
            np.testing.assert_array_equal(
                np.frombuffer(rout.read(64, 64), dtype=np.int32), (A - B).ravel())

    def test_mixed_raw_and_shm(self):
        _, rout = self.simple_regions()
        # INPUT0 raw (the one raw_input_contents entry), INPUT1 from shm;
        # OUTPUT0 raw, OUTPUT1 to shm.
        req = shm_request("simple",
                          [("INPUT0", "INT32", [1, 16], None, 0, 0),
                           ("INPUT1", "INT32", [1, 16], "input_data", 64, 64)],
                          ["OUTPUT0", ("OUTPUT1", "output_data", 64, 64)],
                          raw={"INPUT0": A * 2})
        resp = self.infer(req)
        np.testing.assert_array_equal(np.frombuffer(resp.raw_output_contents[0], np.int32),
                                      (2 * A + B).ravel())
        self.assertEqual(resp.raw_output_contents[1], b"")
        np.testing.assert_array_equal(np.frombuffer(rout.read(64, 64), np.int32),
                                      (2 * A - B).ravel())

    def test_bytes_in_shm(self):
        a = [str(i).encode() for i in range(16)]
        b = [b"1"] * 16
        ia, ib = bytes_tensor(a), bytes_tensor(b)
        rin, rout = self.region(len(ia) + len(ib)), self.region(512)
        rin.write(0, ia)
        rin.write(len(ia), ib)
        self.register("sin", rin.key, len(ia) + len(ib))
        self.register("sout", rout.key, 512)
        req = shm_request("simple_string",
                          [("INPUT0", "BYTES", [1, 16], "sin", len(ia), 0),
                           ("INPUT1", "BYTES", [1, 16], "sin", len(ib), len(ia))],
                          [("OUTPUT0", "sout", 256, 0), ("OUTPUT1", "sout", 256, 256)])
        resp = self.infer(req)
        self.assertEqual(list(resp.raw_output_contents), [b"", b""])
        self.assertEqual(bytes_elements(rout.read(0, 256), 16),
                         [str(i + 1).encode() for i in range(16)])
        self.assertEqual(bytes_elements(rout.read(256, 256), 16),
                         [str(i - 1).encode() for i in range(16)])

    def test_stream(self):
        _, rout = self.simple_regions()
        req = shm_request("simple",
                          [("INPUT0", "INT32", [1, 16], "input_data", 64, 0),
                           ("INPUT1", "INT32", [1, 16], "input_data", 64, 64)],
                          [("OUTPUT0", "output_data", 64, 0)])
        replies = list(self.stub.ModelStreamInfer(iter([req]), timeout=RPC_TIMEOUT))
        self.assertEqual(len(replies), 1)
        self.assertEqual(replies[0].error_message, "")
        self.assertEqual(list(replies[0].infer_response.raw_output_contents), [b""])
        np.testing.assert_array_equal(np.frombuffer(rout.read(0, 64), np.int32),
                                      (A + B).ravel())

    def test_ensemble_outputs_copied_into_shm(self):
        _, rout = self.simple_regions()
        req = shm_request("simple_ensemble",
                          [("INPUT0", "INT32", [1, 16], "input_data", 64, 0),
                           ("INPUT1", "INT32", [1, 16], "input_data", 64, 64)],
                          [("OUTPUT0", "output_data", 64, 0),
                           ("OUTPUT1", "output_data", 64, 64)])
        resp = self.infer(req)
        self.assertEqual(list(resp.raw_output_contents), [b"", b""])
        # simple twice: (a + b) + (a - b) and (a + b) - (a - b).
        np.testing.assert_array_equal(np.frombuffer(rout.read(0, 64), np.int32),
                                      (2 * A).ravel())
        np.testing.assert_array_equal(np.frombuffer(rout.read(64, 64), np.int32),
                                      (2 * B).ravel())

    def test_use_errors(self):
        self.simple_regions()

        def run(inputs, outputs, raw=None):
            return self.infer(shm_request("simple", inputs, outputs, raw))

        in0 = ("INPUT0", "INT32", [1, 16], "input_data", 64, 0)
        in1 = ("INPUT1", "INT32", [1, 16], "input_data", 64, 64)
        self.fails(E.NOT_FOUND, "Unable to find shared memory region: 'nope'", run,
                   [in0, ("INPUT1", "INT32", [1, 16], "nope", 64, 0)], [])
        self.fails(E.INVALID_ARGUMENT,
                   "input byte size mismatch for input 'INPUT1' for model 'simple'. "
                   "Expected 64, got 32", run,
                   [in0, ("INPUT1", "INT32", [1, 16], "input_data", 32, 64)], [])
        self.fails(E.INVALID_ARGUMENT,
                   "Invalid offset for shared memory region: 'input_data'", run,
                   [in0, ("INPUT1", "INT32", [1, 16], "input_data", 64, 128)], [])
        self.fails(E.INVALID_ARGUMENT,
                   "Invalid offset + byte size for shared memory region: 'input_data'",
                   run, [in0, ("INPUT1", "INT32", [1, 16], "input_data", 64, 100)], [])
        self.fails(E.INTERNAL, "shared memory size specified with the request for output "
                   "'OUTPUT0' (32 bytes) should be at least 64 bytes to hold the results",
                   run, [in0, in1], [("OUTPUT0", "output_data", 32, 0)])
        # The parameters themselves, with Triton's texts.
        req = shm_request("simple", [in0, in1], [])
        del req.inputs[1].parameters["shared_memory_byte_size"]
        self.fails(E.INVALID_ARGUMENT, "'shared_memory_byte_size' must be specified along "
                   "with 'shared_memory_region' parameter for tensor 'INPUT1'", self.infer, req)
        req = shm_request("simple", [in0, in1], [])
        del req.inputs[1].parameters["shared_memory_region"]
        self.fails(E.INVALID_ARGUMENT, "'shared_memory_byte_size' can not be specified "
                   "without 'shared_memory_region' parameter for tensor 'INPUT1'",
                   self.infer, req)
        req = shm_request("simple", [in0, in1], [])
        req.inputs[1].parameters["shared_memory_region"].int64_param = 3
        self.fails(E.INVALID_ARGUMENT, "invalid value type for 'shared_memory_region' "
                   "parameter for tensor 'INPUT1', expected string_param.", self.infer, req)
        req = shm_request("simple", [in0, in1], [])
        req.inputs[1].parameters["shared_memory_offset"].string_param = "0"
        self.fails(E.INVALID_ARGUMENT, "invalid value type for 'shared_memory_offset' "
                   "parameter for tensor 'INPUT1', expected int64_param.", self.infer, req)
        req = shm_request("simple", [in0, in1], [])
        req.inputs[1].contents.int_contents.extend([1] * 16)
        self.fails(E.INVALID_ARGUMENT, "unexpected 'content' provided when using shared "
                   "memory for input tensor 'INPUT1' for model 'simple'", self.infer, req)
        req = shm_request("simple", [in0, in1], [("OUTPUT0", "output_data", 64, 0)])
        req.outputs[0].parameters["classification"].int64_param = 2
        self.fails(E.INVALID_ARGUMENT, "output can't set both 'shared_memory_region' and "
                   "'classification'", self.infer, req)
        # The server still answers.
        resp = run([in0, in1], [])
        np.testing.assert_array_equal(np.frombuffer(resp.raw_output_contents[0], np.int32),
                                      (A + B).ravel())

    def test_unregister_under_load(self):
        """Clients infer from a region while another client unregisters and
        registers it again: each request succeeds with the right answer or
        fails NOT_FOUND; nothing else, and the server stays up."""
        rin, _ = self.simple_regions()
        stop = threading.Event()
        req = shm_request("simple", [("INPUT0", "INT32", [1, 16], "input_data", 64, 0),
                                     ("INPUT1", "INT32", [1, 16], "input_data", 64, 64)], [])

        def client():
            ok = missing = 0
            while not stop.is_set():
                try:
                    resp = self.infer(req)
                    np.testing.assert_array_equal(
                        np.frombuffer(resp.raw_output_contents[0], np.int32), (A + B).ravel())
                    ok += 1
                except grpc.RpcError as e:
                    self.assertEqual(e.code(), E.NOT_FOUND, e.details())
                    missing += 1
            return ok, missing

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(client) for _ in range(3)]
            deadline = time.monotonic() + 3
            flips = 0
            while time.monotonic() < deadline:
                self.unregister("input_data")
                self.register("input_data", rin.key, 128)
                flips += 1
            stop.set()
            results = [f.result() for f in futures]
        self.assertGreater(flips, 10)
        self.assertGreater(sum(ok for ok, _ in results), 0)


SLOW_IDENTITY = """name: "slow_identity"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "1000" } } ]
"""


def slow_repo():
    root = tempfile.mkdtemp(prefix="shmrepo", dir=os.environ.get("TEST_TMPDIR"))
    os.makedirs(os.path.join(root, "slow_identity", "1"))
    with open(os.path.join(root, "slow_identity", "config.pbtxt"), "w") as f:
        f.write(SLOW_IDENTITY)
    return root


class InFlight(ShmTest):
    """A model that waits a second before it reads its input."""

    @classmethod
    def setUpClass(cls):
        cls.REPO = slow_repo()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.REPO, ignore_errors=True)

    N = 1 << 16  # elements: 256 KiB, many pages

    def slow_request(self, region):
        return shm_request("slow_identity",
                           [("INPUT0", "INT32", [self.N], region, 4 * self.N, 0)],
                           [("OUTPUT0", region, 4 * self.N, 4 * self.N)])

    def test_unregister_waits_for_requests_in_flight(self):
        r = self.region(8 * self.N)
        data = np.arange(self.N, dtype=np.int32)
        r.write(0, data.tobytes())
        self.register("busy", r.key, 8 * self.N)
        fut = self.stub.ModelInfer.future(self.slow_request("busy"), timeout=RPC_TIMEOUT)
        time.sleep(0.3)
        self.unregister("busy")  # succeeds at once, as in Triton
        self.assertEqual(len(self.status()), 0)
        resp = fut.result()
        self.assertEqual(list(resp.raw_output_contents), [b""])
        np.testing.assert_array_equal(np.frombuffer(r.read(4 * self.N, 4 * self.N), np.int32),
                                      data)

    def test_object_shrunk_under_the_server(self):
        r = self.region(8 * self.N)
        self.register("shrinking", r.key, 8 * self.N)
        fut = self.stub.ModelInfer.future(self.slow_request("shrinking"), timeout=RPC_TIMEOUT)
        time.sleep(0.3)
        # The client cuts its object while the backend waits: its read and
        # write then touch pages that no longer exist.
        os.truncate(r.path(), 0)
        with self.assertRaises(grpc.RpcError) as cm:
            fut.result()
        self.assertEqual(cm.exception.code(), E.INVALID_ARGUMENT, cm.exception.details())
        self.assertIn("shared memory region 'shrinking' shrank or was removed while the "
                      "request used it", cm.exception.details())
        # Later uses are refused, the server lives on.
        self.fails(E.INVALID_ARGUMENT, "shared memory region 'shrinking' is no longer usable",
                   self.infer, self.slow_request("shrinking"))
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest(),
                                             timeout=RPC_TIMEOUT).live)
        # Shrunk before a request: refused at once with the sizes.
        r2 = self.region(8 * self.N)
        self.register("small", r2.key, 8 * self.N)
        os.truncate(r2.path(), 4096)
        self.fails(E.INVALID_ARGUMENT, "is 4096 bytes now", self.infer,
                   self.slow_request("small"))
        self.unregister()


class Disabled(ShmTest):
    ARGS = ()

    def tearDown(self):
        for r in self.regions:
            r.close()

    def test_refused_without_allow_client_shm(self):
        r = self.region(128)
        text = "Client shared memory is disabled"
        self.fails(E.UNAVAILABLE, text, self.register, "x", r.key, 64)
        self.fails(E.UNAVAILABLE, text, self.status)
        self.fails(E.UNAVAILABLE, text, self.unregister)
        req = shm_request("simple", [("INPUT0", "INT32", [1, 16], "x", 64, 0),
                                     ("INPUT1", "INT32", [1, 16], "x", 64, 64)], [])
        self.fails(E.UNAVAILABLE, text, self.infer, req)
        self.fails(E.UNAVAILABLE, text, self.stub.CudaSharedMemoryRegister,
                   pb.CudaSharedMemoryRegisterRequest(name="c", raw_handle=b"\0" * 64,
                                                      device_id=0, byte_size=64))


@unittest.skipIf(os.path.exists("/dev/nvidia0"), "a GPU is present (see cuda_shm tests)")
class Cuda(ShmTest):
    def test_cuda_register_without_gpu(self):
        # This machine has no GPU: Triton's text for a build without GPUs.
        self.fails(E.INVALID_ARGUMENT, "failed to register CUDA shared memory region: 'c', "
                   "GPUs not supported", self.stub.CudaSharedMemoryRegister,
                   pb.CudaSharedMemoryRegisterRequest(name="c", raw_handle=b"\0" * 64,
                                                      device_id=0, byte_size=64))
        self.fails(E.INVALID_ARGUMENT, "'raw_handle' must be a valid base64 encoded "
                   "cudaIpcMemHandle_t", self.stub.CudaSharedMemoryRegister,
                   pb.CudaSharedMemoryRegisterRequest(name="c", raw_handle=b"\0" * 8,
                                                      device_id=0, byte_size=64))
        self.fails(E.NOT_FOUND, "Unable to find cuda shared memory region: 'c'",
                   self.stub.CudaSharedMemoryStatus, pb.CudaSharedMemoryStatusRequest(name="c"))


if __name__ == "__main__":
    unittest.main()
