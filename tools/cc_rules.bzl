"""dflow's C++ rules: the native ones with the flags dflow's code needs carried by each target.

Every BUILD file of dflow loads these in place of the native rules, so that dflow builds the
same as a dependency of another workspace, where dflow's .bazelrc does not apply (Bazel's
auto-configured toolchain passes -std=c++0x). A program including dflow's headers needs
C++17 too: `load("@dflow//:defs.bzl", "DFLOW_COPTS")` (docs/BAZEL.md).
"""

DFLOW_COPTS = ["-std=c++17"]

def cc_library(copts = [], **kwargs):
    native.cc_library(copts = DFLOW_COPTS + copts, **kwargs)

def cc_binary(copts = [], **kwargs):
    native.cc_binary(copts = DFLOW_COPTS + copts, **kwargs)

def cc_test(copts = [], **kwargs):
    native.cc_test(copts = DFLOW_COPTS + copts, **kwargs)
