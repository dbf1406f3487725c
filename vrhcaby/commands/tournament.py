"""`vrhcaby tournament A B [C ...]`: every pair of agents plays, mirrored dice by default.

Prints a table of results per pair (points per game with a 95% interval over mirrored
pairs, wins, gammons, backgammons each way; match wins in match mode) and, for three or
more agents, Bradley–Terry ratings on the Elo scale. `--json` prints one object instead;
`--out DIR` saves every game (`games.jsonl`), `.mat` files (not for acey-deucey) and
`results.json`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np

from agents import load_agent
from vrhcaby import matchfile
from vrhcaby.commands import add_jobs_argument, add_ray_arguments
from vrhcaby.plot import heatmap_svg
from vrhcaby.stats import bradley_terry_elo
from vrhcaby.tournament import PairResult, Settings, check_agents, play_pair


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared by `vrhcaby tournament` and `evaluate.py`."""
    parser.add_argument(
        "agents",
        nargs="+",
        metavar="AGENT",
        help="agent specs: random, heuristic, pubeval, td[:PATH][?plies=N], gnubg[?plies=N]",
    )
    parser.add_argument(
        "--games",
        type=int,
        default=1000,
        help="games (or matches) per pair of agents (default 1000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="dice seed (default 0)")
    add_jobs_argument(parser)
    add_ray_arguments(
        parser,
        "local: --jobs processes here (default); ray: a Ray cluster (vrhcaby[ray])",
        "Ray tasks at a time (default 0: all the cluster's CPUs)",
    )
    parser.add_argument(
        "--match-to",
        type=int,
        default=0,
        metavar="N",
        help="play N-point matches (default: money games)",
    )
    parser.add_argument(
        "--cube",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="use the doubling cube (default on)",
    )
    parser.add_argument("--jacoby", action="store_true", help="Jacoby rule in money play")
    parser.add_argument("--variant", default="standard", help="starting layout")
    parser.add_argument(
        "--mirror",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="play each game twice with the same dice, seats swapped",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", type=Path, help="save games and results in this folder")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "tournament", help="play agents against each other", description=__doc__.splitlines()[0]
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def _check(args: argparse.Namespace) -> list:
    if len(args.agents) < 2:
        raise ValueError("a tournament needs at least two agents")
    if args.games < 1:
        raise ValueError(f"--games must be at least 1, got {args.games}")
    if args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    if args.match_to < 0:
        raise ValueError(f"--match-to must be positive, got {args.match_to}")
    if args.workers < 0:
        raise ValueError(f"--workers must be 0 or more, got {args.workers}")
    if args.backend == "local" and (args.address or args.workers):
        raise ValueError("--address and --workers are for --backend ray (else use --jobs)")
    if args.backend == "ray":
        from vrhcaby.distributed import check_backend  # imports torch: only when asked

        check_backend(args.backend)
    agents = [load_agent(spec) for spec in args.agents]
    check_agents(agents, Settings(variant=args.variant))
    return agents


def _fmt(x: float) -> str:
    return "  n/a" if math.isnan(x) else f"{x:+.3f}"


def _save(out: Path, pair: PairResult, index: int, seed: int) -> None:
    records = []
    for g in sorted(pair.results, key=lambda g: (g.sample, g.copy)):
        rec = dict(
            g.record or {},
            a=pair.a,
            b=pair.b,
            a_seat=g.a_seat,
            sample=g.sample,
            copy=g.copy,
            seed=seed,
        )
        records.append(rec)
    matchfile.append_jsonl(out / "games.jsonl", records)
    if records and records[0].get("variant") == "acey-deucey":
        return  # the .mat format has no waiting checkers nor extra rolls
    if pair.match_to:
        for (s, c), games in itertools.groupby(records, key=lambda r: (r["sample"], r["copy"])):
            matchfile.export_mat(list(games), out / f"pair{index}-match{s}-{c}.mat")
    elif records and records[0].get("variant") == "standard":
        matchfile.export_mat(records, out / f"pair{index}.mat")


def run(args: argparse.Namespace) -> int:
    agents = _check(args)
    if args.backend == "ray":
        from vrhcaby.distributed import connect

        connect(args.address)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "games.jsonl").unlink(missing_ok=True)
    pairs: list[PairResult] = []
    for k, (i, j) in enumerate(itertools.combinations(range(len(agents)), 2)):
        pair = play_pair(
            agents[i],
            agents[j],
            games=args.games,
            seed=args.seed,
            variant=args.variant,
            jobs=args.jobs,
            backend=args.backend,
            workers=args.workers,
            cube=args.cube,
            match_to=args.match_to,
            jacoby=args.jacoby,
            mirrored=args.mirror,
            record=args.out is not None,
            progress=not args.no_progress and not args.json and sys.stderr.isatty(),
        )
        pairs.append(pair)
        if args.out:
            _save(args.out, pair, k, args.seed)
        if pair.interrupted:
            print("interrupted: results so far", file=sys.stderr)
            break
    result: dict = {"pairs": [p.to_json() for p in pairs]}
    table = round_robin(len(agents), pairs)
    if len(agents) >= 3 and not pairs[-1].interrupted:
        wins = np.zeros((len(agents), len(agents)))
        for p, (i, j) in zip(pairs, itertools.combinations(range(len(agents)), 2), strict=False):
            wins[i, j], wins[j, i] = p.wins
        elo, se = bradley_terry_elo(wins)
        result["ratings"] = [
            {"agent": a, "elo": float(e), "ci95": [float(e - 1.96 * s), float(e + 1.96 * s)]}
            for a, e, s in zip(args.agents, elo, se, strict=True)
        ]
    if args.out:
        (args.out / "results.json").write_text(json.dumps(result, indent=1) + "\n")
        if len(agents) >= 3:
            unit = "match-winning rate" if args.match_to else "points per game"
            svg = heatmap_svg(args.agents, table, f"Round robin: row agent's {unit}")
            (args.out / "table.svg").write_text(svg)
    if args.json:
        print(json.dumps(result))
        return 0
    unit = "matches" if args.match_to else "games"
    print(
        f"{'A':>24} {'B':>24} {unit:>7} {'pairs':>6} {'ppg':>7} {'95% CI':>17} "
        f"{'wins':>11} {'gammons':>9} {'bgs':>7}"
        + ("  match wins (95% CI)" if args.match_to else "")
    )
    for p in pairs:
        line = (
            f"{p.a:>24} {p.b:>24} {p.matches if args.match_to else p.games:>7} "
            f"{p.pairs:>6} {_fmt(p.ppg):>7} [{_fmt(p.ci95[0])}, {_fmt(p.ci95[1])}] "
            f"{p.wins[0]:>5}-{p.wins[1]:<5} {p.gammons[0]:>4}-{p.gammons[1]:<4} "
            f"{p.backgammons[0]:>3}-{p.backgammons[1]:<3}"
        )
        if args.match_to:
            line += f"  {p.match_win_rate:.3f} [{p.match_ci95[0]:.3f}, {p.match_ci95[1]:.3f}]"
        print(line)
    mode = "mirrored pairs (each the mean of two games with the same dice, seats swapped)"
    print(f"ppg: A's points per game; interval over {mode if args.mirror else 'games'}")
    if len(agents) >= 3:
        names = [a[:10] for a in args.agents]
        print(
            "\nround robin: the row agent's "
            + ("match-winning rate" if args.match_to else "points per game")
        )
        print(" " * 12 + "".join(f"{n:>11}" for n in names))
        for name, row in zip(names, table, strict=True):
            cells = "".join(f"{'—' if np.isnan(v) else _fmt(v):>11}" for v in row)
            print(f"{name:>12}{cells}")
    for r in result.get("ratings", []):
        print(f"{r['agent']:>24}  Elo {r['elo']:+7.1f}  [{r['ci95'][0]:+.1f}, {r['ci95'][1]:+.1f}]")
    return 0


def round_robin(n: int, pairs: list[PairResult]) -> np.ndarray:
    """(n, n) table of the row agent's points per game (or match-winning rate) against
    the column agent; NaN on the diagonal and for pairs not played."""
    table = np.full((n, n), np.nan)
    for p, (i, j) in zip(pairs, itertools.combinations(range(n), 2), strict=False):
        if p.matches:
            table[i, j], table[j, i] = p.match_win_rate, 1 - p.match_win_rate
        else:
            table[i, j], table[j, i] = p.ppg, -p.ppg
    return table
