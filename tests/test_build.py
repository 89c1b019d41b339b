import os
import shutil

import pytest

from bench_src.run import build


def test_a_missing_toolchain_is_named(tmp_path, monkeypatch):
    # a PATH with the C compiler and Rust but no Go
    for tool in ("cc", "cargo", "rustc"):
        os.symlink(shutil.which(tool), tmp_path / tool)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(build.BuildError, match=r"`go` was not found on PATH; it is needed to build gobench"):
        build.build(("go", "rust"))
    build.check_tools(("rust",))  # what is there passes


def test_a_second_build_is_skipped(built):
    again = build.build(("go", "rust"), log=lambda *_: None)
    assert set(again["builds"].values()) == {"up to date"}
    assert again["toolchains"]["go"].startswith("go version")
