"""Issue 15, F10: names a client sent were echoed whole into error messages
(100 MB in, 100 MB back in the grpc-message trailer, which clients refuse
past 8 KiB). A message now quotes a client's string up to 200 bytes, then
"...", and no status message exceeds 2048 bytes, cut on a UTF-8 character
boundary. Names of a few MB stand for the 100 MB of the report."""

import grpc

import harness
from harness import ServerTestCase, simple_request
import grpc_service_pb2 as pb
import health_pb2

E = grpc.StatusCode
RPC_TIMEOUT = 30 * harness.SLOW
MESSAGE_MAX = 2048  # SRV_STATUS_MESSAGE_MAX
QUOTE_MAX = 200  # SRV_QUOTE_MAX
HUGE = 4 << 20


class EchoedInput(ServerTestCase):
    ARGS = ("--model-control-mode=explicit", "--load-model=simple")

    def expect_bounded(self, call, code, *needles):
        with self.assertRaises(grpc.RpcError) as cm:
            call()
        details = cm.exception.details()
        self.assertEqual(cm.exception.code(), code, details[:300])
        self.assertLessEqual(len(details.encode()), MESSAGE_MAX, details[:300])
        for n in needles:
            self.assertIn(n, details)
        return details

    def still_serving(self):
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name="simple"),
                                             timeout=RPC_TIMEOUT).ready)
        self.stub.ModelInfer(simple_request("simple"), timeout=RPC_TIMEOUT)

    def test_unknown_model_name_is_quoted(self):
        name = "m" * HUGE
        quoted = "'%s...'" % name[:QUOTE_MAX]
        unknown = "Request for unknown model: " + quoted + " is not found"
        self.expect_bounded(lambda: self.stub.ModelInfer(simple_request(name),
                                                         timeout=RPC_TIMEOUT),
                            E.UNAVAILABLE, unknown)
        for rpc, req in ((self.stub.ModelMetadata, pb.ModelMetadataRequest(name=name)),
                         (self.stub.ModelConfig, pb.ModelConfigRequest(name=name))):
            self.expect_bounded(lambda: rpc(req, timeout=RPC_TIMEOUT), E.UNAVAILABLE,
                                unknown)
        self.assertFalse(self.stub.ModelReady(pb.ModelReadyRequest(name=name),
                                              timeout=RPC_TIMEOUT).ready)
        replies = list(self.stub.ModelStreamInfer(iter([simple_request(name)]),
                                                  timeout=RPC_TIMEOUT))
        self.assertEqual(len(replies), 1)
        self.assertLessEqual(len(replies[0].error_message), MESSAGE_MAX)
        self.assertIn(unknown, replies[0].error_message)
        self.still_serving()

    def test_other_client_strings_are_quoted(self):
        v = "7" * HUGE
        self.expect_bounded(lambda: self.stub.ModelMetadata(
            pb.ModelMetadataRequest(name="simple", version=v + "x"), timeout=RPC_TIMEOUT),
            E.INVALID_ARGUMENT, "version string '%s...'" % v[:QUOTE_MAX])
        tensor = "t" * HUGE
        self.expect_bounded(lambda: self.stub.ModelInfer(
            simple_request(input0=tensor), timeout=RPC_TIMEOUT),
            E.INVALID_ARGUMENT, "input '%s...'" % tensor[:QUOTE_MAX])
        health = self.server.health()
        self.expect_bounded(lambda: health.Check(
            health_pb2.HealthCheckRequest(service="s" * HUGE), timeout=RPC_TIMEOUT),
            E.NOT_FOUND, "'%s...'" % ("s" * QUOTE_MAX))
        load = pb.RepositoryModelLoadRequest(model_name="simple")
        load.parameters["p" * HUGE].string_param = "x"
        self.expect_bounded(lambda: self.stub.RepositoryModelLoad(
            load, timeout=RPC_TIMEOUT), E.INVALID_ARGUMENT,
            "unrecognized load parameter '%s...'" % ("p" * QUOTE_MAX))
        self.still_serving()

    def test_cuts_keep_utf8_characters_whole(self):
        # Two-byte characters: a cut at an odd byte would split one, and the
        # client would no longer read the message as UTF-8.
        for prefix in ("", "a"):
            name = prefix + "\u00e9" * (HUGE // 2)
            quote = name.encode()[:QUOTE_MAX].decode(errors="ignore")
            details = self.expect_bounded(
                lambda: self.stub.ModelInfer(simple_request(name), timeout=RPC_TIMEOUT),
                E.UNAVAILABLE, "'%s...'" % quote)
            self.assertNotIn("\ufffd", details)
        self.still_serving()


if __name__ == "__main__":
    harness.main()
