"""The grader side: a fresh process, never touched by student code, that runs the checks.

``python -m curvgrade.checker BUNDLE.json READ_FD WRITE_FD DEADLINE`` reads the
sandboxed runner's messages (cell outcomes, exported answers) from ``READ_FD`` until the
runner is done or ``DEADLINE`` (seconds) passes, decodes every answer with the whitelist of
:mod:`curvgrade.answers`, then runs the chapter's given code and every check (public
and hidden) in its own IPython shell with the decoded answers bound to their names. A student
function stays in the sandbox: here its name is a proxy that sends the arguments there as
data and decodes the result. It prints one JSON object: per-check outcomes, per-exercise
answer problems, per-cell errors.

Nothing a student sends is evaluated here: answers are data, a student's text is decoded as a
:class:`~curvgrade.answers.StudentText` (SymPy refuses to parse it), the srepr of a SymPy
answer is read with a whitelist and bounded work, and the grader kills this process at the
submission's deadline (:func:`curvgrade.grading.grade_notebook`), whatever it is doing.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time

MAX_MESSAGES_BYTES = 64 * 1024**2


class _Channel:
    """Line-delimited JSON from the runner, with a deadline and a size cap."""

    def __init__(self, read_fd: int, write_fd: int, deadline: float):
        self.read_fd, self.write_fd, self.deadline = read_fd, write_fd, deadline
        self.buffer = b""
        self.total = 0
        self.closed = False

    def receive(self, until: float | None = None) -> dict | None:
        until = self.deadline if until is None else until
        while b"\n" not in self.buffer:
            if self.closed:
                return None
            remaining = until - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self.read_fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self.read_fd, 1 << 16)
            self.total += len(chunk)
            if not chunk or self.total > MAX_MESSAGES_BYTES:
                self.closed = True
                continue
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return {}
        return message if isinstance(message, dict) else {}

    def send(self, message: dict) -> bool:
        try:
            os.write(self.write_fd, (json.dumps(message) + "\n").encode())
            return True
        except (OSError, ValueError, TypeError):
            return False


class RemoteFunction:
    """A student function left in the sandbox: called with data, returns decoded data."""

    def __init__(self, channel: _Channel, exercise: str, name: str, call_timeout: float):
        self._channel, self._exercise, self._name = channel, exercise, name
        self._timeout = call_timeout

    def __repr__(self) -> str:
        return f"<student function {self._name}>"

    def __call__(self, *args, **kwargs):
        from .answers import AnswerError, StudentText, decode, encode

        request = {
            "exercise": self._exercise,
            "name": self._name,
            "args": [encode(arg) for arg in args],
            "kwargs": {key: encode(value) for key, value in kwargs.items()},
        }
        if not self._channel.send(request):
            raise RuntimeError(f"{self._name}: the student's kernel is gone")
        reply = self._channel.receive(time.monotonic() + self._timeout)
        if reply is None:
            raise TimeoutError(f"{self._name}: no answer from the student's kernel")
        if reply.get("event") != "result":
            raise RuntimeError(f"{self._name}: unexpected reply from the student's kernel")
        if "error" in reply:
            raise AnswerError(f"{self._name} raised {str(reply['error'])[:60]}")
        return decode(reply.get("value"), text=StudentText)


class MissingAnswer:
    """Stands for an answer that did not arrive as data: any use of it fails the check."""

    def __init__(self, name: str, reason: str):
        self._name, self._reason = name, reason

    def _fail(self, *args, **kwargs):
        from .answers import AnswerError

        raise AnswerError(f"{self._name}: {self._reason}")

    __call__ = __getattr__ = __eq__ = __ne__ = __bool__ = __len__ = __iter__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _fail
    __rtruediv__ = __pow__ = __neg__ = __float__ = __int__ = __getitem__ = __hash__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __array__ = _fail


def _read_messages(channel: _Channel) -> tuple[dict, dict, str]:
    """Exports and cell outcomes; how the run ended: ``done``, ``closed`` or ``deadline``."""
    exports: dict[str, dict] = {}
    cells: dict[str, dict] = {}
    done = "deadline"
    while True:
        message = channel.receive()
        if message is None:
            done = "closed" if channel.closed else "deadline"
            break
        event = message.get("event")
        if event == "cell" and isinstance(message.get("cell"), int):
            cells.setdefault(str(message["cell"]), message)
        elif event == "export" and isinstance(message.get("exercise"), str):
            if isinstance(message.get("answers"), dict):
                exports.setdefault(message["exercise"], message["answers"])
        elif event == "done":
            done = "done"
            break
    return exports, cells, done


def _not_data_reason(text) -> str:
    """Why an answer is not data, in the grader's words (the runner's text is untrusted)."""
    import re

    from .answers import EXPECTED

    text = str(text)
    if re.fullmatch(r"[A-Za-z_]\w{0,59} is not defined", text):
        return text
    got = re.search(r"got (?:a tensor of )?([A-Za-z_]\w{0,59})$", text)
    return f"answer must be {EXPECTED}" + (f"; got {got.group(1)}" if got else "")


def _bind(exercise, exported: dict | None, channel: _Channel, call_timeout: float):
    """Decoded answers of ``exercise`` by name, and the problems of the required ones."""
    from .answers import AnswerError, StudentText, decode

    values, problems = {}, {}
    for name in exercise.names:
        data = (exported or {}).get(name)
        reason = None
        if exported is None:
            reason = "the notebook stopped before this exercise"
        elif data is None:
            reason = "not defined"
        elif isinstance(data, dict) and set(data) == {"function"}:
            values[name] = RemoteFunction(channel, exercise.label, name, call_timeout)
            continue
        elif isinstance(data, dict) and set(data) == {"error"}:
            reason = _not_data_reason(data["error"])
        else:
            try:
                values[name] = decode(data, text=StudentText)
                continue
            except (AnswerError, RecursionError, MemoryError, ValueError, OverflowError) as error:
                reason = str(error)[:300] or type(error).__name__
        values[name] = MissingAnswer(name, reason)
        if name in exercise.required:
            problems[name] = reason
    return values, problems


def run_checks(bundle, channel: _Channel, call_timeout: float) -> dict:
    """Run given code and checks on the runner's answers; the outcome as a dict.

    The chapter's code before the first exercise's checks does not depend on any answer: it
    runs here while the student's notebook runs in the sandbox (a thread reads the runner's
    messages meanwhile), so a chapter that reads its studies from the cache costs about one
    run of its code, not two in a row.
    """
    import threading

    from .shell import new_shell

    shell = new_shell()
    layout = list(bundle.layout)
    first = next((i for i, e in enumerate(layout) if e.startswith("checks:")), len(layout))
    received: list = []
    reader = threading.Thread(target=lambda: received.append(_read_messages(channel)))
    reader.start()
    for entry in layout[:first]:
        kind, _, key = entry.partition(":")
        if kind == "given":
            shell.run_cell(bundle.given[int(key)], store_history=False)
    reader.join()
    exports, cells, done = received[0]
    outcomes, answer_problems = [], {}
    for entry in layout[first:]:
        kind, _, key = entry.partition(":")
        if kind == "given":
            shell.run_cell(bundle.given[int(key)], store_history=False)
            continue
        if kind != "checks":
            continue
        exercise = bundle.exercise(key)
        values, problems = _bind(exercise, exports.get(key), channel, call_timeout)
        shell.user_ns.update(values)
        if problems:
            answer_problems[key] = problems
        for check in exercise.checks:
            if problems:
                outcomes.append({"key": check.key, "passed": False, "reason": "answer missing"})
                continue
            result = shell.run_cell(check.source, store_history=False)
            error = result.error_before_exec or result.error_in_exec
            reason = "passed" if error is None else type(error).__name__
            outcomes.append({"key": check.key, "passed": error is None, "reason": reason})
    return {
        "checks": outcomes,
        "answer_problems": answer_problems,
        "cells": cells,
        "exported": sorted(exports),
        "ended": done,
    }


def main(argv: list[str]) -> int:
    from .bundle import Bundle

    bundle_path, read_fd, write_fd, seconds = argv[0], int(argv[1]), int(argv[2]), float(argv[3])
    result_fd = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    bundle = Bundle.read(bundle_path)
    channel = _Channel(read_fd, write_fd, time.monotonic() + seconds)
    outcome = run_checks(bundle, channel, call_timeout=max(5.0, min(60.0, seconds)))
    os.write(result_fd, json.dumps(outcome).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
