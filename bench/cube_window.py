"""The cube window of the td agent (`td?cube_plies=1&cube_window=M`): where its margin
comes from, what the window costs on the cube yardstick, and what it saves in games.

    python bench/cube_window.py margin [--games 400] [--seed 7]
    python bench/cube_window.py judge [--margin M|D,T,R]
    python bench/cube_window.py time [--games 200] [--rounds 3] [--opponent 'gnubg?plies=0']
    python bench/cube_window.py time --no-cube --opponent pubeval
    python bench/cube_window.py time --spec 'td?cube_plies=0' --spec td --spec 'td?cube_prune=off'

`margin`: the agent's own 0-ply against 1-ply cube analysis, no judge. The default `td`
plays itself with the cube (money, `--games` games; and 5-point matches, a fifth as many)
at `cube_plies=1`, and every decision before a roll where the side on roll may double
(`vrhcaby.play.cube_judge.recorded_decisions`) is analysed both ways: Janowski's 0-ply and
the full cubeful 1-ply search. For each of the two questions (whether to double:
min(DT, DP) - ND; whether to take: DP - DT; `decisions.cube_gap`) the shift the search
makes to the 0-ply gap is summarised in quantiles, and for each candidate margin: the
share of decisions inside the window (searched) and the answers the search changes that
lie outside it (those the window would get wrong against the full search).

`judge`: the cube yardstick (`bench/cube_judge.py`'s set, 1,200 decisions judged by gnubg
2-ply): `td` at 0 plies (`cube_plies=0`), at 1 ply with every decision searched
(`cube_window=off`) and windowed (the default window, `agents.td.CUBE_WINDOW`, or
`--margin`: one margin, or three for the double, the take and the resignation, as the
spec's `cube_window`): the error of each, the
windowed minus the full search paired, how many of the doubler's and taker's questions the
window answered at 0 plies, and how many of those answers differ from the full search's.

`time`: money games with the cube (`--no-cube`: without, where the agent is still asked
whether to resign) against `--opponent` (one process, one core, the network warm):
`td?cube_plies=0` (Janowski), `td?cube_plies=1` (windowed, or `&cube_window=M` with
`--margin`) and `td?cube_plies=1&cube_window=off` (full), the 1-ply ones with their replies
pruned as the spec's default is (`cube_prune`), or the td specs given by `--spec` (the
first the base of the ratios), each `--games` games on the same dice, taking turns in each
of `--rounds` rounds; the median CPU and wall seconds of the games
(start-up excluded), the ratio to the 0-ply cube's, and how many searches each made (and
by question, in the last round).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, before numpy and torch load
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from agents import cubeful, load_agent  # noqa: E402
from agents.td import TDAgent  # noqa: E402
from vrhcaby.equity import decisions  # noqa: E402
from vrhcaby.equity.context import GameContext  # noqa: E402
from vrhcaby.play.cube_judge import CubeSet, recorded_decisions  # noqa: E402
from vrhcaby.play.tournament import PairSettings, play_pair  # noqa: E402

DEFAULT_SET = ROOT / "data" / "judge" / "gnubg-cube-2ply.npz"
#: Margins whose window is reported by `margin` (equity per unit of the cube).
MARGINS = (0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6)
#: The questions a tournament asks an agent before a roll, whose searches `time` counts.
QUESTIONS = ("resign_offer", "accept_resignation", "double_decision", "take_decision")
#: The 0-ply gap under which a decision counts as near a threshold in `margin`'s report.
NEAR = 0.25


def signed_gaps(d) -> tuple[float, float]:
    """The doubler's and the taker's signed gaps of a decision (no beavers): double where
    min(DT, DP) - ND > 0, take where DP - DT > 0."""
    return min(d.dt, d.dp) - d.nd, d.dp - d.dt


def analyses(
    agent: TDAgent, boards: np.ndarray, contexts: list[GameContext]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The signed gaps (N, 2) of each decision at 0 plies (Janowski) and at 1 ply (the full
    cubeful search), the agent's network and efficiencies; and for the resignation the side
    on roll would offer (N, 3): the 0-ply gap to the nearest resignation
    (`decisions.resignation_gap`), whether the 1-ply offer differs from the 0-ply one, and
    what the 0-ply offer loses by the 1-ply probabilities (the offer taken)."""
    zero, one = np.empty((len(boards), 2)), np.empty((len(boards), 2))
    resign = np.empty((len(boards), 3))
    for i, (board, context) in enumerate(zip(boards, contexts, strict=True)):
        p = agent.before_roll(board[None], 0)[0]
        zero[i] = signed_gaps(decisions.cube_decision(p, board, context, params=agent.efficiency))
        deep, p1 = cubeful.cube_decision(
            agent.evaluator, board, context, 1, params=agent.efficiency
        )
        one[i] = signed_gaps(deep)
        offers = decisions.resignation_offer(p, context), decisions.resignation_offer(p1, context)
        # resigning o against playing on, by the 1-ply probabilities (0: playing on)
        value = [decisions.resignation_gap(p1, context, o) if o else 0.0 for o in offers]
        changed = offers[0] != offers[1]
        resign[i] = decisions.resignation_gap(p, context), changed, abs(value[1] - value[0])
    return zero, one, resign


def margin(games: int, seed: int) -> None:
    """Where the default margin comes from: the 0-ply against the 1-ply analysis."""
    agent = load_agent("td?cube_plies=1&cube_window=off")
    assert isinstance(agent, TDAgent)
    boards, contexts = [], []
    for kind, match_to, n in (("money", 0, games), ("5-point matches", 5, max(2, games // 5))):
        t = time.perf_counter()
        settings = PairSettings(cube=True, record=True, match_to=match_to)
        pair = play_pair(agent, agent, games=n, seed=seed, settings=settings)
        b, c = recorded_decisions(pair)
        boards.append(b)
        contexts += c
        print(f"{kind}: {n} games, {len(b)} decisions ({time.perf_counter() - t:.0f} s)")
    t = time.perf_counter()
    zero, one, resign = analyses(agent, np.concatenate(boards), contexts)
    print(f"{len(zero)} decisions analysed at 0 and 1 ply ({time.perf_counter() - t:.0f} s)\n")
    shift = np.abs(one - zero)
    flips = np.sign(one) != np.sign(zero)
    print("shift of the gap by the 1-ply search, |gap1 - gap0| (equity per cube):")
    quantiles = (0.5, 0.9, 0.95, 0.99, 0.995, 1.0)
    print(f"  {'question':8} " + " ".join(f"{f'q{q:g}':>8}" for q in quantiles) + "  changed")
    for k, question in enumerate(("double", "take")):
        cells = " ".join(f"{np.quantile(shift[:, k], q):8.4f}" for q in quantiles)
        print(f"  {question:8} {cells}  {int(flips[:, k].sum()):5d}")
    near = np.abs(zero) < NEAR
    print(f"the same, of the decisions whose 0-ply gap is under {NEAR}:")
    for k, question in enumerate(("double", "take")):
        cells = " ".join(f"{np.quantile(shift[near[:, k], k], q):8.4f}" for q in quantiles)
        print(f"  {question:8} {cells}  {int(near[:, k].sum()):5d} decisions")
    print("the 0-ply gaps of the answers the search changed, quantiles:")
    for k, question in enumerate(("double", "take")):
        changed = np.abs(zero[flips[:, k], k])
        cells = " ".join(f"q{q:g} {np.quantile(changed, q):.4f}" for q in (0.9, 0.95, 0.99, 1.0))
        print(f"  {question:8} {cells}")
    print(
        "\nwindow by margin: the share of decisions searched; the answers the search changes"
        " outside the window, and what they cost by the 1-ply search's own measure (|gap1|),"
        " millipoints a decision"
    )
    heads = ("double: searched", "missed", "cost", "take: searched", "missed", "cost")
    print(f"  {'margin':>6} " + " ".join(f"{h:>16}" for h in heads))
    for m in MARGINS:
        inside = np.abs(zero) < m
        row = []
        for k in range(2):
            missed = flips[:, k] & ~inside[:, k]
            cost = 1000 * np.abs(one[missed, k]).sum() / len(zero)
            row.append(f"{inside[:, k].mean():16.1%} {int(missed.sum()):16d} {cost:16.3f}")
        print(f"  {m:6.2f} {' '.join(row)}")
    gap, flip, cost = resign[:, 0], resign[:, 1] > 0, resign[:, 2]
    cells = " ".join(f"q{q:g} {np.quantile(gap[flip], q):.4f}" for q in (0.9, 0.95, 0.99, 1.0))
    print(f"\nresignation offers the search changed: {int(flip.sum())}; their 0-ply gaps: {cells}")
    print(f"  {'margin':>6} {'searched':>16} {'missed':>16} {'cost':>16}")
    for m in MARGINS:
        missed = flip & (gap >= m)
        lost = 1000 * cost[missed].sum() / len(gap)
        print(f"  {m:6.2f} {(gap < m).mean():16.1%} {int(missed.sum()):16d} {lost:16.3f}")


def windowed(margin_: str | None) -> str:
    """The spec of `td` at 1 ply with the default window, or the window `margin_` (one
    margin, or `D,T,R`: the spec's `cube_window`)."""
    return "td?cube_plies=1" if margin_ is None else f"td?cube_plies=1&cube_window={margin_}"


def judge(margin_: str | None, path: Path) -> None:
    """The window on the cube yardstick: errors, paired difference, skips and changes."""
    judged = CubeSet.load(path)
    specs = ["td?cube_plies=0", "td?cube_plies=1&cube_window=off", windowed(margin_)]
    answers = {}
    for spec in specs:
        t = time.perf_counter()
        answers[spec] = judged.answers(load_agent(spec))
        print(f"{spec}: answered in {time.perf_counter() - t:.1f} s")
    full = judged.errors(*answers[specs[1]])
    print(f"\n{len(judged)} decisions judged by gnubg 2-ply; millipoints per decision")
    for spec in specs:
        row = judged.summary(judged.errors(*answers[spec]), full)
        cells = " ".join(
            f"{kind} {row[kind]['mean']:6.2f}±{row[kind]['se']:4.2f}"
            for kind in ("double", "take", "total")
        )
        paired = row["paired"]["total"]
        print(f"  {spec:36} {cells}  paired to full {paired['mean']:+.2f}±{paired['se']:.2f}")
    agent, window = load_agent(specs[0]), load_agent(specs[2]).cube_window  # type: ignore[attr-defined]
    assert isinstance(agent, TDAgent) and window is not None
    skipped = np.zeros((len(judged), 2), bool)
    for i, board in enumerate(judged.boards):
        context = judged.context(i)
        d = agent.cube_decision(engine.Position(board), context)  # 0 plies: Janowski
        for k, question in enumerate(("double", "take")):
            skipped[i, k] = not window.near(d, question, beavers=context.beavers)
    for k, question in enumerate(("double", "take")):
        changed = answers[specs[1]][k] != answers[specs[2]][k]
        print(
            f"  {question}: {int(skipped[:, k].sum())} of {len(judged)} answered at 0 plies,"
            f" {int((changed & skipped[:, k]).sum())} of them otherwise than the full search"
            f" ({int(changed.sum())} changed in all)"
        )


def timing(
    games: int,
    rounds: int,
    opponent: str,
    seed: int,
    cube: bool,
    margin_: str | None,
    specs: list[str] | None = None,
) -> None:
    """Median CPU and wall seconds of money games (with the cube, or without it: the agent
    is still asked whether to resign) at the three cube settings, or `specs` (the first
    the base of the ratios)."""
    if not specs:
        specs = ["td?cube_plies=0", windowed(margin_), "td?cube_plies=1&cube_window=off"]
    agents = {spec: load_agent(spec) for spec in specs}
    width = max(len(spec) for spec in specs)
    other = load_agent(opponent)
    # Searches made (a board and context not the last one searched), by spec and question.
    searches: dict[str, dict[str, int]] = {spec: {} for spec in specs}
    asking: list[str] = [""]

    def counted(agent: TDAgent, spec: str) -> None:
        search = agent._searched

        def searched(board, context):
            last = agent.__dict__.get("_last_search")
            if last is None or last[0] != (board.tobytes(), context):
                tally = searches[spec]
                tally[asking[0]] = tally.get(asking[0], 0) + 1
            return search(board, context)

        agent._searched = searched  # type: ignore[method-assign]
        for question in QUESTIONS:
            method = getattr(agent, question)

            def asked(*args, _method=method, _question=question):
                asking[0] = _question
                return _method(*args)

            setattr(agent, question, asked)

    for spec, agent in agents.items():
        assert isinstance(agent, TDAgent)
        counted(agent, spec)
    settings = PairSettings(cube=cube)
    play_pair(agents[specs[0]], other, games=4, seed=seed + 1, settings=settings)  # warm-up
    times: dict[str, list[tuple[float, float]]] = {spec: [] for spec in specs}
    points: dict[str, float] = {}
    for r in range(rounds):
        for spec in specs:
            searches[spec] = {}
            cpu, wall = time.process_time(), time.perf_counter()
            pair = play_pair(agents[spec], other, games=games, seed=seed, settings=settings)
            times[spec].append((time.process_time() - cpu, time.perf_counter() - wall))
            points[spec] = sum(g.a_points for g in pair.results) / len(pair.results)
            print(f"  round {r + 1} {spec:{width}} {times[spec][-1][0]:6.2f} CPU s")
    base = statistics.median(c for c, _ in times[specs[0]])
    kind = "with the cube" if cube else "without the cube"
    print(f"\n{games} money games {kind} against {opponent}, medians of {rounds} rounds")
    head = f"{'CPU s':>7} {'wall s':>7} {'/ base':>8} {'searches':>9} {'ppg':>7}"
    print(f"  {'td spec':{width}} {head}")
    for spec in specs:
        c = statistics.median(c for c, _ in times[spec])
        w = statistics.median(w for _, w in times[spec])
        print(
            f"  {spec:{width}} {c:7.2f} {w:7.2f} {c / base:7.2f}x {sum(searches[spec].values()):9d}"
            f" {points[spec]:+7.3f}"
        )
    print("searches by the question that first needed them (the last round):")
    for spec in specs:
        if searches[spec]:
            tally = ", ".join(f"{q} {n}" for q, n in sorted(searches[spec].items()))
            print(f"  {spec:{width}} {tally}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=("margin", "judge", "time"))
    parser.add_argument("--games", type=int, default=None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--margin", help="one margin, or D,T,R: the spec's cube_window (default: CUBE_WINDOW's)"
    )
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--opponent", default="gnubg?plies=0")
    parser.add_argument("--no-cube", action="store_true", help="time: cubeless games")
    parser.add_argument(
        "--spec",
        action="append",
        help="time: a td spec to time (repeat; the first is the base of the ratios)",
    )
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    if args.margin is not None:
        try:
            load_agent(windowed(args.margin))
        except ValueError as e:
            parser.error(str(e))
    for spec in args.spec or []:
        try:
            if not isinstance(load_agent(spec), TDAgent):
                parser.error(f"--spec {spec!r} is not a td agent")
        except ValueError as e:
            parser.error(str(e))
    if args.part == "margin":
        margin(args.games or 400, args.seed)
    elif args.part == "judge":
        judge(args.margin, args.set)
    else:
        cube = not args.no_cube
        timing(
            args.games or 200, args.rounds, args.opponent, args.seed, cube, args.margin, args.spec
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
