"""toolkit.util.process.run, the one way the toolkit runs a tool and reports its failure: the error names
the work, the command, the exit code and the tool's last lines; Ctrl-C is an interruption."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import ROOT
from toolkit.util import process
from toolkit.util.errors import ToolkitError
from toolkit.util.process import run

FAILS = ["sh", "-c", "echo to-stdout; for i in $(seq 1 40); do echo line$i >&2; done; exit 3"]


def test_success_returns_the_output_text():
    proc = run(["sh", "-c", "echo out; echo err >&2"], "echo")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "out\n", "err\n")


def test_failure_names_the_work_the_command_the_exit_code_and_the_stderr_tail():
    with pytest.raises(ToolkitError) as err:
        run(FAILS, "counting", hint="count less")
    message = str(err.value)
    first, *tail = message.splitlines()
    assert first == f"counting failed (exit 3): `sh -c '{FAILS[2]}'`"
    lines = [line.strip() for line in tail if not line.startswith("  hint:")]
    assert lines == [f"line{i}" for i in range(41 - process.TAIL_LINES, 41)]  # the last lines of stderr
    assert not any("to-stdout" in line for line in tail)  # stdout is quoted only when stderr is empty
    assert err.value.hint == "count less"


def test_without_what_the_command_leads():
    with pytest.raises(ToolkitError, match=r"^`sh -c 'exit 4'` failed \(exit 4\)$"):
        run(["sh", "-c", "exit 4"])


def test_merged_output_is_quoted_in_order_and_shown_names_the_wrapped_command():
    with pytest.raises(ToolkitError) as err:
        run(["sh", "-c", "echo one; echo two >&2; exit 1"], "wrapped", output="merge", shown=["inner", "cmd"])
    assert str(err.value) == "wrapped failed (exit 1): `inner cmd`\n  one\n  two"


def test_check_false_returns_the_failure():
    proc = run(["sh", "-c", "echo nope >&2; exit 5"], "x", check=False)
    assert proc.returncode == 5 and proc.stderr == "nope\n"


def test_a_missing_tool_and_a_timeout_are_clear_errors(tmp_path):
    with pytest.raises(ToolkitError, match=f"probing: cannot start `{tmp_path}/no-such-tool -v`: No such file"):
        run([tmp_path / "no-such-tool", "-v"], "probing")
    with pytest.raises(ToolkitError,
                       match=r"waiting: `sleep 5` did not finish within its time limit of 0\.2 s and was killed"):
        run(["sleep", "5"], "waiting", timeout=0.2)


def test_log_file_holds_the_output_and_the_error_quotes_it(tmp_path):
    log_file = tmp_path / "logs" / "step.log"
    with pytest.raises(ToolkitError) as err:
        run(["sh", "-c", "echo building; echo broken >&2; exit 2"], "step", log_file=log_file)
    assert log_file.read_text() == "$ sh -c 'echo building; echo broken >&2; exit 2'\nbuilding\nbroken\n"
    assert f"its output is in {log_file}; the last lines:\n    $ sh -c" in str(err.value)
    assert str(err.value).endswith("    building\n    broken")


def test_env_cwd_input_and_umask_reach_the_tool(tmp_path):
    proc = run([sys.executable, "-c", "import os, sys; print(os.environ['X'], os.getcwd(), sys.stdin.read()); "
                "open('f', 'w').close()"], "env", env={**os.environ, "X": "yes"}, cwd=tmp_path, input="in",
               umask=0o077)
    assert proc.stdout == f"yes {tmp_path} in\n"
    assert (tmp_path / "f").stat().st_mode & 0o777 == 0o600


@pytest.fixture
def ctrl_c_reaches_tools():
    """SIGINT handled as a terminal's foreground job has it, whatever this suite inherited: a suite started in
    the background by a non-interactive shell has SIGINT ignored, and an ignored signal stays ignored in every
    tool it starts (a handled one is reset to the default when the tool is exec'd)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize("code", ["kill -INT $$", "exit 130"])
def test_a_tool_stopped_by_ctrl_c_is_an_interruption(code, ctrl_c_reaches_tools):
    with pytest.raises(KeyboardInterrupt):
        run(["sh", "-c", code], "interrupted", check=False)
    assert process.interrupted(-signal.SIGINT)


def _started_with_sigint_ignored(argv: list[str]) -> subprocess.CompletedProcess:
    """`argv` started as `cmd &` from a script starts it: SIGINT ignored."""
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))


def test_the_ctrl_c_test_gives_one_answer_however_the_suite_was_started():
    test = f"{Path(__file__).relative_to(ROOT)}::test_a_tool_stopped_by_ctrl_c_is_an_interruption"
    proc = _started_with_sigint_ignored([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "2 passed" in proc.stdout


def test_a_toolkit_started_with_ctrl_c_ignored_passes_that_on_to_its_tools():
    """The runner leaves the dispositions it inherited alone: whoever started the toolkit with SIGINT ignored
    (a background job) keeps its tools out of reach of a Ctrl-C meant for the foreground, as the toolkit is."""
    code = "from toolkit.util.process import run; run(['sh', '-c', 'kill -INT $$; echo carried on'])"
    proc = _started_with_sigint_ignored([sys.executable, "-c", code])
    assert proc.returncode == 0, proc.stderr


def test_undecodable_bytes_come_back_unchanged():
    proc = run(["sh", "-c", r"printf '\377ok'"])
    assert proc.stdout.encode("utf-8", "surrogateescape") == b"\xffok"


def test_run_pipe_streams_and_names_a_failing_side(tmp_path):
    from toolkit.util.process import run_pipe

    out = tmp_path / "out"
    run_pipe(["printf", "abc"], ["sh", "-c", f"cat > {out}"], "copying")
    assert out.read_text() == "abc"
    with pytest.raises(ToolkitError, match=r"^copying failed: sh exit 3, cat exit 0"):
        run_pipe(["sh", "-c", "echo oops >&2; exit 3"], ["cat"], "copying")
    with pytest.raises(ToolkitError, match="copying: cannot start /no/such/tool"):
        run_pipe(["/no/such/tool"], ["cat"], "copying")
