"""The student side of grading: runs a submission's cells inside the sandbox, reports data.

``python -m curvgrade.runner`` reads its plan (one JSON line) on standard input: the
cells to run and, after each exercise's cells, the names to export. It runs each cell in an
IPython shell (magics work as in Jupyter) under a per-cell alarm, then sends each exported
answer as data (:func:`curvgrade.answers.encode`) on the protocol channel, one JSON
object per line. Afterwards it answers requests to call the student's functions with given
arguments, again as data in and data out.

Everything this process sends is produced next to student code and may be forged: the grader
treats it as untrusted data and never as code. The student's own output goes to
``output.txt`` in the working folder, never to the protocol channel.
"""

from __future__ import annotations

import json
import os
import signal
import sys


class CellTimeout(BaseException):  # noqa: N818 (the name the student's traceback shows)
    """Raised inside a cell that ran over its time limit."""


def _alarm(signum, frame):
    raise CellTimeout("cell time limit reached")


def _send(channel, message: dict) -> None:
    try:
        channel.write(json.dumps(message) + "\n")
        channel.flush()
    except (OSError, ValueError, TypeError):
        pass


def _error_name(error: BaseException | None) -> str | None:
    if error is None:
        return None
    name = type(error).__name__
    return "".join(ch for ch in name if ch.isalnum() or ch == "_")[:60] or "Error"


def main() -> int:
    from .answers import AnswerError, decode, encode
    from .shell import new_shell

    channel = os.fdopen(os.dup(1), "w", buffering=1)
    requests = os.fdopen(os.dup(0), "r")
    output = os.open("output.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    plan = json.loads(requests.readline())
    cell_timeout = max(1, int(plan.get("cell_timeout", 60)))
    shell = new_shell()
    signal.signal(signal.SIGALRM, _alarm)
    functions: dict[tuple[str, str], object] = {}

    for step in plan["steps"]:
        if "source" in step:
            signal.alarm(cell_timeout)
            timed_out = False
            try:
                result = shell.run_cell(step["source"], store_history=False, silent=False)
                error = result.error_before_exec or result.error_in_exec
            except CellTimeout as raised:
                error = raised
            finally:
                signal.alarm(0)
            timed_out = isinstance(error, CellTimeout)
            _send(
                channel,
                {
                    "event": "cell",
                    "cell": step.get("cell"),
                    "error": _error_name(error),
                    "timeout": timed_out,
                },
            )
            continue
        exported = {}
        for name in step["names"]:
            if name not in shell.user_ns:
                exported[name] = {"error": f"{name} is not defined"}
                continue
            value = shell.user_ns[name]
            try:
                exported[name] = encode(value)
            except AnswerError as error:
                if callable(value):
                    functions[(step["export"], name)] = value
                    exported[name] = {"function": name}
                else:
                    exported[name] = {"error": str(error)}
            except Exception as error:  # a value whose conversion raises is not data
                exported[name] = {"error": f"answer could not be read ({_error_name(error)})"}
        _send(channel, {"event": "export", "exercise": step["export"], "answers": exported})
    _send(channel, {"event": "done"})

    for line in requests:
        try:
            request = json.loads(line)
            function = functions[(request["exercise"], request["name"])]
            args = [decode(item) for item in request["args"]]
            kwargs = {key: decode(item) for key, item in request["kwargs"].items()}
        except Exception as error:
            _send(channel, {"event": "result", "error": _error_name(error)})
            continue
        signal.alarm(cell_timeout)
        try:
            value = encode(function(*args, **kwargs))
            reply = {"event": "result", "value": value}
        except AnswerError as error:
            reply = {"event": "result", "error": "AnswerError", "message": str(error)}
        except BaseException as error:  # the student's function failed: its error type only
            reply = {"event": "result", "error": _error_name(error)}
        finally:
            signal.alarm(0)
        _send(channel, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
