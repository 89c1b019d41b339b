"""A session's duration estimates: what it takes of the schedule (a block an interruption cut,
whole; the warm-ups done before, again), priced from earlier runs, the warm-ups' timing of the
machine and the sequential rule's expected samples, capped by a time budget; printed before the
first measured sample and again after the pilot's look."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..analysis import sequential
from ..plan import Cell, Plan, Slot
from ..plan.estimate import Estimate, Speed, default_seconds, estimate, format_duration, seconds_per_sample, speed_factor
from ..profiles import PROFILES
from ..store.history import earlier_pilot, history
from ..store.ledger import taken_per_cell


def estimate_remaining(plan: Plan, records: list[dict], measured_s: Mapping[str, float],
              expected_samples: Mapping[str, float] | float | None, done_per_cell: Mapping[str, int],
              used: list[str], spent_before: float, results_dir: Path | None = None,
              spent_now: float = 0.0, own_s: Mapping[str, float] | None = None,
              speed: Speed | None = None, servers_started: bool = False,
              counted_spent: float = 0.0) -> Estimate:
    """The duration estimate of what remains.  Under the sequential rule the samples per cell are
    the rule's expectation (from the stored pilot when there is one, else the budget); a time
    budget caps the estimate, but never below the pilot, which always runs whole.  `counted_spent`:
    seconds this session already spent that the figure counts (after the warm-ups, their time),
    added to it after the cap and to every figure a note sets beside it (the range the measured
    shares give "in all", the figure uncapped, the pilot alone), so that all are on one basis."""
    pilot_from = "the stored pilot"
    share = 0.0
    follows_speed = False
    measured_shares: tuple[float, float] | None = None
    if expected_samples is None and plan.max_samples:
        pilot = [r for r in records if r.get("phase") == "measured" and int(r.get("block", 0)) < plan.samples]
        if not pilot:  # before this run's pilot: the decisions of an earlier run of the same cells
            pilot, where = earlier_pilot(plan, exclude=results_dir)
            pilot_from = f"the pilot of an earlier run ({where})" if pilot else ""
        if not pilot:  # no pilot at all: the pilot, plus what the extra blocks took in a measured run
            profile = PROFILES.get(plan.profile)
            share = profile.sequential_share_at(speed.factor if speed else None) if profile else 0.0
            follows_speed = bool(profile and profile.share_follows_speed)
            measured_shares = profile.sequential_share_measured if profile else None
        expected = sequential.expected_samples(plan, pilot)
        warmups = plan.warmups()
        expected_samples = {cid: v + warmups[cid] for cid, v in expected.items()}
    est = estimate(plan, measured_s, expected_samples, done_per_cell, used, own_s, speed, servers_started)
    if plan.max_samples and pilot_from:
        est.notes.append(f"samples per cell as the sequential rule expects them, from {pilot_from}")
    elif plan.max_samples:
        pilot_only = estimate(plan, measured_s, {c.id: float(plan.samples) for c in plan.cells()}, {}, used, own_s,
                              speed, servers_started=True)
        extra = share * pilot_only.seconds
        est.seconds += extra

        def at_share(other: float) -> str:
            return format_duration(est.seconds + counted_spent + (other - share) * pilot_only.seconds)

        est.notes.append("no pilot yet: the pilot's samples, plus "
                         + (f"{format_duration(extra)} for the sequential rule's extra blocks ({share:.0%} of the "
                            + (f"pilot: the {plan.profile} profile's measured shares read at this machine's speed "
                               f"factor, {speed.factor:.2f} (bench_src/profiles.py)" if follows_speed and speed else
                               f"pilot: the {plan.profile} profile's measured shares read at the default times' own "
                               "speed factor, 1, no warm-up having timed this machine (bench_src/profiles.py)"
                               if follows_speed else f"pilot, as measured or projected for the {plan.profile} profile")
                            + ")"
                            if share else
                            "the sequential rule's extra blocks, which cannot be projected before a pilot")
                         + (f"; in measured runs of the profile they took {measured_shares[0]:.0%} to "
                            f"{measured_shares[1]:.0%} of the pilot: "
                            f"{at_share(measured_shares[0])} to {at_share(measured_shares[1])} in all"
                            if share and measured_shares else "")
                         + "; estimated again after the pilot's look")
    if plan.time_budget_s:
        pilot = estimate(plan, measured_s, None, done_per_cell, used, own_s, speed, servers_started)
        remaining = max(0.0, plan.time_budget_s - spent_before - spent_now)
        capped = max(pilot.seconds, min(est.seconds, remaining))
        if capped < est.seconds:
            # the capped figure is the budget by construction: the two it lies between are stated,
            # so a reader can tell the estimate's own content from the cap
            spent = [f"{format_duration(spent_before)} spent in earlier sessions"] if spent_before else []
            spent += [f"{format_duration(spent_now)} in this one"] if spent_now else []
            est.notes.append(f"capped by the time budget of {format_duration(plan.time_budget_s)}"
                             + (f" ({', '.join(spent)})" if spent else "")
                             + f"; uncapped {format_duration(est.seconds + counted_spent)}"
                             + (f", the pilot alone {format_duration(pilot.seconds + counted_spent)}"
                                if pilot.seconds else ""))
        est.seconds = capped
    est.seconds += counted_spent
    return est


@dataclass
class SessionTakes:
    """What a session in this process takes of the plan's schedule: `slots`, block by block
    (`sequential.block_to_take`: a measured block an interruption cut, whole); `warm_again`, the
    warm-ups done before that it takes again under names of its own right before its first measured
    sample, if it takes one; `again`, the samples of `slots` done before."""
    slots: list[tuple[int, Slot]]
    warm_again: list[tuple[int, Slot]]
    again: set[str]

    @property
    def measured(self) -> bool:
        """A measured sample of the schedule is to be taken (so the warm-ups again too)."""
        return any(s.phase == "measured" for _, s in self.slots)


def session_takes(blocks: list[list[tuple[int, Slot]]], done: set[str], skipped: set[str]) -> SessionTakes:
    """What this session takes of `blocks` (the schedule's, in order), given the samples `done`
    and the `skipped` ones among those not done: what `sequential.blocks_in_order` and the warm-ups
    again will take, for the estimate and the progress line's count."""
    slots = [qs for b in blocks for qs in sequential.block_to_take(b, done, skipped)[0]]
    warm_again = [(q, s) for b in blocks if b[0][1].phase == "warmup" for q, s in b if s.sample_id in done]
    takes = SessionTakes(slots, warm_again, {s.sample_id for _, s in slots if s.sample_id in done})
    if takes.measured:
        takes.again |= {s.sample_id for _, s in warm_again}
    return takes


@dataclass
class SessionEstimate:
    """The estimates of one session in this process or on a cluster, on what it read at its start:
    the seconds per sample of earlier runs (`measured_s`, from the directories `used`), the
    seconds spent in earlier sessions, what it takes (`takes`) and the warm-ups' timing of the
    machine (`speed`, measured again after this session's warm-ups)."""
    plan: Plan
    takes: SessionTakes
    expected_samples: Mapping[str, float] | float | None
    spent_before: float
    results_dir: Path
    measured_s: Mapping[str, float]
    used: list[str]
    speed: Speed | None

    @classmethod
    def read(cls, plan: Plan, takes: SessionTakes, records: list[dict],
             expected_samples: Mapping[str, float] | float | None, spent_before: float,
             results_dir: Path) -> SessionEstimate:
        """Read the history of earlier runs and the stored warm-ups' timing of the machine."""
        measured_s, by_cell = history()
        used = sorted({d for c in plan.cells() for d in by_cell.get(c.id, ())})
        return cls(plan, takes, expected_samples, spent_before, results_dir, measured_s, used,
                   speed_factor(plan, records))

    def seconds(self, cell: Cell) -> float:
        """A sample's price for the progress line's ETA, at the machine's timing as known now."""
        default = default_seconds(cell) * (self.speed.factor if self.speed else 1.0)
        return min(self.measured_s.get(cell.id, default), self.plan.timeout_s + 1.0) + self.plan.cooldown_s

    def now(self, records: list[dict], done: set[str], spent_now: float = 0.0,
            servers_started: bool = False, counted_spent: float = 0.0) -> Estimate:
        """The samples this session takes from here, priced: a sample done counts as done unless
        the session takes it again (in a block an interruption cut, taken whole; a warm-up, taken
        again before the first measured sample)."""
        plan, takes = self.plan, self.takes

        def priced(again: set[str]) -> Estimate:
            return estimate_remaining(plan, records, self.measured_s, self.expected_samples,
                                      taken_per_cell(records, done - again), self.used, self.spent_before,
                                      self.results_dir, spent_now=spent_now, speed=self.speed,
                                      servers_started=servers_started, counted_spent=counted_spent)

        est = priced(takes.again)
        if takes.warm_again and not takes.measured and plan.max_samples:
            # the schedule is taken: the rule's extra blocks bring the measured samples, the
            # warm-ups again before them
            warm_left = sum(s.phase == "warmup" and s.sample_id not in done for _, s in takes.slots)
            if est.samples > warm_left:
                est = priced(takes.again | {s.sample_id for _, s in takes.warm_again})
        return est

    def after_warmups(self, records: list[dict], done: set[str], spent_now: float, warmups_taken: int) -> Estimate:
        """The session's estimate once its warm-ups timed the machine: its time so far, and the
        warm-ups it took in it, included."""
        self.speed = speed_factor(self.plan, records) or self.speed
        est = self.now(records, done, spent_now=spent_now, servers_started=True, counted_spent=spent_now)
        est.samples += warmups_taken
        est.notes.append(f"{format_duration(spent_now)} of it spent before the estimate (starting the "
                         f"servers and fixtures, the {warmups_taken} warm-up "
                         f"sample{'s' if warmups_taken != 1 else ''})")
        return est

    def after_pilot(self, records: list[dict], done: set[str], spent_now: float,
                    warm_again_to_come: bool) -> Estimate:
        """What remains after the pilot's look, projected from this run's own pilot and the times
        measured so far; `warm_again_to_come`: the warm-ups done before are still to be taken again
        (before the open comparisons' measured samples)."""
        # the pilot's own seconds per sample outrank earlier runs' (a results directory outside
        # data/results/ is no part of the history)
        times, own = history()[0], seconds_per_sample(records)
        if warm_again_to_come:
            done = done - {s.sample_id for _, s in self.takes.warm_again}
        return estimate_remaining(self.plan, records, times, None, taken_per_cell(records, done), self.used,
                                  self.spent_before, self.results_dir, spent_now=spent_now, own_s=own,
                                  speed=self.speed, servers_started=True)
