"""docs/interop.md's interop matrix is generated from tests/interop/matrix.py, and each row names tests that
exist (so "pass" in a row is what those tests assert, in the run CI makes)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.interop.matrix import PAGE, ROWS, readme_table, render

TESTS = Path(__file__).resolve().parents[1]


def test_the_readme_table_is_the_generated_one() -> None:
    assert readme_table(PAGE.read_text(encoding="utf-8")) == render(), (
        "docs/interop.md's interop matrix differs from tests/interop/matrix.py: run `python -m tests.interop.matrix --write`")


def test_every_row_names_tests_that_exist() -> None:
    defined: dict[str, set[str]] = {}
    for row in ROWS:
        assert row.tests, row.peer
        for ref in row.tests:
            file, function = ref.split("::")
            if file not in defined:
                tree = ast.parse((TESTS / file).read_text(encoding="utf-8"))
                defined[file] = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
            assert function in defined[file], ref


def test_a_row_with_a_fault_says_whose_it_is() -> None:
    for row in ROWS:
        assert row.wrong == "-" or len(row.wrong) > 40, row.peer  # a fault is described, not just named
