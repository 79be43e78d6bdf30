"""Older dialects read as draft 2020-12: the keywords whose meaning changed are rewritten once, at
load, so the IR, the checks and the generated validator see one dialect.

- `items: [a, b]` (a tuple, drafts 4 to 2019-09) is `prefixItems: [a, b]`, and `additionalItems: s`
  beside it is `items: s`;
- `dependencies: {k: [names]}` is `dependentRequired`, `dependencies: {k: schema}` is
  `dependentSchemas` (drafts 4 to 7);
- `exclusiveMinimum: true` / `exclusiveMaximum: true` beside `minimum` / `maximum` (draft 4) is
  the number itself.
"""

from __future__ import annotations

from typing import Any

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_SCHEMA_KEYS = ("additionalProperties", "unevaluatedProperties", "items", "additionalItems", "contains",
                "propertyNames", "not", "if", "then", "else", "unevaluatedItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def older_dialect(document: dict[str, Any]) -> bool:
    dialect = document.get("$schema")
    return isinstance(dialect, str) and dialect.rstrip("#") != DRAFT_2020_12


def upgrade(node: Any) -> None:
    """Rewrite the changed keywords of an older-dialect schema in place (see the module docstring)."""
    if not isinstance(node, dict):
        return
    if isinstance(node.get("items"), list):
        node["prefixItems"] = node.pop("items")
        if "additionalItems" in node:
            node["items"] = node.pop("additionalItems")
    elif "additionalItems" in node:
        del node["additionalItems"]  # without a tuple `items` it applies to nothing
    dependencies = node.pop("dependencies", None)
    if isinstance(dependencies, dict):
        for key, value in dependencies.items():
            table = "dependentRequired" if isinstance(value, list) else "dependentSchemas"
            node.setdefault(table, {})[key] = value
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(flag) is True and bound in node:
            node[flag] = node.pop(bound)
        elif node.get(flag) is False:
            del node[flag]
    for key, value in node.items():
        if key in _SCHEMA_KEYS:
            upgrade(value)
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                upgrade(sub)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            for sub in value:
                upgrade(sub)
