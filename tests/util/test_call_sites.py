"""Every place in toolkit/ that starts a process, found by walking the syntax trees: processes start only through
toolkit.util.process (run, run_tool, run_git) or the build-root sandbox on top of it, git only through run_git,
and every module that hands a runner a command line is listed here with the checks (toolkit.util.argcheck) its
outside values pass. A new call site fails this test until it is looked at and listed."""

from __future__ import annotations

import ast

from tests.support.tools import ROOT

PACKAGE = ROOT / "toolkit"

# Modules allowed to start processes themselves.
STARTERS = {
    "toolkit/util/process.py": "the runner every other module goes through",
    "toolkit/compile_check/driver.py": "runs inside a build root with the standard library only; its command lines "
                                       "are the compile database's, written by the toolkit",
}
# subprocess' names that start nothing (types, constants).
_INERT = {"CompletedProcess", "TimeoutExpired", "CalledProcessError", "PIPE", "STDOUT", "DEVNULL", "SubprocessError"}
_STARTING_OS = ("system", "popen", "exec", "spawn", "posix_spawn", "fork")

RUNNERS = {"toolkit.util.process": {"run", "run_tool", "run_git", "run_pipe"},
           "toolkit.buildroot.sandbox": {"run", "run_in_root"}, "toolkit.buildroot": {"run_in_root"}}

# Every module that hands a runner a command line: the argcheck functions its outside values pass (in this
# module or where they are read, named after ':'), or why nothing from outside reaches it.
REVIEWED: dict[str, tuple[str, ...]] = {
    "toolkit/sources/git.py": ("git_url", "git_commit", "git_url_problem", "plain"),
    "toolkit/smoke/decoys.py": ("the MinGW compiler on a source the toolkit writes, with DLL names checked by "
                                "_DLL_NAME and export names by _IDENTIFIER",),
    "toolkit/wheel/graft.py": ("patchelf on files the repair unpacked, with sonames the Resolver read from ELF",),
    "toolkit/sources/git_shadow.py": ("a folder in the toolkit cache, made by the toolkit (git init --bare)",),
    "toolkit/upstream/resolve.py": ("git_revision", "git_url", "git_url_problem"),
    "toolkit/cmake/commands.py": ("cmake_defines",),
    "toolkit/pipeline/adapters/configure.py": ("via toolkit/cmake/commands.py: configure_command",),
    "toolkit/pipeline/adapters/build.py": ("toolkit-made paths and --jobs (an integer); outputs.py's install",),
    "toolkit/cmake/toolchain.py": ("zig wrappers and toolkit-made paths",),
    "toolkit/cmake/mingw.py": ("the MinGW-w64 g++ named by toolkit/cmake/toolchains.toml, on os.devnull",),
    "toolkit/cmake/host_tools.py": ("via toolkit/cmake/commands.py: configure_command; a target name the recipe "
                                    "reader checked (recipe/sources.py: _cmake_target)",),
    "toolkit/sources/pypi.py": ("a wheel file name url_problem parsed (packaging's parse_wheel_filename), a sha256 "
                                "the recipe reader checked, toolkit-made paths",),
    "toolkit/smoke/wine.py": ("Windows paths of toolkit-made files; the EP name from the wheel's _wheel_info.json "
                              "and the recipe's [smoke] session_config as KEY=VALUE operands after the harness (it "
                              "parses no options)",),
    "toolkit/smoke/wine_inputs.py": ("pinned requirements and sha256 from toolkit/smoke/data/windows.toml; the MinGW "
                                     "compiler, wine and wineserver with toolkit-made paths",),
    "toolkit/wheel/licenses.py": ("dpkg-query on absolute paths of the libraries repair resolved, and on a package "
                                  "name dpkg-query itself gave",),
    "toolkit/cmake/link_inputs.py": ("ninja from PATH on the toolkit-made build folder, with target paths from "
                                     "ninja's own `-t targets` output (one starting with '-' left out)",),
    "toolkit/wheel/repair_windows.py": ("delvewheel from this Python on a toolkit-made wheel; DLL names from its "
                                        "members glued to --exclude=",),
    "toolkit/pipeline/adapters/survey.py": ("via toolkit/cmake/commands.py: configure_command",),
    "toolkit/container/engine.py": ("image_name", "env_assignment"),
    "toolkit/container/local_rootfs.py": ("plain",),
    "toolkit/release/compile_cache.py": ("the ccache found on PATH, constant options",),
    "toolkit/release/provenance.py": ("tools and options from toolkit/release/toolchain.json",),
    "toolkit/release/publish.py": ("twine from this Python; --repository-url checked there as an http(s) URL with a "
                                   "host, without its userinfo, glued to its option; absolute wheel paths",),
    "toolkit/buildroot/make.py": ("via toolkit/recipe/packageset.py: package, suite and variant patterns",),
    "toolkit/buildroot/record.py": ("a constant dpkg-query script",),
    "toolkit/buildroot/image.py": ("the engine found on PATH, a tag made of digests, the root's and venv's own paths",),
    "toolkit/buildroot/prune.py": ("the engine found on PATH; `rmi --` of tags the engine listed in the root's "
                                   "own repository",),
    "toolkit/release/reproducible.py": ("git log in the project's folder: no operand",),
    "toolkit/buildroot/session.py": ("via toolkit/buildroot/sandbox.py: argv after bwrap's --",),
    "toolkit/cli/root.py": ("via toolkit/buildroot/sandbox.py: argv after bwrap's --",),
    "toolkit/buildroot/sandbox.py": ("bind paths resolved and checked, argv after bwrap's --",),
    "toolkit/binary/patchelf.py": ("absolute library paths, RUNPATH glued to --set-rpath's value",),
    "toolkit/binary/hip.py": ("the HIP compiler's path, --offload-arch glued to its value",),
    "toolkit/compile_check/targets.py": ("via toolkit/binary/hip.py: the root's hipconfig and the clang it names, "
                                         "recipe targets glued to --offload-arch",),
    "toolkit/smoke/run.py": ("the smoke venv's python and a wheel path",),
    "toolkit/smoke/selfcheck.py": ("the smoke venv's python running constant code on the checker's path and "
                                         "a smoke env value as arguments, pip's constant options",),
    "toolkit/smoke/venvs.py": ("the venv's python, pip with wheel paths and requirement specifiers the smoke made",),
    "toolkit/release/in_root.py": ("this toolkit's own command line: the recipe's path, a matrix entry id, options "
                                   "the release's parser already checked",),
    "toolkit/wheel/rocm.py": ("dpkg with absolute library paths",),
    "toolkit/wheel/repair.py": ("auditwheel with absolute wheel and folder paths",),
    "toolkit/wheel/build.py": ("pip/scikit-build-core with toolkit-made paths",),
    "toolkit/hipify/perl.py": ("hipify-perl with a toolkit-made path",),
    "toolkit/compile_check/run.py": ("protoc with the recipe's .proto paths, checked where read "
                                     "(recipe/compile_check.py: _proto_file), as arguments: no shell; the driver "
                                     "with toolkit-made paths",),
    "toolkit/util/process.py": ("git_protocol_config",),
}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path))


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _starts_process(name: str, aliases: dict[str, str]) -> bool:
    head, _, attr = name.partition(".")
    full = f"{aliases.get(head, head)}.{attr}" if attr else aliases.get(head, head)
    module, _, function = full.rpartition(".")
    if module == "subprocess":
        return function not in _INERT
    if module == "os":
        return function.startswith(_STARTING_OS)
    return module in ("asyncio", "pty") and function.startswith(("create_subprocess", "spawn"))


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> what it is (`sp` -> `subprocess`, `run` -> `toolkit.util.process.run`)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update({a.asname or a.name: a.name for a in node.names})
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    return out


def _calls(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node, _dotted(node.func)


def test_only_the_runner_modules_start_processes():
    found = []
    for rel, tree in _modules():
        aliases = _aliases(tree)
        for node, name in _calls(tree):
            if name and _starts_process(name, aliases) and rel not in STARTERS:
                found.append(f"{rel}:{node.lineno}: {name}(...)")
        for node in ast.walk(tree):  # `from subprocess import run` would hide a call behind a plain name
            if isinstance(node, ast.ImportFrom) and node.module == "subprocess" and rel not in STARTERS:
                found += [f"{rel}:{node.lineno}: from subprocess import {a.name}" for a in node.names
                          if a.name not in _INERT]
    assert not found, "start processes through toolkit.util.process (run, run_tool, run_git):\n" + "\n".join(found)


def test_git_runs_only_through_run_git():
    found = []
    for rel, tree in _modules():
        if rel == "toolkit/util/process.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
                first = node.elts[0]
                if isinstance(first, ast.Constant) and first.value == "git":
                    found.append(f"{rel}:{node.lineno}")
    assert not found, "a git command line built outside run_git (its protocols and --end-of-options):\n" + \
        "\n".join(found)


def _runner_calls(tree: ast.Module) -> list[int]:
    aliases = _aliases(tree)
    lines = []
    for node, name in _calls(tree):
        head, _, attr = name.partition(".")
        full = f"{aliases.get(head, head)}.{attr}" if attr else aliases.get(head, "")
        module, _, function = full.rpartition(".")
        if function in RUNNERS.get(module, ()):
            lines.append(node.lineno)
    return lines


def test_every_command_line_a_runner_gets_is_reviewed():
    unlisted, unguarded, stale = [], [], set(REVIEWED) - {"toolkit/util/process.py"}
    for rel, tree in _modules():
        called = {name.rpartition(".")[2] for _, name in _calls(tree) if name.startswith("argcheck.")}
        guards = [g for g in REVIEWED.get(rel, ()) if g.isidentifier()]
        unguarded += [f"{rel}: argcheck.{g} is not called" for g in guards if g not in called]
        lines = _runner_calls(tree)
        if lines:
            stale.discard(rel)
            if rel not in REVIEWED:
                unlisted.append(f"{rel}: lines {lines}")
    assert not unlisted, ("new call sites of a runner: check every value from a recipe, lock or series file, the "
                          "command line or the environment with toolkit.util.argcheck, then list the module in "
                          "REVIEWED:\n" + "\n".join(unlisted))
    assert not unguarded, "\n".join(unguarded)
    # A module that only spells command lines for others (cmake/commands.py: configure_command) keeps its entry
    # for its guards, which are checked above.
    stale = {rel for rel in stale if not any(g.isidentifier() for g in REVIEWED[rel])}
    assert not stale, f"listed in REVIEWED but no longer calling a runner: {sorted(stale)}"


_SHELLS = ("sh", "bash", "/bin/sh", "/bin/bash")


def test_no_shell_runs_a_script_made_from_values():
    """A shell's `-c` script is a constant of the toolkit's (toolkit/buildroot/record.py's dpkg-query script), never
    text put together from values (a recipe's, a user's): those go to the tool as arguments."""
    found = []
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) >= 3:
                shell, flag, script = node.elts[:3]
                if (isinstance(shell, ast.Constant) and shell.value in _SHELLS and isinstance(flag, ast.Constant)
                        and flag.value == "-c" and not isinstance(script, (ast.Constant, ast.Name))):
                    found.append(f"{rel}:{node.lineno}")
    assert not found, "a shell script built from values (run the tool with an argument list):\n" + "\n".join(found)


def test_the_walk_sees_the_known_call_sites():
    """The scan is not vacuous: it finds the call sites this issue is about."""
    trees = dict(_modules())
    assert _runner_calls(trees["toolkit/sources/git.py"]) and _runner_calls(trees["toolkit/container/engine.py"])
    assert _runner_calls(trees["toolkit/buildroot/make.py"])
    assert _runner_calls(trees["toolkit/pipeline/adapters/build.py"])
    assert _runner_calls(trees["toolkit/compile_check/run.py"])  # run_in_root imported from toolkit.buildroot
    bad = ast.parse("import subprocess as sp\nfrom os import system\nsp.run(['x'])\nsystem('x')\n")
    aliases = _aliases(bad)
    assert [name for _, name in _calls(bad) if _starts_process(name, aliases)] == ["sp.run", "system"]
