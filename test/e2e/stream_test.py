"""End to end: ModelStreamInfer. Many requests in flight on one stream,
decoupled fan-out with triton_final_response and the optional empty final,
errors that leave the stream open, several models on one stream, the
client's half-close, and a client cancel or an expired deadline that must
reach the backend and leave the server healthy."""

import queue
import re
import threading
import time
import unittest

import grpc
import numpy as np

import harness
from harness import Server, infer_request
import grpc_service_pb2 as pb

SLOW = harness.SLOW
RPC_TIMEOUT = 120 * SLOW


def simple_request(rid, base=0):
    a = np.arange(base, base + 16, dtype=np.int32).reshape(1, 16)
    b = np.full((1, 16), 3, dtype=np.int32)
    return infer_request("simple", [("INPUT0", "INT32", a), ("INPUT1", "INT32", b)],
                         rid=rid), a, b


def repeat_request(values, delay_ms=0, wait_ms=0, rid="", params=None):
    n = len(values)
    return infer_request("repeat_int32", [
        ("IN", "INT32", np.asarray(values, dtype=np.int32)),
        ("DELAY", "UINT32", np.full(n, delay_ms, dtype=np.uint32)),
        ("WAIT", "UINT32", np.array([wait_ms], dtype=np.uint32))], rid=rid, params=params)


def output(resp, name, dtype):
    for i, o in enumerate(resp.outputs):
        if o.name == name:
            return np.frombuffer(resp.raw_output_contents[i], dtype=dtype).reshape(o.shape)
    raise AssertionError("no output %s in %s" % (name, [o.name for o in resp.outputs]))


def final(resp):
    """The triton_final_response parameter, which every streamed response has."""
    params = resp.infer_response.parameters
    assert "triton_final_response" in params, resp
    return params["triton_final_response"].bool_param


class Requests:
    """A request iterator fed from the test: put() requests, close() to
    half-close. It ends by itself once `gone` is set (after a cancel)."""

    def __init__(self):
        self._q = queue.Queue()
        self.gone = threading.Event()

    def put(self, req):
        self._q.put(req)

    def close(self):
        self._q.put(None)

    def __iter__(self):
        return self

    def __next__(self):
        while not self.gone.is_set():
            try:
                item = self._q.get(timeout=0.1)
            except queue.Empty:
                continue
            if item is None:
                break
            return item
        raise StopIteration


class Stream(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Verbose 2: the stream's open/cancel/free lines that the cancel
        # tests read.
        cls.server = Server("--log-verbose=2", repo=harness.EXAMPLES)
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, "exit code %d\n%s" % (code, cls.server.text())

    def open(self, timeout=RPC_TIMEOUT):
        reqs = Requests()
        return reqs, self.stub.ModelStreamInfer(reqs, timeout=timeout)

    def assert_serving(self):
        """A unary request still works."""
        req, a, b = simple_request("after")
        r = self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)
        np.testing.assert_array_equal(output(r, "OUTPUT0", np.int32), a + b)

    def wait_log(self, pattern, since, timeout):
        """The first match of pattern in the log after offset `since`."""
        end = time.monotonic() + timeout * SLOW
        while time.monotonic() < end:
            m = re.search(pattern, self.server.text()[since:])
            if m:
                return m
            time.sleep(0.02)
        self.fail("no %r in the log:\n%s" % (pattern, self.server.text()[since:][-3000:]))

    def test_many_requests_in_flight(self):
        n = 2000
        reqs, responses = self.open()
        expected = {}
        for i in range(n):
            req, a, b = simple_request("r%d" % i, base=i)
            expected["r%d" % i] = (a + b, a - b)
            reqs.put(req)
        got = 0
        for resp in responses:
            self.assertEqual(resp.error_message, "")
            r = resp.infer_response
            self.assertIn(r.id, expected)
            want_sum, want_diff = expected.pop(r.id)
            self.assertEqual((r.model_name, r.model_version), ("simple", "1"))
            np.testing.assert_array_equal(output(r, "OUTPUT0", np.int32), want_sum)
            np.testing.assert_array_equal(output(r, "OUTPUT1", np.int32), want_diff)
            self.assertTrue(final(resp))
            got += 1
            if got == n:
                reqs.close()
        self.assertEqual(got, n)
        self.assertEqual(expected, {})

    def test_grown_arenas_in_flight(self):
        """Each message's arena starts in a pooled 4 KiB block (issue 21);
        a message with 120 parameters outgrows it. Large and small ones in
        flight together, each answered from its own inputs."""
        n = 300
        reqs, responses = self.open()
        expected = {}
        for i in range(n):
            req, a, b = simple_request("g%d" % i, base=i)
            if i % 2 == 0:
                for k in range(120):
                    req.parameters["p%03d" % k].string_param = "%d-%s" % (i, "v" * 100)
            expected["g%d" % i] = a + b
            reqs.put(req)
        got = 0
        for resp in responses:
            self.assertEqual(resp.error_message, "")
            r = resp.infer_response
            np.testing.assert_array_equal(output(r, "OUTPUT0", np.int32),
                                          expected.pop(r.id))
            got += 1
            if got == n:
                reqs.close()
        self.assertEqual(expected, {})

    def test_slow_reader_pauses_receiving(self):
        """A client that sends without reading fills the write queue; the
        stream stops receiving until the client reads again."""
        since = len(self.server.text())
        n, size = 400, 64 * 1024
        reqs, responses = self.open()
        payload = b"x" * size
        for i in range(n):
            req = pb.ModelInferRequest(model_name="simple_identity", id="big%d" % i)
            t = req.inputs.add()
            t.name, t.datatype = "INPUT0", "BYTES"
            t.shape.extend([1, 1])
            req.raw_input_contents.append(len(payload).to_bytes(4, "little") + payload)
            reqs.put(req)
        m = self.wait_log(r"stream (0x[0-9a-f]+): \d+ writes wait, receiving paused",
                          since, 30)
        ids = set()
        for resp in responses:
            self.assertEqual(resp.error_message, "")
            self.assertEqual(len(resp.infer_response.raw_output_contents[0]), size + 4)
            ids.add(resp.infer_response.id)
            if len(ids) == n:
                reqs.close()
        self.assertEqual(ids, {"big%d" % i for i in range(n)})
        resumed = "stream %s: receiving resumed" % m.group(1)
        self.server.wait_text(resumed)
        self.assertIn(resumed, self.server.text()[since:])

    def test_decoupled_fan_out(self):
        n = 5000
        values = np.arange(n, dtype=np.int32) * 7
        reqs, responses = self.open()
        reqs.put(repeat_request(values, rid="plain"))
        reqs.put(repeat_request(values, rid="with-empty",
                                params={"triton_enable_empty_final_response": True}))
        got = {"plain": [], "with-empty": []}
        for resp in responses:
            self.assertEqual(resp.error_message, "")
            got[resp.infer_response.id].append(resp)
            if len(got["plain"]) == n and len(got["with-empty"]) == n + 1:
                reqs.close()
        # Without the empty final, the flags-only final sends nothing: no
        # response is final.
        plain = got["plain"]
        self.assertEqual(len(plain), n)
        self.assertEqual([int(output(r.infer_response, "IDX", np.uint32)[0]) for r in plain],
                         list(range(n)))
        self.assertEqual([int(output(r.infer_response, "OUT", np.int32)[0]) for r in plain],
                         list(values))
        self.assertFalse(any(final(r) for r in plain))
        with_empty = got["with-empty"]
        self.assertEqual(len(with_empty), n + 1)
        self.assertEqual([int(output(r.infer_response, "IDX", np.uint32)[0])
                          for r in with_empty[:n]], list(range(n)))
        self.assertEqual([final(r) for r in with_empty], [False] * n + [True])
        last = with_empty[-1].infer_response
        self.assertEqual((last.model_name, last.model_version, last.id),
                         ("repeat_int32", "1", "with-empty"))
        self.assertEqual(len(last.outputs), 0)

    def test_errors_keep_the_stream_open(self):
        reqs, responses = self.open()
        req, a, b = simple_request("unknown")
        req.model_name = "nosuch"
        reqs.put(req)
        bad, _, _ = simple_request("bad-input")
        del bad.inputs[1]
        del bad.raw_input_contents[1]
        reqs.put(bad)
        bad_version, _, _ = simple_request("bad-version")
        bad_version.model_version = "x1"
        reqs.put(bad_version)
        # Decoupled: the backend itself rejects it (DELAY of the wrong size).
        rejected = repeat_request([1, 2, 3], rid="backend-error")
        rejected.raw_input_contents[1] = np.zeros(2, dtype=np.uint32).tobytes()
        rejected.inputs[1].shape[:] = [2]
        reqs.put(rejected)
        bad_sequence, _, _ = simple_request("bad-sequence")
        bad_sequence.parameters["sequence_start"].string_param = "yes"
        reqs.put(bad_sequence)
        ok, a, b = simple_request("fine")
        ok.parameters["sequence_id"].string_param = "s1"
        ok.parameters["sequence_start"].bool_param = True
        reqs.put(ok)
        reqs.close()
        by_id = {}
        for resp in responses:
            by_id[resp.infer_response.id] = resp
        self.assertEqual(set(by_id), {"unknown", "bad-input", "bad-version",
                                      "backend-error", "bad-sequence", "fine"})
        self.assertEqual(by_id["bad-sequence"].error_message,
                         "model 'simple': invalid value type for 'sequence_start' "
                         "parameter, expected bool_param.")
        self.assertIn("nosuch", by_id["unknown"].error_message)
        self.assertIn("INPUT1", by_id["bad-input"].error_message)
        self.assertIn("x1", by_id["bad-version"].error_message)
        err = by_id["backend-error"]
        self.assertIn("DELAY", err.error_message)
        self.assertEqual(err.infer_response.model_name, "repeat_int32")
        self.assertTrue(final(err))
        fine = by_id["fine"]
        self.assertEqual(fine.error_message, "")
        np.testing.assert_array_equal(output(fine.infer_response, "OUTPUT0", np.int32),
                                      a + b)

    def test_malformed_message(self):
        call = self.server.connect().stream_stream(
            "/inference.GRPCInferenceService/ModelStreamInfer",
            request_serializer=lambda b: b,
            response_deserializer=pb.ModelStreamInferResponse.FromString)
        good, a, b = simple_request("good")
        out = list(call(iter([b"\x0a\xff\xff", good.SerializeToString()]),
                        timeout=RPC_TIMEOUT))
        self.assertEqual(len(out), 2)
        self.assertIn("malformed", out[0].error_message)
        self.assertEqual(out[1].infer_response.id, "good")

    def test_several_models_on_one_stream(self):
        reqs, responses = self.open()
        rounds = 50
        for i in range(rounds):
            req, a, b = simple_request("simple-%d" % i, base=i)
            reqs.put(req)
            i8 = np.full((1, 16), i % 100, dtype=np.int8)
            reqs.put(infer_request("simple_int8", [("INPUT0", "INT8", i8),
                                                   ("INPUT1", "INT8", i8)],
                                   rid="int8-%d" % i))
            reqs.put(repeat_request([i, i + 1, i + 2], rid="repeat-%d" % i,
                                    params={"triton_enable_empty_final_response": True}))
        reqs.close()
        seen = {}
        for resp in responses:
            self.assertEqual(resp.error_message, "")
            r = resp.infer_response
            seen.setdefault(r.id, []).append(resp)
        self.assertEqual(len(seen), 3 * rounds)
        for i in range(rounds):
            (s,) = seen["simple-%d" % i]
            self.assertEqual(s.infer_response.model_name, "simple")
            np.testing.assert_array_equal(
                output(s.infer_response, "OUTPUT0", np.int32)[0], np.arange(i, i + 16) + 3)
            (e,) = seen["int8-%d" % i]
            self.assertEqual(e.infer_response.model_name, "simple_int8")
            np.testing.assert_array_equal(output(e.infer_response, "OUTPUT1", np.int8), 0)
            rep = seen["repeat-%d" % i]
            self.assertEqual([final(x) for x in rep], [False, False, False, True])
            self.assertEqual([int(output(x.infer_response, "OUT", np.int32)[0])
                              for x in rep[:3]], [i, i + 1, i + 2])

    def test_half_close_then_responses(self):
        reqs, responses = self.open()
        reqs.put(repeat_request(list(range(20)), delay_ms=10, rid="slow",
                                params={"triton_enable_empty_final_response": True}))
        req, a, b = simple_request("quick")
        reqs.put(req)
        reqs.close()  # before any response can have been sent
        out = list(responses)  # ends only with the status
        self.assertEqual(responses.code(), grpc.StatusCode.OK)
        slow = [r for r in out if r.infer_response.id == "slow"]
        self.assertEqual(len(slow), 21)
        self.assertTrue(final(slow[-1]))
        self.assertEqual([r.infer_response.id for r in out].count("quick"), 1)

    def test_empty_stream(self):
        out = list(self.stub.ModelStreamInfer(iter([]), timeout=RPC_TIMEOUT))
        self.assertEqual(out, [])

    def cancelled_line(self, since):
        m = self.wait_log(r"stream (0x[0-9a-f]+) cancelled by the client or its "
                          r"deadline, (\d+) requests in flight", since, 30)
        return m.group(1), int(m.group(2))

    def test_client_cancel_reaches_backend(self):
        since = len(self.server.text())
        reqs, responses = self.open()
        # 100 responses 100 ms apart: 10 s unless the cancel stops them.
        reqs.put(repeat_request(list(range(100)), delay_ms=100, rid="long"))
        for _ in range(3):
            resp = next(responses)
            self.assertEqual(resp.infer_response.id, "long")
        cancelled_at = time.monotonic()
        responses.cancel()
        reqs.gone.set()
        with self.assertRaises(grpc.RpcError) as cm:
            next(responses)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.CANCELLED)
        stream, in_flight = self.cancelled_line(since)
        self.assertEqual(in_flight, 1)
        # The stream is freed once the backend sent its final flag, which the
        # repeat backend does early only when it sees the cancellation.
        self.wait_log(r"stream %s freed" % stream, since, 30)
        self.assertLess(time.monotonic() - cancelled_at, 5)
        self.assert_serving()

    def success_count(self, model):
        stats = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name=model),
                                          timeout=RPC_TIMEOUT)
        return stats.model_stats[0].inference_stats.success.count

    def test_cancel_drops_queued_requests(self):
        """Requests still queued at the model when the client cancels are
        dropped there and never reach the backend."""
        before = self.success_count("repeat_int32")
        since = len(self.server.text())
        reqs, responses = self.open()
        # One instance, each execution waits 300 ms: the rest stay queued.
        n = 10
        for i in range(n):
            reqs.put(repeat_request(list(range(50)), delay_ms=20, wait_ms=300,
                                    rid="c%d" % i))
        for i in range(100):
            req, _, _ = simple_request("s%d" % i)
            reqs.put(req)
        next(responses)
        responses.cancel()
        reqs.gone.set()
        stream, in_flight = self.cancelled_line(since)
        self.assertGreater(in_flight, 0)
        self.wait_log(r"stream %s freed" % stream, since, 60)
        self.assertLess(self.success_count("repeat_int32") - before, n)
        self.assert_serving()

    def test_concurrent_streams(self):
        errors = []

        def run(k):
            try:
                reqs, responses = self.open()
                n = 200
                for i in range(n):
                    reqs.put(simple_request("%d-%d" % (k, i), base=i)[0])
                reqs.close()
                ids = [r.infer_response.id for r in responses]
                if sorted(ids) != sorted("%d-%d" % (k, i) for i in range(n)):
                    errors.append("stream %d: wrong ids" % k)
            except Exception as e:  # reported below, in the test's thread
                errors.append("stream %d: %r" % (k, e))

        threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(RPC_TIMEOUT)
        self.assertEqual(errors, [])

    def run_past_deadline(self, timeout, requests, in_flight):
        """Sends requests on a stream whose deadline passes before they are
        done: the client sees DEADLINE_EXCEEDED, the server cancels the
        in_flight requests, frees the stream and keeps serving."""
        since = len(self.server.text())
        reqs, responses = self.open(timeout=timeout)
        for req in requests:
            reqs.put(req)
        with self.assertRaises(grpc.RpcError) as cm:
            for _ in responses:
                pass
        self.assertEqual(cm.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        reqs.gone.set()
        stream, cancelled = self.cancelled_line(since)
        self.assertEqual(cancelled, in_flight)
        self.wait_log(r"stream %s freed" % stream, since, 30)
        self.assert_serving()

    def test_deadline_exceeded_while_executing(self):
        # 4 s of responses: the 1 s deadline passes while they stream.
        self.run_past_deadline(1.0, [repeat_request(list(range(40)), delay_ms=100,
                                                    rid="late")], 1)

    def test_deadline_exceeded_while_queued(self):
        """The first request holds the one instance (execute waits 1.5 s);
        the second is still queued when the stream's deadline passes, so it
        is dropped without running."""
        before = self.success_count("repeat_int32")
        fail_before = self.stub.ModelStatistics(pb.ModelStatisticsRequest(
            name="repeat_int32")).model_stats[0].inference_stats.fail.count
        self.run_past_deadline(0.5, [repeat_request([1], wait_ms=1500, rid="holder"),
                                     repeat_request([2], rid="queued")], 2)
        self.assertLessEqual(self.success_count("repeat_int32") - before, 1)
        stats = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name="repeat_int32"))
        self.assertGreaterEqual(stats.model_stats[0].inference_stats.fail.count
                                - fail_before, 1)


if __name__ == "__main__":
    harness.main()
