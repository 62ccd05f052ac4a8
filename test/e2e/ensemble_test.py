"""End to end: ensembles (issue 17, Triton's `platform: "ensemble"`) on a
test-local repository. Independent branches run in parallel and a step
starts as soon as its inputs exist; thousands of concurrent runs, every
output checked; a decoupled step streamed through a downstream step; a
step's error ends the run with its text; priority and queue timeout reach
the steps, whose model batches them with its direct traffic; statistics of
the ensemble and of its composing models; a sequence model inside an
ensemble gets the correlation ID and flags. Cancels, deadlines and
unloads: ensemble_cancel_test.py, which shares the helpers here.

Delayed steps use the recorder test backend (its execute sleep watches for
cancellation and writes a `cancelled` line, test/backends/README.md)."""

import concurrent.futures
import os
import queue
import re
import tempfile
import time
import unittest

import grpc
import numpy as np

import harness
from harness import Server, infer_request, stop_clean
import grpc_service_pb2 as pb

SLOW = harness.SLOW
RPC_TIMEOUT = 60 * SLOW
E = grpc.StatusCode
DELAY_S = 0.4  # the delayed steps' execute time

# ---- configs ------------------------------------------------------------------


def tensors(ts):
    """(name, datatype, dims) tuples as a config's tensor list."""
    return ",\n  ".join('{ name: "%s" data_type: TYPE_%s dims: [ %s ] }' % t for t in ts)


def config(name, kind, inputs, outputs, max_batch=8, extra=""):
    """A model config; kind: 'backend: "..."' or 'platform: "ensemble"'."""
    return """name: "%s"
%s
max_batch_size: %d
input [
  %s
]
output [
  %s
]
%s
""" % (name, kind, max_batch, tensors(inputs), tensors(outputs), extra)


ONE_CPU = "instance_group [ { count: 1 kind: KIND_CPU } ]\n"


def addsub(name, dims="16", extra=""):
    return config(name, 'backend: "addsub"', [("INPUT0", "INT32", dims), ("INPUT1", "INT32", dims)],
                  [("OUTPUT0", "INT32", dims), ("OUTPUT1", "INT32", dims)], extra=ONE_CPU + extra)


def identity(name, max_batch=8, dtype="INT32"):
    return config(name, 'backend: "identity"', [("INPUT0", dtype, "-1")],
                  [("OUTPUT0", dtype, "-1")], max_batch, ONE_CPU)


def recorder(name, delay_ms=int(DELAY_S * 1000), max_batch=8, extra="", **params):
    """OUTPUT0 = INPUT0 (INT32 [-1]) after delay_ms, one instance,
    recording to <name>.log."""
    params.setdefault("record_file", name + ".log")
    params["execute_delay_ms"] = str(delay_ms)
    plist = ",\n".join('  { key: "%s" value: { string_value: "%s" } }' % kv
                       for kv in sorted(params.items()))
    return config(name, 'backend: "recorder"', [("INPUT0", "INT32", "-1")],
                  [("OUTPUT0", "INT32", "-1")], max_batch,
                  ONE_CPU + extra + "\nparameters [\n%s\n]" % plist)


def ensemble(name, inputs, outputs, steps, max_batch=8):
    """inputs/outputs: (name, datatype, dims); steps: (model, {model input:
    tensor}, {model output: tensor})."""
    def maps(kind, m):
        return "\n".join('      %s { key: "%s" value: "%s" }' % (kind, k, v)
                         for k, v in sorted(m.items()))
    step_text = ",\n".join("    {\n      model_name: \"%s\"\n      model_version: -1\n%s\n%s\n    }"
                           % (m, maps("input_map", i), maps("output_map", o))
                           for m, i, o in steps)
    return config(name, 'platform: "ensemble"', inputs, outputs, max_batch,
                  "ensemble_scheduling {\n  step [\n%s\n  ]\n}" % step_text)


def chain2(name, model, dims="16"):
    """`model` (addsub) twice: OUT0 = 2*IN0, OUT1 = 2*IN1 (simple_ensemble)."""
    return ensemble(name, [("IN0", "INT32", dims), ("IN1", "INT32", dims)],
                    [("OUT0", "INT32", dims), ("OUT1", "INT32", dims)],
                    [(model, {"INPUT0": "IN0", "INPUT1": "IN1"},
                      {"OUTPUT0": "sum", "OUTPUT1": "diff"}),
                     (model, {"INPUT0": "sum", "INPUT1": "diff"},
                      {"OUTPUT0": "OUT0", "OUTPUT1": "OUT1"})])


def one_step(name, model, max_batch=8):
    """IN -> model (INPUT0 -> OUTPUT0) -> OUT."""
    return ensemble(name, [("IN", "INT32", "-1")], [("OUT", "INT32", "-1")],
                    [(model, {"INPUT0": "IN"}, {"OUTPUT0": "OUT"})], max_batch)


def example_copy(name, src):
    with open(os.path.join(harness.EXAMPLES, src, "config.pbtxt")) as f:
        return f.read().replace('name: "%s"' % src, 'name: "%s"' % name, 1)


def repeat_ensemble():
    """repeat (decoupled) then identity on each of its responses."""
    return ensemble("ens_repeat",
                    [("IN", "INT32", "-1"), ("DELAY", "UINT32", "-1"), ("WAIT", "UINT32", "1")],
                    [("OUT", "INT32", "1"), ("IDX", "UINT32", "1")],
                    [("rep", {"IN": "IN", "DELAY": "DELAY", "WAIT": "WAIT"},
                      {"OUT": "rep_out", "IDX": "IDX"}),
                     ("ident0", {"INPUT0": "rep_out"}, {"OUTPUT0": "OUT"})], max_batch=0)


Q_FULL = 'dynamic_batching { default_queue_policy { max_queue_size: 1 } }'
Q_TIMEOUT = ('dynamic_batching { default_queue_policy { timeout_action: REJECT '
             'default_timeout_microseconds: 100000 allow_timeout_override: true } }')
BATCHER = 'dynamic_batching { preferred_batch_size: [ 8 ] max_queue_delay_microseconds: 300000 }'
PRIORITY = 'dynamic_batching { priority_levels: 2 default_priority_level: 2 }'


# Every server has these: EnsembleCase.assert_healthy runs ens_add2.
BASE = {"add": addsub("add"), "ens_add2": chain2("ens_add2", "add")}


def models():
    m = dict(BASE, **{
        "add_dyn": addsub("add_dyn", extra="dynamic_batching { }"),
        "ens_add2_dyn": chain2("ens_add2_dyn", "add_dyn"),
        "stat_add": addsub("stat_add"),
        "ens_stat": chain2("ens_stat", "stat_add"),
        "ens_shape": chain2("ens_shape", "add", dims="-1"),
        # IN1 is optional in the ensemble, required by the step's model.
        "ens_opt": chain2("ens_opt", "add").replace(
            'name: "IN1" data_type: TYPE_INT32 dims: [ 16 ]',
            'name: "IN1" data_type: TYPE_INT32 dims: [ 16 ] optional: true', 1),
        # One tensor into both inputs of a step; an ensemble as a step;
        # BYTES and a large tensor through steps.
        "ens_dup": ensemble("ens_dup", [("IN", "INT32", "-1")],
                            [("SUM", "INT32", "-1"), ("DIFF", "INT32", "-1")],
                            [("join", {"INPUT0": "IN", "INPUT1": "IN"},
                              {"OUTPUT0": "SUM", "OUTPUT1": "DIFF"})]),
        "ens_nested": ensemble("ens_nested", [("A", "INT32", "16"), ("B", "INT32", "16")],
                               [("OUT0", "INT32", "16"), ("OUT1", "INT32", "16")],
                               [("ens_add2", {"IN0": "A", "IN1": "B"},
                                 {"OUT0": "x", "OUT1": "y"}),
                                ("ens_add2", {"IN0": "x", "IN1": "y"},
                                 {"OUT0": "OUT0", "OUT1": "OUT1"})]),
        "ident_s": identity("ident_s", dtype="STRING"),
        "ens_bytes": ensemble("ens_bytes", [("IN", "STRING", "-1")], [("OUT", "STRING", "-1")],
                              [("ident_s", {"INPUT0": "IN"}, {"OUTPUT0": "mid"}),
                               ("ident_s", {"INPUT0": "mid"}, {"OUTPUT0": "OUT"})]),
        "ens_big": ensemble("ens_big", [("IN", "INT32", "-1")], [("OUT", "INT32", "-1")],
                            [("fast", {"INPUT0": "IN"}, {"OUTPUT0": "mid"}),
                             ("fast", {"INPUT0": "mid"}, {"OUTPUT0": "OUT"})]),
        # Parallel branches.
        "slow_a": recorder("slow_a"), "slow_b": recorder("slow_b"),
        "slow_c": recorder("slow_c"), "slow_d": recorder("slow_d"),
        "fast": identity("fast"),
        "join": addsub("join", dims="-1"),
        "ens_parallel": ensemble("ens_parallel", [("IN", "INT32", "-1")],
                                 [("A", "INT32", "-1"), ("B", "INT32", "-1")],
                                 [("slow_a", {"INPUT0": "IN"}, {"OUTPUT0": "A"}),
                                  ("slow_b", {"INPUT0": "IN"}, {"OUTPUT0": "B"})]),
        # IN -> slow_c -> S; IN -> fast -> F -> slow_d -> D; (S, D) -> join.
        "ens_join": ensemble("ens_join", [("IN", "INT32", "-1")],
                             [("SUM", "INT32", "-1"), ("DIFF", "INT32", "-1"),
                              ("F", "INT32", "-1")],
                             [("slow_c", {"INPUT0": "IN"}, {"OUTPUT0": "S"}),
                              ("fast", {"INPUT0": "IN"}, {"OUTPUT0": "F"}),
                              ("slow_d", {"INPUT0": "F"}, {"OUTPUT0": "D"}),
                              ("join", {"INPUT0": "S", "INPUT1": "D"},
                               {"OUTPUT0": "SUM", "OUTPUT1": "DIFF"})]),
        # Decoupled.
        "rep": example_copy("rep", "repeat_int32"),
        "ident0": identity("ident0", max_batch=0),
        "ens_repeat": repeat_ensemble(),
        # Errors.
        "failer": recorder("failer", delay_ms=0, fail_at="request"),
        "slow_e": recorder("slow_e"),
        "ens_fail": ensemble("ens_fail", [("IN", "INT32", "-1")],
                             [("X", "INT32", "-1"), ("Y", "INT32", "-1")],
                             [("failer", {"INPUT0": "IN"}, {"OUTPUT0": "X"}),
                              ("slow_e", {"INPUT0": "IN"}, {"OUTPUT0": "Y"})]),
        "qfull": recorder("qfull", delay_ms=300, max_batch=1, extra=Q_FULL),
        "ens_qfull": one_step("ens_qfull", "qfull", max_batch=1),
        "qtime": recorder("qtime", delay_ms=300, max_batch=1, extra=Q_TIMEOUT),
        "ens_qtime": one_step("ens_qtime", "qtime", max_batch=1),
        "batcher": recorder("batcher", delay_ms=50, extra=BATCHER),
        "ens_batcher": one_step("ens_batcher", "batcher"),
        # The blocker must still run when the high-priority requests reach
        # the queue, 60 ms after it was sent: 250 ms leaves room on a busy
        # host (100 ms was not always enough under ASan with other tests).
        "prio": recorder("prio", delay_ms=250, max_batch=1, extra=PRIORITY),
        "ens_prio": one_step("ens_prio", "prio", max_batch=1),
        # Sequences.
        "seq_dyna": example_copy("seq_dyna", "simple_dyna_sequence"),
        "seq_direct": example_copy("seq_direct", "simple_sequence"),
    })
    for seq in ("seq_dyna", "seq_direct"):
        m["ens_" + seq] = ensemble("ens_" + seq, [("IN", "INT32", "1")],
                                   [("OUT", "INT32", "1")],
                                   [(seq, {"INPUT": "IN"}, {"OUTPUT": "OUT"})])
    return m


def load_order(configs):
    """Model names, each after the models its steps name."""
    order = []

    def visit(name):
        if name not in order:
            for step in re.findall(r'model_name: "([^"]+)"', configs[name]):
                visit(step)
            order.append(name)
    for name in sorted(configs):
        visit(name)
    return order


def write_repo(configs):
    repo = tempfile.mkdtemp(prefix="ens_repo", dir=os.environ.get("TEST_TMPDIR"))
    for name, text in configs.items():
        os.makedirs(os.path.join(repo, name, "1"))
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(text)
    return repo


# ---- requests and answers ----------------------------------------------------------

def pair_request(model, a, b, outputs=None, rid=""):
    return infer_request(model, [("IN0", "INT32", a), ("IN1", "INT32", b)],
                         outputs=outputs, rid=rid)


def in_request(model, values, rid="", params=None):
    arr = np.asarray(values, dtype=np.int32).reshape(1, -1)
    return infer_request(model, [("IN", "INT32", arr)], rid=rid, params=params)


def outputs(resp, dtype=np.int32):
    return {o.name: np.frombuffer(resp.raw_output_contents[i], dtype=dtype).reshape(o.shape)
            for i, o in enumerate(resp.outputs)}


def final(resp):
    params = resp.infer_response.parameters
    assert "triton_final_response" in params, resp
    return params["triton_final_response"].bool_param


def wait_until(pred, timeout):
    deadline = time.monotonic() + timeout * SLOW
    while not pred():
        if time.monotonic() > deadline:
            return pred()
        time.sleep(0.01)
    return True


class EnsembleCase(unittest.TestCase):
    """A server (explicit model control) on MODELS, both backend folders;
    every model is loaded, composing models first, so that these tests
    need not rely on the repository's load order."""

    @classmethod
    def setUpClass(cls):
        cls.start()

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.server)

    @classmethod
    def start(cls):
        cls.dir = tempfile.mkdtemp(prefix="records", dir=os.environ.get("TEST_TMPDIR"))
        cls.server = Server("--model-control-mode=explicit", repo=write_repo(cls.MODELS),
                            backends=harness.combined_backends(),
                            env={"NEREID_RECORD_DIR": cls.dir})
        cls.stub = cls.server.inference()
        for name in load_order(cls.MODELS):
            cls.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name),
                                         timeout=RPC_TIMEOUT)

    def records(self, model, event):
        try:
            with open(os.path.join(self.dir, model + ".log")) as f:
                return [line for line in f if line.startswith(event + " ")]
        except FileNotFoundError:
            return []

    def stats(self, model):
        s = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name=model),
                                      timeout=RPC_TIMEOUT)
        self.assertEqual(len(s.model_stats), 1, s)
        return s.model_stats[0]

    def counts(self, model):
        st = self.stats(model).inference_stats
        return st.success.count, st.fail.count

    def settled(self, model, before, total):
        """Waits until `total` more requests of `model` are counted (success
        plus fail) and checks that no more come: no step left in flight."""
        def done():
            s, f = self.counts(model)
            return s + f - sum(before) >= total
        self.assertTrue(wait_until(done, 10), (model, before, self.counts(model), total))
        time.sleep(0.3 * SLOW)
        s, f = self.counts(model)
        self.assertEqual(s + f - sum(before), total, (model, before, (s, f)))
        return s - before[0], f - before[1]

    def assert_healthy(self):
        self.assertIsNone(self.server.proc.poll(), self.server.text()[-3000:])
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest(), timeout=RPC_TIMEOUT).live)
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        out = outputs(self.stub.ModelInfer(pair_request("ens_add2", a, a + 1),
                                           timeout=RPC_TIMEOUT))
        np.testing.assert_array_equal(out["OUT0"], 2 * a)
        np.testing.assert_array_equal(out["OUT1"], 2 * (a + 1))

    def expect_error(self, req, code, *needles, timeout=RPC_TIMEOUT):
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.ModelInfer(req, timeout=timeout)
        self.assertEqual(cm.exception.code(), code, cm.exception.details())
        for n in needles:
            self.assertIn(n, cm.exception.details())
        return cm.exception.details()


class Ensembles(EnsembleCase):
    MODELS = models()

    # ---- basics and results ----

    def test_metadata_and_config(self):
        cfg = self.stub.ModelConfig(pb.ModelConfigRequest(name="ens_add2"),
                                    timeout=RPC_TIMEOUT).config
        self.assertEqual(cfg.platform, "ensemble")
        self.assertEqual([s.model_name for s in cfg.ensemble_scheduling.step], ["add", "add"])
        md = self.stub.ModelMetadata(pb.ModelMetadataRequest(name="ens_add2"),
                                     timeout=RPC_TIMEOUT)
        self.assertEqual(md.platform, "ensemble")
        self.assertEqual([i.name for i in md.inputs], ["IN0", "IN1"])
        self.assertEqual([o.name for o in md.outputs], ["OUT0", "OUT1"])
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name="ens_add2"),
                                             timeout=RPC_TIMEOUT).ready)
        # A decoupled step makes the ensemble decoupled.
        cfg = self.stub.ModelConfig(pb.ModelConfigRequest(name="ens_repeat"),
                                    timeout=RPC_TIMEOUT).config
        self.assertTrue(cfg.model_transaction_policy.decoupled)

    def test_chain_result_and_requested_outputs(self):
        a = np.arange(16, dtype=np.int32).reshape(1, 16) - 5
        b = np.full((1, 16), 7, dtype=np.int32)
        r = self.stub.ModelInfer(pair_request("ens_add2", a, b, rid="chain"),
                                 timeout=RPC_TIMEOUT)
        self.assertEqual((r.model_name, r.model_version, r.id), ("ens_add2", "1", "chain"))
        out = outputs(r)
        self.assertEqual(sorted(out), ["OUT0", "OUT1"])
        np.testing.assert_array_equal(out["OUT0"], 2 * a)
        np.testing.assert_array_equal(out["OUT1"], 2 * b)
        self.assertEqual(list(r.outputs[0].shape), [1, 16])
        # Only what was asked for.
        r = self.stub.ModelInfer(pair_request("ens_add2", a, b, outputs=["OUT1"]),
                                 timeout=RPC_TIMEOUT)
        self.assertEqual([o.name for o in r.outputs], ["OUT1"])
        np.testing.assert_array_equal(outputs(r)["OUT1"], 2 * b)
        # A batch of 3.
        a3 = np.arange(48, dtype=np.int32).reshape(3, 16)
        r = self.stub.ModelInfer(pair_request("ens_add2", a3, -a3), timeout=RPC_TIMEOUT)
        np.testing.assert_array_equal(outputs(r)["OUT0"], 2 * a3)
        np.testing.assert_array_equal(outputs(r)["OUT1"], -2 * a3)
        # An unknown requested output is refused, naming it.
        self.expect_error(pair_request("ens_add2", a, b, outputs=["nosuch"]),
                          E.INVALID_ARGUMENT, "nosuch")

    def test_graph_shapes(self):
        # One tensor into both inputs of join.
        r = self.stub.ModelInfer(in_request("ens_dup", [4, -9]), timeout=RPC_TIMEOUT)
        np.testing.assert_array_equal(outputs(r)["SUM"], [[8, -18]])
        np.testing.assert_array_equal(outputs(r)["DIFF"], [[0, 0]])
        # An ensemble whose steps are ensembles: (A, B) -> (4A, 4B).
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        b = np.full((1, 16), -3, dtype=np.int32)
        r = self.stub.ModelInfer(infer_request("ens_nested", [("A", "INT32", a), ("B", "INT32", b)]),
                                 timeout=RPC_TIMEOUT)
        np.testing.assert_array_equal(outputs(r)["OUT0"], 4 * a)
        np.testing.assert_array_equal(outputs(r)["OUT1"], 4 * b)

    def test_bytes_and_large_tensors(self):
        values = [b"", b"x", "\u00e9t\u00e9".encode(), b"\0" * 1000]
        req = pb.ModelInferRequest(model_name="ens_bytes")
        t = req.inputs.add()
        t.name, t.datatype = "IN", "BYTES"
        t.shape.extend([1, len(values)])
        raw = b"".join(len(v).to_bytes(4, "little") + v for v in values)
        req.raw_input_contents.append(raw)
        r = self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)
        self.assertEqual((r.outputs[0].datatype, list(r.outputs[0].shape)), ("BYTES", [1, 4]))
        self.assertEqual(r.raw_output_contents[0], raw)
        big = np.random.default_rng(3).integers(-2**31, 2**31, size=(1, 2**19),
                                                 dtype=np.int64).astype(np.int32)
        r = self.stub.ModelInfer(infer_request("ens_big", [("IN", "INT32", big)]),
                                 timeout=RPC_TIMEOUT)
        np.testing.assert_array_equal(outputs(r)["OUT"], big)

    def test_thousands_of_concurrent_runs(self):
        rng = np.random.default_rng(17)
        channels = [grpc.insecure_channel(self.server.address) for _ in range(4)]
        stubs = [harness.grpc_service_pb2_grpc.GRPCInferenceServiceStub(c) for c in channels]
        n = 3000
        sent = []
        for i in range(n):
            batch = 1 + i % 3
            a = rng.integers(-2**31, 2**31, size=(batch, 16), dtype=np.int64).astype(np.int32)
            b = rng.integers(-2**31, 2**31, size=(batch, 16), dtype=np.int64).astype(np.int32)
            model = "ens_add2_dyn" if i % 2 else "ens_add2"
            f = stubs[i % 4].ModelInfer.future(pair_request(model, a, b, rid="r%d" % i),
                                              timeout=RPC_TIMEOUT)
            sent.append((f, a, b, model))
        bad = []
        for i, (f, a, b, model) in enumerate(sent):
            try:
                r = f.result()
                out = outputs(r)
                # (a + b) + (a - b) and (a + b) - (a - b), wrapping as int32.
                if (r.id != "r%d" % i or r.model_name != model
                        or not np.array_equal(out["OUT0"], (a.astype(np.int64) * 2).astype(np.int32))
                        or not np.array_equal(out["OUT1"], (b.astype(np.int64) * 2).astype(np.int32))):
                    bad.append((i, "wrong answer"))
            except grpc.RpcError as e:
                bad.append((i, e.code(), e.details()))
        for c in channels:
            c.close()
        self.assertEqual((len(bad), bad[:10]), (0, []))

    # ---- parallel branches ----

    def timed(self, model, values):
        start = time.monotonic()
        r = self.stub.ModelInfer(in_request(model, values), timeout=RPC_TIMEOUT)
        return time.monotonic() - start, outputs(r)

    def test_parallel_branches_run_at_once(self):
        self.timed("ens_parallel", [0])  # warm-up
        elapsed, out = self.timed("ens_parallel", [3, 1, 4])
        np.testing.assert_array_equal(out["A"], [[3, 1, 4]])
        np.testing.assert_array_equal(out["B"], [[3, 1, 4]])
        # 400 ms each, side by side: about 400 ms, not 800.
        self.assertGreaterEqual(elapsed, DELAY_S)
        self.assertLess(elapsed, DELAY_S + 0.25 * SLOW, "branches ran one after the other?")

    def test_fast_branch_joined_with_slow(self):
        """slow_d waits only for the fast step before it, not for slow_c in
        the other branch; join waits for both."""
        elapsed, out = self.timed("ens_join", [5, -6, 7])
        np.testing.assert_array_equal(out["SUM"], [[10, -12, 14]])
        np.testing.assert_array_equal(out["DIFF"], [[0, 0, 0]])
        np.testing.assert_array_equal(out["F"], [[5, -6, 7]])
        self.assertGreaterEqual(elapsed, DELAY_S)
        self.assertLess(elapsed, DELAY_S + 0.25 * SLOW)
        c, d = self.records("slow_c", "execute_start"), self.records("slow_d", "execute_start")
        t = lambda line: int(line.split("t_ns=")[1].split()[0])  # noqa: E731
        self.assertLess(abs(t(c[-1]) - t(d[-1])), 0.15e9 * SLOW, (c[-1], d[-1]))

    # ---- decoupled steps ----

    def stream(self, reqs):
        return list(self.stub.ModelStreamInfer(iter(reqs), timeout=RPC_TIMEOUT))

    def repeat_req(self, values, delay_ms, rid, empty_final):
        n = len(values)
        params = {"triton_enable_empty_final_response": True} if empty_final else None
        return infer_request("ens_repeat", [
            ("IN", "INT32", np.asarray(values, dtype=np.int32)),
            ("DELAY", "UINT32", np.full(n, delay_ms, dtype=np.uint32)),
            ("WAIT", "UINT32", np.zeros(1, dtype=np.uint32))], rid=rid, params=params)

    def check_repeat_stream(self, n, delay_ms):
        values = list(np.arange(n, dtype=np.int32) * 3 - 7)
        got = self.stream([self.repeat_req(values, delay_ms, "e", True),
                           self.repeat_req(values, delay_ms, "p", False)])
        for resp in got:
            self.assertEqual(resp.error_message, "")
        e = [r for r in got if r.infer_response.id == "e"]
        p = [r for r in got if r.infer_response.id == "p"]
        for rs in (e[:n], p):
            self.assertEqual(len(rs), n)
            self.assertEqual([r.infer_response.model_name for r in rs], ["ens_repeat"] * n)
            outs = [outputs(r.infer_response, np.int32) for r in rs]
            self.assertEqual([int(o["OUT"].reshape(-1)[0]) for o in outs], values)
            idx = [int(np.frombuffer(r.infer_response.raw_output_contents[
                [o.name for o in r.infer_response.outputs].index("IDX")], np.uint32)[0])
                for r in rs]
            self.assertEqual(idx, list(range(n)))
            self.assertFalse(any(final(r) for r in rs))
        # With the empty final: one more response, empty and final.
        self.assertEqual(len(e), n + 1)
        last = e[-1].infer_response
        self.assertTrue(final(e[-1]))
        self.assertEqual((last.model_name, last.id, len(last.outputs)), ("ens_repeat", "e", 0))

    def test_decoupled_step_streams_through(self):
        self.check_repeat_stream(50, 2)

    def test_decoupled_step_flood_in_order(self):
        self.check_repeat_stream(2000, 0)

    def test_decoupled_stream_cancel_reaches_step(self):
        """A client cancel while the decoupled step streams (100 responses
        100 ms apart) ends the repeat request early, and the server goes
        on serving."""
        before = self.counts("rep")
        q = queue.Queue()
        responses = self.stub.ModelStreamInfer(iter(q.get, None), timeout=RPC_TIMEOUT)
        q.put(self.repeat_req(list(range(100)), 100, "long", False))
        for k in range(3):
            r = next(responses)
            self.assertEqual(r.error_message, "")
            self.assertEqual(int(outputs(r.infer_response)["OUT"].reshape(-1)[0]), k)
        cancelled_at = time.monotonic()
        responses.cancel()
        q.put(None)
        self.assertTrue(wait_until(lambda: sum(self.counts("rep")) > sum(before), 5),
                        "the repeat step did not end after the cancel")
        self.assertLess(time.monotonic() - cancelled_at, 5)
        self.assert_healthy()

    def test_many_runs_on_one_stream(self):
        """A non-decoupled ensemble over ModelStreamInfer: one response per
        request, each checked."""
        rng = np.random.default_rng(5)
        reqs, want = [], {}
        for i in range(500):
            a = rng.integers(-1000, 1000, size=(1, 16), dtype=np.int32)
            b = rng.integers(-1000, 1000, size=(1, 16), dtype=np.int32)
            reqs.append(pair_request("ens_add2", a, b, rid="s%d" % i))
            want["s%d" % i] = (2 * a, 2 * b)
        for resp in self.stream(reqs):
            self.assertEqual(resp.error_message, "")
            out = outputs(resp.infer_response)
            a2, b2 = want.pop(resp.infer_response.id)
            np.testing.assert_array_equal(out["OUT0"], a2)
            np.testing.assert_array_equal(out["OUT1"], b2)
        self.assertEqual(want, {})

    def test_decoupled_zero_responses(self):
        got = self.stream([self.repeat_req([], 0, "none", True)])
        self.assertEqual(len(got), 1)
        self.assertTrue(final(got[0]))
        self.assertEqual(len(got[0].infer_response.outputs), 0)

    def test_decoupled_ensemble_aggregated_on_unary(self):
        """Nereid's nereid_aggregate_responses: one reply for every response."""
        values = list(range(40, 100, 3))
        req = self.repeat_req(values, 0, "agg", False)
        req.parameters["nereid_aggregate_responses"].bool_param = True
        r = self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)
        self.assertEqual(outputs(r)["OUT"].reshape(-1).tolist(), values)

    def test_decoupled_ensemble_refused_on_unary(self):
        self.expect_error(self.repeat_req([1, 2], 0, "u", False), E.UNIMPLEMENTED,
                          "decoupled", "ens_repeat")

    def test_steps_batched_with_direct_traffic(self):
        """The composing model's dynamic batcher takes the step requests:
        4 ensemble runs and 4 direct requests sent together go as one batch
        of 8 (the batcher waits up to 300 ms to fill it)."""
        started = len(self.records("batcher", "execute_start"))
        futures = [self.stub.ModelInfer.future(in_request("ens_batcher", [k], rid="e%d" % k),
                                               timeout=RPC_TIMEOUT) for k in range(4)]
        futures += [self.stub.ModelInfer.future(harness.int32_request("batcher", [k], rid="d%d" % k),
                                                timeout=RPC_TIMEOUT) for k in range(4)]
        for k, f in enumerate(futures):
            out = outputs(f.result())
            np.testing.assert_array_equal(out["OUT" if k < 4 else "OUTPUT0"], [[k % 4]])
        batches = self.records("batcher", "execute_start")[started:]
        # A step request carries the ensemble request's id.
        ids = sorted(i for line in batches for i in line.split("ids=")[1].split()[0].split(","))
        self.assertEqual(ids, ["d0", "d1", "d2", "d3", "e0", "e1", "e2", "e3"], batches)
        self.assertEqual([line.split("requests=")[1].split()[0] for line in batches], ["8"],
                         batches)

    # ---- errors ----

    def test_step_refuses_shape(self):
        before = self.counts("ens_shape")
        a = np.arange(5, dtype=np.int32).reshape(1, 5)
        msg = self.expect_error(pair_request("ens_shape", a, a), E.INVALID_ARGUMENT,
                                "unexpected shape", "'add'", "INPUT")
        self.assertIn("[-1,16]", msg)
        self.assertTrue(wait_until(lambda: self.counts("ens_shape")[1] > before[1], 5))
        self.assertEqual(self.counts("ens_shape"), (before[0], before[1] + 1))
        self.assert_healthy()

    def test_step_misses_required_input(self):
        """An optional ensemble input left out reaches a step whose model
        requires it: the step's required-inputs check (which a run skips
        only when every bound input is there) refuses it."""
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        msg = self.expect_error(infer_request("ens_opt", [("IN0", "INT32", a)]),
                                E.INVALID_ARGUMENT, "in ensemble 'ens_opt', step 0", "'add'")
        self.assertIn("INPUT0", msg)
        out = outputs(self.stub.ModelInfer(pair_request("ens_opt", a, a), timeout=RPC_TIMEOUT))
        np.testing.assert_array_equal(out["OUT0"], 2 * a)
        self.assert_healthy()

    def test_step_error_ends_run(self):
        before = self.counts("slow_e")
        start = time.monotonic()
        self.expect_error(in_request("ens_fail", [1, 2], rid="f1"), E.INTERNAL,
                          "recorder: failing at request as configured", "model=failer")
        elapsed = time.monotonic() - start
        # The other branch's step in flight is cancelled (ensemble.md):
        # dropped from the queue or cancelled while it runs, a failure
        # either way, so the error needs not wait for its 400 ms.
        self.assertEqual(self.settled("slow_e", before, 1), (0, 1),
                         "slow_e's step was not cancelled")
        self.assertLess(elapsed, DELAY_S, "the error waited for the slow branch")
        self.assert_healthy()

    def test_full_queue_of_a_step(self):
        futures = [self.stub.ModelInfer.future(in_request("ens_qfull", [i]), timeout=RPC_TIMEOUT)
                   for i in range(6)]
        ok, full = 0, 0
        for i, f in enumerate(futures):
            try:
                np.testing.assert_array_equal(outputs(f.result())["OUT"], [[i]])
                ok += 1
            except grpc.RpcError as e:
                self.assertEqual(e.code(), E.UNAVAILABLE, e.details())
                self.assertIn("Exceeds maximum queue size", e.details())
                full += 1
        self.assertGreaterEqual(ok, 1)
        self.assertGreaterEqual(full, 3)
        self.assertEqual(ok + full, 6)

    def test_queue_timeout_of_a_step(self):
        for timeout_us, expected in ((None, 0.1), (40000, 0.04)):
            blocker = self.stub.ModelInfer.future(harness.int32_request("qtime", [0]),
                                                  timeout=RPC_TIMEOUT)
            time.sleep(0.05)
            params = {"timeout": timeout_us} if timeout_us else None
            start = time.monotonic()
            self.expect_error(in_request("ens_qtime", [1], params=params), E.UNAVAILABLE,
                              "Request timeout expired")
            elapsed = time.monotonic() - start
            self.assertGreaterEqual(elapsed, expected * 0.9)
            self.assertLess(elapsed, expected + 0.15 * SLOW)
            blocker.result()

    def test_priority_reaches_steps(self):
        blocker = self.stub.ModelInfer.future(harness.int32_request("prio", [0]),
                                              timeout=RPC_TIMEOUT)
        time.sleep(0.03)
        done = {}

        def send(tag, priority):
            req = in_request("ens_prio", [1])
            req.parameters["priority"].uint64_param = priority
            f = self.stub.ModelInfer.future(req, timeout=RPC_TIMEOUT)
            f.add_done_callback(lambda _: done.__setitem__(tag, time.monotonic()))
            return f
        low = [send("l%d" % i, 2) for i in range(2)]
        time.sleep(0.03)
        high = [send("h%d" % i, 1) for i in range(2)]
        for f in [blocker] + low + high:
            f.result()
        self.assertTrue(wait_until(lambda: len(done) == 4, 5))
        self.assertLess(max(done["h0"], done["h1"]), min(done["l0"], done["l1"]), done)

    # ---- statistics ----

    def test_statistics(self):
        ens0, step0 = self.stats("ens_stat"), self.stats("stat_add")
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        n = 20
        for _ in range(n):
            self.stub.ModelInfer(pair_request("ens_stat", a, a), timeout=RPC_TIMEOUT)
        for _ in range(3):
            self.stub.ModelInfer(infer_request("stat_add", [("INPUT0", "INT32", a),
                                                            ("INPUT1", "INT32", a)]),
                                 timeout=RPC_TIMEOUT)
        # A backend counts a request once it has answered it: wait for all.
        self.assertTrue(wait_until(lambda: self.counts("stat_add")[0] -
                                   step0.inference_stats.success.count >= 2 * n + 3, 5))
        ens, step = self.stats("ens_stat"), self.stats("stat_add")
        d = lambda x, y: (x.count - y.count, x.ns - y.ns)  # noqa: E731
        es = d(ens.inference_stats.success, ens0.inference_stats.success)
        self.assertEqual(es[0], n)
        self.assertGreater(es[1], 0)
        self.assertEqual(d(ens.inference_stats.fail, ens0.inference_stats.fail)[0], 0)
        # Two steps per run, besides the 3 direct requests.
        ss = d(step.inference_stats.success, step0.inference_stats.success)
        self.assertEqual(ss[0], 2 * n + 3)
        self.assertGreater(ss[1], 0)
        # The composing model's queue time is the steps' time in its queue
        # (well under a second each here), not since some other origin.
        q = d(step.inference_stats.queue, step0.inference_stats.queue)
        self.assertEqual(q[0], 2 * n + 3)
        self.assertLess(q[1] / q[0], 0.5e9, "queue ns per request")
        # Each run's time covers its two steps' times.
        self.assertGreater(es[1] / n, ss[1] / (2 * n + 3))
        self.assertGreater(ens.last_inference, 0)
        everything = self.stub.ModelStatistics(pb.ModelStatisticsRequest(),
                                               timeout=RPC_TIMEOUT).model_stats
        names = [m.name for m in everything]
        self.assertEqual(names.count("ens_stat"), 1)
        self.assertEqual(names.count("stat_add"), 1)
        self.check_step_times(ens, ens0, n)

    def check_step_times(self, ens, ens0, n):
        """Nereid's extension: per-step time in the ensemble's entry."""
        if "ensemble_step_stats" not in pb.ModelStatistics.DESCRIPTOR.fields_by_name:
            self.skipTest("no ensemble_step_stats in ModelStatistics")
        now, then = ens.ensemble_step_stats, ens0.ensemble_step_stats
        self.assertEqual([(s.step, s.model_name, s.model_version) for s in now],
                         [(0, "stat_add", "1"), (1, "stat_add", "1")], ens)
        old = {s.step: s.time for s in then}
        for s in now:
            self.assertEqual(s.time.count - old[s.step].count if s.step in old else s.time.count,
                             n, now)
            self.assertGreater(s.time.ns, old[s.step].ns if s.step in old else 0)
        # The steps' time is inside the runs' time.
        steps_ns = sum(s.time.ns for s in now) - sum(s.time.ns for s in then)
        self.assertLess(steps_ns, ens.inference_stats.success.ns - ens0.inference_stats.success.ns)
        # Other models have no step entries.
        self.assertEqual(len(self.stats("stat_add").ensemble_step_stats), 0)

    # ---- sequences ----

    def seq_req(self, model, value, seq_id, start=False, end=False):
        params = {"sequence_id": seq_id}
        if start:
            params["sequence_start"] = True
        if end:
            params["sequence_end"] = True
        return infer_request(model, [("IN", "INT32", np.full((1, 1), value, np.int32))],
                             params=params)

    def seq_out(self, req):
        return int(outputs(self.stub.ModelInfer(req, timeout=RPC_TIMEOUT))["OUT"][0, 0])

    def test_sequence_step_gets_correlation_id_and_flags(self):
        # control_sum with CORRID: OUTPUT = INPUT + START + END * CORRID.
        got = [self.seq_out(self.seq_req("ens_seq_dyna", 5, 1001, start=True)),
               self.seq_out(self.seq_req("ens_seq_dyna", 6, 1001)),
               self.seq_out(self.seq_req("ens_seq_dyna", 7, 1001, end=True))]
        self.assertEqual(got, [6, 6, 7 + 1001])
        # START+END in one request.
        self.assertEqual(self.seq_out(self.seq_req("ens_seq_dyna", 1, 77, True, True)),
                         1 + 1 + 77)
        # The direct strategy: OUTPUT = INPUT + START.
        got = [self.seq_out(self.seq_req("ens_seq_direct", 10, 5, start=True)),
               self.seq_out(self.seq_req("ens_seq_direct", 11, 5, end=True))]
        self.assertEqual(got, [11, 11])

    def test_interleaved_sequences_through_ensemble(self):
        ids = list(range(300, 340))
        reqs = []
        for step in range(4):
            for sid in ids:
                reqs.append((sid, step, self.seq_req("ens_seq_dyna", step * 10, sid,
                                                     start=step == 0, end=step == 3)))
        results = {}

        def run(sid):
            for s, step, req in reqs:
                if s == sid:
                    results[(sid, step)] = self.seq_out(req)
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            list(ex.map(run, ids))
        for sid in ids:
            self.assertEqual([results[(sid, k)] for k in range(4)],
                             [0 + 1, 10, 20, 30 + sid])

    def test_a_closed_stream_ends_its_sequences_in_the_steps(self):
        # A stream starts 1201 and 1203 through the ensemble and leaves them
        # open; a unary START takes 1203 over. The stream's close ends 1201
        # in the step model (its START carried the stream's token through
        # the ensemble), not 1203.
        before = self.stats("seq_dyna").sequence_stats.stream_ended
        q = queue.Queue()
        responses = self.stub.ModelStreamInfer(iter(q.get, None), timeout=RPC_TIMEOUT)
        for sid in (1201, 1203):
            q.put(self.seq_req("ens_seq_dyna", 5, sid, start=True))
            r = next(responses)
            self.assertEqual(r.error_message, "")
        self.assertEqual(self.seq_out(self.seq_req("ens_seq_dyna", 5, 1203, start=True)), 6)
        q.put(None)
        self.assertEqual(list(responses), [])
        # The ends go in the reverse order of the STARTs, 1201's last.
        deadline = time.monotonic() + 10 * harness.SLOW
        while (self.stats("seq_dyna").sequence_stats.stream_ended == before
               and time.monotonic() < deadline):
            time.sleep(0.01)
        self.assertEqual(self.stats("seq_dyna").sequence_stats.stream_ended, before + 1)
        self.expect_error(self.seq_req("ens_seq_dyna", 1, 1201), E.INVALID_ARGUMENT,
                          "must specify the START flag", "seq_dyna")
        self.assertEqual(self.seq_out(self.seq_req("ens_seq_dyna", 7, 1203, end=True)),
                         7 + 1203)

    def test_sequence_step_without_correlation_id(self):
        req = infer_request("ens_seq_dyna", [("IN", "INT32", np.ones((1, 1), np.int32))])
        self.expect_error(req, E.INVALID_ARGUMENT,
                          "non-zero or non-empty correlation ID", "seq_dyna")


if __name__ == "__main__":
    harness.main()
