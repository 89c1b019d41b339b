"""The ratio of two amounts, each measured as a difference within the same blocks, with Fieller's
interval: what one program uses above its baseline against what the other uses above its own.

Per block b that holds all four cells, x_b is one amount (a program's value less its baseline's in
that block) and y_b the other.  The estimand is the ratio of the mean amounts, theta = E[x] / E[y];
the estimate is mean(x) / mean(y).  The interval is Fieller's (1954), by test inversion: every
theta for which the per-block contrast x_b - theta y_b has a mean Student's t does not tell from 0,

    |mean(x) - theta mean(y)| <= t x sqrt(v_xx - 2 theta v_xy + theta^2 v_yy) + e_x + |theta| e_y,

v the variances and covariance of the two means (one pair of amounts per block, so a block effect
shared by the four cells cancels and any left in x and y is counted), t Student's quantile on
`paired.t_dof(n)` degrees of freedom (the package's rule for Student's t), and e_x, e_y the most
the grid the values lie on can leave in each mean amount (`grid_bound`).

What the set is, read off the two amounts' own intervals (mean +- (t x se + e)) at the same level:
- bounded when the amount below (y) is resolved from 0; when it is not, the set reaches infinity,
  and the ratio says nothing about how much more the first side uses;
- holding 0 when the amount above (x) is not resolved from 0.
A ratio is "resolved" only when neither happens.  The set is one of three shapes: a bounded
interval (the amount below resolved), the whole line, or two rays (-inf, a] and [b, inf) (the amount
below not resolved: past every edge the test reads |mean(y)| <= t x se_y + e_y on both sides).  The
interval returned (`low`, `high`) is the piece that holds the estimate; where the set is two rays,
`gap` gives the ratios between them that it excludes, (a, b), so that the set is shown whole.

Assumptions:
- The mean of x - theta y is close enough to normal that the t distribution gives its tails (the
  amounts are means of per-block differences; peak RSS is skewed, heavy-tailed and bimodal at
  times).  Measured on such data at 6 and 20 blocks (`simulate.above_baseline_coverage`,
  docs/statistics.md, "Ratios of amounts above a baseline"), not assumed.
- The blocks are independent of one another (each block's cells run in their own random order).
- The estimand is the ratio of the mean amounts, not of differences of medians: the one interval
  of the latter measured beside it (a block bootstrap's percentile interval) covered 91.7-92.3% at
  its lowest at 6 blocks in that study.
- Conditional on being resolved, an interval misses more often than 1 - confidence where an amount
  is about one baseline sd (up to 12% in the study, bimodal noise at 6 blocks): resolution selects
  the draws that overstate the amounts.  A resolved ratio is necessary for a finding, not enough.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from . import paired, rules


@dataclass(frozen=True)
class AmountRatio:
    """One ratio of amounts: the two mean amounts with their intervals, the ratio and the piece of
    its confidence set that holds it (low, high may be -inf, inf; the whole set: `gap`), and the
    blocks used."""

    blocks: int
    x: float
    x_low: float
    x_high: float
    y: float
    y_low: float
    y_high: float
    ratio: float
    low: float
    high: float
    test: tuple = field(default=(), repr=False, compare=False)  # what `contains` tests against

    def contains(self, theta: float) -> bool:
        """Whether the confidence set (all of it, not only the piece `low`, `high`) holds theta."""
        return bool(self.test) and bool(_inside(theta, *self.test))

    @property
    def gap(self) -> tuple[float, float]:
        """Where the confidence set is two rays (-inf, a] and [b, inf): (a, b), the ratios it excludes;
        (NaN, NaN) where it is one interval (bounded, or the whole line) or there is none."""
        if not self.test or math.isinf(self.low) == math.isinf(self.high):
            return math.nan, math.nan
        edges = _candidates(*self.test)
        if math.isinf(self.high):  # the piece is [b, inf): the other ray lies below every edge
            start = min(float(edges.min()), self.low)
            return _piece(start - (1.0 + 2 * abs(start)), self.test)[1], self.low
        start = max(float(edges.max()), self.high)
        return self.high, _piece(start + (1.0 + 2 * abs(start)), self.test)[0]

    @property
    def x_resolved(self) -> bool:
        return self.x_low > 0 or self.x_high < 0

    @property
    def y_resolved(self) -> bool:
        return self.y_low > 0 or self.y_high < 0

    @property
    def resolved(self) -> bool:
        """The interval is bounded and lies on one side of 0: both amounts are told from 0."""
        return bool(math.isfinite(self.low) and math.isfinite(self.high) and (self.low > 0 or self.high < 0))


def grid_bound(values, resolution: float) -> float:
    """The most a grid can leave in the mean of one cell's values (in their order): the cell's
    grid step (`paired.grid_step`, its own finest gap or the metric's `resolution`) times
    `paired.cell_rounding`'s bound (under 0.06 of a step where its noise dithers the rounding,
    half a step where it does not).  0 off any grid."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return 0.0
    step = float(paired.grid_step(v, v, resolution))
    if step <= 0:
        return 0.0
    _, bound = paired.cell_rounding(step, v)
    return step * float(bound)


def _inside(theta, mx, my, vxx, vyy, vxy, crit, ex, ey):
    theta = np.asarray(theta, dtype=float)
    spread = np.sqrt(np.maximum(vxx - 2 * theta * vxy + theta ** 2 * vyy, 0.0))
    return np.abs(mx - theta * my) - ex - np.abs(theta) * ey <= crit * spread


def _candidates(mx, my, vxx, vyy, vxy, crit, ex, ey) -> np.ndarray:
    """Every point where the condition of `_inside` can change: on each of the four pieces of
    |mx - theta my| - ex - |theta| ey (signs of mx - theta my and of theta) the boundary solves a
    quadratic; and the pieces' own edges."""
    out = [0.0]
    if my != 0:
        out.append(mx / my)
    c2 = crit ** 2
    for s in (1.0, -1.0):
        for t in (1.0, -1.0):
            alpha, beta = s * mx - ex, s * my + t * ey
            a, b, c = beta ** 2 - c2 * vyy, -2 * alpha * beta + 2 * c2 * vxy, alpha ** 2 - c2 * vxx
            roots = np.roots([a, b, c]) if (a, b) != (0.0, 0.0) else []
            out += [float(r.real) for r in np.atleast_1d(roots) if abs(r.imag) <= 1e-9 * max(1.0, abs(r.real))]
            if beta != 0:
                out.append(alpha / beta)  # where the piece's linear part is 0
    return np.unique(np.asarray([v for v in out if math.isfinite(v)], dtype=float))


def _piece(estimate, args) -> tuple[float, float]:
    """The piece of the confidence set that holds `estimate`: from it outward, segment by segment
    between the candidate points, while each segment lies inside."""
    points = _candidates(*args)
    bounds = []
    for side in (-1, 1):
        beyond = points[points < estimate][::-1] if side < 0 else points[points > estimate]
        edge = estimate
        for p in beyond:
            if not _inside((edge + p) / 2, *args):
                break
            edge = float(p)
        else:
            far = edge + side * (1.0 + 2 * abs(edge))
            edge = side * math.inf if _inside(far, *args) else edge
        bounds.append(edge)
    return bounds[0], bounds[1]


def amount_ratio(x, y, confidence: float = rules.CONFIDENCE, ex: float = 0.0, ey: float = 0.0) -> AmountRatio:
    """The ratio mean(x) / mean(y) of two amounts measured in the same blocks (x[i], y[i] from block
    i) with its `confidence` Fieller interval; `ex`, `ey`: the most the grid can leave in each mean
    amount (`grid_bound` of each of its cells, summed).  Fewer than 3 blocks: no interval (NaN)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = int(x.size)
    if n != y.size:
        raise ValueError(f"x and y must hold one amount per block each, got {x.size} and {y.size}")
    mx = float(x.mean()) if n else math.nan
    my = float(y.mean()) if n else math.nan
    ratio = mx / my if n and my != 0 else math.nan
    if n <= paired.T_DOF_LOST:
        return AmountRatio(n, mx, math.nan, math.nan, my, math.nan, math.nan, ratio, math.nan, math.nan)
    crit = float(sps.t.isf((1 - confidence) / 2, paired.t_dof(n)))
    vxx, vyy = float(x.var(ddof=1)) / n, float(y.var(ddof=1)) / n
    vxy = float(((x - mx) * (y - my)).sum()) / (n - 1) / n
    hx, hy = crit * math.sqrt(vxx) + ex, crit * math.sqrt(vyy) + ey
    test = (mx, my, vxx, vyy, vxy, crit, ex, ey)
    low = high = math.nan
    if math.isfinite(ratio):
        low, high = _piece(ratio, test)
    return AmountRatio(n, mx, mx - hx, mx + hx, my, my - hy, my + hy, ratio, low, high, test)
