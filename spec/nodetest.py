"""Runs a page twin's test file (spec/js/*.test.mjs: public/*.js against a
shared vectors file) with node's test runner, from the repository or from a
copy of it placed under a folder whose package.json says "commonjs"."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def node_test(test_file: Path, *, root: Path = ROOT) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail(f"node is not on PATH: {test_file.name} cannot run (install Node 20+)", pytrace=False)
    proc = subprocess.run([node, "--test", str(root / test_file.relative_to(ROOT))], cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, f"node --test failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"


def copy_under_commonjs_parent(tmp_path: Path, *paths: str) -> Path:
    """A copy of the repository's `paths` (files or folders) at tmp_path/repo,
    with every package.json the repository has between its root and public/,
    under a folder whose package.json says {"type": "commonjs"} (as a home
    folder or a monorepo may). Returns the copy's root."""
    (tmp_path / "package.json").write_text(json.dumps({"type": "commonjs"}), encoding="utf-8")
    copy = tmp_path / "repo"
    for folder in (ROOT, ROOT / "public"):
        if (folder / "package.json").is_file():
            target = copy / folder.relative_to(ROOT) / "package.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / "package.json", target)
    for path in paths:
        source, target = ROOT / path, copy / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copyfile(source, target)
    return copy
