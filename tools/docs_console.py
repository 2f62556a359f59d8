"""Console transcripts in the docs: run each ``$ dpcert ...`` line and show what it prints.

A ```` ```console ```` block marked ``<!-- output -->`` (see ``tools/docs_outputs.py``) is a
transcript: its lines that begin with ``$ `` are commands, the other lines their output.  Each
command is ``dpcert ARGS`` optionally piped through filters that pick an exact excerpt --
``head -n K``, ``tail -n K``, ``cut -c A-B`` -- and the transcript is rebuilt from the commands
and what they print on stdout (the progress lines on stderr are not shown, as a terminal shows
them apart).  The commands run in this process through `dpcert.cli.main.main`, so a program the
page verifies again (`tools.docs_outputs.verify_once`) costs one run; the filters act as the
coreutils commands of the same name do on that output (``cut -c`` counts bytes, as GNU cut does).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex

PROMPT = "$ "
FILTER = re.compile(r"^(head|tail) -n (\d+)$|^cut -c (\d+)-(\d+)$")


class TranscriptError(ValueError):
    """A transcript command the docs tool does not run (not ``dpcert ...``, or a filter)."""


def dpcert(args: list[str]) -> str:
    """What ``dpcert ARGS`` prints on stdout (its exit code is not shown)."""
    from dpcert.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as e:  # argparse exits after --help, --version or a usage error
            if e.code:
                raise TranscriptError(f"dpcert {shlex.join(args)}: {err.getvalue()}") from e
    return out.getvalue()


def apply_filter(text: str, command: str) -> str:
    """``text`` piped through ``command`` (``head -n K``, ``tail -n K`` or ``cut -c A-B``)."""
    m = FILTER.match(command.strip())
    if not m:
        raise TranscriptError(f"filter {command.strip()!r}: only 'head -n K', 'tail -n K' and "
                              "'cut -c A-B' are run")
    lines = text.splitlines()
    if m.group(1) == "head":
        lines = lines[:int(m.group(2))]
    elif m.group(1) == "tail":
        lines = lines[max(len(lines) - int(m.group(2)), 0):]
    else:
        lo, hi = int(m.group(3)), int(m.group(4))
        lines = [ln.encode()[lo - 1:hi].decode() for ln in lines]
    return "".join(ln + "\n" for ln in lines)


def run_command(line: str) -> str:
    """What the command ``line`` (``dpcert ARGS [| FILTER]...``) prints."""
    first, *filters = line.split(" | ")
    args = shlex.split(first)
    if not args or args[0] != "dpcert":
        raise TranscriptError(f"command {line!r}: only 'dpcert ...' commands are run")
    text = dpcert(args[1:])
    for f in filters:
        text = apply_filter(text, f)
    return text


def transcript(body: str) -> str:
    """The transcript ``body`` with each command's output rebuilt from a fresh run."""
    out: list[str] = []
    for line in body.splitlines():
        if line.startswith(PROMPT):
            out.append(line)
            out.extend(run_command(line[len(PROMPT):]).rstrip("\n").splitlines())
    return "\n".join(out)
