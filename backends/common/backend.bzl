"""triton_backend(): a backend shared library laid out as the server loads it.

A backend in package backends/<B> (or test/backends/<B>) builds
libtriton_<B>.so there, so bazel-bin/backends is itself a valid
--backend-directory. TRITONBACKEND_*/TRITONSERVER_* calls stay undefined and
resolve against libtritonserver.so when the server dlopens the library.
Only the TRITONBACKEND_* entry points are exported (hidden visibility plus
the version script exports.lds).
"""

load("//tools/bazel:copts.bzl", "NEREID_COPTS")

def triton_backend(name, srcs, deps = [], copts = None, linkopts = []):
    """Declares libtriton_<name>.so.

    Args:
      name: the backend's name, as model configs spell it in `backend:`.
      srcs: sources (C by default; pass C++ copts for .cc files).
      deps: extra cc_library deps besides the API headers.
      copts: compiler flags; NEREID_COPTS with hidden visibility by default.
      linkopts: extra linker flags.
    """
    native.cc_binary(
        name = "libtriton_%s.so" % name,
        linkshared = True,
        srcs = srcs,
        copts = (copts if copts != None else NEREID_COPTS) + ["-fvisibility=hidden"],
        additional_linker_inputs = ["//backends/common:exports.lds"],
        linkopts = linkopts + [
            "-Wl,--version-script=$(location //backends/common:exports.lds)",
        ],
        deps = deps + ["//backends/include:triton_headers"],
        visibility = ["//visibility:public"],
    )
