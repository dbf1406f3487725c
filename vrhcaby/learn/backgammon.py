"""Backgammon as a `Game` of the TD(λ) trainer, and its evaluation: cubeless money games
against fixed opponents, and optionally every play judged by gnubg."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from vrhcaby.equity.outcomes import equity, invert, outcome
from vrhcaby.learn.config import BACKUPS, EvalConfig
from vrhcaby.learn.episodes import Episodes
from vrhcaby.learn.game import Evaluation
from vrhcaby.learn.selfplay import SelfPlay, variant_net, weights_from_model
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.net import Evaluator, NetConfig, build_model, joint
from vrhcaby.play.judge import CLASSES, Judged, judged_games


class Backgammon:
    """Backgammon in one of its variants: afterstates valued by a five-output network (the
    outcome probabilities), greedy 0-ply self-play (`SelfPlay`), evaluated by cubeless
    money games against fixed opponents. `net` is made `variant_net(net, variant)`;
    `backup` is `TDConfig.backup`; `starts`, boards on roll that the self-play games start
    from (`vrhcaby.learn.starts`; None: the opening)."""

    name = "backgammon"
    flip = staticmethod(invert)

    def __init__(
        self,
        net: NetConfig,
        variant: str,
        backup: str = "sampled",
        starts: np.ndarray | None = None,
    ) -> None:
        if backup not in BACKUPS:
            raise ValueError(f"unknown backup {backup!r} (known: sampled, expected)")
        self.net = variant_net(net, variant)
        self.variant = variant
        self.expected = backup == "expected"
        self.starts = starts
        self._judge: dict[tuple[int, int], Judged] = {}
        if self.expected and self.net.variant_inputs:
            raise ValueError("td.backup = 'expected' is not available for acey-deucey")

    def build_model(self) -> torch.nn.Module:
        return build_model(self.net)

    def selfplay(self, model: torch.nn.Module, device: torch.device) -> SelfPlay:
        return SelfPlay(model, self.net, self.variant, device, self.expected, starts=self.starts)

    def inputs(self, episodes: Episodes, valid: np.ndarray) -> torch.Tensor:
        extra = episodes.extra_turns()[valid] if self.net.variant_inputs else None
        return torch.from_numpy(self.net.encode(episodes.states[valid], extra))

    def values(self, output: torch.Tensor) -> torch.Tensor:
        return joint(output)

    def obey(self, states: np.ndarray, values: Any) -> Any:
        """`vrhcaby.nn.lawful.obey_rules`: impossible outcomes zeroed, finished games their
        result, bear-offs the databases' exact values."""
        return obey_rules(states, values)

    def final(self, episodes: Episodes) -> np.ndarray:
        return outcome(episodes.values)

    def equity(self, values: np.ndarray) -> np.ndarray:
        return equity(values)

    def charts(self, episodes: Episodes) -> dict[str, float]:
        return {
            "gammon_rate": float((episodes.values >= 2).mean()),
            "backgammon_rate": float((episodes.values >= 3).mean()),
        }

    def evaluate(
        self, model: torch.nn.Module, config: EvalConfig, run: dict[str, Any]
    ) -> dict[str, Any]:
        """Cubeless money games of the 0-ply player against each opponent."""
        evaluator = Evaluator(self.net, weights_from_model(model), self.variant, run)
        return self.evaluate_network(evaluator, config)

    def evaluate_network(self, evaluator: Any, config: EvalConfig) -> dict[str, Any]:
        """`evaluate`'s games (and judged plays) for any evaluator: a network's, or a
        `vrhcaby.nn.netset.NetworkSet`."""
        from agents import load_agent
        from agents.td import TDAgent
        from vrhcaby.play.tournament import PairSettings, play_pair

        # Cubeless evaluation: no cube, and no resignations that would cut games short.
        me = TDAgent(evaluator, plies=0, name="td-training", cube_aware=False)
        results = {}
        for spec in config.opponents:
            r = play_pair(
                me,
                load_agent(spec),
                games=config.games,
                seed=config.seed,
                settings=PairSettings(variant=self.variant, cube=False),
            )
            results[spec] = {"ppg": r.ppg, "ci95": list(r.ci95), "games": r.games}
        if config.judge_games:
            results["move_cost"] = self._judged(config).play(me).to_json()
        return results

    def _judged(self, config: EvalConfig) -> Judged:
        """The judged positions of the evaluation, made on first use."""
        key = (config.judge_games, config.seed)
        if key not in self._judge:
            from agents import load_agent

            gnubg, pubeval = load_agent("gnubg?plies=0"), load_agent("pubeval")
            self._judge[key] = judged_games(gnubg, pubeval, config.judge_games, config.seed)
        return self._judge[key]

    def report(self, record: dict[str, Any], config: EvalConfig) -> Evaluation:
        """Points per game against each opponent, and the judged cost per move; the first
        opponent's points per game, or the cost (`best_by`), decides the best."""
        scalars = {}
        for spec in config.opponents:
            scalars[f"ppg_{spec}"] = record[spec]["ppg"]
            scalars[f"ci95_low_{spec}"] = record[spec]["ci95"][0]
            scalars[f"ci95_high_{spec}"] = record[spec]["ci95"][1]
        first = config.opponents[0]
        ppg = record[first]["ppg"]
        postfix = {f"ppg vs {first}": f"{ppg:+.3f}"}
        cost = record.get("move_cost")
        if cost is not None:
            for key in ("mean", "per_game", *CLASSES):
                if cost[key] is not None:
                    scalars["move_cost" if key == "mean" else f"move_cost_{key}"] = cost[key]
            postfix["move cost"] = f"{cost['mean']:.5f}"
        if config.best_by == "move_cost" and cost is not None:
            return Evaluation(score=-cost["mean"], scalars=scalars, postfix=postfix)
        return Evaluation(score=ppg, scalars=scalars, postfix=postfix)
