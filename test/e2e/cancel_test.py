"""Client cancels and gRPC deadlines reaching the model: a request that
still waits in the queue is dropped (counted as failed, never executed);
one that runs is marked cancelled, which the recorder backend polls for."""

import os
import time

import grpc

import harness
import grpc_service_pb2 as pb
from batching_test import RecorderCase, request


class Cancel(RecorderCase):

    def lines(self, event):
        with open(os.path.join(self.dir, "slow.log")) as f:
            return [line for line in f if line.startswith(event + " ")]

    def executed(self, rid):
        return any(rid in line.split("ids=")[1].split()[0].split(",")
                   for line in self.lines("execute_start"))

    def stats(self):
        s = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name="slow"))
        return s.model_stats[0].inference_stats

    def wait_for(self, cond, secs=5):
        end = time.monotonic() + secs * harness.SLOW
        while time.monotonic() < end:
            if cond():
                return True
            time.sleep(0.01)
        return cond()

    def queued_then_dropped(self, rid, leave):
        before = self.stats()
        blocker = self.stub.ModelInfer.future(request("slow", rid + "-blocker"), timeout=10)
        time.sleep(0.05)
        leave(rid)
        blocker.result()
        time.sleep(0.35)  # time enough to run it, had it stayed
        self.assertFalse(self.executed(rid))
        after = self.stats()
        self.assertEqual(after.fail.count - before.fail.count, 1)
        self.assertEqual(after.success.count - before.success.count, 1)

    def test_deadline_while_queued(self):
        def leave(rid):
            with self.assertRaises(grpc.RpcError) as e:
                self.stub.ModelInfer(request("slow", rid), timeout=0.1)
            self.assertEqual(e.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        self.queued_then_dropped("deadline-queued", leave)

    def test_client_cancel_while_queued(self):
        def leave(rid):
            f = self.stub.ModelInfer.future(request("slow", rid), timeout=10)
            time.sleep(0.05)
            self.assertTrue(f.cancel())
        self.queued_then_dropped("cancel-queued", leave)

    def test_deadline_while_executing(self):
        with self.assertRaises(grpc.RpcError) as e:
            self.stub.ModelInfer(request("slow", "deadline-running"), timeout=0.1)
        self.assertEqual(e.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertTrue(self.wait_for(lambda: any(
            "id=deadline-running " in line for line in self.lines("cancelled"))))

    def test_many_cancels_leave_server_healthy(self):
        futures = [self.stub.ModelInfer.future(request("slow", "storm%d" % i),
                                               timeout=0.02 + 0.01 * (i % 30))
                   for i in range(200)]
        for f in futures:
            with self.assertRaises(grpc.RpcError):
                f.result()
        r = self.stub.ModelInfer(request("slow", "after", 7), timeout=10)
        self.assertEqual(r.id, "after")


if __name__ == "__main__":
    harness.main()
