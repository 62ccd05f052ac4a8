"""Nereid's soak and fault program (issue 15): drives one server for a set
time with mixed traffic, faults and repository churn from worker threads,
then checks that it never crashed, that every call was answered, that its
RSS stayed within bounds, that it stops clean on SIGTERM and that its log
holds no sanitizer report. Prints a summary; exits 1 on any failure.

Run by tools/soak/soak (which builds the server); see tools/soak/README.md."""

import argparse
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import traceback

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--duration", type=float, default=60, help="seconds of traffic")
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--mode", choices=("explicit", "poll"), default="explicit",
                    help="model control mode, and with it how the churn works")
parser.add_argument("--workers", type=int, default=8, help="client threads")
parser.add_argument("--stop", choices=("quiet", "busy"), default="quiet",
                    help="quiet: SIGTERM once every call has ended; busy: SIGTERM while "
                         "the traffic goes on (any answer then, but every call answered)")
parser.add_argument("--slow", type=float, default=1.0,
                    help="deadline factor for slow builds (asan 4, tsan 6)")
parser.add_argument("--label", default="default", help="the build, for the summary")
parser.add_argument("--nereid", required=True)
parser.add_argument("--stubs", required=True, help="folder of grpc_service_pb2.py")
parser.add_argument("--backends", required=True, help="built-in backends folder")
parser.add_argument("--test-backends", required=True, help="test backends folder")
parser.add_argument("--examples", required=True)
parser.add_argument("--test-models", required=True)
parser.add_argument("--server-arg", action="append", default=[],
                    help="an extra nereid flag (repeatable)")
parser.add_argument("--rss-interval", type=float, default=5.0, help="seconds between samples")
parser.add_argument("--rss-warmup", type=float, default=60,
                    help="seconds of start-up before the baseline minute of RSS "
                         "(runs too short for it use the first minute)")
parser.add_argument("--rss-growth", type=float, default=0.25,
                    help="fail if the last minute's median RSS exceeds the baseline's by "
                         "this fraction plus --rss-slack-mib")
parser.add_argument("--rss-slack-mib", type=float, default=64)
parser.add_argument("--rss-max-mib", type=float, default=4096, help="fail above this RSS")
parser.add_argument("--stop-timeout", type=float, default=None,
                    help="seconds the server may take to exit on SIGTERM "
                         "(default 30 * slow + 30)")
parser.add_argument("--keep", action="store_true", help="keep the work folder")
parser.add_argument("--only", default="", help="comma-separated actions to run (debugging)")
args = parser.parse_args()
sys.path.insert(0, args.stubs)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402
import health_pb2_grpc  # noqa: E402

import churn  # noqa: E402
import hostile  # noqa: E402
import sequences  # noqa: E402
import traffic  # noqa: E402
from calls import Ctx, OK, simple_request, unary  # noqa: E402
from ledger import Ledger  # noqa: E402
from server import RssSampler, Server, combined_backends, make_repository  # noqa: E402

# (action, weight): what a worker draws, each time, at random.
ACTIONS = [
    (traffic.infer_simple, 10),
    (traffic.infer_string, 4),
    (traffic.infer_identity, 4),
    (traffic.infer_churned, 5),
    (traffic.infer_aggregated, 5),
    (traffic.infer_bad, 6),
    (traffic.cancel_unary, 5),
    (traffic.deadline_short, 5),
    (traffic.stream_mixed, 6),
    (traffic.stream_cancel, 3),
    (traffic.stream_cancel_now, 2),
    (traffic.stream_deadline, 2),
    (traffic.slow_reader, 1),
    (traffic.reset_channel, 2),
    (hostile.reset_tcp, 2),
    (hostile.malformed_garbage, 2),
    (hostile.malformed_truncated, 2),
    (hostile.malformed_bitflip, 2),
    (hostile.malformed_stream, 1),
    (hostile.oversized, 0.3),
    (sequences.seq_unary, 5),
    (sequences.seq_fault, 4),
    (sequences.seq_stream, 4),
    (sequences.seq_idle, 0.3),
    (churn.repo_index, 1),
    (churn.reads, 6),
]
# --mode=explicit: the churn is RepositoryModelLoad/Unload.
EXPLICIT_CHURN = [
    (churn.churn_load, 2),
    (churn.churn_unload, 2),
    (churn.churn_reload, 1),
    (churn.churn_file_override, 1),
    (churn.churn_bad_load, 1),
]
# --mode=poll: the churn edits the folders the server scans every second.
POLL_CHURN = [
    (churn.poll_remove, 1),
    (churn.poll_restore, 1),
    (churn.poll_rewrite, 1),
    (churn.poll_refused, 1),
]
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", -1),
                   ("grpc.max_send_message_length", -1)]


class Run:
    """What the workers share: the ledger, channels and stubs, the stop flag."""

    def __init__(self, address, slow, work, repo):
        self.address, self.slow, self.work, self.repo = address, slow, work, repo
        self.attic = os.path.join(work, "attic")  # folders the poll churn took out
        os.makedirs(self.attic)
        self._repro_lock = threading.Lock()
        self._repro_count = 0
        self.ledger = Ledger(margin_s=10 * slow)
        self.stop = threading.Event()
        self.seq_next = {}  # worker -> its last sequence ID (sequences.new_id)
        self.channels = [self.new_channel() for _ in range(2)]
        self.channel = self.channels[0]
        self.stubs = [pb_grpc.GRPCInferenceServiceStub(c) for c in self.channels]
        self.big_stub = self.stubs[0]
        self.health = health_pb2_grpc.HealthStub(self.channel)

    def save_repro(self, kind, data):
        """Keeps the bytes of a call that failed, for a replay; the path."""
        with self._repro_lock:
            self._repro_count += 1
            path = os.path.join(self.work, "repro", "%s-%d.bin" % (kind, self._repro_count))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def new_channel(self):
        return grpc.insecure_channel(self.address, options=CHANNEL_OPTIONS)

    def close(self):
        for c in self.channels:
            c.close()


def worker(run, index, actions):
    rng = random.Random("%d-%d" % (args.seed, index))
    fns = [a for a, _ in actions]
    weights = [w for _, w in actions]
    while not run.stop.is_set():
        fn = rng.choices(fns, weights)[0]
        try:
            fn(Ctx(run, rng, index))
        except Exception:  # the soak's own bug: reported, never hidden
            run.ledger.fail(fn.__name__, "driver error:\n" + traceback.format_exc(), hard=True)


def monitor(run, server, sampler, deadline, stop_timeout):
    """Until the end: the watchdog, the server's life, a line a minute.
    With --stop=busy, the SIGTERM comes at the deadline, with the traffic
    going on until the server is gone (or the stop bound passed)."""
    next_line = 60
    while not run.stop.wait(1.0):
        run.ledger.watch()
        if not server.alive():
            if server.sigterm_at is None:
                run.ledger.fail("server", "exited with code %s during the run"
                                % server.proc.returncode, hard=True)
            run.stop.set()
            return
        if server.sigterm_at is not None and \
                time.monotonic() > server.sigterm_at + stop_timeout:
            run.stop.set()
            return
        t = run.ledger.elapsed()
        if t >= next_line:
            next_line += 60
            started, ended, failures = run.ledger.totals()
            rss = sampler.samples[-1][1] // 1024 if sampler.samples else -1
            print("[%5.0f s] calls %d started, %d ended; %d failures; RSS %d MiB"
                  % (t, started, ended, failures, rss), flush=True)
        if time.monotonic() >= deadline and server.sigterm_at is None:
            if args.stop == "quiet":
                run.stop.set()
            else:
                print("[%5.0f s] SIGTERM under load" % run.ledger.elapsed(), flush=True)
                run.ledger.stopping = True
                server.terminate()


def final_checks(run, server, sampler, stop_timeout):
    """After the traffic: still serving, clean exit, no report, RSS bounds,
    no private folder left. Returns lines for the summary."""
    ledger, lines = run.ledger, []
    if server.alive():
        ctx = Ctx(run, random.Random(args.seed))
        req, check = simple_request(ctx.rng)
        unary(ctx, "final.infer", ctx.stub.ModelInfer, req, ctx.deadline(30), OK, check)
    run.close()
    sampler.stopped.set()
    code, took = server.stop(stop_timeout)
    lines.append("exit: code %s after %.1f s (bound %.0f s)" % (code, took, stop_timeout))
    if code != 0:
        ledger.fail("exit", "still running %.0f s after SIGTERM" % stop_timeout
                    if code is None else "exit code %d after SIGTERM%s" % (
                        code, " (killed by signal %d)" % -code if code < 0 else ""),
                    hard=True)
    if "nereid stopped" not in server.text():
        ledger.fail("exit", "no 'nereid stopped' in the log", hard=True)
    reports = server.sanitizer_reports()
    lines.append("sanitizer report lines: %d" % len(reports))
    for line in reports[:20]:
        ledger.fail("sanitizer", line, hard=True)
    left = server.leftover_private_folders()
    if left:
        ledger.fail("exit", "private model folders left in TMPDIR: %s" % left[:5], hard=True)
    if ledger.stopping:
        lines.append("answers after the SIGTERM that were not as in a quiet run: %d"
                     % ledger.tolerated)
    figures = sampler.figures(args.rss_warmup)
    if figures is None:
        ledger.fail("rss", "no RSS sample", hard=True)
        return lines
    mib = lambda kib: kib / 1024.0  # noqa: E731
    lines.append("RSS: first-minute median %.0f MiB, baseline (minute from %.0f s) %.0f MiB, "
                 "last-minute median %.0f MiB, max %.0f MiB (%d samples every %.0f s)"
                 % (mib(figures["first"]), figures["base_at"], mib(figures["base"]),
                    mib(figures["last"]), mib(figures["max"]), figures["count"],
                    args.rss_interval))
    bound = figures["base"] * (1 + args.rss_growth) + args.rss_slack_mib * 1024
    if figures["last"] > bound:
        ledger.fail("rss", "last-minute median %.0f MiB above the bound %.0f MiB "
                    "(baseline median + %.0f%% + %.0f MiB)"
                    % (mib(figures["last"]), mib(bound), args.rss_growth * 100,
                       args.rss_slack_mib), hard=True)
    if mib(figures["max"]) > args.rss_max_mib:
        ledger.fail("rss", "max %.0f MiB above %.0f MiB" % (mib(figures["max"]),
                                                            args.rss_max_mib), hard=True)
    lines.append("RSS by minute (median / max MiB): " + ", ".join(
        "%d: %.0f/%.0f" % (m, mib(med), mib(mx)) for m, med, mx in figures["by_minute"]))
    return lines


def main():
    slow = args.slow
    stop_timeout = args.stop_timeout or 30 * slow + 30
    actions = ACTIONS + (EXPLICIT_CHURN if args.mode == "explicit" else POLL_CHURN)
    if args.only:
        names = set(args.only.split(","))
        actions = [(a, w) for a, w in actions if a.__name__ in names]
        assert actions, "no action named in --only"
    work = tempfile.mkdtemp(prefix="nereid-soak-", dir=os.environ.get("TEST_TMPDIR"))
    repo = make_repository(work, args.examples, args.test_models, slow)
    backends = combined_backends(work, args.backends, args.test_backends)
    if args.mode == "explicit":
        control = ["--model-control-mode=explicit", "--load-model=*"]
    else:
        control = ["--model-control-mode=poll", "--repository-poll-secs=1"]
    server = Server(args.nereid, work, repo, backends, control + args.server_arg, {},
                    60 * slow)
    print("soak: %s build, %s mode, seed %d, %d workers, %.0f s; server pid %d at %s; "
          "work %s" % (args.label, args.mode, args.seed, args.workers, args.duration,
                       server.proc.pid, server.address, work), flush=True)
    run = Run(server.address, slow, work, repo)
    sampler = RssSampler(server, args.rss_interval, run.ledger.t0)
    sampler.start()
    threads = [threading.Thread(target=worker, args=(run, i, actions), daemon=True)
               for i in range(args.workers)]
    for t in threads:
        t.start()
    monitor(run, server, sampler, time.monotonic() + args.duration, stop_timeout)
    # Each action ends within its longest deadline plus the margin.
    join_by = time.monotonic() + 120 * slow + 2 * run.ledger.margin_s
    for t in threads:
        t.join(max(0.0, join_by - time.monotonic()))
    traffic_s = run.ledger.elapsed()
    run.ledger.watch()
    for kind, age, deadline in run.ledger.open_calls():
        run.ledger.fail(kind, "still open at the end after %.1f s (deadline %.1f s)"
                        % (age, deadline), hard=True)
    stuck = sum(1 for t in threads if t.is_alive())
    if stuck:
        run.ledger.fail("worker", "%d workers still busy at the end" % stuck, hard=True)
    end_lines = final_checks(run, server, sampler, stop_timeout)
    summary(run, server, traffic_s, end_lines, work)
    ok = not run.ledger.failures
    if ok and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


def summary(run, server, traffic_s, end_lines, work):
    ledger = run.ledger
    print("\n=== soak summary: %s build, %s mode, seed %d, %d workers, %.0f s of traffic"
          % (args.label, args.mode, args.seed, args.workers, traffic_s))
    for line in ledger.table():
        print(line)
    print("\nserver texts of non-OK answers (most frequent per kind and status):")
    for line in ledger.detail_lines():
        print("  " + line)
    print()
    for line in end_lines:
        print(line)
    print("server log: %s (%d bytes)" % (server.log_path, len(server.text())))
    if ledger.failures:
        print("\nFAILURES: %d (first 30, the server's own first)" % len(ledger.failures))
        first = ("server", "sanitizer", "exit", "rss", "worker")
        ordered = sorted(ledger.failures, key=lambda f: (f[1] not in first, f[0]))
        for t, kind, message in ordered[:30]:
            print("  [%7.1f s] %s: %s" % (t, kind, message))
        print("work folder kept: %s" % work)
        print("soak: FAIL")
    else:
        print("soak: PASS")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
