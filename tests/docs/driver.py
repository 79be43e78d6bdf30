"""Runs a page's python blocks in one interpreter, in order, sharing their names: reads one JSON
line per block ({"code", "name", "cwd"}) on stdin and answers one JSON line ({"error": text or
null}) on the stdout it was started with; what a block prints goes to stderr."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import json
import os
import sys
import traceback


def main() -> None:
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a block's print(), and its child processes, write to stderr
    sys.stdout = sys.stderr
    namespace: dict[str, object] = {"__name__": "__main__"}
    for line in sys.stdin:
        request = json.loads(line)
        error = None
        try:
            os.chdir(request["cwd"])
            code = compile(request["code"], request["name"], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(code, namespace)
            if inspect.iscoroutine(result):
                asyncio.run(result)
        except BaseException:  # noqa: BLE001 - reported to the test, which fails with it
            error = traceback.format_exc()
        with contextlib.suppress(BrokenPipeError):
            answers.write(json.dumps({"error": error}) + "\n")
            answers.flush()


if __name__ == "__main__":
    main()
