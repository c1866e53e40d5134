"""The stage engine with real stages that write real files."""

import json

from toolkit.stages import Stage, StageRunner


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
