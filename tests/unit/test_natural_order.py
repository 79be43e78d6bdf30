"""`natural_sorted` sorts by code point when no name holds an ASCII digit or whitespace (no `re`
comparison function per pair): the same order the natural comparison gives."""

from __future__ import annotations

import random
from functools import cmp_to_key

from acpgen.render.codegen import _natural_compare, natural_sorted


def test_the_fast_path_gives_the_natural_order() -> None:
    rng = random.Random(5)
    alphabet = "aAzZ_ÄäΩω日本Ⅻǅ٣"  # ٣ (ARABIC-INDIC THREE) is a digit, but not an ASCII one
    for _ in range(2000):
        names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(0, 12))]
        assert natural_sorted(names) == sorted(names, key=cmp_to_key(_natural_compare)), names


def test_digits_and_whitespace_take_the_natural_comparison() -> None:
    assert natural_sorted(["Name10", "Name2", "Name1"]) == ["Name1", "Name2", "Name10"]
    assert natural_sorted(["V1", "V01", "V001"]) == sorted(["V1", "V01", "V001"], key=cmp_to_key(_natural_compare))
    assert natural_sorted(["b a", "ba", "a c"]) == ["a c", "b a", "ba"]  # the space is skipped: "ba" == "ba"
