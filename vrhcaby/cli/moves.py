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
from functools import lru_cache

import numpy as np

import engine
from engine.formats import position_ids
from engine.play import format_steps, parse_dice
from engine.waiting import read_position as read_variant_position
from engine.waiting import waiting_id
from vrhcaby.cli.common import UsageError

_CHUNK = 512


def read_position(text: str, variant: str = "standard") -> engine.Position:
    """The position a POSITION argument names (Position ID, ID:MatchID, XGID, `start`;
    acey-deucey: with `@X,O` waiting checkers, `engine.waiting`); ValueError if the game
    in it is over (a side has borne off every checker: nobody is on roll)."""
    position, _ = read_variant_position(text, variant)
    on_roll, other = position.borne_off()
    if engine.CHECKERS in (on_roll, other):
        who = "the side on roll" if on_roll == engine.CHECKERS else "the side not on roll"
        raise ValueError(f"the game is over: {who} has borne off all its checkers")
    return position


def _acey_deucey_answer(position: engine.Position, dice: tuple[int, int]) -> dict:
    """Acey-deucey plays of a position; each move says whether it earns the extra roll.
    Positions are written `PositionID@X,O` (X waiting on roll, O not)."""
    from engine.acey_deucey import legal_plays_ad  # numba: loaded on first use

    plays = legal_plays_ad(position, dice)
    return {
        "position_id": waiting_id(position),
        "dice": list(dice),
        "moves": [
            {
                "play": str(p),
                "position_id": waiting_id(p.position),
                "next_position_id": waiting_id(p.position.flip()),
                "extra_turn": p.extra_turn,
            }
            for p in plays
        ],
    }


@lru_cache(maxsize=1 << 16)
def _notation(path: tuple[tuple[int, int, int], ...]) -> str:
    return format_steps(tuple((a, b) for a, b, _ in path), tuple(bool(h) for *_, h in path))


def _answers(boards: np.ndarray, dice: np.ndarray) -> list[dict]:
    from engine.movegen import batch_afterstates_with_steps  # numba: loaded on first use

    after, parent, steps = batch_afterstates_with_steps(boards, dice)
    out = [
        {"position_id": pid, "dice": [int(d[0]), int(d[1])], "moves": []}
        for pid, d in zip(position_ids(boards), dice, strict=True)
    ]
    rows = zip(
        position_ids(after),
        position_ids(after[:, ::-1]),
        parent.tolist(),
        steps.tolist(),
        strict=True,
    )
    for pid, next_pid, p, path in rows:
        play = _notation(tuple(tuple(step) for step in path if step[0]))
        out[p]["moves"].append({"play": play, "position_id": pid, "next_position_id": next_pid})
    return out


def _stream(lines: Iterable[str], variant: str) -> Iterator[tuple[dict, bool]]:
    """JSON answers for `POSITION DICE` lines, batched through the generator."""
    pending: list[tuple[str, np.ndarray | None, tuple[int, int] | None, str]] = []

    def flush() -> Iterator[tuple[dict, bool]]:
        good = [(b, d) for _, b, d, _ in pending if b is not None]
        answers = (
            iter(_answers(np.stack([b for b, _ in good]), np.array([d for _, d in good])))
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
            position, dice = read_position(pos_text, variant), parse_dice(dice_text)
        except ValueError as exc:
            msg = str(exc) if " " in line else f"{line!r}: expected POSITION DICE"
            pending.append((line, None, None, msg))
        else:
            if acey_deucey:
                yield from flush()
                yield _acey_deucey_answer(position, dice), True
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
    if args.dice is None:
        raise UsageError("missing DICE, e.g. 31 or 3-1")
    position = read_position(args.position, args.variant)
    dice = parse_dice(args.dice)
    if engine.get_variant(args.variant).acey_deucey_bonus:
        answer = _acey_deucey_answer(position, dice)
    else:
        (answer,) = _answers(position.board[None], np.array([dice]))
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
    p.add_argument("dice", metavar="DICE", nargs="?", help="e.g. 31, 3-1, 3,1")
    p.add_argument("--variant", default="standard", help="rule variant (default: standard)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)
