"""`recitation-index serve`: the index service on uvicorn, with N worker processes.

`serve` binds the socket (a port already taken is one line, before anything says
"serving") and uvicorn starts the workers on it (`--workers`), each importing `create_app`
with the config it finds in the environment; a worker that dies is replaced. A service that
stops without being asked to (its workers cannot serve the index any more) is an error.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass

from ..match.index import open_index
from ..store.generations import IndexOpenError
from ..store.small_files import read_small_file
from .app import CONFIG_ENV, ServiceConfig, read_token
from .metrics import METRICS_DIR_ENV

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


class ServeError(Exception):
    pass


@dataclass
class Listen:
    host: str = "127.0.0.1"
    port: int = 8765
    workers: int = 1
    certfile: str | None = None
    keyfile: str | None = None
    keep_alive_seconds: int = 30
    http: str = "auto"  # h11, httptools, or auto (httptools when installed)


def require_uvicorn():
    # prometheus_client is not imported here: it picks its multiprocess mode when imported,
    # after `serve` has set the directory
    if importlib.util.find_spec("prometheus_client") is None:
        raise ServeError("serving needs prometheus-client: pip install 'recitation[serve]'")
    try:
        import uvicorn
    except ImportError:
        raise ServeError("serving needs uvicorn: pip install 'recitation[serve]'") from None
    return uvicorn


MAX_PEM_BYTES = 1 << 20  # a certificate chain or a key


def check_tls(certfile: str, keyfile: str) -> None:
    """ServeError, one line naming the file, unless the certificate chain and the key load
    as uvicorn will load them (a raw SSLError "PEM lib" named neither)."""
    import ssl

    for option, path, marker, what in (
        ("--certfile", certfile, b"-----BEGIN CERTIFICATE-----", "a PEM certificate"),
        ("--keyfile", keyfile, b"PRIVATE KEY-----", "a PEM private key"),
    ):
        try:
            data = read_small_file(path, MAX_PEM_BYTES)
        except OSError as exc:
            raise ServeError(f"{option} {path}: cannot read it: {exc.strerror or exc}") from None
        if marker not in data:
            raise ServeError(f"{option} {path}: not {what}")

    def no_passphrase():
        raise ServeError(
            f"--keyfile {keyfile}: the key needs a passphrase (give an unencrypted one)"
        )

    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(certfile, keyfile, no_passphrase)
    except ssl.SSLError as exc:
        why = (
            "the key does not match the certificate"
            if exc.reason == "KEY_VALUES_MISMATCH"
            else (f"cannot be loaded ({exc.reason or exc})")
        )
        raise ServeError(f"--certfile {certfile} with --keyfile {keyfile}: {why}") from None
    except OSError as exc:
        raise ServeError(f"--certfile {certfile}: cannot read it: {exc.strerror or exc}") from None


def bind(listen: Listen) -> socket.socket:
    """The listening socket, as uvicorn binds it; ServeError in one line when it cannot."""
    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    sock = socket.socket(family)
    try:
        if os.name != "nt":  # (on Windows the flag lets another process take the port)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((listen.host, listen.port))
    except (OSError, OverflowError) as exc:
        sock.close()
        why = getattr(exc, "strerror", None) or exc
        raise ServeError(f"cannot listen on {listen.host}:{listen.port}: {why}") from None
    sock.set_inheritable(True)
    return sock


def _why_stopped(config: ServiceConfig) -> str:
    """Why the workers stopped serving, as far as the index says."""
    try:
        with open_index(config.index):
            pass
    except IndexOpenError as exc:
        return f"the service stopped: {exc}"
    return "the service stopped: its workers could not start (see the messages above)"


def serve(config: ServiceConfig, listen: Listen) -> None:
    """Run until interrupted. Checks first what a worker would fail on, with one message."""
    uvicorn = require_uvicorn()
    if (listen.certfile is None) != (listen.keyfile is None):
        raise ServeError("--certfile and --keyfile go together")
    if config.token_file:
        try:
            read_token(config.token_file)
        except (OSError, ValueError) as exc:
            raise ServeError(f"cannot read the token: {exc}") from None
    with open_index(config.index) as index:  # IndexOpenError: one line from the CLI
        generation = index.generation
    if listen.certfile and listen.keyfile:
        check_tls(listen.certfile, listen.keyfile)
    if listen.host not in LOOPBACK_HOSTS and listen.certfile is None:
        logging.getLogger("recitation.service").warning(
            "serving plain HTTP on %s: clients accept http:// only on loopback; "
            "give --certfile/--keyfile or put a TLS reverse proxy in front",
            listen.host,
        )
    from .protocol import http_protocol

    try:
        protocol = http_protocol(listen.http)
    except ImportError:
        raise ServeError("--http httptools needs httptools: pip install httptools") from None
    sock = bind(listen)
    metrics_dir = tempfile.mkdtemp(prefix="recitation-metrics-")
    os.environ[METRICS_DIR_ENV] = metrics_dir
    os.environ[CONFIG_ENV] = config.to_env()
    print(
        f"serving {config.index} ({generation}) on "
        f"{'https' if listen.certfile else 'http'}://{listen.host}:{listen.port} "
        f"with {listen.workers} worker(s)",
        flush=True,
    )
    try:
        settings = uvicorn.Config(
            "index_tools.service.app:create_app",
            factory=True,
            http=protocol,
            host=listen.host,
            port=listen.port,
            workers=listen.workers,
            ssl_certfile=listen.certfile,
            ssl_keyfile=listen.keyfile,
            timeout_keep_alive=listen.keep_alive_seconds,
            # h11's own bound on a head (protocol.py answers 431 before it is reached)
            h11_max_incomplete_event_size=config.max_header_bytes + 1024,
            lifespan="on",
            log_level="warning",
            access_log=False,  # requests are counted in /metrics, never logged
            proxy_headers=False,
            server_header=False,
        )
        if listen.workers > 1:
            supervisor = _supervisor(settings, sock)
            supervisor.run()
            failed = not supervisor.asked_to_stop
        else:
            server = uvicorn.Server(settings)
            server.run(sockets=[sock])
            failed = not server.started
    except KeyboardInterrupt:
        failed = False
    finally:
        sock.close()
        shutil.rmtree(metrics_dir, ignore_errors=True)
    if failed:
        raise ServeError(_why_stopped(config))


def _supervisor(settings, sock: socket.socket):
    """uvicorn's supervisor of the workers, noting whether a signal asked it to stop (it
    also stops when a replacement worker cannot start)."""
    from uvicorn.supervisors import Multiprocess

    class Supervisor(Multiprocess):
        asked_to_stop = False

        def handle_int(self) -> None:
            self.asked_to_stop = True
            super().handle_int()

        def handle_term(self) -> None:
            self.asked_to_stop = True
            super().handle_term()

        def handle_break(self) -> None:  # (Windows)
            self.asked_to_stop = True
            super().handle_break()

    return Supervisor(settings, sockets=[sock])
