"""Scripted agents shared by test modules: players whose decisions a test can foresee."""

from __future__ import annotations

from agents.pubeval import PubevalAgent


class CubeBot(PubevalAgent):
    """Pubeval that doubles now and then (every seventh cube question it is asked) and
    takes about twice as often as it drops: games with every kind of cube action, some of
    them wrong, such as `.mat` files and their analysis need."""

    cube_aware = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.k = 0

    def double_decision(self, position, context) -> bool:
        self.k += 1
        return self.k % 7 == 0

    def take_decision(self, position, context) -> bool:
        self.k += 1
        return self.k % 3 != 0
