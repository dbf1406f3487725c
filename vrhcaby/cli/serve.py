"""`vrhcaby serve`: the engine as a resident HTTP service on 127.0.0.1, with a web board.

The API answers what `hint`, `cube`, `eval`, `moves`, `show` and `rollout` answer, in the
same JSON (`vrhcaby.serve.app`; the OpenAPI description at `/openapi.json`, browsable at
`/docs`); the web board is at `/`. It listens on the loopback address only unless
`--host` names another. The network is loaded and the kernels compiled before the first
line `serving on URL` is printed, so the first request answers as fast as the next.
Ctrl-C or SIGTERM stops it cleanly (exit status 0).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import socket
from collections.abc import Iterator

from vrhcaby.cli.common import StopSignals, UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve the engine over HTTP", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: any free one)")
    p.add_argument(
        "--threads", type=int, default=1, help="engine threads, each with its own agents (1)"
    )
    p.add_argument(
        "--queue",
        type=int,
        default=64,
        help="requests waiting or running at once; more are answered 503 (default 64)",
    )
    p.add_argument(
        "--max-trials", type=int, default=20736, help="most trials of one rollout job (20736)"
    )
    p.add_argument(
        "--connections",
        type=int,
        default=256,
        help="open connections at once; more are answered 503 (default 256)",
    )
    p.set_defaults(func=run)


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port`; UsageError (one line) if it cannot be had."""
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: a port is 0 to 65535")
    try:
        family, kind, proto, *_ = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        # The protocol named (TCP), not 0: asyncio sets TCP_NODELAY only on sockets that
        # say TCP, and without it every answer waits 40 ms for a delayed ACK.
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def _quiet_stop(base: type) -> type:
    """uvicorn's server, stopped by SIGINT or SIGTERM with exit status 0: a signal is how
    a service is stopped, not a failure (uvicorn's own raises the signal again once it
    has shut down, so the process would die of it)."""

    class Server(base):  # type: ignore[valid-type, misc]
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in _SIGNALS}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return Server


_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run(args: argparse.Namespace) -> int:
    for name in ("threads", "queue", "max_trials", "connections"):
        if getattr(args, name) < 1:
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} must be at least 1, got {getattr(args, name)}")
    try:
        import uvicorn

        from vrhcaby.serve.app import create_app
        from vrhcaby.serve.work import Limits
    except ImportError as exc:
        raise UsageError(
            f"serve needs the 'serve' extra (pip install 'vrhcaby[serve]'): {exc}"
        ) from None
    sock = _listen(args.host, args.port)
    app = create_app(
        Limits(queue=args.queue, threads=args.threads, rollout_trials=args.max_trials),
        warm=False,
    )
    with StopSignals():  # a signal while warming stops it too, as cleanly
        try:
            app.state.service.warm()  # before the line: the first request answers as fast
        except KeyboardInterrupt:
            app.state.service.close()
            return 0
    config = uvicorn.Config(
        app,
        log_level="warning",
        limit_concurrency=args.connections,
        timeout_graceful_shutdown=5,
    )
    server = _quiet_stop(uvicorn.Server)(config)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    sock.listen(2048)  # connections wait in the backlog until the loop takes them
    print(f"serving on http://{shown}:{port}/ (Ctrl-C stops)", flush=True)
    server.run(sockets=[sock])
    return 0
