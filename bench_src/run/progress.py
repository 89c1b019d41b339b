"""The run's progress lines on stderr (samples done / planned, elapsed, ETA) and the lines it says
beside them (the estimate, the real duration)."""
from __future__ import annotations

import sys
import time
from collections import Counter
from typing import Callable, TextIO

from ..plan import Cell
from ..plan.estimate import format_duration


class Progress:
    """Progress lines on stderr: samples done / planned, elapsed time and an ETA (the estimate of
    what remains, scaled by how the real times compare with the estimate so far).  A line after
    the first sample, then every few seconds (the interval grows with the run, up to a minute),
    and one at the end.  The samples to take and those taken are kept as counts per cell and
    priced by `seconds` when the ETA is made, so that a better price (the warm-ups' timing of the
    machine, which comes after the run's samples were expected) re-prices both alike: kept as
    running sums of seconds, the remainder priced before it and taken off after it left the
    difference standing, and the last lines of a quick run read "ETA 36 s" with 5 s to go."""

    def __init__(self, label: str, planned: int, done_before: int, seconds: Callable[[Cell], float],
                 enabled: bool = True, stream: TextIO | None = None):
        self.label, self.planned, self.done = label, planned, done_before
        self.seconds = seconds
        self.enabled = enabled
        self.stream = stream
        self.started = time.monotonic()
        self.sampling_started = self.started  # reset by begin(): server start-up is not sampling pace
        self.last_line = 0.0
        self.pending: Counter[Cell] = Counter()  # expected and not yet taken, per cell
        self.taken_cells: Counter[Cell] = Counter()  # taken since begin(), per cell
        self.taken = 0
        self.hosts = 1  # hosts taking samples at once (a cluster run)

    def _priced(self, counts: Counter[Cell]) -> float:
        return sum(self.seconds(cell) * k for cell, k in counts.items())

    @property
    def remaining_estimate(self) -> float:
        """The estimated seconds of the samples expected and not taken, at today's prices."""
        return self._priced(self.pending)

    @property
    def estimated_done(self) -> float:
        """The estimated seconds of the samples taken, at the same prices."""
        return self._priced(self.taken_cells)

    def begin(self) -> None:
        """The first sample is about to be taken (servers and fixtures are ready): the pace is
        measured from here, on the samples taken from here."""
        self.sampling_started = time.monotonic()
        self.taken_cells.clear()

    def expect(self, cells: list[Cell]) -> None:
        """Add samples to take (their estimated seconds count towards the ETA)."""
        self.pending.update(cells)

    def add_planned(self, n: int) -> None:
        self.planned += n

    def eta(self) -> float:
        sampling = time.monotonic() - self.sampling_started
        done = self.estimated_done
        # measured pace once a few samples are in (hosts working at once included), else the estimate
        scale = sampling / done if done > 0 and self.taken >= 3 * self.hosts else 1.0 / self.hosts
        return max(0.0, self.remaining_estimate * scale)

    def line(self, note: str = "", final: bool = False) -> str:
        """The progress line; the last one (`final`) has no ETA: nothing remains."""
        elapsed = time.monotonic() - self.started
        pct = 100.0 * self.done / self.planned if self.planned else 100.0
        hosts = f" on {self.hosts} hosts" if self.hosts > 1 else ""
        eta = "" if final else f", ETA {format_duration(self.eta())}"
        return (f"[{self.label}] {self.done}/{self.planned} samples ({pct:.0f}%){hosts}, elapsed {format_duration(elapsed)}"
                + eta + (f"; {note}" if note else ""))

    def update(self, cell: Cell, note: str = "", counted: bool = True) -> None:
        """A sample taken; `counted`: one of the planned samples taken for the first time (a sample
        a cluster's host takes again, after its block was lost, costs time but is no more done)."""
        if self.pending[cell] > 0:
            self.pending[cell] -= 1
        self.taken_cells[cell] += 1
        self.done += counted
        self.taken += 1
        now = time.monotonic()
        interval = min(60.0, max(5.0, (now - self.started) / 20))
        if self.taken == 1 or now - self.last_line >= interval:
            self.emit(note)

    def say(self, text: str, log: Callable[[str], None]) -> None:
        """A line for the terminal (the estimate, the real duration): on the progress stream when
        progress lines are on (make run shows the notebook's stderr), else through `log`."""
        if self.enabled:
            print(text, file=self.stream or sys.stderr, flush=True)
        else:
            log(text)

    def emit(self, note: str = "", final: bool = False) -> None:
        if not self.enabled:
            return
        self.last_line = time.monotonic()
        stream = self.stream or sys.stderr
        print(self.line(note, final), file=stream, flush=True)


class Growing:
    """What sequential.run_blocks expects of a progress bar: told the cells of the samples each of
    its steps adds, it grows the planned count and the estimate of what remains (the ETA) by them."""

    def __init__(self, progress: Progress):
        self.progress = progress

    def expect(self, cells: list[Cell]) -> None:
        self.progress.add_planned(len(cells))
        self.progress.expect(cells)
