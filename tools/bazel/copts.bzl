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
    # A heuristic that fires on every PATH_MAX buffer; paths longer than
    # PATH_MAX are not valid anyway, and such snprintf calls truncate safely.
    "-Wno-format-truncation",
]

NEREID_CXXOPTS = [
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Werror",
]
