"""The soak's inference traffic: valid unary calls with their results
checked, requests with precise errors, aggregated and streamed decoupled
requests, client cancels, short deadlines, streams cancelled or past their
deadline, and slow readers. Each action is one function of a worker's
context (calls.Ctx); the ledger counts each call it makes.

Models that the churn loads and unloads (CHURNED) may answer UNAVAILABLE
at any time; the stable ones must answer exactly."""

import time

import numpy as np

import grpc_service_pb2 as pb
import grpc_service_pb2_grpc as pb_grpc
from calls import (OK, bytes_tensor, final_flag, identity_bytes_request,
                   int32_identity_request, output, read_stream, repeat_request,
                   settle, simple_request, string_request, tensor, unary)

# A churned model may be gone (unloaded, or between an unload and a load).
UNKNOWN = "Request for unknown model"
GONE = {"UNAVAILABLE": UNKNOWN}
# Identity models with INT32 [-1] that the churn loads and unloads:
# folders, a config override, and file overrides.
CHURNED_INT32 = ("recorder", "recorder_slow", "churn", "ovr0", "ovr1")
CANCELS = {"OK": None, "CANCELLED": None}
DEADLINES = {"OK": None, "DEADLINE_EXCEEDED": None, "CANCELLED": None}


def infer_simple(ctx):
    req, check = simple_request(ctx.rng)
    unary(ctx, "infer.simple", ctx.stub.ModelInfer, req, ctx.deadline(30), OK, check)


def infer_string(ctx):
    req, check = string_request(ctx.rng)
    unary(ctx, "infer.string", ctx.stub.ModelInfer, req, ctx.deadline(30), OK, check)


def infer_identity(ctx):
    req, check = identity_bytes_request(ctx.rng)
    unary(ctx, "infer.identity", ctx.stub.ModelInfer, req, ctx.deadline(30), OK, check)


def infer_churned(ctx):
    """simple_int8 or an INT32 identity model, while the churn reloads them."""
    model = ctx.rng.choice(("simple_int8",) + CHURNED_INT32)
    if model == "simple_int8":
        req, check = simple_request(ctx.rng, "simple_int8", np.int8)
    else:
        req, check = int32_identity_request(ctx.rng, model)
    unary(ctx, "infer.churned", ctx.stub.ModelInfer, req, ctx.deadline(30),
          dict(OK, **GONE), check)


def infer_aggregated(ctx):
    """Decoupled repeat_int32 over ModelInfer, responses aggregated."""
    model = ctx.rng.choice(("repeat_int32", "repeat_int32", "repeat_churn"))
    req, _, check = repeat_request(ctx.rng, model, aggregate=True)
    accept = OK if model == "repeat_int32" else dict(OK, **GONE)
    unary(ctx, "infer.aggregated", ctx.stub.ModelInfer, req, ctx.deadline(30), accept, check)


def _bad_requests(rng):
    """(request, status, text the message must hold) for the stable models."""
    req, _ = simple_request(rng)
    cases = []

    def variant(status, needle, edit):
        r = pb.ModelInferRequest()
        r.CopyFrom(req)
        edit(r)
        cases.append((r, status, needle))

    def setattr_(field, value):
        return lambda r: setattr(r, field, value)

    variant("UNAVAILABLE", "nosuch_model", setattr_("model_name", "nosuch_model"))
    variant("UNAVAILABLE", "version 7", setattr_("model_version", "7"))
    variant("INVALID_ARGUMENT", "x1", setattr_("model_version", "x1"))
    variant("INVALID_ARGUMENT", "model name must not be empty", setattr_("model_name", ""))

    def drop_input1(r):
        del r.inputs[1]
        del r.raw_input_contents[1]
    variant("INVALID_ARGUMENT", "INPUT1", drop_input1)
    variant("INVALID_ARGUMENT", "INPUT9",
            lambda r: tensor(r, "INPUT9", "INT32", np.zeros((1, 16), np.int32)))
    variant("INVALID_ARGUMENT", "FP32", lambda r: setattr(r.inputs[0], "datatype", "FP32"))

    def short_shape(r):
        r.inputs[0].shape[-1] = 15
        r.raw_input_contents[0] = r.raw_input_contents[0][:r.inputs[0].shape[0] * 15 * 4]
    variant("INVALID_ARGUMENT", ",15]", short_shape)

    def big_batch(r):
        for i in range(2):
            r.inputs[i].shape[:] = [9, 16]
            r.raw_input_contents[i] = np.zeros((9, 16), np.int32).tobytes()
    variant("INVALID_ARGUMENT", "batch-size must be <= 8", big_batch)
    variant("INVALID_ARGUMENT", "OUTPUT7", lambda r: setattr(r.outputs.add(), "name", "OUTPUT7"))
    variant("INVALID_ARGUMENT", "byte size",
            lambda r: r.raw_input_contents.__setitem__(0, r.raw_input_contents[0][:-4]))
    variant("INVALID_ARGUMENT", "unable to find data for input tensor 'INPUT1'",
            lambda r: r.raw_input_contents.__delitem__(1))
    variant("INVALID_ARGUMENT", "INPUT0",
            lambda r: r.inputs[0].contents.int_contents.extend(range(16)))
    plain_repeat, _, _ = repeat_request(rng, n=3)
    cases.append((plain_repeat, "UNIMPLEMENTED", "decoupled"))
    bad_string = pb.ModelInferRequest(model_name="simple_string")
    for name in ("INPUT0", "INPUT1"):
        tensor(bad_string, name, "BYTES", bytes_tensor([b"x"] * 16), shape=[1, 16])
    cases.append((bad_string, "INVALID_ARGUMENT", "INPUT0"))
    return cases


def infer_bad(ctx):
    req, status, needle = ctx.rng.choice(_bad_requests(ctx.rng))
    unary(ctx, "infer.bad", ctx.stub.ModelInfer, req, ctx.deadline(30), {status: needle})


def cancel_unary(ctx):
    """A client cancel at a random moment: before, during or after the work."""
    rng = ctx.rng
    pick = rng.randrange(3)
    if pick == 0:
        req, check = simple_request(rng)
        accept = CANCELS
    elif pick == 1:
        req, _, check = repeat_request(rng, n=rng.randint(1, 50), aggregate=True)
        accept = CANCELS
    else:
        req, check = int32_identity_request(rng, "recorder_slow")
        accept = dict(CANCELS, **GONE)
    unary(ctx, "cancel.unary", ctx.stub.ModelInfer, req, ctx.deadline(30), accept, check,
          cancel_after=rng.uniform(0, 0.03))


def deadline_short(ctx):
    """A deadline that may pass in the queue, in execution or on the way
    back; the server's text is not checked (the client reports the expiry)."""
    rng = ctx.rng
    pick = rng.randrange(3)
    if pick == 0:
        req, check = simple_request(rng)
        timeout, accept = rng.uniform(0.001, 0.02), DEADLINES
    elif pick == 1:
        req, _, check = repeat_request(rng, n=rng.randint(1, 30), delay_max=5, aggregate=True)
        timeout, accept = rng.uniform(0.005, 0.1), DEADLINES
    else:
        req, check = int32_identity_request(rng, "recorder_slow")
        timeout, accept = rng.uniform(0.05, 0.4), dict(DEADLINES, **GONE)
    unary(ctx, "deadline.unary", ctx.stub.ModelInfer, req, timeout, accept, check)


# ---- streams ------------------------------------------------------------------

def _stream_plan(rng, n_requests):
    """Requests for one stream and what each must get back, by id."""
    reqs, expect = [], {}
    for i in range(n_requests):
        rid = "q%d" % i
        pick = rng.randrange(10)
        if pick < 3:
            req, check = simple_request(rng, rid=rid)
            expect[rid] = ("one", check, False)
        elif pick < 7:
            model = "repeat_churn" if pick == 6 else "repeat_int32"
            empty = rng.random() < 0.5
            req, values, _ = repeat_request(rng, model, rid=rid, empty_final=empty)
            expect[rid] = ("repeat", (values, empty), model == "repeat_churn")
        elif pick < 8:
            req, check = int32_identity_request(rng, rng.choice(CHURNED_INT32))
            req.id = rid
            expect[rid] = ("one", check, True)
        elif pick < 9:
            req, _ = simple_request(rng, rid=rid)
            req.model_name = "nosuch_model"
            expect[rid] = ("error", "nosuch_model", False)
        else:
            req, check = identity_bytes_request(rng)
            req.id = rid
            expect[rid] = ("one", check, False)
        reqs.append(req)
    return reqs, expect


def _check_stream_answers(out, expect):
    """Every request got exactly its answers; returns a problem or None."""
    by_id = {}
    for resp in out:
        by_id.setdefault(resp.infer_response.id, []).append(resp)
    for rid, (what, arg, churned) in expect.items():
        got = by_id.pop(rid, [])
        errors = [r for r in got if r.error_message]
        if errors:
            # A request refused before it reaches a model has no final flag
            # (as tritonserver); a backend's error is final.
            params = got[0].infer_response.parameters
            if len(got) != 1 or ("triton_final_response" in params and not final_flag(got[0])):
                return "%s: an error among %d responses" % (rid, len(got))
            text = got[0].error_message
            if what == "error" and arg in text:
                continue
            if churned and UNKNOWN in text:
                continue
            return "%s: error %r" % (rid, text[:200])
        if what == "error":
            return "%s: %d responses, no error" % (rid, len(got))
        if what == "one":
            if len(got) != 1 or not final_flag(got[0]):
                return "%s: %d responses, want 1 final" % (rid, len(got))
            try:
                arg(got[0].infer_response)
            except AssertionError as e:
                return "%s: %s" % (rid, e)
            continue
        values, empty = arg
        n = len(values)
        finals = [final_flag(r) for r in got]
        want = [False] * n + ([True] if empty else [])
        if finals != want:
            return "%s: finals %s, want %d responses%s" % (
                rid, finals[:8], n, " and an empty final" if empty else "")
        outs = [int(output(r.infer_response, "OUT", np.int32)[0]) for r in got[:n]]
        idx = [int(output(r.infer_response, "IDX", np.uint32)[0]) for r in got[:n]]
        if outs != values.tolist() or idx != list(range(n)):
            return "%s: OUT/IDX out of order or wrong" % rid
        if empty and len(got[n].infer_response.outputs) != 0:
            return "%s: the empty final has outputs" % rid
    if by_id:
        return "responses for ids never sent: %s" % sorted(by_id)[:5]
    return None


def stream_mixed(ctx):
    """Several models on one stream, half-closed after the requests: it
    must end OK with every request answered exactly."""
    reqs, expect = _stream_plan(ctx.rng, ctx.rng.randint(1, 12))
    timeout = ctx.deadline(40)
    token = ctx.ledger.start("stream.mixed", timeout)
    call = ctx.stub.ModelStreamInfer(iter(reqs), timeout=timeout)
    out, status, detail = read_stream(ctx, "stream.mixed", call, token)
    if status != "OK":
        ctx.ledger.fail("stream.mixed", "status %s: %s" % (status, detail[:300]))
        return
    problem = _check_stream_answers(out, expect)
    if problem:
        ctx.ledger.fail("stream.mixed", problem, hard=True)


def stream_cancel(ctx):
    """Long decoupled requests, cancelled after a few responses."""
    rng = ctx.rng
    reqs = [repeat_request(rng, rng.choice(("repeat_int32", "repeat_churn")),
                           n=rng.randint(5, 100), delay_max=20, rid="c%d" % i)[0]
            for i in range(rng.randint(1, 6))]
    for i in range(rng.randint(0, 4)):
        reqs.append(simple_request(rng, rid="s%d" % i)[0])
    rng.shuffle(reqs)
    timeout = ctx.deadline(40)
    token = ctx.ledger.start("stream.cancel", timeout)
    call = ctx.stub.ModelStreamInfer(iter(reqs), timeout=timeout)
    _, status, detail = read_stream(ctx, "stream.cancel", call, token,
                                    stop_after=rng.randint(0, 5) or None)
    if status not in ("OK", "CANCELLED"):
        ctx.ledger.fail("stream.cancel", "status %s: %s" % (status, detail[:300]))


def stream_cancel_now(ctx):
    """A stream cancelled from another moment than a read: right after it
    starts, with its requests still being sent."""
    rng = ctx.rng
    reqs = [repeat_request(rng, n=rng.randint(1, 10), delay_max=5)[0]
            for _ in range(rng.randint(1, 32))]
    timeout = ctx.deadline(40)
    token = ctx.ledger.start("stream.cancel", timeout)
    call = ctx.stub.ModelStreamInfer(iter(reqs), timeout=timeout)
    time.sleep(rng.uniform(0, 0.01))
    call.cancel()
    _, status, detail = read_stream(ctx, "stream.cancel", call, token)
    if status not in ("OK", "CANCELLED"):
        ctx.ledger.fail("stream.cancel", "status %s: %s" % (status, detail[:300]))


def stream_deadline(ctx):
    """A stream whose deadline passes while its responses are coming."""
    rng = ctx.rng
    reqs = [repeat_request(rng, n=rng.randint(5, 60), delay_max=30, rid="d%d" % i,
                           wait_ms=rng.choice((0, 0, 50)))[0]
            for i in range(rng.randint(1, 4))]
    timeout = rng.uniform(0.05, 1.0)
    token = ctx.ledger.start("stream.deadline", timeout)
    call = ctx.stub.ModelStreamInfer(iter(reqs), timeout=timeout)
    _, status, detail = read_stream(ctx, "stream.deadline", call, token)
    if status not in DEADLINES:
        ctx.ledger.fail("stream.deadline", "status %s: %s" % (status, detail[:300]))


def slow_reader(ctx):
    """Many or large responses that the client leaves unread for a while
    (the server's write queue fills and it stops receiving), then reads
    all of them, or cancels."""
    rng = ctx.rng
    if rng.random() < 0.5:
        size = rng.choice((1024, 16 * 1024, 64 * 1024))
        reqs = []
        for i in range(rng.randint(20, 200)):
            req, _ = identity_bytes_request(rng, size=size)
            req.id = "b%d" % i
            reqs.append(req)
        expect = len(reqs)
    else:
        n = rng.randint(200, 3000)
        reqs = [repeat_request(rng, n=n, delay_max=0, rid="r")[0]]
        expect = n
    timeout = ctx.deadline(60)
    token = ctx.ledger.start("stream.slow_reader", timeout)
    call = ctx.stub.ModelStreamInfer(iter(reqs), timeout=timeout)
    time.sleep(rng.uniform(0.2, 4.0))
    cancel = rng.random() < 0.3
    out, status, detail = read_stream(ctx, "stream.slow_reader", call, token,
                                      stop_after=rng.randint(1, 50) if cancel else None)
    if cancel:
        if status not in ("OK", "CANCELLED"):
            ctx.ledger.fail("stream.slow_reader", "status %s: %s" % (status, detail[:300]))
        return
    if status != "OK":
        ctx.ledger.fail("stream.slow_reader", "status %s: %s" % (status, detail[:300]))
    elif len(out) != expect or any(r.error_message for r in out):
        ctx.ledger.fail("stream.slow_reader", "%d responses (%d errors), want %d" % (
            len(out), sum(1 for r in out if r.error_message), expect), hard=True)


def reset_channel(ctx):
    """Calls in flight on a channel of their own when it is closed: the
    server sees every stream of the connection reset."""
    rng = ctx.rng
    channel = ctx.run.new_channel()
    stub = pb_grpc.GRPCInferenceServiceStub(channel)
    timeout = ctx.deadline(30)
    pending = []
    for _ in range(rng.randint(1, 4)):
        pick = rng.randrange(3)
        if pick == 0:
            req, _ = simple_request(rng)
        elif pick == 1:
            req, _, _ = repeat_request(rng, n=rng.randint(1, 40), delay_max=10, aggregate=True)
        else:
            req, _ = int32_identity_request(rng, "recorder_slow")
        pending.append((ctx.ledger.start("reset.channel", timeout),
                        stub.ModelInfer.future(req, timeout=timeout)))
    reqs = [repeat_request(rng, n=rng.randint(1, 40), delay_max=10)[0] for _ in range(3)]
    stream_token = ctx.ledger.start("reset.channel", timeout)
    stream = stub.ModelStreamInfer(iter(reqs), timeout=timeout)
    time.sleep(rng.uniform(0, 0.1))
    channel.close()
    accept = {"OK": None, "CANCELLED": None, "UNAVAILABLE": None}
    for token, future in pending:
        settle(ctx, "reset.channel", token, future, timeout, accept)
    _, status, detail = read_stream(ctx, "reset.channel", stream, stream_token)
    if status not in accept:
        ctx.ledger.fail("reset.channel", "stream status %s: %s" % (status, detail[:300]))
