"""λ-return targets of padded episodes, built backwards from each game's end.

    G_t = F_t((1 - λ) P_{t+1} + λ G_{t+1}),   G_{last} = final result,

where F_t is `net.invert` when the next state belongs to the other side (and the identity
otherwise). λ = 0 gives TD(0) targets (the next value), λ = 1 Monte-Carlo targets (the
final result); the same code path serves both. It serves every `Game` alike: it also takes
per-step rewards (points written each turn of the six-dice game) and expected one-step
backups computed during play in place of the sampled next value, and a game can be cut
short (`truncated`: its last state is then trained on its one-step backup).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vrhcaby.equity.outcomes import invert


def lambda_returns(
    values: np.ndarray | None,
    same_side: np.ndarray | None,
    lengths: np.ndarray,
    final: np.ndarray,
    lam: float,
    *,
    rewards: np.ndarray | None = None,
    backups: np.ndarray | None = None,
    truncated: np.ndarray | None = None,
    flip: Callable[[np.ndarray], np.ndarray] | None = invert,
    decided: np.ndarray | None = None,
) -> np.ndarray:
    """λ-return targets (T, G, K) of padded episodes: T states of G games, K outputs.

    Per step t of a game, with F_t the change to this state's view (`flip` where
    `same_side[t]` is False; None: a solitaire game, the view never changes),

        G_t = r_t + F_t((1 - λ) N_t + λ G_{t+1}),   G_{last} = final,

    where r_t is the reward of the step (`rewards`; none by default) and N_t the value
    bootstrapped from: the network's `values` of state t+1 (the sampled one-step backup is
    then r_t + F_t(V_{t+1})). Given `backups` instead, the expected one-step backups B_t
    of each state (the reward plus the next value, averaged over the dice), N_t is the next
    value they imply, F_t(B_t - r_t), so that G_t = (1 - λ) B_t + λ (r_t + F_t(G_{t+1})):
    λ = 0 gives B_t, λ = 1 the realised return. A `truncated` game's last state is no end:
    its target is its backup B_t. `final` (G, K) is the value of each finished game's last
    state in its mover's view; targets at and after a game's last state are not meant for
    training (see `Episodes.trained`).

    `decided` (T, G, K), where not NaN, is the value the rules fix for that output of state
    t (`Game.obey` of NaN: an impossible outcome's 0, a bear-off's database value): G_t
    takes it, and so the returns of earlier states bootstrap from the exact value rather
    than from a sampled continuation of it.
    """
    if (values is None) == (backups is None):
        raise ValueError("lambda_returns needs either the network values or the backups")
    if same_side is not None and flip is None:
        raise ValueError("a change of side needs the change of view, flip")
    last = lengths - 1
    games = np.arange(lengths.size)

    def view(x: np.ndarray, t: int | slice) -> np.ndarray:
        if same_side is None or flip is None:
            return x
        return np.where(same_side[t][..., None], x, flip(x))

    if backups is None:
        if truncated is not None and truncated.any():
            raise ValueError("a truncated game needs expected backups for its last state")
        assert values is not None  # one of the two, checked above
        steps = values.shape[0]
        v = values.copy()
        v[last, games] = final
        boot = v[1:]
        g = v.copy()
    else:
        steps = backups.shape[0]
        net = backups if rewards is None else backups - rewards
        boot = view(net, slice(None))[: steps - 1]
        end = final
        if truncated is not None:  # a game cut short: its last state's own backup
            end = np.where(truncated[:, None], backups[last, games], final)
        g = np.broadcast_to(end, backups.shape).astype(np.result_type(backups, final))
    for t in range(steps - 2, -1, -1):
        blended = (1 - lam) * boot[t] + lam * g[t + 1]
        target = view(blended, t)
        if rewards is not None:
            target = rewards[t] + target
        if decided is not None:
            target = np.where(np.isnan(decided[t]), target, decided[t])
        g[t] = np.where((t < last)[:, None], target, g[t])
    return g
