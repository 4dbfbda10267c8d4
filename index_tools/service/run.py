"""`recitation-index serve`: the index service on uvicorn, with N worker processes.

uvicorn binds the socket once and starts the workers (`--workers`), each importing
`create_app` with the config it finds in the environment; a worker that dies is replaced.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass

from ..match.index import open_index
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
    metrics_dir = tempfile.mkdtemp(prefix="recitation-metrics-")
    os.environ[METRICS_DIR_ENV] = metrics_dir
    os.environ[CONFIG_ENV] = config.to_env()
    print(
        f"serving {config.index} ({generation}) on "
        f"{'https' if listen.certfile else 'http'}://{listen.host}:{listen.port} "
        f"with {listen.workers} worker(s)",
        flush=True,
    )
    from .protocol import http_protocol

    try:
        protocol = http_protocol(listen.http)
    except ImportError:
        raise ServeError("--http httptools needs httptools: pip install httptools") from None

    try:
        uvicorn.run(
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
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)
