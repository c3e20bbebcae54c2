"""The pytest plugin turns each scenario file into a test item."""

import shutil


def test_each_scenario_is_a_passing_item(pytester, source_dir):
    result = pytester.runpytest_subprocess(
        "-p", "tpusim.pytest_plugin", str(source_dir / "scenarios/smoke"),
        "--tpusim-golden-dir", str(source_dir / "golden"), "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*mlp_bf16_v5e.yaml::mlp_bf16_v5e PASSED*"])


def test_a_failing_scenario_fails_with_tpusims_message(pytester, source_dir):
    shutil.copy(source_dir / "scenarios/hlo/add_f32.hlo", pytester.path / "add_f32.hlo")
    (pytester.path / "too_slow.yaml").write_text(
        "module: add_f32.hlo\nchip: tpu-v5e\nmode: timing\n"
        "checks:\n  time_us: {max: 0.000001}\n")
    (pytester.path / "study.yaml").write_text("not_a_scenario: true\n")
    result = pytester.runpytest_subprocess("-p", "tpusim.pytest_plugin", str(pytester.path))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*too_slow: FAIL*", "*time_us*"])
