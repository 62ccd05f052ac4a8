"""Restricted groups, as tritonserver's --grpc-restricted-protocol and
--http-restricted-api: every gRPC method and every HTTP endpoint of each
group refuses a request without its header (or with a wrong value, or with
another group's header) in Triton's words, and serves it with the header;
grpc.health.v1 stays open for Kubernetes probes; a bad flag stops the
start-up with Triton's text."""

import json
import unittest

import grpc
import requests

import harness
from harness import Server, run_nereid
import grpc_service_pb2 as pb
import health_pb2

PREFIX = "triton-grpc-protocol-"
GRPC_FLAGS = ("--grpc-restricted-protocol=health,metadata:hk=hv",
              "--grpc-restricted-protocol=inference:Infer-Key=i=v",
              "--grpc-restricted-protocol=shared-memory,model-config,model-repository,"
              "statistics,trace,logging:ak=av")
HTTP_FLAGS = ("--http-restricted-api=health,metadata:hk=hv",
              "--http-restricted-api=inference:infer-key=iv",
              "--http-restricted-api=shared-memory,model-config,model-repository,"
              "statistics,trace,logging:ak=av")

# gRPC: method -> (request, header key as given, value).
HEALTH = ("hk", "hv")
INFER = ("Infer-Key", "i=v")
ADMIN = ("ak", "av")
GRPC_METHODS = {
    "ServerLive": (pb.ServerLiveRequest(), HEALTH),
    "ServerReady": (pb.ServerReadyRequest(), HEALTH),
    "ModelReady": (pb.ModelReadyRequest(name="simple"), HEALTH),
    "ServerMetadata": (pb.ServerMetadataRequest(), HEALTH),
    "ModelMetadata": (pb.ModelMetadataRequest(name="simple"), HEALTH),
    "ModelInfer": (harness.simple_request(), INFER),
    "ModelConfig": (pb.ModelConfigRequest(name="simple"), ADMIN),
    "ModelStatistics": (pb.ModelStatisticsRequest(name="simple"), ADMIN),
    "RepositoryIndex": (pb.RepositoryIndexRequest(), ADMIN),
    "RepositoryModelLoad": (pb.RepositoryModelLoadRequest(model_name="simple"), ADMIN),
    "RepositoryModelUnload": (pb.RepositoryModelUnloadRequest(model_name="nothing"),
                              ADMIN),
    "SystemSharedMemoryStatus": (pb.SystemSharedMemoryStatusRequest(), ADMIN),
    "SystemSharedMemoryRegister": (pb.SystemSharedMemoryRegisterRequest(name="r"), ADMIN),
    "SystemSharedMemoryUnregister": (pb.SystemSharedMemoryUnregisterRequest(name="r"),
                                     ADMIN),
    "CudaSharedMemoryStatus": (pb.CudaSharedMemoryStatusRequest(), ADMIN),
    "CudaSharedMemoryRegister": (pb.CudaSharedMemoryRegisterRequest(name="r"), ADMIN),
    "CudaSharedMemoryUnregister": (pb.CudaSharedMemoryUnregisterRequest(name="r"), ADMIN),
    "TraceSetting": (pb.TraceSettingRequest(), ADMIN),
    "LogSettings": (pb.LogSettingsRequest(), ADMIN),
}

# HTTP: (method, path, body) -> header (key, value).
HTTP_INFER_BODY = json.dumps({"inputs": [
    {"name": n, "datatype": "INT32", "shape": [1, 16], "data": list(range(16))}
    for n in ("INPUT0", "INPUT1")]})
H_HEALTH, H_INFER, H_ADMIN = ("hk", "hv"), ("infer-key", "iv"), ("ak", "av")
HTTP_ENDPOINTS = [
    ("GET", "/v2/health/live", None, H_HEALTH),
    ("GET", "/v2/health/ready", None, H_HEALTH),
    ("GET", "/v2/models/simple/ready", None, H_HEALTH),
    ("GET", "/v2/models/simple/versions/1/ready", None, H_HEALTH),
    ("GET", "/v2", None, H_HEALTH),
    ("GET", "/v2/models/simple", None, H_HEALTH),
    ("GET", "/v2/models/simple/versions/1", None, H_HEALTH),
    ("POST", "/v2/models/simple/infer", HTTP_INFER_BODY, H_INFER),
    ("POST", "/v2/models/simple/versions/1/infer", HTTP_INFER_BODY, H_INFER),
    ("POST", "/v2/models/simple/generate", "{}", H_INFER),
    ("POST", "/v2/models/simple/generate_stream", "{}", H_INFER),
    ("GET", "/v2/models/simple/config", None, H_ADMIN),
    ("GET", "/v2/models/stats", None, H_ADMIN),
    ("GET", "/v2/models/simple/stats", None, H_ADMIN),
    ("POST", "/v2/repository/index", "{}", H_ADMIN),
    ("POST", "/v2/repository/models/simple/load", "{}", H_ADMIN),
    ("POST", "/v2/repository/models/nothing/unload", "{}", H_ADMIN),
    ("GET", "/v2/systemsharedmemory/status", None, H_ADMIN),
    ("POST", "/v2/systemsharedmemory/region/r/register", "{}", H_ADMIN),
    ("POST", "/v2/systemsharedmemory/region/r/unregister", None, H_ADMIN),
    ("GET", "/v2/cudasharedmemory/status", None, H_ADMIN),
    ("POST", "/v2/cudasharedmemory/region/r/register", "{}", H_ADMIN),
    ("POST", "/v2/cudasharedmemory/unregister", None, H_ADMIN),
    ("GET", "/v2/trace/setting", None, H_ADMIN),
    ("GET", "/v2/models/simple/trace/setting", None, H_ADMIN),
    ("GET", "/v2/logging", None, H_ADMIN),
    ("POST", "/v2/logging", "{}", H_ADMIN),
]


def grpc_message(key):
    return "This protocol is restricted, expecting header '%s%s'" % (PREFIX, key)


class Restricted(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(*(GRPC_FLAGS + HTTP_FLAGS), repo=harness.EXAMPLES)
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, "exit code %d\n%s" % (code, cls.server.text())

    def call(self, method, request, metadata=None):
        return getattr(self.stub, method)(request, metadata=metadata, timeout=10)

    def assert_refused(self, method, request, key, metadata=None):
        with self.assertRaises(grpc.RpcError, msg=method) as cm:
            self.call(method, request, metadata)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE, method)
        self.assertEqual(cm.exception.details(), grpc_message(key), method)

    def assert_served(self, method, request, metadata):
        """Served: a success, or the method's own answer, never the
        restriction's."""
        try:
            self.call(method, request, metadata)
        except grpc.RpcError as e:
            self.assertNotIn("restricted", e.details() or "", method)

    def test_every_grpc_method_is_in_a_group(self):
        names = {m.name for m in
                 pb.DESCRIPTOR.services_by_name["GRPCInferenceService"].methods}
        self.assertEqual(names - {"ModelStreamInfer"}, set(GRPC_METHODS))

    def test_grpc_without_header(self):
        for method, (request, (key, _)) in GRPC_METHODS.items():
            self.assert_refused(method, request, key)

    def test_grpc_wrong_value_or_other_groups_header(self):
        for method, (request, (key, value)) in GRPC_METHODS.items():
            self.assert_refused(method, request, key,
                                [(PREFIX + key.lower(), value + "x")])
            other = ADMIN if (key, value) != ADMIN else HEALTH
            self.assert_refused(method, request, key,
                                [(PREFIX + other[0].lower(), other[1])])
            # Without the prefix, the header is not the group's.
            self.assert_refused(method, request, key, [(key.lower(), value)])

    def test_grpc_with_header(self):
        for method, (request, (key, value)) in GRPC_METHODS.items():
            self.assert_served(method, request, [(PREFIX + key.lower(), value)])
        r = self.call("ServerLive", pb.ServerLiveRequest(), [(PREFIX + "hk", "hv")])
        self.assertTrue(r.live)
        r = self.call("ModelInfer", harness.simple_request(),
                      [(PREFIX + "infer-key", "i=v")])
        self.assertEqual(len(r.raw_output_contents), 2)

    def test_stream_infer(self):
        with self.assertRaises(grpc.RpcError) as cm:
            list(self.stub.ModelStreamInfer(iter([harness.simple_request()]), timeout=10))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(cm.exception.details(), grpc_message("Infer-Key"))
        replies = list(self.stub.ModelStreamInfer(
            iter([harness.simple_request()] * 3), timeout=10,
            metadata=[(PREFIX + "infer-key", "i=v")]))
        self.assertEqual(len(replies), 3)
        for r in replies:
            self.assertEqual(r.error_message, "")

    def test_grpc_health_stays_open(self):
        health = self.server.health()
        r = health.Check(health_pb2.HealthCheckRequest(), timeout=10)
        self.assertEqual(r.status, health_pb2.HealthCheckResponse.SERVING)
        watch = health.Watch(health_pb2.HealthCheckRequest(), timeout=10)
        self.assertEqual(next(watch).status, health_pb2.HealthCheckResponse.SERVING)
        watch.cancel()

    def http(self, method, path, body, headers=None):
        return requests.request(method, self.server.http_url + path, data=body,
                                headers=headers or {}, timeout=10)

    def test_http_without_header(self):
        for method, path, body, (key, _) in HTTP_ENDPOINTS:
            r = self.http(method, path, body)
            self.assertEqual(r.status_code, 403, path)
            self.assertEqual(r.json(),
                             {"error": "This API is restricted, expecting header '%s'" %
                              key}, path)
            # Before the method: a wrong method is refused the same way.
            r = self.http("PUT", path, body)
            self.assertEqual(r.status_code, 403, path)

    def test_http_wrong_value(self):
        for method, path, body, (key, value) in HTTP_ENDPOINTS:
            r = self.http(method, path, body, {key: value + "x"})
            self.assertEqual(r.status_code, 403, path)
            r = self.http(method, path, body, {key: value.upper() + "x"})
            self.assertEqual(r.status_code, 403, path)

    def test_http_with_header(self):
        for method, path, body, (key, value) in HTTP_ENDPOINTS:
            # Header names are case-insensitive.
            r = self.http(method, path, body, {key.upper(): value})
            self.assertNotEqual(r.status_code, 403, path)
            self.assertNotIn(b"restricted", r.content, path)
        r = self.http("GET", "/v2/health/ready", None, {"hk": "hv"})
        self.assertEqual(r.status_code, 200)
        r = self.http("POST", "/v2/models/simple/infer", HTTP_INFER_BODY,
                      {"infer-key": "iv"})
        self.assertEqual(r.status_code, 200)
        self.assertEqual(len(r.json()["outputs"]), 2)

    def test_http_unknown_paths_stay_404(self):
        for path in ("/v2/nothing", "/v2/models/simple/nothing", "/v1/health/live"):
            self.assertEqual(self.http("GET", path, None).status_code, 404, path)


class OnlyOneGroup(unittest.TestCase):
    """A restricted group leaves the others open, on both protocols."""

    def test_others_stay_open(self):
        server = Server("--grpc-restricted-protocol=inference:k=v",
                        "--http-restricted-api=model-repository:k=v",
                        repo=harness.EXAMPLES)
        try:
            stub = server.inference()
            self.assertTrue(stub.ServerLive(pb.ServerLiveRequest(), timeout=10).live)
            stub.ModelConfig(pb.ModelConfigRequest(name="simple"), timeout=10)
            with self.assertRaises(grpc.RpcError) as cm:
                stub.ModelInfer(harness.simple_request(), timeout=10)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE)
            r = requests.post(server.http_url + "/v2/models/simple/infer",
                              data=HTTP_INFER_BODY, timeout=10)
            self.assertEqual(r.status_code, 200)
            r = requests.post(server.http_url + "/v2/repository/index", timeout=10)
            self.assertEqual(r.status_code, 403)
        finally:
            self.assertEqual(server.stop(), 0, server.text())


class BadFlags(unittest.TestCase):
    def expect_failure(self, flag, text):
        code, out = run_nereid("--model-repository=" + harness.empty_repo(), flag)
        self.assertNotEqual(code, 0, out)
        self.assertIn(text, out)

    def test_parse_errors(self):
        for option in ("grpc-restricted-protocol", "http-restricted-api"):
            for bad in ("health", "health:k", ":k=v", "health:=v", "health:k="):
                self.expect_failure(
                    "--%s=%s" % (option, bad),
                    "--%s option format is '<config name>:<setting>=<value>'. Got %s" %
                    (option, bad))
            self.expect_failure("--%s=health:" % option, 'Bad option: "--%s".' % option)
        self.expect_failure("--grpc-restricted-protocol=metrics:k=v",
                            "unknown restricted protocol 'metrics'")
        self.expect_failure("--http-restricted-api=inference,infer:k=v",
                            "unknown restricted api 'infer'")

    def test_a_group_once(self):
        code, out = run_nereid("--model-repository=" + harness.empty_repo(),
                               "--grpc-restricted-protocol=health:a=1",
                               "--grpc-restricted-protocol=metadata,health:b=2")
        self.assertNotEqual(code, 0, out)
        self.assertIn("restricted protocol 'health' can not be specified in multiple "
                      "config groups", out)
        # The same group on the other protocol is another flag: allowed.
        server = Server("--grpc-restricted-protocol=health:a=1",
                        "--http-restricted-api=health:a=1")
        self.assertEqual(server.stop(), 0, server.text())


if __name__ == "__main__":
    harness.main()
