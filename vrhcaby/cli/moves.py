"""`vrhcaby moves`: every legal play of a position and roll, as text or JSON.

Each play in JSON has `position_id`, the resulting position with the side that just played
still on roll (as GNU Backgammon lists moves), and `next_position_id`, the same position
with the opponent on roll. `vrhcaby moves -` reads `POSITION DICE` lines from stdin and
answers each with one JSON line; a bad line (a finished game included) is answered with
`{"input": ..., "error": ...}` and the exit status is 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator

import numpy as np

import engine
from engine.play import parse_dice
from engine.waiting import read_position as read_waiting_position
from vrhcaby.cli.common import UsageError
from vrhcaby.io.board_json import moves_json, moves_json_ad, read_dice, read_playable_position

_CHUNK = 512


def _stream(lines: Iterable[str], variant: str) -> Iterator[tuple[dict, bool]]:
    """JSON answers for `POSITION DICE` lines, batched through the generator."""
    pending: list[tuple[str, np.ndarray | None, tuple[int, int] | None, str]] = []

    def flush() -> Iterator[tuple[dict, bool]]:
        good = [(b, d) for _, b, d, _ in pending if b is not None]
        answers = (
            iter(moves_json(np.stack([b for b, _ in good]), np.array([d for _, d in good])))
            if good
            else iter(())
        )
        for line, board, _, error in pending:
            if board is None:
                yield {"input": line, "error": error}, False
            else:
                yield next(answers), True
        pending.clear()

    acey_deucey = engine.get_variant(variant).acey_deucey_bonus
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        try:
            pos_text, dice_text = line.rsplit(None, 1)
            position, dice = read_playable_position(pos_text, variant), parse_dice(dice_text)
        except ValueError as exc:
            msg = str(exc) if " " in line else f"{line!r}: expected POSITION DICE"
            pending.append((line, None, None, msg))
        else:
            if acey_deucey:
                yield from flush()
                yield moves_json_ad(position, dice), True
                continue
            pending.append((line, position.board, dice, ""))
        if len(pending) >= _CHUNK:
            yield from flush()
    yield from flush()


def run(args: argparse.Namespace) -> int:
    if args.position == "-":
        if args.dice is not None:
            raise UsageError("with '-' the dice come from each input line")
        ok = True
        for answer, good in _stream(sys.stdin, args.variant):
            ok &= good
            sys.stdout.write(json.dumps(answer) + "\n")
        return 0 if ok else 2
    position = read_playable_position(args.position, args.variant)
    # DICE, else the roll a Match ID or XGID holds (as hint and rollout read it)
    dice = read_dice(args, read_waiting_position(args.position, args.variant)[1])
    if engine.get_variant(args.variant).acey_deucey_bonus:
        answer = moves_json_ad(position, dice)
    else:
        (answer,) = moves_json(position.board[None], np.array([dice]))
    if args.json:
        print(json.dumps(answer))
    elif not answer["moves"]:
        print("no legal move")
    else:
        for move in answer["moves"]:
            print(move["play"])
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "moves",
        help="list the legal plays of a position and roll",
        description="Every distinct legal play (one per resulting position) in GNU "
        "Backgammon's notation. POSITION is a Position ID, ID:MatchID, an XGID or 'start' "
        "(the variant's start); acey-deucey adds @X,O, the checkers still waiting to enter "
        "(X on roll, O not), e.g. AAAAAAAAAAAAAA@15,15. '-' "
        "reads 'POSITION DICE' lines from stdin and writes one JSON object per line.",
    )
    p.add_argument("position", metavar="POSITION")
    p.add_argument(
        "dice",
        metavar="DICE",
        nargs="?",
        help="e.g. 31, 3-1, 3,1 (default: the roll a Match ID or XGID holds)",
    )
    p.add_argument("--variant", default="standard", help="rule variant (default: standard)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)
