"""The rollout API under its first name (kept for users' scripts): `rollout_position`,
`rollout_afterstates`, `cube_rollout`, `Settings`, `CubeSetting`.

The code lives in `vrhcaby.play.rollout`; new code imports it from there. Nothing inside
the project imports this module.
"""

from vrhcaby.play.rollout import (
    CubeSetting,
    Settings,
    cube_rollout,
    rollout_afterstates,
    rollout_position,
)

__all__ = ["CubeSetting", "Settings", "cube_rollout", "rollout_afterstates", "rollout_position"]
