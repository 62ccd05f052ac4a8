"""The rule for the server's own libraries: one per subsystem folder."""

load("//tools/bazel:copts.bzl", "NEREID_COPTS")

# Folders of the core that may see a model's own state (model.h) and each
# other's internals. Frontends are not among them: they use //server/core.
CORE_PACKAGES = [
    "//server/bls:__pkg__",
    "//server/cache:__pkg__",
    "//server/core:__pkg__",
    "//server/model:__pkg__",
    "//server/repository:__pkg__",
    "//server/sched:__pkg__",
    "//server/stats:__pkg__",
    "//server/trace:__pkg__",
]

def srv_library(name, srcs = [], hdrs = [], deps = [], visibility = None, **kwargs):
    """A cc_library of libtritonserver.so.

    The Triton API functions it defines carry default visibility (the two
    _COMPILING_ defines); exports.lds decides what the shared library
    finally exports. alwayslink: backends reach most of the API through
    dlsym, so nothing in the server references it. Headers in `srcs` are
    the folder's private ones: Bazel gives them to no other target.
    """
    native.cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        copts = NEREID_COPTS,
        local_defines = [
            "_COMPILING_TRITONSERVER",
            "_COMPILING_TRITONBACKEND",
        ],
        alwayslink = True,
        visibility = visibility,
        deps = deps,
        **kwargs
    )

def srv_test(name, srcs, deps = [], **kwargs):
    """A unit test of a server folder, linked with the whole server library."""
    native.cc_test(
        name = name,
        srcs = srcs,
        copts = NEREID_COPTS,
        deps = deps + [
            "//server:server_lib",
            "//test/unit",
            "//tools/sanitizers:hooks",
        ],
        **kwargs
    )
