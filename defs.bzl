"""What a workspace that depends on dflow loads besides deps.bzl (docs/BAZEL.md).

    load("@dflow//:defs.bzl", "DFLOW_COPTS")

    cc_binary(
        name = "my_program",
        srcs = ["my_program.cc"],
        copts = DFLOW_COPTS,   # dflow's headers are C++17
        deps = ["@dflow//:dflow"],
    )
"""

load("//tools:cc_rules.bzl", _DFLOW_COPTS = "DFLOW_COPTS")

DFLOW_COPTS = _DFLOW_COPTS
