"""The stage engine with real stages that write real files."""

import json
import os

import pytest

from toolkit.pipeline.runner import Stage, StageRunner
from toolkit.util.errors import ToolkitError


def make_stages(tmp_path, calls, params):
    out_a, out_b = tmp_path / "a.txt", tmp_path / "b.txt"

    def run_a():
        calls.append("a")
        out_a.write_text(params["a"])

    def run_b():
        calls.append("b")
        out_b.write_text(out_a.read_text() + params["b"])

    return [
        Stage("a", lambda: {"a": params["a"]}, [out_a], run_a, lambda: [f"write {out_a}"]),
        Stage("b", lambda: {"b": params["b"]}, [out_b], run_b, lambda: [f"write {out_b}"]),
    ]


def test_unchanged_stages_are_skipped(tmp_path, capsys):
    calls, params = [], {"a": "1", "b": "2"}
    runner = StageRunner(tmp_path / "state")
    runner.run(make_stages(tmp_path, calls, params))
    assert calls == ["a", "b"]
    results = runner.run(make_stages(tmp_path, calls, params))
    assert calls == ["a", "b"]
    assert [r.ran for r in results] == [False, False]
    assert "a: skipped (inputs unchanged" in capsys.readouterr().err


def test_downstream_change_reruns_only_downstream(tmp_path):
    calls, params = [], {"a": "1", "b": "2"}
    runner = StageRunner(tmp_path / "state")
    runner.run(make_stages(tmp_path, calls, params))
    params["b"] = "3"
    runner.run(make_stages(tmp_path, calls, params))
    assert calls == ["a", "b", "b"]
    assert (tmp_path / "b.txt").read_text() == "13"


def test_upstream_change_reruns_everything_after_it(tmp_path):
    calls, params = [], {"a": "1", "b": "2"}
    runner = StageRunner(tmp_path / "state")
    runner.run(make_stages(tmp_path, calls, params))
    params["a"] = "9"
    runner.run(make_stages(tmp_path, calls, params))
    assert calls == ["a", "b", "a", "b"]
    assert (tmp_path / "b.txt").read_text() == "92"


def test_missing_output_reruns_stage(tmp_path):
    calls, params = [], {"a": "1", "b": "2"}
    runner = StageRunner(tmp_path / "state")
    runner.run(make_stages(tmp_path, calls, params))
    (tmp_path / "b.txt").unlink()
    runner.run(make_stages(tmp_path, calls, params))
    assert calls == ["a", "b", "b"]


def test_failed_stage_records_nothing_and_runs_again(tmp_path):
    calls = []

    def boom():
        calls.append("boom")
        raise RuntimeError("interrupted")

    stage = Stage("x", lambda: {"v": 1}, [], boom)
    runner = StageRunner(tmp_path / "state")
    for _ in range(2):
        try:
            runner.run([stage])
        except RuntimeError:
            pass
    assert calls == ["boom", "boom"]
    assert not (tmp_path / "state" / "x.json").exists()


def test_dry_run_prints_plan_and_creates_nothing(tmp_path, capsys):
    calls, params = [], {"a": "1", "b": "2"}
    runner = StageRunner(tmp_path / "state", dry_run=True)
    runner.run(make_stages(tmp_path, calls, params))
    assert calls == []
    assert list(tmp_path.iterdir()) == []
    out = capsys.readouterr()
    assert f"a: write {tmp_path / 'a.txt'}" in out.out
    assert f"b: write {tmp_path / 'b.txt'}" in out.out
    assert "would run: first run" in out.err


def test_state_is_json_with_fingerprint(tmp_path):
    calls, params = [], {"a": "1", "b": "2"}
    StageRunner(tmp_path / "state").run(make_stages(tmp_path, calls, params))
    state = json.loads((tmp_path / "state" / "a.json").read_text())
    assert len(state["fingerprint"]) == 64


def test_changed_output_reruns_its_stage(tmp_path):
    calls, params = [], {"a": "1", "b": "2"}
    runner = StageRunner(tmp_path / "state")
    runner.run(make_stages(tmp_path, calls, params))
    (tmp_path / "a.txt").write_text("x")
    results = runner.run(make_stages(tmp_path, calls, params))
    # a wrote back what b was made from, byte for byte: b stays as it is.
    assert calls == ["a", "b", "a"]
    assert [r.ran for r in results] == [True, False]
    assert (tmp_path / "a.txt").read_text() == "1"
    assert (tmp_path / "b.txt").read_text() == "12"


def test_same_size_output_with_other_content_reruns(tmp_path):
    calls, params = [], {"a": "1", "b": "2"}
    runner = StageRunner(tmp_path / "state")
    runner.run(make_stages(tmp_path, calls, params))
    out = tmp_path / "b.txt"
    st = out.stat()
    out.write_text("99")
    os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    runner.run(make_stages(tmp_path, calls, params))
    assert calls == ["a", "b", "b"]
    assert out.read_text() == "12"


def test_touched_output_with_same_content_does_not_rerun(tmp_path):
    calls, params = [], {"a": "1", "b": "2"}
    runner = StageRunner(tmp_path / "state")
    runner.run(make_stages(tmp_path, calls, params))
    os.utime(tmp_path / "a.txt", ns=(1, 10**18))
    results = runner.run(make_stages(tmp_path, calls, params))
    assert calls == ["a", "b"]
    assert [r.ran for r in results] == [False, False]
    # The new mtime is recorded, so the content is not hashed again next time.
    state = json.loads((tmp_path / "state" / "a.json").read_text())
    assert state["outputs"][str(tmp_path / "a.txt")]["mtime_ns"] == 10**18


def test_folder_output_with_a_file_removed_reruns(tmp_path):
    calls = []
    out = tmp_path / "tree"

    def run():
        calls.append("t")
        for name in ("x", "y"):
            (out / "sub").mkdir(parents=True, exist_ok=True)
            (out / "sub" / name).write_text(name)

    stage = Stage("tree", lambda: {}, [out], run)
    runner = StageRunner(tmp_path / "state")
    runner.run([stage])
    runner.run([stage])
    assert calls == ["t"]
    (out / "sub" / "y").unlink()
    results = runner.run([stage])
    assert calls == ["t", "t"] and results[0].ran
    assert (out / "sub" / "y").read_text() == "y"


def test_stage_that_leaves_an_output_missing_is_not_recorded(tmp_path):
    calls = []
    missing = tmp_path / "never-written"
    stage = Stage("x", lambda: {}, [missing], lambda: calls.append("x"))
    runner = StageRunner(tmp_path / "state")
    with pytest.raises(ToolkitError, match=f"stage x finished without producing {missing}"):
        runner.run([stage])
    assert not (tmp_path / "state" / "x.json").exists()
    with pytest.raises(ToolkitError):
        runner.run([stage])
    assert calls == ["x", "x"]


def test_state_written_before_output_records_runs_again(tmp_path):
    """A state file of the old format (no output records) cannot vouch for the outputs."""
    calls, params = [], {"a": "1", "b": "2"}
    runner = StageRunner(tmp_path / "state")
    runner.run(make_stages(tmp_path, calls, params))
    state_file = tmp_path / "state" / "b.json"
    state = json.loads(state_file.read_text())
    del state["outputs"]
    state_file.write_text(json.dumps(state))
    runner.run(make_stages(tmp_path, calls, params))
    assert calls == ["a", "b", "b"]
