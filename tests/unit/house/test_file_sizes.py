"""A module of the runtime or the connectors over 600 lines says why at its top (a ``Size:`` paragraph in
its docstring); the worker and herder shells stay under it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 600
SHELLS = ("pyconnect/herder/herder.py", "pyconnect/worker/worker.py")


def _long_modules() -> dict[str, int]:
    found = {}
    for package in ("pyconnect", "connectors"):
        for path in (ROOT / package).rglob("*.py"):
            lines = len(path.read_text().splitlines())
            if lines > LIMIT:
                found[path.relative_to(ROOT).as_posix()] = lines
    return found


def test_every_long_module_says_why_at_its_top() -> None:
    long_modules = _long_modules()
    assert long_modules, "the walk found no module over the limit: check ROOT"
    silent = [
        f"{path} ({lines} lines)"
        for path, lines in sorted(long_modules.items())
        if "\nSize: " not in "\n" + (ast.get_docstring(ast.parse((ROOT / path).read_text())) or "")
    ]
    assert not silent, f"over {LIMIT} lines without a 'Size:' paragraph in the module docstring: {silent}"


def test_the_shells_stay_small() -> None:
    sizes = {path: len((ROOT / path).read_text().splitlines()) for path in SHELLS}
    assert all(lines <= LIMIT for lines in sizes.values()), sizes
