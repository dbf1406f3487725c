"""`vrhcaby analyse`: the error rates of whole games and matches, as GNU Backgammon's
``analyse match`` and ``show statistics match`` give them.

    vrhcaby analyse match.mat                      # judged by the td network, 2-ply
    vrhcaby analyse runs/out/ --judge gnubg --plies 0 --json
    vrhcaby analyse session.mat --worst 20 --jobs 2

FILE is a `.mat` file (this project's export, GNU Backgammon's, Jellyfish's) or a folder
of them, such as a tournament's ``--out`` folder. Every checker play and cube decision of
both players is judged (`vrhcaby.review`): by the project's own search (``--judge td``,
the shipped network by default, pruned, or any ``td:PATH?...`` spec) or by GNU
Backgammon's evaluations (``--judge gnubg``, with the ``gnubg-nn`` package), at
``--plies``. Per player: moves and unforced moves, the moves marked doubtful, bad and very
bad (gnubg's thresholds), cube decisions, the error totals and rates (per unforced move,
per close cube decision, overall), in millipoints (mEMG in a match), and the worst
decisions with their Position ID:Match ID. A file that cannot be read is one line naming
the file and line, exit status 2; SIGINT or SIGTERM stops it (and its worker processes)
with exit status 130 or 143.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vrhcaby.cli.common import (
    StopSignals,
    UsageError,
    add_jobs_argument,
    add_money_rules_arguments,
)
from vrhcaby.play.pool import SHARED, WorkerPool, chunks

#: The default judge: the shipped network with the pruned reply choice (agents.search).
DEFAULT_JUDGE = "td?prune=on"


def files_of(target: Path) -> list[Path]:
    """The `.mat` files FILE names: the file itself, or a folder's `.mat` files (its own,
    not its subfolders'), sorted by name."""
    if target.is_dir():
        found = sorted(p for p in target.glob("*.mat") if p.is_file())
        if not found:
            raise UsageError(f"{target}: no .mat files in this folder")
        return found
    if not target.exists():
        raise UsageError(f"{target}: no such file or folder")
    return [target]


def load_judge(spec: str, plies: int, cube_plies: int | None = None):
    """The `vrhcaby.review` judge `--judge` names at `plies` (its cube decisions at
    `cube_plies`, default `vrhcaby.analysis.CUBE_PLIES`)."""
    from vrhcaby import review

    if spec == "gnubg":
        if cube_plies not in (None, plies):
            raise UsageError("--cube-plies is for the td judge (gnubg's is --plies)")
        return review.GnubgJudge(plies)
    from agents import load_agent
    from agents.td import TDAgent

    agent = load_agent(spec)
    if not isinstance(agent, TDAgent) or agent.acey_deucey:
        raise UsageError(f"--judge {spec!r}: a judge is td (a td[:PATH] spec) or gnubg")
    return review.TDJudge(agent, plies, cube_plies)


def _analyse_part(task: tuple[str, int, int]):
    """A worker's task: games `start` to `stop` of one file judged."""
    from dataclasses import replace

    from vrhcaby import review
    from vrhcaby.io.matchfile import read_mat

    path, start, stop = task
    match = read_mat(path)
    part = replace(match, games=match.games[start:stop])
    return path, start, review.analyse_match(part, SHARED["judge"], **SHARED["setting"])


def analyse_files(files: list[Path], judge, jobs: int, setting: dict):
    """Each file read (all of them first, so that a bad one stops the command before any
    work) and judged, its games spread over `jobs` processes."""
    from vrhcaby import review
    from vrhcaby.io.matchfile import read_mat

    matches = [read_mat(f) for f in files]
    tasks = []
    for m in matches:
        size = max(1, -(-len(m.games) // jobs))
        tasks += [(m.path, r.start, r.stop) for r in chunks(len(m.games), size)]
    if jobs <= 1 or len(tasks) <= 1:
        return [review.analyse_match(m, judge, **setting) for m in matches]
    parts: dict[str, list] = {m.path: [] for m in matches}
    with WorkerPool(min(jobs, len(tasks)), _analyse_part, judge=judge, setting=setting) as pool:
        for path, start, analysis in pool.imap_unordered(tasks):
            parts[path].append((start, analysis))
    return [
        review.merge([a for _, a in sorted(parts[m.path], key=lambda x: x[0])]) for m in matches
    ]


def _milli(x: float) -> str:
    return f"{-x:+.1f}" if x else "0.0"


def report(analysis, worst: int) -> str:
    """The text report of one file, laid out as gnubg's match statistics."""
    a, b = analysis.players
    unit = "mEMG" if analysis.match_to else "millipoints"
    what = f"{analysis.match_to}-point match" if analysis.match_to else "money session"
    games = f"{analysis.games} game{'s' if analysis.games != 1 else ''}"
    lines = [f"{analysis.path}: {what}, {games}, judged by {analysis.judge}", ""]

    def row(label: str, x: object, y: object) -> None:
        lines.append(f"{label:<34} {x!s:<22} {y!s}")

    row("Player", a.name, b.name)
    lines.append("Checker play")
    row("  Moves (unforced)", f"{a.moves} ({a.unforced})", f"{b.moves} ({b.unforced})")
    for label, name in (("doubtful", "doubtful"), ("bad", "bad"), ("very bad", "very_bad")):
        row(f"  Marked {label}", getattr(a, name), getattr(b, name))
    row("  Error total", f"{-a.checker_error:+.3f}", f"{-b.checker_error:+.3f}")
    row(f"  Error rate ({unit}/move)", _milli(a.checker_rate), _milli(b.checker_rate))
    lines.append("Cube decisions")
    row("  Total (close or actual)", f"{a.cube_decisions} ({a.close_cube})",
        f"{b.cube_decisions} ({b.close_cube})")  # fmt: skip
    row("  Doubles, takes, passes", f"{a.doubles}, {a.takes}, {a.passes}",
        f"{b.doubles}, {b.takes}, {b.passes}")  # fmt: skip
    row("  Error total", f"{-a.cube_error:+.3f}", f"{-b.cube_error:+.3f}")
    row(f"  Error rate ({unit}/decision)", _milli(a.cube_rate), _milli(b.cube_rate))
    lines.append("Overall")
    row("  Error total", f"{-a.error:+.3f}", f"{-b.error:+.3f}")
    cost = "MWC" if analysis.match_to else "points"
    if analysis.match_to:
        row(f"  Cost ({cost})", f"{-100 * a.cost:+.2f}%", f"{-100 * b.cost:+.2f}%")
    else:
        row(f"  Cost ({cost})", f"{-a.cost:+.3f}", f"{-b.cost:+.3f}")
    row(f"  Error rate ({unit}/decision)", _milli(a.rate), _milli(b.rate))
    sa, sb = analysis.snowie_rate
    row("  Snowie error rate", _milli(sa), _milli(sb))
    bad = analysis.worst(worst)
    if bad:
        lines += ["", f"Worst decisions ({unit})"]
        for d in bad:
            who = analysis.players[d.player].name
            roll = f" {d.dice[0]}{d.dice[1]}" if d.dice else ""
            mark = f", {d.mark}" if d.mark else ""
            lines.append(
                f"  {-1000 * d.error:+7.1f}  game {d.game} line {d.line}, {who}{roll}: "
                f"{d.made}; best {d.best}{mark}  {d.position}"
            )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.plies < 0:
        raise UsageError(f"--plies must be 0 or more, got {args.plies}")
    if args.worst < 0:
        raise UsageError(f"--worst must be 0 or more, got {args.worst}")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    files = files_of(Path(args.file))
    judge = load_judge(args.judge, args.plies, args.cube_plies)
    setting = {"cube": args.cube, "jacoby": args.jacoby is not False}
    with StopSignals() as stop:  # SIGTERM as Ctrl-C: the worker processes end at once
        try:
            analyses = analyse_files(files, judge, args.jobs, setting)
        except KeyboardInterrupt:
            return stop.status or 130
    if args.json:
        out = [a.to_json(worst=args.worst) for a in analyses]
        print(json.dumps(out[0] if len(out) == 1 and Path(args.file).is_file() else out, indent=1))
    else:
        print("\n\n".join(report(a, args.worst) for a in analyses))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "analyse",
        help="error rates of whole games and matches (.mat files)",
        description="Judge every checker play and cube decision of a .mat file (or a "
        "folder of them, such as a tournament's --out folder) and report each player's "
        "error rates, marked moves and worst decisions, as GNU Backgammon's analyse match.",
    )
    parser.add_argument("file", metavar="FILE", help="a .mat file or a folder of them")
    parser.add_argument(
        "--judge",
        default=DEFAULT_JUDGE,
        help="td, a td[:PATH][?...] spec, or gnubg (default: %(default)s, the shipped "
        "network with its pruned reply choice)",
    )
    parser.add_argument(
        "--plies", type=int, default=2, help="the judge's depth (default: %(default)s)"
    )
    parser.add_argument(
        "--cube-plies",
        type=int,
        help="the td judge's cube search depth (default: 2, the depth measured best on "
        "the cube yardstick, whatever --plies)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--worst", type=int, default=10, help="worst decisions listed (default: %(default)s)"
    )
    parser.add_argument(
        "--cube",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="judge cube decisions and rank plays cubefully (default on; --no-cube for "
        "games played without a cube)",
    )
    add_money_rules_arguments(parser, beavers=False)
    add_jobs_argument(parser)
    parser.set_defaults(func=run)
