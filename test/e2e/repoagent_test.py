"""End to end: repository agents (TRITONREPOAGENT API) with the test
agents of test/repoagents (`checksum` and `relocate`, one library each):
a load that passes, a LOAD that fails the model's load with the agent's
message, a model an agent moves to a folder of its own and that loads from
there, the order of actions across load and unload, a missing agent
library, and --repoagent-directory itself."""

import os
import time
import unittest

import grpc

import harness
from harness import Server, stop_clean
import grpc_service_pb2_grpc as pb_grpc
from model_control_test import ControlTest, records, tmpdir

AGENTS = os.path.abspath("test/repoagents")

CONFIG = """name: "%s"
backend: "addsub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
model_repository_agents { agents [ %s ] }
"""


def agent_text(name, params):
    return '{ name: "%s" %s }' % (name, " ".join(
        'parameters { key: "%s" value: "%s" }' % kv for kv in params))


def add_model(repo, name, agents, version=True, files=None):
    folder = os.path.join(repo, name)
    os.makedirs(folder)
    if version:
        os.makedirs(os.path.join(folder, "1"))
    with open(os.path.join(folder, "config.pbtxt"), "w") as f:
        f.write(CONFIG % (name, ", ".join(agents)))
    for path, text in (files or {}).items():
        with open(os.path.join(folder, path), "w") as f:
            f.write(text)
    return folder


class RepoAgentTest(ControlTest):
    def setUp(self):
        self.repo = tmpdir("repo")
        self.record = os.path.join(tmpdir("rec"), "actions.log")
        self.server = None

    def tearDown(self):
        if self.server is not None:
            stop_clean(self.server)

    def start(self, *args):
        self.server = Server("--model-control-mode=explicit", *args, repo=self.repo)
        self.stub = pb_grpc.GRPCInferenceServiceStub(self.server.connect())

    def load_error(self, name):
        return self.expect_error(lambda: self.load(name), grpc.StatusCode.INVALID_ARGUMENT)

    def wait_record(self, n):
        deadline = time.monotonic() + 10 * harness.SLOW
        while len(records(self.record)) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        return records(self.record)

    def test_checksum_ok_and_action_order(self):
        folder = add_model(self.repo, "m", [agent_text("checksum", [
            ("record", self.record), ("expect:data.txt", "abc")])], files={"data.txt": "abc"})
        self.start("--repoagent-directory=" + AGENTS)
        self.load("m")
        self.assertTrue(self.ready("m"))
        self.unload("m")
        got = self.wait_record(4)
        self.assertEqual([l[:2] for l in got], [
            ["checksum", "LOAD"], ["checksum", "LOAD_COMPLETE"],
            ["checksum", "UNLOAD"], ["checksum", "UNLOAD_COMPLETE"]])
        self.assertEqual({l[2] for l in got}, {folder})

    def test_checksum_mismatch_fails_the_load(self):
        add_model(self.repo, "m", [agent_text("checksum", [
            ("record", self.record), ("expect:data.txt", "abc")])], files={"data.txt": "abd"})
        self.start("--repoagent-directory=" + AGENTS)
        self.assertIn("checksum mismatch for 'data.txt'", self.load_error("m"))
        self.assertFalse(self.ready("m"))
        self.assertEqual([l[:2] for l in self.wait_record(2)],
                         [["checksum", "LOAD"], ["checksum", "LOAD_FAIL"]])

    def test_relocated_model_loads_from_the_new_folder(self):
        # No version folder here: only the relocated copy (which has one)
        # can load; the checksum agent after it sees the copy.
        add_model(self.repo, "m", [
            agent_text("relocate", [("record", self.record), ("relocate", "moved")]),
            agent_text("checksum", [("record", self.record), ("expect:relocated", "moved")]),
        ], version=False)
        self.start("--repoagent-directory=" + AGENTS)
        self.load("m")
        self.assertTrue(self.ready("m"))
        self.unload("m")
        got = self.wait_record(8)
        self.assertEqual([l[:2] for l in got], [
            ["relocate", "LOAD"], ["checksum", "LOAD"],
            ["checksum", "LOAD_COMPLETE"], ["relocate", "LOAD_COMPLETE"],
            ["relocate", "UNLOAD"], ["checksum", "UNLOAD"],
            ["checksum", "UNLOAD_COMPLETE"], ["relocate", "UNLOAD_COMPLETE"]])
        moved = got[1][2]
        self.assertIn("nereid-model-", moved)
        # The acquired folder goes with the agent's model (just after its
        # UNLOAD_COMPLETE line).
        deadline = time.monotonic() + 10 * harness.SLOW
        while os.path.exists(moved) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(os.path.exists(moved))

    def test_missing_agent_fails_the_load(self):
        add_model(self.repo, "m", [agent_text("nosuch", [("record", self.record)])])
        self.start("--repoagent-directory=" + AGENTS)
        self.assertIn("unable to find 'libtritonrepoagent_nosuch.so' for repo agent "
                      "'nosuch', searched: " + AGENTS, self.load_error("m"))

    def test_directory_flag_is_honoured(self):
        add_model(self.repo, "m", [agent_text("checksum", [("record", self.record)])])
        empty = tmpdir("agents")
        self.start("--repoagent-directory=" + empty)
        self.assertIn("searched: " + empty, self.load_error("m"))


if __name__ == "__main__":
    unittest.main()
