"""A Kubernetes API emulator for tests, built on kmock 0.8 (the public entry point).

``Emulator`` (tests/k8s/api.py) is the kmock handler; ``EmulatorThread`` (tests/k8s/harness.py)
serves it on 127.0.0.1 in a background thread for synchronous tests. As a command::

    python -m tests.k8s.emulator --port 0 [--no-gc] [--print-kubeconfig PATH]

prints the URL on one line once it answers, and serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from tests.k8s.api import Emulator
from tests.k8s.harness import EmulatorThread, kubeconfig, setup_cluster
from tests.k8s.wire import WriteRecord

__all__ = ["Emulator", "EmulatorThread", "WriteRecord", "kubeconfig", "main", "setup_cluster"]


def main(argv: list[str] | None = None) -> int:
    """Serve the emulator until SIGTERM/SIGINT; print its URL when ready."""
    parser = argparse.ArgumentParser(prog="python -m tests.k8s.emulator", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--no-gc", action="store_true", help="keep dependents when their owners go")
    parser.add_argument("--print-kubeconfig", type=Path, metavar="PATH", help="write a kubeconfig to PATH")
    parser.add_argument("--namespace", action="append", default=[], help="extra namespace to create")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with EmulatorThread(gc=not args.no_gc, namespaces=args.namespace, port=args.port or None) as emu:
        if args.print_kubeconfig:
            emu.write_kubeconfig(args.print_kubeconfig)
        print(emu.url, flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
