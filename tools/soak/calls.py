"""How the soak makes one call and judges it: the worker's context, request
builders for the models it drives, and `unary`/`read_stream`, which put
every call in the ledger with its deadline and check its status against
the statuses the action accepts.

An action's `accept` maps a status name (grpc.StatusCode names, plus
CANCELLED for a client's own cancel) to None (any text) or a substring
the server's text must contain (or a tuple of them)."""

import time

import grpc
import numpy as np

import grpc_service_pb2 as pb

OK = {"OK": None}


class Ctx:
    """What one worker thread works with. The stubs share the run's
    channels; actions that close a channel make their own."""

    def __init__(self, run, rng, worker=-1):
        self.run = run
        self.worker = worker  # its index: sequence IDs come from its own range
        self.ledger = run.ledger
        self.rng = rng
        self.stub = run.stubs[rng.randrange(len(run.stubs))]
        self.slow = run.slow
        self.address = run.address

    def deadline(self, base_s):
        """A deadline that every healthy call meets, scaled for slow builds."""
        return base_s * self.slow


def judge(ctx, kind, status, detail, accept, note=None):
    """Records a failure when `status` is not accepted, or lacks its text;
    note() adds to the failure's line (where the request was kept)."""
    problem = None
    if status not in accept:
        problem = "status %s, expected %s: %s" % (status, "/".join(sorted(accept)),
                                                  detail[:300])
    else:
        needles = accept[status]
        for needle in (needles,) if isinstance(needles, str) else needles or ():
            if needle not in detail:
                problem = "status %s without %r: %s" % (status, needle, detail[:300])
                break
    if problem is None:
        return True
    ctx.ledger.fail(kind, problem + ("; " + note() if note else ""),
                    hard=status == "UNANSWERED")
    return False


def check_answer(ctx, kind, check, resp):
    try:
        check(resp)
    except AssertionError as e:
        ctx.ledger.fail(kind, "wrong answer: %s" % str(e)[:500], hard=True)


def settle(ctx, kind, token, future, timeout, accept, check=None, note=None):
    """Waits for a started unary future (at most deadline + margin), puts its
    end in the ledger and judges it. Returns (status, response or None,
    whether the status was accepted)."""
    resp, detail = None, ""
    try:
        resp = future.result(timeout=timeout + ctx.ledger.margin_s)
        status = "OK"
    except grpc.FutureCancelledError:
        status = "CANCELLED"
        detail = "cancelled by the client"
    except grpc.FutureTimeoutError:
        future.cancel()
        status = "UNANSWERED"
    except grpc.RpcError as e:
        status, detail = e.code().name, e.details() or ""
    ctx.ledger.end(token, status, detail)
    accepted = judge(ctx, kind, status, detail, accept, note)
    if accepted and status == "OK" and check:
        check_answer(ctx, kind, check, resp)
    return status, resp, accepted


def unary(ctx, kind, method, req, timeout, accept, check=None, cancel_after=None):
    """One unary call: sent with `timeout`, cancelled by the client after
    cancel_after seconds when given, then settled."""
    token = ctx.ledger.start(kind, timeout)
    future = method.future(req, timeout=timeout)
    if cancel_after is not None:
        time.sleep(cancel_after)
        future.cancel()
    return settle(ctx, kind, token, future, timeout, accept, check)


def read_stream(ctx, kind, call, token, stop_after=None):
    """Reads a stream call to its end, or cancels it after `stop_after`
    responses. Returns (responses, status, detail); the ledger entry is
    ended here. The call's own deadline bounds the wait."""
    out = []
    status, detail = "OK", ""
    try:
        for resp in call:
            out.append(resp)
            if stop_after is not None and len(out) >= stop_after:
                call.cancel()
    except grpc.RpcError as e:
        status, detail = e.code().name, e.details() or ""
    ctx.ledger.end(token, status, detail)
    return out, status, detail


# ---- requests -----------------------------------------------------------------

def tensor(req, name, dtype, arr, shape=None):
    t = req.inputs.add()
    t.name, t.datatype = name, dtype
    t.shape.extend(arr.shape if shape is None else shape)
    req.raw_input_contents.append(arr.tobytes() if isinstance(arr, np.ndarray) else arr)
    return t


def bytes_tensor(elements):
    """BYTES contents: each element as a 4-byte little-endian length, then it."""
    return b"".join(len(e).to_bytes(4, "little") + e for e in elements)


def bytes_elements(raw):
    out, i = [], 0
    while i < len(raw):
        n = int.from_bytes(raw[i:i + 4], "little")
        out.append(raw[i + 4:i + 4 + n])
        i += 4 + n
    return out


def output(resp, name, dtype):
    for i, o in enumerate(resp.outputs):
        if o.name == name:
            return np.frombuffer(resp.raw_output_contents[i], dtype=dtype).reshape(o.shape)
    raise AssertionError("no output %s in %s" % (name, [o.name for o in resp.outputs]))


def simple_request(rng, model="simple", dtype=np.int32, batch=None, rid=""):
    """simple / simple_int8: INPUT0, INPUT1 [b, 16]; the check compares the
    sum and difference (wrapping, as the server does)."""
    b = batch or rng.randint(1, 8)
    info = np.iinfo(dtype)
    seed = rng.randrange(1 << 30)
    gen = np.random.default_rng(seed)
    x = gen.integers(info.min, info.max, size=(b, 16), dtype=dtype, endpoint=True)
    y = gen.integers(info.min, info.max, size=(b, 16), dtype=dtype, endpoint=True)
    name = "INT32" if dtype == np.int32 else "INT8"
    req = pb.ModelInferRequest(model_name=model, id=rid)
    tensor(req, "INPUT0", name, x)
    tensor(req, "INPUT1", name, y)

    def check(resp):
        with np.errstate(over="ignore"):
            want_sum, want_diff = x + y, x - y
        got = output(resp, "OUTPUT0", dtype)
        assert np.array_equal(got, want_sum), "%s OUTPUT0 %s != %s" % (model, got, want_sum)
        got = output(resp, "OUTPUT1", dtype)
        assert np.array_equal(got, want_diff), "%s OUTPUT1 %s != %s" % (model, got, want_diff)
    return req, check


def string_request(rng):
    b = rng.randint(1, 8)
    x = [[rng.randint(-10 ** 6, 10 ** 6) for _ in range(16)] for _ in range(b)]
    y = [[rng.randint(-10 ** 6, 10 ** 6) for _ in range(16)] for _ in range(b)]
    req = pb.ModelInferRequest(model_name="simple_string")
    for name, vals in (("INPUT0", x), ("INPUT1", y)):
        flat = [str(v).encode() for row in vals for v in row]
        tensor(req, name, "BYTES", bytes_tensor(flat), shape=[b, 16])

    def check(resp):
        sums = [int(e) for e in bytes_elements(resp.raw_output_contents[0])]
        diffs = [int(e) for e in bytes_elements(resp.raw_output_contents[1])]
        fx = [v for row in x for v in row]
        fy = [v for row in y for v in row]
        assert sums == [a + c for a, c in zip(fx, fy)], "simple_string sums"
        assert diffs == [a - c for a, c in zip(fx, fy)], "simple_string differences"
    return req, check


def identity_bytes_request(rng, size=None):
    """simple_identity: BYTES [b, k] of random elements, echoed."""
    b, k = rng.randint(1, 4), rng.randint(1, 8)
    if size is None:
        elems = [rng.randbytes(rng.randint(0, 64)) for _ in range(b * k)]
    else:
        b, k = 1, 1
        elems = [rng.randbytes(16) * (size // 16)]
    req = pb.ModelInferRequest(model_name="simple_identity")
    tensor(req, "INPUT0", "BYTES", bytes_tensor(elems), shape=[b, k])

    def check(resp):
        got = bytes_elements(resp.raw_output_contents[0])
        assert list(resp.outputs[0].shape) == [b, k], "identity shape %s" % resp.outputs[0].shape
        assert got == elems, "identity elements differ (%d elements)" % len(elems)
    return req, check


def int32_identity_request(rng, model, batch_max=4, first=None):
    """An INT32 [b, k] identity (recorder, the churned identity models):
    OUTPUT0 = INPUT0. `first` sets the first element (the recorder's delay
    when delay_from_input is set)."""
    b, k = rng.randint(1, batch_max), rng.randint(1, 16)
    x = np.array([[rng.randint(0, 1000) for _ in range(k)] for _ in range(b)], dtype=np.int32)
    if first is not None:
        x[0, 0] = first
    req = pb.ModelInferRequest(model_name=model)
    tensor(req, "INPUT0", "INT32", x)

    def check(resp):
        got = output(resp, "OUTPUT0", np.int32)
        assert np.array_equal(got, x), "%s OUTPUT0 %s != %s" % (model, got, x)
    return req, check


def repeat_request(rng, model="repeat_int32", n=None, delay_max=3, wait_ms=0, rid="",
                   aggregate=False, empty_final=False):
    """repeat_int32: n responses (OUT = IN[i], IDX = i), DELAY[i] ms apart."""
    n = rng.randint(0, 20) if n is None else n
    values = np.array([rng.randint(-1000, 1000) for _ in range(n)], dtype=np.int32)
    delays = np.array([rng.randint(0, delay_max) for _ in range(n)], dtype=np.uint32)
    req = pb.ModelInferRequest(model_name=model, id=rid)
    tensor(req, "IN", "INT32", values)
    tensor(req, "DELAY", "UINT32", delays)
    tensor(req, "WAIT", "UINT32", np.array([wait_ms], dtype=np.uint32))
    if aggregate:
        req.parameters["nereid_aggregate_responses"].bool_param = True
    if empty_final:
        req.parameters["triton_enable_empty_final_response"].bool_param = True

    def check(resp):
        if n == 0:
            assert len(resp.outputs) == 0, "aggregated reply to 0 elements has outputs"
            return
        assert output(resp, "OUT", np.int32).tolist() == values.tolist(), "aggregated OUT"
        assert output(resp, "IDX", np.uint32).tolist() == list(range(n)), "aggregated IDX"
    return req, values, check


def final_flag(resp):
    params = resp.infer_response.parameters
    assert "triton_final_response" in params, "a streamed response without triton_final_response"
    return params["triton_final_response"].bool_param
