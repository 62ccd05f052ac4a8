"""End to end: server-wide RPCs, health, errors that must not hurt the
server, start-up failures, and graceful shutdown."""

import os
import signal
import tempfile
import threading
import time
import unittest

import grpc

import harness
from harness import Server, run_nereid
import grpc_service_pb2 as pb
import health_pb2


class ServerRpcs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, "exit code %d\n%s" % (code, cls.server.text())

    def test_live_ready(self):
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest()).live)
        self.assertTrue(self.stub.ServerReady(pb.ServerReadyRequest()).ready)

    def test_metadata(self):
        md = self.stub.ServerMetadata(pb.ServerMetadataRequest())
        # Triton's name and release, so that clients that check them pass.
        self.assertEqual(md.name, "triton")
        self.assertRegex(md.version, r"^2\.\d+\.\d+$")
        # Only extensions that really work are listed, then Nereid's own.
        self.assertEqual(list(md.extensions)[:-1],
                         ["model_repository", "model_repository(unload_dependents)",
                          "model_configuration", "sequence", "statistics",
                          "system_shared_memory", "cuda_shared_memory", "logging", "trace"])
        self.assertRegex(md.extensions[-1], r"^nereid\(\d+\.\d+\.\d+\)$")

    def test_health_check(self):
        health = self.server.health()
        for service in ("", "inference.GRPCInferenceService"):
            r = health.Check(health_pb2.HealthCheckRequest(service=service))
            self.assertEqual(r.status, health_pb2.HealthCheckResponse.SERVING)
        with self.assertRaises(grpc.RpcError) as cm:
            health.Check(health_pb2.HealthCheckRequest(service="no.Such"))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertIn("no.Such", cm.exception.details())

    def test_health_watch_reports_serving(self):
        stream = self.server.health().Watch(health_pb2.HealthCheckRequest(),
                                            timeout=10)
        first = next(stream)
        self.assertEqual(first.status, health_pb2.HealthCheckResponse.SERVING)
        stream.cancel()

    def test_health_watch_unknown_service(self):
        stream = self.server.health().Watch(
            health_pb2.HealthCheckRequest(service="no.Such"), timeout=10)
        self.assertEqual(next(stream).status,
                         health_pb2.HealthCheckResponse.SERVICE_UNKNOWN)
        stream.cancel()

    def test_every_unary_rpc_is_served(self):
        # All of Triton's unary RPCs answer: an empty request gets an answer
        # or a precise error, never UNIMPLEMENTED.
        channel = self.server.connect()
        for method in ("ServerLive", "ServerReady", "ServerMetadata", "ModelReady",
                       "ModelMetadata", "ModelInfer", "ModelConfig", "ModelStatistics",
                       "RepositoryIndex", "RepositoryModelLoad", "RepositoryModelUnload",
                       "SystemSharedMemoryStatus", "SystemSharedMemoryRegister",
                       "SystemSharedMemoryUnregister", "CudaSharedMemoryStatus",
                       "CudaSharedMemoryRegister", "CudaSharedMemoryUnregister",
                       "TraceSetting", "LogSettings"):
            call = channel.unary_unary("/inference.GRPCInferenceService/" + method)
            try:
                call(b"", timeout=10)
            except grpc.RpcError as e:
                self.assertNotEqual(e.code(), grpc.StatusCode.UNIMPLEMENTED,
                                    method + ": " + e.details())

    def test_unregistered_method(self):
        channel = self.server.connect()
        for path in ("/inference.GRPCInferenceService/NoSuchRpc", "/x.Y/Z"):
            call = channel.unary_unary(path)
            with self.assertRaises(grpc.RpcError) as cm:
                call(b"", timeout=10)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
            self.assertIn(path, cm.exception.details())

    def test_malformed_payload(self):
        channel = self.server.connect()
        bad = [b"\xff\xff\xff\xff\xff", b"\x0a\x05ab", b"\x08"]
        for method in ("ServerLive", "ServerReady", "ServerMetadata"):
            call = channel.unary_unary("/inference.GRPCInferenceService/" + method)
            for payload in bad:
                with self.assertRaises(grpc.RpcError) as cm:
                    call(payload, timeout=10)
                self.assertEqual(cm.exception.code(),
                                 grpc.StatusCode.INVALID_ARGUMENT, method)
                self.assertIn(method, cm.exception.details())
        check = channel.unary_unary("/grpc.health.v1.Health/Check")
        with self.assertRaises(grpc.RpcError) as cm:
            check(b"\x0a\x09abc", timeout=10)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        # The server is unhurt.
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest()).live)

    def test_many_concurrent_clients(self):
        errors = []
        count = [0]
        lock = threading.Lock()

        def client(n):
            try:
                with grpc.insecure_channel(self.server.address) as ch:
                    stub = pb_grpc.GRPCInferenceServiceStub(ch)
                    health = health_pb2_grpc.HealthStub(ch)
                    for i in range(n):
                        assert stub.ServerLive(pb.ServerLiveRequest()).live
                        assert stub.ServerReady(pb.ServerReadyRequest()).ready
                        assert stub.ServerMetadata(
                            pb.ServerMetadataRequest()).name == "triton"
                        assert health.Check(health_pb2.HealthCheckRequest()).status \
                            == health_pb2.HealthCheckResponse.SERVING
                        with lock:
                            count[0] += 4
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        import grpc_service_pb2_grpc as pb_grpc
        import health_pb2_grpc
        threads = [threading.Thread(target=client, args=(200,)) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(errors, [])
        self.assertEqual(count[0], 16 * 200 * 4)


class StartupErrors(unittest.TestCase):
    def test_missing_repository(self):
        code, out = run_nereid("--model-repository=/no/such/repo", "--grpc-port=0")
        self.assertNotEqual(code, 0)
        self.assertIn("/no/such/repo", out)

    def test_no_repository(self):
        code, out = run_nereid("--grpc-port=0")
        self.assertNotEqual(code, 0)
        self.assertIn("--model-repository", out)

    def test_unknown_flag(self):
        code, out = run_nereid("--model-repository=" + harness.empty_repo(), "--frobnicate=3")
        self.assertNotEqual(code, 0)
        self.assertIn("--frobnicate", out)
        self.assertIn("Usage", out)

    def test_help(self):
        code, out = run_nereid("--help")
        self.assertEqual(code, 0)
        self.assertIn("--grpc-port", out)

    def test_port_in_use(self):
        first = Server()
        try:
            code, out = run_nereid("--model-repository=" + harness.empty_repo(),
                                   "--grpc-address=127.0.0.1",
                                   "--grpc-port=%d" % first.port)
            self.assertNotEqual(code, 0)
            self.assertIn(str(first.port), out)
        finally:
            self.assertEqual(first.stop(), 0)


class Shutdown(unittest.TestCase):
    def test_sigint_exits_zero(self):
        server = Server()
        self.assertTrue(server.inference().ServerLive(pb.ServerLiveRequest()).live)
        self.assertEqual(server.stop(signal.SIGINT), 0)
        self.assertIn("SIGINT", server.text())

    def test_watch_sees_not_serving_then_ends(self):
        server = Server("--exit-timeout-secs=20")
        stream = server.health().Watch(health_pb2.HealthCheckRequest(), timeout=60)
        self.assertEqual(next(stream).status,
                         health_pb2.HealthCheckResponse.SERVING)
        start = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        self.assertEqual(next(stream).status,
                         health_pb2.HealthCheckResponse.NOT_SERVING)
        with self.assertRaises(grpc.RpcError) as cm:
            next(stream)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(server.stop(), 0)
        # The watch ended itself: shutdown did not wait for the exit timeout.
        self.assertLess(time.monotonic() - start, 10 * harness.SLOW)

    def test_shutdown_under_load(self):
        """Calls in flight at SIGTERM either complete or fail cleanly; none
        hangs; the process exits 0."""
        server = Server("--log-verbose=2")  # per-call lines, for the report below
        stop = threading.Event()
        outcomes = {"ok": 0, "refused": 0}
        unexpected = []
        sent = [time.monotonic()]  # when SIGTERM was sent
        lock = threading.Lock()

        def client():
            with grpc.insecure_channel(server.address) as ch:
                stub = __import__("grpc_service_pb2_grpc").GRPCInferenceServiceStub(ch)
                while not stop.is_set():
                    try:
                        stub.ServerLive(pb.ServerLiveRequest(), timeout=10)
                        key = "ok"
                    except grpc.RpcError as e:
                        # UNAVAILABLE: refused after shutdown began. CANCELLED:
                        # arrived but not yet matched to a requested call when
                        # shutdown began; gRPC core drops those itself.
                        if e.code() not in (grpc.StatusCode.UNAVAILABLE,
                                            grpc.StatusCode.CANCELLED):
                            # When, relative to SIGTERM, tells a stranded call
                            # (server side) from a stalled reconnect (client).
                            with lock:
                                unexpected.append((e.code(), e.details(),
                                                   round(time.monotonic() - sent[0], 3)))
                        key = "refused"
                    with lock:
                        outcomes[key] += 1
                    if key == "refused":
                        return

        threads = [threading.Thread(target=client) for _ in range(8)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        sent[0] = time.monotonic()
        self.assertEqual(server.stop(timeout=30), 0, server.text())
        exited_after = time.monotonic() - sent[0]
        stop.set()
        for t in threads:
            t.join(30)
            self.assertFalse(t.is_alive())
        if unexpected:  # keep the whole server log for the report
            out = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR", tempfile.gettempdir())
            with open(os.path.join(out, "shutdown_server.log"), "w") as f:
                f.write(server.text())
        self.assertEqual(unexpected, [], "server exited %.3f s after SIGTERM; log:\n%s"
                         % (exited_after, server.text()[-4000:]))
        self.assertGreater(outcomes["ok"], 0)


if __name__ == "__main__":
    harness.main()
