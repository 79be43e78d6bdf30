"""Runs a page's python blocks in one interpreter, in order, sharing their names: reads one JSON
line per block ({"code", "name", "cwd"}) on the stdin it was started with and answers one JSON
line ({"error": text or null}) on its stdout; the blocks themselves see stdin at its end and
write to stderr."""

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
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    empty, writer = os.pipe()
    os.close(writer)
    os.dup2(empty, 0)  # a block that serves stdin (run_agent) reads its end at once (a pipe: epoll sees it)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the empty pipe, for the process's life
    os.dup2(2, 1)  # a block's print(), and its child processes, write to stderr
    sys.stdout = sys.stderr
    namespace: dict[str, object] = {"__name__": "__main__"}
    for line in requests:
        request = json.loads(line)
        error = None
        try:
            os.chdir(request["cwd"])
            code = compile(request["code"], request["name"], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(code, namespace)
            if inspect.iscoroutine(result):
                asyncio.run(result)
        except BaseException:
            error = traceback.format_exc()
        with contextlib.suppress(BrokenPipeError):
            answers.write(json.dumps({"error": error}) + "\n")
            answers.flush()
    # A block may leave threads behind (run_agent's stdin reader): they must not keep the page's
    # interpreter alive once the page is done.
    os._exit(0)


if __name__ == "__main__":
    main()
