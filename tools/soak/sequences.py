"""The soak's sequence traffic (server/sched/sequence.md): sequences of the
example sequence models over unary calls and over streams (steps of
several sequences interleaved), every OK answer checked against the
model's arithmetic; with faults: a client cancel or a short deadline
mid-sequence, streams closed or cancelled with sequences left open, START
again on a live ID (a restart), sequences abandoned to the idle timeout.

Each worker draws IDs from its own range (Ctx.worker), so workers never
share one. After a fault a sequence may live on (its faulted step run, or
never seen by the server) or be ended (a cancelled request ends its
sequence, as in Triton; a closed stream ends those it left open): a later
step then gets OK with one of the values still possible, or one of the
server's two refusals (ENDED). Once refused, a sequence is over: only a
START brings the ID back, and that must answer exactly."""

import time

import numpy as np

import grpc_service_pb2 as pb
from calls import final_flag, output, read_stream, unary
from server import idle_s

MODELS = ("simple_sequence", "simple_dyna_sequence", "simple_string_dyna_sequence",
          "simple_sequence_state")
NO_START = "must specify the START flag"
SEQ_CANCELLED = "the sequence was cancelled"
# What a step of a sequence that a fault may have ended can get instead of OK.
ENDED = {"INVALID_ARGUMENT": NO_START, "CANCELLED": SEQ_CANCELLED}
ID_SPAN = 10_000_000  # IDs of worker w: (w + 1) * ID_SPAN + n, all int32


def wrap32(v):
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def new_id(ctx):
    n = ctx.run.seq_next.get(ctx.worker, 0) % (ID_SPAN - 1) + 1
    ctx.run.seq_next[ctx.worker] = n  # this worker's key only
    return (ctx.worker + 1) * ID_SPAN + n


class Seq:
    """One sequence as the client knows it: `cands`, the accumulators it may
    hold (one when nothing went wrong; none once it is surely over);
    `maybe_ended`, whether a fault may have ended it."""

    def __init__(self, model, sid):
        self.model, self.sid = model, sid
        self.cands, self.maybe_ended = {0}, False

    def outcomes(self, x, start, end):
        """(OUTPUTs the step may answer, accumulators after it)."""
        outs, after = set(), set()
        for acc in ({0} if start else self.cands):
            if self.model == "simple_sequence":
                out = x + start
            elif self.model == "simple_dyna_sequence":
                out = x + start + end * self.sid
            else:  # the accumulators
                acc = x if start else acc + x
                out = acc + (self.sid if end and self.model == "simple_string_dyna_sequence"
                             else 0)
            outs.add(wrap32(out))
            after.add(wrap32(acc))
        return outs, after

    def request(self, x, start, end, rid=""):
        req = pb.ModelInferRequest(model_name=self.model, id=rid)
        t = req.inputs.add()
        t.name, t.datatype = "INPUT", "INT32"
        t.shape.extend([1, 1])
        req.raw_input_contents.append(np.array([[x]], dtype=np.int32).tobytes())
        if self.model == "simple_string_dyna_sequence":
            req.parameters["sequence_id"].string_param = str(self.sid)
        else:
            req.parameters["sequence_id"].int64_param = self.sid
        if start:
            req.parameters["sequence_start"].bool_param = True
        if end:
            req.parameters["sequence_end"].bool_param = True
        return req


def value_of(resp):
    return int(output(resp, "OUTPUT", np.int32).reshape(-1)[0])


def step(ctx, kind, seq, x, start=False, end=False, timeout=None, cancel_after=None,
         accept_extra=None):
    """One unary step, judged; updates what the client knows. A faulted
    step (timeout or cancel_after) may have run, or not, or ended the
    sequence. Returns the status."""
    outs, after = seq.outcomes(x, start, end)
    fault = timeout is not None or cancel_after is not None
    accept = {"OK": None}
    if seq.maybe_ended and not start:
        accept.update(ENDED)
    if fault:
        accept.update({"CANCELLED": None, "DEADLINE_EXCEEDED": None})
    accept.update(accept_extra or {})

    def check(resp):
        got = value_of(resp)
        assert got in outs, "%s id %d x %d%s%s: OUTPUT %d, want one of %s" % (
            seq.model, seq.sid, x, " START" if start else "", " END" if end else "",
            got, sorted(outs)[:6])
    status, _, _ = unary(ctx, kind, ctx.stub.ModelInfer, seq.request(x, start, end),
                         timeout or ctx.deadline(30), accept, check, cancel_after)
    if status == "OK":
        # A faulted request may still reach the model after later steps
        # (its call and theirs are different actors): ended stays possible.
        seq.cands = set() if end else after
        seq.maybe_ended = seq.maybe_ended and not start
    elif fault and status in ("CANCELLED", "DEADLINE_EXCEEDED"):
        seq.cands = (set() if start else seq.cands) | (set() if end else after)
        seq.maybe_ended = True
    else:  # refused: the sequence is over
        seq.cands, seq.maybe_ended = set(), True
    return status


def _x(rng):
    return rng.randint(-1000, 1000) or 1


def seq_unary(ctx):
    """A sequence of 1-6 unary steps, all OK and exact; sometimes a START
    again on the live ID, sometimes no END (the idle timeout reaps it:
    idle_s, 10 s for the dyna models)."""
    rng = ctx.rng
    seq = Seq(rng.choice(MODELS), new_id(ctx))
    n = rng.randint(1, 6)
    restart = rng.randrange(1, n) if n > 1 and rng.random() < 0.25 else None
    abandon = rng.random() < 0.2
    for i in range(n):
        status = step(ctx, "seq.unary", seq, _x(rng), start=i == 0 or i == restart,
                      end=i == n - 1 and not abandon)
        if status != "OK":
            return


def seq_fault(ctx):
    """A client cancel (0-30 ms) or a deadline (1-50 ms) on one step; the
    steps after it accept OK (one of the possible values) or the refusals;
    then START + END on the ID must answer exactly."""
    rng = ctx.rng
    seq = Seq(rng.choice(MODELS), new_id(ctx))
    n = rng.randint(2, 6)
    k = rng.randrange(n)
    cancel = rng.random() < 0.5
    for i in range(n):
        x, start, end = _x(rng), i == 0, i == n - 1
        if i == k:
            if cancel:
                step(ctx, "seq.cancel", seq, x, start, end, cancel_after=rng.uniform(0, 0.03))
            else:
                step(ctx, "seq.deadline", seq, x, start, end, timeout=rng.uniform(0.001, 0.05))
        else:
            step(ctx, "seq.after_fault", seq, x, start, end)
    # A faulted request the server had read is past the model's door by now
    # (or cancelled): the restart is exact.
    time.sleep(0.1 * ctx.slow)
    seq.maybe_ended = False
    if step(ctx, "seq.restart", seq, _x(rng), start=True) == "OK":
        step(ctx, "seq.restart", seq, _x(rng), end=True)


def seq_idle(ctx):
    """A simple_sequence(_state) sequence left open past its idle timeout
    (idle_s): its next step must be refused, saying START is missing."""
    rng = ctx.rng
    seq = Seq(rng.choice(("simple_sequence", "simple_sequence_state")), new_id(ctx))
    if step(ctx, "seq.idle", seq, _x(rng), start=True) != "OK":
        return
    time.sleep(idle_s(ctx.slow) + 0.5 + ctx.slow)
    seq.cands = set()
    step(ctx, "seq.idle", seq, _x(rng), accept_extra={"INVALID_ARGUMENT": NO_START})


def _stream_plan(ctx, open_p):
    """Sequences for one stream and their steps, interleaved at random: the
    requests, and per request id (sequence, OUTPUTs it may answer)."""
    rng = ctx.rng
    seqs, steps = [], []
    for j in range(rng.randint(1, 5)):
        seq = Seq(rng.choice(MODELS), new_id(ctx))
        n = rng.randint(1, 6)
        restart = rng.randrange(1, n) if n > 1 and rng.random() < 0.2 else None
        left_open = rng.random() < open_p
        seq.plan = [(_x(rng), i == 0 or i == restart, i == n - 1 and not left_open)
                    for i in range(n)]
        seqs.append(seq)
        steps.append([(j, i) for i in range(n)])
    order = []
    while any(steps):
        live = [s for s in steps if s]
        order.append(rng.choice(live).pop(0))
    reqs, expect = [], {}
    sim = [Seq(s.model, s.sid) for s in seqs]
    for j, i in order:
        x, start, end = seqs[j].plan[i]
        outs, after = sim[j].outcomes(x, start, end)
        sim[j].cands = after
        rid = "s%d.%d" % (j, i)
        expect[rid] = (j, outs)
        reqs.append(seqs[j].request(x, start, end, rid))
    return seqs, reqs, expect


def _check_stream(ctx, kind, out, expect, complete):
    """Each response is its request's one final answer, with a right value;
    `complete`: every request answered. Returns the ids answered."""
    seen = set()
    for resp in out:
        r = resp.infer_response
        problem = None
        if r.id not in expect or r.id in seen:
            problem = "response for %r, never sent or twice" % r.id
        elif resp.error_message:
            problem = "%s: error %r" % (r.id, resp.error_message[:200])
        elif not final_flag(resp):
            problem = "%s: not final" % r.id
        elif value_of(r) not in expect[r.id][1]:
            problem = "%s: OUTPUT %d, want %s" % (r.id, value_of(r), sorted(expect[r.id][1]))
        if problem:
            ctx.ledger.fail(kind, problem, hard=True)
            return seen
        seen.add(r.id)
    if complete and len(seen) != len(expect):
        ctx.ledger.fail(kind, "%d responses to %d requests" % (len(seen), len(expect)),
                        hard=True)
    return seen


def _what_may_be_left(seq, answered):
    """After a stream ended early: the accumulators seq may hold, for each
    prefix of its plan that may have run (all answered steps and more), a
    prefix with its END leaving nothing."""
    sim, cands = Seq(seq.model, seq.sid), set()
    for i, (x, start, end) in enumerate(seq.plan):
        _, sim.cands = sim.outcomes(x, start, end)
        if end:
            sim.cands = set()
        if i + 1 >= answered:
            cands |= sim.cands
    return cands


def seq_stream(ctx):
    """Sequences on one stream: all ended and the stream half-closed (OK,
    every step exact); some left open when it closes (the server ends
    them); or the stream cancelled after a few responses (its sequences
    end). Then each left-open sequence gets a step (OK with a possible
    value, or refused) and START + END, exact: the stream's end, however
    late, ends only what the stream started (sched/sequence.md)."""
    rng = ctx.rng
    variant = rng.choices(("closed", "open", "cancel"), (5, 3, 2))[0]
    seqs, reqs, expect = _stream_plan(ctx, 0.0 if variant == "closed" else 0.5)
    kind = "seq.stream." + variant
    timeout = ctx.deadline(40)
    token = ctx.ledger.start(kind, timeout)
    call = ctx.stub.ModelStreamInfer(iter(reqs), timeout=timeout)
    stop_after = rng.randint(0, len(reqs)) or None if variant == "cancel" else None
    out, status, detail = read_stream(ctx, kind, call, token, stop_after=stop_after)
    if status not in (("OK", "CANCELLED") if variant == "cancel" else ("OK",)):
        ctx.ledger.fail(kind, "status %s: %s" % (status, detail[:300]))
        return
    answered = _check_stream(ctx, kind, out, expect, variant != "cancel")
    if variant == "closed":
        return
    for j, seq in enumerate(seqs):
        n_answered = sum(1 for rid in answered if expect[rid][0] == j)
        if variant == "open" and seq.plan[-1][2]:
            continue  # ended on the stream
        seq.cands = _what_may_be_left(seq, n_answered)
        seq.maybe_ended = True
        step(ctx, "seq.after_stream", seq, _x(rng))
        seq.maybe_ended = False
        if step(ctx, "seq.after_stream", seq, _x(rng), start=True) != "OK":
            continue
        step(ctx, "seq.after_stream", seq, _x(rng), end=True)
