"""End to end: nereid-perf against the real server on examples/models, in
every mode (unary-sync, unary-async, stream, decoupled, request rate), its
CSV and JSON outputs, --input-data files, --shared-memory system (against a
server with --allow-client-shm=true: no error, and nothing left registered
or under /dev/shm), and errors: the server's errors are counted and shown,
a missing model, a wrong mode or a refused region stops the run.

Run by test/e2e/run_py.sh (harness.py starts the server); nereid-perf is
in the runfiles beside this file."""

import csv
import glob
import json
import os
import subprocess
import tempfile
import time
import unittest

import harness
from harness import Server

PERF = os.path.abspath("tools/perf/nereid-perf")
TMP = os.environ.get("TEST_TMPDIR", tempfile.gettempdir())
# Short windows; three of them per level (any three agree within 100%).
QUICK = ["-p", "150", "-r", "3", "-s", "100"]


class PerfCase(unittest.TestCase):
    """One server per class, started with ARGS."""
    ARGS = ()

    @classmethod
    def setUpClass(cls):
        cls.server = Server(*cls.ARGS, repo=harness.EXAMPLES)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def perf(self, *args, expect_rc=0):
        """Runs nereid-perf with JSON and CSV outputs: (json, csv rows, stdout+stderr)."""
        out = tempfile.mkdtemp(dir=TMP)
        js, cs = os.path.join(out, "r.json"), os.path.join(out, "r.csv")
        argv = [PERF, "-u", self.server.address, "--json", js, "-f", cs] + QUICK + list(args)
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as p:
            self.last_pid = p.pid  # names its shared-memory objects
            out, _ = p.communicate(timeout=120 * harness.SLOW)
        text = out.decode(errors="replace")
        self.assertEqual(p.returncode, expect_rc, text)
        if not os.path.exists(js):
            return None, None, text
        with open(js) as f:
            doc = json.load(f)
        with open(cs) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), len(doc["levels"]))
        return doc, rows, text

    def check_clean(self, doc, rows, levels):
        self.assertEqual(len(doc["levels"]), levels)
        for level, row in zip(doc["levels"], rows):
            self.assertGreater(level["throughput_infer_per_sec"], 0, level)
            self.assertEqual(level["errors"], 0, level)
            self.assertEqual(level["error_messages"], [])
            self.assertGreater(level["latency_us"]["p50"], 0)
            self.assertLessEqual(level["latency_us"]["p50"], level["latency_us"]["p99"])
            self.assertIsNotNone(level["server"], level)
            self.assertGreater(level["server"]["inference_count"], 0)
            self.assertGreater(float(row["Inferences/Second"]), 0)
            self.assertEqual(row["Errors"], "0")

    def check_no_shm_left(self, shm_enabled=True):
        """The last run left no shared-memory object, and the server holds
        no region."""
        self.assertEqual(glob.glob("/dev/shm/nereid-perf-%d-*" % self.last_pid), [])
        if not shm_enabled:
            return
        status = self.server.inference().SystemSharedMemoryStatus(
            harness.grpc_service_pb2.SystemSharedMemoryStatusRequest(), timeout=10)
        self.assertEqual(list(status.regions), [])


class PerfTest(PerfCase):
    def test_unary_sync_sweep(self):
        doc, rows, text = self.perf("-m", "simple", "--concurrency-range", "1:3:2")
        self.check_clean(doc, rows, 2)
        self.assertEqual([lv["concurrency"] for lv in doc["levels"]], [1, 3])
        self.assertEqual(doc["levels"][1]["threads"], 3)  # a worker per client
        self.assertEqual([r["Concurrency"] for r in rows], ["1", "3"])
        self.assertIn("Concurrency 3", text)

    def test_unary_async_inflight_per_connection(self):
        doc, rows, _ = self.perf("-m", "simple", "--mode", "unary-async",
                                 "--concurrency-range", "6", "--inflight", "2", "-b", "2")
        self.check_clean(doc, rows, 1)
        self.assertEqual(doc["levels"][0]["connections"], 3)
        self.assertEqual(doc["batch_size"], 2)
        # Every request carries two inferences.
        server = doc["levels"][0]["server"]
        self.assertGreaterEqual(server["inference_count"], 2 * server["execution_count"])

    def test_stream(self):
        doc, rows, _ = self.perf("-m", "simple", "--mode", "stream", "--concurrency-range", "8",
                                 "--connections", "2", "--inflight", "4")
        self.check_clean(doc, rows, 1)
        self.assertEqual(doc["levels"][0]["streams"], 2)

    def test_decoupled_counts_responses(self):
        doc, rows, text = self.perf("-m", "repeat_int32", "--mode", "decoupled",
                                    "--input-data", "zero", "--shape", "IN:4",
                                    "--shape", "DELAY:4", "--concurrency-range", "2")
        self.check_clean(doc, rows, 1)
        level = doc["levels"][0]
        # Four responses with outputs per request (the empty final is not one).
        self.assertGreater(level["throughput_responses_per_sec"],
                           3 * level["throughput_infer_per_sec"], level)
        self.assertLess(level["throughput_responses_per_sec"],
                        5 * level["throughput_infer_per_sec"], level)
        self.assertIn("responses/s", text)

    def test_request_rate(self):
        doc, rows, text = self.perf("-m", "simple", "--mode", "unary-async",
                                    "--request-rate", "300", "-p", "300")
        self.check_clean(doc, rows, 1)
        level = doc["levels"][0]
        self.assertEqual(level["concurrency"], 0)
        self.assertAlmostEqual(level["throughput_infer_per_sec"], 300, delta=60)
        self.assertIn("send_late_avg_us", level)
        self.assertIn("Request rate 300/s", text)
        doc, rows, _ = self.perf("-m", "simple", "--mode", "stream", "--request-rate", "300",
                                 "--request-distribution", "poisson", "-p", "300")
        self.check_clean(doc, rows, 1)

    def test_input_data_file(self):
        path = os.path.join(TMP, "simple.json")
        with open(path, "w") as f:
            json.dump({"data": [{"INPUT0": list(range(16)), "INPUT1": {
                "content": [[1] * 16], "shape": [16]}}]}, f)
        doc, rows, _ = self.perf("-m", "simple", "--input-data", path)
        self.check_clean(doc, rows, 1)

    def test_server_errors_are_counted_and_shown(self):
        doc, _, text = self.perf("-m", "simple", "--mode", "unary-async",
                                 "--concurrency-range", "2", "--shape", "INPUT0:17",
                                 expect_rc=2)
        level = doc["levels"][0]
        self.assertGreater(level["errors"], 0)
        self.assertEqual(level["requests"], 0)
        messages = level["error_messages"]
        self.assertEqual(len(messages), 1, messages)
        self.assertIn("INVALID_ARGUMENT", messages[0]["message"])
        self.assertIn("INPUT0", messages[0]["message"])
        self.assertEqual(messages[0]["count"], level["errors"])
        self.assertIn("INPUT0", text)
        # Over a stream, an error is a response's error_message.
        doc, _, _ = self.perf("-m", "simple", "--mode", "stream", "--concurrency-range", "2",
                              "--shape", "INPUT1:3", expect_rc=2)
        level = doc["levels"][0]
        self.assertGreater(level["errors"], 0)
        self.assertIn("INPUT1", level["error_messages"][0]["message"])

    def sequence_stats(self, model):
        resp = self.server.inference().ModelStatistics(
            harness.grpc_service_pb2.ModelStatisticsRequest(name=model), timeout=10)
        return resp.model_stats[0].sequence_stats

    def check_sequences_closed(self, model):
        """Every sequence the runs started was ended by its END: at the stop,
        each open one is sent its last step."""
        deadline = time.monotonic() + 5 * harness.SLOW
        while True:
            st = self.sequence_stats(model)
            if st.active == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.05)  # a slot frees just after its END's response
        self.assertEqual((st.active, st.backlog), (0, 0), st)
        self.assertEqual((st.idle_ended, st.stream_ended, st.cancel_ended), (0, 0, 0), st)
        self.assertEqual(st.started, st.ended, st)
        self.assertGreater(st.ended, 0, st)

    def test_sequences_closed_loop(self):
        # Direct and oldest strategies, integer and string ids, unary and streams.
        for model in ("simple_sequence", "simple_string_dyna_sequence"):
            for mode in ("unary-sync", "unary-async", "stream"):
                doc, rows, text = self.perf("-m", model, "--mode", mode,
                                            "--concurrency-range", "3", "--sequence-length", "4",
                                            "--sequence-length-variation", "0")
                self.check_clean(doc, rows, 1)
                level = doc["levels"][0]
                self.assertEqual(level["sequences"], 3)
                self.assertGreater(level["sequences_ended"], 0, level)
                self.assertGreater(level["throughput_sequences_per_sec"], 0, level)
                self.assertEqual(doc["sequence"]["length"], 4)
                self.assertEqual(doc["sequence"]["string_ids"], model.endswith("dyna_sequence"))
                self.assertIn("3 sequences", text)
                self.assertIn("sequences/s", text)
            self.check_sequences_closed(model)

    def test_sequences_open_loop(self):
        for mode in ("unary-async", "stream"):
            doc, rows, text = self.perf("-m", "simple_sequence_state", "--mode", mode,
                                        "--request-rate", "400", "--num-of-sequences", "5",
                                        "--sequence-id-range", "1000:1005", "-p", "300")
            self.check_clean(doc, rows, 1)
            level = doc["levels"][0]
            self.assertEqual(level["sequences"], 5)
            self.assertGreater(level["sequences_ended"], 0, level)
            self.assertIn("or no sequence free", text)
        self.check_sequences_closed("simple_sequence_state")

    def test_sequence_setup_errors(self):
        _, _, text = self.perf("-m", "simple_sequence", "--concurrency-range", "4",
                               "--sequence-id-range", "1:4", expect_rc=1)
        self.assertIn("--sequence-id-range 1:4 holds 3 ids, fewer than the 4 sequences", text)
        _, _, text = self.perf("-m", "simple", "--sequence-length", "5", expect_rc=1)
        self.assertIn("--sequence-length is for sequence models: model simple has no "
                      "sequence_batching", text)
        _, _, text = self.perf("-m", "simple_sequence", "-b", "2", expect_rc=1)
        self.assertIn("(--batch-size 1)", text)

    def test_setup_errors_stop_the_run(self):
        _, _, text = self.perf("-m", "nosuch", expect_rc=1)
        self.assertIn("nosuch", text)
        self.assertIn("ModelConfig: UNAVAILABLE", text)  # as Triton answers
        _, _, text = self.perf("-m", "repeat_int32", expect_rc=1)
        self.assertIn("--mode decoupled", text)
        _, _, text = self.perf("-m", "repeat_int32", "--mode", "decoupled", expect_rc=1)
        self.assertIn("--shape IN:", text)
        _, _, text = self.perf("-m", "simple", "--bogus", expect_rc=1)
        self.assertIn("--bogus", text)
        _, _, text = self.perf("-m", "simple", "--shared-memory", "cuda", expect_rc=1)
        self.assertIn("no CUDA client support", text)

    def test_shared_memory_refused(self):
        # This server runs without --allow-client-shm: the first register
        # fails, named, and the objects made are removed.
        _, _, text = self.perf("-m", "simple", "--shared-memory", "system", expect_rc=1)
        self.assertIn("registering region nereid-perf-%d-0 (key /nereid-perf-%d-0, 64 "
                      "bytes) for input INPUT0: SystemSharedMemoryRegister: UNAVAILABLE: "
                      % (self.last_pid, self.last_pid), text)
        self.assertIn("--allow-client-shm=true", text)
        self.check_no_shm_left(shm_enabled=False)


class PerfShmTest(PerfCase):
    ARGS = ("--allow-client-shm=true",)

    def test_system_shared_memory(self):
        for mode in ("unary-sync", "stream"):
            doc, rows, text = self.perf("-m", "simple", "--mode", mode, "--shared-memory",
                                        "system", "--concurrency-range", "2")
            self.check_clean(doc, rows, 1)
            self.assertEqual(doc["shared_memory"], "system")
            self.assertEqual(doc["output_shared_memory_size"], 102400)
            self.assertIn("shared memory: system", text)
            self.check_no_shm_left()

    def test_output_region_too_small(self):
        # The outputs go to their regions: 10 bytes cannot hold OUTPUT0's 64.
        doc, _, _ = self.perf("-m", "simple", "--shared-memory", "system",
                              "--output-shared-memory-size", "10", expect_rc=2)
        level = doc["levels"][0]
        self.assertEqual(level["requests"], 0)
        self.assertGreater(level["errors"], 0)
        self.assertIn("(10 bytes) should be at least 64 bytes",
                      level["error_messages"][0]["message"])
        self.check_no_shm_left()


if __name__ == "__main__":
    harness.main()
