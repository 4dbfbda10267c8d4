"""`python -m server` / `recitation-server`: start the language server."""

from __future__ import annotations

import argparse
import gc
import logging
import sys

from . import __version__


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="recitation-server",
        description="Language server that warns when code entering a document quotes "
        "indexed public code, and says where from.",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (default)")
    mode.add_argument("--tcp", metavar="HOST:PORT", help="listen for one client on HOST:PORT")
    parser.add_argument("--log-file", help="write the server log to this file")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument(
        "--log-rpc", action="store_true", help="also log every JSON-RPC message (verbose)"
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--wrap",
        action="store_true",
        help="run in front of another language server: --wrap [--help] -- CMD [ARGS...]",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--wrap" in argv[: argv.index("--") if "--" in argv else len(argv)]:
        from .proxy import main as wrap_main

        return wrap_main(argv)
    args = parse_args(argv)
    handler: logging.Handler = (
        logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    )
    logging.basicConfig(
        level=args.log_level, handlers=[handler], format="%(asctime)s %(name)s %(message)s"
    )
    if not args.log_rpc:
        logging.getLogger("pygls").setLevel(
            max(logging.WARNING, logging.getLevelName(args.log_level))
        )
    from .features import create_server

    server = create_server()
    # the modules and tables loaded so far live as long as the process: keep them out of
    # the collector's full passes, which would otherwise add pauses to lookups
    gc.collect()
    gc.freeze()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            print("--tcp expects HOST:PORT", file=sys.stderr)
            return 2
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_stdio()
    return 0


if __name__ == "__main__":
    sys.exit(main())
