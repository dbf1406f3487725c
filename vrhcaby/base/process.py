"""What a long-running process needs of the system it runs on: the CPUs it may use
(`cpu_count`) and how it stops on SIGINT or SIGTERM keeping the work it finished
(`StopSignals`). Here, below every floor, because both the command line's verbs and the
training floor's stage processes (`vrhcaby.training.stage`) run such work."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from types import FrameType


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity, where the system tells it): the
    default number of local processes of the verbs that spread their work."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class StopSignals:
    """How a long command (tournament, rollout, external, label) stops on SIGINT (Ctrl-C)
    or SIGTERM (a scheduler's stop), keeping the work it finished.

    Inside ``with StopSignals() as stop:`` the first signal raises KeyboardInterrupt where
    the work is (for SIGTERM too), and `status` is then 128 + its number, the shell's
    convention: 130 after SIGINT, 143 after SIGTERM. Later signals are only reported: the
    command is already stopping, and a second Ctrl-C must not cut short the writing of
    what was finished. Inside ``with stop.holding():`` (a save between two parts of the
    work) even the first is only noted; the command looks at `received` after it. The
    handlers are installed explicitly, so that a job which a non-interactive shell
    started in the background, where SIGINT starts ignored, still stops on it; leaving
    the block restores the previous ones.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: signal.Signals | None = None
        self._holding = 0
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopSignals:
        for sig in self.SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.received is not None or self._holding:
            self.received = self.received or signal.Signals(signum)
            print(
                f"{signal.Signals(signum).name}: already stopping; keeping what is finished",
                file=sys.stderr,
            )
            return
        self.received = signal.Signals(signum)
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """A block that a signal does not interrupt (it is noted in `received`)."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1

    @property
    def status(self) -> int:
        """The exit status: 0, or 128 + the signal that stopped the command."""
        return 128 + self.received if self.received is not None else 0
