#!/usr/bin/python3
"""examples/embed/simple_embed end to end: an application linked against
libtritonserver.so runs Nereid in process (no ports), loads `simple`, infers
through TRITONSERVER_ServerInferAsync, reads statistics and metrics, unloads,
stops and deletes. Also the errors it must report: a repository that does not
exist, a model that is not in the repository. Arg: the example binary."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BINARY = os.path.abspath(sys.argv.pop(1))
BACKENDS = os.path.abspath("backends")
MODELS = os.path.abspath("examples/models")


def run(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=120)


def line(out, prefix):
    for l in out.splitlines():
        if l.startswith(prefix):
            return l[len(prefix):]
    raise AssertionError("no line starting %r in:\n%s" % (prefix, out))


class EmbedExampleTest(unittest.TestCase):
    def test_runs_simple_in_process(self):
        p = run("--model-repository=" + MODELS, "--backend-directory=" + BACKENDS)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        out = p.stdout
        self.assertIn("server is live and ready", out)
        meta = json.loads(line(out, "server metadata: "))
        self.assertEqual(meta["name"], "triton")  # as Triton's clients expect
        self.assertTrue(any(e.startswith("nereid") for e in meta["extensions"]))
        self.assertIn("model_repository", meta["extensions"])
        self.assertEqual(line(out, "loaded simple: "), "ready")
        model = json.loads(line(out, "model metadata: "))
        self.assertEqual(model["name"], "simple")
        self.assertEqual([i["name"] for i in model["inputs"]], ["INPUT0", "INPUT1"])
        self.assertIn("OUTPUT0 = INPUT0 + INPUT1: 16 values checked", out)
        self.assertIn("OUTPUT1 = INPUT0 - INPUT1: 16 values checked", out)
        stats = json.loads(line(out, "statistics: "))["model_stats"]
        self.assertEqual(stats[0]["name"], "simple")
        self.assertEqual(stats[0]["inference_stats"]["success"]["count"], 1)
        self.assertEqual(line(out, "metrics: "),
                         'nv_inference_request_success{model="simple",version="1"} 1')
        self.assertIn("unloaded simple", out)
        self.assertTrue(out.rstrip().endswith("PASS: simple_embed"), out)
        # The in-process server serves no network endpoint.
        self.assertNotIn("Started GRPCInferenceService", p.stderr)

    def test_missing_repository(self):
        p = run("--model-repository=/no/such/repository", "--backend-directory=" + BACKENDS)
        self.assertEqual(p.returncode, 1)
        self.assertIn("error: creating the server: failed to stat model repository "
                      "'/no/such/repository'", p.stderr)

    def test_model_not_in_repository(self):
        with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as empty:
            p = run("--model-repository=" + empty, "--backend-directory=" + BACKENDS)
        self.assertEqual(p.returncode, 1)
        self.assertIn("error: loading simple:", p.stderr)
        self.assertIn("simple", p.stderr.split("error: loading simple:")[1])


if __name__ == "__main__":
    unittest.main()
