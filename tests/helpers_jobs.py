"""Work units shared by tests that must behave the same in a worker process, whichever way
it started: forked, or from the fork server once the test process has loaded gRPC (Ray's
tests, `pytest.importorskip("grpc")`). A function a test monkeypatches reaches a forked
worker only; a job of a class defined here is pickled to the worker and imported there by
name, so it acts in both."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from vrhcaby.cli.label import ShardJob


@dataclass(frozen=True)
class InterruptingShardJob(ShardJob):
    """`vrhcaby label`'s job that presses Ctrl-C (SIGINT to the process `parent`, the
    command's) as it starts making shard `at`, here or in a worker process."""

    parent: int = 0
    at: int = 1

    def make(self, index: int):
        if index == self.at:
            os.kill(self.parent, signal.SIGINT)
        return super().make(index)
