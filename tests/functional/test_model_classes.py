"""The generated classes are `@dataclass(slots=True, kw_only=True)` classes: keyword-only
constructor, defaults (fresh mutable ones per object), value equality, unhashable, a readable repr,
no instance dict; `replace` is `dataclasses.replace` with a clearer error."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import acp_v1
import pytest

from tests.conftest import GENERATED


def prompt() -> acp_v1.PromptRequest:
    return acp_v1.PromptRequest(session_id="s1", prompt=[acp_v1.TextContentBlock(text="hi")])


def test_constructor_is_keyword_only_with_the_schema_defaults() -> None:
    with pytest.raises(TypeError):
        acp_v1.PromptRequest("s1", [])  # type: ignore[misc]
    with pytest.raises(TypeError):
        acp_v1.PromptRequest(prompt=[])  # type: ignore[call-arg]
    acp_v1.PromptRequest(session_id="s", prompt=[])  # the class's own __init__ from here on
    params = inspect.signature(acp_v1.PromptRequest).parameters
    assert [p.kind for p in params.values()] == [inspect.Parameter.KEYWORD_ONLY] * 3
    assert params["meta"].default is acp_v1.UNSET
    assert [f.kw_only for f in dataclasses.fields(acp_v1.PromptRequest)] == [True] * 3
    response = acp_v1.InitializeResponse(protocol_version=1)
    assert response.auth_methods == [] and response.agent_capabilities.load_session is False
    other = acp_v1.InitializeResponse(protocol_version=1)
    assert response.auth_methods is not other.auth_methods  # a fresh list each time
    assert response.agent_capabilities is not other.agent_capabilities
    given = acp_v1.InitializeResponse(protocol_version=1, auth_methods=[])
    assert acp_v1.encode(given) == acp_v1.encode(response)


def test_equality_hash_and_repr() -> None:
    a, b = prompt(), prompt()
    assert a == b and a is not b
    assert a != acp_v1.replace(a, session_id="s2")
    assert a != "not a prompt" and (a == 1) is False
    with pytest.raises(TypeError):
        hash(a)
    assert repr(a) == ("PromptRequest(session_id='s1', prompt=[TextContentBlock(annotations=UNSET, text='hi', "
                       "meta=UNSET)], meta=UNSET)")


def test_slots_only() -> None:
    value = prompt()
    assert not hasattr(value, "__dict__")
    with pytest.raises(AttributeError):
        value.session_idd = "typo"  # type: ignore[attr-defined]
    assert acp_v1.PromptRequest.__slots__ == ("session_id", "prompt", "meta")


def test_replace_copies_with_changes() -> None:
    value = prompt()
    changed = acp_v1.replace(value, meta={"k": 1})
    assert changed.meta == {"k": 1} and value.meta is acp_v1.UNSET
    assert changed.prompt is value.prompt  # shallow, like dataclasses.replace
    with pytest.raises(TypeError, match="no field named nope"):
        acp_v1.replace(value, nope=1)


def test_pickle_and_deepcopy() -> None:
    value = acp_v1.decode("SessionNotification", {
        "sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}})
    assert pickle.loads(pickle.dumps(value)) == value
    assert copy.deepcopy(value) == value


def test_models_are_dataclasses_without_per_class_boilerplate() -> None:
    """The dataclass machinery and `Model` bring what every class would repeat."""
    for package in ("acp_v1", "acp_v2", "acp_v0_4"):
        text = (GENERATED / package / "models.py").read_text()
        assert "class PromptRequest(Model):" in text or package != "acp_v1"
        for boilerplate in ("def __init__", "def __eq__", "def __repr__", "__hash__ = None"):
            assert boilerplate not in text, (package, boilerplate)
    assert dataclasses.is_dataclass(acp_v1.PromptRequest)
