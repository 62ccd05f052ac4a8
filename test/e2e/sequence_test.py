"""End to end: the sequence batcher (issue 16). Sequences over ModelInfer
and ModelStreamInfer, interleaved and by the hundred, each step's result
checked; implicit state that carries over steps and starts fresh; the
backlog; idle reaping; every refusal; and, with the recorder backend, that
the oldest strategy never puts two requests of one sequence in a batch and
runs each sequence's steps in order."""

import os
import queue
import random
import re
import shutil
import tempfile
import threading
import time
import unittest

import grpc
import numpy as np

import harness
from harness import Server, ServerTestCase, infer_request, stop_clean

SLOW = harness.SLOW
RPC_TIMEOUT = 60 * SLOW


def seq_request(model, value, seq_id, start=False, end=False, rid="", batch=1):
    params = {"sequence_id": seq_id}
    if start:
        params["sequence_start"] = True
    if end:
        params["sequence_end"] = True
    arr = np.full((batch, 1), value, dtype=np.int32)
    return infer_request(model, [("INPUT", "INT32", arr)], rid=rid, params=params)


def out_value(resp, name="OUTPUT"):
    for i, o in enumerate(resp.outputs):
        if o.name == name:
            return int(np.frombuffer(resp.raw_output_contents[i], dtype=np.int32)[0])
    raise AssertionError("no OUTPUT in %s" % resp)


def accumulate(values):
    total, out = 0, []
    for v in values:
        total += v
        out.append(total)
    return out


class Stream:
    """One ModelStreamInfer stream: put() requests, responses() collects
    them by request id."""

    def __init__(self, stub, output="OUTPUT"):
        self._output = output
        self._q = queue.Queue()
        self._it = stub.ModelStreamInfer(iter(self._q.get, None), timeout=RPC_TIMEOUT)

    def put(self, req):
        self._q.put(req)

    def responses(self, count):
        got = {}
        for _ in range(count):
            r = next(self._it)
            if r.error_message:
                got[r.infer_response.id] = r.error_message
            else:
                got[r.infer_response.id] = out_value(r.infer_response, self._output)
        return got

    def close(self):
        self._q.put(None)


class Sequences(ServerTestCase):
    """On the example models (examples/models)."""

    def infer(self, req):
        return self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)

    def run_sequence(self, model, seq_id, values):
        out = []
        for i, v in enumerate(values):
            resp = self.infer(seq_request(model, v, seq_id, start=i == 0,
                                          end=i == len(values) - 1))
            out.append(out_value(resp))
        return out

    def test_implicit_state_accumulates_and_starts_fresh(self):
        self.assertEqual(self.run_sequence("simple_sequence_state", 1001, [1, 2, 3, 4]),
                         [1, 3, 6, 10])
        # The same ID again: a new sequence, a new state.
        self.assertEqual(self.run_sequence("simple_sequence_state", 1001, [5, 5]), [5, 10])

    def test_interleaved_sequences_keep_their_own_state(self):
        m = "simple_sequence_state"
        a, b = 2001, "two-thousand-two"
        self.assertEqual(out_value(self.infer(seq_request(m, 1, a, start=True))), 1)
        self.assertEqual(out_value(self.infer(seq_request(m, 100, b, start=True))), 100)
        self.assertEqual(out_value(self.infer(seq_request(m, 2, a))), 3)
        self.assertEqual(out_value(self.infer(seq_request(m, 200, b))), 300)
        self.assertEqual(out_value(self.infer(seq_request(m, 3, a, end=True))), 6)
        self.assertEqual(out_value(self.infer(seq_request(m, 300, b, end=True))), 600)

    def test_control_inputs_reach_the_backend(self):
        # simple_dyna_sequence: OUTPUT = INPUT + START + (END ? CORRID : 0).
        self.assertEqual(self.run_sequence("simple_dyna_sequence", 77, [10, 20, 30]),
                         [11, 20, 107])
        # simple_sequence (direct): OUTPUT = INPUT + START.
        self.assertEqual(self.run_sequence("simple_sequence", 78, [10, 20, 30]),
                         [11, 20, 30])

    def test_hundreds_of_sequences_over_one_stream(self):
        stream = Stream(self.stub)
        n, steps = 300, 5
        values = {s: [(s * 7 + k) % 50 for k in range(steps)] for s in range(n)}
        for k in range(steps):  # interleaved: step k of every sequence
            for s in range(n):
                stream.put(seq_request("simple_sequence_state", values[s][k], 5000 + s,
                                       start=k == 0, end=k == steps - 1,
                                       rid="%d:%d" % (s, k)))
        got = stream.responses(n * steps)
        stream.close()
        # Padding requests (READY=0) are no client's: the statistics count
        # the clients' requests only, with their own queue times.
        st = self.stub.ModelStatistics(
            harness.grpc_service_pb2.ModelStatisticsRequest(name="simple_sequence_state"),
            timeout=RPC_TIMEOUT).model_stats[0].inference_stats
        self.assertGreaterEqual(st.success.count, n * steps)
        self.assertLess(st.queue.ns / st.queue.count, 30e9)
        for s in range(n):
            expect = accumulate(values[s])
            self.assertEqual([got["%d:%d" % (s, k)] for k in range(steps)], expect,
                             "sequence %d" % s)

    def test_concurrent_unary_sequences(self):
        errors = []

        def client(s):
            # simple_string_dyna_sequence accumulates, and adds the
            # correlation ID (a decimal string) at the END.
            try:
                vals = [s % 13 + k for k in range(6)]
                got = self.run_sequence("simple_string_dyna_sequence", str(3000 + s), vals)
                expect = accumulate(vals)
                expect[-1] += 3000 + s
                if got != expect:
                    errors.append((s, got, expect))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append((s, e))

        threads = [threading.Thread(target=client, args=(s,)) for s in range(48)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def expect_error(self, req, code, text):
        with self.assertRaises(grpc.RpcError) as cm:
            self.infer(req)
        self.assertEqual(cm.exception.code(), code, cm.exception.details())
        self.assertIn(text, cm.exception.details())

    def test_refusals(self):
        m = "simple_sequence_state"
        no_id = infer_request(m, [("INPUT", "INT32", np.ones((1, 1), np.int32))])
        self.expect_error(no_id, grpc.StatusCode.INVALID_ARGUMENT,
                          "inference request to model 'simple_sequence_state' must "
                          "specify a non-zero or non-empty correlation ID")
        self.expect_error(seq_request(m, 1, 31337), grpc.StatusCode.INVALID_ARGUMENT,
                          "inference request for sequence 31337 to model "
                          "'simple_sequence_state' must specify the START flag on the "
                          "first request of the sequence")
        self.expect_error(seq_request(m, 1, 9, start=True, batch=2),
                          grpc.StatusCode.INVALID_ARGUMENT,
                          "must specify batch-size 1 due to requirements of sequence "
                          "batcher")
        self.expect_error(seq_request("simple_dyna_sequence", 1, "s", start=True),
                          grpc.StatusCode.INVALID_ARGUMENT,
                          "the correlation ID is a string, but the model's "
                          "CONTROL_SEQUENCE_CORRID input 'CORRID' is UINT64")
        self.expect_error(seq_request("simple_string_dyna_sequence", 1, 5, start=True),
                          grpc.StatusCode.INVALID_ARGUMENT,
                          "the correlation ID is an integer, but the model's "
                          "CONTROL_SEQUENCE_CORRID input 'CORRID' is BYTES")

    def test_start_again_restarts_the_sequence(self):
        m = "simple_sequence_state"
        self.assertEqual(out_value(self.infer(seq_request(m, 4, 606, start=True))), 4)
        self.assertEqual(out_value(self.infer(seq_request(m, 4, 606))), 8)
        self.assertEqual(out_value(self.infer(seq_request(m, 1, 606, start=True))), 1)
        self.assertEqual(out_value(self.infer(seq_request(m, 1, 606, end=True))), 2)
        self.assertTrue(self.server.wait_text("started again before it ended"),
                        self.server.text())


class TritonSequenceClients(ServerTestCase):
    """What Triton's simple_grpc_sequence_{sync,stream}_infer_client.py
    examples send and check, with and without -d (dyna), over ModelInfer
    and over one ModelStreamInfer stream."""

    VALUES = [11, 7, 5, 3, 2, 0, 1]

    def send(self, model, seq_id, values, stream):
        reqs = [seq_request(model, v, seq_id, start=i == 0, end=i == len(values) - 1,
                            rid="%s:%d" % (seq_id, i)) for i, v in enumerate(values)]
        if stream is None:
            return [out_value(self.stub.ModelInfer(r, timeout=RPC_TIMEOUT)) for r in reqs]
        for r in reqs:
            stream.put(r)
        got = stream.responses(len(reqs))
        return [got["%s:%d" % (seq_id, i)] for i in range(len(reqs))]

    def check(self, dyna, streamed):
        vals = self.VALUES
        int_model = "simple_dyna_sequence" if dyna else "simple_sequence"
        str_model = "simple_string_dyna_sequence" if dyna else "simple_sequence"
        id0, id1 = 1000, 1001
        sid = "1002" if dyna else "0b8f3c2e-5d41-4c7a-9b1e-6f2d8a7c4e10"
        stream = Stream(self.stub) if streamed else None
        r0 = self.send(int_model, id0, [0] + vals, stream)
        r1 = self.send(int_model, id1, [100] + [-v for v in vals], stream)
        rs = self.send(str_model, sid, [20] + [-v for v in vals], stream)
        if stream is not None:
            stream.close()
        for i in range(len(r0)):
            e0 = 1 if i == 0 else vals[i - 1]
            e1 = 101 if i == 0 else -vals[i - 1]
            if i == 0:
                es = 20 if dyna else 21
            else:
                es = -vals[i - 1] + (rs[i - 1] if dyna else 0)
            if dyna and i != 0 and vals[i - 1] == 1:  # the END adds the ID
                e0 += id0
                e1 += id1
                es += int(sid)
            self.assertEqual((r0[i], r1[i], rs[i]), (e0, e1, es), "step %d" % i)

    def test_sync_client(self):
        self.check(dyna=False, streamed=False)

    def test_sync_client_dyna(self):
        self.check(dyna=True, streamed=False)

    def test_stream_client(self):
        self.check(dyna=False, streamed=True)

    def test_stream_client_dyna(self):
        self.check(dyna=True, streamed=True)


# A direct model with one slot, and a 300 ms idle timeout.
ONE_SLOT = """
name: "one_slot"
backend: "sequence"
max_batch_size: 1
sequence_batching {
  max_sequence_idle_microseconds: %d
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] }
  ]
  state [ { input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_INT32
            dims: [ 1 ] initial_state: { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true
            name: "zero" } } ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
parameters [ { key: "sequence_mode" value: { string_value: "accumulate" } } ]
instance_group [ { kind: KIND_CPU } ]
"""
IDLE_US = 300000


class OneSlotServer(unittest.TestCase):
    """A server on the one-slot models, for the classes below."""

    @classmethod
    def setUpClass(cls):
        tmp = os.environ.get("TEST_TMPDIR")
        cls.repo = tempfile.mkdtemp(prefix="repo", dir=tmp)
        for name, idle in (("one_slot", int(IDLE_US * SLOW)), ("one_slot_long", 600000000),
                           ("one_slot_quick", 600000000)):
            config = (ONE_SLOT % idle).replace('"one_slot"', '"%s"' % name)
            if name == "one_slot_quick":  # each step runs 2 ms: a cancel can catch it
                config = config.replace(
                    'parameters [ ', 'parameters [ { key: "execute_delay_ms" '
                    'value: { string_value: "2" } }, ')
            os.makedirs(os.path.join(cls.repo, name, "1"))
            with open(os.path.join(cls.repo, name, "config.pbtxt"), "w") as f:
                f.write(config)
        cls.server = Server("--log-verbose=1", repo=cls.repo)
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.server)
        shutil.rmtree(cls.repo, ignore_errors=True)

    def infer(self, req, timeout=RPC_TIMEOUT):
        return self.stub.ModelInfer(req, timeout=timeout)

    def stats(self, model):
        resp = self.stub.ModelStatistics(
            harness.grpc_service_pb2.ModelStatisticsRequest(name=model), timeout=RPC_TIMEOUT)
        return resp.model_stats[0].sequence_stats


class BacklogAndIdle(OneSlotServer):

    def test_backlog_waits_for_the_slot(self):
        m = "one_slot"
        self.assertEqual(out_value(self.infer(seq_request(m, 1, 71, start=True))), 1)
        waiting = self.stub.ModelInfer.future(seq_request(m, 10, 72, start=True),
                                              timeout=RPC_TIMEOUT)
        time.sleep(0.05 * SLOW)
        self.assertFalse(waiting.done(), "the second sequence ran without a slot")
        self.assertEqual(out_value(self.infer(seq_request(m, 2, 71, end=True))), 3)
        self.assertEqual(out_value(waiting.result()), 10)  # fresh state
        self.assertEqual(out_value(self.infer(seq_request(m, 5, 72, end=True))), 15)

    def test_an_idle_sequence_is_reaped(self):
        m = "one_slot"
        self.assertEqual(out_value(self.infer(seq_request(m, 1, 81, start=True))), 1)
        time.sleep(3 * IDLE_US * SLOW / 1e6)
        with self.assertRaises(grpc.RpcError) as cm:
            self.infer(seq_request(m, 1, 81))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("must specify the START flag", cm.exception.details())
        self.assertIn("idle for longer than max_sequence_idle_microseconds",
                      cm.exception.details())
        self.assertTrue(self.server.wait_text("sequence 81 idle for more than"),
                        self.server.text())
        # The slot is free again.
        self.assertEqual(out_value(self.infer(seq_request(m, 4, 82, start=True,
                                                          end=True))), 4)


class StreamCloseEndsSequences(OneSlotServer):
    """Beyond Triton: a stream that closes ends the sequences it left open,
    so their slots free at once, not after max_sequence_idle_microseconds
    (600 s here)."""

    def test_a_closed_stream_frees_its_slots(self):
        m = "one_slot_long"
        before = self.stats(m)
        stream = Stream(self.stub)
        stream.put(seq_request(m, 3, 91, start=True, rid="a"))
        self.assertEqual(stream.responses(1), {"a": 3})
        self.assertEqual(self.stats(m).active, 1)
        stream.close()  # half-close: the stream ends, sequence 91 with it
        # The only slot is free again: a new sequence runs at once.
        self.assertEqual(out_value(self.infer(seq_request(m, 4, 92, start=True, end=True),
                                              timeout=20 * SLOW)), 4)
        # The END's answer can reach the client before its slot is free
        # again (the slot tells the model actor after answering).
        deadline = time.monotonic() + 10 * SLOW
        while self.stats(m).active != 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        st = self.stats(m)
        self.assertEqual((st.stream_ended - before.stream_ended, st.started - before.started,
                          st.ended - before.ended, st.active, st.backlog), (1, 2, 1, 0, 0))
        with self.assertRaises(grpc.RpcError) as cm:
            self.infer(seq_request(m, 1, 91))
        self.assertIn("must specify the START flag", cm.exception.details())

    def test_a_sequence_started_again_elsewhere_outlives_the_stream(self):
        # The stream starts 93 and leaves it open; a unary START takes the
        # ID over (as after an idle reap). The stream's close, whenever it
        # reaches the model, must not end the unary client's sequence.
        m = "one_slot_long"
        before = self.stats(m)
        stream = Stream(self.stub)
        stream.put(seq_request(m, 3, 93, start=True, rid="a"))
        self.assertEqual(stream.responses(1), {"a": 3})
        self.assertEqual(out_value(self.infer(seq_request(m, 5, 93, start=True))), 5)
        stream.close()
        self.assertTrue(self.server.wait_text(
            "sequence 93 outlives a closed stream: another client started it again"),
            self.server.text()[-3000:])
        self.assertEqual(out_value(self.infer(seq_request(m, 2, 93))), 7)
        self.assertEqual(out_value(self.infer(seq_request(m, 1, 93, end=True))), 8)
        st = self.stats(m)
        self.assertEqual((st.stream_ended - before.stream_ended, st.started - before.started,
                          st.ended - before.ended), (0, 1, 1))

    def test_a_cancelled_backlog_request_ends_its_sequence(self):
        m = "one_slot_long"
        before = self.stats(m)
        self.assertEqual(out_value(self.infer(seq_request(m, 1, 95, start=True))), 1)
        waiting = self.stub.ModelInfer.future(seq_request(m, 10, 96, start=True),
                                              timeout=RPC_TIMEOUT)
        deadline = time.monotonic() + 10 * SLOW
        while self.stats(m).backlog != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(self.stats(m).backlog, 1)
        waiting.cancel()
        while self.stats(m).backlog != 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        st = self.stats(m)
        self.assertEqual((st.backlog, st.cancel_ended - before.cancel_ended), (0, 1))
        self.assertEqual(out_value(self.infer(seq_request(m, 2, 95, end=True))), 3)
        # Sequence 96 ended with its request: it holds no slot now.
        self.assertEqual(out_value(self.infer(seq_request(m, 7, 97, start=True, end=True),
                                              timeout=20 * SLOW)), 7)
        with self.assertRaises(grpc.RpcError) as cm:
            self.infer(seq_request(m, 1, 96))
        self.assertIn("must specify the START flag", cm.exception.details())


class CancelThenStartAgain(OneSlotServer):
    """A client cancels a step and starts the ID again at once: the START
    may reach the slot before or after the cancelled step comes back from
    the backend, and the model actor may route it before or after it
    learns that the cancel ended the sequence. In every order the new
    sequence is whole, and the one slot is neither lost nor handed out
    twice."""

    def test_a_start_right_after_a_cancel_starts_a_whole_sequence(self):
        m = "one_slot_quick"
        rng = random.Random(5)
        restarted = 0
        for i in range(300):
            sid = 6000 + i
            self.assertEqual(out_value(self.infer(seq_request(m, 1, sid, start=True))), 1)
            step = self.stub.ModelInfer.future(seq_request(m, 1, sid), timeout=RPC_TIMEOUT)
            time.sleep(rng.uniform(0, 0.004))
            step.cancel()
            one_request = i % 2 == 1  # START and END in one request
            try:
                got = out_value(self.infer(seq_request(m, 5, sid, start=True,
                                                       end=one_request)))
            except grpc.RpcError as e:
                # The cancel reached the slot after the START did: it ends
                # the sequence, the START with it.
                self.assertEqual(e.code(), grpc.StatusCode.CANCELLED, e.details())
                self.assertIn("the sequence was cancelled", e.details())
                continue
            self.assertEqual(got, 5, "START after a cancel, id %d" % sid)
            restarted += 1
            if not one_request:
                self.assertEqual(out_value(self.infer(seq_request(m, 2, sid))), 7,
                                 "the step after the START, id %d" % sid)
                self.assertEqual(out_value(self.infer(seq_request(m, 0, sid, end=True))), 7)
        self.assertGreater(restarted, 100)
        # The slot is free, once: one sequence runs, a second waits for it.
        deadline = time.monotonic() + 10 * SLOW
        while self.stats(m).active != 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        st = self.stats(m)
        self.assertEqual((st.active, st.backlog), (0, 0))
        self.assertEqual(out_value(self.infer(seq_request(m, 3, 7001, start=True))), 3)
        waiting = self.stub.ModelInfer.future(seq_request(m, 4, 7002, start=True),
                                              timeout=RPC_TIMEOUT)
        time.sleep(0.05 * SLOW)
        self.assertFalse(waiting.done(), "two sequences hold the one slot")
        self.assertEqual(out_value(self.infer(seq_request(m, 1, 7001, end=True))), 4)
        self.assertEqual(out_value(waiting.result()), 4)
        self.assertEqual(out_value(self.infer(seq_request(m, 1, 7002, end=True))), 5)


class BadConfig(unittest.TestCase):
    """A bad sequence_batching config fails that model's load, naming the
    file and the field; the server and its other models serve on."""

    def test_bad_sequence_config_fails_that_model_only(self):
        tmp = os.environ.get("TEST_TMPDIR")
        repo = tempfile.mkdtemp(prefix="repo", dir=tmp)
        good = ONE_SLOT % 1000000
        bad_control = good.replace("int32_false_true: [ 0, 1 ] } ] },\n    { name: \"READY\"",
                                   "} ] },\n    { name: \"READY\"")
        self.assertNotEqual(bad_control, good)
        missing_file = good.replace("zero_data: true", "data_file: \"nope.bin\"")
        for name, text in (("good", good), ("bad_control", bad_control),
                           ("missing_file", missing_file)):
            os.makedirs(os.path.join(repo, name, "1"))
            with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
                f.write(text.replace('"one_slot"', '"%s"' % name))
        server = Server("--exit-on-error=false", repo=repo)
        try:
            stub = server.inference()
            index = stub.RepositoryIndex(harness.grpc_service_pb2.RepositoryIndexRequest(),
                                         timeout=RPC_TIMEOUT)
            states = {m.name: (m.state, m.reason) for m in index.models}
            self.assertEqual(states["good"][0], "READY")
            self.assertEqual(states["bad_control"][0], "UNAVAILABLE")
            self.assertIn("bad_control/config.pbtxt", states["bad_control"][1])
            self.assertIn("sequence_batching.control_input[0]", states["bad_control"][1])
            self.assertIn("int32_false_true", states["bad_control"][1])
            self.assertEqual(states["missing_file"][0], "UNAVAILABLE")
            self.assertIn("initial_state", states["missing_file"][1])
            self.assertIn("nope.bin", states["missing_file"][1])
            self.assertEqual(out_value(stub.ModelInfer(
                seq_request("good", 3, 1, start=True, end=True), timeout=RPC_TIMEOUT)), 3)
        finally:
            stop_clean(server)


class Unload(unittest.TestCase):
    """Unloading a sequence model while sequences run, wait in the backlog
    and sit idle in their slots: every request is answered, OK or
    UNAVAILABLE, the model reloads and serves again, and the server stops
    clean."""

    def test_unload_with_live_sequences(self):
        server = Server("--model-control-mode=explicit", "--load-model=simple_sequence_state",
                        repo=harness.EXAMPLES)
        try:
            stub = server.inference()
            m = "simple_sequence_state"
            for s in range(4):  # bound, idle
                stub.ModelInfer(seq_request(m, 1, 700 + s, start=True), timeout=RPC_TIMEOUT)
            stream = Stream(stub)
            n = 40  # 8 slots: most wait in the backlog
            for k in range(3):
                for s in range(n):
                    stream.put(seq_request(m, 1, 800 + s, start=k == 0, rid="%d:%d" % (s, k)))
            stub.RepositoryModelUnload(
                harness.grpc_service_pb2.RepositoryModelUnloadRequest(model_name=m),
                timeout=RPC_TIMEOUT)
            got = stream.responses(3 * n)
            stream.close()
            for rid, v in got.items():
                if isinstance(v, str):  # refused at the model, or after it left
                    self.assertRegex(v, "unloading|has no available versions: unloaded", rid)
            stub.RepositoryModelLoad(
                harness.grpc_service_pb2.RepositoryModelLoadRequest(model_name=m),
                timeout=RPC_TIMEOUT)
            self.assertEqual(out_value(stub.ModelInfer(
                seq_request(m, 5, 700, start=True, end=True), timeout=RPC_TIMEOUT)), 5)
        finally:
            stop_clean(server)


# The recorder backend logs each batch's request ids: with oldest batching,
# a batch holds at most one request of a sequence, and each sequence's
# steps run in order.
RECORDED = """
name: "recorded"
backend: "recorder"
max_batch_size: 8
sequence_batching {
  oldest { max_candidate_sequences: 16 max_queue_delay_microseconds: 20000
           preferred_batch_size: [ 2, 4 ] }
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }
  ]
}
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
parameters [
  { key: "record_file" value: { string_value: "recorded.log" } },
  { key: "execute_delay_ms" value: { string_value: "2" } }
]
"""


class OldestBatches(unittest.TestCase):

    def test_one_request_per_sequence_per_batch_in_order(self):
        tmp = os.environ.get("TEST_TMPDIR")
        repo = tempfile.mkdtemp(prefix="repo", dir=tmp)
        records = tempfile.mkdtemp(prefix="records", dir=tmp)
        os.makedirs(os.path.join(repo, "recorded", "1"))
        with open(os.path.join(repo, "recorded", "config.pbtxt"), "w") as f:
            f.write(RECORDED)
        server = Server(repo=repo, backends=harness.combined_backends(),
                        env={"NEREID_RECORD_DIR": records})
        try:
            stub = server.inference()
            stream = Stream(stub, output="OUTPUT0")
            n, steps = 24, 6
            for k in range(steps):
                for s in range(n):
                    arr = np.full((1, 1), s, dtype=np.int32)
                    params = {"sequence_id": 100 + s}
                    if k == 0:
                        params["sequence_start"] = True
                    if k == steps - 1:
                        params["sequence_end"] = True
                    stream.put(infer_request("recorded", [("INPUT0", "INT32", arr)],
                                             rid="s%d-%d" % (s, k), params=params))
            got = stream.responses(n * steps)
            stream.close()
            self.assertEqual(len(got), n * steps)
            for rid, v in got.items():
                self.assertIsInstance(v, int, "%s: %s" % (rid, v))
            with open(os.path.join(records, "recorded.log")) as f:
                log = f.read()
        finally:
            stop_clean(server)
        batches = [line.split("ids=")[1].split(",")
                   for line in log.splitlines() if line.startswith("execute_start")]
        self.assertGreater(len(batches), 0)
        self.assertTrue(any(len(b) > 1 for b in batches), "no batch formed: %s" % batches)
        done = {}
        for ids in batches:
            seqs = [rid.split("-")[0] for rid in ids]
            self.assertEqual(len(seqs), len(set(seqs)), "two of a sequence: %s" % ids)
            for rid in ids:
                s, k = rid.split("-")
                self.assertEqual(done.get(s, -1) + 1, int(k), "out of order: %s" % rid)
                done[s] = int(k)
        self.assertEqual(sorted(done.values()), [steps - 1] * n)


if __name__ == "__main__":
    harness.main()
