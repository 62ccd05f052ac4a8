"""The HTTP/REST frontend's server (issue 18, first part): health and
readiness endpoints as KServe v2 and Triton answer them, Triton's error
bodies, unknown paths and methods, the body limit, keep-alive under load,
several loop threads on one port, and a clean stop with connections open.
"""

import gzip
import http.client
import json
import os
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import zlib

import numpy as np
import requests

import harness


class HttpServerTest(harness.ServerTestCase):
    ARGS = ("--allow-http=true", "--http-address=127.0.0.1", "--http-port=0",
            "--http-thread-count=3", "--http-max-input-size=4096")

    def get(self, path, **kw):
        return requests.get(self.server.http_url + path, timeout=10, **kw)

    def test_live_and_ready(self):
        for path in ("/v2/health/live", "/v2/health/ready"):
            r = self.get(path)
            self.assertEqual(r.status_code, 200, path)
            self.assertEqual(r.content, b"", path)

    def test_model_ready(self):
        self.assertEqual(self.get("/v2/models/simple/ready").status_code, 200)
        self.assertEqual(self.get("/v2/models/simple/versions/1/ready").status_code, 200)
        self.assertEqual(self.get("/v2/models/simple/versions/7/ready").status_code, 400)
        self.assertEqual(self.get("/v2/models/no_such_model/ready").status_code, 400)

    def test_bad_version_is_an_error_body(self):
        r = self.get("/v2/models/simple/versions/x/ready")
        self.assertEqual(r.status_code, 400)
        self.assertEqual(r.headers["Content-Type"], "application/json")
        self.assertEqual(r.json()["error"],
                         "failed to get model version from specified version string 'x' "
                         "(details: stol), version should be an integral value > 0")

    def test_unknown_paths(self):
        for path in ("/", "/v1/health/live", "/v2/nothing", "/v2/health/dead",
                     "/v2/models/simple/ready/more", "/" + "a/" * 50):
            r = self.get(path)
            self.assertEqual(r.status_code, 404, path)
            self.assertEqual(r.json(), {"error": "Not Found"}, path)

    def test_wrong_method(self):
        r = requests.post(self.server.http_url + "/v2/health/live", timeout=10)
        self.assertEqual(r.status_code, 405)
        self.assertEqual(r.json(), {"error": "Method Not Allowed"})

    def test_body_over_the_limit(self):
        r = requests.post(self.server.http_url + "/v2/models/simple/infer",
                          data=b"x" * 5000, timeout=10)
        self.assertEqual(r.status_code, 413)
        # The server goes on serving.
        self.assertEqual(self.get("/v2/health/live").status_code, 200)

    def test_keep_alive_and_pipelining(self):
        """Many requests on one connection, then several written at once."""
        c = http.client.HTTPConnection("127.0.0.1", self.server.http_port, timeout=10)
        for _ in range(200):
            c.request("GET", "/v2/health/ready")
            r = c.getresponse()
            r.read()
            self.assertEqual(r.status, 200)
        c.close()
        s = socket.create_connection(("127.0.0.1", self.server.http_port), timeout=10)
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n" * 20)
        got = b""
        while got.count(b"HTTP/1.1 200") < 20:
            chunk = s.recv(65536)
            self.assertTrue(chunk, got)
            got += chunk
        s.close()

    def test_concurrent_clients(self):
        errors = []

        def client():
            with requests.Session() as session:
                for _ in range(100):
                    r = session.get(self.server.http_url + "/v2/models/simple/ready",
                                    timeout=10)
                    if r.status_code != 200:
                        errors.append(r.status_code)

        threads = [threading.Thread(target=client) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


def simple_body(a, b, outputs=None, binary=False):
    """A KServe v2 JSON body for `simple` (INT32 [1, 16] inputs), with the
    inputs as JSON data or as binary parts after the header."""
    inputs, parts = [], b""
    for name, arr in (("INPUT0", a), ("INPUT1", b)):
        t = {"name": name, "datatype": "INT32", "shape": list(arr.shape)}
        if binary:
            t["parameters"] = {"binary_data_size": arr.nbytes}
            parts += arr.tobytes()
        else:
            t["data"] = arr.flatten().tolist()
        inputs.append(t)
    body = {"inputs": inputs}
    if outputs is not None:
        body["outputs"] = [{"name": n, "parameters": {"binary_data": binary}}
                           for n in outputs]
    header = json.dumps(body).encode()
    return header + parts, len(header)


class HttpInferTest(harness.ServerTestCase):
    ARGS = ("--allow-http=true", "--http-address=127.0.0.1", "--http-port=0")

    def post(self, path, data, headers=None):
        return requests.post(self.server.http_url + path, data=data, headers=headers,
                             timeout=30)

    def test_json_in_json_out(self):
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        b = np.full((1, 16), 3, dtype=np.int32)
        body, _ = simple_body(a, b)
        r = self.post("/v2/models/simple/infer", body)
        self.assertEqual(r.status_code, 200, r.text)
        out = {o["name"]: o for o in r.json()["outputs"]}
        self.assertEqual(out["OUTPUT0"]["data"], (a + b).flatten().tolist())
        self.assertEqual(out["OUTPUT1"]["data"], (a - b).flatten().tolist())
        self.assertEqual(out["OUTPUT0"]["shape"], [1, 16])
        self.assertEqual(r.json()["model_name"], "simple")

    def test_binary_in_binary_out(self):
        a = np.arange(16, dtype=np.int32).reshape(1, 16) - 8
        b = np.arange(16, dtype=np.int32).reshape(1, 16) * 7
        body, header_len = simple_body(a, b, outputs=["OUTPUT1"], binary=True)
        r = self.post("/v2/models/simple/infer", body,
                      {"Inference-Header-Content-Length": str(header_len)})
        self.assertEqual(r.status_code, 200, r.text)
        n = int(r.headers["Inference-Header-Content-Length"])
        header = json.loads(r.content[:n])
        self.assertEqual([o["name"] for o in header["outputs"]], ["OUTPUT1"])
        self.assertEqual(header["outputs"][0]["parameters"]["binary_data_size"], 64)
        got = np.frombuffer(r.content[n:], dtype=np.int32).reshape(1, 16)
        np.testing.assert_array_equal(got, a - b)

    def test_ensemble_over_http(self):
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        b = np.ones((1, 16), dtype=np.int32)
        body, _ = simple_body(a, b)
        r = self.post("/v2/models/simple_ensemble/infer", body)
        self.assertEqual(r.status_code, 200, r.text)
        out = {o["name"]: o["data"] for o in r.json()["outputs"]}
        self.assertEqual(out["OUTPUT0"], (2 * a).flatten().tolist())

    def test_refusals(self):
        cases = [
            ("/v2/models/simple/infer", b"{not json", 400),
            ("/v2/models/simple/infer", b'{"inputs": [{"name": "INPUT0", "datatype": '
             b'"INT32", "shape": [1, 16], "data": [1, 2]}]}', 400),
            ("/v2/models/no_such_model/infer", b"{}", None),
            ("/v2/models/repeat_int32/infer", b"{}", 501),
        ]
        for path, body, status in cases:
            r = self.post(path, body)
            self.assertGreaterEqual(r.status_code, 400, (path, body))
            if status is not None:
                self.assertEqual(r.status_code, status, (path, r.text))
            self.assertIn("error", r.json())
        r = self.post("/v2/models/simple/infer", b"{}",
                      {"Inference-Header-Content-Length": "99"})
        self.assertEqual(r.status_code, 400)
        r = requests.get(self.server.http_url + "/v2/models/simple/infer", timeout=10)
        self.assertEqual(r.status_code, 405)

    def test_compressed_request_bodies(self):
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        b = np.full((1, 16), 2, dtype=np.int32)
        body, _ = simple_body(a, b, outputs=["OUTPUT0"])
        for enc, data in (("gzip", gzip.compress(body)), ("deflate", zlib.compress(body))):
            r = self.post("/v2/models/simple/infer", data, {"Content-Encoding": enc})
            self.assertEqual(r.status_code, 200, (enc, r.text))
            self.assertEqual(r.json()["outputs"][0]["data"], (a + b).ravel().tolist())
        r = self.post("/v2/models/simple/infer", body, {"Content-Encoding": "br"})
        self.assertEqual(r.status_code, 400)
        self.assertIn("unsupported Content-Encoding", r.json()["error"])
        r = self.post("/v2/models/simple/infer", b"\x1f\x8bnot gzip at all",
                      {"Content-Encoding": "gzip"})
        self.assertEqual(r.status_code, 400)
        self.assertIn("could not be decompressed", r.json()["error"])

    def test_compressed_answers(self):
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        body, _ = simple_body(a, a)
        for enc, unpack in (("gzip", gzip.decompress), ("deflate", zlib.decompress)):
            r = requests.post(self.server.http_url + "/v2/models/simple/infer", data=body,
                              headers={"Accept-Encoding": enc}, timeout=30, stream=True)
            self.assertEqual(r.status_code, 200)
            self.assertEqual(r.headers["Content-Encoding"], enc)
            answer = json.loads(unpack(r.raw.read()))
            self.assertEqual(answer["outputs"][0]["data"], (2 * a).ravel().tolist())

    def test_many_concurrent_requests(self):
        errors = []

        def client(seed):
            rng = np.random.default_rng(seed)
            with requests.Session() as session:
                for _ in range(50):
                    a = rng.integers(-100, 100, (1, 16), dtype=np.int32)
                    b = rng.integers(-100, 100, (1, 16), dtype=np.int32)
                    body, n = simple_body(a, b, outputs=["OUTPUT0"], binary=True)
                    r = session.post(self.server.http_url + "/v2/models/simple/infer",
                                     data=body, timeout=30,
                                     headers={"Inference-Header-Content-Length": str(n)})
                    k = int(r.headers.get("Inference-Header-Content-Length", 0))
                    got = np.frombuffer(r.content[k:], dtype=np.int32)
                    if r.status_code != 200 or not np.array_equal(got, (a + b).ravel()):
                        errors.append(r.status_code)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


class HttpClientToolsTest(harness.ServerTestCase):
    """Debian's curl as a client, percent-encoded names, and hostile
    headers."""
    ARGS = ("--http-address=127.0.0.1", "--http-port=0")

    def curl(self, *args):
        p = subprocess.run(["curl", "-s", "-o", "-", "-w", "\n%{http_code}"] + list(args),
                           stdout=subprocess.PIPE, timeout=30, check=True)
        body, _, code = p.stdout.rpartition(b"\n")
        return int(code), body

    def test_curl_health_infer_and_metadata(self):
        url = self.server.http_url
        self.assertEqual(self.curl(url + "/v2/health/ready")[0], 200)
        body = json.dumps({"inputs": [
            {"name": n, "datatype": "INT32", "shape": [1, 16], "data": list(range(16))}
            for n in ("INPUT0", "INPUT1")]})
        code, out = self.curl("-X", "POST", "-d", body, url + "/v2/models/simple/infer")
        self.assertEqual(code, 200, out)
        outputs = {o["name"]: o["data"] for o in json.loads(out)["outputs"]}
        self.assertEqual(outputs["OUTPUT0"], [2 * i for i in range(16)])
        code, out = self.curl(url + "/v2/models/simple")
        self.assertEqual((code, json.loads(out)["name"]), (200, "simple"))

    def test_percent_encoded_model_name(self):
        r = requests.get(self.server.http_url + "/v2/models/simple%5Fidentity/ready",
                         timeout=10)
        self.assertEqual(r.status_code, 200)

    def test_oversized_headers(self):
        """h2o bounds a request's head (about 420 KB in 2.2.5: 8 KiB plus 4 KiB
        per header, 100 headers): past it the request is refused."""
        s = socket.create_connection(("127.0.0.1", self.server.http_port), timeout=10)
        try:
            s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Big: " +
                      b"a" * 1000000 + b"\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (ConnectionResetError, socket.timeout):
            pass
        s.close()
        self.assertNotIn(b"HTTP/1.1 200", got)
        r = requests.get(self.server.http_url + "/v2/health/live", timeout=10)
        self.assertEqual(r.status_code, 200)


def labels_repo():
    """An FP32 identity model whose output has a labels file, and one whose
    labels file would lie outside its folder."""
    root = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    for name, label_file in (("scores", "labels.txt"), ("escaping", "../labels.txt")):
        os.makedirs(os.path.join(root, name, "1"))
        with open(os.path.join(root, name, "config.pbtxt"), "w") as f:
            f.write('backend: "identity"\nmax_batch_size: 0\n'
                    'input [{ name: "INPUT0" data_type: TYPE_FP32 dims: [4] }]\n'
                    'output [{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [4] '
                    'label_filename: "%s" }]\n' % label_file)
    with open(os.path.join(root, "scores", "labels.txt"), "w") as f:
        f.write("cat\ndog\r\nbird\n")  # three labels for four classes
    return root


class HttpClassificationTest(harness.ServerTestCase):
    """Triton's classification extension with label_filename labels."""
    ARGS = ("--http-address=127.0.0.1", "--http-port=0", "--exit-on-error=false")
    REPO = labels_repo()

    def test_top_k_with_labels(self):
        body = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4],
                            "data": [0.1, 0.7, 0.2, 0.9]}],
                "outputs": [{"name": "OUTPUT0", "parameters": {"classification": 3}}]}
        r = requests.post(self.server.http_url + "/v2/models/scores/infer", json=body,
                          timeout=30)
        self.assertEqual(r.status_code, 200, r.text)
        out = r.json()["outputs"][0]
        self.assertEqual(out["datatype"], "BYTES")
        self.assertEqual(out["data"], ["0.900000:3", "0.700000:1:dog", "0.200000:2:bird"])

    def test_labels_outside_the_folder_fail_the_load(self):
        idx = self.stub.RepositoryIndex(harness.grpc_service_pb2.RepositoryIndexRequest())
        reasons = {m.name: m.reason for m in idx.models}
        self.assertIn("must name a file inside the model's folder", reasons["escaping"])


class HttpGenerateTest(harness.ServerTestCase):
    """Triton's generate extension: flat JSON in and out, one answer from
    /generate, server-sent events from /generate_stream."""
    ARGS = ("--allow-http=true", "--http-address=127.0.0.1", "--http-port=0")

    def post(self, path, body, **kw):
        return requests.post(self.server.http_url + path, json=body, timeout=30, **kw)

    def test_generate_one_answer(self):
        r = self.post("/v2/models/simple_identity/generate", {"INPUT0": ["hello"]})
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json()["OUTPUT0"], "hello")
        r = self.post("/v2/models/repeat_int32/generate",
                      {"IN": [7], "DELAY": [0], "WAIT": [0]})
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual((r.json()["OUT"], r.json()["IDX"]), (7, 0))

    def test_generate_refuses_many_or_no_answers(self):
        r = self.post("/v2/models/repeat_int32/generate",
                      {"IN": [1, 2], "DELAY": [0, 0], "WAIT": [0]})
        self.assertEqual(r.status_code, 400)
        self.assertIn("generate_stream", r.json()["error"])
        r = self.post("/v2/models/repeat_int32/generate", {"IN": [], "DELAY": [],
                                                           "WAIT": [0]})
        self.assertEqual(r.status_code, 400)

    def test_generate_stream_events_in_order(self):
        values = list(range(10, 30))
        r = self.post("/v2/models/repeat_int32/generate_stream",
                      {"IN": values, "DELAY": [5] * len(values), "WAIT": [0]}, stream=True)
        self.assertEqual(r.status_code, 200)
        self.assertTrue(r.headers["Content-Type"].startswith("text/event-stream"))
        events = [json.loads(line[len(b"data: "):]) for line in r.iter_lines()
                  if line.startswith(b"data: ")]
        self.assertEqual([e["OUT"] for e in events], values)
        self.assertEqual([e["IDX"] for e in events], list(range(len(values))))

    def test_generate_stream_errors(self):
        r = self.post("/v2/models/repeat_int32/generate_stream", {"IN": [1]})
        self.assertEqual(r.status_code, 400)
        self.assertIn("DELAY", r.json()["error"])
        r = self.post("/v2/models/repeat_int32/generate_stream",
                      {"IN": [], "DELAY": [], "WAIT": [0]}, stream=True)
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.content, b"")

    def test_client_leaving_mid_stream(self):
        s = socket.create_connection(("127.0.0.1", self.server.http_port), timeout=10)
        body = json.dumps({"IN": list(range(50)), "DELAY": [20] * 50,
                           "WAIT": [0]}).encode()
        s.sendall(b"POST /v2/models/repeat_int32/generate_stream HTTP/1.1\r\n"
                  b"Host: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        self.assertIn(b"data: ", s.recv(65536))
        s.close()  # the rest of the stream has nobody to go to
        r = self.post("/v2/models/simple_identity/generate", {"INPUT0": ["still here"]})
        self.assertEqual(r.json()["OUTPUT0"], "still here")


class HttpBombTest(harness.ServerTestCase):
    ARGS = ("--allow-http=true", "--http-address=127.0.0.1", "--http-port=0",
            "--http-max-input-size=100000")

    def test_a_body_that_inflates_past_the_limit(self):
        bomb = zlib.compress(b"{" + b" " * 50_000_000 + b"}")
        self.assertLess(len(bomb), 100000)
        r = requests.post(self.server.http_url + "/v2/models/simple/infer", data=bomb,
                          headers={"Content-Encoding": "deflate"}, timeout=30)
        self.assertGreaterEqual(r.status_code, 400)
        self.assertIn("--http-max-input-size=100000", r.json()["error"])
        self.assertLess(self.server.rss_mib(), 400)


class HttpViewsTest(harness.ServerTestCase):
    """Metadata, config, statistics and the repository over HTTP: the same
    builders as the gRPC side (server/views), Triton's JSON."""
    ARGS = ("--allow-http=true", "--http-address=127.0.0.1", "--http-port=0",
            "--model-control-mode=explicit", "--load-model=simple")

    def url(self, path):
        return self.server.http_url + path

    def test_server_and_model_metadata(self):
        r = requests.get(self.url("/v2"), timeout=10)
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.json()["name"], "triton")
        self.assertTrue(r.json()["extensions"][-1].startswith("nereid("))
        self.assertIn("statistics", r.json()["extensions"])
        m = requests.get(self.url("/v2/models/simple"), timeout=10).json()
        self.assertEqual(m["name"], "simple")
        self.assertEqual(m["versions"], ["1"])
        self.assertEqual(m["inputs"][0], {"name": "INPUT0", "datatype": "INT32",
                                          "shape": [-1, 16]})
        r = requests.get(self.url("/v2/models/no_such_model"), timeout=10)
        self.assertGreaterEqual(r.status_code, 400)
        self.assertIn("no_such_model", r.json()["error"])

    def test_config_and_stats(self):
        c = requests.get(self.url("/v2/models/simple/versions/1/config"), timeout=10).json()
        self.assertEqual((c["name"], c["backend"], c["max_batch_size"]),
                         ("simple", "addsub", 8))
        self.stub.ModelInfer(harness.simple_request())
        # The backend reports a request's statistics after its response.
        deadline = time.time() + 10
        while True:
            st = requests.get(self.url("/v2/models/simple/stats"), timeout=10).json()
            entry = st["model_stats"][0]
            if entry["inference_stats"]["success"]["count"] >= 1 or time.time() > deadline:
                break
            time.sleep(0.01)
        self.assertEqual(entry["name"], "simple")
        self.assertGreaterEqual(entry["inference_stats"]["success"]["count"], 1)
        self.assertIsInstance(entry["inference_count"], int)
        every = requests.get(self.url("/v2/models/stats"), timeout=10).json()
        self.assertIn("simple", [e["name"] for e in every["model_stats"]])

    def test_repository_load_index_unload(self):
        post = lambda path, **kw: requests.post(self.url(path), timeout=60, **kw)
        r = post("/v2/repository/models/simple_identity/load")
        self.assertEqual(r.status_code, 200, r.text)
        ready = post("/v2/repository/index", json={"ready": True}).json()
        self.assertIn({"name": "simple_identity", "version": "1", "state": "READY"}, ready)
        r = post("/v2/repository/models/simple_identity/unload",
                 json={"parameters": {"unload_dependents": False}})
        self.assertEqual(r.status_code, 200, r.text)
        names = [e["name"] for e in post("/v2/repository/index",
                                          json={"ready": True}).json()]
        self.assertNotIn("simple_identity", names)
        r = post("/v2/repository/models/no_such_folder/load")
        self.assertGreaterEqual(r.status_code, 400)
        self.assertIn("no_such_folder", r.json()["error"])
        r = post("/v2/repository/models/simple/load", data=b"{broken")
        self.assertEqual(r.status_code, 400)
        r = requests.get(self.url("/v2/repository/index"), timeout=10)
        self.assertEqual(r.status_code, 405)


class HttpStopTest(harness.ServerTestCase):
    ARGS = ("--allow-http=true", "--http-address=127.0.0.1", "--http-port=0")

    def test_stops_clean_with_idle_connections_open(self):
        conns = [socket.create_connection(("127.0.0.1", self.server.http_port))
                 for _ in range(5)]
        conns[0].sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        self.assertIn(b"200", conns[0].recv(4096))
        harness.stop_clean(self.server)
        for c in conns:
            c.close()

    @classmethod
    def tearDownClass(cls):
        pass  # the test stopped it


class HttpOnlyTest(unittest.TestCase):
    def test_grpc_off_http_serves(self):
        """--allow-grpc=false, as tritonserver: HTTP and metrics only."""
        server = harness.Server("--allow-grpc=false", repo=harness.EXAMPLES,
                                expect_start=False)
        try:
            self.assertTrue(server.wait_text("Started HTTPService", 30), server.text())
            self.assertTrue(server.wait_text("gRPC is off (--allow-grpc=false)"),
                            server.text())
            self.assertNotIn("Started GRPCInferenceService", server.text())
            url = "http://127.0.0.1:%d" % server.http_port
            self.assertEqual(requests.get(url + "/v2/health/ready", timeout=10).status_code,
                             200)
            a = np.arange(16, dtype=np.int32).reshape(1, 16)
            body, _ = simple_body(a, a)
            r = requests.post(url + "/v2/models/simple/infer", data=body, timeout=10)
            self.assertEqual(r.status_code, 200, r.text)
            out = {o["name"]: o["data"] for o in r.json()["outputs"]}
            self.assertEqual(out["OUTPUT0"], (a + a).flatten().tolist())
        finally:
            harness.stop_clean(server)


class HttpPortTakenTest(unittest.TestCase):
    def test_a_port_in_use_fails_start_up_with_the_address(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        server = harness.Server("--allow-http=true", "--http-address=127.0.0.1",
                                "--http-port=%d" % port, expect_start=False)
        code = server.wait(30)
        s.close()
        self.assertEqual(code, 1, server.text())
        self.assertIn("cannot listen on 127.0.0.1:%d" % port, server.text())


if __name__ == "__main__":
    harness.main()
