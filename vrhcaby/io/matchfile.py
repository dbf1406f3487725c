"""Saved games: JSON lines, and export to the `.mat` match files of Jellyfish, GNU
Backgammon and eXtreme Gammon.

One JSON line per game: the pair (`a`, `b`), the sample, mirror copy and seed, where A
sat (`a_seat`), the turns (player seat, dice, play in notation and as `(from, to, hit)`
steps, position ID before the move; or a cube action: double, take, drop, or beaver with
the cube's new value), the winner's seat, the game value, cube and points. The `.mat`
export writes each player's moves as single checker steps from its own view (`25` the
bar, `0` off, `*` a hit), which both programs import.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from vrhcaby.nn import checkpoint


def append_jsonl(path: str | Path, records: Iterable[dict]) -> None:
    """Append game records to a JSON lines file."""
    with open(path, "a", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def read_jsonl(path: str | Path) -> list[dict]:
    """All game records of a JSON lines file."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _move_text(turn: dict) -> str:
    d1, d2 = sorted(turn["dice"], reverse=True)
    steps = " ".join(f"{s}/{t}{'*' if h else ''}" for s, t, h in turn["steps"])
    return f"{d1}{d2}: {steps}".rstrip()


def _line(n: int, left: str, right: str) -> str:
    return f"{n:3d}) {left:<31} {right}".rstrip()


def game_lines(
    record: dict, number: int, names: tuple[str, str], score: tuple[int, int]
) -> list[str]:
    """The `.mat` lines of one game; player 1 (left column) is agent A."""
    a_seat = record["a_seat"]
    column = {a_seat: 0, 1 - a_seat: 1}  # seat -> column
    out = [f" Game {number}", f" {names[0]} : {score[0]:<28d}{names[1]} : {score[1]}"]
    cells: list[list[str]] = []  # rows of [left, right]

    def put(col: int, text: str) -> None:
        if not cells or cells[-1][col] or (col == 0 and cells[-1][1]):
            cells.append(["", ""])
        cells[-1][col] = text

    for turn in record["turns"]:
        col = column[turn["player"]]
        action = turn.get("action")
        if action is None:
            put(col, _move_text(turn))
        elif action == "double":
            put(col, f" Doubles => {turn['cube']}")
        elif action == "beaver":
            # The .mat spelling GNU Backgammon's import reads as a beaver (ParseMatMove):
            # a redouble, taken by the doubler's next roll. (Its own export writes
            # "Doubles" and "Takes", which its import then misreads.)
            put(col, f" Beavers => {turn['cube']}")
        elif action == "take":
            put(col, " Takes")
        elif action == "drop":
            put(col, " Drops")
        else:
            put(col, f" Resigns {turn['value']}")
    winner = column[record["winner"]]
    points = record["points"]
    put(winner, f" Wins {points} point{'s' if points != 1 else ''}")
    out += [_line(i + 1, left, right) for i, (left, right) in enumerate(cells)]
    return out


def export_mat(records: list[dict], path: str | Path, names: tuple[str, str] | None = None) -> None:
    """Write the games of one match (or a money session, as a 0-point match) in order,
    atomically."""
    if not records:
        raise ValueError("no games to export")
    if any(r.get("variant", "standard") != "standard" for r in records):
        raise ValueError(".mat files hold standard backgammon only")
    match_to = records[0].get("match_to", 0)
    names = names or (_name(records[0]["a"]), _name(records[0]["b"]))
    lines = [f" {match_to} point match", ""]
    score = [0, 0]
    for k, r in enumerate(records, start=1):
        lines += game_lines(r, k, names, (score[0], score[1]))
        lines.append("")
        a_won = r["winner"] == r["a_seat"]
        score[0 if a_won else 1] += r["points"]
    checkpoint.write_atomic(path, "\n".join(lines) + "\n")


def _name(spec: str) -> str:
    """A player name without spaces or colons (the format's field separators)."""
    return "".join(c if c.isalnum() or c in "-_.=" else "_" for c in spec) or "player"
