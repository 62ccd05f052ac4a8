"""End to end: --model-namespacing, as tritonserver has it. Two repositories
each hold a model named `composing` (addsub in one, an ensemble of two
steps of `simple` in the other) and an ensemble of one step over
`composing`. With namespacing both load, a request naming `composing`
fails with tritonserver's ambiguity text, and each ensemble uses its own
repository's `composing` (their answers differ); explicit loads and
unloads by name act in every repository holding the name. Without it,
the name in two repositories is the conflict it always was."""

import os
import shutil
import tempfile
import time
import unittest
import urllib.error
import urllib.request

import grpc
import numpy as np

import harness
from harness import Server, stop_clean
import grpc_service_pb2 as pb
from ensemble_repository_test import ensemble_config, make_repo

E = grpc.StatusCode
RPC_TIMEOUT = 60 * harness.SLOW
AMBIGUOUS = ("There are 2 identifiers of model 'composing' in global map, model namespace "
             "must be provided to resolve ambiguity.")


# A: composing = addsub (a+b, a-b). B: composing = simple then simple,
# which gives (2a, 2b).
def repos():
    a = make_repo({"composing": None, "ens_a": ensemble_config("ens_a", ["composing"])})
    b = make_repo({"simple": None,
                   "composing": ensemble_config("composing", ["simple", "simple"]),
                   "ens_b": ensemble_config("ens_b", ["composing"])})
    return a, b


class NamespacingTest(unittest.TestCase):
    def start(self, *args):
        self.a, self.b = repos()
        self.server = Server(*args, "--model-repository=" + self.b, repo=self.a)
        self.stub = self.server.inference()

    def tearDown(self):
        if hasattr(self, "server"):
            stop_clean(self.server)

    def infer(self, model):
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        b = np.full((1, 16), 3, dtype=np.int32)
        req = harness.infer_request(model, [("INPUT0", "INT32", a), ("INPUT1", "INT32", b)])
        resp = self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)
        out = {o.name: np.frombuffer(resp.raw_output_contents[i], dtype=np.int32)
               for i, o in enumerate(resp.outputs)}
        a, b = a.ravel(), b.ravel()
        if np.array_equal(out["OUTPUT0"], a + b) and np.array_equal(out["OUTPUT1"], a - b):
            return "addsub"
        if np.array_equal(out["OUTPUT0"], 2 * a) and np.array_equal(out["OUTPUT1"], 2 * b):
            return "double"
        self.fail("unexpected answer of %s: %s" % (model, out))

    def fails(self, call, code, needle):
        with self.assertRaises(grpc.RpcError) as cm:
            call()
        self.assertEqual(cm.exception.code(), code, cm.exception.details())
        self.assertIn(needle, cm.exception.details())

    def index(self):
        return sorted((m.name, m.version, m.state) for m in self.stub.RepositoryIndex(
            pb.RepositoryIndexRequest(), timeout=RPC_TIMEOUT).models)

    def load(self, name):
        return self.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name),
                                             timeout=RPC_TIMEOUT)

    def unload(self, name):
        return self.stub.RepositoryModelUnload(
            pb.RepositoryModelUnloadRequest(model_name=name), timeout=RPC_TIMEOUT)

    def check_ambiguous(self):
        self.fails(lambda: self.infer("composing"), E.INVALID_ARGUMENT, AMBIGUOUS)
        self.fails(lambda: self.stub.ModelMetadata(pb.ModelMetadataRequest(name="composing"),
                                                   timeout=RPC_TIMEOUT),
                   E.INVALID_ARGUMENT, AMBIGUOUS)
        self.fails(lambda: self.stub.ModelConfig(pb.ModelConfigRequest(name="composing"),
                                                 timeout=RPC_TIMEOUT),
                   E.INVALID_ARGUMENT, AMBIGUOUS)
        # Readiness answers false, no error, as tritonserver's does.
        self.assertFalse(self.stub.ModelReady(pb.ModelReadyRequest(name="composing"),
                                              timeout=RPC_TIMEOUT).ready)
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(self.server.http_url + "/v2/models/composing/ready",
                                   timeout=RPC_TIMEOUT)
        self.assertEqual(cm.exception.code, 400)
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(self.server.http_url + "/v2/models/composing",
                                   timeout=RPC_TIMEOUT)
        self.assertIn(AMBIGUOUS, cm.exception.read().decode())
        self.fails(lambda: self.stub.ModelStatistics(
            pb.ModelStatisticsRequest(name="composing"), timeout=RPC_TIMEOUT),
            E.INVALID_ARGUMENT, AMBIGUOUS)

    def check_own_namespace(self):
        self.assertEqual(self.infer("ens_a"), "addsub")
        self.assertEqual(self.infer("ens_b"), "double")
        self.assertEqual(self.infer("simple"), "addsub")  # one namespace only

    def test_every_model_loads_at_start(self):
        self.start("--model-namespacing=true")
        self.check_ambiguous()
        self.check_own_namespace()
        self.assertEqual(self.index(), [
            ("composing", "1", "READY"), ("composing", "1", "READY"),
            ("ens_a", "1", "READY"), ("ens_b", "1", "READY"), ("simple", "1", "READY")])
        # The ensemble's config names the namespace its step is bound to.
        cfg = self.stub.ModelConfig(pb.ModelConfigRequest(name="ens_a"), timeout=RPC_TIMEOUT)
        self.assertEqual(cfg.config.ensemble_scheduling.step[0].model_namespace, self.a)

    def test_explicit_loads_and_unloads_every_namespace(self):
        self.start("--model-namespacing=true", "--model-control-mode=explicit")
        self.load("ens_a")  # its step's name loads in both repositories
        self.assertEqual(self.infer("ens_a"), "addsub")
        self.check_ambiguous()
        self.load("ens_b")
        self.check_own_namespace()
        # Unloading the name unloads it everywhere, and the ensembles with it.
        self.unload("composing")
        self.fails(lambda: self.infer("ens_a"), E.UNAVAILABLE, "ens_a")
        self.fails(lambda: self.infer("composing"), E.UNAVAILABLE, "composing")
        self.assertEqual(self.infer("simple"), "addsub")
        # A name no repository has is refused as before.
        self.fails(lambda: self.load("nowhere"), E.INTERNAL,
                   "failed to load 'nowhere', failed to poll from model repository")
        self.load("composing")
        self.check_ambiguous()

    def test_poll_rebinds_when_a_step_model_moves(self):
        """Poll mode: A's `composing` goes, and ens_a binds B's; it comes
        back, and ens_a binds its own again."""
        self.start("--model-namespacing=true", "--model-control-mode=poll",
                   "--repository-poll-secs=1")
        self.assertEqual(self.infer("ens_a"), "addsub")
        moved = os.path.join(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR")), "c")
        shutil.move(os.path.join(self.a, "composing"), moved)
        self.assertTrue(self.wait_answer("ens_a", "double"), self.server.text())
        self.assertEqual(self.infer("composing"), "double")  # one namespace left
        shutil.move(moved, os.path.join(self.a, "composing"))
        self.assertTrue(self.wait_answer("ens_a", "addsub"), self.server.text())
        self.assertEqual(self.infer("ens_b"), "double")
        self.check_ambiguous()

    def test_explicit_load_binds_a_step_model_that_appeared(self):
        """Explicit mode, as tritonserver's dynamic resolution: A's
        `composing` is away when ens_a loads, so ens_a binds B's; once it is
        back, loading ens_a again loads A's and binds it."""
        self.start("--model-namespacing=true", "--model-control-mode=explicit")
        moved = os.path.join(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR")), "c")
        shutil.move(os.path.join(self.a, "composing"), moved)
        self.load("ens_a")
        self.load("ens_b")
        self.assertEqual(self.infer("ens_a"), "double")
        self.assertEqual(self.infer("composing"), "double")  # one namespace has it
        shutil.move(moved, os.path.join(self.a, "composing"))
        self.load("ens_a")
        self.assertEqual(self.infer("ens_a"), "addsub")
        self.assertEqual(self.infer("ens_b"), "double")
        self.check_ambiguous()

    def wait_answer(self, model, answer, timeout=20):
        deadline = time.monotonic() + timeout * harness.SLOW
        while time.monotonic() < deadline:
            try:
                if self.infer(model) == answer:
                    return True
            except grpc.RpcError:
                pass
            time.sleep(0.1)
        return False

    def test_one_ensemble_name_in_two_repositories(self):
        """An explicit load of a name two repositories hold loads both,
        each ensemble with its own repository's step model."""
        a = make_repo({"composing": None, "ens": ensemble_config("ens", ["composing"])})
        b = make_repo({"simple": None,
                       "composing": ensemble_config("composing", ["simple", "simple"]),
                       "ens": ensemble_config("ens", ["composing"])})
        self.server = Server("--model-namespacing=true", "--model-control-mode=explicit",
                             "--model-repository=" + b, repo=a)
        self.stub = self.server.inference()
        self.load("ens")
        self.assertEqual(self.index(), [
            ("composing", "1", "READY"), ("composing", "1", "READY"),
            ("ens", "1", "READY"), ("ens", "1", "READY"), ("simple", "1", "READY")])
        self.fails(lambda: self.infer("ens"), E.INVALID_ARGUMENT,
                   AMBIGUOUS.replace("'composing'", "'ens'"))
        self.unload("ens")
        self.assertEqual([m for m in self.index() if m[0] == "ens"],
                         [("ens", "", "UNAVAILABLE"), ("ens", "", "UNAVAILABLE")])
        self.check_ambiguous()  # without unload_dependents its steps' models stay

    def test_ensemble_whose_step_is_in_two_other_namespaces_fails(self):
        self.a, self.b = repos()
        c = make_repo({"ens_c": ensemble_config("ens_c", ["composing"])})
        self.server = Server("--model-namespacing=true", "--model-control-mode=explicit",
                             "--model-repository=" + self.b, "--model-repository=" + c,
                             repo=self.a)
        self.stub = self.server.inference()
        self.fails(lambda: self.load("ens_c"), E.INVALID_ARGUMENT,
                   "ensemble %s::ens_c contains models that are not available or "
                   "ambiguous: composing" % c)
        self.check_ambiguous()  # the step's name loaded in both of the others

    def test_answers_and_logs_name_models_by_identifier(self):
        """As tritonserver's ModelIdentifier: `<repository>::<name>` in answers
        and log lines; a load failing in several repositories lists each."""
        bad = 'name: "bad"\nbackend: "no_such_backend"\n'
        a = make_repo({"bad": bad, "ens": ensemble_config("ens", ["bad"])})
        b = make_repo({"bad": bad})
        self.server = Server("--model-namespacing=true", "--model-control-mode=explicit",
                             "--model-repository=" + b, repo=a)
        self.stub = self.server.inference()
        with self.assertRaises(grpc.RpcError) as cm:
            self.load("bad")
        self.assertEqual(cm.exception.code(), E.INVALID_ARGUMENT)
        details = cm.exception.details()
        self.assertEqual(details.count("load failed for model "), 2, details)
        for root in (a, b):
            self.assertIn("load failed for model '%s::bad': version 1 is at UNAVAILABLE "
                          "state: Invalid argument: unable to find backend library for "
                          "backend 'no_such_backend'" % root, details)
            self.assertTrue(self.server.wait_text("failed to load '%s::bad' version 1"
                                                  % root), self.server.text())
        self.fails(lambda: self.load("ens"), E.INVALID_ARGUMENT,
                   "load failed for model '%s::ens': ensemble '%s::ens' depends on "
                   "'%s::bad' which has no loaded version. Model '%s::bad' loading "
                   "failed with error: " % (a, a, a, a))
        # A client's files make a model of the empty namespace: its name alone.
        req = pb.RepositoryModelLoadRequest(model_name="bad")
        req.parameters["config"].string_param = '{"backend": "no_such_backend"}'
        req.parameters["file:1/README.md"].bytes_param = b"made by namespacing_test"
        self.fails(lambda: self.stub.RepositoryModelLoad(req, timeout=RPC_TIMEOUT),
                   E.INVALID_ARGUMENT,
                   "load failed for model 'bad': version 1 is at UNAVAILABLE state: ")

    def test_without_namespacing_answers_name_models_alone(self):
        bad = 'name: "bad"\nbackend: "no_such_backend"\n'
        self.server = Server("--model-control-mode=explicit", repo=make_repo({"bad": bad}))
        self.stub = self.server.inference()
        with self.assertRaises(grpc.RpcError) as cm:
            self.load("bad")
        details = cm.exception.details()
        self.assertTrue(details.startswith("load failed for model 'bad': version 1 is at "
                                           "UNAVAILABLE state: Invalid argument: "), details)
        self.assertTrue(details.endswith(";\n"), details)
        self.assertNotIn("::", details)
        self.assertTrue(self.server.wait_text("failed to load 'bad' version 1"))

    def test_without_namespacing_a_name_in_two_repositories_conflicts(self):
        self.start("--model-control-mode=explicit")
        self.fails(lambda: self.load("composing"), E.INVALID_ARGUMENT,
                   "model 'composing' appears in several model repositories")
        self.load("simple")
        self.assertEqual(self.infer("simple"), "addsub")


if __name__ == "__main__":
    harness.main()
