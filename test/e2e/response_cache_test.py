"""The response cache (server/cache/cache.md): the same request twice is
answered the second time from the cache without running the backend, over
gRPC, gRPC streams and HTTP; other inputs or outputs miss; a model without
response_cache.enable is never cached; LRU eviction in a tiny cache;
ensembles cached at the top; Triton's statistics and metrics; the flags'
and configs' errors in Triton's words.
"""

import os
import queue
import re
import shutil
import tempfile
import time
import unittest

import numpy as np
import requests

import harness

pb = harness.grpc_service_pb2

CACHED = "response_cache { enable: true }\n"


def make_repo():
    """`cached` and `uncached` (copies of the example `simple`), an ensemble
    of `simple` with caching at the top, and a decoupled model that asks for
    caching (which must not load)."""
    repo = tempfile.mkdtemp(prefix="cache_repo", dir=os.environ.get("TEST_TMPDIR"))
    simple = open(os.path.join(harness.EXAMPLES, "simple", "config.pbtxt")).read()
    for name, extra in (("cached", CACHED), ("uncached", ""), ("simple", "")):
        os.makedirs(os.path.join(repo, name, "1"))
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(simple.replace('name: "simple"', 'name: "%s"' % name) + extra)
    ens = open(os.path.join(harness.EXAMPLES, "simple_ensemble", "config.pbtxt")).read()
    os.makedirs(os.path.join(repo, "ensemble_cached", "1"))
    with open(os.path.join(repo, "ensemble_cached", "config.pbtxt"), "w") as f:
        f.write(ens.replace('name: "simple_ensemble"', 'name: "ensemble_cached"') + CACHED)
    rep = open(os.path.join(harness.EXAMPLES, "repeat_int32", "config.pbtxt")).read()
    os.makedirs(os.path.join(repo, "decoupled_cached", "1"))
    with open(os.path.join(repo, "decoupled_cached", "config.pbtxt"), "w") as f:
        f.write(rep.replace('name: "repeat_int32"', 'name: "decoupled_cached"') + CACHED)
    return repo


def request(model, base, outputs=None):
    a = (np.arange(16, dtype=np.int32) + base).reshape(1, 16)
    b = np.full((1, 16), 3, dtype=np.int32)
    return harness.infer_request(model, [("INPUT0", "INT32", a), ("INPUT1", "INT32", b)],
                                 outputs=outputs)


def outputs(resp):
    return {o.name: np.frombuffer(raw, dtype=np.int32)
            for o, raw in zip(resp.outputs, resp.raw_output_contents)}


class ResponseCacheTest(harness.ServerTestCase):
    ARGS = ("--cache-config=local,size=1048576", "--model-control-mode=explicit",
            "--load-model=cached", "--load-model=uncached", "--load-model=ensemble_cached",
            "--allow-metrics=true")
    REPO = None

    @classmethod
    def setUpClass(cls):
        cls.REPO = make_repo()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.REPO, ignore_errors=True)

    def stats(self, model):
        return self.stub.ModelStatistics(pb.ModelStatisticsRequest(name=model)).model_stats[0]

    def settled(self, model, executions):
        """The stats once `executions` executions are reported (backends
        report after their response)."""
        deadline = time.time() + 10 * harness.SLOW
        while True:
            s = self.stats(model)
            if s.execution_count >= executions or time.time() > deadline:
                return s
            time.sleep(0.01)

    def test_hit_after_miss(self):
        first = self.stub.ModelInfer(request("cached", 100))
        s = self.settled("cached", 1)
        base = (s.inference_stats.cache_hit.count, s.inference_stats.cache_miss.count,
                s.execution_count, s.inference_stats.success.count, s.inference_count)
        second = self.stub.ModelInfer(request("cached", 100))
        for name, want in outputs(first).items():
            np.testing.assert_array_equal(outputs(second)[name], want)
        self.assertEqual([o.name for o in second.outputs], ["OUTPUT0", "OUTPUT1"])
        self.assertEqual(list(second.outputs[0].shape), [1, 16])
        self.assertEqual(second.outputs[0].datatype, "INT32")
        np.testing.assert_array_equal(outputs(second)["OUTPUT0"],
                                      np.arange(16, dtype=np.int32) + 103)
        time.sleep(0.05)  # anything the backend would report has come
        s = self.stats("cached")
        st = s.inference_stats
        self.assertEqual(st.cache_hit.count, base[0] + 1)
        self.assertEqual(st.cache_miss.count, base[1])
        self.assertEqual(s.execution_count, base[2])  # the backend did not run
        self.assertEqual(st.success.count, base[3] + 1)  # a hit is a success
        self.assertEqual(s.inference_count, base[4])  # but no inference
        self.assertGreater(st.cache_hit.ns, 0)
        self.assertGreater(st.cache_miss.ns, 0)

    def test_other_inputs_and_outputs_miss(self):
        self.stub.ModelInfer(request("cached", 200))
        s0 = self.settled("cached", 1)
        self.stub.ModelInfer(request("cached", 201))  # other contents
        self.stub.ModelInfer(request("cached", 200, outputs=["OUTPUT1"]))  # other outputs
        s = self.settled("cached", s0.execution_count + 2)
        self.assertEqual(s.execution_count, s0.execution_count + 2)
        self.assertEqual(s.inference_stats.cache_miss.count,
                         s0.inference_stats.cache_miss.count + 2)
        self.assertEqual(s.inference_stats.cache_hit.count, s0.inference_stats.cache_hit.count)
        # The answer of the one-output request has that one output only.
        one = self.stub.ModelInfer(request("cached", 200, outputs=["OUTPUT1"]))
        self.assertEqual([o.name for o in one.outputs], ["OUTPUT1"])

    def test_uncached_model(self):
        s0 = self.settled("uncached", 0)
        for _ in range(3):
            self.stub.ModelInfer(request("uncached", 300))
        s = self.settled("uncached", s0.execution_count + 3)
        self.assertEqual(s.execution_count, s0.execution_count + 3)
        self.assertEqual(s.inference_stats.cache_hit.count, 0)
        self.assertEqual(s.inference_stats.cache_miss.count, 0)

    def test_stream_hits(self):
        s0 = self.settled("cached", 0)
        # The second request goes once the first is answered (and so in
        # the cache): a queue feeds the stream.
        feed = queue.Queue()
        feed.put(request("cached", 400))
        stream = self.stub.ModelStreamInfer(iter(feed.get, None), timeout=30)
        got = [next(stream)]
        feed.put(request("cached", 400))
        got.append(next(stream))
        feed.put(None)
        self.assertEqual(list(stream), [])
        self.assertEqual(got[0].error_message, "")
        self.assertEqual(got[1].error_message, "")
        np.testing.assert_array_equal(outputs(got[1].infer_response)["OUTPUT1"],
                                      np.arange(16, dtype=np.int32) + 397)
        s = self.stats("cached")
        self.assertEqual(s.inference_stats.cache_hit.count,
                         s0.inference_stats.cache_hit.count + 1)

    def test_http_hits(self):
        body = {"inputs": [
            {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32",
             "data": list(range(500, 516))},
            {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]}
        url = self.server.http_url + "/v2/models/cached/infer"
        s0 = self.settled("cached", 0)
        first = requests.post(url, json=body, timeout=30)
        second = requests.post(url, json=body, timeout=30)
        self.assertEqual(first.status_code, 200, first.text)
        self.assertEqual(second.status_code, 200, second.text)
        self.assertEqual(first.json()["outputs"], second.json()["outputs"])
        s = self.stats("cached")
        self.assertEqual(s.inference_stats.cache_hit.count,
                         s0.inference_stats.cache_hit.count + 1)
        # The same request over gRPC is the same key: a hit too.
        a = np.arange(500, 516, dtype=np.int32).reshape(1, 16)
        grpc_req = harness.infer_request("cached", [
            ("INPUT0", "INT32", a), ("INPUT1", "INT32", np.ones((1, 16), np.int32))])
        self.stub.ModelInfer(grpc_req)
        s = self.stats("cached")
        self.assertEqual(s.inference_stats.cache_hit.count,
                         s0.inference_stats.cache_hit.count + 2)

    def test_ensemble_top_level(self):
        step0 = self.settled("simple", 0).execution_count
        first = self.stub.ModelInfer(request("ensemble_cached", 600))
        self.settled("simple", step0 + 2)
        second = self.stub.ModelInfer(request("ensemble_cached", 600))
        for name, want in outputs(first).items():
            np.testing.assert_array_equal(outputs(second)[name], want)
        time.sleep(0.05)
        self.assertEqual(self.stats("simple").execution_count, step0 + 2)
        s = self.stats("ensemble_cached")
        self.assertEqual(s.inference_stats.cache_hit.count, 1)
        self.assertEqual(s.inference_stats.cache_miss.count, 1)

    def test_metrics(self):
        self.stub.ModelInfer(request("cached", 700))
        self.stub.ModelInfer(request("cached", 700))
        port = int(re.search(r"Started Metrics Service at \S+:(\d+)",
                             self.server.text()).group(1))
        text = requests.get("http://127.0.0.1:%d/metrics" % port, timeout=10).text
        for family, help_text in (
                ("nv_cache_num_hits_per_model", "Number of cache hits per model"),
                ("nv_cache_num_misses_per_model", "Number of cache misses per model"),
                ("nv_cache_hit_duration_per_model",
                 "Total cache hit duration per model, in microseconds"),
                ("nv_cache_miss_duration_per_model",
                 "Total cache miss (insert+lookup) duration per model, in microseconds")):
            self.assertIn("# HELP %s %s\n# TYPE %s counter\n" % (family, help_text, family),
                          text)
            self.assertIn('%s{model="cached",version="1"} ' % family, text)
            self.assertNotIn('%s{model="uncached"' % family, text)
        hits = re.search(r'nv_cache_num_hits_per_model\{model="cached",version="1"\} (\d+)',
                         text)
        self.assertEqual(int(hits.group(1)),
                         self.stats("cached").inference_stats.cache_hit.count)

    def test_decoupled_refused(self):
        with self.assertRaises(harness.grpc.RpcError) as e:
            self.stub.RepositoryModelLoad(
                pb.RepositoryModelLoadRequest(model_name="decoupled_cached"), timeout=60)
        self.assertIn("Response Cache does not currently support model decoupled_cached "
                      "with 'decoupled' transaction policy", e.exception.details())


class OwnServer(unittest.TestCase):
    """Cases that each need a server of their own, serving `cached`."""

    def serve(self, *args):
        """A server with these flags over a new repository (both go at the
        case's end); its stub."""
        repo = make_repo()
        server = harness.Server("--model-control-mode=explicit", "--load-model=cached",
                                *args, repo=repo)
        self.addCleanup(shutil.rmtree, repo, ignore_errors=True)
        self.addCleanup(harness.stop_clean, server)
        self.repo = repo
        self.server = server
        return server.inference()

    @staticmethod
    def counts(stub):
        """cached's (hits, misses)."""
        st = stub.ModelStatistics(pb.ModelStatisticsRequest(
            name="cached")).model_stats[0].inference_stats
        return st.cache_hit.count, st.cache_miss.count


class LocalCacheTest(OwnServer):
    def test_lru_eviction(self):
        """Room for two of `simple`'s answers: the least recently used one
        goes."""
        stub = self.serve("--cache-config=local,size=1024")
        for base in (1, 2, 3):  # A, B, then C evicts A
            stub.ModelInfer(request("cached", base))
        self.assertEqual(self.counts(stub), (0, 3))
        stub.ModelInfer(request("cached", 3))  # C: a hit
        self.assertEqual(self.counts(stub), (1, 3))
        stub.ModelInfer(request("cached", 1))  # A: gone, a miss (evicts B)
        self.assertEqual(self.counts(stub), (1, 4))
        stub.ModelInfer(request("cached", 3))  # C stayed
        self.assertEqual(self.counts(stub), (2, 4))
        stub.ModelInfer(request("cached", 2))  # B was evicted
        self.assertEqual(self.counts(stub), (2, 5))

    def test_reload_starts_afresh(self):
        """A reload (new weights under the same version) never gets the old
        load's answers."""
        stub = self.serve("--cache-config=local,size=65536")
        stub.ModelInfer(request("cached", 5))
        stub.ModelInfer(request("cached", 5))
        self.assertEqual(self.counts(stub), (1, 1))
        with open(os.path.join(self.repo, "cached", "config.pbtxt"), "a") as f:
            f.write("# changed\n")
        stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="cached"),
                                 timeout=60)
        stub.ModelInfer(request("cached", 5))
        self.assertEqual(self.counts(stub), (0, 1))  # the new load's first: a miss

    def test_no_server_cache_no_caching(self):
        """A model asking for caching on a server without a cache runs
        uncached, as in Triton."""
        stub = self.serve()
        for _ in range(2):
            stub.ModelInfer(request("cached", 9))
        self.assertEqual(self.counts(stub), (0, 0))
        # The backend reports its statistics after its response: wait.
        deadline = time.time() + 10 * harness.SLOW
        while True:
            st = stub.ModelStatistics(pb.ModelStatisticsRequest(name="cached")).model_stats[0]
            if st.inference_stats.success.count >= 2 or time.time() > deadline:
                break
            time.sleep(0.01)
        self.assertEqual(st.inference_stats.success.count, 2)
        self.assertEqual(st.execution_count, 2)  # both ran: nothing was cached


class BlsTest(unittest.TestCase):
    def test_bls_requests_hit(self):
        """A BLS backend's in-process requests (bls_simple forwards each
        request to `simple`) use `simple`'s cache like any other."""
        repo = make_repo()
        self.addCleanup(shutil.rmtree, repo, ignore_errors=True)
        with open(os.path.join(repo, "simple", "config.pbtxt"), "a") as f:
            f.write(CACHED)
        shutil.copytree(os.path.join(harness.TEST_MODELS, "bls_simple"),
                        os.path.join(repo, "bls_simple"))
        server = harness.Server("--cache-config=local,size=65536",
                                "--model-control-mode=explicit", "--load-model=simple",
                                "--load-model=bls_simple", repo=repo,
                                backends=harness.combined_backends())
        self.addCleanup(harness.stop_clean, server)
        stub = server.inference()
        first = stub.ModelInfer(request("bls_simple", 21))
        second = stub.ModelInfer(request("bls_simple", 21))
        for name, want in outputs(first).items():
            np.testing.assert_array_equal(outputs(second)[name], want)
        s = stub.ModelStatistics(pb.ModelStatisticsRequest(name="simple")).model_stats[0]
        self.assertEqual((s.inference_stats.cache_hit.count,
                          s.inference_stats.cache_miss.count), (1, 1))
        deadline = time.time() + 10 * harness.SLOW
        while s.execution_count < 1 and time.time() < deadline:
            time.sleep(0.01)
            s = stub.ModelStatistics(pb.ModelStatisticsRequest(name="simple")).model_stats[0]
        self.assertEqual(s.execution_count, 1)


def cache_directory():
    """A --cache-directory holding the test library `memo`
    (test/caches/memo) as memo/libtritoncache_memo.so."""
    root = tempfile.mkdtemp(prefix="caches", dir=os.environ.get("TEST_TMPDIR"))
    os.makedirs(os.path.join(root, "memo"))
    os.symlink(os.path.abspath("test/caches/memo/libtritoncache_memo.so"),
               os.path.join(root, "memo", "libtritoncache_memo.so"))
    return root


def wait_lines(path, n):
    """Waits until the memo log at `path` has n lines."""
    deadline = time.time() + 10 * harness.SLOW
    while time.time() < deadline:
        if os.path.exists(path) and open(path).read().count("\n") >= n:
            return
        time.sleep(0.01)


class LibraryCacheTest(OwnServer):
    """A cache library (Triton's TRITONCACHE API) in place of `local`."""

    def test_hits_through_the_library(self):
        caches = cache_directory()
        self.addCleanup(shutil.rmtree, caches, ignore_errors=True)
        log = os.path.join(caches, "memo.log")
        stub = self.serve("--cache-directory=" + caches, "--cache-config=memo,log=" + log,
                          "--cache-config=memo,size=1048576")
        first = stub.ModelInfer(request("cached", 11))
        # The insertion runs on the cache's call threads, after the answer.
        wait_lines(log, 2)
        second = stub.ModelInfer(request("cached", 11))
        for name, want in outputs(first).items():
            np.testing.assert_array_equal(outputs(second)[name], want)
        self.assertEqual(list(second.outputs[0].shape), [1, 16])
        self.assertEqual(self.counts(stub), (1, 1))
        stub.ModelInfer(request("cached", 12))
        self.assertEqual(self.counts(stub), (1, 2))
        wait_lines(log, 5)
        lines = open(log).read().split("\n")
        kinds = [" ".join(w for w in line.split() if len(w) != 32) for line in lines if line]
        self.assertEqual(kinds, ["lookup miss", "insert", "lookup hit", "lookup miss",
                                 "insert"])
        self.assertRegex(lines[0], r"^lookup [0-9a-f]{32} miss$")

    def slow(self, delay_ms, *more):
        caches = cache_directory()
        self.addCleanup(shutil.rmtree, caches, ignore_errors=True)
        self.log = os.path.join(caches, "memo.log")
        return self.serve("--cache-directory=" + caches, "--cache-config=memo,log=" + self.log,
                          "--cache-config=memo,delay_ms=%d" % delay_ms, "--load-model=uncached",
                          *more)

    def test_slow_library_holds_no_worker(self):
        """Lookups waiting on a slow library (a network cache) run on the
        cache's threads: a model without caching still answers at once, and
        the waiting requests get right answers, then hits."""
        stub = self.slow(int(1500 * harness.SLOW))
        waiting = [stub.ModelInfer.future(request("cached", 100 + i)) for i in range(8)]
        time.sleep(0.2)
        start = time.time()
        plain = stub.ModelInfer(request("uncached", 7), timeout=10 * harness.SLOW)
        self.assertLess(time.time() - start, 1.0 * harness.SLOW)
        self.assertFalse(any(f.done() for f in waiting))
        a = np.arange(16, dtype=np.int32) + 7
        np.testing.assert_array_equal(outputs(plain)["OUTPUT0"], a + 3)
        for i, f in enumerate(waiting):
            got = outputs(f.result(timeout=20 * harness.SLOW))
            np.testing.assert_array_equal(got["OUTPUT0"], np.arange(16) + 100 + i + 3)
        wait_lines(self.log, 16)  # 8 lookups, 8 insertions
        again = stub.ModelInfer(request("cached", 103), timeout=10 * harness.SLOW)
        np.testing.assert_array_equal(outputs(again)["OUTPUT1"], np.arange(16) + 103 - 3)
        self.assertEqual(self.counts(stub), (1, 8))
        s = self.stats_of(stub)
        # A hit's lookup time includes its round trip (and its wait).
        self.assertGreaterEqual(s.cache_hit.ns, 1400 * 1000 * 1000)

    def stats_of(self, stub):
        return stub.ModelStatistics(pb.ModelStatisticsRequest(
            name="cached")).model_stats[0].inference_stats

    def test_full_queue_skips_the_cache(self):
        """More lookups than the call queue holds (4 threads, 64 waiting):
        the surplus runs the model uncached, every answer is right, and the
        drops are logged at verbose level 1."""
        stub = self.slow(250, "--log-verbose=1")
        calls = [stub.ModelInfer.future(request("cached", 1000 + i), timeout=30 * harness.SLOW)
                 for i in range(100)]
        for i, f in enumerate(calls):
            got = outputs(f.result())
            np.testing.assert_array_equal(got["OUTPUT0"], np.arange(16) + 1000 + i + 3)
        self.assertTrue(self.server.wait_text("the cache call queue is full; request"))
        hits, misses = self.counts(stub)
        self.assertEqual(hits, 0)
        self.assertEqual(misses, 100)

    def test_cancel_while_waiting(self):
        """A request cancelled while it waits for a call thread (all four
        busy) is answered cancelled: never looked up, never run."""
        stub = self.slow(int(1500 * harness.SLOW))
        busy = [stub.ModelInfer.future(request("cached", 200 + i), timeout=20 * harness.SLOW)
                for i in range(4)]
        time.sleep(0.3)
        victim = stub.ModelInfer.future(request("cached", 300), timeout=20 * harness.SLOW)
        time.sleep(0.3)
        victim.cancel()
        for f in busy:
            self.assertEqual(len(f.result().outputs), 2)
        deadline = time.time() + 10 * harness.SLOW
        while self.stats_of(stub).fail.count < 1 and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.stats_of(stub).fail.count, 1)
        wait_lines(self.log, 8)
        time.sleep(0.2)
        lines = [line for line in open(self.log).read().split("\n") if line]
        self.assertEqual(sum(line.startswith("lookup") for line in lines), 4, lines)
        s = stub.ModelStatistics(pb.ModelStatisticsRequest(name="cached")).model_stats[0]
        self.assertEqual(s.execution_count, 4)

    def test_unload_during_a_slow_lookup(self):
        """A model unloaded while a request waits on the library: the
        request is answered (run, or refused as unloading), the unload
        finishes, and the server goes on."""
        stub = self.slow(1000)
        waiting = stub.ModelInfer.future(request("cached", 5), timeout=20 * harness.SLOW)
        time.sleep(0.2)
        stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="cached"))
        try:
            got = outputs(waiting.result())
            np.testing.assert_array_equal(got["OUTPUT0"], np.arange(16) + 5 + 3)
        except harness.grpc.RpcError as e:
            self.assertIn("unloading", e.details())
        deadline = time.time() + 10 * harness.SLOW
        while time.time() < deadline:
            idx = stub.RepositoryIndex(pb.RepositoryIndexRequest())
            if all(m.state != "READY" for m in idx.models if m.name == "cached"):
                break
            time.sleep(0.05)
        self.assertTrue(all(m.state != "READY" for m in idx.models if m.name == "cached"))
        plain = stub.ModelInfer(request("uncached", 1))
        self.assertEqual(len(plain.outputs), 2)

    def test_library_errors(self):
        caches = cache_directory()
        self.addCleanup(shutil.rmtree, caches, ignore_errors=True)
        code, text = harness.run_nereid("--model-repository=" + harness.empty_repo(),
                                        "--cache-directory=" + caches,
                                        "--cache-config=nosuch,size=1")
        self.assertNotEqual(code, 0, text)
        self.assertIn("unable to find 'libtritoncache_nosuch.so' for cache. Searched: " +
                      caches, text)
        code, text = harness.run_nereid("--model-repository=" + harness.empty_repo(),
                                        "--cache-directory=" + caches,
                                        "--cache-config=memo,fail_init=1")
        self.assertNotEqual(code, 0, text)
        self.assertIn("failed to initialize cache 'memo': memo: told to fail", text)


class FlagErrorTest(unittest.TestCase):
    def expect(self, needle, *args):
        code, text = harness.run_nereid("--model-repository=" + harness.empty_repo(), *args)
        self.assertNotEqual(code, 0, text)
        self.assertIn(needle, text)

    def test_errors(self):
        self.expect("Incompatible flags --response-cache-byte-size and --cache-config both "
                    "provided. Please provide one or the other.",
                    "--response-cache-byte-size=12345", "--cache-config=local,size=67890")
        self.expect("found multiple cache configurations, but only a single cache is "
                    "currently supported",
                    "--cache-config=local,size=8192", "--cache-config=redis,key=value")
        self.expect("unable to find 'libtritoncache_redis.so' for cache. Searched: "
                    "/opt/tritonserver/caches", "--cache-config=redis,host=localhost")
        self.expect("No cache specified. --cache-config option format is <cache "
                    "name>,<setting>=<value>. Got size=10", "--cache-config=size=10")
        self.expect("the local cache has no setting 'bytes'", "--cache-config=local,bytes=10")
        self.expect("leaves no room for entries", "--cache-config=local,size=100")


if __name__ == "__main__":
    harness.main()
