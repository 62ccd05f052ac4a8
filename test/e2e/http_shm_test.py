"""End to end: Triton's system and CUDA shared-memory extensions over
HTTP/REST.

Regions are POSIX shared-memory objects made as Triton's clients make
them (shm_test.Region), registered with POST
/v2/systemsharedmemory/region/<name>/register. Covered: register, status
and unregister with Triton's bodies; every refusal with its HTTP code and
text (routes, methods, bodies, fields, the table's own checks); inference
of `simple` (INT32) and `simple_string` (BYTES) with inputs read from and
outputs written to regions, mixed with JSON and binary inputs; the output
object of a placed output (name, datatype, shape alone, no binary part);
one table for both protocols (registered over HTTP, used over gRPC and the
other way); the CUDA endpoints on a machine without a GPU; and
--allow-client-shm off. Every server stops on SIGINT with exit code 0 and
no sanitizer report (LeakSanitizer would see a region reference left)."""

import base64
import json
import os
import unittest

import numpy as np
import requests

import harness
import grpc_service_pb2 as pb
import shm_test
from shm_test import A, ALLOW, B, ShmTest, bytes_elements, bytes_tensor, shm_request

TIMEOUT = 60 * harness.SLOW
SYS = "/v2/systemsharedmemory"
CUDA = "/v2/cudasharedmemory"
ONE_OF = ("Input must set only one of the following fields: 'data', 'binary_data_size' in "
          "'parameters', 'shared_memory_region' in 'parameters'. But")


def shm_params(region, size, offset=None):
    p = {"shared_memory_region": region, "shared_memory_byte_size": size}
    if offset is not None:
        p["shared_memory_offset"] = offset
    return p


def shm_input(name, datatype, region, size, offset=0, shape=(1, 16)):
    return {"name": name, "datatype": datatype, "shape": list(shape),
            "parameters": shm_params(region, size, offset)}


def shm_output(name, region, size, offset=0, **more):
    return {"name": name, "parameters": dict(shm_params(region, size, offset), **more)}


class HttpShmTest(ShmTest):
    """shm_test's server and regions, driven over HTTP."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.url = cls.server.http_url

    def tearDown(self):
        if ALLOW in self.ARGS:
            super().tearDown()  # unregisters every region
        else:
            for r in self.regions:
                r.close()

    def post(self, path, body=None, data=None, headers=None):
        if body is not None:
            data = json.dumps(body)
        return requests.post(self.url + path, data=data, headers=headers, timeout=TIMEOUT)

    def get(self, path):
        return requests.get(self.url + path, timeout=TIMEOUT)

    def register(self, name, key, size, offset=None):
        body = {"key": key, "byte_size": size}
        if offset is not None:
            body["offset"] = offset
        return self.post("%s/region/%s/register" % (SYS, name), body)

    def ok(self, r):
        self.assertEqual(r.status_code, 200, r.text)
        return r

    def refused(self, r, code, text, exact=True):
        self.assertEqual(r.status_code, code, r.text)
        self.assertEqual(r.headers["Content-Type"], "application/json")
        if exact:
            self.assertEqual(r.json(), {"error": text})
        else:
            self.assertIn(text, r.json()["error"])

    def status(self, name=None):
        path = SYS + ("/region/%s/status" % name if name else "/status")
        return self.ok(self.get(path)).json()

    def infer(self, model, body, code=200, binary=None, headers=None):
        data = json.dumps(body).encode()
        h = dict(headers or {})
        if binary is not None:
            h["Inference-Header-Content-Length"] = str(len(data))
            data += binary
        r = self.post("/v2/models/%s/infer" % model, data=data, headers=h)
        self.assertEqual(r.status_code, code, r.text)
        return r


class Registration(HttpShmTest):
    def test_register_status_unregister(self):
        r = self.region(256)
        self.assertEqual(self.status(), [])
        r0 = self.ok(self.register("in", r.key, 128))
        self.assertEqual(r0.content, b"")
        self.ok(self.register("out", r.key, 64, offset=128))
        self.assertEqual(self.status(), [
            {"name": "in", "key": r.key, "offset": 0, "byte_size": 128},
            {"name": "out", "key": r.key, "offset": 128, "byte_size": 64}])
        self.assertEqual(self.status("out"),
                         [{"name": "out", "key": r.key, "offset": 128, "byte_size": 64}])
        # gRPC sees the same table.
        stub = self.server.inference()
        regions = stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(),
                                                timeout=TIMEOUT).regions
        self.assertEqual(sorted(regions), ["in", "out"])
        self.assertEqual(self.ok(self.post(SYS + "/region/in/unregister")).content, b"")
        self.assertEqual([x["name"] for x in self.status()], ["out"])
        self.ok(self.post(SYS + "/region/never-registered/unregister"))  # as Triton
        self.ok(self.post(CUDA + "/unregister"))  # leaves system regions
        self.assertEqual(len(self.status()), 1)
        self.assertEqual(self.ok(self.get(CUDA + "/status")).json(), [])
        self.ok(self.post(SYS + "/unregister"))
        self.assertEqual(self.status(), [])

    def test_routes_and_methods(self):
        for path in (SYS, SYS + "/region/x", SYS + "/regions/x/status", SYS + "/region//status",
                     SYS + "/region/x/y/status", SYS + "/stat", CUDA + "/region/x/nothing"):
            self.refused(self.get(path), 404, "Not Found")
        self.refused(self.post(SYS + "/status"), 405, "Method Not Allowed")
        self.refused(self.get(SYS + "/region/x/register"), 405, "Method Not Allowed")
        self.refused(self.get(CUDA + "/unregister"), 405, "Method Not Allowed")
        self.refused(requests.put(self.url + SYS + "/unregister", timeout=TIMEOUT), 405,
                     "Method Not Allowed")

    def test_register_refusals(self):
        r = self.region(128)
        reg = SYS + "/region/r/register"
        self.refused(self.post(SYS + "/register", {"key": r.key, "byte_size": 8}), 400,
                     "'region name' is necessary to register system shared memory region")
        self.refused(self.post(reg, {"byte_size": 8}), 400,
                     "Shared memory register request has no 'key' field")
        self.refused(self.post(reg, data=b""), 400,
                     "Shared memory register request has no 'key' field")
        self.refused(self.post(reg, {"key": r.key}), 400,
                     "Shared memory register request has no 'byte_size' field")
        self.refused(self.post(reg, {"key": 3, "byte_size": 8}), 400,
                     "Unable to parse 'key': attempt to access JSON non-string as string")
        for bad in (-1, "8", 8.5, None, [8]):
            self.refused(self.post(reg, {"key": r.key, "byte_size": bad}), 400,
                         "Unable to parse 'byte_size': attempt to access JSON "
                         "non-unsigned-integer as unsigned-integer")
            self.refused(self.post(reg, {"key": r.key, "offset": bad, "byte_size": 8}), 400,
                         "Unable to parse 'offset': attempt to access JSON "
                         "non-unsigned-integer as unsigned-integer")
        self.refused(self.post(reg, data=b"{\"key\": "), 400,
                     "failed to parse the request JSON buffer", exact=False)
        self.refused(self.post(reg, data=b"[]"), 400, "the request JSON must be an object")
        self.refused(self.post(reg, data=b"{\"byte_size\": 99999999999999999999}"), 400,
                     "failed to parse the request JSON buffer", exact=False)
        # The table's checks, with their codes.
        self.ok(self.register("dup", r.key, 64))
        self.refused(self.register("dup", r.key, 64), 400,
                     "shared memory region 'dup' already in manager")
        self.refused(self.register("missing", "/nereid-no-such", 64), 500,
                     "Unable to open shared memory region: '/nereid-no-such'", exact=False)
        self.refused(self.register("big", r.key, 129), 400,
                     "failed to register shared memory region 'big': invalid args",
                     exact=False)
        self.refused(self.register("py", "/triton_python_backend_shm_region_1", 64), 400,
                     "cannot register shared memory region 'py' with key "
                     "'/triton_python_backend_shm_region_1' as the key contains the "
                     "reserved prefix 'triton_python_backend_shm_region_'")
        self.refused(self.register("k", "/../etc/passwd", 8), 400,
                     "is not the name of a POSIX shared memory object", exact=False)
        self.refused(self.register("n" * 1025, r.key, 8), 400,
                     "longer than the limit of 1024", exact=False)
        self.refused(self.get(SYS + "/region/nope/status"), 404,
                     "Unable to find system shared memory region: 'nope'")
        self.assertEqual([x["name"] for x in self.status()], ["dup"])
        self.refused(self.get(CUDA + "/region/dup/status"), 404,
                     "The region named 'dup' is registered as system shared memory, not "
                     "CUDA shared memory")


@unittest.skipIf(os.path.exists("/dev/nvidia0"), "a GPU is present")
class Cuda(HttpShmTest):
    def test_cuda_without_gpu(self):
        reg = CUDA + "/region/c/register"
        handle = base64.b64encode(b"\0" * 64).decode()
        body = {"raw_handle": {"b64": handle}, "device_id": 0, "byte_size": 64}
        self.refused(self.post(reg, body), 400,
                     "failed to register CUDA shared memory region: 'c', GPUs not supported",
                     exact=False)
        self.refused(self.post(CUDA + "/register", body), 400,
                     "'region name' is necessary to register cuda shared memory region")
        bad = "'raw_handle' must be a valid base64 encoded cudaIpcMemHandle_t"
        for b64 in ("not base64!", base64.b64encode(b"\0" * 8).decode(), "AAAA" * 100):
            self.refused(self.post(reg, dict(body, raw_handle={"b64": b64})), 400, bad)
        self.refused(self.post(reg, {"device_id": 0, "byte_size": 64}), 400,
                     "Shared memory register request has no 'raw_handle' field")
        self.refused(self.post(reg, dict(body, device_id=-1)), 400,
                     "Unable to parse 'device_id': attempt to access JSON "
                     "non-unsigned-integer as unsigned-integer")
        self.refused(self.get(CUDA + "/region/c/status"), 404,
                     "Unable to find cuda shared memory region: 'c'")
        self.assertEqual(self.ok(self.get(CUDA + "/status")).json(), [])


class Inference(HttpShmTest):
    def simple_regions(self):
        """shm_test's: input_data holding A and B, output_data; both
        registered over HTTP (self.register)."""
        rin, rout = shm_test.Inference.simple_regions(self)
        self.assertEqual(len(self.status()), 2)
        return rin, rout

    IN0 = shm_input("INPUT0", "INT32", "input_data", 64, 0)
    IN1 = shm_input("INPUT1", "INT32", "input_data", 64, 64)

    def test_simple_inputs_and_outputs_in_shm(self):
        _, rout = self.simple_regions()
        body = {"inputs": [self.IN0, self.IN1],
                "outputs": [shm_output("OUTPUT0", "output_data", 64, 0),
                            shm_output("OUTPUT1", "output_data", 64, 64)]}
        for _ in range(3):
            rout.write(0, b"\0" * 128)
            r = self.infer("simple", body)
            self.assertEqual(r.headers["Content-Type"], "application/json")
            self.assertNotIn("Inference-Header-Content-Length", r.headers)
            self.assertEqual(r.json()["outputs"], [
                {"name": "OUTPUT0", "datatype": "INT32", "shape": [1, 16]},
                {"name": "OUTPUT1", "datatype": "INT32", "shape": [1, 16]}])
            np.testing.assert_array_equal(np.frombuffer(rout.read(0, 64), np.int32),
                                          (A + B).ravel())
            np.testing.assert_array_equal(np.frombuffer(rout.read(64, 64), np.int32),
                                          (A - B).ravel())

    def test_mixed_json_binary_and_shm(self):
        _, rout = self.simple_regions()
        # INPUT0 as JSON, INPUT1 from the region; OUTPUT0 JSON, OUTPUT1 there.
        body = {"inputs": [{"name": "INPUT0", "datatype": "INT32", "shape": [1, 16],
                            "data": (2 * A).ravel().tolist()}, self.IN1],
                "outputs": [{"name": "OUTPUT0"}, shm_output("OUTPUT1", "output_data", 64, 64)]}
        out = self.infer("simple", body).json()["outputs"]
        self.assertEqual(out[0]["data"], (2 * A + B).ravel().tolist())
        self.assertEqual(out[1], {"name": "OUTPUT1", "datatype": "INT32", "shape": [1, 16]})
        np.testing.assert_array_equal(np.frombuffer(rout.read(64, 64), np.int32),
                                      (2 * A - B).ravel())
        # INPUT0 binary, INPUT1 from the region; OUTPUT0 binary, OUTPUT1
        # there: one binary part, and no binary_data flag for OUTPUT1.
        body = {"inputs": [{"name": "INPUT0", "datatype": "INT32", "shape": [1, 16],
                            "parameters": {"binary_data_size": 64}}, self.IN1],
                "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}},
                            shm_output("OUTPUT1", "output_data", 64, 0, binary_data=False)]}
        r = self.infer("simple", body, binary=(3 * A).tobytes())
        n = int(r.headers["Inference-Header-Content-Length"])
        header = json.loads(r.content[:n])
        self.assertEqual(header["outputs"][1],
                         {"name": "OUTPUT1", "datatype": "INT32", "shape": [1, 16]})
        self.assertEqual(len(r.content), n + 64)
        np.testing.assert_array_equal(np.frombuffer(r.content[n:], np.int32),
                                      (3 * A + B).ravel())
        np.testing.assert_array_equal(np.frombuffer(rout.read(0, 64), np.int32),
                                      (3 * A - B).ravel())

    def test_outputs_not_listed_and_shm_again(self):
        """Triton's reuse_infer_objects_client: shm, then plain, then shm."""
        _, rout = self.simple_regions()
        body = {"inputs": [self.IN0, self.IN1],
                "outputs": [shm_output("OUTPUT0", "output_data", 64)]}
        self.infer("simple", body)
        plain = self.infer("simple", {"inputs": [self.IN0, self.IN1]}).json()["outputs"]
        self.assertEqual(plain[0]["data"], (A + B).ravel().tolist())
        rout.write(0, b"\0" * 64)
        self.infer("simple", body)
        np.testing.assert_array_equal(np.frombuffer(rout.read(0, 64), np.int32),
                                      (A + B).ravel())

    def test_bytes_in_shm(self):
        """simple_string with every tensor in one region: inputs first,
        the outputs at 512 and 768."""
        ia = bytes_tensor([str(i).encode() for i in range(16)])
        ib = bytes_tensor([b"1"] * 16)
        whole = self.region(1024)
        whole.write(0, ia + ib)
        self.ok(self.register("strings", whole.key, 1024))
        body = {"inputs": [shm_input("INPUT0", "BYTES", "strings", len(ia), 0),
                           shm_input("INPUT1", "BYTES", "strings", len(ib), len(ia))],
                "outputs": [shm_output("OUTPUT0", "strings", 256, 512),
                            shm_output("OUTPUT1", "strings", 256, 768)]}
        out = self.infer("simple_string", body).json()["outputs"]
        self.assertEqual(out[0], {"name": "OUTPUT0", "datatype": "BYTES", "shape": [1, 16]})
        self.assertEqual(bytes_elements(whole.read(512, 256), 16),
                         [str(i + 1).encode() for i in range(16)])
        self.assertEqual(bytes_elements(whole.read(768, 256), 16),
                         [str(i - 1).encode() for i in range(16)])
        # BYTES from JSON beside BYTES from the region.
        body["inputs"][0] = {"name": "INPUT0", "datatype": "BYTES", "shape": [1, 16],
                             "data": [str(10 * i) for i in range(16)]}
        body["outputs"] = [{"name": "OUTPUT0"}]
        out = self.infer("simple_string", body).json()["outputs"]
        self.assertEqual(out[0]["data"], [str(10 * i + 1) for i in range(16)])

    def test_one_table_for_both_protocols(self):
        """A region registered over HTTP is used over gRPC, and one
        registered over gRPC is used over HTTP."""
        _, rout = self.simple_regions()
        stub = self.server.inference()
        req = shm_request("simple", [("INPUT0", "INT32", [1, 16], "input_data", 64, 0),
                                     ("INPUT1", "INT32", [1, 16], "input_data", 64, 64)],
                          [("OUTPUT0", "output_data", 64, 0)])
        resp = stub.ModelInfer(req, timeout=TIMEOUT)
        self.assertEqual(list(resp.raw_output_contents), [b""])
        np.testing.assert_array_equal(np.frombuffer(rout.read(0, 64), np.int32),
                                      (A + B).ravel())
        g = self.region(64)
        stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
            name="from_grpc", key=g.key, byte_size=64), timeout=TIMEOUT)
        self.infer("simple", {"inputs": [self.IN0, self.IN1],
                              "outputs": [shm_output("OUTPUT1", "from_grpc", 64)]})
        np.testing.assert_array_equal(np.frombuffer(g.read(0, 64), np.int32), (A - B).ravel())
        self.assertEqual([x["name"] for x in self.status()],
                         ["from_grpc", "input_data", "output_data"])

    def test_use_refusals(self):
        self.simple_regions()

        def refused(body, code, text, exact=True):
            self.refused(self.infer("simple", body, code=code), code, text, exact)

        def with_in1(**params):
            in1 = dict(self.IN1, parameters=dict(self.IN1["parameters"], **params))
            return {"inputs": [self.IN0, in1]}

        refused(with_in1(shared_memory_region="nope"), 404,
                "Unable to find shared memory region: 'nope'")
        refused(with_in1(shared_memory_offset=128), 400,
                "Invalid offset for shared memory region: 'input_data'")
        refused(with_in1(shared_memory_offset=100), 400,
                "Invalid offset + byte size for shared memory region: 'input_data'")
        refused(with_in1(shared_memory_byte_size=32), 400,
                "input byte size mismatch for input 'INPUT1' for model 'simple'. "
                "Expected 64, got 32", exact=False)
        refused(with_in1(shared_memory_region=3), 400, "Unable to parse 'shared_memory_region'")
        refused(with_in1(shared_memory_offset="0"), 400,
                "Unable to parse 'shared_memory_offset'")
        refused(with_in1(shared_memory_byte_size=-64), 400,
                "Unable to parse 'shared_memory_byte_size'")
        refused(with_in1(binary_data_size=64), 400,
                ONE_OF + " set 'binary_data_size' 'shared_memory_region'")
        body = with_in1()
        body["inputs"][1]["data"] = [1] * 16
        refused(body, 400, ONE_OF + " set 'data' 'shared_memory_region'")
        body = with_in1()
        del body["inputs"][1]["parameters"]
        refused(body, 400, ONE_OF + " no field is set")
        ins = [self.IN0, self.IN1]
        refused({"inputs": ins, "outputs": [shm_output("OUTPUT0", "output_data", 64,
                                                       binary_data=True)]},
                400, "Output can't set both 'shared_memory_region' and 'binary_data'")
        refused({"inputs": ins, "outputs": [shm_output("OUTPUT0", "output_data", 64,
                                                       classification=2)]},
                400, "Output can't set both 'shared_memory_region' and 'classification'")
        refused({"inputs": ins, "outputs": [shm_output("OUTPUT0", "nope", 64)]}, 404,
                "Unable to find shared memory region: 'nope'")
        refused({"inputs": ins, "outputs": [shm_output("OUTPUT0", "output_data", 32)]}, 500,
                "shared memory size specified with the request for output 'OUTPUT0' "
                "(32 bytes) should be at least 64 bytes to hold the results")
        # Nothing was left holding the regions: unregister-all unmaps them
        # at once and the server still answers.
        out = self.infer("simple", {"inputs": ins}).json()["outputs"]
        self.assertEqual(out[0]["data"], (A + B).ravel().tolist())


class Disabled(HttpShmTest):
    """The default: --allow-client-shm=false."""
    ARGS = ()

    def test_every_endpoint_and_inference_refused(self):
        text = ("Client shared memory is disabled. Start the server with "
                "'--allow-client-shm=true' to enable.")
        r = self.region(128)
        self.refused(self.register("x", r.key, 64), 503, text)
        self.refused(self.get(SYS + "/status"), 503, text)
        self.refused(self.get(CUDA + "/status"), 503, text)
        self.refused(self.post(SYS + "/unregister"), 503, text)
        self.refused(self.post(CUDA + "/region/c/register", {
            "raw_handle": {"b64": base64.b64encode(b"\0" * 64).decode()},
            "device_id": 0, "byte_size": 64}), 503, text)
        body = {"inputs": [shm_input("INPUT0", "INT32", "x", 64, 0),
                           shm_input("INPUT1", "INT32", "x", 64, 64)]}
        self.refused(self.infer("simple", body, code=503), 503, text)


if __name__ == "__main__":
    harness.main()
