"""End to end: the logging extension (LogSettings over gRPC, GET/POST
/v2/logging over HTTP) with Triton's keys and texts, changed at run time and
seen in the log itself; the --log-* flags; --log-file, which the network may
not move; `nereid --version`."""

import os
import re
import time
import unittest

import grpc
import requests

import harness
from harness import Server, run_nereid
import grpc_service_pb2 as pb

DEFAULTS = {"log_file": "", "log_info": True, "log_warning": True, "log_error": True,
            "log_verbose_level": 0, "log_format": "default"}
ISO_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ I \d+ call\.c:\d+\] "
                      r"ModelMetadata failed: .*'marker_(\w+)'", re.M)
DEFAULT_LINE = re.compile(r"^I\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ call\.c:\d+\] "
                          r"ModelMetadata failed: .*'marker_(\w+)'", re.M)


def settings_of(reply):
    out = {}
    for key, value in reply.settings.items():
        out[key] = getattr(value, value.WhichOneof("parameter_choice"))
    return out


def log_request(**settings):
    req = pb.LogSettingsRequest()
    for key, value in settings.items():
        if isinstance(value, bool):
            req.settings[key].bool_param = value
        elif isinstance(value, int):
            req.settings[key].uint32_param = value
        else:
            req.settings[key].string_param = value
    return req


class LogSettings(harness.ServerTestCase):
    ARGS = ("--model-control-mode=explicit",)
    REPO = harness.EXAMPLES

    def setUp(self):
        # Every test starts from the defaults.
        requests.post(self.server.http_url + "/v2/logging", json={
            k: v for k, v in DEFAULTS.items() if k != "log_file"}, timeout=10)

    def logging(self, **settings):
        return settings_of(self.stub.LogSettings(log_request(**settings), timeout=10))

    def marker(self, name):
        """A ModelMetadata call that fails: a verbose-1 line naming it."""
        with self.assertRaises(grpc.RpcError):
            self.stub.ModelMetadata(pb.ModelMetadataRequest(name="marker_" + name),
                                    timeout=10)

    def test_grpc_reads_and_changes(self):
        self.assertEqual(self.logging(), DEFAULTS)
        self.assertEqual(self.logging(log_verbose_level=1, log_warning=False),
                         dict(DEFAULTS, log_verbose_level=1, log_warning=False))
        # HTTP sees what gRPC set: one log.
        r = requests.get(self.server.http_url + "/v2/logging", timeout=10)
        self.assertEqual(r.json(), dict(DEFAULTS, log_verbose_level=1, log_warning=False))

    def test_verbose_level_and_format_apply_at_run_time(self):
        self.marker("quiet")
        self.logging(log_verbose_level=1)
        self.marker("loud")
        r = requests.post(self.server.http_url + "/v2/logging",
                          json={"log_format": "ISO8601"}, timeout=10)
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.json()["log_format"], "ISO8601")
        self.marker("iso")
        self.assertTrue(self.server.wait_text("marker_iso"))
        text = self.server.text()
        self.assertEqual(DEFAULT_LINE.findall(text), ["loud"])
        self.assertEqual(ISO_LINE.findall(text), ["iso"])

    def test_info_switch(self):
        def load_unload():
            self.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(
                model_name="simple"), timeout=30)
            self.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(
                model_name="simple"), timeout=30)
        before = self.server.text().count("successfully loaded 'simple'")
        self.logging(log_info=False)
        load_unload()
        self.logging(log_info=True)
        load_unload()
        self.assertTrue(self.server.wait_text("successfully unloaded 'simple'"))
        time.sleep(0.2 * harness.SLOW)
        self.assertEqual(self.server.text().count("successfully loaded 'simple'"),
                         before + 1)

    def test_grpc_bad_values_change_nothing(self):
        cases = [
            (dict(log_info="yes"), "expect boolean for 'log_info'"),
            (dict(log_warning=3), "expect boolean for 'log_warning'"),
            (dict(log_verbose_level=True), "expect int32 for 'log_verbose_level'"),
            (dict(log_format=True), "expect string for 'log_format'"),
            (dict(log_format="xml"), "invalid argument for log_format, got: xml"),
        ]
        for settings, message in cases:
            req = log_request(log_error=False, **settings)
            with self.assertRaises(grpc.RpcError) as cm:
                self.stub.LogSettings(req, timeout=10)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertEqual(cm.exception.details(), message)
        # What Triton's Python client sends for None: a key with no value.
        req = pb.LogSettingsRequest()
        req.settings["log_info"]
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.LogSettings(req, timeout=10)
        self.assertEqual(cm.exception.details(), "expect boolean for 'log_info'")
        self.assertEqual(self.logging(), DEFAULTS)

    def test_the_network_cannot_move_the_log(self):
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.LogSettings(log_request(log_file="/tmp/owned.log"), timeout=10)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
        self.assertEqual(cm.exception.details(),
                         "log file location can not be updated through network protocol")
        r = requests.post(self.server.http_url + "/v2/logging",
                          json={"log_file": "/tmp/owned.log"}, timeout=10)
        self.assertEqual(r.status_code, 501)
        self.assertFalse(os.path.exists("/tmp/owned.log"))

    def test_http_bad_values(self):
        url = self.server.http_url + "/v2/logging"
        cases = [
            ({"log_info": "false"}, "attempt to access JSON non-boolean as boolean"),
            ({"log_verbose_level": -1},
             "attempt to access JSON non-unsigned-integer as unsigned-integer"),
            ({"log_format": "iso"}, "invalid argument for --log_format, got: iso"),
        ]
        for body, message in cases:
            r = requests.post(url, json=dict(body, log_error=False), timeout=10)
            self.assertEqual(r.status_code, 400)
            self.assertEqual(r.json(), {"error": message})
        r = requests.put(url, data="{}", timeout=10)
        self.assertEqual(r.status_code, 405)
        self.assertEqual(requests.get(url, timeout=10).json(), DEFAULTS)


class LogFlags(unittest.TestCase):
    def test_log_file_and_format_flags(self):
        path = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "nereid.log")
        if os.path.exists(path):
            os.unlink(path)
        server = Server("--log-file=" + path, "--log-format=ISO8601",
                        "--log-verbose=1", expect_start=False)
        try:
            port = None
            deadline = time.monotonic() + 30 * harness.SLOW
            while port is None and time.monotonic() < deadline:
                time.sleep(0.05)
                if os.path.exists(path):
                    m = re.search(r"Started GRPCInferenceService at \S+:(\d+)",
                                  open(path).read())
                    port = m and int(m.group(1))
            self.assertIsNotNone(port, server.text())
            text = open(path).read()
            self.assertRegex(text, r"(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ I \d+ "
                                   r"nereid_main\.c:\d+\] nereid \S+ starting "
                                   r"\(answers as triton 2\.\d+\.\d+\)$")
            # Nothing went to stderr.
            self.assertNotIn("Started GRPCInferenceService", server.text())
            server.port = port
            reply = server.inference().LogSettings(pb.LogSettingsRequest(), timeout=10)
            self.assertEqual(settings_of(reply),
                             dict(DEFAULTS, log_file=path, log_format="ISO8601",
                                  log_verbose_level=1))
        finally:
            server.stop()

    def test_bad_flags(self):
        code, out = run_nereid("--model-repository=/", "--log-format=json")
        self.assertNotEqual(code, 0)
        self.assertIn("invalid argument for --log-format, got: json", out)
        code, out = run_nereid("--model-repository=/", "--log-file=/no/such/dir/x.log")
        self.assertNotEqual(code, 0)
        self.assertIn("failed to open log file '/no/such/dir/x.log'", out)

    def test_version(self):
        code, out = run_nereid("--version")
        self.assertEqual(code, 0)
        self.assertRegex(out, r"^nereid \d+\.\d+\.\d+ \(answers as triton 2\.\d+\.\d+: "
                              r"TRITONSERVER API 1\.\d+, TRITONBACKEND API 1\.\d+\)\n$")


if __name__ == "__main__":
    harness.main()
