"""Issue 15, F9: loads refused for an invalid name ('../models', '/etc',
'simple/1', '.', '..') still appeared in RepositoryIndex, because the
repository made a record for a name before checking it. Invalid names are
now refused (INVALID_ARGUMENT) before any record exists, and names that
never existed leave nothing behind either: tritonserver lists only model
folders and loaded models, and keeps nothing for a load of a name with no
folder, so a client trying many such names cannot make the repository
grow. The repository's records are counted in its verbose log (read
after a marker's line, not as the reader thread last left it: the line of
the last drop could still be on its way: a full run saw 3 for 2 under ASan)."""

import json
import re

import grpc

import harness
from harness import IDENTITY_CONFIG as IDENTITY, ServerTestCase
import grpc_service_pb2 as pb

E = grpc.StatusCode
RPC_TIMEOUT = 30 * harness.SLOW
TRAVERSAL = "model name must not contain path traversal characters"


class RefusedNames(ServerTestCase):
    ARGS = ("--model-control-mode=explicit", "--load-model=simple", "--log-verbose=2")
    marks = 0  # records()' loads so far: each takes a name of its own

    def load(self, name, config=None):
        """A plain load, or one with a config and a file (a model with no
        folder in the repository)."""
        req = pb.RepositoryModelLoadRequest(model_name=name)
        if config is not None:
            req.parameters["config"].string_param = json.dumps(config)
            req.parameters["file:1/dummy.txt"].bytes_param = b"x"
        return self.stub.RepositoryModelLoad(req, timeout=RPC_TIMEOUT)

    def expect_error(self, call, code, *needles):
        with self.assertRaises(grpc.RpcError) as cm:
            call()
        if code is not None:
            self.assertEqual(cm.exception.code(), code, cm.exception.details()[:300])
        for n in needles:
            self.assertIn(n, cm.exception.details())

    def listed(self):
        models = self.stub.RepositoryIndex(pb.RepositoryIndexRequest(),
                                           timeout=RPC_TIMEOUT).models
        return sorted(set(m.name for m in models))

    def records(self):
        """The repository's record count at rest. A load of a name with no
        folder makes a record and drops it again; once the log shows that
        drop, every line the repository wrote before it has come through
        the harness's reader thread, and the drop's count is the count."""
        RefusedNames.marks += 1
        name = "count_mark_%d" % RefusedNames.marks
        self.expect_error(lambda: self.load(name), E.INTERNAL, name)
        dropped = "repository: record of '%s' dropped, " % name
        self.assertTrue(self.server.wait_text(dropped), "no drop line for " + name)
        return int(re.search(re.escape(dropped) + r"(\d+) in all", self.server.text()).group(1))

    def test_invalid_names_are_refused_and_never_listed(self):
        cases = [("../models", TRAVERSAL), ("/etc", TRAVERSAL), ("simple/1", TRAVERSAL),
                 ("..", TRAVERSAL), ("a..b", TRAVERSAL), (".", "must not start with '.'"),
                 (".hidden", "must not start with '.'"),
                 (" \t", "must not contain only whitespace"),
                 ("x" * 256, "at most 255 bytes"), ("x" * (1 << 20), "at most 255 bytes"),
                 ("simple\0junk", "NUL")]
        before = self.listed()
        for name, why in cases:
            self.expect_error(lambda: self.load(name), E.INVALID_ARGUMENT, why)
            self.expect_error(lambda: self.load(name, config=IDENTITY), E.INVALID_ARGUMENT,
                              why)
        self.assertEqual(self.listed(), before)
        # An unload of a name no model has is done at once, as tritonserver.
        for name, _ in cases:
            self.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(
                model_name=name), timeout=RPC_TIMEOUT)
        self.assertEqual(self.listed(), before)
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name="simple"),
                                             timeout=RPC_TIMEOUT).ready)

    def test_names_that_never_existed_leave_nothing(self):
        before, listed = self.records(), self.listed()
        for i in range(100):
            self.expect_error(lambda: self.load("nosuch_%d" % i), E.INTERNAL,
                              "nosuch_%d" % i)
            self.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(
                model_name="gone_%d" % i), timeout=RPC_TIMEOUT)
        self.assertEqual(self.records(), before)
        self.assertEqual(self.listed(), listed)

    def test_failed_override_of_a_new_name_is_not_listed(self):
        broken = dict(IDENTITY, backend="nosuch_backend")
        self.expect_error(lambda: self.load("ghost", config=broken), None,
                          "nosuch_backend")
        self.assertNotIn("ghost", self.listed())
        # Nor once a model of that name was loaded: the index lists the
        # folders of the repositories, as Triton's, and "ghost" has none.
        self.load("ghost", config=IDENTITY)
        self.assertNotIn("ghost", self.listed())
        self.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(
            model_name="ghost"), timeout=RPC_TIMEOUT)
        self.expect_error(lambda: self.load("ghost", config=broken), None)
        self.assertNotIn("ghost", self.listed())


if __name__ == "__main__":
    harness.main()
