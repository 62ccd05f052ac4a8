"""End to end: the error texts that Triton's clients and tests match, exactly,
over gRPC and HTTP (docs/triton_errors.md lists them with Triton's
source)."""

import json
import unittest

import grpc
import numpy as np
import requests

import harness
from harness import infer_request
import grpc_service_pb2 as pb

E = grpc.StatusCode
A = np.arange(16, dtype=np.int32).reshape(1, 16)
INPUTS = [("INPUT0", "INT32", A), ("INPUT1", "INT32", A)]
BATCH_NOTE = ("NOTE: Setting a non-zero max_batch_size in the model config requires a "
              "batch dimension to be prepended to each input shape. If you want to "
              "specify the full shape including the batch dim in your input dims "
              "config, try setting max_batch_size to zero. See the model configuration "
              "docs for more info on max_batch_size.")
VERSION_X1 = ("failed to get model version from specified version string 'x1' "
              "(details: stol), version should be an integral value > 0")


def http_input(name, shape, data, datatype="INT32"):
    return {"name": name, "datatype": datatype, "shape": shape, "data": data}


class TritonErrors(harness.ServerTestCase):
    ARGS = ("--model-control-mode=explicit", "--load-model=simple")

    def grpc_fails(self, call, code, text):
        with self.assertRaises(grpc.RpcError) as cm:
            call()
        self.assertEqual((cm.exception.code(), cm.exception.details()), (code, text))

    def infer_fails(self, req, code, text):
        self.grpc_fails(lambda: self.stub.ModelInfer(req, timeout=30), code, text)

    def http_fails(self, method, path, body, status, text):
        r = requests.request(method, self.server.http_url + path, json=body, timeout=30)
        self.assertEqual((r.status_code, r.json()), (status, {"error": text}))

    def test_contents_beside_raw_input_contents(self):
        text = ("contents field must not be specified when using raw_input_contents for "
                "'INPUT0' for model 'simple'")
        req = infer_request("simple", INPUTS)
        req.inputs[0].contents.int_contents.extend(range(16))
        self.infer_fails(req, E.INVALID_ARGUMENT, text)
        # Checked per input before the inputs are counted.
        req = infer_request("simple", INPUTS[:1])
        req.inputs[0].contents.int_contents.extend(range(16))
        self.infer_fails(req, E.INVALID_ARGUMENT, text)

    def test_input_without_data(self):
        req = infer_request("simple", INPUTS)
        del req.raw_input_contents[1]
        self.infer_fails(req, E.INVALID_ARGUMENT,
                         "unable to find data for input tensor 'INPUT1' for model "
                         "'simple' in request.")

    def test_contents_of_another_type(self):
        req = pb.ModelInferRequest(model_name="simple")
        for name in ("INPUT0", "INPUT1"):
            t = req.inputs.add(name=name, datatype="INT32", shape=[1, 16])
            t.contents.int64_contents.extend(range(16))
        self.infer_fails(req, E.INVALID_ARGUMENT,
                         "unexpected explicit tensor data for input tensor 'INPUT0' for "
                         "model 'simple' of type 'INT64', expected datatype 'INT32'")

    def test_version_strings(self):
        self.infer_fails(infer_request("simple", INPUTS, version="x1"),
                         E.INVALID_ARGUMENT, VERSION_X1)
        for method, req in (
                ("ModelMetadata", pb.ModelMetadataRequest(name="simple", version="x1")),
                ("ModelReady", pb.ModelReadyRequest(name="simple", version="x1")),
                ("ModelConfig", pb.ModelConfigRequest(name="simple", version="x1")),
                ("ModelStatistics",
                 pb.ModelStatisticsRequest(name="simple", version="x1"))):
            self.grpc_fails(lambda: getattr(self.stub, method)(req, timeout=10),
                            E.INVALID_ARGUMENT, VERSION_X1)
        self.infer_fails(infer_request("simple", INPUTS, version="-1"),
                         E.INVALID_ARGUMENT,
                         "invalid model version specified '-1' , version should be an "
                         "integral value > 0")
        body = {"inputs": [http_input(n, [1, 16], list(range(16)))
                           for n in ("INPUT0", "INPUT1")]}
        for method, path, b in (("POST", "/v2/models/simple/versions/x1/infer", body),
                                ("GET", "/v2/models/simple/versions/x1", None),
                                ("GET", "/v2/models/simple/versions/x1/config", None),
                                ("GET", "/v2/models/simple/versions/x1/stats", None)):
            self.http_fails(method, path, b, 400, VERSION_X1)

    def test_unknown_model_and_version(self):
        self.infer_fails(infer_request("nosuch", INPUTS), E.UNAVAILABLE,
                         "Request for unknown model: 'nosuch' is not found")
        self.infer_fails(infer_request("simple", INPUTS, version="7"), E.UNAVAILABLE,
                         "Request for unknown model: 'simple' version 7 is not found")
        self.http_fails("GET", "/v2/models/nosuch", None, 503,
                        "Request for unknown model: 'nosuch' is not found")
        # simple_http_aio_infer_client.py: startswith("Request for unknown model").
        body = {"inputs": [http_input(n, [1, 16], list(range(16)))
                           for n in ("INPUT0", "INPUT1")]}
        self.http_fails("POST", "/v2/models/nosuch/infer", body, 503,
                        "Request for unknown model: 'nosuch' is not found")

    def test_load_of_unknown_model(self):
        text = "failed to load 'nosuch', failed to poll from model repository"
        self.grpc_fails(lambda: self.stub.RepositoryModelLoad(
            pb.RepositoryModelLoadRequest(model_name="nosuch"), timeout=30),
            E.INTERNAL, text)
        self.http_fails("POST", "/v2/repository/models/nosuch/load", {}, 500, text)
        # Files without a config: Triton's poll fails too.
        req = pb.RepositoryModelLoadRequest(model_name="simple")
        req.parameters["file:1/a.txt"].bytes_param = b"x"
        self.grpc_fails(lambda: self.stub.RepositoryModelLoad(req, timeout=30), E.INTERNAL,
                        "failed to load 'simple', failed to poll from model repository")

    def load_fails(self, config, code, status):
        """The answers of a load of `simple` with `config` as override, over
        gRPC and HTTP, which must be the same."""
        text = json.dumps(config)
        req = pb.RepositoryModelLoadRequest(model_name="simple")
        req.parameters["config"].string_param = text
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.RepositoryModelLoad(req, timeout=30)
        self.assertEqual(cm.exception.code(), code)
        r = requests.post(self.server.http_url + "/v2/repository/models/simple/load",
                          json={"parameters": {"config": text}}, timeout=30)
        self.assertEqual((r.status_code, r.json()),
                         (status, {"error": cm.exception.details()}))
        return cm.exception.details()

    def test_failed_load(self):
        # Triton's life cycle words a version that failed, and its
        # repository manager the whole load; clients match both parts
        # (L0_lifecycle: "version 2 is at UNAVAILABLE state: Internal: ...").
        try:
            no_backend = dict(harness.IDENTITY_CONFIG, backend="no_such_backend")
            text = self.load_fails(no_backend, E.INVALID_ARGUMENT, 400)
            self.assertTrue(text.startswith(
                "load failed for model 'simple': version 1 is at UNAVAILABLE state: "
                "Invalid argument: unable to find backend library for backend "
                "'no_such_backend', try specifying runtime on the model configuration."),
                text)
            self.assertTrue(text.endswith(";\n"), text)
            # A reload that fails leaves the loaded version serving.
            self.assertIn(("simple", "1", "READY", ""), self.index())
            no_version = dict(harness.IDENTITY_CONFIG,
                              versionPolicy={"specific": {"versions": [7]}})
            self.assertEqual(self.load_fails(no_version, E.INVALID_ARGUMENT, 400),
                             "load failed for model 'simple': at least one version must "
                             "be available under the version policy of model 'simple'\n")
            # Every failed version, one after the other.
            req = pb.RepositoryModelLoadRequest(model_name="twov")
            req.parameters["config"].string_param = json.dumps(
                dict(no_backend, versionPolicy={"all": {}}))
            req.parameters["file:1/a.txt"].bytes_param = b"x"
            req.parameters["file:2/a.txt"].bytes_param = b"x"
            with self.assertRaises(grpc.RpcError) as cm:
                self.stub.RepositoryModelLoad(req, timeout=30)
            self.assertRegex(cm.exception.details(),
                             r"^load failed for model 'twov': version 1 is at UNAVAILABLE "
                             r"state: Invalid argument: unable to find backend [^;]*;"
                             r"version 2 is at UNAVAILABLE state: Invalid argument: "
                             r"unable to find backend [^;]*;\n$")
            # With no version loaded, the index gives the version's reason
            # as Triton's does: its code, then its message.
            self.stub.RepositoryModelUnload(
                pb.RepositoryModelUnloadRequest(model_name="simple"), timeout=30)
            self.load_fails(no_backend, E.INVALID_ARGUMENT, 400)
            rows = [r for r in self.index() if r[0] == "simple"]
            self.assertEqual(len(rows), 1, rows)
            self.assertEqual(rows[0][:3], ("simple", "1", "UNAVAILABLE"))
            self.assertTrue(rows[0][3].startswith(
                "Invalid argument: unable to find backend library for backend "
                "'no_such_backend'"), rows)
        finally:
            self.stub.RepositoryModelLoad(
                pb.RepositoryModelLoadRequest(model_name="simple"), timeout=30)

    def index(self):
        return [(m.name, m.version, m.state, m.reason) for m in self.stub.RepositoryIndex(
            pb.RepositoryIndexRequest(), timeout=30).models]

    def test_input_count(self):
        text = ("expected 2 inputs but got 1 inputs for model 'simple'. Got inputs "
                "['INPUT0'], but missing required inputs ['INPUT1']. Please provide all "
                "required inputs.")
        self.infer_fails(infer_request("simple", INPUTS[:1]), E.INVALID_ARGUMENT, text)
        self.http_fails("POST", "/v2/models/simple/infer",
                        {"inputs": [http_input("INPUT0", [1, 16], list(range(16)))]}, 400,
                        text)
        self.infer_fails(infer_request("simple", INPUTS + [("INPUT9", "INT32", A)]),
                         E.INVALID_ARGUMENT,
                         "expected 2 inputs but got 3 inputs for model 'simple'. Got "
                         "inputs ['INPUT0','INPUT1','INPUT9'], but missing required inputs "
                         "[]. Please provide all required inputs.")

    def test_inputs_and_outputs(self):
        self.infer_fails(infer_request("simple", [INPUTS[0], ("INPUT9", "INT32", A)]),
                         E.INVALID_ARGUMENT,
                         "unexpected inference input 'INPUT9' for model 'simple'")
        self.infer_fails(infer_request("simple", [("INPUT0", "INT32", A[:, :15]),
                                                  INPUTS[1]]),
                         E.INVALID_ARGUMENT,
                         "unexpected shape for input 'INPUT0' for model 'simple'. "
                         "Expected [-1,16], got [1,15]. " + BATCH_NOTE)
        self.infer_fails(infer_request("simple", [("INPUT0", "FP32", A.astype(np.float32)),
                                                  INPUTS[1]]),
                         E.INVALID_ARGUMENT,
                         "inference input 'INPUT0' data-type is 'FP32', but model "
                         "'simple' expects 'INT32'")
        req = infer_request("simple", INPUTS)
        req.raw_input_contents[0] = req.raw_input_contents[0][:-4]
        self.infer_fails(req, E.INVALID_ARGUMENT,
                         "input byte size mismatch for input 'INPUT0' for model 'simple'. "
                         "Expected 64, got 60")
        self.infer_fails(infer_request("simple", INPUTS, outputs=["OUTPUT7"]),
                         E.INVALID_ARGUMENT,
                         "unexpected inference output 'OUTPUT7' for model 'simple'")
        self.infer_fails(infer_request("simple", INPUTS + [INPUTS[0]]),
                         E.INVALID_ARGUMENT,
                         "input 'INPUT0' already exists in request for model 'simple'")
        big = np.zeros((9, 16), dtype=np.int32)
        self.infer_fails(infer_request("simple", [("INPUT0", "INT32", big),
                                                  ("INPUT1", "INT32", big)]),
                         E.INVALID_ARGUMENT,
                         "inference request batch-size must be <= 8 for 'simple'")


if __name__ == "__main__":
    harness.main()
