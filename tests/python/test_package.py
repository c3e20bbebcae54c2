"""The `tpusim` Python package runs the CLI and returns its parsed reports."""

import pytest

import tpusim


def test_execute_returns_the_timed_metrics(source_dir):
    timed = tpusim.execute(source_dir / "scenarios/hlo/add_f32.hlo", chip="tpu-v5e",
                           mode="timing")
    assert timed.ok
    assert timed.data["chip"] == "tpu-v5e"
    assert timed.data["cycles"] > 0
    assert any(op["opcode"] == "add" for op in timed.data["ops"])


def test_bad_input_raises_with_tpusims_located_message(tmp_path):
    broken = tmp_path / "broken.hlo"
    broken.write_text("HloModule m\n\nENTRY e {\n  p = f32[4 parameter(0)\n}\n")
    with pytest.raises(tpusim.TpusimError) as raised:
        tpusim.execute(broken, chip="tpu-v5e", mode="timing")
    assert raised.value.returncode == 2
    assert f"{broken}:4:" in str(raised.value)


def test_diff_reports_a_regression_with_its_cause(source_dir):
    changed = tpusim.diff(source_dir / "scenarios/relayout_copy/before.hlo",
                          source_dir / "scenarios/relayout_copy/after.hlo", chip="tpu-v5e")
    assert changed.returncode == 1
    assert not changed.ok
    assert changed.data["verdict"] == "regression"
    assert "copy" in changed.data["headline"]
    same = tpusim.diff(source_dir / "scenarios/relayout_copy/before.hlo",
                       source_dir / "scenarios/relayout_copy/before.hlo", chip="tpu-v5e")
    assert same.ok and same.data["verdict"] != "regression"


def test_run_reports_every_scenario(source_dir):
    suite = tpusim.run(source_dir / "scenarios/smoke", golden_dir=source_dir / "golden")
    assert suite.ok
    assert suite.data["passed"] == len(suite.data["scenarios"]) == 4
    only = tpusim.run(source_dir / "scenarios/smoke", golden_dir=source_dir / "golden",
                      name_glob="mlp-*")
    assert sorted(s["name"] for s in only.data["scenarios"]) == ["mlp-bf16-v5e",
                                                                "mlp-bf16-v5e-fast-hbm"]


def test_a_missing_binary_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("TPUSIM", str(tmp_path / "no-such-tpusim"))
    with pytest.raises(tpusim.TpusimError, match="no-such-tpusim is not an executable"):
        tpusim.execute("any.hlo")
