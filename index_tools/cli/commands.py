"""`recitation-index`: build, extend, inspect and query Recitation indexes.

Exit status: 0 success (for `check`: nothing found), 1 `check` found quoted code,
2 bad usage, a bad source or a missing/damaged index (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import re
import signal
import sys
import threading
from importlib import metadata
from pathlib import Path

from ..build.local import (
    DEFAULT_COMPACT_WORDS,
    DEFAULT_SHARD_WORDS,
    BuildError,
    InterruptedAfterPublish,
    compacted_shards,
)
from ..build.sources.languages import language_for_path
from ..build.workers import WorkerDied
from ..model import Match, describe_match, query_report
from ..safe_text import printable
from ..service.remote import is_remote, open_location
from ..store.generations import IndexOpenError
from ..store.paths import DEFAULT_SOURCES, default_index_path
from ..store.shards import MAX_SHARD_WORDS, RENAMED_STRIDE
from ..store.small_files import read_small_file, size_text
from .output import json_text, reconfigure_output
from .sbom_cli import add_references_parser, add_sbom_options
from .show import add_show_parser, code_path, show_view
from .text_report import match_details
from .workspace_report import workspace_lines

DESCRIPTION = """\
Build and query a local index of public code, so that code entering your editor (an AI
suggestion, a paste) can be traced to where it is quoted from.

Sources: a folder, a git repository (links to the HEAD commit on its origin's web host),
python:stdlib, python:site-packages[=NAME,...], a dataset (.jsonl, .jsonl.gz, .parquet
with The Stack's column names), PyPI and npm packages: pypi:NAME[==VERSION],
npm:NAME[@VERSION] (@scope/name too), or lists of them: pypi:FILE or a requirements.txt,
npm:FILE or a package.json / package-lock.json."""

EPILOG = """\
examples:
  recitation-index build --default                 # the embedded default index (stdlib)
  recitation-index build ~/src/acme-widgets python:site-packages --out ./idx
  recitation-index build pypi:requests npm:lodash --out ./idx
  recitation-index add ./idx ~/src/another-repo
  recitation-index stats ./idx --json
  git show HEAD:src/geo.py | recitation-index query ./idx
  git show HEAD:src/geo.py | recitation-index show ./idx --match 1
  recitation-index check . --format sarif > recitation.sarif
  recitation-index check . --format spdx > quotes.spdx.json     # or cyclonedx, spdx-tv

The default index lives in the user cache directory; RECITATION_INDEX overrides it."""


class UsageError(Exception):
    pass


def _version() -> str:
    try:
        return metadata.version("recitation")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _index_path(value: str | None) -> Path | str:
    """A local index's folder, or an index service's http(s) URL as given."""
    if value and is_remote(value):
        return value
    return Path(value).expanduser() if value else default_index_path()


def _progress(args) -> bool | str | None:
    """How a build shows its progress: "json" lines, a bar (True), none (False), or a bar
    when stderr is a terminal (None)."""
    if getattr(args, "progress_json", False):
        return "json"
    return False if args.quiet else (True if args.progress else None)


def _build_options(args):
    from ..build.local import BuildOptions

    if args.jobs is not None and args.jobs < 0:
        raise UsageError("--jobs must be 0 (all cores) or more")
    return BuildOptions(
        jobs=args.jobs or 0,
        max_file_bytes=args.max_file_bytes,
        shard_words=args.shard_words,
        renamed=getattr(args, "renamed", True),
        renamed_stride=getattr(args, "renamed_stride", RENAMED_STRIDE),
        progress=_progress(args),
        registry=_registry_options(args),
        compact_words=getattr(args, "compact_words", None),
    )


def _registry_options(args):
    """How pypi:/npm: sources fetch (the environment supplies what the flags leave out)."""
    from ..build.sources import RegistryOptions, SourceError
    from ..build.sources.archives import ArchiveLimits

    if args.fetch_jobs < 1:
        raise UsageError("--fetch-jobs must be at least 1")
    if args.max_unpacked_mb < 1 or args.max_download_mb < 1:
        raise UsageError("--max-unpacked-mb and --max-download-mb must be at least 1")
    try:
        return RegistryOptions(
            pypi_url=args.pypi_url or "",
            npm_registry=args.npm_registry or "",
            cache=args.package_cache or "",
            jobs=args.fetch_jobs,
            keep_going=args.keep_going,
            limits=ArchiveLimits(max_expanded_bytes=args.max_unpacked_mb << 20),
            max_download_bytes=args.max_download_mb << 20,
            download_timeout=args.download_timeout,
            progress=_progress(args),
        )
    except SourceError as e:
        raise UsageError(str(e)) from None


def _print_summary(summary, as_json: bool, args=None) -> None:
    from ..build import progress

    if args is not None and _progress(args) == "json":
        progress.done()  # the last JSON progress line
    if as_json:
        print(json_text(summary.to_dict()))
    else:
        print("\n".join(summary.lines()))


def _spark_settings(pairs: list[str]) -> dict[str, str]:
    settings = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip().startswith("spark.") or not value.strip():
            raise UsageError(f"--spark-conf wants KEY=VALUE with a spark.* key, not {pair!r}")
        settings[key.strip()] = value.strip()
    return settings


def cmd_build(args) -> int:
    from ..build.compact import compact_built
    from ..build.local import build_index

    if args.default:
        out = _index_path(args.out) if args.out else default_index_path()
        sources = args.sources or DEFAULT_SOURCES
    else:
        if not args.sources:
            raise UsageError("build needs at least one SOURCE (or --default)")
        if not args.out:
            raise UsageError("build needs --out DIR (or --default)")
        out, sources = Path(args.out), args.sources
    sources = _with_popular(sources, args)
    if args.master and args.engine != "spark":
        raise UsageError("--master needs --engine spark")
    if args.spark_conf and args.engine != "spark":
        raise UsageError("--spark-conf needs --engine spark")
    options = _build_options(args)
    if args.engine == "spark":
        from ..build.spark import build_index_spark, require_pyspark

        settings = _spark_settings(args.spark_conf)
        require_pyspark()
        summary = build_index_spark(sources, out, options, master=args.master, settings=settings)
    else:
        summary = build_index(sources, out, options)
    summary = compact_built(out, summary, options)
    _print_summary(summary, args.json, args)
    _print_workspaces(out, args)
    return 0


def cmd_add(args) -> int:
    from ..build.add import add_to_index
    from ..build.compact import compact_built
    from ..build.local import build_index
    from ..store.generations import CURRENT_NAME

    path = _index_path(args.index)
    sources = _with_popular(args.sources, args)
    if args.create and not (Path(path) / CURRENT_NAME).exists():
        options = _build_options(args)
        summary = compact_built(path, build_index(sources, path, options), options)
    else:
        summary = add_to_index(path, sources, _build_options(args))
    _print_summary(summary, args.json, args)
    _print_workspaces(path, args)
    return 0


def _with_popular(sources: list[str], args) -> list[str]:
    """The sources, and with `--popular N` the N most downloaded packages of each registry
    the workspaces among them use (`popular:npm:N`, `popular:pypi:N`)."""
    count = getattr(args, "popular", 0) or 0
    if not count:
        return list(sources)
    from ..build.sources import SourceError
    from ..build.sources.workspace import is_workspace_spec
    from ..build.sources.workspace_plan import plan_workspace, workspace_folder

    out = list(sources)
    for spec in sources:
        if is_workspace_spec(spec):
            try:
                plan = plan_workspace(workspace_folder(spec))
            except SourceError as e:
                raise UsageError(str(e)) from None
            out += [p for p in plan.popular_specs(count) if p not in out]
    if out == list(sources):
        raise UsageError("--popular N goes with a workspace:DIR source that uses npm or PyPI")
    return out


def _print_workspaces(path, args) -> None:
    """After a build of a workspace: what the index holds of it, per ecosystem."""
    from ..build.sources.popular import is_popular_spec
    from ..build.sources.workspace import is_workspace_spec
    from ..store.generations import read_header

    if args.json or not any(is_workspace_spec(s) or is_popular_spec(s) for s in args.sources):
        return
    for line in workspace_lines(read_header(Path(path))[1].sources):
        print(line)


def cmd_plan(args) -> int:
    from ..build.sources import SourceError
    from ..build.sources.workspace_plan import PREFIX, plan_workspace

    value = args.workspace.removeprefix(PREFIX)
    try:
        plan = plan_workspace(value)
    except SourceError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json_text(plan.to_dict()))
        return 0
    d = plan.to_dict()
    print(f"workspace: {printable(d['workspace'], 400)}")
    print(f"index: {printable(d['index'], 400)}")
    for e in d["ecosystems"]:
        files = ", ".join(printable(f, 200) for f in e["files"]) or "none"
        line = f"{e['ecosystem']}: {e['packages']:,} packages from {files}"
        if e["not_from_registry"]:
            n = e["not_from_registry"]
            line += f" ({n} {'entry' if n == 1 else 'entries'} not from the registry left out)"
        print(line)
    for s in d["stdlibs"]:
        print(f"standard library: {s['language']} {s['version']} ({s['spec']})")
    for n in d["not_indexed"]:
        where = printable(n["file"], 200) or n["ecosystem"]
        print(f"not indexed: {where}: {n['reason']}")
    for problem in d["problems"]:
        print(f"cannot read: {printable(problem, 400)}")
    if d["truncated"]:
        print("(the workspace has more files than are looked at; the rest were not read)")
    print(f"summary: {d['summary']}")
    return 0


def cmd_compact(args) -> int:
    from ..build.compact import compact_index

    path = _index_path(args.index)
    if is_remote(path):
        raise UsageError("compact rewrites the index's files: run it where the index is")
    progress = False if args.quiet else (True if args.progress else None)
    summary = compact_index(path, args.shard_words, progress)
    _print_summary(summary, args.json)
    return 0


def _open(path: Path | str, token_file: str | None = None):
    return open_location(path, _token(path, token_file))


def _token(path: Path | str, token_file: str | None) -> str | None:
    from ..service.remote import default_token

    if token_file:
        return _read_text(token_file, MAX_TOKEN_BYTES).strip()
    return default_token() if is_remote(path) else None


def cmd_stats(args) -> int:
    from ..store.generations import verify

    path = _index_path(args.index)
    if args.verify and is_remote(path):
        raise UsageError("--verify reads the index's files: run it where the index is served")
    # --verify reads every byte before anything maps the files: damage that the open of a
    # large index trusts (see `Index`) is reported here, never crashed on
    problems = verify(path) if args.verify else []
    if problems:
        if args.json:
            print(json_text({"path": str(path), "problems": problems}))
        else:
            print(f"index: {path}")
            print("verify: " + "; ".join(problems))
        return 1
    with _open(path) as idx:
        s = idx.summary()
    if args.verify:
        s["problems"] = problems
    if args.json:
        print(json_text(s))
    else:
        skipped = (s.get("skipped") or {}).items()  # (names from the index: made printable)
        skipped = ", ".join(f"{n} {printable(r, 100)}" for r, n in sorted(skipped)) or "none"
        print(f"index: {printable(s['path'], 4000)} ({printable(s['name'], 300)})")
        print(
            f"format version {s['format_version']}: suffix arrays over word ids, every "
            "common run is found with the exact number of files"
        )
        print(f"files: {s['files']:,} ({s['documents']:,} unique documents)")
        print(f"words: {s['words']:,} ({s['vocabulary']:,} distinct) in {s['shards']} shard(s)")
        print(f"size: {s['bytes']:,} bytes ({s.get('bytes_per_word')} bytes per word)")
        if "search" in s:  # (a service of an older version does not say)
            print(f"search: {printable(s['search'], 300)}")
        if s.get("shard_id_bytes"):
            widths = " or ".join(map(str, sorted(set(s["shard_id_bytes"]))))
            layout = f"word ids in {widths} bytes"
            stride = s.get("renamed_stride")
            if stride:
                sampled = "every suffix" if stride == 1 else f"one suffix in {stride}"
                layout += f"; rename-insensitive view in 2 bytes a word, {sampled} sorted"
            print(layout)
        print(f"skipped while building: {skipped}")
        for line in workspace_lines(s.get("sources") or []):
            print(line)
        dead = s.get("dead_words") or 0
        if dead and s["words"]:
            print(
                f"old versions: {dead:,} words ({dead / s['words']:.0%}) in documents no file "
                "holds any more, skipped by every search (an add of all the index's sources "
                "builds it anew from half, `build` at once)"
            )
        joined = compacted_shards(s.get("shard_words") or [])
        if not is_remote(path) and joined < s["shards"]:
            print(
                f"compact: `recitation-index compact` would join its {s['shards']} shards into "
                f"{joined} (each lookup searches every shard)"
            )
        if args.verify:
            print("verify: " + ("; ".join(s["problems"]) or "all files match their digests"))
    return 1 if args.verify and s["problems"] else 0


# the most read of each file given on the command line (a link to /dev/zero or a named pipe
# is refused before it is read)
MAX_TOKEN_BYTES = 64 << 10
MAX_CODE_BYTES = 16 << 20  # a suggestion on stdin, a context file


def _read_text(path: str, limit: int) -> str:
    try:
        data = read_small_file(path, limit)
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    return data.decode("utf-8-sig", errors="replace")


def _read_stdin(limit: int) -> str:
    text = sys.stdin.read(limit + 1)
    if len(text) > limit:
        raise UsageError(f"the suggestion on stdin is larger than {size_text(limit)}")
    return text


def _match_text(m: Match) -> str:
    return f"{describe_match(m)}\n{match_details(m)}"


def cmd_query(args) -> int:
    suggestion = _read_stdin(MAX_CODE_BYTES)
    context = _read_text(args.context_file, MAX_CODE_BYTES) if args.context_file else ""
    if args.min_tokens < 1:
        raise UsageError("--min-tokens must be at least 1")
    from ..text.words import count_words

    language, how = _query_language(args, context, suggestion)
    with _open(_index_path(args.index), args.token_file) as idx:
        matches = idx.match(suggestion, context, min_tokens=args.min_tokens, language=language)
    sug_words = count_words(suggestion)
    if how in ("shebang", "parse"):  # said: the renamed copies found depend on it
        what = "its shebang" if how == "shebang" else "a parse of the text"
        print(f"recitation-index: read as {language} ({what}; --language sets it)", file=sys.stderr)
    if args.json:
        report = query_report(suggestion, context, matches)
        report["language"] = {"name": language, "from": how} if language else None
        print(json_text(report))
    elif not matches:
        print(f"no quoted span of {args.min_tokens}+ words ({sug_words} words checked)")
    else:
        print("\n\n".join(_match_text(m) for m in matches))
    return 0


def _query_language(args, context: str, suggestion: str) -> tuple[str | None, str | None]:
    """The language of the rename-insensitive view for `query`, and where it comes from:
    --language, else --context-file's name, else the text (its shebang or a parse)."""
    from ..text.language_guess import guess_language

    if args.language:
        return args.language, "--language"
    if args.context_file:
        by_name = language_for_path(args.context_file)
        if by_name:
            return by_name, "file name"
    guess = guess_language(context + suggestion)
    return (guess.language, guess.how) if guess else (None, None)


def cmd_show(args) -> int:
    if not 0 <= args.context_lines <= 200:
        raise UsageError("--context-lines must be 0..200")
    if args.min_tokens < 1:
        raise UsageError("--min-tokens must be at least 1")
    path = code_path(args)  # FILE, or stdin
    stdin = _read_text(path, MAX_CODE_BYTES) if path else _read_stdin(MAX_CODE_BYTES)
    context = _read_text(args.context_file, MAX_CODE_BYTES) if args.context_file else ""
    with _open(_index_path(args.index), args.token_file) as idx:
        return show_view(args, idx, stdin, context)


def cmd_check(args) -> int:
    from .check import CheckUsageError, run_check

    if args.min_tokens < 1:
        raise UsageError("--min-tokens must be at least 1")
    if args.jobs < 0:
        raise UsageError("--jobs must be 0 (every core) or more")
    location = _index_path(args.index)
    token = _token(location, args.token_file)
    with open_location(location, token) as idx:
        try:
            return run_check(args, idx, _version(), location, token)
        except CheckUsageError as e:
            raise UsageError(str(e)) from None


def cmd_references(args) -> int:
    from .references_log import run_references
    from .sbom import SbomError

    try:
        return run_references(args, _version())
    except SbomError as e:
        raise UsageError(str(e)) from None


def cmd_serve(args) -> int:
    from ..service import Listen, ServeError, ServiceConfig, serve

    if (
        min(args.workers, args.max_request_bytes, args.max_pending) < 1
        or min(args.max_header_bytes, args.max_connections, args.header_timeout) <= 0
    ):
        raise UsageError(
            "--workers, --max-request-bytes, --max-pending, --max-header-bytes, "
            "--max-connections and --header-timeout must be positive"
        )
    config = ServiceConfig(
        index=str(_index_path(args.index)),
        token_file=args.token_file,
        max_body_bytes=args.max_request_bytes,
        read_timeout=args.read_timeout,
        lookup_timeout=args.lookup_timeout,
        max_pending=args.max_pending,
        log_queries=args.log_queries,
        max_header_bytes=args.max_header_bytes,
        header_timeout=args.header_timeout,
        max_connections=args.max_connections,
    )
    listen = Listen(args.host, args.port, args.workers, args.certfile, args.keyfile, http=args.http)
    try:
        serve(config, listen)
    except ServeError as e:
        raise UsageError(str(e)) from None
    return 0


def add_token_file_option(parser) -> None:
    """`--token-file F`, the same for every command that reads an index service."""
    parser.add_argument(
        "--token-file",
        metavar="F",
        help="bearer token for an index given as an https:// URL (default: "
        "$RECITATION_INDEX_TOKEN or the file $RECITATION_INDEX_TOKEN_FILE)",
    )


def _number(kind: type, low: float, high: float, *, above: bool = False):
    """An option's type: a finite int or float from `low` (past it, with `above`) to
    `high`, or the one-line usage error naming the option."""
    what = "an integer" if kind is int else "a number"

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(value) or value < low or (above and value == low) or value > high:
            lo, hi = (f"{x}" if kind is int else f"{x:g}" for x in (low, high))
            span = f"above {lo} and at most {hi}" if above else f"from {lo} to {hi}"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} {span}")
        return value

    return parse


SECONDS = _number(float, 0, 86_400, above=True)  # a timeout: positive, at most a day
COUNT = _number(int, 1, 1_000_000)
BYTES = _number(int, 1, 1 << 40)


def add_serve_parser(sub) -> None:
    v = sub.add_parser(
        "serve",
        help="serve an index over HTTP to a team's editors",
        description="Serve an index over HTTP (JSON API /v1/match, /v1/stats, /v1/health; "
        "/metrics for Prometheus). New generations published by build/add are served "
        "without dropping a request. Needs pip install 'recitation[serve]'.",
    )
    v.add_argument("index", nargs="?", metavar="DIR", help="default: the default index")
    v.add_argument("--host", default="127.0.0.1", help="address to listen on (%(default)s)")
    v.add_argument(
        "--port", type=_number(int, 0, 65535), default=8765, help="(default: %(default)s)"
    )
    v.add_argument(
        "--workers", type=_number(int, 1, 256), default=1, help="worker processes (%(default)s)"
    )
    v.add_argument(
        "--http",
        choices=("auto", "httptools", "h11"),
        default="auto",
        help="HTTP parser: httptools (C, faster) or h11 (pure Python); auto: httptools when "
        "installed (the serve extra installs it where it has wheels)",
    )
    v.add_argument("--token-file", metavar="F", help="require this bearer token")
    v.add_argument("--certfile", metavar="F", help="TLS certificate chain (PEM)")
    v.add_argument("--keyfile", metavar="F", help="TLS private key (PEM)")
    v.add_argument(
        "--max-request-bytes", type=BYTES, default=1 << 20, help="larger requests get 413"
    )
    v.add_argument(
        "--read-timeout", type=SECONDS, default=10.0, help="seconds to receive a request (408)"
    )
    v.add_argument(
        "--lookup-timeout", type=SECONDS, default=10.0, help="seconds for a lookup (503)"
    )
    v.add_argument(
        "--max-pending", type=COUNT, default=64, help="lookups queued per worker before 503"
    )
    v.add_argument(
        "--max-header-bytes", type=BYTES, default=16 * 1024, help="larger request heads get 431"
    )
    v.add_argument(
        "--header-timeout",
        type=SECONDS,
        default=10.0,
        help="seconds for a request's head to arrive (then 408 and closed)",
    )
    v.add_argument(
        "--max-connections",
        type=COUNT,
        default=1000,
        help="connections per worker, kept below the descriptor limit; at the limit the one "
        "idle longest is closed (%(default)s)",
    )
    v.add_argument(
        "--log-queries", action="store_true", help="log each query's code (off by default)"
    )
    v.set_defaults(func=cmd_serve)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(
        prog="recitation-index", description=DESCRIPTION, epilog=EPILOG, formatter_class=fmt
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def build_opts(sp, params: bool):
        sp.add_argument(
            "--jobs",
            "-j",
            type=_number(int, 1, 1024),
            default=None,
            help="worker processes (default: all cores)",
        )
        sp.add_argument(
            "--max-file-bytes",
            type=BYTES,
            default=1_000_000,
            help="skip larger files (default: %(default)s)",
        )
        sp.add_argument(
            "--shard-words",
            type=int,
            default=DEFAULT_SHARD_WORDS,
            help="words per shard: a build's memory is about one shard's sort, 9 bytes a "
            "word, the rest on disk (default: %(default)s)",
        )
        sp.add_argument(
            "--compact-words",
            type=_number(int, 0, MAX_SHARD_WORDS),
            default=None,
            metavar="N",
            help="once built, join the shards into shards of at most N words, sorted again "
            "(fewer shards, faster lookups; about 10 bytes a word of memory, after the "
            "build's); 0: keep the build's shards. Default: "
            f"{DEFAULT_COMPACT_WORDS} with --shard-words at its default or above (5.4 GB at "
            "most), 0 with a smaller one (it bounds the memory)"
            + ("" if params else "; for an index built anew or --create"),
        )
        pk = sp.add_argument_group("package sources (pypi:, npm:)")
        pk.add_argument(
            "--pypi-url",
            metavar="URL",
            help="the Python package index (Simple API; default: $RECITATION_PYPI_URL, "
            "$PIP_INDEX_URL, https://pypi.org/simple/); user:password@ in the URL or "
            "$RECITATION_PYPI_TOKEN for a private one",
        )
        pk.add_argument(
            "--npm-registry",
            metavar="URL",
            help="the npm registry (default: $RECITATION_NPM_REGISTRY, $npm_config_registry, "
            "https://registry.npmjs.org/); $RECITATION_NPM_TOKEN for a private one",
        )
        pk.add_argument(
            "--package-cache",
            metavar="DIR",
            help="where downloaded packages are kept (default: $RECITATION_PACKAGE_CACHE, "
            "else packages/ in the user cache directory)",
        )
        pk.add_argument(
            "--fetch-jobs",
            type=_number(int, 1, 64),
            default=4,
            help="downloads at a time (default: %(default)s)",
        )
        pk.add_argument(
            "--max-download-mb",
            type=_number(int, 1, 1 << 20),
            default=1024,
            help="leave out a package archive larger than this (default: %(default)s)",
        )
        pk.add_argument(
            "--max-unpacked-mb",
            type=_number(int, 1, 1 << 20),
            default=1024,
            help="refuse a package archive that expands past this (default: %(default)s)",
        )
        pk.add_argument(
            "--download-timeout",
            type=SECONDS,
            metavar="SECONDS",
            help="give up a package download (or a registry's answer) that has not finished "
            "in this time, however slowly it still comes (default: "
            "$RECITATION_DOWNLOAD_TIMEOUT, else 600)",
        )
        pk.add_argument(
            "--keep-going",
            action="store_true",
            help="leave out (and count) the packages of a list that cannot be fetched, "
            "instead of stopping",
        )
        sp.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
        sp.add_argument(
            "--progress",
            action="store_true",
            help="a progress bar even when stderr is not a terminal",
        )
        sp.add_argument(
            "--popular",
            type=_number(int, 0, 4000),
            default=0,
            metavar="N",
            help="with a workspace:DIR source: also the N most downloaded packages of each "
            "registry it uses (npm, PyPI; from pinned lists shipped with Recitation; up to "
            "4,000; as popular:npm:N and popular:pypi:N)",
        )
        sp.add_argument(
            "--progress-json",
            action="store_true",
            help='progress as JSON lines on stderr, for a program that shows it: {"stage": '
            '"fetching npm", "done": 3, "total": 143, "unit": "pkg"} ..., last {"stage": "done"}',
        )
        sp.add_argument("--json", action="store_true", help="print the summary as JSON")
        if params:
            sp.add_argument(
                "--no-renamed",
                dest="renamed",
                action="store_false",
                help="leave out the rename-insensitive view (renamed copies are then "
                "not found; the index is about 25%% smaller)",
            )
            sp.add_argument(
                "--renamed-stride",
                type=int,
                default=RENAMED_STRIDE,
                metavar="N",
                help="the rename-insensitive view's suffix array sorts one position in N: "
                "4/N bytes a word, N windows searched per anchor there (1: the fastest "
                "lookups with a language, 3 bytes a word more; default: %(default)s)",
            )

    b = sub.add_parser(
        "build",
        help="build a new index from corpus sources",
        description="Build a new index; an index already at --out is replaced "
        "only once the new one is complete.",
        formatter_class=fmt,
    )
    b.add_argument("sources", nargs="*", metavar="SOURCE")
    b.add_argument("--out", "-o", metavar="DIR", help="where to publish the index")
    b.add_argument(
        "--default",
        action="store_true",
        help="build the embedded default index (python:stdlib) in the user cache "
        "directory, where the other commands look when no index is given",
    )
    build_opts(b, True)
    b.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="local: worker processes on this machine (default); spark: Apache Spark "
        "(pip install 'recitation[spark]', Java 17), same index",
    )
    b.add_argument(
        "--master",
        metavar="URL",
        help="Spark master for --engine spark (default: local[N] with --jobs cores); "
        "on a cluster --out must be on a filesystem every node mounts",
    )
    b.add_argument(
        "--spark-conf",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a Spark setting for --engine spark, as spark-submit's --conf (repeatable), "
        "e.g. spark.driver.memory=4g (local mode's default 1g)",
    )
    b.set_defaults(func=cmd_build)

    a = sub.add_parser(
        "add",
        help="add corpus sources to an existing index",
        description="Extend an index; it stays usable and unchanged until the "
        "extended one is published. A source it holds at the same version is left out; "
        "at another version (a new commit, a changed folder) it is replaced: its old "
        "files leave the index. The added shards are then joined with the smaller ones "
        "before them (each at most twice the words joined after it, within --shard-words), "
        "so an index kept current by many adds stays in few shards and answers as fast. "
        "Given every source the index holds (a workspace:DIR again), it builds the index "
        "anew once half its words are in documents no file holds any more (old versions).",
    )
    a.add_argument("index", metavar="DIR")
    a.add_argument("sources", nargs="+", metavar="SOURCE")
    a.add_argument(
        "--create",
        action="store_true",
        help="build the index when there is none at DIR yet (how an editor keeps a "
        "workspace's index: `add --create IDX workspace:DIR`, then again when a lock file "
        "changes)",
    )
    build_opts(a, False)
    a.set_defaults(func=cmd_add)

    pl = sub.add_parser(
        "plan",
        help="what `workspace:DIR` would index, without fetching",
        description="Read a workspace's manifests and lock files (npm: package-lock.json, "
        "npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml, else package.json; PyPI: "
        "requirements*.txt, poetry.lock, uv.lock, Pipfile.lock, pdm.lock, else "
        "pyproject.toml), find the standard libraries of the languages its files use (Python, "
        "Go, Java, Rust, where this machine has them), and say what an index of it would hold "
        "and cost, and which manifests it would leave out and why. Nothing is fetched.",
        formatter_class=fmt,
    )
    pl.add_argument("workspace", metavar="workspace:DIR", help="the workspace (or just DIR)")
    pl.add_argument("--json", action="store_true", help="the plan as JSON")
    pl.set_defaults(func=cmd_plan)

    m = sub.add_parser(
        "compact",
        help="join an index's shards into fewer, larger ones (faster lookups)",
        description="Join neighbouring shards of an index while each joined shard holds at "
        "most --shard-words words, and sort their suffix arrays again. A lookup searches "
        "every shard, so fewer shards answer faster: compact after builds bounded by their "
        "memory and after several `add`s. Documents, texts and sources are carried over "
        "unchanged; the index answers as before until the compacted one is published.",
    )
    m.add_argument("index", nargs="?", metavar="DIR", help="default: the default index")
    m.add_argument(
        "--shard-words",
        type=_number(int, 1, MAX_SHARD_WORDS),
        default=DEFAULT_COMPACT_WORDS,
        help="words per joined shard: joining one takes about 10 bytes a word of memory "
        "(default: %(default)s)",
    )
    m.add_argument("--json", action="store_true")
    m.add_argument("--progress", action="store_true", help="show progress even when piped")
    m.add_argument("--quiet", action="store_true", help="no progress bar")
    m.set_defaults(func=cmd_compact)

    s = sub.add_parser("stats", help="what an index holds")
    s.add_argument("index", nargs="?", metavar="DIR", help="default: the default index")
    s.add_argument("--json", action="store_true")
    s.add_argument("--verify", action="store_true", help="check every file's digest")
    s.set_defaults(func=cmd_stats)

    q = sub.add_parser(
        "query",
        help="attribute a suggestion read from stdin",
        description="Read a suggestion on stdin and report every span of at "
        "least --min-tokens words quoted from the index, with its sources.",
    )
    q.add_argument("index", nargs="?", metavar="DIR", help="default: the default index")
    q.add_argument("--index", dest="index_opt", metavar="DIR", help=argparse.SUPPRESS)
    q.add_argument("--context-file", metavar="F", help="code written before the suggestion")
    q.add_argument("--min-tokens", type=int, default=60, help="shortest span reported (60)")
    q.add_argument(
        "--language",
        metavar="LANG",
        help="the suggestion's language (python, javascript, typescript, java, go, "
        "c, cpp, rust): also report copies with renamed identifiers; default: "
        "from --context-file's extension, else read from the text (a shebang, a parse), "
        "said on stderr",
    )
    q.add_argument("--json", action="store_true")
    add_token_file_option(q)
    q.set_defaults(func=cmd_query)
    add_show_parser(sub, cmd_show)
    add_serve_parser(sub)

    c = sub.add_parser(
        "check",
        help="scan files and folders (CI, pre-commit)",
        formatter_class=fmt,
        description="""\
Scan files and folders for quoted code, with the editor's verdicts: a quote that names its
source nearby is attributed, the decisions file (.recitation.toml, in the file's folder or
above) dismisses quotes, allows sources and sets the license policy. A folder inside a git
work tree contributes its tracked files only (untracked ones are counted). Files are read
whatever their size (in windows) and encoding (UTF-8, UTF-16/32); links are followed inside
the repository only. Every file that cannot be checked is listed with the reason and fails
the check unless that is allowed.""",
        epilog="""\
exit status:
  0  no open quote at or above --fail-on, and every file found was checked
  1  at least one (attributed, dismissed, allowed and baselined quotes never fail)
  2  bad usage, an unreadable decisions file or baseline, a missing or damaged index
  3  files that could not be checked (listed with the reason), not allowed to be left
     out (--allow-skipped, or allow-skipped under [check] in .recitation.toml)

adopting it on an existing codebase:
  recitation-index check . --baseline .recitation-baseline.json --update-baseline
  recitation-index check . --baseline .recitation-baseline.json   # only new quotes fail

what the project quotes, for compliance (a bill of materials; decisions marked):
  recitation-index check . --format spdx > quotes.spdx.json      # SPDX 2.3 snippets
  recitation-index check . --format cyclonedx > quotes.cdx.json  # CycloneDX 1.6""",
    )
    c.add_argument("paths", nargs="+", metavar="PATH", help="files and folders to scan")
    c.add_argument("--index", metavar="DIR", help="default: the default index")
    add_token_file_option(c)
    c.add_argument(
        "--format",
        choices=("text", "json", "sarif", "spdx", "spdx-tv", "cyclonedx"),
        default="text",
        help="text, json, sarif (code scanning), or a bill of materials of what is quoted: "
        "spdx (SPDX 2.3 JSON), spdx-tv (SPDX 2.3 tag-value), cyclonedx (CycloneDX 1.6 JSON)",
    )
    c.add_argument("--min-tokens", type=int, default=60, help="shortest span reported (60)")
    c.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="skip paths matching GLOB (relative, / separated; repeatable), e.g. 'vendor/*'",
    )
    c.add_argument(
        "--decisions",
        metavar="FILE",
        help="the decisions file to use for every file (default: .recitation.toml in the "
        "file's folder or the nearest one above it, up to the repository's root)",
    )
    c.add_argument(
        "--baseline",
        metavar="FILE",
        help="quotes recorded in FILE do not fail (see --update-baseline)",
    )
    c.add_argument(
        "--update-baseline",
        action="store_true",
        help="record today's open quotes in the --baseline FILE and exit 0",
    )
    c.add_argument(
        "--fail-on",
        choices=("error", "warning", "information", "hint"),
        default="warning",
        help="the least severity that fails the check (warning)",
    )
    c.add_argument(
        "--severity",
        action="append",
        metavar="KIND=ACTION",
        help="what a kind shows as, like the editor's setting (recitation=warning, "
        "license, repetitive, inventory, idiom=hint); ACTION: off, hint, "
        "information, warning, error",
    )
    c.add_argument(
        "--allow-skipped",
        action="store_true",
        help="files that cannot be checked (binary, unreadable, links out of the "
        "repository...) are listed but do not fail the check (exit 3); also: "
        "`allow-skipped = true` or a list of globs under [check] in .recitation.toml",
    )
    c.add_argument(
        "--show-suppressed",
        action="store_true",
        help="also list attributed, dismissed, allowed and baselined quotes (text format)",
    )
    c.add_argument(
        "--language",
        metavar="LANG",
        help="language of the files (default: from each file's extension); "
        "copies with renamed identifiers are reported for supported ones",
    )
    c.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=0,
        metavar="N",
        help="files matched on N cores at once (default 0: every core, one for each "
        "512 KiB of code to read); the report is the same with any N",
    )
    add_sbom_options(c)
    c.set_defaults(func=cmd_check)
    add_references_parser(sub, cmd_references)
    return p


class Terminated(KeyboardInterrupt):
    """SIGTERM: a command ends as on Ctrl-C (the same cleanup, the lock released)."""


_WRITERS = ("build", "add")  # commands that write an index: say what became of it


class _Signals:
    """Ctrl-C and SIGTERM as KeyboardInterrupt (Terminated) in the main thread, so every
    command cleans up and ends with one line; a second one while it cleans up ends the
    process at once (the operating system releases the writer lock; the next writer
    removes what is left)."""

    def __init__(self, command: str):
        self.command = command
        self.received: list[int] = []
        self._old: dict[int, object] = {}

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            for name in ("SIGINT", "SIGTERM"):
                signum = getattr(signal, name, None)
                if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
                    self._old[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._old.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame) -> None:
        if self.received:
            print(f"recitation-index: {self._what()} again; stopped at once", file=sys.stderr)
            sys.stderr.flush()
            os._exit(self.status)
        self.received.append(signum)
        raise Terminated() if signum == getattr(signal, "SIGTERM", None) else KeyboardInterrupt()

    def _what(self) -> str:
        return "terminated" if self.status == 143 else "interrupted"

    @property
    def status(self) -> int:
        """130 after Ctrl-C, 143 after SIGTERM."""
        if self.received:
            return 128 + self.received[0]
        return 130

    def message(self, published: bool = False) -> str:
        what = self._what()
        if self.command not in _WRITERS:
            return f"recitation-index: {what}"
        if published:
            return f"recitation-index: {what} after the new index was published; it is complete"
        return f"recitation-index: {what}; the published index is unchanged"


def _ended(status: int, argv: list[str] | None) -> int:
    """After an interruption, the program ends now: a thread still at work (a shard being
    sorted, a source being read) would hold up Python's exit until it is done. Only for
    the program itself (no `argv` given), never for a caller in the same process."""
    lingering = [
        t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon
    ]
    if argv is None and lingering:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status


_LINK_LOOP = re.compile(r"Symlink loop from (.*)")


def _too_long_is_usage(func, args) -> int:
    """A path longer than the system takes, or a loop of links, wherever it is first met
    (Python's `exists` and `is_dir` raise for the one, `resolve` for the other): one line
    naming it, not an unexpected error."""
    try:
        return func(args)
    except OSError as e:
        if e.errno != errno.ENAMETOOLONG:
            raise
        name = e.filename if e.filename is not None else ""
        raise UsageError(f"{os.fsdecode(name) if name else 'a path'}: path too long") from None
    except RuntimeError as e:
        loop = _LINK_LOOP.fullmatch(str(e))
        if loop is None:
            raise
        raise UsageError(f"{loop.group(1).strip(chr(39))}: a loop of symbolic links") from None


LONG_WORD = 240  # a word of an error longer than this (a path) is shown cut in its middle


def _shortened(message: str) -> str:
    """An error's words over LONG_WORD characters cut in their middle, so that the reason
    after a 5,000-character path is still on the screen."""
    if len(message) <= LONG_WORD:
        return message
    return " ".join(
        w if len(w) <= LONG_WORD else f"{w[: LONG_WORD // 2]}\u2026{w[-LONG_WORD // 3 :]}"
        for w in message.split(" ")
    )


def main(argv: list[str] | None = None) -> int:
    reconfigure_output()  # a name the output's encoding cannot hold is escaped, not an error
    parser = _parser()
    signals = _Signals("")
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        if getattr(args, "index_opt", None):
            args.index = args.index_opt
        if args.command == "serve":  # the HTTP server handles its signals itself
            return _too_long_is_usage(args.func, args)
        signals = _Signals(args.command)
        with signals:
            try:
                return _too_long_is_usage(args.func, args)
            except Exception:
                # a failure once a signal came is the signal's: a killed git, or the
                # interruption itself wrapped in another error where Python raises it
                # (a class being made as the module that defines it is imported:
                # "Error calling __set_name__")
                if signals.received:
                    raise KeyboardInterrupt() from None
                raise
    except (UsageError, BuildError, IndexOpenError, WorkerDied) as e:
        msg = printable(_shortened(str(e)), 4000)  # it can name a file: one printable line
        print(
            f"recitation-index: {msg}" if not msg.startswith("recitation-index") else msg,
            file=sys.stderr,
        )
        return 2
    except InterruptedAfterPublish:
        print(signals.message(published=True), file=sys.stderr)
        return _ended(signals.status, argv)
    except KeyboardInterrupt:
        print(signals.message(), file=sys.stderr)
        return _ended(signals.status, argv)
    except BrokenPipeError:
        return 0
    except Exception as e:  # never a traceback (exit 1 means "quoted code found")
        if os.environ.get("RECITATION_DEBUG"):
            raise
        print(
            f"recitation-index: unexpected error: {type(e).__name__}: {printable(e, 4000)} "
            "(RECITATION_DEBUG=1 shows where)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
