"""Issue 15, F4: slow stream readers. A decoupled request whose client stops
reading kept every response it sent, serialized, in the stream's write
queue: one request of 4M elements held about 900 MB, and the stream's
pause on receiving bounded only new requests. ModelInfer's
nereid_aggregate_responses kept every response of a request the same way.

Now the responses that one request, and one stream, may have waiting are
bounded (--grpc-request-max-queued-*, --grpc-stream-max-queued-*). The
response that does not fit ends its request: the client gets a final
error response in its place (ModelInfer: the status RESOURCE_EXHAUSTED),
the request is cancelled so that the backend stops, and the stream goes
on."""

import queue
import re
import time
import unittest

import grpc
import numpy as np

import harness
from harness import Server, infer_request

SLOW = harness.SLOW
RPC_TIMEOUT = 120 * SLOW
# What nereid may grow by while a flood fills its bounds: the request's
# inputs, copied a few times (32 MB), and 65536 queued responses; measured
# +150, +250 and +900 MiB in the default, ASan and TSan builds (shadow
# memory, ASan's quarantine of freed blocks). The bug grew by about 900 MB
# in the default build, and by several times that in the others. On a
# loaded host the default build reached +300 (allocator caches of the
# threads that fill the bounds), so its guard is half the bug's growth.
GROWTH_MIB = {"": 450, "asan": 700, "tsan": 2000}[harness.SANITIZER]
FLOOD = 4 << 20  # responses: IN and DELAY of 16 MB each


def repeat_request(n, rid, params=None):
    """repeat_int32: n responses, OUT = i, as fast as the backend goes."""
    return infer_request("repeat_int32", [
        ("IN", "INT32", np.arange(n, dtype=np.int32)),
        ("DELAY", "UINT32", np.zeros(n, dtype=np.uint32)),
        ("WAIT", "UINT32", np.zeros(1, dtype=np.uint32))], rid=rid, params=params)


def final(resp):
    return resp.infer_response.parameters["triton_final_response"].bool_param


def out_values(resp):
    return int(np.frombuffer(resp.infer_response.raw_output_contents[0], np.int32)[0])


class Requests:
    """A request iterator fed from the test: put() requests, close() to
    half-close."""

    def __init__(self):
        self._q = queue.Queue()

    def put(self, req):
        self._q.put(req)

    def close(self):
        self._q.put(None)

    def __iter__(self):
        return iter(self._q.get, None)


class Bounds(unittest.TestCase):
    server = None

    def start(self, *flags):
        # Verbose 1: the line that says a request was ended.
        self.server = Server("--log-verbose=1", *flags, repo=harness.EXAMPLES)
        self.stub = self.server.inference()

    def tearDown(self):
        if self.server is not None:
            code = self.server.stop()
            self.assertEqual(code, 0, self.server.text()[-3000:])

    def wait_log(self, pattern, timeout, guard):
        """Waits for pattern in the log, unless the guard kills nereid."""
        end = time.monotonic() + timeout * SLOW
        while time.monotonic() < end and guard.tripped is None:
            if re.search(pattern, self.server.text()):
                return True
            time.sleep(0.02)
        return False

    def flood_unread(self, n, rid):
        """Opens a stream and sends one request of n responses without
        reading any until the server ended it; nereid's RSS is watched
        throughout. Returns (stream, requests, base RSS)."""
        reqs = Requests()
        responses = self.stub.ModelStreamInfer(iter(reqs), timeout=RPC_TIMEOUT)
        base = self.server.rss_mib()
        with self.server.rss_guard(base + GROWTH_MIB) as guard:
            reqs.put(repeat_request(n, rid))
            ended = self.wait_log(r"RESOURCE_EXHAUSTED: request '%s'" % rid, 60, guard)
            time.sleep(0.3 * SLOW)  # the backend's last responses, dropped
        self.assertIsNone(guard.tripped, "nereid's RSS reached %s MiB (from %.0f): killed"
                          % (guard.tripped, base))
        self.assertTrue(ended, "request '%s' never ended:\n%s"
                        % (rid, self.server.text()[-3000:]))
        self.assertLess(self.server.peak_rss_mib(), base + GROWTH_MIB)
        return responses, reqs, base

    def read_until_error(self, responses):
        """The responses up to the request's error; checks they came in order
        and that the error is final."""
        got = 0
        for resp in responses:
            if resp.error_message:
                self.assertTrue(final(resp))
                return got, resp.error_message
            self.assertFalse(final(resp))
            self.assertEqual(out_values(resp), got)
            got += 1
        self.fail("the stream ended without the request's error")

    def assert_stream_serves(self, responses, reqs):
        """The same stream answers a new request in full, then ends OK."""
        reqs.put(repeat_request(3, "after",
                                params={"triton_enable_empty_final_response": True}))
        after = [next(responses) for _ in range(4)]
        self.assertEqual([r.infer_response.id for r in after], ["after"] * 4)
        self.assertEqual([r.error_message for r in after], [""] * 4)
        self.assertEqual([final(r) for r in after], [False] * 3 + [True])
        reqs.close()
        self.assertEqual(list(responses), [])
        self.assertEqual(responses.code(), grpc.StatusCode.OK)


class DefaultBounds(Bounds):
    def test_a_flood_nobody_reads_ends_its_request(self):
        self.start()
        responses, reqs, base = self.flood_unread(FLOOD, "flood")
        got, error = self.read_until_error(responses)
        # What the queue held, plus what gRPC had already taken: its flow
        # control windows (which grow up to megabytes) and the send in flight.
        self.assertGreaterEqual(got, 65536)
        self.assertLess(got, FLOOD // 10)
        self.assertEqual(error, "RESOURCE_EXHAUSTED: request 'flood' for model "
                         "'repeat_int32' was cancelled: 65536 responses wait to be written "
                         "for it, as many as --grpc-request-max-queued-responses=65536 "
                         "allows (the client does not read the stream fast enough)")
        self.assert_stream_serves(responses, reqs)
        self.assertLess(self.server.rss_mib(), base + GROWTH_MIB)

    def test_aggregated_model_infer_is_bounded_too(self):
        self.start()
        base = self.server.rss_mib()
        req = repeat_request(1 << 20, "many", params={"nereid_aggregate_responses": True})
        with self.server.rss_guard(base + GROWTH_MIB) as guard:
            with self.assertRaises(grpc.RpcError) as cm:
                self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)
        self.assertIsNone(guard.tripped, "nereid's RSS reached %s MiB (from %.0f): killed"
                          % (guard.tripped, base))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertEqual(cm.exception.details(),
                         "request 'many' for model 'repeat_int32' holds 65536 responses "
                         "to aggregate, as many as --grpc-request-max-queued-responses="
                         "65536 allows; it was cancelled")
        # Within the bound, aggregation still works.
        resp = self.stub.ModelInfer(
            repeat_request(1000, "some", params={"nereid_aggregate_responses": True}),
            timeout=RPC_TIMEOUT)
        self.assertEqual(np.frombuffer(resp.raw_output_contents[0], np.int32).tolist(),
                         list(range(1000)))


class SmallBounds(Bounds):
    """Each bound on its own, set low: the first response past it ends the
    request, whose error names the flag."""

    def check(self, flag, why):
        self.start(flag)
        responses, reqs, _ = self.flood_unread(20000, "r")
        got, error = self.read_until_error(responses)
        self.assertRegex(error, r"^RESOURCE_EXHAUSTED: request 'r' for model "
                         r"'repeat_int32' was cancelled: " + why)
        self.assert_stream_serves(responses, reqs)

    def test_request_responses(self):
        self.check("--grpc-request-max-queued-responses=1000",
                   r"1000 responses wait to be written for it, as many as "
                   r"--grpc-request-max-queued-responses=1000 allows")

    def test_request_bytes(self):
        self.check("--grpc-request-max-queued-bytes=100000",
                   r"\d+ bytes of responses wait to be written for it, and \d+ more "
                   r"would pass --grpc-request-max-queued-bytes=100000")

    def test_stream_responses(self):
        self.check("--grpc-stream-max-queued-responses=1000",
                   r"1000 responses wait to be written on its stream, as many as "
                   r"--grpc-stream-max-queued-responses=1000 allows")

    def test_stream_bytes(self):
        self.check("--grpc-stream-max-queued-bytes=100000",
                   r"\d+ bytes of responses wait to be written on its stream, and \d+ "
                   r"more would pass --grpc-stream-max-queued-bytes=100000")


if __name__ == "__main__":
    harness.main()
