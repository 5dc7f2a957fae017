"""The repositories dflow needs, declared for dflow itself and for workspaces that use it.

A workspace that depends on dflow writes, with no other set-up:

    local_repository(name = "dflow", path = "/path/to/dflow")   # or http_archive
    load("@dflow//:deps.bzl", "dflow_deps")
    dflow_deps()

and then depends on `@dflow//:dflow` (docs/BAZEL.md). Everything is offline: Bazel's own
helper repositories come from this tree (third_party/README.md) and the system libraries
from Debian packages (tools/setup.sh). A repository the workspace already declares is
left as it is.
"""

load("//third_party/cuda:cuda_configure.bzl", "cuda_configure")

# Where Debian's bazel-bootstrap keeps rules_java.
_DEBIAN_RULES_JAVA = "/usr/share/bazel/rules/java"

def _tree_copy_impl(ctx):
    # The folder holding `marker`, linked file by file: a local_repository path would be
    # relative to the *main* workspace, which is not dflow when dflow is a dependency.
    folder = ctx.path(ctx.attr.marker).dirname
    for entry in folder.readdir():
        ctx.symlink(entry, entry.basename)

_tree_copy = repository_rule(
    implementation = _tree_copy_impl,
    attrs = {"marker": attr.label(allow_single_file = True)},
    local = True,
)

def _declare(name, rule, **kwargs):
    if not native.existing_rule(name):
        rule(name = name, **kwargs)

def dflow_deps():
    """Declares @rules_java, @rules_cc, @remote_coverage_tools and @dflow_cuda."""
    _declare("rules_java", native.local_repository, path = _DEBIAN_RULES_JAVA)

    # Debian's rules_cc is too new for Bazel 4.2.3; a shim re-exports the native rules.
    _declare("rules_cc", _tree_copy, marker = "@dflow//third_party/rules_cc:WORKSPACE")
    _declare(
        "remote_coverage_tools",
        _tree_copy,
        marker = "@dflow//third_party/remote_coverage_tools:WORKSPACE",
    )

    # Real CUDA when nvcc is found (DFLOW_CUDA_PATH, /usr/local/cuda), otherwise an
    # empty CPU-only stand-in.
    _declare("dflow_cuda", cuda_configure)
