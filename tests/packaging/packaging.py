#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""relaxvm as its users get it (the 'packaging' suite, tests/meson.build).

A fresh minimal build of this checkout (no tests, examples, benchmarks, tool or Python module) is
installed into <work>/prefix once for all the tests of a run (under a lock; again only when the
installed inputs change), and then each test builds tests/packaging/main.cpp as a consumer:

  install             the installed files: include/ and single_include/ complete, the CMake package,
                      both pkg-config files, the sources of separate compilation, and no DLPack header
  cmake               find_package(relaxvm) from a copy of the prefix moved elsewhere (the package
                      finds its prefix from where it is), targets relaxvm::relaxvm, relaxvm::single and
                      relaxvm::compiled_core (with <relaxvm.hpp> precompiled: target_precompile_headers);
                      a request for relaxvm 1.0 is refused (SameMajorVersion)
  cmake_subdirectory  add_subdirectory(<checkout>) (the top-level CMakeLists.txt), relaxvm::relaxvm and
                      relaxvm::compiled_core built and run, relaxvm::single's command checked
  pkg_config          `pkg-config --cflags relaxvm` and relaxvm-single
  meson_subproject    dependency('relaxvm'), dependency('relaxvm-single') and
                      dependency('relaxvm-compiled-core') with subprojects/relaxvm a link to the
                      checkout: nothing of relaxvm's is built by default (no test_group_vm target, no
                      ninja step in subprojects/relaxvm) unless -Drelaxvm:subproject_extras=true

DLPack lies in a prefix of its own (<work>/dlpack: its header, a CMake package and a pkg-config file),
as a user's build of it would: relaxvm's prefix is installed with it on PKG_CONFIG_PATH, and each
consumer must get -I<work>/dlpack/include from relaxvm's package (CMake: dlpack::dlpack; pkg-config:
Requires: dlpack), not from its own flags. (This machine's /usr/include has DLPack too; the checks
read the compile commands.)

  pip                 `pip install --no-build-isolation --no-index .` (pyproject.toml, setup.py) into a
                      virtual environment over Debian's Python packages, offline: `import relaxvm`
                      works there and its version is the headers'

Each consumer program runs on the VM and prints `relaxvm <version> (headers|single|compiled): main(7) = 42`.
A program built against the compiled library (separate compilation) must hold none of the VM, the
verifier or the builtins' registration in its own object file; the header-only one holds them.

usage: packaging.py TEST --source-root DIR --work DIR --version V --cmake PATH --pkg-config PATH -- CXX...
"""

import argparse
import fcntl
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

SKIP = 77  # meson test's exit status for a skipped test


def run(cmd, cwd=None, env=None, capture=True):
    """Runs cmd; on failure prints its output and stops the test."""
    print("$", " ".join(str(c) for c in cmd), flush=True)
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, text=True,
                       stdout=subprocess.PIPE if capture else None, stderr=subprocess.STDOUT if capture else None)
    if p.returncode != 0:
        if capture:
            print(p.stdout)
        sys.exit(f"FAILED ({p.returncode}): {' '.join(str(c) for c in cmd)}")
    return p.stdout if capture else ""


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        sys.exit(f"FAILED: {what}")


def tool_env(args, **extra):
    env = dict(os.environ)
    env["CXX"] = " ".join(args.cxx)
    # Only what the test names: no installed relaxvm from elsewhere.
    env.pop("PKG_CONFIG_PATH", None)
    env.pop("CMAKE_PREFIX_PATH", None)
    env.update(extra)
    return env


def fresh(path: pathlib.Path) -> pathlib.Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def installed_inputs(src: pathlib.Path, args) -> str:
    """A hash of everything the install depends on."""
    h = hashlib.sha256()
    files = [src / "meson.build", src / "meson_options.txt", pathlib.Path(__file__).resolve()]
    for d in ("cmake", "include", "single_include", "src"):
        files += sorted(p for p in (src / d).rglob("*") if p.is_file())
    for f in files:
        h.update(str(f.relative_to(src) if f.is_relative_to(src) else f.name).encode() + b"\0")
        h.update(f.read_bytes())
    h.update(" ".join(args.cxx).encode())
    return h.hexdigest()


def dlpack_prefix(args) -> pathlib.Path:
    """DLPack in a prefix of its own, as built from its sources: include/dlpack/dlpack.h, a CMake
    package (dlpack::dlpack) and a pkg-config file."""
    prefix = args.work / "dlpack"
    args.work.mkdir(parents=True, exist_ok=True)
    with open(args.work / "dlpack.lock", "w") as lock:  # the tests run in parallel
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (prefix / "lib" / "pkgconfig" / "dlpack.pc").is_file():
            write_dlpack_prefix(prefix)
    return prefix


def write_dlpack_prefix(prefix: pathlib.Path):
    header = pathlib.Path("/usr/include/dlpack/dlpack.h")
    (prefix / "include" / "dlpack").mkdir(parents=True, exist_ok=True)
    shutil.copy(header, prefix / "include" / "dlpack" / "dlpack.h")
    (prefix / "lib" / "cmake" / "dlpack").mkdir(parents=True, exist_ok=True)
    (prefix / "lib" / "cmake" / "dlpack" / "dlpackConfig.cmake").write_text(
        'get_filename_component(_dlpack_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)\n'
        "if(NOT TARGET dlpack::dlpack)\n"
        "  add_library(dlpack::dlpack INTERFACE IMPORTED)\n"
        '  set_target_properties(dlpack::dlpack PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_dlpack_prefix}/include")\n'
        "endif()\n")
    (prefix / "lib" / "pkgconfig").mkdir(parents=True, exist_ok=True)
    (prefix / "lib" / "pkgconfig" / "dlpack.pc").write_text(
        f"prefix={prefix}\nincludedir=${{prefix}}/include\n\nName: dlpack\nDescription: DLPack\nVersion: 0.6\n"
        "Cflags: -I${includedir}\n")


def ensure_prefix(args) -> pathlib.Path:
    """Configures and installs the minimal build into <work>/prefix, once per change of its inputs."""
    src, work = args.source_root, args.work
    work.mkdir(parents=True, exist_ok=True)
    prefix, build, stamp = work / "prefix", work / "relaxvm-build", work / "prefix.stamp"
    with open(work / "prefix.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        digest = installed_inputs(src, args)
        if stamp.exists() and stamp.read_text() == digest and prefix.is_dir():
            return prefix
        stamp.unlink(missing_ok=True)
        shutil.rmtree(build, ignore_errors=True)
        shutil.rmtree(prefix, ignore_errors=True)
        meson = shutil.which("meson")
        dlpack_pc = dlpack_prefix(args) / "lib" / "pkgconfig"
        run([meson, "setup", build, src, "--prefix", prefix, "-Dtests=false", "-Dexamples=false", "-Dbench=false",
             "-Dtool=false", "-Dpython=false"], env=tool_env(args, PKG_CONFIG_PATH=str(dlpack_pc)))
        run([meson, "install", "-C", build], env=tool_env(args))
        stamp.write_text(digest)
    return prefix


def pc_dir(prefix: pathlib.Path) -> pathlib.Path:
    found = sorted(prefix.rglob("relaxvm.pc"))
    check(len(found) == 1, f"one relaxvm.pc under the prefix ({[str(p) for p in found]})")
    return found[0].parent


def expect_run(exe: pathlib.Path, layout: str, args):
    out = run([exe]).strip()
    print(out)
    check(out == f"relaxvm {args.version} ({layout}): main(7) = 42", f"{exe.name} runs on the {layout} layout")


# What a header-only program's object defines and one built against the compiled library must not:
# members of the VM's implementation, of the verifier, and the builtins' registration, as mangled
# names of members of those classes (a member of another class that only names them in a template
# argument does not count).
COMPILED_PARTS = {
    "detail::basic_vm_impl<void>::*": re.compile(r"^_ZNK?7relaxvm[0-9]+v[0-9a-z_]*?6detail13basic_vm_implIvE"),
    "detail::verifier::*": re.compile(r"^_ZNK?7relaxvm[0-9]+v[0-9a-z_]*?6detail8verifier"),
    "basic_registry::add_entry<...>": re.compile(r"^_ZNK?7relaxvm[0-9]+v[0-9a-z_]*?14basic_registry9add_entryI"),
}


def check_separate(obj: pathlib.Path, separate: bool):
    """`obj` defines the compiled parts (header-only) or none of them (separate compilation)."""
    defined = [line.split()[-1] for line in run(["nm", "--defined-only", obj]).splitlines() if line.strip()]
    found = sorted({name for name, pattern in COMPILED_PARTS.items() for sym in defined if pattern.match(sym)})
    if separate:
        check(not found, f"{obj.name} (separate compilation) defines none of {list(COMPILED_PARTS)} (found {found})")
    else:
        check(len(found) == len(COMPILED_PARTS), f"{obj.name} (header-only) defines {found}")


def object_of(build: pathlib.Path, target: str) -> pathlib.Path:
    """The object file of main.cpp in `target` (CMake: CMakeFiles/<target>.dir/..., meson: <target>.p/)."""
    found = sorted(build.glob(f"CMakeFiles/{target}.dir/**/main.cpp.o")) + sorted(build.glob(f"{target}.p/main.cpp.o"))
    check(len(found) == 1, f"one object of main.cpp for {target} ({[str(p) for p in found]})")
    return found[0]


def compile_command(build: pathlib.Path, source_name: str, target: str) -> str:
    """The compile command of `target`'s object in a CMake build's compile_commands.json."""
    for entry in json.loads((build / "compile_commands.json").read_text()):
        if f"/{target}.dir/" in entry.get("output", entry["command"]) and entry["file"].endswith(source_name):
            return entry["command"]
    sys.exit(f"FAILED: no compile command for {target} in {build / 'compile_commands.json'}")


STD20 = re.compile(r"-std=(gnu|c)\+\+(20|2a)\b")


def cmake_configure_build(args, consumer_build: pathlib.Path, defines: list, targets=()) -> str:
    launcher = args.cxx[:-1]
    cmd = [args.cmake, "-S", args.source_root / "tests" / "packaging" / "cmake_consumer", "-B", consumer_build,
           "-G", "Ninja", f"-DCMAKE_CXX_COMPILER={args.cxx[-1]}", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"] + defines
    if launcher:
        cmd.append(f"-DCMAKE_CXX_COMPILER_LAUNCHER={';'.join(launcher)}")
    out = run(cmd, env=tool_env(args))
    print(out)
    run([args.cmake, "--build", consumer_build] + [a for t in targets for a in ("--target", t)], env=tool_env(args))
    return out


# ---- the tests ----

def test_install(args):
    prefix = ensure_prefix(args)
    src = args.source_root
    inc = prefix / "include"

    def tree(root):
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}

    headers = tree(src / "include")
    installed = {p for p in tree(inc) if not p.startswith("relaxvm-single/")}
    check(installed == headers, f"include/ installed whole ({len(headers)} files) in <prefix>/include")
    single = tree(src / "single_include")
    check(tree(inc / "relaxvm-single") == single,
          f"single_include/ installed whole ({sorted(single)}) in <prefix>/include/relaxvm-single")
    check((inc / "relaxvm-single" / "relaxvm.hpp").read_bytes() == (src / "single_include" / "relaxvm.hpp").read_bytes(),
          "the installed single header is single_include/relaxvm.hpp")
    cmake_dir = prefix / "share" / "cmake" / "relaxvm"
    for f in ("relaxvm-config.cmake", "relaxvm-config-version.cmake"):
        check((cmake_dir / f).is_file(), f"<prefix>/share/cmake/relaxvm/{f}")
    check(f'set(PACKAGE_VERSION "{args.version}")' in (cmake_dir / "relaxvm-config-version.cmake").read_text(),
          f"the CMake version file says {args.version}")
    pcs = pc_dir(prefix)
    for name, subdir in (("relaxvm", ""), ("relaxvm-single", "/relaxvm-single")):
        text = (pcs / f"{name}.pc").read_text()
        print(f"---- {(pcs / (name + '.pc')).relative_to(prefix)}\n{text}----")
        check(f"Version: {args.version}" in text and f"Cflags: -I${{includedir}}{subdir}" in text,
              f"{name}.pc: version {args.version}, -I${{includedir}}{subdir}")
        check("Requires: dlpack" in text, f"{name}.pc: Requires: dlpack")
    check(not any(p.name == "dlpack.h" for p in prefix.rglob("*")), "no DLPack header installed (a dependency)")
    sources = {p.name for p in (src / "src").glob("*.cpp")}
    check({p.name for p in (prefix / "share" / "relaxvm" / "src").glob("*")} == sources,
          f"src/ installed in <prefix>/share/relaxvm/src ({sorted(sources)})")
    check((cmake_dir / "relaxvm-compiled.cmake").is_file(), "<prefix>/share/cmake/relaxvm/relaxvm-compiled.cmake")
    check(not (prefix / "bin").exists(), "nothing but headers and package files installed")


def test_cmake(args):
    prefix = ensure_prefix(args)
    work = fresh(args.work / "cmake")
    # A copy elsewhere: the package must find its prefix from where it is, not where meson put it.
    moved = work / "moved-prefix"
    shutil.copytree(prefix, moved, symlinks=True)
    build = work / "build"
    dlpack = dlpack_prefix(args)
    out = cmake_configure_build(args, build, [f"-DCMAKE_PREFIX_PATH={moved};{dlpack}"])
    check(f"relaxvm_VERSION={args.version}" in out, f"find_package(relaxvm 0.1) found version {args.version}")
    expect_run(build / "app", "headers", args)
    expect_run(build / "app_single", "single", args)
    expect_run(build / "app_compiled", "compiled", args)
    check_separate(object_of(build, "app"), separate=False)
    check_separate(object_of(build, "app_compiled"), separate=True)
    app, single = compile_command(build, "main.cpp", "app"), compile_command(build, "main.cpp", "app_single")
    print(app, single, sep="\n")
    check(f"{moved}/include" in app and str(prefix) not in app, "relaxvm::relaxvm: -I<moved prefix>/include")
    check(f"{dlpack}/include" in app and f"{dlpack}/include" in single,
          "relaxvm::relaxvm and relaxvm::single: DLPack's include directory (dlpack::dlpack)")
    check("cmake_pch" in compile_command(build, "main.cpp", "app_compiled"),
          "app_compiled: <relaxvm.hpp> precompiled (target_precompile_headers)")
    core = compile_command(build, "core.cpp", "relaxvm_compiled_core")
    check(f"{moved}/share/relaxvm/src/core.cpp" in core and "-DRELAXVM_SEPARATE_COMPILATION" in core,
          "relaxvm::compiled_core: <moved prefix>/share/relaxvm/src/core.cpp, -DRELAXVM_SEPARATE_COMPILATION")
    check(f"{moved}/include/relaxvm-single" in single and str(prefix) not in single,
          "relaxvm::single: -I<moved prefix>/include/relaxvm-single")
    check(bool(STD20.search(app)) and bool(STD20.search(single)), "both targets compile as C++20 (cxx_std_20)")


def test_cmake_subdirectory(args):
    build = fresh(args.work / "cmake-subdirectory") / "build"
    # Two programs built and run (the test `cmake` runs all three targets); app_single's command is checked.
    dlpack = dlpack_prefix(args)
    cmake_configure_build(args, build, [f"-DRELAXVM_SOURCE_DIR={args.source_root}", f"-DCMAKE_PREFIX_PATH={dlpack}"],
                          targets=["app", "app_compiled"])
    expect_run(build / "app", "headers", args)
    expect_run(build / "app_compiled", "compiled", args)
    check_separate(object_of(build, "app_compiled"), separate=True)
    app, single = compile_command(build, "main.cpp", "app"), compile_command(build, "main.cpp", "app_single")
    print(app, single, sep="\n")
    check(f"{args.source_root}/include" in app, "relaxvm::relaxvm: -I<checkout>/include")
    check(f"{dlpack}/include" in app, "relaxvm::relaxvm: DLPack's include directory (dlpack::dlpack)")
    check(f"{args.source_root}/single_include" in single, "relaxvm::single: -I<checkout>/single_include")
    check(bool(STD20.search(app)) and bool(STD20.search(single)), "both targets compile as C++20 (cxx_std_20)")


def test_pkg_config(args):
    prefix = ensure_prefix(args)
    work = fresh(args.work / "pkg-config")
    dlpack = dlpack_prefix(args)
    env = tool_env(args, PKG_CONFIG_PATH=f"{pc_dir(prefix)}:{dlpack / 'lib' / 'pkgconfig'}")
    for name, layout in (("relaxvm", "headers"), ("relaxvm-single", "single")):
        version = run([args.pkg_config, "--modversion", name], env=env).strip()
        check(version == args.version, f"pkg-config --modversion {name} = {version}")
        cflags = run([args.pkg_config, "--cflags", name], env=env).split()
        print(" ".join(cflags))
        check(f"-I{dlpack}/include" in cflags, f"pkg-config --cflags {name}: -I<dlpack prefix>/include (Requires: dlpack)")
        exe = work / f"app_{layout}"
        # c++ -std=c++20 $(pkg-config --cflags relaxvm) main.cpp
        run(args.cxx + ["-std=c++20"] + cflags + [args.source_root / "tests" / "packaging" / "main.cpp", "-o", exe])
        expect_run(exe, layout, args)


def ninja_steps(build: pathlib.Path) -> list:
    out = run([shutil.which("ninja"), "-C", build, "-n"])
    return [line for line in out.splitlines() if line.startswith("[")]


def test_meson_subproject(args):
    work = fresh(args.work / "meson-subproject")
    src = work / "src"
    (src / "subprojects").mkdir(parents=True)
    shutil.copy(args.source_root / "tests" / "packaging" / "meson_consumer" / "meson.build", src)
    shutil.copy(args.source_root / "tests" / "packaging" / "main.cpp", src)
    (src / "subprojects" / "relaxvm").symlink_to(args.source_root, target_is_directory=True)
    build = work / "build"
    meson = shutil.which("meson")
    # The subproject even where a relaxvm is installed (dependency() would take it first).
    run([meson, "setup", build, src, "--force-fallback-for=relaxvm,relaxvm-single,relaxvm-compiled-core"],
        env=tool_env(args))
    steps = ninja_steps(build)
    print("\n".join(steps))
    print(f"a consumer's build: {len(steps)} ninja steps")
    check(not any("subprojects/relaxvm" in s for s in steps), "no ninja step builds anything of relaxvm's")
    targets = run([shutil.which("ninja"), "-C", build, "-t", "targets", "all"])
    check("test_group_vm" not in targets, "no test_group_vm target (relaxvm's unit tests)")
    # One program built and run (the other tests run both layouts); app_single's command is checked.
    run([shutil.which("ninja"), "-C", build, "app", "app_compiled"])
    expect_run(build / "app", "headers", args)
    expect_run(build / "app_compiled", "compiled", args)
    check_separate(object_of(build, "app_compiled"), separate=True)
    commands = {e["output"]: e["command"] for e in json.loads((build / "compile_commands.json").read_text())}
    single = next((c for o, c in commands.items() if o.startswith("app_single.p/")), "")
    print(single)
    check("subprojects/relaxvm/single_include" in single,
          "dependency('relaxvm-single'): -I<subprojects/relaxvm>/single_include")
    # Asked for, relaxvm's tests are there again.
    run([meson, "setup", "--reconfigure", build, src, "-Drelaxvm:subproject_extras=true", "-Drelaxvm:examples=false",
         "-Drelaxvm:bench=false", "-Drelaxvm:tool=false", "-Drelaxvm:python=false"], env=tool_env(args))
    targets = run([shutil.which("ninja"), "-C", build, "-t", "targets", "all"])
    check("subprojects/relaxvm/tests/test_group_vm" in targets,
          "with -Drelaxvm:subproject_extras=true: a test_group_vm target")


def test_pip(args):
    python = pathlib.Path("/usr/bin/python3")  # Debian's, with python3-numpy and python3-setuptools
    probe = subprocess.run([python, "-c", "import numpy, setuptools, venv"], capture_output=True)
    if probe.returncode != 0 or not pathlib.Path("/usr/include/pybind11/pybind11.h").is_file():
        print("Debian's python3-numpy, python3-setuptools, python3-venv or pybind11-dev is missing: skipped")
        sys.exit(SKIP)
    work = fresh(args.work / "pip")
    # A copy of what pip reads, so that its in-tree build leaves the checkout as it was.
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy(args.source_root / name, src)
    for name in ("include", "python"):
        shutil.copytree(args.source_root / name, src / name)
    venv = work / "venv"
    run([python, "-m", "venv", "--system-site-packages", venv])
    # --no-index: nothing from the network; --no-build-isolation: Debian's setuptools builds it.
    env = tool_env(args)
    env["CXX"] = args.cxx[-1]
    env["CC"] = args.cxx[-1]  # setuptools links the module with CC's driver
    # The recipe is under test, not the module's speed: unoptimized and without debug information
    # (appended after Python's own -O2 -g, so these win) it builds in a fraction of the time.
    env["CFLAGS"] = "-O0 -g0"
    run([venv / "bin" / "pip", "install", "--no-build-isolation", "--no-index", src], env=env)
    out = run([venv / "bin" / "python", "-c",
               "import relaxvm; print(relaxvm.__name__, relaxvm.__file__, hasattr(relaxvm, 'VirtualMachine'))"],
              cwd=work).strip()
    print(out)
    check(out.startswith("relaxvm ") and str(venv) in out and out.endswith(" True"),
          "import relaxvm finds the installed module, with relaxvm.VirtualMachine")
    meta = (src / "pyproject.toml").read_text()
    check(f'version = "{args.version}"' in meta, f"pyproject.toml's version is the headers' ({args.version})")


TESTS = {
    "install": test_install,
    "cmake": test_cmake,
    "cmake_subdirectory": test_cmake_subdirectory,
    "pkg_config": test_pkg_config,
    "meson_subproject": test_meson_subproject,
    "pip": test_pip,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("test", choices=sorted(TESTS))
    ap.add_argument("--source-root", type=pathlib.Path, required=True)
    ap.add_argument("--work", type=pathlib.Path, required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--cmake")
    ap.add_argument("--pkg-config")
    ap.add_argument("cxx", nargs="+", help="the C++ compiler command (after --)")
    args = ap.parse_args()
    args.source_root = args.source_root.resolve()
    args.work = args.work.resolve()
    if args.test.startswith("cmake") and not args.cmake:
        print("cmake is missing (tools/setup.sh installs it): skipped")
        sys.exit(SKIP)
    if args.test == "pkg_config" and not args.pkg_config:
        print("pkg-config is missing (tools/setup.sh installs it): skipped")
        sys.exit(SKIP)
    if shutil.which("ninja") is None or shutil.which("meson") is None:
        print("meson or ninja is not on PATH: skipped")
        sys.exit(SKIP)
    TESTS[args.test](args)


if __name__ == "__main__":
    main()
