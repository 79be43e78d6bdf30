"""`identifier_chars` keeps ASCII text's letters, digits and `_` by a pattern; the general path
(NFKC, then each character an identifier may hold) must give the same for every ASCII text."""

from __future__ import annotations

import random
import unicodedata

from acpgen.ir.naming import identifier_chars


def general(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if ("a" + ch).isidentifier())


def test_ascii_text_as_the_general_path_gives_it() -> None:
    assert all(identifier_chars(chr(code)) == general(chr(code)) for code in range(128))
    rng = random.Random(1)
    for _ in range(5000):
        text = "".join(chr(rng.randrange(128)) for _ in range(rng.randrange(12)))
        assert identifier_chars(text) == general(text), text


def test_other_text_takes_the_general_path() -> None:
    text = "\ufb01le-\uff4e\uff41\uff4d\uff45\u00b7x"  # a ligature, full-width letters, a middle dot
    assert identifier_chars(text) == general(text) == "filename\u00b7x"
