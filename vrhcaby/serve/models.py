"""The requests of `vrhcaby serve`, typed: each field is a command-line option of the verb
it answers, under the same name (`--match-to` is `match_to`), with the same default.

A request names its position by `position` (a Position ID, ``PositionID:MatchID``, an
XGID or `start`) or, in a JSON body, by `board`: two rows of 25 checker counts, row 0 the
opponent's and row 1 the side on roll's, each from its own side's view (points 1 to 24,
then the bar), as `show --json` gives them under O and X. A money game's cube may be
given as `cube_value` and `cube_owner` instead of a Match ID. `namespace()` turns a
request into the options `vrhcaby.io.answers` reads, as the command line's parser does.
"""

from __future__ import annotations

import argparse
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

import engine

Count = Annotated[int, Field(ge=0, le=15)]
Row = Annotated[list[Count], Field(min_length=25, max_length=25)]
Board = Annotated[list[Row], Field(min_length=2, max_length=2)]


def money_state_id(cube_value: int, cube_owner: str) -> str:
    """The Match ID of a money game with this cube, the side on roll to play, the Jacoby
    rule on as for a bare Position ID: how a request gives the cube without a Match ID
    (`cube_owner`: centre, me, opponent; a request's `jacoby` still decides)."""
    owners = {"centre": -1, "me": 1, "opponent": 0}
    if cube_owner not in owners:
        raise ValueError(f"cube_owner {cube_owner!r}: centre, me or opponent")
    state = engine.MatchState(
        cube_value=cube_value, cube_owner=owners[cube_owner], dice_owner=1, jacoby=True
    )
    return engine.match_id(state)


class PositionQuery(BaseModel):
    """A position, the agent and depth, and the cube and match around it."""

    model_config = ConfigDict(extra="forbid")

    position: str | None = Field(
        default=None, max_length=300, description="Position ID, PositionID:MatchID, XGID or start"
    )
    agent: str = Field(
        default="td", max_length=200, description="td, or td:NAME of a shipped network"
    )
    plies: int | None = Field(
        default=None,
        ge=0,
        le=2,
        description="look-ahead: /hint's search (default: the agent's plies), or the cube "
        "analysis of /cube and /eval (default: the agent spec's cube_plies, else 2)",
    )
    match_id: str | None = Field(default=None, max_length=40, description="GNU Backgammon Match ID")
    match_to: int | None = Field(default=None, ge=0, le=1000, description="match length in points")
    score: str | None = Field(
        default=None, max_length=20, description="match score A-B, on roll's first"
    )
    crawford: bool = Field(default=False, description="this is the Crawford game")
    jacoby: bool | None = Field(
        default=None, description="money play: the Jacoby rule (default on)"
    )
    beavers: bool | None = Field(default=None, description="money play: beavers (default on)")
    max_cube: int = Field(default=64, ge=1, le=1 << 15, description="highest cube value")
    cube_efficiency: float | None = Field(
        default=None, allow_inf_nan=False, description="fixed Janowski cube efficiency"
    )
    variant: str = Field(
        default="standard", max_length=40, description="rule variant (td: the variant's own)"
    )
    cube_value: int | None = Field(
        default=None, ge=1, le=1 << 15, description="money play: the cube's value (no Match ID)"
    )
    cube_owner: Literal["centre", "me", "opponent"] | None = Field(
        default=None, description="money play: who owns the cube (no Match ID)"
    )

    def position_text(self) -> str:
        """The position as text: `position`, or `board` as a Position ID."""
        board = getattr(self, "board", None)
        if (self.position is None) == (board is None):
            raise ValueError("give the position as either 'position' or 'board'")
        if board is not None:
            b = engine.Position(board).board  # validated: 15 checkers a side at most, ...
            return engine.position_id(b)
        assert self.position is not None
        return self.position

    def namespace(self) -> argparse.Namespace:
        """The options as the command line's parser gives them."""
        options = self.model_dump(exclude={"board", "cube_value", "cube_owner"})
        options["position"] = self.position_text()
        if self.cube_value is not None or self.cube_owner is not None:
            if self.match_id is not None or ":" in options["position"]:
                raise ValueError("give the cube either in a Match ID or as cube_value/cube_owner")
            options["match_id"] = money_state_id(self.cube_value or 1, self.cube_owner or "centre")
        return argparse.Namespace(**options)


class PositionBody(PositionQuery):
    """`PositionQuery` in a JSON body, where the position may be a `board`."""

    board: Board | None = Field(default=None, description="[opponent row, on-roll row]")


class HintQuery(PositionQuery):
    """`hint`: the ranked plays of a roll."""

    dice: str | None = Field(default=None, max_length=20, description="the roll, e.g. 31 or 3-1")
    candidates: int = Field(default=10, ge=1, le=500, description="how many plays to show")
    cubeless: bool = Field(default=False, description="rank by cubeless equity")
    no_prune: bool = Field(default=False, description="no pruning network in 1- and 2-ply searches")

    def namespace(self) -> argparse.Namespace:
        args = super().namespace()
        if engine.get_variant(args.variant).enter_from_start:
            raise ValueError(
                f"variant {args.variant!r}: its whole-turn hints are the command line's "
                "(vrhcaby hint --variant acey-deucey)"
            )
        return args


class HintRequest(HintQuery):
    """`HintQuery` in a JSON body, where the position may be a `board`."""

    board: Board | None = Field(default=None, description="[opponent row, on-roll row]")


class MovesQuery(BaseModel):
    """`moves`: every legal play of a position and roll."""

    model_config = ConfigDict(extra="forbid")

    position: str = Field(max_length=300, description="Position ID, ID:MatchID, XGID or start")
    dice: str = Field(max_length=20, description="the roll, e.g. 31 or 3-1")
    variant: str = Field(default="standard", max_length=40, description="rule variant")


class ShowQuery(BaseModel):
    """`show`: the board drawn (SVG), or its JSON."""

    model_config = ConfigDict(extra="forbid")

    position: str = Field(max_length=300, description="Position ID, ID:MatchID, XGID or start")
    play: str | None = Field(default=None, max_length=100, description="a play drawn as arrows")
    format: Literal["svg", "json"] = Field(default="svg", description="svg (the picture) or json")
    cube_value: int | None = Field(
        default=None, ge=1, le=1 << 15, description="money play: the cube drawn (no Match ID)"
    )
    cube_owner: Literal["centre", "me", "opponent"] | None = Field(
        default=None, description="money play: the cube's owner drawn (no Match ID)"
    )

    def position_text(self) -> str:
        """The position, with the money cube given as `cube_value`/`cube_owner` added
        as a Match ID."""
        if self.cube_value is None and self.cube_owner is None:
            return self.position
        if ":" in self.position:  # a Match ID or an XGID
            raise ValueError("give the cube either in the position or as cube_value/cube_owner")
        state = money_state_id(self.cube_value or 1, self.cube_owner or "centre")
        return f"{self.position}:{state}"


class RolloutRequest(BaseModel):
    """`rollout`: a position before the roll, or the plays of a roll, rolled out as a job."""

    model_config = ConfigDict(extra="forbid")

    position: str | None = Field(default=None, max_length=300)
    board: Board | None = None
    dice: str | None = Field(default=None, max_length=20, description="roll out this roll's plays")
    agent: str = Field(default="td", max_length=200, description="the agent that plays the trials")
    trials: int = Field(default=1296, ge=1, description="trials (the service sets a maximum)")
    truncate: int | None = Field(
        default=None, ge=1, description="stop trials after this many plies"
    )
    race_cutoff: bool = Field(default=False, description="stop trials once there is no contact")
    candidates: int = Field(default=5, ge=1, le=20, description="plays to roll out")
    cubeful: bool = Field(default=True, description="cubeful equities and the cube decision")
    cubeful_trials: bool = Field(default=False, description="play the cube inside the trials")
    match_id: str | None = Field(default=None, max_length=40)
    jacoby: bool | None = None
    beavers: bool | None = None
    opening: bool = Field(default=False, description="start with an opening roll")
    quasi_random: bool = Field(default=True, description="stratify the first rolls")
    luck: bool = Field(default=True, description="luck adjustment")
    seed: int = Field(default=0, ge=0, le=2**63 - 1, description="dice seed")

    def namespace(self) -> argparse.Namespace:
        """The options as the command line's parser gives them (no other evaluator)."""
        options = self.model_dump(exclude={"board"})
        options["position"] = PositionBody(position=self.position, board=self.board).position_text()
        return argparse.Namespace(**options, evaluator=None)


class AnalyseRequest(BaseModel):
    """`analyse`: a match or session (a `.mat` file's text) judged, as `analyse --json`."""

    model_config = ConfigDict(extra="forbid")

    mat: str = Field(max_length=1_000_000, description="the .mat file's text")
    name: str = Field(
        default="upload.mat",
        max_length=100,
        pattern=r"^[A-Za-z0-9_][A-Za-z0-9_. -]*$",
        description="the file's name, for the answer's `path` and error messages",
    )
    judge: str = Field(default="td?prune=on", max_length=200, description="a td agent spec")
    plies: int = Field(default=2, ge=0, le=2, description="the judge's depth")
    cube: bool = Field(default=True, description="judge cube decisions, rank plays cubefully")
    jacoby: bool = Field(default=True, description="money play: the Jacoby rule")
    worst: int = Field(default=10, ge=0, le=1000, description="worst decisions listed")

    def namespace(self) -> argparse.Namespace:
        """The options as the command line's parser gives them (no `mat`, no `name`)."""
        return argparse.Namespace(**self.model_dump(exclude={"mat", "name"}))
