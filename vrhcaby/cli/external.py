"""`vrhcaby external --port N`: play as GNU Backgammon's external player over TCP.

Listens on HOST:PORT (loopback by default; port 0 picks a free one) and answers FIBS
board-state lines with a play, ``double``/``roll``, ``take``/``drop``/``beaver`` or
``accept``/``reject`` (an offered resignation), and ``evaluation`` lines with the five
probabilities and the equity, the way gnubg's ``external`` command does (see
`vrhcaby.io.external`), so programs written for that interface can use the bot. Prints the
address it listens on, then serves until SIGINT or SIGTERM (exit status 130 or 143),
logging each connection and each error line on stderr (with `--verbose`, every request and
its answer).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys

from vrhcaby.cli.common import StopSignals, add_money_rules_arguments, money_rules
from vrhcaby.cli.hint import load_analysis_agent
from vrhcaby.io.external import Server


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "external",
        help="serve gnubg's external-player protocol",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("--port", type=int, required=True, help="TCP port (0: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    parser.add_argument("--agent", default="td", help="a td agent spec (default td)")
    add_money_rules_arguments(parser)
    parser.add_argument(
        "--no-crawford", action="store_true", help="matches are played without the Crawford rule"
    )
    parser.add_argument(
        "--resign",
        action="store_true",
        help="answer 'resign normal|gammon|backgammon' when the bot gives up (gnubg reads "
        "this from an external player it drives; its own external server never resigns)",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="log every request and its answer on stderr"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be 0..65535, got {args.port}")
    agent = load_analysis_agent(args.agent)
    rules = money_rules(args)
    settings = {
        "jacoby": rules.jacoby,
        "beavers": rules.beavers,
        "crawford_rule": not args.no_crawford,
        "resign": args.resign,
    }
    try:
        server = Server(agent, (args.host, args.port), **settings)
    except OSError as exc:
        raise ValueError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger = logging.getLogger("vrhcaby.io.external")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if args.verbose else logging.INFO)
    with server, StopSignals() as stop:
        print(f"Waiting for connections on {args.host}:{server.port} ...", flush=True)
        print(
            f"Money play: {rules.describe()} (unless a board state's jacobyrule or beavers "
            "option says otherwise)",
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
    return stop.status
