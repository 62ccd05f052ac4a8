"""Rules that turn our .proto files into upb C code and Python test stubs."""

def _stem(src):
    return src[:-len(".proto")]

def upb_proto_library(name, srcs, deps = [], visibility = None):
    """C library of upb messages (.upb.h) and reflection defs (.upbdefs.h).

    Every file in srcs must sit in this package; they may import each other
    and google/protobuf/*.proto from /usr/include.
    """
    outs = []
    for src in srcs:
        stem = _stem(src)
        outs += [stem + ".upb.h", stem + ".upb.c", stem + ".upbdefs.h", stem + ".upbdefs.c"]
    native.genrule(
        name = name + "_gen",
        srcs = srcs,
        outs = outs,
        cmd = ("protoc -I$$(dirname $(location %s)) -I/usr/include " % srcs[0] +
               "--plugin=protoc-gen-upb=$(location @upb//:protoc-gen-upb) " +
               "--plugin=protoc-gen-upbdefs=$(location @upb//:protoc-gen-upbdefs) " +
               "--upb_out=$(RULEDIR) --upbdefs_out=$(RULEDIR) $(SRCS)"),
        tools = ["@upb//:protoc-gen-upb", "@upb//:protoc-gen-upbdefs"],
    )
    native.cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".c")],
        hdrs = [o for o in outs if o.endswith(".h")],
        # Hidden, like our upb runtime: see third_party/upb.BUILD.
        copts = ["-w", "-fvisibility=hidden"],
        includes = ["."],
        deps = deps + ["@upb//:upb"],
        visibility = visibility,
    )

def py_grpc_stubs(name, srcs, visibility = None):
    """Python message and gRPC stubs (_pb2.py, _pb2_grpc.py) for tests.

    Generated with Debian's protoc and grpc_python_plugin; they import each
    other as top-level modules, so a test puts their folder on sys.path.
    """
    outs = []
    for src in srcs:
        stem = _stem(src)
        outs += [stem + "_pb2.py", stem + "_pb2_grpc.py"]
    native.genrule(
        name = name,
        srcs = srcs,
        outs = outs,
        cmd = ("protoc -I$$(dirname $(location %s)) " % srcs[0] +
               "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin " +
               "--python_out=$(RULEDIR) --grpc_python_out=$(RULEDIR) $(SRCS)"),
        visibility = visibility,
    )
