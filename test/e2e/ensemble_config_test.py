"""End to end: ensembles (issue 17, Triton's `platform: "ensemble"`).

ConfigErrors: every check of server/sched/ensemble_graph.c, on the config
alone and against the composing models, fails RepositoryModelLoad with
INVALID_ARGUMENT and a message naming the ensemble, the step or tensor and
the reason (the key text of ensemble_graph.c, Triton's words); the model is
then not ready, its index row says why, and the server goes on serving.
Each case is an ensemble folder of a test-local repository beside
`simple`-like models of the built-in backends, served in explicit mode;
two ensembles using each other fail as a circular dependency.

Examples: the example ensembles (examples/models) load with the rest of
the repository in the default mode (the repository loads `simple` first)
and compute exactly what numpy computes, for batch sizes 1 and 8 and
concurrent clients, with only the requested outputs returned; their
metadata and config answer as Triton's do (platform "ensemble").

Runtime: branches of an ensemble run in parallel (identity models with
execute_delay_ms), a join waits for its slowest input, a client deadline
ends the run, a decoupled step streams one ensemble answer per response, a
step's error ends the request with that error, and statistics count the
ensemble's requests, the composing model's and each step's."""

import os
import shutil
import tempfile
import threading
import time
import unittest

import grpc
import numpy as np

import harness
from harness import infer_request
import grpc_service_pb2 as pb
import model_config_pb2 as mc

E = grpc.StatusCode
RPC_TIMEOUT = 60 * harness.SLOW


# ---- configs ---------------------------------------------------------------

def tensor(name, dtype="TYPE_INT32", dims=(16,)):
    return '{ name: "%s" data_type: %s dims: [ %s ] }' % (
        name, dtype, ", ".join(str(d) for d in dims))


IO = [tensor("INPUT0"), tensor("INPUT1")]
OUT = [tensor("OUTPUT0"), tensor("OUTPUT1")]


def step(model, inputs=(), outputs=(), version=-1):
    """A step: inputs and outputs are (model tensor, ensemble tensor) pairs;
    model None leaves model_name out."""
    fields = [] if model is None else ['model_name: "%s"' % model]
    fields.append("model_version: %d" % version)
    fields += ['input_map { key: "%s" value: "%s" }' % kv for kv in inputs]
    fields += ['output_map { key: "%s" value: "%s" }' % kv for kv in outputs]
    return "{ %s }" % " ".join(fields)


def addsub_step(model="simple", in0="INPUT0", in1="INPUT1", out0="OUTPUT0",
                out1="OUTPUT1"):
    """A step on an addsub model; an output given as None is left unmapped."""
    outputs = [(k, v) for k, v in (("OUTPUT0", out0), ("OUTPUT1", out1)) if v]
    return step(model, [("INPUT0", in0), ("INPUT1", in1)], outputs)


def ensemble(name, steps, inputs=IO, outputs=OUT, mbs=8, head='platform: "ensemble"',
             extra=""):
    """An ensemble config. steps None: no ensemble_scheduling; []: an empty
    one."""
    text = 'name: "%s"\n%s\nmax_batch_size: %d\n' % (name, head, mbs)
    if inputs:
        text += "input [ %s ]\n" % ", ".join(inputs)
    if outputs:
        text += "output [ %s ]\n" % ", ".join(outputs)
    if steps == []:
        text += "ensemble_scheduling { }\n"
    elif steps is not None:
        text += "ensemble_scheduling { step [ %s ] }\n" % ", ".join(steps)
    return text + extra


def addsub_model(name, dtype="TYPE_INT32", dims=(16,), mbs=8, extra=""):
    """A `simple`-like model of the built-in addsub backend."""
    return ('name: "%s"\nbackend: "addsub"\nmax_batch_size: %d\n'
            "input [ %s, %s ]\noutput [ %s, %s ]\n"
            "instance_group [ { kind: KIND_CPU } ]\n%s" % (
                name, mbs, tensor("INPUT0", dtype, dims), tensor("INPUT1", dtype, dims),
                tensor("OUTPUT0", dtype, dims), tensor("OUTPUT1", dtype, dims), extra))


def identity_model(name, delay_ms=0):
    """An identity model on INT32 [-1] (batching), execute_delay_ms slow."""
    params = ('parameters [ { key: "execute_delay_ms" value: { string_value: "%d" } } ]\n'
              % delay_ms if delay_ms else "")
    return ('name: "%s"\nbackend: "identity"\nmax_batch_size: 8\n'
            "input [ %s ]\noutput [ %s ]\ninstance_group [ { kind: KIND_CPU } ]\n%s" % (
                name, tensor("INPUT0", dims=(-1,)), tensor("OUTPUT0", dims=(-1,)), params))


# Decoupled steps: `repeat_int32` (IN INT32 [-1], DELAY UINT32 [-1], WAIT
# UINT32 [1] -> OUT INT32 [1], IDX UINT32 [1]; max_batch_size 0) and
# `pair_nb`, an addsub model on INT32 [1] without batching.
REPEAT_IO = [tensor("IN", dims=(-1,)), tensor("DELAY", "TYPE_UINT32", (-1,)),
             tensor("WAIT", "TYPE_UINT32", (1,))]
REPEAT_IN = [("IN", "IN"), ("DELAY", "DELAY"), ("WAIT", "WAIT")]


def many_steps(n, outputs_per_step, inputs_per_step):
    """n steps on `simple`, for the bounds on tensors and step inputs."""
    steps = []
    for i in range(n):
        ins = [("INPUT%d" % k, "INPUT%d" % k) for k in range(inputs_per_step)]
        outs = [("OUTPUT%d" % k, "t%d_%d" % (i, k)) for k in range(outputs_per_step)]
        steps.append(step("simple", ins, outs))
    return steps


def ensemble_cases():
    """name -> (config of ensemble `name`, needles its load error must hold,
    the gRPC codes it may have). The needles are ensemble_graph.c's texts
    for that ensemble."""
    c = {}

    def case(name, config, *needles, codes=(E.INVALID_ARGUMENT,)):
        c[name] = (config(name), [n % {"e": name} for n in needles], codes)

    # -- the config alone: kind of model --
    case("no_scheduling", lambda n: ensemble(n, None),
         "ensemble scheduling must be set for ensemble %(e)s whose platform is ensemble")
    case("backend_set", lambda n: ensemble(
        n, [addsub_step()], head='platform: "ensemble"\nbackend: "addsub"'),
        "Ensemble model '%(e)s' must have platform type 'ensemble' and empty backend type")
    case("scheduling_not_ensemble", lambda n: ensemble(
        n, [addsub_step()], head='backend: "addsub"'),
        "ensemble scheduling cannot be set for model '%(e)s' whose platform is not "
        "ensemble")
    case("instance_group", lambda n: ensemble(
        n, [addsub_step()], extra="instance_group [ { kind: KIND_CPU } ]\n"),
        "instance group should not be specified for ensemble '%(e)s'")
    case("optimization", lambda n: ensemble(
        n, [addsub_step()], extra="optimization { priority: PRIORITY_MAX }\n"),
        "optimization should not be specified for ensemble '%(e)s'")
    case("model_warmup", lambda n: ensemble(
        n, [addsub_step()],
        extra='model_warmup [ { name: "w" batch_size: 1 inputs { key: "INPUT0" '
              'value: { data_type: TYPE_INT32 dims: [ 16 ] zero_data: true } } '
              'inputs { key: "INPUT1" value: { data_type: TYPE_INT32 dims: [ 16 ] '
              'zero_data: true } } } ]\n'),
        "model_warmup can not be specified for ensemble '%(e)s'")
    # -- the config alone: steps --
    case("no_steps", lambda n: ensemble(n, []),
         "must specify 'step' for ensemble '%(e)s'")
    case("no_model_name", lambda n: ensemble(
        n, [step(None, [("INPUT0", "INPUT0"), ("INPUT1", "INPUT1")],
                 [("OUTPUT0", "OUTPUT0"), ("OUTPUT1", "OUTPUT1")])]),
        "must specify 'model_name' in step 0 of ensemble '%(e)s'")
    case("no_input_map", lambda n: ensemble(
        n, [addsub_step(out0="A", out1=None),
            step("simple", [], [("OUTPUT0", "OUTPUT0"), ("OUTPUT1", "OUTPUT1")])]),
        "must specify 'input_map' in step 1 of ensemble '%(e)s'")
    case("no_output_map", lambda n: ensemble(
        n, [step("simple", [("INPUT0", "INPUT0"), ("INPUT1", "INPUT1")], [])]),
        "must specify 'output_map' in step 0 of ensemble '%(e)s'")
    case("empty_input_key", lambda n: ensemble(
        n, [step("simple", [("", "INPUT0"), ("INPUT1", "INPUT1")],
                 [("OUTPUT0", "OUTPUT0"), ("OUTPUT1", "OUTPUT1")])]),
        "an input_map key of step 0 of ensemble '%(e)s' is empty")
    case("empty_output_value", lambda n: ensemble(
        n, [step("simple", [("INPUT0", "INPUT0"), ("INPUT1", "INPUT1")],
                 [("OUTPUT0", "OUTPUT0"), ("OUTPUT1", "")])]),
        "an output_map value of step 0 of ensemble '%(e)s' is empty")
    case("nul_in_name", lambda n: ensemble(
        n, [addsub_step(out1="OUT\\000PUT1")]),
        "an output_map value of step 0 of ensemble '%(e)s' holds a NUL byte")
    case("input_declared_twice", lambda n: ensemble(
        n, [addsub_step()], inputs=IO + [tensor("INPUT0")]),
        "'INPUT0' is declared twice")
    case("input_in_output_map", lambda n: ensemble(
        n, [addsub_step(out1="INPUT1")], outputs=OUT[:1]),
        "ensemble tensor 'INPUT1' is an ensemble input and cannot appear in the output "
        "map of step 0 of ensemble '%(e)s'")
    case("written_twice", lambda n: ensemble(
        n, [addsub_step(), addsub_step(out1=None)]),
        "ensemble tensor 'OUTPUT0' can appear in an output map only once for ensemble "
        "'%(e)s' step 1")
    # -- the config alone: data flow --
    case("unused_input", lambda n: ensemble(
        n, [addsub_step()], inputs=IO + [tensor("INPUT2")]),
        "ensemble input 'INPUT2' for ensemble %(e)s' is not used")
    case("output_not_mapped", lambda n: ensemble(
        n, [addsub_step()], outputs=OUT + [tensor("OUTPUT2")]),
        "ensemble output 'OUTPUT2' for ensemble %(e)s' is not used")
    case("output_not_written", lambda n: ensemble(
        # OUTPUT1 is read by step 1 and written by nothing.
        n, [addsub_step(out0="A", out1=None), addsub_step(in0="A", in1="OUTPUT1", out1=None)],
        outputs=[OUT[1], OUT[0]]),
        "output 'OUTPUT1' for ensemble '%(e)s' is not written")
    case("input_never_written", lambda n: ensemble(
        n, [addsub_step(out0="A", out1=None), addsub_step(in0="A", in1="ghost")]),
        "output 'OUTPUT0' for ensemble '%(e)s' is not written: at least one of its "
        "depending tensors, 'ghost', is not connected")
    case("step_cycle", lambda n: ensemble(
        # Step 0 waits for B of step 1, which waits for A of step 0.
        n, [addsub_step(in1="B", out0="A", out1=None),
            addsub_step(in0="A", out0="B", out1="OUTPUT0")], outputs=OUT[:1]),
        "output 'OUTPUT0' for ensemble '%(e)s' is not written: at least one of its "
        "depending tensors, 'B', is not connected")
    case("unused_tensor", lambda n: ensemble(
        n, [addsub_step(out1="extra")], outputs=OUT[:1]),
        "ensemble tensor 'extra' is unused in ensemble '%(e)s'")
    case("lists_itself", lambda n: ensemble(n, [addsub_step(model=n)]),
         "circular dependency between ensembles: %(e)s -> ... -> %(e)s -> %(e)s")
    # -- the config alone: Nereid's bounds (4096 steps, tensors, step inputs) --
    case("too_many_tensors", lambda n: ensemble(
        n, many_steps(2048, 2, 1), inputs=IO[:1]),
        "ensemble '%(e)s' has 4097 tensors (inputs and step outputs), more than the "
        "limit of 4096")
    case("too_many_step_inputs", lambda n: ensemble(
        n, many_steps(2049, 1, 2)),
        "ensemble '%(e)s' maps 4098 step inputs, more than the limit of 4096")
    # -- against the composing models --
    # ensemble_graph.c says "model nosuch_model is not given"; the repository
    # may refuse first, not finding the folder.
    case("unknown_model", lambda n: ensemble(n, [addsub_step(model="nosuch_model")]),
         "nosuch_model", codes=(E.INVALID_ARGUMENT, E.INTERNAL))
    case("non_existing_input", lambda n: ensemble(
        n, [step("simple", [("INPUT0", "INPUT0"), ("INPUT9", "INPUT1")],
                 [("OUTPUT0", "OUTPUT0"), ("OUTPUT1", "OUTPUT1")])]),
        "in ensemble %(e)s, ensemble tensor INPUT1 is mapping to non-existing input "
        "INPUT9 in model simple")
    case("non_existing_output", lambda n: ensemble(
        n, [step("simple", [("INPUT0", "INPUT0"), ("INPUT1", "INPUT1")],
                 [("OUTPUT0", "OUTPUT0"), ("OUTPUT9", "OUTPUT1")])]),
        "in ensemble %(e)s, ensemble tensor OUTPUT1 is mapped from non-existing output "
        "OUTPUT9 in model simple")
    case("unmapped_input", lambda n: ensemble(
        n, [step("simple", [("INPUT0", "INPUT0")],
                 [("OUTPUT0", "OUTPUT0"), ("OUTPUT1", "OUTPUT1")])], inputs=IO[:1]),
        "in ensemble %(e)s, input INPUT1 in model simple is not mapped to any ensemble "
        "tensors")
    case("data_type_vs_ensemble", lambda n: ensemble(
        n, [addsub_step()], inputs=[tensor("INPUT0", "TYPE_FP32"), IO[1]]),
        "in ensemble %(e)s, ensemble tensor INPUT0: inconsistent data type: TYPE_FP32 is "
        "inferred from model %(e)s while TYPE_INT32 is inferred from model simple")
    case("data_type_between_steps", lambda n: ensemble(
        n, [addsub_step(out0="S", out1="D"),
            addsub_step(model="simple_fp32", in0="S", in1="D")]),
        "in ensemble %(e)s, ensemble tensor S: inconsistent data type: TYPE_INT32 is "
        "inferred from model simple while TYPE_FP32 is inferred from model simple_fp32")
    case("shape", lambda n: ensemble(
        n, [addsub_step()], inputs=[tensor("INPUT0", dims=(8,)), IO[1]]),
        "in ensemble %(e)s, ensemble tensor INPUT0: inconsistent shape: [-1,8] is "
        "inferred from model %(e)s while [-1,16] is inferred from model simple")
    case("max_batch_size", lambda n: ensemble(n, [addsub_step()], mbs=16),
         "ensemble %(e)s allows maximum batch size 16, but it contains model simple which "
         "only allows maximum batch size to be 8")
    case("decoupled_join", lambda n: ensemble(
        n, [step("repeat_int32", REPEAT_IN, [("OUT", "A")]),
            step("repeat_int32", REPEAT_IN, [("OUT", "B")]),
            addsub_step(model="pair_nb", in0="A", in1="B")],
        inputs=REPEAT_IO, outputs=[tensor("OUTPUT0", dims=(1,)),
                                   tensor("OUTPUT1", dims=(1,))], mbs=0),
        "in ensemble %(e)s, step of model 'pair_nb' receives inputs originated from "
        "different decoupled models")
    case("decoupled_outputs", lambda n: ensemble(
        n, [step("repeat_int32", REPEAT_IN, [("OUT", "OUT_A")]),
            step("repeat_int32", REPEAT_IN, [("OUT", "OUT_B")])],
        inputs=REPEAT_IO, outputs=[tensor("OUT_A", dims=(1,)), tensor("OUT_B", dims=(1,))],
        mbs=0),
        "in ensemble %(e)s, step of model '%(e)s' receives inputs originated from "
        "different decoupled models")
    return c


CASES = ensemble_cases()


def tmpdir(prefix):
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TEST_TMPDIR"))


def write_model(repo, name, config):
    """A model folder with its config and an empty version 1."""
    os.makedirs(os.path.join(repo, name, "1"))
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(config)


def copy_example(repo, name):
    shutil.copytree(os.path.join(harness.EXAMPLES, name), os.path.join(repo, name))


# ---- requests ----------------------------------------------------------------

def pair_request(model, a, b, outputs=None):
    return infer_request(model, [("INPUT0", "INT32", a), ("INPUT1", "INT32", b)],
                         outputs=outputs)


def outputs_of(resp):
    return {o.name: np.frombuffer(resp.raw_output_contents[i], dtype=np.int32)
            .reshape(o.shape) for i, o in enumerate(resp.outputs)}


def random_pair(rng, batch, width=16):
    a = rng.integers(-100000, 100000, size=(batch, width), dtype=np.int32)
    b = rng.integers(-100000, 100000, size=(batch, width), dtype=np.int32)
    return a, b


def run_clients(n, client):
    """Runs client(k) for k < n on n threads at once; returns the errors
    they appended to the list each gets as its second argument."""
    errors = []
    threads = [threading.Thread(target=client, args=(k, errors)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


class EnsembleTest(unittest.TestCase):
    """Helpers; self.stub is the server's stub."""

    def infer(self, req):
        return self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)

    def load(self, name):
        return self.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name),
                                             timeout=RPC_TIMEOUT)

    def ready(self, name):
        return self.stub.ModelReady(pb.ModelReadyRequest(name=name),
                                    timeout=RPC_TIMEOUT).ready

    def index_row(self, name):
        rows = [m for m in self.stub.RepositoryIndex(
            pb.RepositoryIndexRequest(), timeout=RPC_TIMEOUT).models if m.name == name]
        self.assertEqual(len(rows), 1, rows)
        return rows[0]

    def expect_error(self, call, code, *needles):
        with self.assertRaises(grpc.RpcError) as cm:
            call()
        details = cm.exception.details()
        self.assertEqual(cm.exception.code(), code, details)
        for n in needles:
            self.assertIn(n, details)
        return details

    def check_pair(self, model, a, b, want, outputs=None):
        """Sends (a, b) to model; `want` maps each output expected back, and
        only those, to its numpy value."""
        got = outputs_of(self.infer(pair_request(model, a, b, outputs)))
        self.assertEqual(sorted(got), sorted(want))
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], value, "%s %s" % (model, name))


# ---- 1. load errors ------------------------------------------------------------

class ConfigErrors(EnsembleTest, harness.ServerTestCase):
    """One server in explicit mode over a repository holding `simple`, the
    other composing models and one ensemble per case (named after it); a
    generated test_<case> loads it."""

    # The composing models are loaded up front, so that each case fails on
    # its own check, not on a model still loading (test_ensemble_cycle
    # leaves the loading to the repository).
    ARGS = ("--model-control-mode=explicit", "--load-model=simple",
            "--load-model=simple_fp32", "--load-model=pair_nb",
            "--load-model=repeat_int32")

    @classmethod
    def setUpClass(cls):
        repo = tmpdir("ens_repo")
        copy_example(repo, "simple")
        copy_example(repo, "repeat_int32")
        write_model(repo, "simple_fp32", addsub_model("simple_fp32", "TYPE_FP32"))
        write_model(repo, "pair_nb", addsub_model("pair_nb", dims=(1,), mbs=0))
        write_model(repo, "good", ensemble("good", [addsub_step(out0="S", out1="D"),
                                                    addsub_step(in0="S", in1="D")]))
        # Two ensembles using each other.
        write_model(repo, "cycle_a", ensemble("cycle_a", [addsub_step(model="cycle_b")]))
        write_model(repo, "cycle_b", ensemble("cycle_b", [addsub_step(model="cycle_a")]))
        for name, (config, _, _) in CASES.items():
            write_model(repo, name, config)
        cls.REPO = repo
        super().setUpClass()

    def still_serving(self):
        a, b = random_pair(np.random.default_rng(7), 2)
        self.check_pair("simple", a, b, {"OUTPUT0": a + b, "OUTPUT1": a - b})

    def load_fails(self, name, needles, codes):
        for _ in range(2):  # a second try fails the same way
            with self.assertRaises(grpc.RpcError) as cm:
                self.load(name)
            details = cm.exception.details()
            self.assertIn(cm.exception.code(), codes, details)
            for n in [name] + needles:
                self.assertIn(n, details)
        self.assertFalse(self.ready(name))
        row = self.index_row(name)
        self.assertEqual(row.state, "UNAVAILABLE", row)
        for n in needles:
            self.assertIn(n, row.reason)
        self.still_serving()

    def test_ensemble_cycle(self):
        """Triton's text (its dependency graph's CircularDependencyCheck):
        the ensemble loaded, then the last one on the way back to it."""
        self.expect_error(lambda: self.load("cycle_a"), E.INVALID_ARGUMENT,
                          "circular dependency between ensembles: cycle_a -> ... -> "
                          "cycle_b -> cycle_a")
        self.assertFalse(self.ready("cycle_a"))
        self.assertFalse(self.ready("cycle_b"))
        self.still_serving()

    def test_good_ensemble_loads_after_failures(self):
        """The repository is left usable: a valid ensemble loads, serves and
        its failed neighbours change nothing."""
        self.expect_error(lambda: self.load("written_twice"), E.INVALID_ARGUMENT)
        self.load("good")
        self.assertTrue(self.ready("good"))
        a, b = random_pair(np.random.default_rng(1), 3)
        self.check_pair("good", a, b, {"OUTPUT0": 2 * a, "OUTPUT1": 2 * b})
        self.still_serving()


def _load_case(name, needles, codes):
    def test(self):
        self.load_fails(name, needles, codes)
    test.__doc__ = "%s: %s" % (name, needles[0])
    return test


for _name, (_, _needles, _codes) in CASES.items():
    setattr(ConfigErrors, "test_" + _name, _load_case(_name, _needles, _codes))


# ---- 2. the example ensembles ---------------------------------------------------

def simple_ensemble(a, b):
    return {"OUTPUT0": 2 * a, "OUTPUT1": 2 * b}


def parallel_ensemble(a, b):
    return {"OUTPUT0": 3 * a + b, "OUTPUT1": b - a}


EXAMPLES = {"simple_ensemble": simple_ensemble,
            "simple_parallel_ensemble": parallel_ensemble}


class Examples(EnsembleTest, harness.ServerTestCase):
    """The example repository as the default server loads it (every model,
    the ensembles after `simple`)."""

    def test_values_batch_1_and_8(self):
        rng = np.random.default_rng(17)
        for model, expect in EXAMPLES.items():
            for batch in (1, 8):
                a, b = random_pair(rng, batch)
                self.check_pair(model, a, b, expect(a, b))

    def test_values_wrap_like_int32(self):
        big = np.full((1, 16), 2**31 - 1, dtype=np.int32)
        one = np.ones((1, 16), dtype=np.int32)
        for model, expect in EXAMPLES.items():
            with np.errstate(over="ignore"):
                self.check_pair(model, big, one, expect(big, one))

    def test_requested_outputs_only(self):
        a, b = random_pair(np.random.default_rng(3), 2)
        for model, expect in EXAMPLES.items():
            want = expect(a, b)
            for names in (["OUTPUT1"], ["OUTPUT0"], ["OUTPUT1", "OUTPUT0"]):
                self.check_pair(model, a, b, {n: want[n] for n in names}, outputs=names)

    def test_batch_above_max_is_refused(self):
        a, b = random_pair(np.random.default_rng(4), 9)
        for model in EXAMPLES:
            self.expect_error(lambda: self.infer(pair_request(model, a, b)),
                              E.INVALID_ARGUMENT, model)

    def test_concurrent_requests_get_their_own_answers(self):
        """8 clients x 25 requests, each with its own values: every answer
        belongs to its request."""
        def client(k, errors):
            rng = np.random.default_rng(100 + k)
            model = list(EXAMPLES)[k % 2]
            try:
                for _ in range(25):
                    a, b = random_pair(rng, int(rng.integers(1, 9)))
                    got = outputs_of(self.infer(pair_request(model, a, b)))
                    for name, value in EXAMPLES[model](a, b).items():
                        if not np.array_equal(got.get(name), value):
                            errors.append("%s %s wrong" % (model, name))
            except grpc.RpcError as e:
                errors.append("%s: %s" % (e.code(), e.details()))

        self.assertEqual(run_clients(8, client), [])

    def test_metadata(self):
        for model in EXAMPLES:
            md = self.stub.ModelMetadata(pb.ModelMetadataRequest(name=model),
                                         timeout=RPC_TIMEOUT)
            self.assertEqual(md.name, model)
            self.assertEqual(list(md.versions), ["1"])
            self.assertEqual(md.platform, "ensemble")
            want = [("INPUT0", "INT32", [-1, 16]), ("INPUT1", "INT32", [-1, 16])]
            self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in md.inputs], want)
            self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in md.outputs],
                             [(n.replace("IN", "OUT"), d, s) for n, d, s in want])

    def test_config(self):
        steps = {"simple_ensemble": [({"INPUT0": "INPUT0", "INPUT1": "INPUT1"},
                                      {"OUTPUT0": "SUM", "OUTPUT1": "DIFF"}),
                                     ({"INPUT0": "SUM", "INPUT1": "DIFF"},
                                      {"OUTPUT0": "OUTPUT0", "OUTPUT1": "OUTPUT1"})],
                 "simple_parallel_ensemble": [({"INPUT0": "INPUT0", "INPUT1": "INPUT1"},
                                               {"OUTPUT0": "S"}),
                                              ({"INPUT0": "INPUT0", "INPUT1": "INPUT0"},
                                               {"OUTPUT0": "S2"}),
                                              ({"INPUT0": "S", "INPUT1": "S2"},
                                               {"OUTPUT0": "OUTPUT0",
                                                "OUTPUT1": "OUTPUT1"})]}
        for model, want in steps.items():
            cfg = self.stub.ModelConfig(pb.ModelConfigRequest(name=model),
                                        timeout=RPC_TIMEOUT).config
            self.assertEqual(cfg.name, model)
            self.assertEqual(cfg.platform, "ensemble")
            self.assertEqual(cfg.backend, "")
            self.assertEqual(cfg.max_batch_size, 8)
            self.assertEqual(len(cfg.instance_group), 0)
            self.assertEqual([(i.name, i.data_type, list(i.dims)) for i in cfg.input],
                             [("INPUT0", mc.TYPE_INT32, [16]),
                              ("INPUT1", mc.TYPE_INT32, [16])])
            got = [(s.model_name, s.model_version, dict(s.input_map), dict(s.output_map))
                   for s in cfg.ensemble_scheduling.step]
            self.assertEqual(got, [("simple", -1, i, o) for i, o in want])

    def test_ready_and_index(self):
        for model in EXAMPLES:
            self.assertTrue(self.ready(model))
            row = self.index_row(model)
            self.assertEqual((row.version, row.state), ("1", "READY"))


# ---- 3. the runtime on models of the test's own ------------------------------

DELAY_MS = 400


def slow_join(name, branches):
    """INPUT0 through identity model `branches[0]` and INPUT1 through
    `branches[1]`, joined by `simple_any` (addsub on INT32 [-1])."""
    t = [tensor("INPUT0", dims=(-1,)), tensor("INPUT1", dims=(-1,))]
    return ensemble(name, [step(branches[0], [("INPUT0", "INPUT0")], [("OUTPUT0", "A")]),
                           step(branches[1], [("INPUT0", "INPUT1")], [("OUTPUT0", "B")]),
                           addsub_step(model="simple_any", in0="A", in1="B")],
                    inputs=t, outputs=[tensor("OUTPUT0", dims=(-1,)),
                                       tensor("OUTPUT1", dims=(-1,))])


class Runtime(EnsembleTest, harness.ServerTestCase):
    """An explicit-mode server over a repository of its own: identity
    branches (two slow, one fast) joined by an addsub model, and an
    ensemble over `simple_string` whose step can fail. The composing models
    load first (--load-model), then the ensembles (ENSEMBLES)."""

    ARGS = ("--model-control-mode=explicit", "--load-model=simple_string",
            "--load-model=slow_a", "--load-model=slow_b", "--load-model=fast",
            "--load-model=simple_any", "--load-model=repeat_int32",
            "--load-model=pair_nb", "--load-model=id_c")
    ENSEMBLES = ("two_slow", "slow_fast", "string_ens", "rep_ens", "counted")

    @classmethod
    def setUpClass(cls):
        repo = tmpdir("ens_runtime")
        copy_example(repo, "simple_string")
        write_model(repo, "slow_a", identity_model("slow_a", DELAY_MS))
        write_model(repo, "slow_b", identity_model("slow_b", DELAY_MS))
        write_model(repo, "fast", identity_model("fast"))
        write_model(repo, "simple_any", addsub_model("simple_any", dims=(-1,)))
        write_model(repo, "two_slow", slow_join("two_slow", ("slow_a", "slow_b")))
        write_model(repo, "slow_fast", slow_join("slow_fast", ("slow_a", "fast")))
        bytes16 = [tensor(n, "TYPE_STRING") for n in ("INPUT0", "INPUT1")]
        copy_example(repo, "repeat_int32")
        write_model(repo, "pair_nb", addsub_model("pair_nb", dims=(1,), mbs=0))
        write_model(repo, "rep_ens", ensemble(
            "rep_ens", [step("repeat_int32", REPEAT_IN, [("OUT", "X")]),
                        addsub_step(model="pair_nb", in0="X", in1="X")],
            inputs=REPEAT_IO, outputs=[tensor("OUTPUT0", dims=(1,)),
                                       tensor("OUTPUT1", dims=(1,))], mbs=0))
        write_model(repo, "id_c", identity_model("id_c"))
        t = [tensor("INPUT0", dims=(-1,))]
        write_model(repo, "counted", ensemble(
            "counted", [step("id_c", [("INPUT0", "INPUT0")], [("OUTPUT0", "A")]),
                        step("id_c", [("INPUT0", "A")], [("OUTPUT0", "OUTPUT0")])],
            inputs=t, outputs=[tensor("OUTPUT0", dims=(-1,))]))
        write_model(repo, "string_ens", ensemble(
            "string_ens", [addsub_step(model="simple_string")], inputs=bytes16,
            outputs=[tensor(n, "TYPE_STRING") for n in ("OUTPUT0", "OUTPUT1")]))
        cls.REPO = repo
        super().setUpClass()
        for name in cls.ENSEMBLES:
            cls.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name),
                                         timeout=RPC_TIMEOUT)

    def timed(self, model, a, b):
        start = time.monotonic()
        got = outputs_of(self.infer(pair_request(model, a, b)))
        took = time.monotonic() - start
        np.testing.assert_array_equal(got["OUTPUT0"], a + b)
        np.testing.assert_array_equal(got["OUTPUT1"], a - b)
        return took

    def test_branches_run_in_parallel(self):
        """Two branches of DELAY_MS each take about DELAY_MS together, not
        twice that: the ensemble sends both before either answers."""
        a, b = random_pair(np.random.default_rng(5), 2, width=5)
        self.timed("two_slow", a, b)  # warm
        took = self.timed("two_slow", a, b)
        self.assertGreaterEqual(took, DELAY_MS / 1000.0)
        if harness.SLOW == 1:
            self.assertLess(took, 1.75 * DELAY_MS / 1000.0)

    def test_join_waits_for_the_slow_branch(self):
        a, b = random_pair(np.random.default_rng(6), 1, width=3)
        self.assertGreaterEqual(self.timed("slow_fast", a, b), DELAY_MS / 1000.0)

    def test_concurrent_slow_requests(self):
        """4 requests at once on two_slow: each answer is its own."""
        def client(k, errors):
            a, b = random_pair(np.random.default_rng(50 + k), 1 + k % 3, width=4 + k)
            try:
                self.timed("two_slow", a, b)
            except (AssertionError, grpc.RpcError) as e:
                errors.append(str(e))

        self.assertEqual(run_clients(4, client), [])

    def test_deadline_cancels_the_run(self):
        """A client deadline shorter than the slow branches: the call ends
        DEADLINE_EXCEEDED and the ensemble serves the next request."""
        a, b = random_pair(np.random.default_rng(8), 1, width=2)
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.ModelInfer(pair_request("two_slow", a, b), timeout=0.1)
        self.assertEqual(cm.exception.code(), E.DEADLINE_EXCEEDED, cm.exception.details())
        self.timed("two_slow", a, b)

    def test_decoupled_step_streams_one_answer_per_response(self):
        """repeat_int32 answers once per element of IN; each answer runs the
        next step (pair_nb: 2x, 0) and is streamed on its own, then the
        final flag comes alone."""
        values = [5, -6, 70, 0]
        req = infer_request("rep_ens", [
            ("IN", "INT32", np.asarray(values, dtype=np.int32)),
            ("DELAY", "UINT32", np.full(len(values), 5, dtype=np.uint32)),
            ("WAIT", "UINT32", np.zeros(1, dtype=np.uint32))],
            rid="r", params={"triton_enable_empty_final_response": True})
        got = []
        for resp in self.stub.ModelStreamInfer(iter([req]), timeout=RPC_TIMEOUT):
            self.assertEqual(resp.error_message, "")
            got.append(resp.infer_response)
            if resp.infer_response.parameters["triton_final_response"].bool_param:
                break
        self.assertEqual(len(got), len(values) + 1, got)
        data = [outputs_of(r) for r in got[:-1]]
        self.assertEqual(sorted(int(d["OUTPUT0"][0]) for d in data),
                         sorted(2 * v for v in values))
        self.assertEqual([int(d["OUTPUT1"][0]) for d in data], [0] * len(values))
        self.assertEqual([r.id for r in got], ["r"] * (len(values) + 1))
        self.assertEqual(len(got[-1].outputs), 0)

    def test_decoupled_ensemble_on_unary(self):
        """A decoupled step makes the ensemble decoupled (its config says
        so, as Triton's): ModelInfer refuses it unless the responses are
        aggregated, then OUTPUT0 holds every answer's element."""
        cfg = self.stub.ModelConfig(pb.ModelConfigRequest(name="rep_ens"),
                                    timeout=RPC_TIMEOUT).config
        self.assertTrue(cfg.model_transaction_policy.decoupled)
        values = [3, 1, 4, 1, 5]
        req = infer_request("rep_ens", [
            ("IN", "INT32", np.asarray(values, dtype=np.int32)),
            ("DELAY", "UINT32", np.zeros(len(values), dtype=np.uint32)),
            ("WAIT", "UINT32", np.zeros(1, dtype=np.uint32))])
        self.expect_error(lambda: self.infer(req), E.UNIMPLEMENTED, "decoupled", "rep_ens")
        req.parameters["nereid_aggregate_responses"].bool_param = True
        got = outputs_of(self.infer(req))
        self.assertEqual(sorted(got["OUTPUT0"].tolist()), sorted(2 * v for v in values))

    def test_statistics(self):
        """The ensemble counts its requests, the composing model its own
        (two per ensemble request), and each step its answers."""
        n = 5
        for k in range(n):
            arr = np.arange(k + 1, dtype=np.int32).reshape(1, -1)
            got = outputs_of(self.infer(infer_request("counted", [("INPUT0", "INT32", arr)])))
            np.testing.assert_array_equal(got["OUTPUT0"], arr)
        stats = {m: self.stub.ModelStatistics(pb.ModelStatisticsRequest(name=m),
                                              timeout=RPC_TIMEOUT).model_stats[0]
                 for m in ("counted", "id_c")}
        self.assertEqual(stats["counted"].inference_stats.success.count, n)
        self.assertEqual(stats["id_c"].inference_stats.success.count, 2 * n)
        steps = [(s.step, s.model_name, s.model_version, s.time.count)
                 for s in stats["counted"].ensemble_step_stats]
        self.assertEqual(steps, [(0, "id_c", "1", n), (1, "id_c", "1", n)])
        self.assertEqual(len(stats["id_c"].ensemble_step_stats), 0)

    def test_step_error_fails_the_request(self):
        def bytes_tensor(values):
            return b"".join(len(v).to_bytes(4, "little") + v for v in values)

        req = pb.ModelInferRequest(model_name="string_ens")
        for name, values in (("INPUT0", [b"1"] * 15 + [b"x"]), ("INPUT1", [b"2"] * 16)):
            t = req.inputs.add()
            t.name, t.datatype = name, "BYTES"
            t.shape.extend([1, 16])
            req.raw_input_contents.append(bytes_tensor(values))
        self.expect_error(lambda: self.infer(req), E.INVALID_ARGUMENT, "INPUT0")
        # The ensemble still serves.
        req = pb.ModelInferRequest(model_name="string_ens")
        for name in ("INPUT0", "INPUT1"):
            t = req.inputs.add()
            t.name, t.datatype = name, "BYTES"
            t.shape.extend([1, 16])
            req.raw_input_contents.append(bytes_tensor([b"5"] * 16))
        resp = self.infer(req)
        self.assertEqual([o.name for o in resp.outputs], ["OUTPUT0", "OUTPUT1"])


if __name__ == "__main__":
    harness.main()
