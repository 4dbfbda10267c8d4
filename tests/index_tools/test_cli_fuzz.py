"""The command line under fuzzing: every command but `serve` with a random choice of its own
options (read from its parser) and hostile values — paths that are missing, special,
5,000 characters long, named with escapes or bytes that are not UTF-8, files of the wrong
kind, numbers out of range, URLs of services that are not there — and hostile input on
stdin. Whatever happens is an answer or a one-line error; never "unexpected error", never
a traceback, never a hang.

A few seconds in the suite; `RECITATION_CLI_FUZZ=N` runs N cases (their counts printed with
-s), `RECITATION_CLI_FUZZ_SEED` another seed."""

from __future__ import annotations

import argparse
import collections
import io
import json
import os
import random
import signal
import sys

import pytest

from index_tools import BuildOptions, build_index
from index_tools.cli import main as cli_main
from index_tools.cli.commands import _parser

CASES = int(os.environ.get("RECITATION_CLI_FUZZ", "0") or 0) or 60
SEED = int(os.environ.get("RECITATION_CLI_FUZZ_SEED", "55"))
CASE_SECONDS = 60  # a case that takes longer is a hang
LEFT_OUT = {"serve"}  # it would serve; its options are checked by test_service_damage
LEFT_OUT_OPTIONS = {"--default", "--engine", "--master"}  # the stdlib build, Spark

CODE = "".join(
    f"def step_{i}(values, scale={i}):\n    total = sum(v * scale for v in values)\n"
    f"    return total - {i} if total > {i} else values[{i % 3}]\n\n"
    for i in range(12)
)


class Hang(Exception):
    pass


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("cli-fuzz")
    src = root / "src"
    src.mkdir()
    (src / "steps.py").write_text(CODE)
    (src / "README.md").write_text("# steps\n")
    idx = root / "idx"
    build_index([str(src)], idx, BuildOptions(jobs=1, progress=False))
    scratch = root / "scratch-idx"
    build_index([str(src)], scratch, BuildOptions(jobs=1, progress=False))
    files = root / "files"
    files.mkdir()
    (files / "code.py").write_text(CODE)
    (files / "empty.py").write_text("")
    (files / "binary.bin").write_bytes(bytes(range(256)) * 64)
    (files / "utf16.py").write_bytes(CODE.encode("utf-16"))
    (files / "log.json").write_text(json.dumps({
        "format": "recitation-code-references",
        "references": [{"uri": (files / "code.py").as_uri(), "kind": "recitation", "length": 5,
                        "text": "def step_0", "sources": [{"repository": "\ud800", "start_line": 1,
                                                           "end_line": 2}],
                        "range": {"start": {"line": 0, "character": 0},
                                  "end": {"line": 0, "character": 10}}}, 7, "x"],
    }))  # fmt: skip
    (files / "nested.json").write_text("[" * 100_000 + "]" * 100_000)
    (files / "report.json").write_text(json.dumps({"matches": [{"sources": 5}]}))
    (files / "decisions.toml").write_text("[[dismiss]]\nquote = 5\n" + "[a]\n" * 3)
    (files / "baseline.json").write_text('{"version": 99}')
    (files / "weird \x1b[31m\nname\udcff.py").write_text(CODE)
    (files / "token").write_text("s3cret\n")
    fifo = files / "fifo"
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
    loop = files / "loop"
    loop.symlink_to(loop)
    (files / "folder").mkdir()
    (files / "folder" / "a.py").write_text(CODE)
    # a workspace of no language: one with Python files indexes the standard library (2.6M
    # words: minutes in shards of 20 words, a slow case, not a hang)
    (files / "ws").mkdir()
    (files / "ws" / "README.md").write_text("# ws\n")
    paths = [
        idx, scratch, src, files / "code.py", files / "empty.py", files / "binary.bin",
        files / "utf16.py", files / "log.json", files / "nested.json", files / "report.json",
        files / "decisions.toml", files / "baseline.json", files / "weird \x1b[31m\nname\udcff.py",
        files / "token", fifo, loop, files / "folder", root / "missing", root / "new-out",
        "/dev/null", "/dev/zero", "/tmp/" + "a" * 5000, "b/" * 2500 + "x", "-",
        "http://127.0.0.1:9", "https://127.0.0.1:9/x", "http://10.0.0.1:1", "ftp://x",
        "pypi:", "pypi:left-pad==1.0", "npm:@", "npm:left-pad@^1", "python:nope",
        f"workspace:{files / 'ws'}", "popular:pypi:3", "popular:npm:99999",
        str(files / "folder") + "\\..\\..", "~nobody/x", "",
    ]  # fmt: skip
    return {"root": root, "paths": [str(p) for p in paths], "files": files}


NUMBERS = ["0", "-1", "1", "3", "60", "1000", "999999999999", "1e309", "nan", "inf", "abc", "",
           "0x10", " 5 ", "-0", "2.5"]  # fmt: skip
TEXTS = ["python", "", "\x1b[31m", "é\u202e", "a" * 5000, "recitation=off", "kind=bad", "*",
         "**/*.py", "https://x.example/ns", "not a uri", "javascript", "license=error",
         "hint"]  # fmt: skip
STDIN = [CODE, "", "\x00\x01" * 100, json.dumps({"matches": [{"parts": {"a": 1}}]}),
         "[" * 50_000, CODE * 40, "é" * 3000 + "\udcff"]  # fmt: skip


GOOD_NUMBERS = ["1", "2", "3", "20", "60"]
# what a value of an argument should mostly be, so that most command lines get past their
# parsing and reach the code that reads files and indexes
LIKELY = {"index": "idx", "index_opt": "idx", "sources": "src", "paths": "folder",
          "log": "log.json", "context_file": "code.py", "file": "code.py", "out": "new-out",
          "decisions": "decisions.toml", "baseline": "baseline.json", "root": "folder",
          "token_file": "token", "workspace": "folder"}  # fmt: skip


def value(rng: random.Random, action: argparse.Action, world: dict) -> str:
    if action.choices and rng.random() < 0.8:
        return rng.choice(list(action.choices))
    if action.type is not None:
        return rng.choice(GOOD_NUMBERS if rng.random() < 0.7 else NUMBERS)
    likely = LIKELY.get(action.dest)
    if likely and rng.random() < 0.5:
        return next(p for p in world["paths"] if p.endswith(likely))
    kind = rng.random()
    if kind < 0.7:
        return rng.choice(world["paths"])
    if kind < 0.85:
        return rng.choice(TEXTS)
    return rng.choice(NUMBERS)


def argv_of(rng: random.Random, world: dict) -> list[str]:
    parser = _parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    name = rng.choice(sorted(set(sub.choices) - LEFT_OUT))
    command = sub.choices[name]
    argv = [name]
    for action in command._actions:
        if isinstance(action, argparse._HelpAction) or action.dest == "help":
            continue
        if set(action.option_strings) & LEFT_OUT_OPTIONS:
            continue
        if not action.option_strings:  # positional: as the parser needs it, or not
            count = {"+": rng.randint(1, 3), "*": rng.randint(0, 2), "?": rng.random() < 0.8}
            for _ in range(count.get(action.nargs, 1)):
                argv.append(value(rng, action, world))
            continue
        if rng.random() < (0.85 if action.dest in LIKELY else 0.3):
            argv.append(rng.choice(action.option_strings))
            if action.nargs != 0:
                argv.append(value(rng, action, world))
    if rng.random() < 0.05:
        argv.append(rng.choice(["--bogus", "-z", "--json=3"]))
    return argv


def run_case(argv: list[str], stdin: str, monkeypatch) -> tuple[int | None, str]:
    data = stdin.encode("utf-8", "surrogateescape")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8",
                                                       errors="surrogateescape"))  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)

    def hang(*_):
        raise Hang()

    before = signal.signal(signal.SIGALRM, hang)
    signal.alarm(CASE_SECONDS)
    try:
        code = cli_main(argv)
    except SystemExit as e:  # argparse's usage errors
        code = e.code if isinstance(e.code, int) else 2
    except Hang:
        return None, "hang"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
        monkeypatch.undo()
    return code, err.getvalue()


@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="alarms bound each case")
def test_fuzzed_command_lines_end_in_an_answer_or_one_line(world, tmp_path, monkeypatch):
    monkeypatch.setenv("RECITATION_PYPI_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("RECITATION_NPM_REGISTRY", "http://127.0.0.1:9/")
    monkeypatch.setenv("RECITATION_PACKAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RECITATION_INDEX", str(tmp_path / "no-default-index"))
    monkeypatch.setenv("RECITATION_INDEX_TOKEN", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    monkeypatch.delenv("RECITATION_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)
    rng = random.Random(SEED)
    exits: collections.Counter = collections.Counter()
    bad, shown = [], []
    for n in range(CASES):
        argv = argv_of(rng, world)
        stdin = rng.choice(STDIN)
        with monkeypatch.context() as m:
            code, err = run_case(argv, stdin, m)
        exits[code] += 1
        shown.append(f"{code} {' '.join(a[-50:] for a in argv)}: {err.strip()[-150:]}")
        if code is None or "unexpected error" in err or "Traceback" in err:
            bad.append(f"{n}: {[a[:80] for a in argv]}: {code}: {err.strip()[-300:]}")
        elif code == 2 and not err.strip().rpartition("\n")[2].startswith("recitation-index"):
            bad.append(f"{n}: {[a[:80] for a in argv]}: no error line last: {err[-300:]}")
    if os.environ.get("RECITATION_CLI_FUZZ_SHOW"):
        print("\n".join(shown))
    print(f"\n{CASES} command lines: exit codes {dict(sorted(exits.items(), key=str))}; "
          f"unexpected errors, tracebacks or hangs: {len(bad)}")  # fmt: skip
    assert not bad, "\n".join(bad[:15])
