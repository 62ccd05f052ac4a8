"""End to end: ensembles in the model repository, as tritonserver has them.
An explicit load of an ensemble loads the models its steps use first (and
nested ensembles); a step model that fails fails the ensemble with its
reason; a cycle between ensembles fails and the server keeps serving;
unloading a step model unloads the ensembles using it; unload_dependents
on an ensemble unloads the step models no client loaded and no other
ensemble uses; reloading a step model reloads its ensembles; start-up in
mode none loads ensembles after their steps; an unload while the ensemble
still loads its steps ends cleanly. Every server stops on SIGINT with exit
code 0 and no sanitizer report."""

import concurrent.futures
import os
import random
import shutil
import tempfile
import threading
import time
import unittest

import grpc
import numpy as np

import harness
from harness import Server, stop_clean
import grpc_service_pb2 as pb
import grpc_service_pb2_grpc as pb_grpc

E = grpc.StatusCode
RPC_TIMEOUT = 60 * harness.SLOW
DEPENDENTS = pb.ModelRepositoryParameter(bool_param=True)

BROKEN_CONFIG = """name: "broken"
backend: "addsub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FOOBAR dims: [ 16 ] } ]
"""

# One INT32 [-1] tensor in, one out: a recorder whose model takes 2 s to
# initialize, and an ensemble of one step over it.
ONE_IO = ('input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]\n'
          'output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]\n')
SLOW_RECORDER = ('name: "slowrec"\nbackend: "recorder"\nmax_batch_size: 8\n' + ONE_IO +
                 'parameters [\n'
                 '  { key: "model_initialize_delay_ms" value: { string_value: "2000" } },\n'
                 '  { key: "record_file" value: { string_value: "slowrec.log" } } ]\n')
RECORDER_ENSEMBLE = ('name: "slowens"\nplatform: "ensemble"\nmax_batch_size: 8\n' + ONE_IO +
                     'ensemble_scheduling { step [ { model_name: "slowrec" model_version: -1\n'
                     '  input_map { key: "INPUT0" value: "INPUT0" }\n'
                     '  output_map { key: "OUTPUT0" value: "OUTPUT0" } } ] }\n')


def ensemble_config(name, steps):
    """An ensemble with simple's interface (INT32 [16] INPUT0, INPUT1 ->
    OUTPUT0, OUTPUT1) chaining `steps`, models with that same interface:
    each step's OUTPUT0 and OUTPUT1 feed the next one's INPUT0 and INPUT1.
    Two steps of simple give 2a and 2b."""
    io = "\n".join('%s [ { name: "%s0" data_type: TYPE_INT32 dims: [ 16 ] },\n'
                   '  { name: "%s1" data_type: TYPE_INT32 dims: [ 16 ] } ]'
                   % (kind, kind.upper(), kind.upper()) for kind in ("input", "output"))
    text = []
    for i, model in enumerate(steps):
        src = ("INPUT0", "INPUT1") if i == 0 else ("t%d_0" % i, "t%d_1" % i)
        dst = (("OUTPUT0", "OUTPUT1") if i == len(steps) - 1
               else ("t%d_0" % (i + 1), "t%d_1" % (i + 1)))
        text.append('{ model_name: "%s" model_version: -1\n'
                    '  input_map { key: "INPUT0" value: "%s" }\n'
                    '  input_map { key: "INPUT1" value: "%s" }\n'
                    '  output_map { key: "OUTPUT0" value: "%s" }\n'
                    '  output_map { key: "OUTPUT1" value: "%s" } }'
                    % (model, src[0], src[1], dst[0], dst[1]))
    return ('name: "%s"\nplatform: "ensemble"\nmax_batch_size: 8\n%s\n'
            'ensemble_scheduling { step [\n%s\n] }\n' % (name, io, ",\n".join(text)))


def make_repo(models):
    """A repository in a temporary folder: models maps a name to its config
    text, or to None for a copy of the example `simple` under that name.
    Each model gets an (empty) version folder 1."""
    root = tempfile.mkdtemp(prefix="ensrepo", dir=os.environ.get("TEST_TMPDIR"))
    for name, config in models.items():
        if config is None:
            shutil.copytree(os.path.join(harness.EXAMPLES, "simple"), os.path.join(root, name))
            path = os.path.join(root, name, "config.pbtxt")
            with open(path) as f:
                text = f.read().replace('name: "simple"', 'name: "%s"' % name, 1)
            with open(path, "w") as f:
                f.write(text)
            continue
        os.makedirs(os.path.join(root, name, "1"))
        with open(os.path.join(root, name, "config.pbtxt"), "w") as f:
            f.write(config)
    return root


def simple_request(model):
    """simple's inputs (a, b) for `model`: (request, a, b)."""
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.full((1, 16), 3, dtype=np.int32)
    return harness.infer_request(model, [("INPUT0", "INT32", a), ("INPUT1", "INT32", b)]), a, b


wait_until = harness.wait_until


class EnsembleTest(unittest.TestCase):
    MODE = "explicit"

    def start(self, models, *args, **kw):
        self.repo = make_repo(models)
        self.server = Server("--model-control-mode=" + self.MODE, *args, repo=self.repo, **kw)
        self.stub = self.server.inference()

    def tearDown(self):
        if hasattr(self, "server"):
            stop_clean(self.server)

    def load(self, name):
        return self.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name),
                                             timeout=RPC_TIMEOUT)

    def unload(self, name, dependents=False):
        req = pb.RepositoryModelUnloadRequest(model_name=name)
        if dependents:
            req.parameters["unload_dependents"].CopyFrom(DEPENDENTS)
        return self.stub.RepositoryModelUnload(req, timeout=RPC_TIMEOUT)

    def states(self):
        """{name: (version, state, reason)} of RepositoryIndex."""
        return {m.name: (m.version, m.state, m.reason) for m in self.stub.RepositoryIndex(
            pb.RepositoryIndexRequest(), timeout=RPC_TIMEOUT).models}

    def state(self, name):
        return self.states()[name][1]

    def ready(self, name):
        return self.stub.ModelReady(pb.ModelReadyRequest(name=name), timeout=RPC_TIMEOUT).ready

    def load_fails(self, name, *needles):
        """Loads `name`, which must fail with INVALID_ARGUMENT naming each
        needle; returns the message."""
        try:
            self.load(name)
        except grpc.RpcError as e:
            self.assertEqual(e.code(), E.INVALID_ARGUMENT, e.details())
            for n in needles:
                self.assertIn(n, e.details())
            return e.details()
        self.fail("loading '%s' succeeded" % name)

    def check_infer(self, model, factor):
        """model computes (factor * a, factor * b) from simple's inputs."""
        req, a, b = simple_request(model)
        resp = self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)
        out = {o.name: np.frombuffer(resp.raw_output_contents[i], dtype=np.int32).reshape(o.shape)
               for i, o in enumerate(resp.outputs)}
        np.testing.assert_array_equal(out["OUTPUT0"], factor * a)
        np.testing.assert_array_equal(out["OUTPUT1"], factor * b)

    def expect_infer_fails(self, model):
        req, _, _ = simple_request(model)
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)
        self.assertEqual(cm.exception.code(), E.UNAVAILABLE, cm.exception.details())

    def loaded_count(self, name):
        return self.server.text().count("successfully loaded '%s' version 1" % name)


ENS = {"simple": None, "ens": ensemble_config("ens", ["simple", "simple"])}
TWO = dict(ENS, ens2=ensemble_config("ens2", ["simple"]))
NESTED = dict(ENS, outer=ensemble_config("outer", ["ens", "ens"]))


class Explicit(EnsembleTest):
    def test_load_ensemble_loads_its_steps(self):
        self.start(ENS)
        self.assertEqual(self.states(), {"ens": ("", "", ""), "simple": ("", "", "")})
        self.load("ens")
        self.assertEqual(self.states(), {"ens": ("1", "READY", ""),
                                         "simple": ("1", "READY", "")})
        self.assertTrue(self.ready("ens"))
        self.assertTrue(self.ready("simple"))
        self.check_infer("ens", 2)
        # A second load of the ensemble reloads it alone.
        self.load("ens")
        # The log reaches the test through a reader thread: wait for the
        # ensemble's second line before counting simple's.
        self.assertTrue(wait_until(lambda: self.loaded_count("ens") == 2), self.server.text())
        self.assertEqual(self.loaded_count("simple"), 1)
        self.check_infer("ens", 2)

    def test_unload_of_a_step_model_unloads_the_ensemble(self):
        self.start(ENS)
        self.load("ens")
        self.unload("simple")
        self.assertEqual(self.states(), {"ens": ("", "UNAVAILABLE", "unloaded"),
                                         "simple": ("", "UNAVAILABLE", "unloaded")})
        self.assertFalse(self.ready("ens"))
        self.expect_infer_fails("ens")
        # Loading the step model again brings the ensemble back, as
        # tritonserver's dependency graph does.
        self.load("simple")
        self.assertTrue(wait_until(lambda: self.state("ens") == "READY"), self.states())
        self.check_infer("ens", 2)
        # Not after the ensemble itself was unloaded.
        self.unload("ens")
        self.unload("simple")
        self.load("simple")
        time.sleep(0.5)
        self.assertEqual(self.state("ens"), "UNAVAILABLE")

    def test_unload_dependents(self):
        self.start(TWO)
        # Without the flag the step model stays.
        self.load("ens")
        self.unload("ens")
        self.assertEqual(self.state("ens"), "UNAVAILABLE")
        self.assertEqual(self.state("simple"), "READY")
        self.unload("simple")
        # With it, the step model that only the ensemble loaded goes too.
        self.load("ens")
        self.unload("ens", dependents=True)
        self.assertEqual(self.states(), {"ens": ("", "UNAVAILABLE", "unloaded"),
                                         "ens2": ("", "", ""),
                                         "simple": ("", "UNAVAILABLE", "unloaded")})
        # Not while another ensemble uses it.
        self.load("ens")
        self.load("ens2")
        self.unload("ens", dependents=True)
        self.assertEqual(self.state("simple"), "READY")
        self.assertEqual(self.state("ens2"), "READY")
        self.unload("ens2", dependents=True)
        self.assertEqual(self.state("simple"), "UNAVAILABLE")
        # Nor when a client loaded it.
        self.load("simple")
        self.load("ens")
        self.unload("ens", dependents=True)
        self.assertEqual(self.state("simple"), "READY")
        self.assertEqual(self.state("ens"), "UNAVAILABLE")

    def test_reload_of_a_step_model_reloads_the_ensemble(self):
        self.start(ENS)
        self.load("ens")
        self.load("simple")  # a reload: the ensemble binds the new versions
        self.assertTrue(wait_until(lambda: self.loaded_count("ens") == 2), self.server.text())
        self.assertTrue(wait_until(lambda: self.state("ens") == "READY"))
        self.assertEqual(self.state("simple"), "READY")
        self.check_infer("ens", 2)
        # The old versions of both went (the old ensemble held the old simple).
        self.assertTrue(wait_until(lambda: self.server.text().count(
            "unloading 'simple' version 1") == 1), self.server.text())

    def test_step_model_that_fails_fails_the_ensemble(self):
        self.start({"simple": None, "broken": BROKEN_CONFIG,
                    "ens_bad": ensemble_config("ens_bad", ["simple", "broken"]),
                    "ens_missing": ensemble_config("ens_missing", ["nowhere"])})
        why = self.load_fails("ens_bad", "ensemble 'ens_bad' depends on 'broken'", "TYPE_FOOBAR")
        states = self.states()
        self.assertEqual(states["ens_bad"][1], "UNAVAILABLE")
        self.assertIn("depends on 'broken'", states["ens_bad"][2])
        self.assertEqual(states["broken"][1], "UNAVAILABLE")
        self.assertEqual(states["simple"][1], "READY")  # its other step loaded
        self.assertIn("TYPE_FOOBAR", why)
        self.load_fails("ens_missing", "ensemble 'ens_missing' depends on 'nowhere'")
        self.assertNotIn("nowhere", self.states())

    def test_cycle_between_ensembles_fails(self):
        self.start(dict(ENS, e1=ensemble_config("e1", ["simple", "e2"]),
                        e2=ensemble_config("e2", ["e1"]),
                        self_loop=ensemble_config("self_loop", ["self_loop"])))
        for _ in range(2):  # and again: nothing is left waiting
            self.load_fails("e1", "circular dependency between ensembles")
            self.load_fails("e2", "circular dependency between ensembles")
        self.load_fails("self_loop", "circular dependency between ensembles")
        states = self.states()
        self.assertEqual(states["e1"][1], "UNAVAILABLE")
        self.assertEqual(states["e2"][1], "UNAVAILABLE")
        # The server keeps serving.
        self.load("ens")
        self.check_infer("ens", 2)

    def test_nested_ensembles(self):
        self.start(NESTED)
        self.load("outer")
        self.assertEqual(self.states(), {"ens": ("1", "READY", ""),
                                         "outer": ("1", "READY", ""),
                                         "simple": ("1", "READY", "")})
        self.check_infer("outer", 4)
        # Unloading the innermost model unloads both ensembles.
        self.unload("simple")
        self.assertEqual(self.state("outer"), "UNAVAILABLE")
        self.assertEqual(self.state("ens"), "UNAVAILABLE")
        # unload_dependents goes all the way down.
        self.load("outer")
        self.unload("outer", dependents=True)
        self.assertEqual({n: s[1] for n, s in self.states().items()},
                         {"ens": "UNAVAILABLE", "outer": "UNAVAILABLE",
                          "simple": "UNAVAILABLE"})

    def test_unload_while_the_ensemble_loads_its_steps(self):
        records = tempfile.mkdtemp(prefix="records", dir=os.environ.get("TEST_TMPDIR"))
        self.start({"slowrec": SLOW_RECORDER, "slowens": RECORDER_ENSEMBLE},
                   backends=harness.combined_backends(), env={"NEREID_RECORD_DIR": records})
        results = {}

        def load():
            try:
                self.load("slowens")
                results["load"] = None
            except grpc.RpcError as e:
                results["load"] = e.details()

        t = threading.Thread(target=load)
        t.start()
        self.assertTrue(wait_until(lambda: self.state("slowrec") == "LOADING"))
        self.unload("slowens")  # queued behind the load, answered once it is over
        t.join(RPC_TIMEOUT)
        self.assertFalse(t.is_alive())
        self.assertIsNone(results["load"])
        self.assertEqual(self.state("slowens"), "UNAVAILABLE")
        self.assertEqual(self.state("slowrec"), "READY")
        # The step model, loaded for the ensemble only, goes with the flag.
        self.load("slowens")
        self.unload("slowens", dependents=True)
        self.assertEqual(self.state("slowrec"), "UNAVAILABLE")


STORM = {"simple": None, "s2": None, "ens": ensemble_config("ens", ["simple", "simple"]),
         "ens2": ensemble_config("ens2", ["s2"]),
         "mix": ensemble_config("mix", ["simple", "s2"]),
         "outer": ensemble_config("outer", ["ens", "mix"])}
# Failures an operation may meet while others change its models; anything
# else (a deadline above all: a hang) is a problem.
STORM_EXPECTED = ("depends on", "is being unloaded", "unloaded", "no version", "not ready",
                  "Request for unknown model")


class Storm(EnsembleTest):
    def test_load_unload_storm(self):
        """Clients load and unload ensembles and their step models at random
        (unload_dependents now and then) while others infer: nothing hangs,
        and the repository ends consistent."""
        seconds = float(os.environ.get("NEREID_STORM_SECS", "6"))
        models = sorted(STORM)
        self.start(STORM)
        deadline = time.monotonic() + seconds
        problems, counts, refusals, lock = [], {}, set(), threading.Lock()

        def note(what, problem=None):
            with lock:
                counts[what] = counts.get(what, 0) + 1
                if problem is not None:
                    problems.append(problem)

        def control(stub, rnd, name):
            r = rnd.random()
            if r < 0.55:
                stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name),
                                         timeout=RPC_TIMEOUT)
                return ("load",)
            req = pb.RepositoryModelUnloadRequest(model_name=name)
            if r > 0.85:
                req.parameters["unload_dependents"].CopyFrom(DEPENDENTS)
            stub.RepositoryModelUnload(req, timeout=RPC_TIMEOUT)
            return ("unload",)

        def infer(stub, rnd, name):
            req, a, b = simple_request(name)
            resp = stub.ModelInfer(req, timeout=RPC_TIMEOUT)
            factor = {"outer": 4, "simple": None, "s2": None, "ens2": None}.get(name, 2)
            got = np.frombuffer(resp.raw_output_contents[0], dtype=np.int32)
            want = (a + b if factor is None else factor * a).reshape(-1)
            return ("infer", None if np.array_equal(got, want) else
                    "infer %s: wrong answer %r" % (name, got))

        def loop(seed, step):
            rnd, channel = random.Random(seed), grpc.insecure_channel(self.server.address)
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            while time.monotonic() < deadline:
                name = rnd.choice(models)
                try:
                    note(*step(stub, rnd, name))
                except grpc.RpcError as e:
                    # A deadline is a hang; other refusals must be ones that
                    # changing models explain.
                    ok = e.code() != E.DEADLINE_EXCEEDED and any(
                        x in e.details() for x in STORM_EXPECTED)
                    with lock:
                        refusals.add(e.details()[:48])
                    note("refused", None if ok else "%s %s: %s" % (name, e.code(), e.details()))
            channel.close()

        pool = concurrent.futures.ThreadPoolExecutor(8)
        runs = [pool.submit(loop, k, control if k < 6 else infer) for k in range(8)]
        _, hung = concurrent.futures.wait(runs, seconds + 2 * RPC_TIMEOUT)
        pool.shutdown(wait=not hung)
        print("storm: %r, refusals like %r" % (counts, sorted(refusals)[:30]), flush=True)
        self.assertEqual((len(hung), problems[:10]), (0, []), counts)
        self.assertTrue(counts.get("load") and counts.get("unload"), counts)
        # Consistent: everything loads and serves; a step model's unload
        # takes exactly the ensembles over it.
        self.load("outer")
        self.load("ens2")
        self.assertTrue(wait_until(lambda: all(
            s[1] == "READY" for s in self.states().values())), self.states())
        self.check_infer("outer", 4)
        self.unload("simple")
        self.assertEqual({n: s[1] for n, s in self.states().items()},
                         {"ens": "UNAVAILABLE", "ens2": "READY", "mix": "UNAVAILABLE",
                          "outer": "UNAVAILABLE", "s2": "READY", "simple": "UNAVAILABLE"})


class Poll(EnsembleTest):
    MODE = "poll"

    def test_polled_repository(self):
        self.start(ENS, "--repository-poll-secs=1")
        self.assertEqual(self.state("ens"), "READY")
        # A changed step model reloads, and its ensemble with it.
        config = os.path.join(self.repo, "simple", "config.pbtxt")
        with open(config) as f:
            text = f.read()
        stage = tempfile.mkdtemp(prefix="stage", dir=os.environ.get("TEST_TMPDIR"))
        with open(os.path.join(stage, "config.pbtxt"), "w") as f:
            f.write(text + "# edited\n")
        time.sleep(1.1)  # a later mtime
        os.replace(os.path.join(stage, "config.pbtxt"), config)
        self.assertTrue(wait_until(lambda: self.loaded_count("ens") == 2), self.server.text())
        self.assertTrue(wait_until(lambda: self.state("ens") == "READY"))
        self.check_infer("ens", 2)
        # A removed step model unloads it; the ensemble fails for want of it.
        os.rename(os.path.join(self.repo, "simple"), os.path.join(stage, "simple"))
        self.assertTrue(wait_until(lambda: "depends on 'simple'" in self.states()["ens"][2]),
                        self.states())
        self.assertEqual(self.state("ens"), "UNAVAILABLE")
        # Back again: both load.
        os.rename(os.path.join(stage, "simple"), os.path.join(self.repo, "simple"))
        self.assertTrue(wait_until(lambda: self.state("ens") == "READY"), self.states())
        self.assertEqual(self.state("simple"), "READY")
        self.check_infer("ens", 2)


class StartupNone(EnsembleTest):
    MODE = "none"

    def test_startup_loads_ensembles_after_their_steps(self):
        self.start(dict(NESTED, e1=ensemble_config("e1", ["e2"]),
                        e2=ensemble_config("e2", ["e1"])), "--exit-on-error=false")
        states = self.states()
        for name in ("simple", "ens", "outer"):
            self.assertEqual(states[name], ("1", "READY", ""), name)
        self.assertEqual(states["e1"][1], "UNAVAILABLE")
        self.assertEqual(states["e2"][1], "UNAVAILABLE")
        self.check_infer("outer", 4)
        self.check_infer("ens", 2)


if __name__ == "__main__":
    harness.main()
