"""The network API under its first name (kept for users' scripts): `load_evaluator`,
`Evaluator`, `NetConfig`, `build_model`, and the outcome arithmetic `equity`/`invert`.

The code lives in `vrhcaby.nn.net` (and the arithmetic in `vrhcaby.equity.outcomes`); new
code imports it from there. Nothing inside the project imports this module.
"""

from vrhcaby.equity.outcomes import equity, invert
from vrhcaby.nn.net import Evaluator, NetConfig, build_model, load_evaluator

__all__ = ["Evaluator", "NetConfig", "build_model", "equity", "invert", "load_evaluator"]
