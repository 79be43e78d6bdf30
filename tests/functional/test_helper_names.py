"""The helpers module's builder-name rule on a tiny inline schema: names are claimed in rank order
(the session update union's variants, then its entity names, then the unions its variants hold);
a taken name (an earlier builder, a keyword, a builtin) gets the union's name in front, and a
variant whose two names are both taken gets no builder."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from tests.functional.test_codecs import make


def tagged(tag_key: str, tag: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": {tag_key: {"type": "string", "const": tag}, **props},
            "required": [tag_key, *required]}


STR = {"type": "string"}
DEFS: dict[str, Any] = {
    "CancelNotification": {"type": "object", "properties": {"sessionId": STR}, "required": ["sessionId"],
                           "x-side": "agent", "x-method": "session/cancel"},
    "UpdateNotification": {"type": "object", "properties": {"sessionId": STR, "update": {"$ref": "#/$defs/Update"}},
                           "required": ["sessionId", "update"], "x-side": "client", "x-method": "session/update"},
    "AgentNotification": {"type": "object", "properties": {
        "method": STR, "params": {"anyOf": [{"$ref": "#/$defs/CancelNotification"}]}}, "required": ["method"]},
    "ClientNotification": {"type": "object", "properties": {
        "method": STR, "params": {"anyOf": [{"$ref": "#/$defs/UpdateNotification"}]}}, "required": ["method"]},
    "Update": {"anyOf": [
        # creates or updates a widget: `widgetId` is required by two variants, so it gets `widget` too
        tagged("sessionUpdate", "widget_update", {"widgetId": STR, "name": STR}, ["widgetId"]),
        tagged("sessionUpdate", "widget_output_chunk", {"widgetId": STR, "data": STR}, ["widgetId", "data"]),
        tagged("sessionUpdate", "note", {"body": {"$ref": "#/$defs/Part"}}, ["body"]),
        tagged("sessionUpdate", "text", {"n": {"type": "integer"}}, ["n"]),
        tagged("sessionUpdate", "part_text", {"n": {"type": "integer"}}, ["n"]),
    ]},
    "Part": {"anyOf": [
        tagged("type", "widget", {"widgetId": STR}, ["widgetId"]),  # after the entity name: part_widget
        tagged("type", "note", {}, []),  # after the session update `note`: part_note
        tagged("type", "list", {}, []),  # a builtin: part_list
        tagged("type", "class", {}, []),  # a keyword: part_class
        tagged("type", "text", {"text": STR}, ["text"]),  # `text` and `part_text` taken: no builder
        tagged("type", "fresh", {}, []),  # free: fresh
    ]},
}


@pytest.fixture
def helpers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    pkg = make(tmp_path, DEFS, monkeypatch)
    return importlib.import_module(pkg.__name__ + ".helpers")


def test_names_are_claimed_in_rank_order(helpers: Any) -> None:
    builders = {n for n in helpers.__all__ if n[0].islower()}
    assert builders == {"widget_update", "widget", "widget_output", "note", "text", "part_text",
                        "part_widget", "part_note", "part_list", "part_class", "fresh"}


def test_each_name_builds_its_variant(helpers: Any) -> None:
    assert helpers.widget("w1").to_dict() == {"sessionUpdate": "widget_update", "widgetId": "w1"}
    assert helpers.widget("w1", name="x").to_dict() == helpers.widget_update("w1", name="x").to_dict()
    assert helpers.widget_output("w1", "ab").to_dict() == {
        "sessionUpdate": "widget_output_chunk", "widgetId": "w1", "data": "ab"}
    assert helpers.part_widget("w1").to_dict() == {"type": "widget", "widgetId": "w1"}
    assert helpers.text(1).to_dict() == {"sessionUpdate": "text", "n": 1}
    assert helpers.part_text(2).to_dict() == {"sessionUpdate": "part_text", "n": 2}
    for name, tag in [("part_note", "note"), ("part_list", "list"), ("part_class", "class"), ("fresh", "fresh")]:
        assert getattr(helpers, name)().to_dict() == {"type": tag}
    # the text block has no builder, so `note` takes the block itself (no `str` shortcut)
    assert helpers.note(helpers.fresh()).to_dict() == {"sessionUpdate": "note", "body": {"type": "fresh"}}
    assert not hasattr(helpers, "_block")
