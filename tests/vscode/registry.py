"""The npm registry of the VS Code end-to-end test: verdaccio on loopback serving the real ms
2.1.2 and 2.1.3 (fetched once by scripts/registry-servers.sh). Prints its URL on the first
line, then serves until it is sent SIGTERM or the process that started it ends.

    python3 tests/vscode/registry.py DIR
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "index_tools" / "build" / "sources"))

from registry_helpers import Verdaccio, have_verdaccio, served  # noqa: E402

PACKAGES = Path(
    os.environ.get("RECITATION_TEST_PACKAGES")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "recitation-test-packages"
)
SERVED = (("ms", "2.1.2"), ("ms", "2.1.3"))


def main() -> int:
    if not have_verdaccio():
        print("verdaccio is not installed: run scripts/registry-servers.sh", file=sys.stderr)
        return 2
    missing = [
        f"{n}-{v}.tgz" for n, v in SERVED if not (PACKAGES / "npm" / f"{n}-{v}.tgz").exists()
    ]
    if missing:
        print(f"not fetched: {', '.join(missing)} (scripts/registry-servers.sh)", file=sys.stderr)
        return 2
    parent = os.getppid()
    # SIGTERM ends the serving below, so that verdaccio stops with it (its stdin is shared
    # with this process and left non-blocking: it cannot be waited on)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with served(Verdaccio(Path(sys.argv[1]))) as npm:
        for name, version in SERVED:
            tgz = PACKAGES / "npm" / f"{name}-{version}.tgz"
            with tarfile.open(tgz) as tar:
                meta = json.load(tar.extractfile("package/package.json"))
            manifest = {k: v for k, v in meta.items() if not k.startswith("_")}
            npm.publish(name, version, tgz.read_bytes(), manifest)
        print(npm.url, flush=True)
        while os.getppid() == parent:
            time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
