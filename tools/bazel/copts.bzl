"""Compiler flags for Nereid's own code (not third-party sources)."""

NEREID_COPTS = [
    "-std=gnu11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
    "-Wshadow",
    "-Wstrict-prototypes",
    "-Wmissing-prototypes",
]

NEREID_CXXOPTS = [
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Werror",
]
