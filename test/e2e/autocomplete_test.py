"""Model configs completed as tritonserver completes them: platform and
default_model_filename from the backend (a `backend: "pytorch"` config
without platform), a model folder without config.pbtxt whose model file
names the backend, a backend that completes inputs, outputs, max_batch_size
and its batcher when allowed (test backend `autocomplete`, also installed
under the names `pytorch` and `onnxruntime`), the errors of a bad
completion, and --disable-auto-complete-config / --strict-model-config."""

import os
import tempfile
import threading
import time
import unittest

import grpc
import numpy as np
import requests

import harness
from harness import Server, int32_request, stop_clean
import grpc_service_pb2 as pb

IO = """
input { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] }
output { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] }
"""

# name -> config.pbtxt (None: no config.pbtxt), and the model file of
# version 1.
MODELS = {
    "torch_model": ('backend: "pytorch"' + IO, None),
    "onnx_noconfig": (None, "model.onnx"),
    "complete_me": ('backend: "autocomplete"', None),
    "bad_invalid": ('backend: "autocomplete" parameters { key: "autocomplete_mode" '
                    'value { string_value: "invalid" } }', None),
    "bad_too_large": ('backend: "autocomplete" parameters { key: "autocomplete_mode" '
                      'value { string_value: "too_large" } }', None),
    "bad_scheduling": ('backend: "autocomplete" dynamic_batching { } parameters { '
                       'key: "autocomplete_mode" value { string_value: "scheduling" } }',
                       None),
    "bad_ensemble": ('backend: "autocomplete" parameters { key: "autocomplete_mode" '
                     'value { string_value: "ensemble" } }', None),
    "mismatch": ('backend: "pytorch" platform: "onnxruntime_onnx"' + IO, None),
}


def make_repo():
    repo = tempfile.mkdtemp(prefix="autocomplete_repo", dir=os.environ.get("TEST_TMPDIR"))
    for name, (config, model_file) in MODELS.items():
        os.makedirs(os.path.join(repo, name, "1"))
        if config is not None:
            with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
                f.write(config)
        if model_file is not None:
            open(os.path.join(repo, name, "1", model_file), "w").close()
    return repo


def make_backends():
    """The autocomplete backend under its own name and as `pytorch` and
    `onnxruntime`: the server finds <dir>/<B>/libtriton_<B>.so."""
    lib = os.path.join(harness.TEST_BACKENDS, "autocomplete", "libtriton_autocomplete.so")
    path = tempfile.mkdtemp(prefix="autocomplete_backends",
                            dir=os.environ.get("TEST_TMPDIR"))
    for name in ("autocomplete", "pytorch", "onnxruntime"):
        os.makedirs(os.path.join(path, name))
        os.symlink(lib, os.path.join(path, name, "libtriton_%s.so" % name))
    return path


class AutoCompleteCase(unittest.TestCase):
    """One server per class, explicit model control: each test loads what
    it needs."""

    FLAGS = ()

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--model-control-mode=explicit", *cls.FLAGS,
                            repo=make_repo(), backends=make_backends())
        cls.stub = cls.server.inference()

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.server)

    def load(self, name):
        self.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name))

    def load_fails(self, name):
        with self.assertRaises(grpc.RpcError) as cm:
            self.load(name)
        return cm.exception.details()

    def config(self, name):
        return self.stub.ModelConfig(pb.ModelConfigRequest(name=name)).config

    def http_config(self, name):
        r = requests.get("%s/v2/models/%s/config" % (self.server.http_url, name),
                         timeout=10)
        self.assertEqual(r.status_code, 200, r.text)
        return r.json()

    def backend_line(self, name):
        """What the backend logged of its config at ModelInitialize."""
        needle = "autocomplete: model '%s' " % name
        self.assertTrue(self.server.wait_text(needle), self.server.text())
        return [l for l in self.server.text().splitlines() if needle in l][-1]

    def infer(self, name, values, batched=True):
        """INPUT0 = values, shape [1, n] (batched) or [n]."""
        req = (int32_request(name, values) if batched else harness.infer_request(
            name, [("INPUT0", "INT32", np.asarray(values, dtype=np.int32))]))
        r = self.stub.ModelInfer(req)
        return np.frombuffer(r.raw_output_contents[0], dtype=np.int32).tolist()


class Completed(AutoCompleteCase):
    """tritonserver's default: auto-complete on."""

    def test_pytorch_backend_gets_its_platform(self):
        self.load("torch_model")
        c = self.config("torch_model")
        self.assertEqual((c.backend, c.platform, c.default_model_filename),
                         ("pytorch", "pytorch_libtorch", "model.pt"))
        md = self.stub.ModelMetadata(pb.ModelMetadataRequest(name="torch_model"))
        self.assertEqual(md.platform, "pytorch_libtorch")
        h = self.http_config("torch_model")
        self.assertEqual((h["platform"], h["default_model_filename"]),
                         ("pytorch_libtorch", "model.pt"))
        r = requests.get("%s/v2/models/torch_model" % self.server.http_url, timeout=10)
        self.assertEqual(r.json()["platform"], "pytorch_libtorch")
        # TRITONBACKEND_ModelConfig's JSON, as the backend read it.
        self.assertIn("platform 'pytorch_libtorch' backend 'pytorch' "
                      "default_model_filename 'model.pt'",
                      self.backend_line("torch_model"))
        self.assertEqual(self.infer("torch_model", [1, 2, 3], batched=False), [1, 2, 3])

    def test_folder_without_config(self):
        self.load("onnx_noconfig")
        c = self.config("onnx_noconfig")
        self.assertEqual((c.name, c.backend, c.platform, c.default_model_filename),
                         ("onnx_noconfig", "onnxruntime", "onnxruntime_onnx",
                          "model.onnx"))
        # The rest came from the backend.
        self.assertEqual(c.max_batch_size, 8)
        self.assertEqual([i.name for i in c.input], ["INPUT0"])
        self.assertEqual([o.name for o in c.output], ["OUTPUT0"])
        self.assertIn("may complete: yes", self.backend_line("onnx_noconfig"))
        self.assertEqual(self.infer("onnx_noconfig", [7, 8]), [7, 8])

    def test_backend_completes_inputs_outputs_and_batcher(self):
        self.load("complete_me")
        c = self.config("complete_me")
        self.assertEqual(c.max_batch_size, 8)
        self.assertEqual([(i.name, list(i.dims)) for i in c.input], [("INPUT0", [-1])])
        self.assertEqual([(o.name, list(o.dims)) for o in c.output], [("OUTPUT0", [-1])])
        self.assertEqual(c.dynamic_batching.max_queue_delay_microseconds, 200000)
        # Normalized as a config from a file: tritonserver's defaults.
        self.assertEqual(list(c.dynamic_batching.preferred_batch_size), [8])
        self.assertEqual(c.version_policy.latest.num_versions, 1)
        self.assertTrue(c.optimization.input_pinned_memory.enable)
        self.assertEqual(c.name, "complete_me")
        h = self.http_config("complete_me")
        self.assertEqual(h["max_batch_size"], 8)
        self.assertEqual(h["input"][0]["name"], "INPUT0")
        # The scheduler is the completed config's: four requests sent at once
        # wait out the 200 ms delay together and run as one batch (made
        # before ModelInitialize, it batched nothing: four executions).
        results = [None] * 4

        def client(i):
            results[i] = self.infer("complete_me", [i, i])

        threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(results, [[i, i] for i in range(4)])

        def stats():
            req = pb.ModelStatisticsRequest(name="complete_me")
            return self.stub.ModelStatistics(req).model_stats[0]

        # The backend reports its statistics after it sends the responses.
        harness.wait_until(lambda: stats().inference_count >= 4, timeout=10)
        stats = stats()
        self.assertEqual(stats.inference_count, 4)
        self.assertLess(stats.execution_count, 4)

    def test_bad_completions_fail_the_load(self):
        why = self.load_fails("bad_invalid")
        self.assertIn("input 'INPUT0' has dimension 0", why)
        why = self.load_fails("bad_too_large")
        self.assertIn("the configuration from TRITONBACKEND_ModelSetConfig", why)
        self.assertIn("'input' has 5000 entries, above the limit of 4096", why)
        why = self.load_fails("bad_scheduling")
        self.assertIn("Cannot update scheduling choice from 11 to 13 when "
                      "auto-completing.", why)
        why = self.load_fails("bad_ensemble")
        self.assertIn("ensemble scheduling cannot be set for model 'bad_ensemble' "
                      "whose platform is not ensemble", why)
        # The server goes on serving.
        self.load("torch_model")
        self.assertEqual(self.infer("torch_model", [5], batched=False), [5])

    def test_platform_and_backend_must_agree(self):
        why = self.load_fails("mismatch")
        self.assertIn("mismatch/config.pbtxt: unexpected 'platform' and 'backend' "
                      "pair, got:onnxruntime_onnx, pytorch", why)


class CompletedStrictFalse(Completed):
    """--strict-model-config=false: the older spelling of the default."""

    FLAGS = ("--strict-model-config=false",)


class Disabled(AutoCompleteCase):
    """--disable-auto-complete-config: no backend completion, and a folder
    needs its config.pbtxt; platform and default file name are still
    completed (tritonserver does that on every config)."""

    FLAGS = ("--disable-auto-complete-config",)

    def test_folder_without_config_fails(self):
        why = self.load_fails("onnx_noconfig")
        self.assertIn("onnx_noconfig/config.pbtxt", why)

    def test_backend_may_not_complete(self):
        # Told it may not, the backend leaves the config as it is and, as a
        # framework backend without its tensors, refuses it.
        why = self.load_fails("complete_me")
        self.assertIn("may complete: no", self.backend_line("complete_me"))
        self.assertIn("got 0 inputs and 0 outputs", why)

    def test_pytorch_backend_still_gets_its_platform(self):
        self.load("torch_model")
        c = self.config("torch_model")
        self.assertEqual((c.platform, c.default_model_filename),
                         ("pytorch_libtorch", "model.pt"))
        self.assertIn("may complete: no", self.backend_line("torch_model"))


class DisabledStrictTrue(Disabled):
    """--strict-model-config=true: the older spelling of the flag."""

    FLAGS = ("--strict-model-config=true",)


class PollNewFolder(unittest.TestCase):
    """Poll mode: a folder without config.pbtxt that appears is a model."""

    def test_folder_appears_and_loads(self):
        repo = harness.empty_repo()
        server = Server("--model-control-mode=poll", "--repository-poll-secs=1",
                        repo=repo, backends=make_backends())
        try:
            stage = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
            os.makedirs(os.path.join(stage, "late", "1"))
            open(os.path.join(stage, "late", "1", "model.onnx"), "w").close()
            # Whole, in one step: the scan never sees half a folder.
            os.rename(os.path.join(stage, "late"), os.path.join(repo, "late"))
            stub = server.inference()
            deadline = time.monotonic() + 20 * harness.SLOW
            while time.monotonic() < deadline:
                try:
                    if stub.ModelReady(pb.ModelReadyRequest(name="late")).ready:
                        break
                except grpc.RpcError:
                    pass
                time.sleep(0.1)
            c = stub.ModelConfig(pb.ModelConfigRequest(name="late")).config
            self.assertEqual((c.name, c.platform, c.max_batch_size),
                             ("late", "onnxruntime_onnx", 8))
        finally:
            stop_clean(server)


if __name__ == "__main__":
    harness.main()
