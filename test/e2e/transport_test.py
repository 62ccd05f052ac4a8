"""The gRPC transport's settings, tritonserver's flags: keepalive pings
within and beyond the server's tolerance (an abusive client gets GOAWAY
too_many_pings and sees UNAVAILABLE while a well-behaved one goes on), the
concurrent-stream limit per connection, the response compression level,
connection age, and the message size limit with these settings on."""

import time
import unittest

import grpc
import numpy as np

import harness
from harness import Server
import grpc_service_pb2 as pb
import grpc_service_pb2_grpc
import health_pb2
import health_pb2_grpc

SLOW = harness.SLOW


def pinging_channel(address):
    """A client that pings every 100 ms, with or without calls or data."""
    return grpc.insecure_channel(address, options=[
        ("grpc.keepalive_time_ms", 100),
        ("grpc.keepalive_timeout_ms", 5000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_time_between_pings_ms", 10),
    ])


def idle_watch_end(channel, timeout):
    """Opens a health Watch on which nothing flows after its first answer,
    and returns how it ended: (code, details)."""
    watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(),
                                                      timeout=timeout)
    assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
    try:
        next(watch)
    except grpc.RpcError as e:
        return e.code(), e.details() or ""
    raise AssertionError("the watch sent a second answer")


class PingAbuse(unittest.TestCase):
    """Strict server: client pings at most every 10 s while no data flows,
    and two strikes."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--grpc-http2-min-recv-ping-interval-without-data=10000",
                            "--grpc-http2-max-ping-strikes=2",
                            "--grpc-keepalive-permit-without-calls=false")

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, "exit code %d\n%s" % (code, cls.server.text())

    def test_abusive_client_is_closed(self):
        abusive = pinging_channel(self.server.address)
        polite = self.server.inference()
        try:
            # An open stream on which nothing flows: each ping is a strike.
            code, details = idle_watch_end(abusive, 30 * SLOW)
            self.assertEqual(code, grpc.StatusCode.UNAVAILABLE)
            # gRPC's words for GOAWAY ENHANCE_YOUR_CALM "too_many_pings".
            self.assertIn("too many pings", details.lower())
            # The well-behaved client on its own connection goes on.
            self.assertTrue(polite.ServerLive(pb.ServerLiveRequest(), timeout=10).live)
        finally:
            abusive.close()

    def test_well_behaved_pings_are_fine(self):
        # Pings no closer than the server allows: the stream lives on.
        channel = grpc.insecure_channel(self.server.address, options=[
            ("grpc.keepalive_time_ms", 20000),
            ("grpc.http2.max_pings_without_data", 0),
        ])
        try:
            stub = grpc_service_pb2_grpc.GRPCInferenceServiceStub(channel)
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                self.assertTrue(stub.ServerLive(pb.ServerLiveRequest(), timeout=10).live)
                time.sleep(0.1)
        finally:
            channel.close()


class Permissive(unittest.TestCase):
    def test_pings_tolerated_when_allowed(self):
        """max-ping-strikes=0 accepts any number of pings."""
        server = Server("--grpc-http2-max-ping-strikes=0",
                        "--grpc-keepalive-permit-without-calls=true")
        channel = pinging_channel(server.address)
        try:
            # Only the deadline ends it: no GOAWAY in between.
            code, _ = idle_watch_end(channel, 2 * SLOW)
            self.assertEqual(code, grpc.StatusCode.DEADLINE_EXCEEDED)
        finally:
            channel.close()
            self.assertEqual(server.stop(), 0, server.text())


class ConcurrentStreams(unittest.TestCase):
    def test_limit_per_connection(self):
        server = Server("--grpc-max-concurrent-streams=2")
        try:
            channel = server.connect()
            health = health_pb2_grpc.HealthStub(channel)
            watches = [health.Watch(health_pb2.HealthCheckRequest(), timeout=60)
                       for _ in range(2)]
            for w in watches:
                self.assertEqual(next(w).status, health_pb2.HealthCheckResponse.SERVING)
            stub = server.inference()
            # A third call on the same connection waits for a free stream.
            future = stub.ServerLive.future(pb.ServerLiveRequest(), timeout=30 * SLOW)
            time.sleep(0.5 * SLOW)
            self.assertFalse(future.done())
            watches[0].cancel()
            self.assertTrue(future.result().live)
            watches[1].cancel()
            # A second connection has its own streams.
            other = grpc.insecure_channel(server.address)
            other_stub = grpc_service_pb2_grpc.GRPCInferenceServiceStub(other)
            self.assertTrue(other_stub.ServerLive(pb.ServerLiveRequest(), timeout=10).live)
            other.close()
        finally:
            self.assertEqual(server.stop(), 0, server.text())


class Compression(unittest.TestCase):
    # gRPC core's compression trace is where the compressed responses show:
    # Python's client hides the grpc-encoding header.
    TRACE = {"GRPC_TRACE": "compression", "GRPC_VERBOSITY": "DEBUG"}

    def test_levels(self):
        for level in ("none", "low", "medium", "high"):
            server = Server("--grpc-infer-response-compression-level=" + level,
                            repo=harness.EXAMPLES, env=self.TRACE)
            try:
                stub = server.inference()
                # Not an inference response: never compressed.
                stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=10)
                self.assertNotIn("Compressed[", server.text(), level)
                r = stub.ModelInfer(harness.simple_request(), timeout=10)
                out = np.frombuffer(r.raw_output_contents[0], dtype=np.int32)
                self.assertEqual(list(out), [2 * i for i in range(16)], level)
                replies = list(stub.ModelStreamInfer(
                    iter([harness.simple_request()] * 2), timeout=10))
                self.assertEqual([x.error_message for x in replies], ["", ""], level)
                # Compression also with a client that asks for gzip itself.
                r = stub.ModelInfer(harness.simple_request(), timeout=10,
                                    compression=grpc.Compression.Gzip)
                self.assertEqual(len(r.raw_output_contents), 2, level)
                if level == "none":
                    self.assertNotIn("Compressed[", server.text())
                else:
                    self.assertTrue(server.wait_text("Compressed["), level)
            finally:
                self.assertEqual(server.stop(), 0, server.text())

    def test_bad_level(self):
        code, out = harness.run_nereid("--model-repository=" + harness.empty_repo(),
                                       "--grpc-infer-response-compression-level=max")
        self.assertNotEqual(code, 0, out)
        self.assertIn("invalid argument for --grpc_infer_response_compression_level", out)


class ConnectionAge(unittest.TestCase):
    def test_calls_go_on_across_reconnects(self):
        server = Server("--grpc-max-connection-age=300",
                        "--grpc-max-connection-age-grace=1000", repo=harness.EXAMPLES)
        try:
            stub = server.inference()
            deadline = time.monotonic() + 1.5
            calls = 0
            while time.monotonic() < deadline:
                try:
                    stub.ModelInfer(harness.simple_request(), timeout=10,
                                    wait_for_ready=True)
                    calls += 1
                except grpc.RpcError as e:
                    # A call that races the GOAWAY may be refused; retried.
                    self.assertEqual(e.code(), grpc.StatusCode.UNAVAILABLE)
                time.sleep(0.05)
            self.assertGreater(calls, 5)
        finally:
            self.assertEqual(server.stop(), 0, server.text())


class MessageSize(unittest.TestCase):
    def test_over_the_limit_with_transport_flags(self):
        server = Server("--grpc-max-receive-message-size=4096",
                        "--grpc-max-concurrent-streams=4", repo=harness.EXAMPLES)
        try:
            stub = server.inference()
            big = harness.infer_request(
                "simple", [("INPUT0", "INT32", np.zeros((1, 4096), dtype=np.int32))])
            with self.assertRaises(grpc.RpcError) as cm:
                stub.ModelInfer(big, timeout=10)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
            self.assertEqual(len(stub.ModelInfer(harness.simple_request(),
                                                 timeout=10).raw_output_contents), 2)
        finally:
            self.assertEqual(server.stop(), 0, server.text())


if __name__ == "__main__":
    harness.main()
