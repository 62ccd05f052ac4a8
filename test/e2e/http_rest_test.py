"""The HTTP/REST frontend against issue 18's list, over the real port, from
requests, raw sockets and Debian's curl; Triton's answers where Triton is
the reference (its http_server.cc, classification.cc and protocol docs).

Issue 18, item by item, and the tests that prove it (this file: R::):
- Health, server metadata: http_test::HttpServerTest::test_live_and_ready,
  HttpViewsTest::test_server_and_model_metadata.
- /v2/models/{m}[/versions/{v}], .../ready, .../config, .../stats,
  /v2/models/stats: HttpServerTest::test_model_ready, HttpViewsTest::
  test_server_and_model_metadata, test_config_and_stats,
  triton_errors_test::TritonErrors::test_version_strings,
  test_unknown_model_and_version, R::RestViews::test_versioned_endpoints.
- .../infer: http_test::HttpInferTest (all), R::RestTypes, R::RestBinary.
- /v2/repository/index, load, unload: HttpViewsTest::
  test_repository_load_index_unload, triton_errors_test::test_failed_load
  (config override refused), R::RestRepository::test_config_override,
  test_file_override_base64, test_unload_dependents.
- Shared memory: http_shm_test (all). Trace: trace_test::Settings::
  test_http_global_model_and_clear, test_http_bad_values,
  Traffic::test_rate_1_grpc_and_http. Logging: logging_test::LogSettings::
  test_http_bad_values, test_the_network_cannot_move_the_log.
- JSON data flat and nested, every datatype: HttpInferTest::
  test_json_in_json_out (flat INT32), R::RestTypes::test_every_datatype,
  test_nested_data, test_fp16_and_bf16, test_bytes, test_integer_range.
- Binary tensor data: HttpInferTest::test_binary_in_binary_out,
  R::RestBinary::test_binary_data_output, test_mixed_json_and_binary,
  test_curl_binary_and_compressed, R::RestTypes::test_fp16_and_bf16.
- Classification: http_test::HttpClassificationTest::test_top_k_with_labels,
  R::RestTypes::test_classification_integers_and_batches.
- Compression both ways: HttpInferTest::test_compressed_request_bodies,
  test_compressed_answers, HttpBombTest, R::RestBinary::
  test_curl_binary_and_compressed.
- Request parameters reaching the scheduler: params_test::Params::test_http
  (they reach the backend), R::RestScheduling::test_sequence_integer_id,
  test_sequence_string_id, test_sequence_without_start, test_timeout,
  test_priority.
- Triton's statuses and {"error"} bodies: triton_errors_test (all),
  R::RestBinary::test_refusals_with_texts, R::RestViews.
- Generate and generate_stream: http_test::HttpGenerateTest (all).
- Bad input: malformed JSON, truncated binary, size against shape:
  R::RestBinary::test_refusals_with_texts; wrong Content-Length:
  R::RestWire::test_content_length_*; unknown endpoints and methods:
  HttpServerTest::test_unknown_paths, test_wrong_method,
  HttpViewsTest::test_repository_load_index_unload, R::RestViews::
  test_methods; oversized headers: HttpClientToolsTest::
  test_oversized_headers, R::RestWire::test_too_many_headers; bodies:
  HttpServerTest::test_body_over_the_limit,
  R::RestWire::test_chunked_body_over_the_limit.
"""

import base64
import gzip
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import unittest

import numpy as np
import requests

import harness

HTTP_ARGS = ("--allow-http=true", "--http-address=127.0.0.1", "--http-port=0")
SHAPE_TEXT = "Unable to parse 'data': Shape does not match true shape of 'data' field"


def tmpdir(prefix):
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TEST_TMPDIR"))


def write_model(repo, name, config):
    os.makedirs(os.path.join(repo, name, "1"))
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write('name: "%s"\n' % name + config)


def identity_config(data_type, dims="[ -1 ]", max_batch=0):
    return ('backend: "identity"\nmax_batch_size: %d\n'
            'input [ { name: "INPUT0" data_type: %s dims: %s } ]\n'
            'output [ { name: "OUTPUT0" data_type: %s dims: %s } ]\n'
            % (max_batch, data_type, dims, data_type, dims))


# KServe datatype -> (model config type, numpy type).
TYPES = {
    "BOOL": ("TYPE_BOOL", np.bool_), "INT8": ("TYPE_INT8", np.int8),
    "INT16": ("TYPE_INT16", np.int16), "INT32": ("TYPE_INT32", np.int32),
    "INT64": ("TYPE_INT64", np.int64), "UINT8": ("TYPE_UINT8", np.uint8),
    "UINT16": ("TYPE_UINT16", np.uint16), "UINT32": ("TYPE_UINT32", np.uint32),
    "UINT64": ("TYPE_UINT64", np.uint64), "FP16": ("TYPE_FP16", np.float16),
    "BF16": ("TYPE_BF16", None), "FP32": ("TYPE_FP32", np.float32),
    "FP64": ("TYPE_FP64", np.float64), "BYTES": ("TYPE_STRING", None),
}


def types_repo():
    """An identity model per datatype (id_<TYPE>, rank 1), some of rank 2
    and 3 (id2_<TYPE>, id3_FP64), and two for classification: INT32 [4]
    unbatched, FP32 [4] batched."""
    repo = tmpdir("types")
    for name, (config_type, _) in TYPES.items():
        write_model(repo, "id_" + name, identity_config(config_type))
    for name in ("INT32", "BYTES", "BOOL"):
        write_model(repo, "id2_" + name, identity_config(TYPES[name][0], "[ -1, -1 ]"))
    write_model(repo, "id3_FP64", identity_config("TYPE_FP64", "[ -1, -1, -1 ]"))
    write_model(repo, "cls_int", identity_config("TYPE_INT32", "[ 4 ]"))
    write_model(repo, "cls_batched", identity_config("TYPE_FP32", "[ 4 ]", max_batch=8))
    return repo


class RestCase(harness.ServerTestCase):
    ARGS = HTTP_ARGS

    def post(self, path, body=None, data=None, headers=None, **kw):
        return requests.post(self.server.http_url + path, json=body, data=data,
                             headers=headers, timeout=60, **kw)

    def infer(self, model, inputs, outputs=None, params=None, **kw):
        body = {"inputs": inputs}
        if outputs is not None:
            body["outputs"] = outputs
        if params is not None:
            body["parameters"] = params
        return self.post("/v2/models/%s/infer" % model, body, **kw)

    def refused(self, r, status, text):
        self.assertEqual(r.status_code, status, r.text)
        self.assertEqual(r.headers["Content-Type"], "application/json")
        self.assertEqual(r.json(), {"error": text})


def binary_body(header, parts):
    """A body with binary parts after the JSON header, and its headers."""
    head = json.dumps(header).encode()
    return head + b"".join(parts), {"Inference-Header-Content-Length": str(len(head))}


def binary_answer(r):
    """(header, [part bytes]) of an answer with binary outputs."""
    n = int(r.headers["Inference-Header-Content-Length"])
    header, rest, parts = json.loads(r.content[:n]), r.content[n:], []
    for o in header["outputs"]:
        size = o.get("parameters", {}).get("binary_data_size")
        if size is not None:
            parts.append(rest[:size])
            rest = rest[size:]
    return header, parts


class RestTypes(RestCase):
    REPO = types_repo()

    def round_trip(self, datatype, shape, data, expect=None):
        model = ("id%d_" % len(shape) if len(shape) > 1 else "id_") + datatype
        r = self.infer(model, [{"name": "INPUT0", "datatype": datatype,
                                "shape": shape, "data": data}])
        self.assertEqual(r.status_code, 200, (datatype, r.text))
        out = r.json()["outputs"][0]
        self.assertEqual((out["name"], out["datatype"], out["shape"]),
                         ("OUTPUT0", datatype, shape))
        self.assertEqual(out["data"], data if expect is None else expect, datatype)

    def test_every_datatype(self):
        cases = {
            "BOOL": [True, False, True],
            "INT8": [-128, 0, 127], "INT16": [-32768, 1, 32767],
            "INT32": [-2**31, 2, 2**31 - 1], "INT64": [-2**63, 3, 2**63 - 1],
            "UINT8": [0, 1, 255], "UINT16": [0, 1, 65535], "UINT32": [0, 1, 2**32 - 1],
            "UINT64": [0, 1, 2**63 - 1],
            "FP32": [0.5, -1.25, 1024.0], "FP64": [0.1, -2.5e-300, 1.7e308],
            "BYTES": ["a", "", "héllo"],
        }
        for datatype, data in cases.items():
            self.round_trip(datatype, [3], data)
        # Integers are accepted where FP32 and FP64 are asked for.
        self.round_trip("FP32", [2], [1, -2], [1.0, -2.0])

    def test_nested_data(self):
        self.round_trip("INT32", [2, 3], [[1, 2, 3], [4, 5, 6]], [1, 2, 3, 4, 5, 6])
        self.round_trip("FP64", [2, 1, 2], [[[0.5, 1.5]], [[2.5, 3.5]]],
                        [0.5, 1.5, 2.5, 3.5])
        self.round_trip("BYTES", [2, 2], [["a", "b"], ["c", "d"]], ["a", "b", "c", "d"])
        self.round_trip("BOOL", [1, 2], [[True, False]], [True, False])
        for shape, data in (([2, 3], [[1, 2, 3], [4, 5]]),        # ragged
                            ([2, 3], [[1, 2], [3, 4], [5, 6]]),   # transposed
                            ([1, 6], [[[1, 2, 3], [4, 5, 6]]]),   # deeper than shape
                            ([2, 3], [1, 2, 3, 4, 5]),            # flat, short
                            ([2, 3], [[1, 2, 3], 4, 5, 6])):      # mixed
            r = self.infer("id2_INT32", [{"name": "INPUT0", "datatype": "INT32",
                                          "shape": shape, "data": data}])
            self.refused(r, 400, SHAPE_TEXT)

    def test_fp16_and_bf16(self):
        """Triton refuses both in JSON, either way, with these texts (its
        ReadDataFromJson and WriteDataToJson); binary data serves them."""
        for datatype in ("FP16", "BF16"):
            r = self.infer("id_" + datatype, [{"name": "INPUT0", "datatype": datatype,
                                               "shape": [2], "data": [1.0, 2.0]}])
            self.refused(r, 400, "receiving %s data via JSON is not supported. Please "
                         "use the binary data format for input INPUT0" % datatype)
            raw = (np.array([1.5, -2.0], dtype=np.float16).tobytes() if datatype == "FP16"
                   else struct.pack("<2H", 0x3fc0, 0xc000))  # BF16 1.5, -2.0
            inputs = [{"name": "INPUT0", "datatype": datatype, "shape": [2],
                       "parameters": {"binary_data_size": len(raw)}}]
            body, headers = binary_body({"inputs": inputs, "outputs": [
                {"name": "OUTPUT0", "parameters": {"binary_data": True}}]}, [raw])
            r = self.post("/v2/models/id_%s/infer" % datatype, data=body, headers=headers)
            self.assertEqual(r.status_code, 200, r.text)
            header, parts = binary_answer(r)
            self.assertEqual(header["outputs"][0]["datatype"], datatype)
            self.assertEqual(parts, [raw])
            # Asked for as JSON: Triton's INVALID_ARG, 400.
            body, headers = binary_body({"inputs": inputs}, [raw])
            r = self.post("/v2/models/id_%s/infer" % datatype, data=body, headers=headers)
            self.refused(r, 400, "sending %s data via JSON is not supported. Please use "
                         "the binary data format for output" % datatype)

    def test_bytes(self):
        strings = ["plain", "", "nul\u0000inside", "ünïcödé ✓", "x" * 1000]
        self.round_trip("BYTES", [len(strings)], strings)
        # As binary: each element a 4-byte little-endian length, then its bytes.
        r = self.infer("id_BYTES", [{"name": "INPUT0", "datatype": "BYTES", "shape": [2],
                                     "data": ["ab", "ü"]}],
                       outputs=[{"name": "OUTPUT0", "parameters": {"binary_data": True}}])
        self.assertEqual(r.status_code, 200, r.text)
        header, parts = binary_answer(r)
        self.assertEqual(parts, [b"\x02\0\0\0ab\x02\0\0\0\xc3\xbc"])
        self.assertEqual(header["outputs"][0]["parameters"]["binary_data_size"], 12)
        r = self.infer("id_BYTES", [{"name": "INPUT0", "datatype": "BYTES", "shape": [2],
                                     "data": ["a", 7]}])
        self.refused(r, 400, "Unable to parse 'data': element 1 of input 'INPUT0' is not "
                     "a string")

    def test_integer_range(self):
        """Values outside the type are refused (Triton truncates them:
        infer_json.md), as are values of another JSON type."""
        for datatype, bad, what in (("INT8", 128, "an INT8 integer"),
                                    ("UINT8", -1, "a UINT8 integer"),
                                    ("UINT32", 2**32, "a UINT32 integer"),
                                    ("INT32", 1.5, "an INT32 integer"),
                                    ("BOOL", 1, "a boolean"),
                                    ("FP32", "1", "a number")):
            r = self.infer("id_" + datatype, [{"name": "INPUT0", "datatype": datatype,
                                               "shape": [2], "data": [bad, bad]}])
            self.refused(r, 400, "Unable to parse 'data': element 0 of input 'INPUT0' "
                         "is not " + what)

    def test_classification_integers_and_batches(self):
        """Triton's classification.cc prints each value with std::to_string
        of its own type: integers without decimals, floats with six."""
        r = self.infer("cls_int", [{"name": "INPUT0", "datatype": "INT32", "shape": [4],
                                    "data": [3, 9, -2, 7]}],
                       outputs=[{"name": "OUTPUT0", "parameters": {"classification": 2}}])
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json()["outputs"][0], {"name": "OUTPUT0", "datatype": "BYTES",
                                                  "shape": [2], "data": ["9:1", "7:3"]})
        # Batched: shape [batch, k], each batch entry ranked on its own.
        r = self.infer("cls_batched", [{"name": "INPUT0", "datatype": "FP32",
                                        "shape": [2, 4],
                                        "data": [[0.1, 0.4, 0.3, 0.2],
                                                 [2.5, 0.5, 1.5, 3.5]]}],
                       outputs=[{"name": "OUTPUT0", "parameters": {"classification": 2}}])
        self.assertEqual(r.status_code, 200, r.text)
        out = r.json()["outputs"][0]
        self.assertEqual((out["datatype"], out["shape"]), ("BYTES", [2, 2]))
        self.assertEqual(out["data"], ["0.400000:1", "0.300000:2", "3.500000:3",
                                       "2.500000:0"])
        # As binary data: the same strings, length-prefixed.
        r = self.infer("cls_int", [{"name": "INPUT0", "datatype": "INT32", "shape": [4],
                                    "data": [-5, -1, -9, -3]}],
                       outputs=[{"name": "OUTPUT0", "parameters": {"classification": 1,
                                                                  "binary_data": True}}])
        self.assertEqual(r.status_code, 200, r.text)
        header, parts = binary_answer(r)
        self.assertEqual(header["outputs"][0]["shape"], [1])
        self.assertEqual(parts, [b"\x04\0\0\0-1:1"])


def simple_inputs(a, b):
    return [{"name": n, "datatype": "INT32", "shape": list(x.shape),
             "data": x.ravel().tolist()} for n, x in (("INPUT0", a), ("INPUT1", b))]


A = np.arange(16, dtype=np.int32).reshape(1, 16)
B = np.full((1, 16), 5, dtype=np.int32)


class RestBinary(RestCase):
    def binary_inputs(self, sizes):
        return [{"name": n, "datatype": "INT32", "shape": [1, 16],
                 "parameters": {"binary_data_size": s}}
                for n, s in zip(("INPUT0", "INPUT1"), sizes)]

    def test_binary_data_output(self):
        """binary_data_output: every output binary when none is listed."""
        r = self.infer("simple", simple_inputs(A, B), params={"binary_data_output": True})
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.headers["Content-Type"], "application/octet-stream")
        header, parts = binary_answer(r)
        self.assertEqual([(o["name"], o["parameters"]) for o in header["outputs"]],
                         [("OUTPUT0", {"binary_data_size": 64}),
                          ("OUTPUT1", {"binary_data_size": 64})])
        self.assertNotIn("data", header["outputs"][0])
        self.assertEqual(parts, [(A + B).tobytes(), (A - B).tobytes()])
        # false, or absent: JSON.
        r = self.infer("simple", simple_inputs(A, B), params={"binary_data_output": False})
        self.assertEqual(r.headers["Content-Type"], "application/json")
        self.assertNotIn("Inference-Header-Content-Length", r.headers)
        self.assertEqual(r.json()["outputs"][1]["data"], (A - B).ravel().tolist())

    def test_mixed_json_and_binary(self):
        """One input as JSON and one binary; one output each way."""
        inputs = simple_inputs(A, B)
        inputs[1] = self.binary_inputs([0, 64])[1]
        body, headers = binary_body({"inputs": inputs, "outputs": [
            {"name": "OUTPUT1", "parameters": {"binary_data": True}},
            {"name": "OUTPUT0", "parameters": {"binary_data": False}}]}, [B.tobytes()])
        r = self.post("/v2/models/simple/infer", data=body, headers=headers)
        self.assertEqual(r.status_code, 200, r.text)
        header, parts = binary_answer(r)
        outs = {o["name"]: o for o in header["outputs"]}
        self.assertEqual(outs["OUTPUT0"]["data"], (A + B).ravel().tolist())
        self.assertEqual(parts, [(A - B).tobytes()])

    def test_refusals_with_texts(self):
        """Bad bodies: the status and text of each (Triton's where it has one)."""
        r = self.post("/v2/models/simple/infer", data=b'{"inputs": [}')
        self.assertEqual(r.status_code, 400)
        self.assertTrue(r.json()["error"].startswith(
            "failed to parse the request JSON buffer: "), r.text)
        r = self.post("/v2/models/simple/infer", data=b"[1, 2]")
        self.refused(r, 400, "failed to parse the request JSON buffer: not a JSON object")
        # A binary size that does not match the shape.
        body, headers = binary_body({"inputs": self.binary_inputs([60, 64])},
                                    [A.tobytes()[:60], B.tobytes()])
        r = self.post("/v2/models/simple/infer", data=body, headers=headers)
        self.refused(r, 400, "input byte size mismatch for input 'INPUT0' for model "
                     "'simple'. Expected 64, got 60")
        # Truncated binary data: 100 of the 128 bytes announced.
        body, headers = binary_body({"inputs": self.binary_inputs([64, 64])},
                                    [A.tobytes(), B.tobytes()[:36]])
        r = self.post("/v2/models/simple/infer", data=body, headers=headers)
        self.refused(r, 400, "unexpected size for input 'INPUT1', expecting 28 additional "
                     "bytes for model 'simple'")
        # Bytes left over after the last input.
        body, headers = binary_body({"inputs": self.binary_inputs([64, 64])},
                                    [A.tobytes(), B.tobytes(), b"tail"])
        r = self.post("/v2/models/simple/infer", data=body, headers=headers)
        self.refused(r, 400, "unexpected additional input data for model 'simple'")
        # binary_data_size without the header.
        r = self.post("/v2/models/simple/infer",
                      {"inputs": self.binary_inputs([64, 64])})
        self.refused(r, 400, "must specify valid 'Inference-Header-Content-Length' in "
                     "request header and 'binary_data_size' when passing inputs in "
                     "binary data format")
        # A header length that is not a number, or past the body.
        for value in ("ten", "-1", ""):
            r = self.post("/v2/models/simple/infer", data=b"{}",
                          headers={"Inference-Header-Content-Length": value})
            self.assertEqual(r.status_code, 400, value)
            self.assertIn("Inference-Header-Content-Length", r.json()["error"])
        # data and binary_data_size together.
        inputs = self.binary_inputs([64, 64])
        inputs[0]["data"] = A.ravel().tolist()
        body, headers = binary_body({"inputs": inputs}, [A.tobytes(), B.tobytes()])
        r = self.post("/v2/models/simple/infer", data=body, headers=headers)
        self.refused(r, 400, "Input must set only one of the following fields: 'data', "
                     "'binary_data_size' in 'parameters', 'shared_memory_region' in "
                     "'parameters'. But set 'data' 'binary_data_size'")
        # The server still serves.
        self.assertEqual(self.infer("simple", simple_inputs(A, B)).status_code, 200)

    def curl(self, *args):
        p = subprocess.run(["curl", "-s", "-S", "-D", "-", "-o", "-"] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                           check=True)
        head, _, body = p.stdout.partition(b"\r\n\r\n")
        status = int(head.split()[1])
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            headers[k.strip().lower().decode()] = v.strip().decode()
        return status, headers, body

    def test_curl_binary_and_compressed(self):
        """Debian's curl: a binary body from a file, a gzip body, and
        --compressed (curl asks for and inflates the answer)."""
        body, headers = binary_body({"inputs": self.binary_inputs([64, 64]), "outputs": [
            {"name": "OUTPUT0", "parameters": {"binary_data": True}}]},
            [A.tobytes(), B.tobytes()])
        path = os.path.join(tmpdir("curl"), "body")
        with open(path, "wb") as f:
            f.write(body)
        url = self.server.http_url + "/v2/models/simple/infer"
        status, h, out = self.curl("--data-binary", "@" + path, "-H",
                                   "Inference-Header-Content-Length: " +
                                   headers["Inference-Header-Content-Length"], url)
        self.assertEqual(status, 200, out)
        n = int(h["inference-header-content-length"])
        self.assertEqual(out[n:], (A + B).tobytes())
        json_body = json.dumps({"inputs": simple_inputs(A, B)}).encode()
        with open(path, "wb") as f:
            f.write(gzip.compress(json_body))
        status, h, out = self.curl("--compressed", "--data-binary", "@" + path, "-H",
                                   "Content-Encoding: gzip", url)
        self.assertEqual(status, 200, out)
        self.assertEqual(h["content-encoding"], "gzip")
        self.assertEqual(json.loads(out)["outputs"][0]["data"], (A + B).ravel().tolist())


class RestViews(RestCase):
    def get(self, path):
        return requests.get(self.server.http_url + path, timeout=30)

    def test_versioned_endpoints(self):
        m = self.get("/v2/models/simple/versions/1")
        self.assertEqual(m.status_code, 200)
        self.assertEqual((m.json()["name"], m.json()["versions"]), ("simple", ["1"]))
        st = self.get("/v2/models/simple/versions/1/stats")
        self.assertEqual(st.status_code, 200)
        self.assertEqual([(e["name"], e["version"]) for e in st.json()["model_stats"]],
                         [("simple", "1")])
        # A version the model does not have: Triton's UNAVAILABLE, 503.
        for path in ("/v2/models/simple/versions/7", "/v2/models/simple/versions/7/config",
                     "/v2/models/simple/versions/7/infer"):
            r = (self.post(path, {"inputs": simple_inputs(A, B)}) if path.endswith("infer")
                 else self.get(path))
            self.refused(r, 503, "Request for unknown model: 'simple' version 7 is not "
                         "found")
        # Statistics word it as Triton's TRITONSERVER_ServerModelStatistics
        # (INVALID_ARG, 400); config as the metadata (the model lookup).
        self.refused(self.get("/v2/models/simple/versions/7/stats"), 400,
                     "requested model version is not available for model 'simple'")
        self.refused(self.get("/v2/models/nosuch/stats"), 400,
                     "requested model 'nosuch' is not available")
        self.refused(self.get("/v2/models/nosuch/config"), 503,
                     "Request for unknown model: 'nosuch' is not found")

    def test_methods(self):
        """Each endpoint's other methods: 405 with Triton's body."""
        url = self.server.http_url
        for method, path in (("POST", "/v2"), ("DELETE", "/v2/models/simple"),
                             ("PUT", "/v2/models/simple/config"),
                             ("POST", "/v2/models/stats"),
                             ("POST", "/v2/models/simple/ready"),
                             ("GET", "/v2/models/simple/generate"),
                             ("GET", "/v2/repository/models/simple/load"),
                             ("PATCH", "/v2/logging"),
                             ("DELETE", "/v2/trace/setting")):
            r = requests.request(method, url + path, timeout=30)
            self.assertEqual(r.status_code, 405, (method, path))
            self.assertEqual(r.json(), {"error": "Method Not Allowed"}, (method, path))


class RestRepository(RestCase):
    ARGS = HTTP_ARGS + ("--model-control-mode=explicit", "--load-model=simple")

    def ready(self, name):
        r = requests.get(self.server.http_url + "/v2/models/%s/ready" % name, timeout=30)
        return r.status_code == 200

    def test_config_override(self):
        """parameters.config: the JSON of a ModelConfig, as Triton's."""
        config = dict(harness.IDENTITY_CONFIG, maxBatchSize=2)
        try:
            r = self.post("/v2/repository/models/simple/load",
                          {"parameters": {"config": json.dumps(config)}})
            self.assertEqual(r.status_code, 200, r.text)
            c = requests.get(self.server.http_url + "/v2/models/simple/config",
                             timeout=30).json()
            self.assertEqual((c["backend"], c["max_batch_size"]), ("identity", 2))
        finally:
            r = self.post("/v2/repository/models/simple/load")
            self.assertEqual(r.status_code, 200, r.text)
        c = requests.get(self.server.http_url + "/v2/models/simple/config", timeout=30)
        self.assertEqual(c.json()["backend"], "addsub")

    def test_file_override_base64(self):
        """file:<path> values are base64 of the file (Triton's HTTP API)."""
        params = {"config": json.dumps(harness.IDENTITY_CONFIG),
                  "file:1/weights.bin": base64.b64encode(b"\0\1\2binary").decode()}
        r = self.post("/v2/repository/models/fresh/load", {"parameters": params})
        self.assertEqual(r.status_code, 200, r.text)
        self.assertTrue(self.ready("fresh"))
        r = self.infer("fresh", [{"name": "INPUT0", "datatype": "INT32", "shape": [1, 3],
                                  "data": [5, 6, 7]}])
        self.assertEqual(r.json()["outputs"][0]["data"], [5, 6, 7])
        r = self.post("/v2/repository/models/fresh/unload")
        self.assertEqual(r.status_code, 200, r.text)
        self.assertFalse(self.ready("fresh"))
        params["file:1/weights.bin"] = "not base64!"
        r = self.post("/v2/repository/models/fresh/load", {"parameters": params})
        self.refused(r, 400, "failed to load 'fresh': the value of load parameter "
                     "'file:1/weights.bin' is not valid base64")

    def load(self, name):
        r = self.post("/v2/repository/models/%s/load" % name)
        self.assertEqual(r.status_code, 200, r.text)

    def unload(self, name, dependents):
        r = self.post("/v2/repository/models/%s/unload" % name,
                      {"parameters": {"unload_dependents": dependents}})
        self.assertEqual(r.status_code, 200, r.text)
        self.assertFalse(self.ready(name))

    def test_unload_dependents(self):
        """unload_dependents: an ensemble's unload takes with it the step
        models that only it loaded (Triton's rule); without the flag, or
        for a model a client loaded, they stay."""
        try:
            self.unload("simple", False)
            self.load("simple_ensemble")
            self.assertTrue(self.ready("simple"))
            self.unload("simple_ensemble", False)
            self.assertTrue(self.ready("simple"))
            self.unload("simple", False)
            self.load("simple_ensemble")
            self.unload("simple_ensemble", True)
            self.assertFalse(self.ready("simple"))
            self.load("simple")
            self.load("simple_ensemble")
            self.unload("simple_ensemble", True)
            self.assertTrue(self.ready("simple"))
        finally:
            self.load("simple")
        r = self.post("/v2/repository/models/simple/unload",
                      {"parameters": {"unload_dependents": "yes"}})
        self.refused(r, 400, "Unable to parse 'unload_dependents': attempt to access JSON "
                     "non-boolean as boolean")
        self.assertTrue(self.ready("simple"))


SCHED_CONFIG = """backend: "recorder"
max_batch_size: 1
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
dynamic_batching {
  priority_levels: 2
  default_priority_level: 2
  default_queue_policy { timeout_action: REJECT allow_timeout_override: true }
  priority_queue_policy { key: 1 value: { max_queue_size: 1 } }
}
parameters [
  { key: "record_file" value: { string_value: "sched.log" } },
  { key: "execute_delay_ms" value: { string_value: "0" } },
  { key: "delay_from_input" value: { string_value: "true" } }
]
"""


class RestScheduling(unittest.TestCase):
    """sequence_id, sequence_start, sequence_end, priority and timeout from
    an HTTP body to the scheduler. `sched` has no queue timeout of its own
    (so only a request's timeout can expire one) and holds one waiting
    request at priority 1; it runs INPUT0[0] ms per request."""

    @classmethod
    def setUpClass(cls):
        repo = tmpdir("sched")
        for name in ("simple_dyna_sequence", "simple_string_dyna_sequence"):
            shutil.copytree(os.path.join(harness.EXAMPLES, name), os.path.join(repo, name))
        write_model(repo, "sched", SCHED_CONFIG)
        cls.records = tmpdir("records")
        cls.server = harness.Server(*HTTP_ARGS, repo=repo,
                                    backends=harness.combined_backends(),
                                    env={"NEREID_RECORD_DIR": cls.records})

    @classmethod
    def tearDownClass(cls):
        harness.stop_clean(cls.server)

    def infer(self, model, name, values, params, rid="", timeout=60):
        body = {"id": rid, "parameters": params, "inputs": [
            {"name": name, "datatype": "INT32", "shape": [1, len(values)], "data": values}]}
        return requests.post(self.server.http_url + "/v2/models/%s/infer" % model,
                             json=body, timeout=timeout)

    def step(self, model, seq, value, **flags):
        params = dict({"sequence_id": seq}, **flags)
        r = self.infer(model, "INPUT", [value], params)
        self.assertEqual(r.status_code, 200, r.text)
        return r.json()["outputs"][0]["data"][0]

    def test_sequence_integer_id(self):
        """simple_dyna_sequence: OUTPUT = INPUT + START + END x CORRID."""
        m = "simple_dyna_sequence"
        self.assertEqual(self.step(m, 1001, 5, sequence_start=True), 6)
        self.assertEqual(self.step(m, 1001, 3), 3)
        self.assertEqual(self.step(m, 1001, 2, sequence_end=True), 2 + 1001)
        # Both flags in one request: a one-request sequence.
        self.assertEqual(self.step(m, 77, 1, sequence_start=True, sequence_end=True),
                         1 + 1 + 77)

    def test_sequence_string_id(self):
        """simple_string_dyna_sequence accumulates; END adds the id's value."""
        m = "simple_string_dyna_sequence"
        self.assertEqual(self.step(m, "1002", 1, sequence_start=True), 1)
        self.assertEqual(self.step(m, "1002", 2), 3)
        self.assertEqual(self.step(m, "1002", 3, sequence_end=True), 6 + 1002)

    def test_sequence_without_start(self):
        r = self.infer("simple_dyna_sequence", "INPUT", [1], {"sequence_id": 4242})
        self.assertEqual(r.status_code, 400, r.text)
        self.assertIn("4242", r.json()["error"])
        self.assertIn("START", r.json()["error"])
        r = self.infer("simple_dyna_sequence", "INPUT", [1], {"sequence_start": True})
        self.assertEqual(r.status_code, 400, r.text)
        self.assertIn("sequence", r.json()["error"])

    def blocker(self, rid):
        """A request that runs for a long while, once the instance runs it;
        returns its thread and where its answer goes."""
        answer = {}
        ms = int(3000 * harness.SLOW)
        t = threading.Thread(target=lambda: answer.setdefault(
            "r", self.infer("sched", "INPUT0", [ms], {}, rid=rid, timeout=120)))
        t.start()
        path = os.path.join(self.records, "sched.log")
        deadline = time.monotonic() + 30 * harness.SLOW
        while time.monotonic() < deadline:
            if os.path.exists(path):
                with open(path) as f:
                    if any(line.startswith("execute_start") and rid in line for line in f):
                        return t, answer
            time.sleep(0.01)
        self.fail("the blocker never ran")

    def test_timeout(self):
        t, answer = self.blocker("block_timeout")
        r = self.infer("sched", "INPUT0", [0], {"timeout": 1000})
        self.assertEqual(r.status_code, 503, r.text)
        self.assertIn("Request timeout expired", r.json()["error"])
        # Without one it waits for the instance.
        r = self.infer("sched", "INPUT0", [0], {})
        self.assertEqual(r.status_code, 200, r.text)
        t.join()
        self.assertEqual(answer["r"].status_code, 200)

    def test_priority(self):
        """Level 1 holds one waiting request; level 2 (the default) any."""
        t, answer = self.blocker("block_priority")
        results = []

        def send(priority):
            results.append((priority, self.infer("sched", "INPUT0", [0],
                                                 {"priority": priority})))

        threads = [threading.Thread(target=send, args=(p,)) for p in (1, 1, 2, 2, 0)]
        for th in threads:
            th.start()
        for th in threads + [t]:
            th.join()
        codes = sorted((p, r.status_code) for p, r in results)
        self.assertEqual(codes, [(0, 200), (1, 200), (1, 503), (2, 200), (2, 200)], codes)
        full = [r for p, r in results if r.status_code == 503]
        self.assertIn("Exceeds maximum queue size", full[0].json()["error"])
        self.assertEqual(answer["r"].status_code, 200)


def answer_whole(got):
    """Whether `got` holds an answer's head and its Content-Length of body."""
    head, sep, rest = got.partition(b"\r\n\r\n")
    lengths = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
               if line.lower().startswith(b"content-length:")]
    return bool(sep) and bool(lengths) and len(rest) >= lengths[0]


class RestWire(RestCase):
    """The HTTP layer itself: Content-Length that lies, chunked bodies, the
    body limit on a chunked body."""
    ARGS = HTTP_ARGS + ("--http-max-input-size=65536",)

    def exchange(self, *pieces, shut=False):
        """Sends raw bytes (a refusal may close the connection before they
        are all written); returns what the server sent until it closed, went
        quiet or, unless shut, its first answer was whole."""
        s = socket.create_connection(("127.0.0.1", self.server.http_port),
                                     timeout=10 * harness.SLOW)
        got = b""
        try:
            for piece in pieces:
                s.sendall(piece)
            if shut:
                s.shutdown(socket.SHUT_WR)
            while shut or not answer_whole(got):
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            pass
        s.close()
        return got

    def body(self):
        return json.dumps({"inputs": simple_inputs(A, B)}).encode()

    def post_raw(self, length, body, extra=b""):
        return (b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\n"
                b"Content-Length: " + length + b"\r\n" + extra + b"\r\n" + body)

    def test_content_length_short(self):
        """Fewer bytes announced than sent: the body is cut there (a JSON
        error), and the rest is not a request."""
        body = self.body()
        got = self.exchange(self.post_raw(str(len(body) - 10).encode(), body))
        self.assertTrue(got.startswith(b"HTTP/1.1 400"), got[:200])
        answer = json.loads(got.partition(b"\r\n\r\n")[2])
        self.assertTrue(answer["error"].startswith(
            "failed to parse the request JSON buffer: "), answer)

    def test_content_length_long(self):
        """More announced than sent, then the client stops sending: no
        answer, and the server goes on."""
        body = self.body()
        got = self.exchange(self.post_raw(str(len(body) + 100).encode(), body), shut=True)
        self.assertNotIn(b"HTTP/1.1 200", got)
        self.assertEqual(self.infer("simple", simple_inputs(A, B)).status_code, 200)

    def test_content_length_not_a_number(self):
        for length in (b"abc", b"-5", b"1e3"):  # the head alone: it is refused
            got = self.exchange(self.post_raw(length, b""), shut=True)
            self.assertTrue(got.startswith(b"HTTP/1.1 400"), (length, got[:200]))
        self.assertEqual(self.infer("simple", simple_inputs(A, B)).status_code, 200)

    def test_too_many_headers(self):
        """h2o takes at most 100 header fields (its limit on a request's
        head, with the 1 MB field of http_test's test_oversized_headers):
        400, and the connection closes."""
        got = self.exchange(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n" +
                            b"".join(b"X-H%d: v\r\n" % i for i in range(200)) + b"\r\n",
                            shut=True)
        self.assertTrue(got.startswith(b"HTTP/1.1 400"), got[:200])
        r = requests.get(self.server.http_url + "/v2/health/live", timeout=30)
        self.assertEqual(r.status_code, 200)

    def test_chunked_body(self):
        body = self.body()
        r = self.post("/v2/models/simple/infer",
                      data=iter([body[:50], body[50:]]))  # requests sends it chunked
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json()["outputs"][0]["data"], (A + B).ravel().tolist())

    def test_chunked_body_over_the_limit(self):
        """A chunked body has no length to refuse up front: h2o counts it
        and answers 413 once it passes the limit, before the body ends. (The
        client stops there: bytes the server never reads would turn its
        close into a reset that can drop the answer.)"""
        chunk = b"%x\r\n" % 40000 + b" " * 40000 + b"\r\n"
        got = self.exchange(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\n"
                            b"Transfer-Encoding: chunked\r\n\r\n", chunk, chunk)
        self.assertTrue(got.startswith(b"HTTP/1.1 413"), got[:200])
        self.assertEqual(self.infer("simple", simple_inputs(A, B)).status_code, 200)


if __name__ == "__main__":
    harness.main()
