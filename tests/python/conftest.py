"""Shared fixtures of the Python package's tests: the tpusim binary under
test ($TPUSIM) and the source tree's scenarios ($TPUSIM_SOURCE_DIR), both set
by CTest (tests/python/CMakeLists.txt)."""

import os
import pathlib

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture
def source_dir() -> pathlib.Path:
    return pathlib.Path(os.environ["TPUSIM_SOURCE_DIR"])
