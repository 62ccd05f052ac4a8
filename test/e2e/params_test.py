"""Request parameters from clients to the backend, over gRPC (ModelInfer
and ModelStreamInfer) and HTTP: the keys Triton hands on, with their types,
reach TRITONBACKEND_RequestParameter*, the server's own keys (priority,
timeout, sequence_*, binary_data_output, triton_*) do not, and the client's
timeout reaches TRITONBACKEND_InferenceRequestTimeoutMicroseconds. The
pyshape test backend answers with what it read (PARAMS)."""

import struct

import grpc
import numpy as np
import requests

import harness
import grpc_service_pb2 as pb


def params_text(resp):
    """PARAMS of a ModelInferResponse: one BYTES element."""
    for i, out in enumerate(resp.outputs):
        if out.name == "PARAMS":
            raw = resp.raw_output_contents[i]
            n = struct.unpack_from("<I", raw)[0]
            return raw[4:4 + n].decode()
    raise AssertionError("no PARAMS in the response")


def split(text):
    """The parameters (a set: a gRPC map has no order) and the timeout."""
    params, timeout = text.split(";timeout=")
    return set(filter(None, params.split(","))), int(timeout)


def request(params):
    req = harness.int32_request("pyshape", [1, 2, 3])
    req.inputs[0].ClearField("shape")
    req.inputs[0].shape.extend([3])
    for key, value in params.items():
        p = req.parameters[key]
        if isinstance(value, bool):
            p.bool_param = value
        elif isinstance(value, int):
            p.int64_param = value
        elif isinstance(value, float):
            p.double_param = value
        elif isinstance(value, tuple):  # ("uint64", v)
            p.uint64_param = value[1]
        else:
            p.string_param = value
    return req


SENT = {"s": "hello", "n": -3, "f": True, "x": 0.5,
        "priority": 1, "timeout": 5000000, "sequence_start": False}
HANDED_ON = {"s=s:hello", "n=i:-3", "f=b:1", "x=d:0.5"}


class Params(harness.ServerTestCase):
    ARGS = ("--model-control-mode=explicit", "--load-model=pyshape",
            "--allow-http=true", "--http-address=127.0.0.1", "--http-port=0")
    REPO = harness.TEST_MODELS

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(*cls.ARGS, repo=cls.REPO,
                                    backends=harness.TEST_BACKENDS)
        cls.stub = cls.server.inference()

    def test_model_infer(self):
        resp = self.stub.ModelInfer(request(SENT), timeout=10)
        self.assertEqual(split(params_text(resp)), (HANDED_ON, 5000000))
        out = np.frombuffer(resp.raw_output_contents[0], dtype=np.int32)
        self.assertEqual(list(out), [1, 2, 3])

    def test_no_parameters(self):
        resp = self.stub.ModelInfer(request({}), timeout=10)
        self.assertEqual(params_text(resp), ";timeout=0")

    def test_stream(self):
        sent = dict(SENT, triton_enable_empty_final_response=True)
        replies = list(self.stub.ModelStreamInfer(iter([request(sent)]), timeout=10))
        self.assertEqual(len(replies), 1)
        self.assertEqual(replies[0].error_message, "")
        self.assertEqual(split(params_text(replies[0].infer_response)),
                         (HANDED_ON, 5000000))

    def test_refusals(self):
        cases = [
            ({"u": ("uint64", 1)}, "invalid value type for 'u' parameter, expected "
             "int64_param, bool_param, or string_param."),
            ({"triton_x": "1"}, "parameter keys starting with 'triton_' are reserved"),
            ({"k" * 257: 1}, "a parameter key of 257 bytes is above the limit of 256"),
        ]
        for params, text in cases:
            with self.assertRaises(grpc.RpcError) as e:
                self.stub.ModelInfer(request(params), timeout=10)
            self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn(text, e.exception.details())

    def post(self, body):
        return requests.post(self.server.http_url + "/v2/models/pyshape/infer",
                             json=body, timeout=10)

    def body(self, params):
        return {"inputs": [{"name": "INPUT0", "datatype": "INT32", "shape": [3],
                            "data": [1, 2, 3]}],
                "parameters": params}

    def test_http(self):
        r = self.post(self.body({"s": "hello", "n": -3, "f": True, "x": 0.5,
                                 "binary_data_output": False, "timeout": 7,
                                 "priority": 2}))
        self.assertEqual(r.status_code, 200, r.text)
        outs = {o["name"]: o for o in r.json()["outputs"]}
        # HTTP keeps the body's order.
        self.assertEqual(outs["PARAMS"]["data"], ["s=s:hello,n=i:-3,f=b:1,x=d:0.5;timeout=7"])
        self.assertEqual(outs["OUTPUT0"]["data"], [1, 2, 3])

    def test_http_refusals(self):
        cases = [
            ({"triton_x": 1}, "parameter keys starting with 'triton_' are reserved for "
             "Triton usage and should not be specified."),
            ({"o": [1]}, "parameter 'o' has invalid type. It should be either 'int', "
             "'bool', or 'string'."),
            ({"s": "v" * 65537}, "is a string of 65537 bytes, above the limit of 65536"),
        ]
        for params, text in cases:
            r = self.post(self.body(params))
            self.assertEqual(r.status_code, 400, r.text)
            self.assertIn(text, r.json()["error"])


if __name__ == "__main__":
    harness.main()
