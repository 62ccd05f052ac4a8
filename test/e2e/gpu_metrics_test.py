"""GPU metrics on /metrics from a stand-in NVML (test/nvml_mock, first on
LD_LIBRARY_PATH) with two GPUs of known values: tritonserver's families,
gpu_uuid labels and values, parsed by prometheus_client;
--allow-gpu-metrics=false and a host without NVML leave them out, with no
error."""

import ctypes
import os
import re
import time
import unittest

import requests
from prometheus_client.parser import text_string_to_metric_families

import harness

MOCK_LIB = os.path.abspath("test/nvml_mock/lib")
UUID0 = "GPU-00000000-1111-2222-3333-444444444444"
UUID1 = "GPU-55555555-6666-7777-8888-999999999999"
GPU_FAMILIES = ("nv_gpu_utilization", "nv_gpu_memory_total_bytes",
                "nv_gpu_memory_used_bytes", "nv_gpu_power_usage", "nv_gpu_power_limit",
                "nv_energy_consumption")


def host_has_nvml():
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        return True
    except OSError:
        return False


class GpuMetricsCase(unittest.TestCase):
    FLAGS = ()
    ENV = {"LD_LIBRARY_PATH": MOCK_LIB}

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server("--metrics-interval-ms=100", *cls.FLAGS, env=cls.ENV)

    @classmethod
    def tearDownClass(cls):
        harness.stop_clean(cls.server)

    def scrape(self):
        """{family: (type, {labels: value})} of the page."""
        self.assertTrue(self.server.wait_text("Started Metrics Service at"))
        port = int(re.search(r"Started Metrics Service at \S+:(\d+)",
                             self.server.text()).group(1))
        r = requests.get("http://127.0.0.1:%d/metrics" % port, timeout=10)
        self.assertEqual(r.status_code, 200)
        page = {}
        for f in text_string_to_metric_families(r.text):
            page[f.name] = (f.type, f.documentation,
                            {tuple(sorted(s.labels.items())): s.value for s in f.samples})
        return page


class GpuMetricsTest(GpuMetricsCase):
    def test_families_labels_values(self):
        page = self.scrape()
        l0, l1 = (("gpu_uuid", UUID0),), (("gpu_uuid", UUID1),)
        want = {
            "nv_gpu_utilization": ("gauge", "GPU utilization rate [0.0 - 1.0)",
                                   {l0: 0.42, l1: 0.07}),
            "nv_gpu_memory_total_bytes": ("gauge", "GPU total memory, in bytes",
                                          {l0: 85899345920, l1: 17179869184}),
            "nv_gpu_memory_used_bytes": ("gauge", "GPU used memory, in bytes",
                                         {l0: 1073741824, l1: 2147483648}),
            "nv_gpu_power_usage": ("gauge", "GPU power usage in watts",
                                   {l0: 123.456, l1: 50}),
            "nv_gpu_power_limit": ("gauge", "GPU power management limit in watts",
                                   {l0: 700, l1: 300}),
        }
        for name, w in want.items():
            self.assertEqual(page[name], w, name)
        kind, help_, values = page["nv_energy_consumption"]
        self.assertEqual(kind, "counter")
        self.assertEqual(help_, "GPU energy consumption in joules since the Triton Server started")
        self.assertEqual(set(values), {l0, l1})

    def test_energy_grows_with_samples(self):
        before = self.scrape()["nv_energy_consumption"][2][(("gpu_uuid", UUID0),)]
        time.sleep(0.15)  # past --metrics-interval-ms: the next scrape samples
        after = self.scrape()["nv_energy_consumption"][2][(("gpu_uuid", UUID0),)]
        self.assertGreater(after, before)


class GpuMetricsOffTest(GpuMetricsCase):
    FLAGS = ("--allow-gpu-metrics=false",)

    def test_no_gpu_families(self):
        page = self.scrape()
        self.assertIn("nv_cpu_utilization", page)
        for name in GPU_FAMILIES:
            self.assertNotIn(name, page)


@unittest.skipIf(host_has_nvml(), "this host has a real NVML")
class NoNvmlTest(GpuMetricsCase):
    FLAGS = ("--log-verbose=1",)
    ENV = {}

    def test_no_gpu_families_no_error(self):
        page = self.scrape()
        self.assertIn("nv_cpu_utilization", page)
        for name in GPU_FAMILIES:
            self.assertNotIn(name, page)
        self.assertTrue(self.server.wait_text("GPU metrics off: no NVML"))
        self.assertNotRegex(self.server.text(), r"(?m)^E")


if __name__ == "__main__":
    harness.main()
