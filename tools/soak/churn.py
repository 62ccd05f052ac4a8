"""Repository churn and reads: loads, unloads and reloads (plain, with a
`config` override, with `file:` overrides) of models that the traffic
uses, loads the server must refuse, RepositoryIndex, and the read-only
RPCs (statistics, metadata, config, readiness, health).

Explicit model control: every RPC answers OK, or the precise refusal.
Unloads wait for the model's in-flight requests (server/repository/
repository.md), so they get the longest deadline of the run. Poll mode:
the churn moves and rewrites model folders instead, and the load and
unload RPCs must be refused."""

import json
import os
import threading

import grpc_service_pb2 as pb
import health_pb2
from calls import OK, unary
from traffic import GONE

# ModelStatistics of a churned model that is gone (views/model_views.c).
STATS_GONE = {"INVALID_ARGUMENT": "is not available"}

STABLE = ("simple", "simple_string", "simple_identity", "repeat_int32", "simple_sequence",
          "simple_dyna_sequence", "simple_string_dyna_sequence", "simple_sequence_state")
# Folder models the churn unloads and loads again.
FOLDERS = ("simple_int8", "recorder", "recorder_slow", "repeat_churn")
# `churn` has a folder; it is reloaded with config overrides. ovr<k> have
# none: they load from a config and a file override alone.
OVERRIDDEN = ("ovr0", "ovr1")
CHURNED = FOLDERS + ("churn",) + OVERRIDDEN


def identity_config(rng, name):
    """An INT32 [-1] identity model as a client's JSON config."""
    return json.dumps({
        "name": name, "backend": "identity", "maxBatchSize": rng.choice((4, 8)),
        "input": [{"name": "INPUT0", "dataType": "TYPE_INT32", "dims": [-1]}],
        "output": [{"name": "OUTPUT0", "dataType": "TYPE_INT32", "dims": [-1]}],
        "instanceGroup": [{"kind": "KIND_CPU", "count": rng.randint(1, 3)}]})


def load_request(name, config=None, files=None):
    req = pb.RepositoryModelLoadRequest(model_name=name)
    if config is not None:
        req.parameters["config"].string_param = config
    for path, data in (files or {}).items():
        req.parameters["file:" + path].bytes_param = data
    return req


def _repo(ctx, kind, method, req, accept):
    # A load may wait behind an unload, which waits for in-flight requests.
    unary(ctx, kind, method, req, ctx.deadline(120), accept)


def churn_load(ctx):
    name = ctx.rng.choice(FOLDERS)
    _repo(ctx, "churn.load", ctx.stub.RepositoryModelLoad, load_request(name), OK)


def churn_unload(ctx):
    name = ctx.rng.choice(CHURNED)
    _repo(ctx, "churn.unload", ctx.stub.RepositoryModelUnload,
          pb.RepositoryModelUnloadRequest(model_name=name), OK)


def churn_reload(ctx):
    """`churn` with a new config override (batch size, instance count)."""
    req = load_request("churn", identity_config(ctx.rng, "churn"))
    _repo(ctx, "churn.reload", ctx.stub.RepositoryModelLoad, req, OK)


def churn_file_override(ctx):
    """A model from a config override and a file override: a private folder
    that the server must remove when the model goes (checked at exit)."""
    rng = ctx.rng
    name = rng.choice(OVERRIDDEN)
    files = {"1/weights.bin": rng.randbytes(rng.randint(1, 64 * 1024))}
    if rng.random() < 0.3:
        files["1/extra/notes.txt"] = b"soak"
    req = load_request(name, identity_config(rng, name), files)
    _repo(ctx, "churn.file_override", ctx.stub.RepositoryModelLoad, req, OK)


def churn_bad_load(ctx):
    """Loads the server refuses, leaving what serves as it was."""
    rng = ctx.rng
    pick = rng.randrange(4)
    if pick == 0:
        req = load_request("churn", "{not json")
        accept = {"INVALID_ARGUMENT": ("'churn'", "invalid config override")}
    elif pick == 1:
        req, accept = load_request("a/b"), {"INVALID_ARGUMENT": ("'a/b'", "path traversal")}
    elif pick == 2:
        req = load_request("nosuch_folder")
        accept = {"INTERNAL": ("failed to load 'nosuch_folder', failed to poll from "
                               "model repository")}
    else:
        cfg = json.loads(identity_config(rng, "churn"))
        cfg["backend"] = "nosuch_backend"
        req = load_request("churn", json.dumps(cfg))
        accept = {"INVALID_ARGUMENT": "backend 'nosuch_backend'"}
    _repo(ctx, "churn.bad_load", ctx.stub.RepositoryModelLoad, req, accept)


def repo_index(ctx):
    def check(resp):
        ready = {m.name for m in resp.models if m.state == "READY"}
        missing = [m for m in STABLE if m not in ready]
        assert not missing, "RepositoryIndex: stable models not READY: %s" % missing
    req = pb.RepositoryIndexRequest(ready=ctx.rng.random() < 0.5)
    unary(ctx, "repo.index", ctx.stub.RepositoryIndex, req, ctx.deadline(30), OK, check)


def reads(ctx):
    """One read-only RPC on a stable model, a churned one, or none."""
    rng = ctx.rng
    model = rng.choice(STABLE + CHURNED)
    accept = OK if model in STABLE else dict(OK, **GONE)
    pick = rng.randrange(8)
    stub, timeout = ctx.stub, ctx.deadline(30)
    if pick == 0:
        # Statistics of a model that is gone: Triton's text and code.
        name = model if rng.random() < 0.8 else ""
        gone = OK if model in STABLE else dict(OK, **STATS_GONE)
        unary(ctx, "read.statistics", stub.ModelStatistics,
              pb.ModelStatisticsRequest(name=name), timeout, gone if name else OK)
    elif pick == 1:
        unary(ctx, "read.metadata", stub.ModelMetadata,
              pb.ModelMetadataRequest(name=model), timeout, accept)
    elif pick == 2:
        unary(ctx, "read.config", stub.ModelConfig,
              pb.ModelConfigRequest(name=model), timeout, accept)
    elif pick == 3:
        unary(ctx, "read.model_ready", stub.ModelReady,
              pb.ModelReadyRequest(name=model), timeout, OK,
              (lambda r: _assert(r.ready, "%s not ready" % model)) if model in STABLE else None)
    elif pick == 4:
        unary(ctx, "read.server", stub.ServerReady, pb.ServerReadyRequest(), timeout, OK)
    elif pick == 5:
        unary(ctx, "read.server", stub.ServerLive, pb.ServerLiveRequest(), timeout, OK,
              lambda r: _assert(r.live, "not live"))
    elif pick == 6:
        unary(ctx, "read.server", stub.ServerMetadata, pb.ServerMetadataRequest(),
              timeout, OK)
    else:
        unary(ctx, "read.health", ctx.run.health.Check, health_pb2.HealthCheckRequest(),
              timeout, OK, lambda r: _assert(r.status == 1, "health %s" % r.status))


def _assert(cond, text):
    assert cond, text


# ---- poll mode: the churn edits the repository's folders ----------------------

POLLING_REFUSED = "explicit model load / unload is not allowed if polling is enabled"
# Folder edits of one run never interleave: each moves whole folders.
_folders_lock = threading.Lock()


def poll_remove(ctx):
    """A model folder leaves the repository (moved to the attic, in one
    rename): the next scan unloads it."""
    name = ctx.rng.choice(FOLDERS + ("churn",))
    with _folders_lock:
        src = os.path.join(ctx.run.repo, name)
        if os.path.isdir(src):
            os.rename(src, os.path.join(ctx.run.attic, name))


def poll_restore(ctx):
    """A removed folder comes back: the next scan loads it."""
    name = ctx.rng.choice(FOLDERS + ("churn",))
    with _folders_lock:
        src = os.path.join(ctx.run.attic, name)
        if os.path.isdir(src):
            os.rename(src, os.path.join(ctx.run.repo, name))


def poll_rewrite(ctx):
    """`churn` gets a new config.pbtxt (batch size, instance count), written
    beside and renamed in: the next scan reloads it."""
    rng = ctx.rng
    text = ('name: "churn"\nbackend: "identity"\nmax_batch_size: %d\n'
            'input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]\n'
            'output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]\n'
            'instance_group [ { kind: KIND_CPU count: %d } ]\n'
            % (rng.choice((4, 8)), rng.randint(1, 3)))
    with _folders_lock:
        folder = os.path.join(ctx.run.repo, "churn")
        if not os.path.isdir(folder):
            return
        tmp = os.path.join(ctx.run.work, "churn.pbtxt.tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(folder, "config.pbtxt"))


def poll_refused(ctx):
    """Load and unload RPCs are refused while the server polls."""
    name = ctx.rng.choice(CHURNED)
    accept = {"UNAVAILABLE": POLLING_REFUSED}
    if ctx.rng.random() < 0.5:
        _repo(ctx, "churn.refused", ctx.stub.RepositoryModelLoad, load_request(name), accept)
    else:
        _repo(ctx, "churn.refused", ctx.stub.RepositoryModelUnload,
              pb.RepositoryModelUnloadRequest(model_name=name), accept)
