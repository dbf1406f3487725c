"""Calibration of a network's probabilities on its own self-play outcomes, folded into its
last layer.

    python -m vrhcaby.learn.calibrate --network td-contact-gen3 --games 10000 --seed 17 \\
        --out checkpoints/distill/td-contact-gen3-cal.pt [--mix]

A network's five sigmoid outputs are conditional probabilities (`vrhcaby.nn.net.joint`:
win; gammon given a win; backgammon given a gammon win; gammon given a loss; backgammon
given a gammon loss). Each is corrected by Platt scaling, a slope and a shift of its logit
``z``: ``sigmoid(slope * z + shift)``, a monotone map per output, fitted by maximum
likelihood; or, with ``--mix``, by matrix scaling, each output's logit an affine function
of all five (`Correction`). An affine map of a linear layer's outputs is again a linear
layer (weights ``matrix @ W``, bias ``matrix @ b + shift``), so the correction is folded
into the last layer exactly (`fold`): the checkpoint keeps its shape and every evaluation
path (numpy, numba, torch, the incremental one) is unchanged. Calibrating the conditionals
keeps the outputs lawful: they are still multiplied out, so backgammons <= gammons <= wins.

The data is the network's own world: `games` cubeless money games of the network (at
0-ply) against itself (`vrhcaby.play.calibration.selfplay_turns`, dice seeded by `seed`);
each afterstate it chose, of a class its network answers, is set against what its mover
then won or lost. The chosen afterstate of a turn is a draw from what the side on roll's
pre-roll probabilities average over the 21 rolls, so the afterstates' calibration is that
of the pre-roll probabilities that `bench/calibration.py` reports (report on another seed)
and the cube decisions use. Each conditional is fitted on the afterstates where it applies
(gammon given a win on the games the mover won, ...) and the rules allow it
(`vrhcaby.nn.lawful.rule_masks`). For a network set only the network that answers contact
positions is calibrated (on the classes it answers); races and bear-offs are left alone.
GNU Backgammon is no part of it. The result's run config records the fit (`calibration`).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

import engine
from agents import load_agent
from agents.td import SHIPPED, find_checkpoint
from engine.classify import NAMES
from vrhcaby.base.files import check_output_file
from vrhcaby.equity.outcomes import OUTCOMES
from vrhcaby.nn import checkpoint, netset
from vrhcaby.nn.checkpoint import SET_CLASSES
from vrhcaby.nn.lawful import rule_masks
from vrhcaby.nn.net import Evaluator, load_evaluator
from vrhcaby.nn.netset import CODES, NetworkSet
from vrhcaby.play.calibration import happened, selfplay_turns

#: Rows of a forward pass at a time (a 1,024-unit hidden layer of this many: 80 MB).
_CHUNK = 20_000


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), with no overflow for large |x|."""
    return 0.5 * (1 + np.tanh(0.5 * x))


@dataclass(frozen=True)
class Correction:
    """An affine correction of the five conditional outputs' logits ``z``: ``matrix @ z +
    shift``. Platt scaling is a diagonal `matrix` (each logit scaled and shifted alone:
    monotone in it when the diagonal is positive); matrix scaling (`fit` with ``mix``) also
    lets each conditional move with the other four logits."""

    matrix: np.ndarray
    """float64 (5, 5): row k, what each logit contributes to output k's."""
    shift: np.ndarray
    """float64 (5,): what is added to each corrected logit."""

    def apply(self, logits: np.ndarray) -> np.ndarray:
        """The corrected conditional probabilities (N, 5) of logits (N, 5)."""
        return sigmoid(logits @ self.matrix.T + self.shift)

    def to_dict(self) -> dict[str, list]:
        return {"matrix": self.matrix.tolist(), "shift": self.shift.tolist()}


def logits(network: Evaluator, afterstates: np.ndarray) -> np.ndarray:
    """The pre-sigmoid outputs float64 (N, 5) of a single network for afterstates (N, 2,
    25): its conditional probabilities' logits, before the rules (a plain forward pass,
    `_CHUNK` rows at a time)."""
    out = np.empty((len(afterstates), 5))
    for lo in range(0, len(afterstates), _CHUNK):
        x = network.net.encode(np.ascontiguousarray(afterstates[lo : lo + _CHUNK], np.int8))
        for (w, b), name in zip(network.weights[:-1], network.net.layer_activations, strict=True):
            x = x @ w.T + b
            x = np.tanh(x) if name == "tanh" else np.maximum(x, 0) if name == "relu" else sigmoid(x)
        w, b = network.weights[-1]
        out[lo : lo + _CHUNK] = x @ w.T + b
    return out


def conditional_targets(outcome: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the mover's results (N,) (+1..+3 won, -1..-3 lost): whether each event happened,
    bool (N, 5) (`vrhcaby.play.calibration.happened`), and where each conditional output
    applies, bool (N, 5): win always, gammon given a win where it won, backgammon given a
    gammon win where it won a gammon, gammon given a loss where it lost, backgammon given
    a gammon loss where it lost a gammon. Where a conditional applies, its event is the
    joint one (a won game was won with a gammon or not)."""
    hit = happened(outcome)
    applies = np.stack([np.ones(len(hit), bool), hit[:, 0], hit[:, 1], ~hit[:, 0], hit[:, 3]], 1)
    return hit, applies


#: The fewest happenings and the fewest misses an output needs to be fitted; one with
#: fewer (backgammons in a few games) is left as it is (slope 1, shift 0).
LEAST = 20


def fit(
    z: np.ndarray, hit: np.ndarray, applies: np.ndarray, mix: bool = False, steps: int = 50
) -> Correction:
    """The maximum-likelihood correction of logits `z` (N, 5) for the events `hit` (N, 5),
    each output on the rows where it `applies` (N, 5): per output a logistic regression on
    its own logit (Platt scaling) or, with `mix`, on all five (matrix scaling), and a
    constant, by Newton's method from the identity. The conditionals' likelihoods are
    apart, so fitting each alone maximises the likelihood of the outcomes as a whole. An
    output whose event happened, or did not, fewer than `LEAST` times keeps the identity
    (there is no finite maximum when it never happened)."""
    matrix, shift = np.eye(5), np.zeros(5)
    for k in range(5):
        rows = applies[:, k]
        y = hit[rows, k].astype(np.float64)
        if min(y.sum(), len(y) - y.sum()) < LEAST:
            continue
        terms = list(range(5)) if mix else [k]
        design = np.concatenate([z[rows][:, terms], np.ones((len(y), 1))], axis=1)
        theta = np.zeros(len(terms) + 1)
        theta[terms.index(k)] = 1.0
        for _ in range(steps):
            p = sigmoid(design @ theta)
            gradient = design.T @ (y - p)
            hessian = (design * (p * (1 - p))[:, None]).T @ design
            step = np.linalg.solve(hessian, gradient)
            theta += step
            if np.abs(step).max() < 1e-10:
                break
        matrix[k] = 0.0
        matrix[k, terms] = theta[:-1]
        shift[k] = theta[-1]
    return Correction(matrix, shift)


def log_loss(conditional: np.ndarray, hit: np.ndarray, applies: np.ndarray) -> list[float]:
    """Mean log loss of each conditional output (N, 5) on the rows where it applies."""
    p = np.clip(conditional, 1e-12, 1 - 1e-12)
    loss = -(hit * np.log(p) + ~hit * np.log(1 - p))
    return [float(loss[applies[:, k], k].mean()) for k in range(5)]


def fold(network: Evaluator, correction: Correction) -> Evaluator:
    """`network` with `correction` folded into its last layer (weights ``matrix @ W``, bias
    ``matrix @ b + shift``): its conditional outputs are `correction.apply` of the
    original's logits, with the same shapes."""
    w, b = network.weights[-1]
    weight = (correction.matrix @ w.astype(np.float64)).astype(np.float32)
    bias = (correction.matrix @ b.astype(np.float64) + correction.shift).astype(np.float32)
    return replace(network, weights=[*network.weights[:-1], (weight, bias)])


def _answered(evaluator: Evaluator | NetworkSet) -> tuple[Evaluator, list[int]]:
    """The network to calibrate and the class codes (`engine.classify`) it answers: a set's
    contact network and its classes, or a single network and every class a network
    answers."""
    if isinstance(evaluator, NetworkSet):
        name = "contact" if "contact" in evaluator.networks else evaluator.fallback["contact"]
        network = evaluator.networks[name]
        if not isinstance(network, Evaluator):
            raise ValueError(f"the set's {name} network is not a plain network")
        classes = [CODES[c] for c in SET_CLASSES if c == name or evaluator.fallback.get(c) == name]
        return network, classes
    return evaluator, list(CODES.values())


def selfplay_afterstates(
    spec: str, games: int, seed: int, classes: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """The afterstates int8 (N, 2, 25) agent `spec` chose in `games` games against itself
    (`selfplay_turns`, seed `seed`), those of the `classes` (codes), and their mover's
    results int (N,)."""

    def record(turn: int, boards: np.ndarray, after: np.ndarray) -> tuple[np.ndarray, ...]:
        mine = np.isin(engine.classify_boards(after), classes)
        return after[mine].copy(), mine

    parts = list(selfplay_turns(load_agent(spec), games, seed, record))
    after = np.concatenate([a for (a, _), _, _ in parts])
    outcome = np.concatenate([o[k] for (_, k), o, _ in parts])
    return after, outcome


def calibrate(
    source: str, games: int, seed: int, mix: bool = False
) -> tuple[Evaluator | NetworkSet, Correction, dict[str, Any]]:
    """The network of checkpoint `source` (a path or ``td`` name) calibrated on `games`
    games of its own self-play (seed `seed`; `fit` with `mix`), the correction, and what
    the fit saw: the afterstates fitted and each output's rows, events and log loss before
    and after."""
    path = find_checkpoint(source)
    evaluator = load_evaluator(path)
    network, classes = _answered(evaluator)
    after, outcome = selfplay_afterstates(f"td:{path}", games, seed, classes)
    hit, applies = conditional_targets(outcome)
    applies &= rule_masks(after)[0]
    z = logits(network, after)
    correction = fit(z, hit, applies, mix)
    folded = fold(network, correction)
    made = {
        "from": str(path),
        "games": games,
        "seed": seed,
        "mix": mix,
        "afterstates": len(after),
        "classes": [NAMES[c] for c in classes],
        **correction.to_dict(),
        "rows": applies.sum(axis=0).tolist(),
        "events": (hit & applies).sum(axis=0).tolist(),
        "log_loss_before": log_loss(sigmoid(z), hit, applies),
        "log_loss_after": log_loss(correction.apply(z), hit, applies),
    }
    config = {**evaluator.config, "calibration": made}
    if isinstance(evaluator, NetworkSet):
        name = next(n for n, net in evaluator.networks.items() if net is network)
        calibrated: Evaluator | NetworkSet = replace(
            evaluator, networks={**evaluator.networks, name: folded}, config=config
        )
    else:
        calibrated = replace(folded, config=config)
    return calibrated, correction, made


def save(calibrated: Evaluator | NetworkSet, out: Path) -> Path:
    """Write the calibrated network or set to checkpoint `out` atomically."""
    if isinstance(calibrated, NetworkSet):
        return netset.save(calibrated, out)
    arrays, meta = checkpoint.contents(
        net=(calibrated.net.to_dict(), checkpoint.layer_arrays(calibrated.weights)),
        variant=calibrated.variant,
        config=calibrated.config,
    )
    return checkpoint.save(out, arrays, meta)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--network", default=SHIPPED.stem, help=f"checkpoint or td name (default {SHIPPED.stem})"
    )
    parser.add_argument("--out", required=True, help="the calibrated checkpoint (.pt)")
    parser.add_argument("--games", type=int, default=10000, help="self-play games fitted")
    parser.add_argument("--seed", type=int, default=17, help="their dice (not the report's)")
    parser.add_argument(
        "--mix",
        action="store_true",
        help="matrix scaling: each output's logit corrected from all five (default: its own)",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing --out")
    args = parser.parse_args(argv)
    try:
        out = check_output_file(args.out, "--out")
    except ValueError as exc:
        parser.error(str(exc))
    if out.suffix != ".pt":
        parser.error(f"--out {args.out} must name a .pt file")
    if out.exists() and not args.force:
        parser.error(f"--out {args.out} exists (pass --force to replace it)")
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    import torch  # the agent's search may use it; one thread, as every long job here

    torch.set_num_threads(1)
    start = time.perf_counter()
    try:
        calibrated, correction, made = calibrate(args.network, args.games, args.seed, args.mix)
    except ValueError as exc:
        parser.error(str(exc))
    save(calibrated, out)
    print(
        f"{made['afterstates']:,} afterstates of {args.games:,} games"
        f" ({', '.join(made['classes'])})"
    )
    print(
        f"  {'output':16s} {'rows':>8s} {'events':>7s} {'slope':>7s} {'shift':>7s}"
        f" {'log loss':>17s}"
    )
    for k, name in enumerate(OUTCOMES):
        print(
            f"  {name:16s} {made['rows'][k]:8d} {made['events'][k]:7d}"
            f" {correction.matrix[k, k]:7.3f} {correction.shift[k]:+7.3f}"
            f" {made['log_loss_before'][k]:.4f} -> {made['log_loss_after'][k]:.4f}"
        )
    print(f"wrote {out} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
