"""End to end: ensembles (issue 17) cancelled and unloaded. A client
cancel or an expired deadline while a step is queued or runs reaches that
step, the composing model is left with nothing in flight and the server
serves on; unloading an ensemble or one of its composing models while runs
are in flight ends every run cleanly. Configs and helpers: ensemble_test.py.
"""

import time

import grpc
import numpy as np

import harness
from harness import stop_clean
import grpc_service_pb2 as pb
from ensemble_test import (BASE, DELAY_S, E, RPC_TIMEOUT, SLOW, EnsembleCase, addsub,
                           ensemble, identity, in_request, one_step, outputs, recorder,
                           wait_until)

BATCHING = "dynamic_batching { }"


class Cancels(EnsembleCase):
    MODELS = dict(BASE, **{
        "cslow": recorder("cslow"),
        "ens_cslow": one_step("ens_cslow", "cslow"),
        "fast2": identity("fast2"),
        "cslow2": recorder("cslow2"),
        "ens_cchain": ensemble("ens_cchain", [("IN", "INT32", "-1")], [("OUT", "INT32", "-1")],
                               [("fast2", {"INPUT0": "IN"}, {"OUTPUT0": "F"}),
                                ("cslow2", {"INPUT0": "F"}, {"OUTPUT0": "OUT"})]),
        # IN -> bslow_a -> A; IN -> bfast -> F -> bslow_b -> B; (A, B) -> bjoin.
        "bslow_a": recorder("bslow_a", extra=BATCHING),
        "bslow_b": recorder("bslow_b", extra=BATCHING),
        "bfast": identity("bfast"), "bjoin": addsub("bjoin", dims="-1"),
        "ens_branches": ensemble("ens_branches", [("IN", "INT32", "-1")],
                                 [("SUM", "INT32", "-1"), ("DIFF", "INT32", "-1")],
                                 [("bslow_a", {"INPUT0": "IN"}, {"OUTPUT0": "A"}),
                                  ("bfast", {"INPUT0": "IN"}, {"OUTPUT0": "F"}),
                                  ("bslow_b", {"INPUT0": "F"}, {"OUTPUT0": "B"}),
                                  ("bjoin", {"INPUT0": "A", "INPUT1": "B"},
                                   {"OUTPUT0": "SUM", "OUTPUT1": "DIFF"})])})

    def assert_quiet(self, *models):
        """Waits until the models' counts stop moving: no step in flight."""
        def quiet():
            a = [self.counts(m) for m in models]
            time.sleep(0.5 * SLOW)
            return a == [self.counts(m) for m in models]
        self.assertTrue(wait_until(quiet, 30), models)

    def cancel_while_running(self, model, step):
        """Starts a run of `model` and cancels it while its step `step`
        executes (400 ms): the step sees the cancellation, nothing of the
        run stays behind, and the next run works."""
        before = self.counts(step)
        started = len(self.records(step, "execute_start"))
        cancelled = len(self.records(step, "cancelled"))
        f = self.stub.ModelInfer.future(in_request(model, [1, 2, 3]), timeout=RPC_TIMEOUT)
        self.assertTrue(wait_until(lambda: len(self.records(step, "execute_start")) > started, 5))
        self.assertTrue(f.cancel())
        with self.assertRaises(grpc.FutureCancelledError):
            f.result()
        self.assertTrue(wait_until(
            lambda: len(self.records(step, "cancelled")) > cancelled, 5),
            "the step did not see the cancellation")
        self.assertEqual(self.settled(step, before, 1), (0, 1))
        self.assertTrue(wait_until(lambda: len(self.records(step, "execute_end")) ==
                                   len(self.records(step, "execute_start")), 5))
        r = self.stub.ModelInfer(in_request(model, [9]), timeout=RPC_TIMEOUT)
        np.testing.assert_array_equal(outputs(r)["OUT"], [[9]])
        self.assert_healthy()

    def test_client_cancel_while_step_runs(self):
        self.cancel_while_running("ens_cslow", "cslow")

    def test_client_cancel_while_second_step_runs(self):
        self.cancel_while_running("ens_cchain", "cslow2")

    def test_deadline_while_step_runs(self):
        before, ens_before = self.counts("cslow"), self.counts("ens_cslow")
        cancelled = len(self.records("cslow", "cancelled"))
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.ModelInfer(in_request("ens_cslow", [4]), timeout=0.15)
        self.assertEqual(cm.exception.code(), E.DEADLINE_EXCEEDED)
        self.assertTrue(wait_until(lambda: len(self.records("cslow", "cancelled")) > cancelled,
                                   5), "the step did not see the deadline")
        self.assertEqual(self.settled("cslow", before, 1), (0, 1))
        self.assertTrue(wait_until(lambda: self.counts("ens_cslow")[1] > ens_before[1], 5),
                        "the ensemble did not count the failed run")
        self.assertEqual(self.counts("ens_cslow")[0], ens_before[0])
        self.assert_healthy()

    def test_cancel_while_step_queued(self):
        """A step still queued behind a direct request is dropped: it never
        executes."""
        before = self.counts("cslow")
        started = len(self.records("cslow", "execute_start"))
        blocker = self.stub.ModelInfer.future(harness.int32_request("cslow", [0]),
                                              timeout=RPC_TIMEOUT)
        self.assertTrue(wait_until(
            lambda: len(self.records("cslow", "execute_start")) > started, 5))
        f = self.stub.ModelInfer.future(in_request("ens_cslow", [1]), timeout=RPC_TIMEOUT)
        time.sleep(0.1)
        self.assertTrue(f.cancel())
        blocker.result()
        self.assertEqual(self.settled("cslow", before, 2), (1, 1))
        self.assertEqual(len(self.records("cslow", "execute_start")), started + 1)
        self.assert_healthy()

    def test_many_deadlines_leave_server_healthy(self):
        before = self.counts("cslow")
        futures = [self.stub.ModelInfer.future(in_request("ens_cslow", [i]),
                                               timeout=0.02 + 0.01 * (i % 30))
                   for i in range(200)]
        for f in futures:
            with self.assertRaises(grpc.RpcError) as cm:
                f.result()
            self.assertEqual(cm.exception.code(), E.DEADLINE_EXCEEDED)
        # Every step that reached cslow failed; none is left queued.
        self.assert_quiet("cslow")
        s, _ = self.counts("cslow")
        self.assertEqual(s, before[0])
        start = time.monotonic()
        r = self.stub.ModelInfer(in_request("ens_cslow", [7]), timeout=RPC_TIMEOUT)
        np.testing.assert_array_equal(outputs(r)["OUT"], [[7]])
        self.assertLess(time.monotonic() - start, DELAY_S + 0.3 * SLOW)
        self.assert_healthy()

    def test_deadlines_across_branches(self):
        """300 runs of a four-step graph with two 400 ms steps (batched),
        deadlines spread from 50 ms to 6 s: runs end at every stage, some
        complete. Each answer is right or DEADLINE_EXCEEDED, and nothing is
        left in flight."""
        n = 300
        deadlines = np.random.default_rng(11).uniform(0.05, 6, n)
        futures = [self.stub.ModelInfer.future(in_request("ens_branches", [k, -k]),
                                               timeout=deadlines[k])
                   for k in range(n)]
        ok = expired = 0
        for k, f in enumerate(futures):
            try:
                out = outputs(f.result())
                np.testing.assert_array_equal(out["SUM"], [[2 * k, -2 * k]])
                np.testing.assert_array_equal(out["DIFF"], [[0, 0]])
                ok += 1
            except grpc.RpcError as e:
                self.assertEqual(e.code(), E.DEADLINE_EXCEEDED, e.details())
                expired += 1
        self.assertEqual(ok + expired, n)
        self.assertGreater(ok, 0)
        self.assertGreater(expired, 0)
        self.assert_quiet("bslow_a", "bslow_b", "bfast", "bjoin")
        for m in ("bslow_a", "bslow_b"):
            self.assertEqual(len(self.records(m, "execute_start")),
                             len(self.records(m, "execute_end")), m)
        r = self.stub.ModelInfer(in_request("ens_branches", [5]), timeout=RPC_TIMEOUT)
        np.testing.assert_array_equal(outputs(r)["SUM"], [[10]])
        self.assert_healthy()


class Unload(EnsembleCase):
    """Explicit model control: unloads while ensemble runs are in flight.
    A server per test: a stuck unload must not fail the next test."""

    MODELS = {"u_slow": recorder("u_slow", delay_ms=300), "u_ident": identity("u_ident"),
              "ens_u": ensemble("ens_u", [("IN", "INT32", "-1")], [("OUT", "INT32", "-1")],
                                [("u_slow", {"INPUT0": "IN"}, {"OUTPUT0": "X"}),
                                 ("u_ident", {"INPUT0": "X"}, {"OUTPUT0": "OUT"})]),
              **BASE}

    @classmethod
    def setUpClass(cls):
        pass

    @classmethod
    def tearDownClass(cls):
        pass

    def setUp(self):
        type(self).start()

    def tearDown(self):
        stop_clean(self.server)

    def ready(self, name):
        return self.stub.ModelReady(pb.ModelReadyRequest(name=name), timeout=RPC_TIMEOUT).ready

    def load(self, name):
        self.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name),
                                      timeout=RPC_TIMEOUT)

    def unload(self, name, dependents=False):
        req = pb.RepositoryModelUnloadRequest(model_name=name)
        if dependents:
            req.parameters["unload_dependents"].bool_param = True
        # An unload waits for the runs in flight (seconds), not for more.
        self.stub.RepositoryModelUnload(req, timeout=20 * SLOW)

    def in_flight_then(self, action):
        """8 runs of ens_u in flight, then action(); every run ends with its
        answer or a clean error naming a model."""
        started = len(self.records("u_slow", "execute_start"))
        futures = [self.stub.ModelInfer.future(in_request("ens_u", [k]), timeout=RPC_TIMEOUT)
                   for k in range(8)]
        self.assertTrue(wait_until(
            lambda: len(self.records("u_slow", "execute_start")) > started, 5))
        t0 = time.monotonic()
        action()
        took = time.monotonic() - t0
        results = []
        for k, f in enumerate(futures):
            try:
                np.testing.assert_array_equal(outputs(f.result())["OUT"], [[k]])
                results.append("ok")
            except grpc.RpcError as e:
                self.assertIn(e.code(), (E.UNAVAILABLE, E.CANCELLED, E.INTERNAL), e.details())
                self.assertTrue("u_slow" in e.details() or "ens_u" in e.details(),
                                e.details())
                results.append(e.code())
        self.assertIsNone(self.server.proc.poll(), self.server.text()[-3000:])
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest(), timeout=RPC_TIMEOUT).live)
        self.assert_healthy()
        return results, took

    def test_load_brings_composing_models(self):
        """Triton's explicit mode: loading an ensemble loads its composing
        models first."""
        for m in ("ens_u", "u_slow", "u_ident"):
            self.unload(m)
            self.assertFalse(self.ready(m), m)
        self.load("ens_u")
        for m in ("ens_u", "u_slow", "u_ident"):
            self.assertTrue(self.ready(m), m)
        self.run_ok()

    def run_ok(self):
        r = self.stub.ModelInfer(in_request("ens_u", [8, 9]), timeout=RPC_TIMEOUT)
        np.testing.assert_array_equal(outputs(r)["OUT"], [[8, 9]])

    def reload_all(self):
        for m in ("u_slow", "u_ident", "ens_u"):
            self.load(m)
        self.run_ok()

    def test_unload_composing_model_during_runs(self):
        results, _ = self.in_flight_then(lambda: self.unload("u_slow"))
        self.assertIn("ok", results)  # the run that was executing finished
        self.assertFalse(self.ready("u_slow"))
        # The ensemble goes with it (Triton unloads an ensemble whose
        # composing model is unloaded), or at least fails cleanly.
        if self.ready("ens_u"):
            self.expect_error(in_request("ens_u", [1]), E.UNAVAILABLE, "u_slow")
        else:
            self.expect_error(in_request("ens_u", [1]), E.UNAVAILABLE, "ens_u")
        self.reload_all()

    def test_unload_ensemble_during_runs(self):
        results, _ = self.in_flight_then(lambda: self.unload("ens_u"))
        self.assertIn("ok", results)
        self.assertFalse(self.ready("ens_u"))
        self.expect_error(in_request("ens_u", [1]), E.UNAVAILABLE, "ens_u")
        self.assertTrue(self.ready("u_slow"))
        self.reload_all()

    def test_unload_dependents(self):
        """repository.md: unload_dependents also unloads the ensembles whose
        steps use the model."""
        self.reload_all()
        results, _ = self.in_flight_then(lambda: self.unload("u_ident", dependents=True))
        self.assertIn("ok", results)
        self.assertFalse(self.ready("u_ident"))
        self.assertFalse(self.ready("ens_u"))
        self.assertTrue(self.ready("u_slow"))
        self.reload_all()


if __name__ == "__main__":
    harness.main()
