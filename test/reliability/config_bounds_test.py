"""Issue 15, F3: config values that sized memory, threads or work without
bound.

`dynamic_batching { priority_levels: 50000000 }` took 2.7 GB in two seconds,
`instance_group { count: 2000 }` started 2,000 threads, a config with 100k
inputs took ~30 s to refuse (a quadratic duplicate check), a huge
max_batch_size made statistics allocate and walk one entry per batch size,
and a queue delay near 2^64 ns wrapped the batcher's deadline. Now every
such field has a bound (the README's "Limits" table): past it the load is
refused with INVALID_ARGUMENT naming the model, the file ("config
override" or the config.pbtxt path), the field and the limit, at once and
without the memory or threads it would have taken; the server goes on
serving. max_batch_size keeps Triton's range: what it sized is now sized by
the batches that really run.
"""

import json
import os
import time
import unittest

import grpc
import numpy as np

import harness
from harness import Server
import grpc_service_pb2 as pb
from reliability import (RPC_TIMEOUT, check_simple, load_request, repo_with_simple,
                         stop_clean)

E = grpc.StatusCode
MiB = 1 << 20


def tensor(name, dims=(-1,)):
    return {"name": name, "data_type": "TYPE_INT32", "dims": list(dims)}


def identity_config(**fields):
    """The identity model (OUTPUT0 = INPUT0), with fields added or replaced."""
    cfg = {"backend": "identity", "max_batch_size": 8,
           "input": [tensor("INPUT0")], "output": [tensor("OUTPUT0")],
           "instance_group": [{"kind": "KIND_CPU"}]}
    cfg.update(fields)
    return cfg


def proc_status(pid, key):
    """A number from /proc/<pid>/status (VmRSS in kB, Threads)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%d/status" % (key, pid))


class ConfigBounds(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        repo = repo_with_simple("victim", "big_batch", "big_file")
        # Just past the limit on config text: a long comment keeps it valid.
        cls.big_file = os.path.join(repo, "big_file", "config.pbtxt")
        with open(cls.big_file, "w") as f:
            f.write('backend: "identity"\n' + ("#" * 1023 + "\n") * (MiB // 1024))
        cls.server = Server("--model-control-mode=explicit", "--load-model=simple",
                            repo=repo)
        cls.stub = cls.server.inference()
        cls.pid = cls.server.proc.pid

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.server)

    def load(self, name, config=None):
        return self.stub.RepositoryModelLoad(load_request(name, config),
                                             timeout=RPC_TIMEOUT)

    def refused(self, config, *needles, name="victim"):
        """Loads `config` as an override of `name`; expects INVALID_ARGUMENT
        whose text holds every needle, quickly, and a server still serving."""
        start = time.monotonic()
        with self.assertRaises(grpc.RpcError) as cm:
            self.load(name, config)
        self.assertLess(time.monotonic() - start, 5 * harness.SLOW)
        self.assertEqual(cm.exception.code(), E.INVALID_ARGUMENT, cm.exception.details())
        for needle in needles:
            self.assertIn(needle, cm.exception.details())
        self.still_serving()
        return cm.exception.details()

    def still_serving(self):
        check_simple(self.stub)

    # ---- memory and threads --------------------------------------------------

    def test_priority_levels(self):
        rss = proc_status(self.pid, "VmRSS")
        self.refused(identity_config(dynamic_batching={
            "priority_levels": 50000000, "default_priority_level": 1}),
            "model 'victim': config override: 'dynamic_batching.priority_levels' is "
            "50000000, above the limit of 4096")
        self.assertLess(proc_status(self.pid, "VmRSS") - rss, 64 * 1024)

    def test_default_priority_level_is_not_narrowed(self):
        # 2^32 + 1 once passed as level 1 of 4.
        self.refused(identity_config(dynamic_batching={
            "priority_levels": 4, "default_priority_level": 2**32 + 1}),
            "default_priority_level 4294967297 must be in [1, priority_levels 4]")

    def test_instance_count(self):
        threads = proc_status(self.pid, "Threads")
        self.refused(identity_config(instance_group=[{"kind": "KIND_CPU", "count": 2000}]),
                     "model 'victim': config override: 'instance_group[0].count' is "
                     "2000, above the limit of 1024 instances per model version")
        self.assertLessEqual(proc_status(self.pid, "Threads"), threads + 2)

    def test_large_max_batch_size_loads_and_stays_small(self):
        # Triton's range: any int32 >= 0 (real configs use 1048576 and
        # more). Statistics and batch arrays grow with the batches that run,
        # not with the setting: once they took 56 bytes per batch size up
        # front, 5.6 GB of address space here.
        rss, vm = proc_status(self.pid, "VmRSS"), proc_status(self.pid, "VmSize")
        self.load("big_batch", identity_config(max_batch_size=100000000))
        req = pb.ModelInferRequest(model_name="big_batch")
        t = req.inputs.add()
        t.name, t.datatype = "INPUT0", "INT32"
        t.shape.extend([3, 2])
        req.raw_input_contents.append(np.arange(6, dtype=np.int32).tobytes())
        self.stub.ModelInfer(req, timeout=RPC_TIMEOUT)
        # The backend reports its batch after it responds: ask until it shows.
        deadline = time.monotonic() + 10 * harness.SLOW
        while True:
            start = time.monotonic()
            stats = self.stub.ModelStatistics(
                pb.ModelStatisticsRequest(name="big_batch"), timeout=RPC_TIMEOUT)
            self.assertLess(time.monotonic() - start, 5 * harness.SLOW)
            sizes = [b.batch_size for b in stats.model_stats[0].batch_stats]
            if sizes or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(sizes, [3])
        self.assertLess(proc_status(self.pid, "VmRSS") - rss, 64 * 1024)
        self.assertLess(proc_status(self.pid, "VmSize") - vm, 1024 * 1024)

    # ---- list lengths, ranks, names ----------------------------------------------

    def test_hundred_thousand_inputs(self):
        inputs = [tensor("INPUT%d" % i, (1,)) for i in range(100000)]
        self.refused(identity_config(input=inputs),
                     "failed to load 'victim': config override: ",
                     "bytes, above the limit of 1048576")

    def test_input_count(self):
        inputs = [{"name": "I%d" % i} for i in range(5000)]
        self.refused(identity_config(input=inputs),
                     "model 'victim': config override: 'input' has 5000 entries, above "
                     "the limit of 4096")

    def test_dims_count(self):
        self.refused(identity_config(input=[tensor("INPUT0", [1] * 65)]),
                     "'input[0].dims' has 65 entries, above the limit of 64")

    def test_name_length(self):
        self.refused(identity_config(output=[tensor("O" * 2000)]),
                     "'output[0].name' is 2000 bytes long, above the limit of 1024")

    def test_lists_of_schedulers_not_built_yet(self):
        states = [{"input_name": "S%d" % i, "output_name": "T%d" % i}
                  for i in range(5000)]
        cfg = identity_config(sequence_batching={"state": states})
        self.refused(cfg, "'sequence_batching.state' has 5000 entries, above the "
                          "limit of 4096")
        steps = [{"model_name": "m"}] * 4097
        self.refused(identity_config(ensemble_scheduling={"step": steps}),
                     "'ensemble_scheduling.step' has 4097 entries")

    def test_parameters_and_versions(self):
        params = {"p%d" % i: {"string_value": "x"} for i in range(5000)}
        self.refused(identity_config(parameters=params),
                     "'parameters' has 5000 entries, above the limit of 4096")
        versions = list(range(1, 5001))
        self.refused(identity_config(version_policy={"specific": {"versions": versions}}),
                     "'version_policy.specific.versions' has 5000 entries")

    def test_specific_versions_within_the_limit(self):
        # Found by binary search among the version folders, in any order.
        files = {"%d/x" % v: b"" for v in (1, 2, 3, 10)}
        req = load_request("versions", identity_config(
            version_policy={"specific": {"versions": [10, 7, 1, 1, 3]}}))
        for path, data in files.items():
            req.parameters["file:" + path].bytes_param = data
        self.stub.RepositoryModelLoad(req, timeout=RPC_TIMEOUT)
        # (The index lists folders of the repositories; this model has none.)
        ready = [v for v in ("1", "2", "3", "7", "10")
                 if self.stub.ModelReady(pb.ModelReadyRequest(name="versions", version=v),
                                         timeout=RPC_TIMEOUT).ready]
        self.assertEqual(ready, ["1", "3", "10"])
        self.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(
            model_name="versions"), timeout=RPC_TIMEOUT)

    # ---- durations ------------------------------------------------------------

    def test_microseconds(self):
        # Past 2^64 ns: the batcher's deadline once wrapped into the past.
        # (2^55: JSON numbers reach the server through a double.)
        self.refused(identity_config(dynamic_batching={
            "max_queue_delay_microseconds": 2**55}),
            "'dynamic_batching.max_queue_delay_microseconds' is 36028797018963968, "
            "above the limit of 31536000000000 (365 days)")
        self.refused(identity_config(dynamic_batching={
            "priority_levels": 2, "default_priority_level": 1,
            "priority_queue_policy": {"2": {"default_timeout_microseconds": 2**63}}}),
            "'dynamic_batching.priority_queue_policy[2].default_timeout_microseconds' "
            "is 9223372036854775808, above the limit of 31536000000000")

    # ---- config text, and Triton's rule on gpus ----------------------------------

    def test_config_pbtxt_size(self):
        self.refused(None, "%s: the file is larger than the limit of 1048576 bytes"
                     % self.big_file, name="big_file")

    def test_override_size(self):
        text = json.dumps(identity_config(parameters={"p": {"string_value": "x" * MiB}}))
        self.refused(text, "failed to load 'victim': config override: %d bytes, above "
                     "the limit of 1048576" % len(text))

    def test_gpus_only_for_gpu_groups(self):
        self.refused(identity_config(instance_group=[{"kind": "KIND_CPU", "gpus": [0]}]),
                     "model 'victim': instance group 'victim' is KIND_CPU but lists "
                     "GPUs in 'gpus'; only KIND_GPU groups may")
        # KIND_AUTO listing a GPU the server lacks is KIND_CPU, as Triton.
        self.refused(identity_config(instance_group=[{"gpus": [99]}]), "is KIND_CPU")


if __name__ == "__main__":
    harness.main()
