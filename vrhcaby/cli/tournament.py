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
from dataclasses import replace
from pathlib import Path

import numpy as np

from agents import load_agent
from vrhcaby.base.files import check_output_dir
from vrhcaby.cli.common import (
    MoneyRules,
    StopSignals,
    add_jobs_argument,
    add_ray_arguments,
    check_parallel,
)
from vrhcaby.equity.context import check_match_length
from vrhcaby.io import matchfile
from vrhcaby.io.plot import heatmap_svg
from vrhcaby.nn import checkpoint
from vrhcaby.play.stats import bradley_terry_elo
from vrhcaby.play.tournament import (
    MAX_GAMES,
    GameResult,
    PairResult,
    PairSettings,
    check_agents,
    cubeless_agents,
    play_pair,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared by `vrhcaby tournament` and `evaluate.py`."""
    parser.add_argument(
        "agents",
        nargs="+",
        metavar="AGENT",
        help="agent specs: random, heuristic, pubeval, td[:PATH][?plies=N&cube_plies=N], "
        "gnubg[?plies=N]; td's doubles and takes look 1 ply ahead by default (GNU "
        "Backgammon's cubeful search, only near a threshold, its replies pruned: 5.0 "
        "millipoints a decision on the cube yardstick, docs/benchmarks.md, gnubg 0-ply "
        "5.1; cube games about 1.5 times as long as with td?cube_plies=0, Janowski on the "
        "0-ply probabilities, 9.7 millipoints; its resignations are 0-ply, so cubeless "
        "games are the same); vrhcaby cube looks 2 plies ahead",
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
        help="play N-point matches, 1 to 25 (default 0: money games)",
    )
    parser.add_argument(
        "--cube",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="use the doubling cube (default: in a pair whose agents both have cube "
        "decisions, td and gnubg; random, heuristic and pubeval never double and always "
        "take, so a cube would only flatter their opponent, or hide gammons under the "
        "Jacoby rule)",
    )
    parser.add_argument(
        "--jacoby",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="money play with the cube: the Jacoby rule (default on, as in GNU Backgammon)",
    )
    parser.add_argument(
        "--beavers",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="money play with the cube: a side doubled may beaver, if its agent knows how "
        "(td, gnubg; default on, as in GNU Backgammon)",
    )
    parser.add_argument("--variant", default="standard", help="starting layout")
    parser.add_argument(
        "--mirror",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="play each game twice with the same dice, seats swapped",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", type=Path, help="save games and results in this folder")
    parser.add_argument(
        "--force", action="store_true", help="replace the results of an earlier run in --out"
    )
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
    if args.mirror and args.games % 2:
        raise ValueError(
            f"--games {args.games}: mirrored games come in pairs (the same dice, seats "
            "swapped), so give an even number, or --no-mirror"
        )
    if args.games > MAX_GAMES:
        raise ValueError(f"--games must be at most {MAX_GAMES:,}, got {args.games:,}")
    if args.seed < 0:
        raise ValueError(f"--seed must be 0 or more, got {args.seed}")
    check_match_length(args.match_to)
    check_parallel(args)
    agents = [load_agent(spec) for spec in args.agents]
    check_agents(agents, PairSettings(variant=args.variant))
    return agents


def pair_cube(args: argparse.Namespace, a, b) -> bool:
    """Whether agents `a` and `b` play with the cube: as `--cube`/`--no-cube` say, else
    only when both have cube decisions (a cubeless agent never doubles and always takes:
    the cube would flatter its opponent, and among cubeless agents it is never turned,
    so that the Jacoby rule would count every gammon single)."""
    if args.cube is not None:
        return bool(args.cube)
    return not cubeless_agents((a, b))


def _rules(args: argparse.Namespace, cubes: list[bool]) -> dict:
    """The rules the games were played by, for `--json` (`cube`: whether any pair played
    with it; each pair says its own)."""
    money_cube = any(cubes) and not args.match_to
    return {
        "match_to": args.match_to,
        "cube": any(cubes),
        "jacoby": args.jacoby if money_cube else None,
        "beavers": args.beavers if money_cube else None,
    }


def _describe_rules(args: argparse.Namespace, cubes: list[bool], cubeless: list[str]) -> str:
    """The header line: what was played, by which rules, and where without the cube."""
    if args.match_to:
        head = f"{args.match_to}-point matches, Crawford rule" + ("" if any(cubes) else ", no cube")
    elif not any(cubes):
        head = "money games without the cube (cubeless: gammons count double, backgammons triple)"
    else:
        head = "money games with the cube, " + MoneyRules(args.jacoby, args.beavers).describe()
    if any(cubes) and not all(cubes):
        head += f"; no cube in the pairs of {', '.join(cubeless)} (no cube decisions)"
    return head


def _fmt(x: float) -> str:
    return "  n/a" if math.isnan(x) else f"{x:+.3f}"


#: The files a tournament writes into `--out`, besides its ``pair*.mat`` files.
OUT_FILES = ("games.jsonl", "results.json", "table.svg", "run.json")
#: What a run's `run.json` holds: the settings a resumed run must share.
RUN_KEYS = ("agents", "games", "seed", "match_to", "cube", "jacoby", "beavers", "mirror", "variant")
#: What `PairResult.records` adds to a game's record.
_ADDED = ("a", "b", "a_seat", "sample", "copy", "seed", "match_winner")


def prepare_out(args: argparse.Namespace) -> dict[tuple[str, str], list[GameResult]]:
    """Before a game is played: `--out` is a folder that can be written (made if need
    be), no name a result takes there is a folder, and an earlier run's results there are
    either resumed (the same settings, `run.json`: the games it finished, by pair) or,
    with `--force`, removed (the ``.mat`` files too, so that none of an earlier run is
    taken for this one's); else refused. An earlier run is never overwritten silently."""
    out = args.out
    if out is None:
        return {}
    check_output_dir(out, "--out")
    earlier = [out / name for name in OUT_FILES if (out / name).exists()]
    earlier += sorted(out.glob("pair*.mat"))
    for path in earlier:
        if path.is_dir():
            raise ValueError(f"--out {str(out)!r:.80}: {path.name} is a folder, not a results file")
    settings = {key: getattr(args, key) for key in RUN_KEYS}
    if earlier and not args.force:
        resumed = _resume(out, settings)
        if resumed is not None:
            return resumed
        names = ", ".join(p.name for p in earlier[:3]) + (", ..." if len(earlier) > 3 else "")
        raise ValueError(
            f"--out {str(out)!r:.80} holds the results of a tournament of other settings "
            f"({names}): add --force to replace them, or choose another folder"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
        for path in earlier:
            path.unlink()
    except OSError as exc:
        raise ValueError(f"--out {str(out)!r:.80}: {exc.strerror}") from None
    checkpoint.write_atomic(out / "run.json", json.dumps(settings) + "\n")
    return {}


def _resume(out: Path, settings: dict) -> dict[tuple[str, str], list[GameResult]] | None:
    """The games of the earlier run in `out`, by pair, if it was run with `settings`
    (its `run.json`) and its games file reads back; else None."""
    try:
        if json.loads((out / "run.json").read_text()) != json.loads(json.dumps(settings)):
            return None
        records = (
            matchfile.read_jsonl(out / "games.jsonl") if (out / "games.jsonl").exists() else []
        )
        games: dict[tuple[str, str], list[GameResult]] = {}
        for r in records:
            result = GameResult(
                **{k: int(r[k]) for k in ("sample", "copy", "a_seat", "winner", "value", "cube")},
                points=int(r["points"]),
                match_winner=int(r["match_winner"]),
                record={k: v for k, v in r.items() if k not in _ADDED},
            )
            games.setdefault((r["a"], r["b"]), []).append(result)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    print(f"resuming the tournament in {out}: {len(records)} games kept", file=sys.stderr)
    return games


def _save(out: Path, records: list[dict], pair: PairResult, index: int) -> None:
    """The games of the pairs so far (`games.jsonl`, rewritten atomically) and the `.mat`
    files of the last pair, whose games are `records[-pair.games:]`."""
    lines = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    checkpoint.write_atomic(out / "games.jsonl", lines)
    mine = records[len(records) - len(pair.results) :]
    if mine and mine[0].get("variant") == "acey-deucey":
        return  # the .mat format has no waiting checkers nor extra rolls
    if pair.match_to:
        for (s, c), games in itertools.groupby(mine, key=lambda r: (r["sample"], r["copy"])):
            matchfile.export_mat(list(games), out / f"pair{index}-match{s}-{c}.mat")
    elif mine and mine[0].get("variant") == "standard":
        matchfile.export_mat(mine, out / f"pair{index}.mat")


def run(args: argparse.Namespace) -> int:
    """The tournament; after SIGINT or SIGTERM, the games finished are kept, written and
    summarised, and the exit status is 130 or 143 (`StopSignals`)."""
    agents = _check(args)
    earlier = prepare_out(args)
    if args.backend == "ray":
        from vrhcaby.play.ray import connect

        connect(args.address)
    cubeless = cubeless_agents(agents)
    if cubeless and args.cube and len(cubeless) < len(agents):  # someone uses the cube
        print(
            f"warning: {', '.join(cubeless)} play without a cube (never double, always "
            "take): cube results against them flatter their opponents",
            file=sys.stderr,
        )
    with StopSignals() as stop:
        pairs = _play(args, agents, stop, earlier)
        with stop.holding():
            _report(args, agents, pairs)
    return stop.status


def _pairs(agents: list) -> list[tuple[int, int]]:
    """The pairs of a round robin, by their agents' indices, in the order played."""
    return list(itertools.combinations(range(len(agents)), 2))


def _play(
    args: argparse.Namespace,
    agents: list,
    stop: StopSignals,
    earlier: dict[tuple[str, str], list[GameResult]],
) -> list[PairResult]:
    """Every pair's games, until all are played or a signal stops them; each pair's
    games are saved (`--out`) before the next pair starts. The `earlier` games of a
    resumed run are kept, and only what they lack is played."""
    pairs: list[PairResult] = []
    records: list[dict] = []
    settings = PairSettings(
        variant=args.variant,
        match_to=args.match_to,
        cube=args.cube,
        jacoby=args.jacoby,
        mirrored=args.mirror,
        record=args.out is not None,
        beavers=args.beavers,
    )
    for k, (i, j) in enumerate(_pairs(agents)):
        try:
            pair = play_pair(
                agents[i],
                agents[j],
                games=args.games,
                seed=args.seed,
                settings=replace(settings, cube=pair_cube(args, agents[i], agents[j])),
                jobs=args.jobs,
                backend=args.backend,
                workers=args.workers,
                progress=not args.no_progress and not args.json and sys.stderr.isatty(),
                done=earlier.get((agents[i].name, agents[j].name), []),
            )
        except KeyboardInterrupt:  # outside the games (their results are kept): none kept
            break
        pairs.append(pair)
        if args.out:
            with stop.holding():
                records += pair.records(args.seed)
                _save(args.out, records, pair, k)
        if pair.interrupted or stop.received:
            pair.interrupted = True
            print("interrupted: results so far", file=sys.stderr)
            break
    return pairs


def _report(args: argparse.Namespace, agents: list, pairs: list[PairResult]) -> None:
    """The results: `results.json` and `table.svg` (atomically) and the table or JSON."""
    cubeless = cubeless_agents(agents)
    cubes = [pair_cube(args, agents[i], agents[j]) for i, j in _pairs(agents)]
    result: dict = {
        "rules": _rules(args, cubes),
        "cube": any(cubes),
        "cubeless_agents": cubeless,
        "pairs": [p.to_json() for p in pairs],
    }
    table = round_robin(len(agents), pairs)
    complete = len(pairs) == math.comb(len(agents), 2) and not pairs[-1].interrupted
    if len(agents) >= 3 and complete:
        wins = np.zeros((len(agents), len(agents)))
        for p, (i, j) in zip(pairs, itertools.combinations(range(len(agents)), 2), strict=False):
            wins[i, j], wins[j, i] = p.wins
        elo, se = bradley_terry_elo(wins)
        result["ratings"] = [
            {"agent": a, "elo": float(e), "ci95": [float(e - 1.96 * s), float(e + 1.96 * s)]}
            for a, e, s in zip(args.agents, elo, se, strict=True)
        ]
    if args.out:
        checkpoint.write_atomic(args.out / "results.json", json.dumps(result, indent=1) + "\n")
        if len(agents) >= 3:
            unit = "match-winning rate" if args.match_to else "points per game"
            svg = heatmap_svg(args.agents, table, f"Round robin: row agent's {unit}")
            checkpoint.write_atomic(args.out / "table.svg", svg)
    if args.json:
        print(json.dumps(result))
        return
    print(_describe_rules(args, cubes, cubeless))
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
    plain = ", ".join(cubeless)
    if not any(cubes) and args.cube is False:
        print("cube: off for every agent (--no-cube)")
    elif not any(cubes):
        print(f"cube: off in every pair, each has an agent without cube decisions: {plain}")
    elif args.cube is None and cubeless:
        print(f"cube: off in the pairs of the agents without cube decisions: {plain}")
    elif args.cube and cubeless:
        print(f"without a cube (never double, always take): {plain}")
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
