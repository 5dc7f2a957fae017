"""cc_shared_library_of: one shared library holding every object of a C++ target's closure.

Bazel 4's cc_binary(linkshared = True) links its dependencies as archives, so a library
that nothing in the .so calls (all of dflow, for an outside program) is left out. This
rule links the PIC archive of every library in `deps`' closure whole, adds their link
flags (the system libraries stay shared, as DT_NEEDED entries) and refuses undefined
symbols, so the result is complete on its own.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

def _archives_and_flags(deps):
    archives, flags = [], []
    for dep in deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            for library in linker_input.libraries:
                archive = library.pic_static_library or library.static_library
                if archive and archive not in archives:
                    archives.append(archive)
            for flag in linker_input.user_link_flags:
                if flag not in flags:
                    flags.append(flag)
    return archives, flags

def _cc_shared_library_of_impl(ctx):
    toolchain = find_cpp_toolchain(ctx)
    archives, flags = _archives_and_flags(ctx.attr.deps)
    output = ctx.actions.declare_file(ctx.attr.name)
    args = ctx.actions.args()
    args.add_all(["-shared", "-o", output, "-Wl,-soname," + ctx.attr.soname, "-Wl,-z,defs"])
    args.add("-Wl,--whole-archive")
    args.add_all(archives)
    args.add("-Wl,--no-whole-archive")
    args.add_all(flags)
    args.add_all(["-lstdc++", "-lm", "-lpthread"])
    ctx.actions.run(
        executable = toolchain.compiler_executable,
        arguments = [args],
        inputs = depset(archives, transitive = [toolchain.all_files]),
        outputs = [output],
        mnemonic = "SharedLibrary",
        use_default_shell_env = True,  # gcc finds ld on PATH
        progress_message = "Linking %s" % output.short_path,
    )
    return [DefaultInfo(files = depset([output]))]

cc_shared_library_of = rule(
    implementation = _cc_shared_library_of_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "soname": attr.string(mandatory = True),
        "_cc_toolchain": attr.label(
            default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
        ),
    },
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    fragments = ["cpp"],
)
