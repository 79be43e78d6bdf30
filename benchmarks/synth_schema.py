"""Write a synthetic ACP-shaped JSON Schema with N definitions, for the growth benchmark.

The mix follows ACP's own: about 60 % structs (camelCase properties, required and optional
fields, `_meta`, references to earlier definitions, arrays, maps, nullable fields, defaults),
15 % string enums (closed `oneOf` of consts, or open with a plain string fallback), 15 % tagged
unions (variants `{properties: {type: {const}}, allOf: [{$ref}]}`), 10 % scalar aliases. Every
name is distinct and ends in a letter; the output is deterministic for a given N and seed.

    python benchmarks/synth_schema.py N OUT.json [--seed S]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

WORDS = ["Session", "Tool", "Prompt", "Content", "Terminal", "Plan", "Mode", "Agent", "Client", "Auth",
         "File", "Config", "Model", "Usage", "Command", "Notice", "Resource", "Permission", "Update", "Entry"]
FIELD_WORDS = ["id", "name", "title", "kind", "status", "path", "uri", "text", "count", "limit", "value",
               "label", "source", "target", "reason", "priority", "content", "options", "entries", "mode"]


def letters(n: int) -> str:
    """0 -> 'A', 25 -> 'Z', 26 -> 'BA' ...: a suffix that never ends in a digit."""
    out = ""
    while True:
        out = chr(ord("A") + n % 26) + out
        n //= 26
        if n == 0:
            return out


def make_schema(count: int, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    defs: dict[str, Any] = {}
    structs: list[str] = []
    enums: list[str] = []
    for index in range(count):
        name = f"{WORDS[index % len(WORDS)]}{letters(index)}"
        roll = rng.random()
        if roll < 0.10 or index < 2:
            defs[name] = {"description": f"Identifier {index}.", "type": "string"}
        elif roll < 0.25:
            values = [f"{FIELD_WORDS[(index + k) % len(FIELD_WORDS)]}_{letters(k).lower()}" for k in range(rng.randint(2, 6))]
            alts: list[Any] = [{"const": v, "description": f"The {v} value.", "type": "string"} for v in values]
            if rng.random() < 0.5:
                alts.append({"title": "other", "description": "Any other value.", "type": "string"})
            defs[name] = {"description": f"Enum {index}.", "oneOf" if len(alts) == len(values) else "anyOf": alts}
            enums.append(name)
        elif roll < 0.40 and len(structs) >= 3:
            payloads = rng.sample(structs[-200:], k=min(len(structs[-200:]), rng.randint(2, 5)))
            defs[name] = {
                "description": f"Union {index}.",
                "oneOf": [
                    {
                        "description": f"Variant {payload}.",
                        "type": "object",
                        "properties": {"type": {"type": "string", "const": f"v_{letters(k).lower()}"}},
                        "required": ["type"],
                        "allOf": [{"$ref": f"#/$defs/{payload}"}],
                    }
                    for k, payload in enumerate(payloads)
                ],
                "discriminator": {"propertyName": "type"},
            }
        else:
            defs[name] = make_struct(rng, index, list(defs))
            structs.append(name)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": f"Synthetic {count}", "$defs": defs}


def make_struct(rng: random.Random, index: int, earlier: list[str]) -> dict[str, Any]:
    props: dict[str, Any] = {
        "_meta": {"description": "Extension metadata.", "type": ["object", "null"], "additionalProperties": True},
    }
    required = []
    for k in range(rng.randint(2, 8)):
        key = FIELD_WORDS[(index * 7 + k) % len(FIELD_WORDS)] + (letters(k) if k >= len(FIELD_WORDS) else "")
        key = key[0] + key[1:] if k == 0 else key + letters(k).capitalize()
        roll = rng.random()
        if roll < 0.3:
            prop: dict[str, Any] = {"type": "string"}
        elif roll < 0.4:
            prop = {"type": "integer", "format": "uint32", "minimum": 0}
        elif roll < 0.5:
            prop = {"type": ["boolean", "null"], "default": False}
        elif roll < 0.75:
            prop = {"$ref": f"#/$defs/{rng.choice(earlier)}"}
        elif roll < 0.9:
            prop = {"type": "array", "items": {"$ref": f"#/$defs/{rng.choice(earlier)}"}}
        else:
            prop = {"type": "object", "additionalProperties": {"type": "string"}}
        prop["description"] = f"Field {key} of definition {index}."
        props[key] = prop
        if rng.random() < 0.5:
            required.append(key)
    out: dict[str, Any] = {"description": f"Struct {index}.", "type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(make_schema(args.count, args.seed), indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
