"""The cube yardstick: any agent's doubles, takes and passes on a fixed set of cube
decisions, each judged once by GNU Backgammon 2-ply and kept on disk, judged in seconds.

    python bench/cube_judge.py td 'gnubg?plies=0' td:td-contact-gen2
    python bench/cube_judge.py td td:checkpoints/student.pt --json results/cube.json

The set (`data/judge/gnubg-cube-2ply.npz`, made by `--build`) holds decisions before the
roll, in which the side on roll may double, from games with the cube of GNU Backgammon
0-ply against itself and of `td:td-contact-gen3` (the default `td` when the set was made)
against itself (mirrored dice, `--seed`): money games (the cube centred, or owned by the
side on roll) and 5- and 7-point matches
(any score where a double is legal, post-Crawford included). Of each kind and source a
quarter is drawn at random and three quarters from the close decisions, those where gnubg
0-ply's no double and double are within `CLOSE` of each other, or its take and pass (a
cheap first look; the judge is 2-ply). Each decision is valued by gnubg's 2-ply cube
analysis (`vrhcaby.play.cube_judge.GnubgCubeJudge`): the cubeful equities of no double,
double/take and double/pass, and its 2-ply cubeless probabilities. `--build` is
resumable: it judges the set in parts of 100 decisions under `data/judge/.parts/` and only
merges them at the end.

Printed per agent, in millipoints per decision with standard errors: the doubler's error
(gnubg 2-ply's best of no double and double, minus what the agent's choice gets, a double
answered correctly), the taker's (|DT - DP| when it picks the worse answer, asked on every
decision as if doubled) and both together; per class and per cube state; the counts of
wrong doubles (too good to double, or not good enough), wrong no-doubles, wrong takes and
wrong passes; the paired difference to the first agent; and, for agents with pre-roll
probabilities (`before_roll`), their mean absolute error and bias against gnubg 2-ply's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import load_agent  # noqa: E402
from vrhcaby.equity import decisions  # noqa: E402
from vrhcaby.equity.context import GameContext  # noqa: E402
from vrhcaby.nn.checkpoint import write_atomic  # noqa: E402
from vrhcaby.play.cube_judge import (  # noqa: E402
    CUBE_STATES,
    CubeSet,
    pre_roll_probabilities,
    probability_errors,
    recorded_decisions,
)
from vrhcaby.play.judge import CLASSES, build_in_parts  # noqa: E402
from vrhcaby.play.tournament import PairSettings, play_pair  # noqa: E402

DEFAULT_SET = ROOT / "data" / "judge" / "gnubg-cube-2ply.npz"
#: Where the decisions come from: (source, agent spec playing itself); the td network
#: and its cube depth named, not the defaults, so that a rebuild makes the same set.
SOURCES = (("gnubg", "gnubg?plies=0"), ("td", "td:td-contact-gen3?cube_plies=0"))
#: Games of each kind per source: (kind, match length, games or matches).
GAMES = (("money", 0, 600), ("match5", 5, 60), ("match7", 7, 40))
#: Decisions of each cube state per source.
WANTED = {"centred": 250, "owned": 150, "match": 200}
#: Gnubg 0-ply's margin (equity) under which a decision counts as close.
CLOSE = 0.1
PART = 100


def _state(context: GameContext) -> str:
    if context.match_to:
        return "match"
    return "centred" if context.cube_owner == "centre" else "owned"


def select(seed: int) -> tuple[np.ndarray, list[GameContext], np.ndarray]:
    """Boards, contexts and sources of the decisions of the set, in a fixed order."""
    gnubg = load_agent("gnubg?plies=0")
    rng = np.random.default_rng(seed)
    boards, contexts, sources = [], [], []
    for k, (source, spec) in enumerate(SOURCES):
        pool_boards, pool_contexts = [], []
        for j, (kind, match_to, games) in enumerate(GAMES):
            settings = PairSettings(cube=True, record=True, match_to=match_to)
            t = time.perf_counter()
            pair = play_pair(
                load_agent(spec),
                load_agent(spec),
                games=games,
                seed=seed + 10 * k + j,
                settings=settings,
            )
            b, c = recorded_decisions(pair)
            print(
                f"  {source} {kind}: {len(pair.results)} games, {len(b)} decisions"
                f" ({time.perf_counter() - t:.0f} s)"
            )
            pool_boards.append(b)
            pool_contexts += c
        pool = np.concatenate(pool_boards)
        states = np.array([_state(c) for c in pool_contexts])
        close = np.zeros(len(pool), bool)
        for i, (board, context) in enumerate(zip(pool, pool_contexts, strict=True)):
            d = decisions.cube_decision(gnubg.before_roll(board), board, context)
            close[i] = min(abs(d.nd - min(d.dt, d.dp)), abs(d.dt - d.dp)) <= CLOSE
        for state, n in WANTED.items():
            near = rng.permutation(np.flatnonzero((states == state) & close))
            rest = rng.permutation(np.flatnonzero((states == state) & ~close))
            n_near = min(len(near), n - n // 4)
            rows = np.concatenate([near[:n_near], rest[: n - n_near]])
            if len(rows) < n:
                raise SystemExit(
                    f"cube_judge: {source} has {len(rows)} {state} decisions, wants {n}"
                )
            boards.append(pool[rows])
            contexts += [pool_contexts[i] for i in rows]
            sources.append(np.full(n, f"{source}-{state}"))
            print(
                f"  {source} {state}: {n_near} close of {close[states == state].sum()},"
                f" {n - n_near} others of {(~close[states == state]).sum()}"
            )
    return np.concatenate(boards), contexts, np.concatenate(sources)


def build(out: Path, seed: int) -> None:
    """Judge the set part by part (resumable), then write it to `out`."""
    boards, contexts, sources = select(seed)
    judge = None

    def judged(rows: slice) -> CubeSet:
        nonlocal judge
        if judge is None:  # gnubg's set-up only when a part is left to judge
            from vrhcaby.play.cube_judge import GnubgCubeJudge

            judge = GnubgCubeJudge()
        return CubeSet.judge(boards[rows], contexts[rows], sources[rows], judge)

    whole = build_in_parts(out, boards, judged, CubeSet.load, CubeSet.concat, size=PART)
    print(f"wrote {out}: {len(whole)} decisions")


def _cell(v: dict) -> str:
    return f"{v['mean']:6.2f}±{v['se']:4.2f}" if v["se"] == v["se"] else f"{'-':>11s}"


def judge_agents(judged: CubeSet, specs: list[str]) -> list[dict]:
    """Each agent's report on the set (`CubeSet.summary`), paired with the first agent."""
    agents = [load_agent(spec) for spec in specs]  # bad specs fail before any answer
    first = None
    results = []
    heads = " ".join(f"{h:>11s}" for h in ("double", "take", "total"))
    print(f"{'agent':30s} {heads} {'paired total':>14s}  wrong: D(tg/ng)  ND   T   P   time")
    for spec, agent in zip(specs, agents, strict=True):
        t = time.perf_counter()
        errors = judged.errors(*judged.answers(agent))
        probabilities = pre_roll_probabilities(agent, judged.boards)
        seconds = time.perf_counter() - t
        row = {"agent": spec, **judged.summary(errors, first), "seconds": seconds}
        if probabilities is not None:
            row["probabilities"] = probability_errors(probabilities, judged.probabilities)
        first = first or errors
        results.append(row)
        c = row["counts"]
        paired = _cell(row["paired"]["total"]) if "paired" in row else f"{'-':>11s}"
        print(
            f"{spec:30s} {_cell(row['double'])} {_cell(row['take'])} {_cell(row['total'])}"
            f"    {paired}  {c['wrong_doubles']:4d}({c['too_good_to_double']}/"
            f"{c['not_good_enough']}) {c['wrong_no_doubles']:4d} {c['wrong_takes']:3d}"
            f" {c['wrong_passes']:3d} {seconds:5.1f}s"
        )
    for group, names in (("classes", CLASSES), ("cube_states", CUBE_STATES)):
        print(f"\ntotal error by {group.replace('_', ' ')} (millipoints per decision):")
        print(f"{'agent':30s} " + " ".join(f"{n:>11s}" for n in names))
        for row in results:
            cells = " ".join(_cell(row[group][n]["total"]) for n in names)
            print(f"{row['agent']:30s} {cells}")
    if any("probabilities" in row for row in results):
        print("\npre-roll probabilities against gnubg 2-ply (mean abs error / bias, points):")
        for row in results:
            if "probabilities" in row:
                cells = "  ".join(
                    f"{k} {v['mae'] * 100:.2f}/{v['bias'] * 100:+.2f}"
                    for k, v in row["probabilities"].items()
                )
                print(f"{row['agent']:30s} {cells}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agents", nargs="*", help="agent specs; paired differences to the first")
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="the judged set (.npz)")
    parser.add_argument(
        "--build", action="store_true", help="play the games and judge the set (about 6 min)"
    )
    parser.add_argument("--seed", type=int, default=2029)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.build:
        build(args.set, args.seed)
    if not args.agents:
        if not args.build:
            parser.error("name agents to judge, or --build the set")
        return 0
    judged = CubeSet.load(args.set)
    states = {s: int((judged.cube_states == s).sum()) for s in CUBE_STATES}
    counts = {c: int((judged.classes == c).sum()) for c in CLASSES}
    print(
        f"{len(judged)} cube decisions ({', '.join(f'{n} {s}' for s, n in states.items())};"
        f" {', '.join(f'{n} {c}' for c, n in counts.items())}) judged by gnubg 2-ply"
        f" ({args.set.name})"
    )
    results = judge_agents(judged, args.agents)
    if args.json:
        text = json.dumps({"set": str(args.set), "results": results}, indent=1) + "\n"
        write_atomic(args.json, text)
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except ValueError as exc:  # a bad agent spec or checkpoint, a bad set, no gnubg
        raise SystemExit(f"cube_judge: {exc}") from None
