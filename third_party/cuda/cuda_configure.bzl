"""Repository rule that finds the CUDA Toolkit.

Generates @dflow_cuda with:
  defs.bzl   CUDA_AVAILABLE (bool), NVCC (path or "")
  :cuda      headers + cudart + cuBLAS where CUDA exists; an empty library otherwise
A machine without nvcc therefore still builds a CPU-only dflow. DFLOW_CUDA_PATH=none
forces a CPU-only build where CUDA is installed (to check that path):
  bazel test --repo_env=DFLOW_CUDA_PATH=none //...
"""

def _find_cuda(ctx):
    candidates = []
    env_path = ctx.os.environ.get("DFLOW_CUDA_PATH", "")
    if env_path == "none":
        return None
    if env_path:
        candidates.append(env_path)
    candidates.append("/usr/local/cuda")
    for path in candidates:
        if ctx.path(path + "/bin/nvcc").exists and ctx.path(path + "/include/cuda_runtime.h").exists:
            return path
    return None

_CUDA_BUILD = """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "cuda_headers",
    hdrs = glob(["include/*.h", "include/crt/*.h", "include/crt/*.hpp"]),
    includes = ["include"],
)

cc_library(
    name = "cuda",
    linkopts = [
        "-L{path}/lib64",
        "-Wl,-rpath,{path}/lib64",
        "-lcublas",
        "-lcudart",
    ],
    deps = [":cuda_headers"],
)
"""

_NO_CUDA_BUILD = """
package(default_visibility = ["//visibility:public"])

cc_library(name = "cuda_headers")

cc_library(name = "cuda")
"""

def _cuda_configure_impl(ctx):
    path = _find_cuda(ctx)
    if path:
        ctx.symlink(path + "/include", "include")
        ctx.file("BUILD", _CUDA_BUILD.format(path = path))
        ctx.file("defs.bzl", "CUDA_AVAILABLE = True\nNVCC = \"%s/bin/nvcc\"\nCUDA_PATH = \"%s\"\n" % (path, path))
    else:
        ctx.file("BUILD", _NO_CUDA_BUILD)
        ctx.file("defs.bzl", "CUDA_AVAILABLE = False\nNVCC = \"\"\nCUDA_PATH = \"\"\n")

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["DFLOW_CUDA_PATH"],
    local = True,
)
