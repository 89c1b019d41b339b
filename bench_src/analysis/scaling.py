"""How cost grows with N: the marginal cost per task and the log-log exponent per series
(workload, language, variant, threads, arm and parameters other than N).

Both are read off the blocks.  A block holds every cell once, in a random order, so the values at
every N of one block were taken under the same conditions (the machine's state that hour, a
frequency, a neighbour): a condition shared by a block moves the whole line of that block, and the
block's line, not its single values, is the unit of evidence about a slope.  So, per series:
- the blocks that hold every N of the series (a sample that counts at each N: `blocks`).  In a
  sequential run the pilot's blocks hold every cell, and a cell that stopped early leaves the later
  blocks without it: the fit then uses fewer blocks and its interval is wider, as it should be
  (whether a block holds every N is settled before that block is taken, so the choice does not
  lean on its values).  A block that holds a cell twice gives it the median (CellValues.per_block);
- per block, the line through its values by weighted least squares: its slope is the block's cost
  per task, its intercept the block's fixed cost.  The weights are the same in every block: relative,
  1 / typical^2, where the samples' spread grows with the value (theta, read off the samples by
  variance_power, at least RELATIVE_FROM: timing and memory noise usually do), else equal (additive
  noise); typical is the series' typical value at each N over all its samples (exp of the
  Hodges-Lehmann location of the log values).  The weights set only how precise the slope is
  (relative weights under additive noise make it many times less precise on N = 1e3..1e6), not
  whether its interval holds its level, which comes from the blocks, as long as they lean little on
  the blocks' own values: theta itself as the power (1 / typical^(2 theta)) leaned on them where an
  N's spread moves with its level (two narrow modes: an N whose samples fell more in the upper mode
  is both higher and more spread), and covered 93.0% at 40 blocks on 1e3..1e6; one of two models
  chosen by theta covered 94.7%.  The table gives theta read off (`noise_power`), and so the model;
- the per-task cost: the centre of the blocks' slopes with its interval, by the very test and
  interval of a comparison's per-block log ratios (paired.Location: the Hodges-Lehmann estimate
  and the exact signed-rank (Tukey-Moses) interval from MIN_PAIRS blocks on, robust to one wild
  block); the fixed cost the centre of their intercepts;
- the exponent b of value ~ N^b: per block, least squares of log value on log N; the same centre
  and interval;
- straightness (`lack_of_fit_p`): where the series has 3 or more values of N, Hotelling's T^2 test
  that the k - 2 contrasts of a block's values orthogonal to every line have mean 0 (exact for
  normal values whatever their covariance across N, so a block effect or a spread that differs by
  N leaves it valid); on a grid, at the rounding errors within half a step at each rounded N that
  bring the contrasts nearest 0 (a rounded N is off its line alike in every block); the table's rows
  are corrected together (Holm) and a row whose per-N values leave the line says so.
Fewer than MIN_PAIRS blocks holding every N (failed samples, a frame without blocks): the line
through the per-N typical values, with no interval, and a warning says why.  A series with a single
N has no slope and no row.

Assumptions, each measured (docs/statistics.md, "Per-task cost and exponent"):
- the blocks are independent and their slopes symmetric about their centre (the signed-rank test's
  assumption): the centre is then the mean slope, the slope of the line through the mean values at
  the run's N.  Noise across N adds up in a block's slope, which makes it close to symmetric for
  every shape measured (log-normal, heavy-tailed, two modes);
- the estimand is the line through this run's values of N: where the cost is not a line in N, no
  single cost per task exists, the slope depends on the N chosen, and what the interval holds is
  that line's slope, not one of a curve elsewhere.  The straightness test is what tells the two
  apart; it needs 3 values of N (2 give a line and its interval, untested).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps
from scipy.optimize import lsq_linear

from . import paired, rules, stats
from .compare import CellValues
from .multiplicity import holm
from .families import key_params, key_text, key_threads, param_columns, with_param_columns
from .ranktests import walsh_averages
from .rules import ALPHA, CONFIDENCE, MIN_PAIRS

SERIES = ["workload", "lang", "variant", "threads_requested", "arm", "params"]
MIN_N_VALUES = 3  # the values of N a test of straightness needs (2 only give a line)
COLUMNS = [*SERIES, "threads", "metric", "ns", "n_values", "samples", "blocks", "per_task", "per_task_ci_low",
           "per_task_ci_high", "fixed_cost", "exponent", "exponent_ci_low", "exponent_ci_high", "noise_power",
           "lack_of_fit_p", "method", "warning"]


def typical(values) -> float:
    """exp of the Hodges-Lehmann location of the log values (the median when a value is <= 0)."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return np.nan
    if np.any(v <= 0):
        return float(np.median(v))
    return float(np.exp(np.median(walsh_averages(np.log(v)))))


def variance_power(ns, spreads, typicals) -> float:
    """How the samples' spread grows with the value, from the samples themselves: theta in
    spread ~ value^theta, the slope of log(spread) on log(typical value) over the values of N,
    clipped to [0, 1]: 0 for additive noise (the same absolute spread at every N), 1 for
    multiplicative noise (the same relative spread, as timing and memory noise usually are).
    1 when the data cannot tell (fewer than 2 values of N with a spread)."""
    sp, ty = np.asarray(spreads, dtype=float), np.asarray(typicals, dtype=float)
    ok = (sp > 0) & (ty > 0) & np.isfinite(sp) & np.isfinite(ty)
    if ok.sum() < 2 or np.ptp(np.log(ty[ok])) == 0:
        return 1.0
    slope = np.polyfit(np.log(ty[ok]), np.log(sp[ok]), 1)[0]
    return float(np.clip(slope, 0.0, 1.0))


RELATIVE_FROM = 0.5  # theta from which a series' lines are weighted as relative errors


def weight_power(theta: float) -> int:
    """The power of the typical value the weights divide by: 2 (relative errors) from a theta of
    RELATIVE_FROM on, else 0 (equal weights: additive noise)."""
    return 2 if theta >= RELATIVE_FROM else 0


def line_weights(typicals, theta: float) -> np.ndarray:
    """The weights of every block's line: 1 / typical^weight_power(theta) (equal where a typical
    value is <= 0)."""
    ty = np.asarray(typicals, dtype=float)
    if not np.all(ty > 0):
        return np.ones_like(ty)
    w = ty ** (-float(weight_power(theta)))
    return w / w.max()


def line_coefficients(ns, weights) -> np.ndarray:
    """(2, k): the intercept and the slope of the weighted least-squares line through k values at
    `ns`, each as a linear combination of the values (the same combination in every block)."""
    x = np.asarray(ns, dtype=float)
    w = np.asarray(weights, dtype=float)
    design = np.column_stack([np.ones_like(x), x / x.max()])
    rows = np.linalg.solve(design.T @ (design * w[:, None]), design.T * w)
    return rows * np.array([[1.0], [1.0 / x.max()]])


def straightness_p(ns, blocks, step: float = 0.0) -> float:
    """The p-value of "the values of every N lie on one line" from the blocks ((k, b): k values of N,
    b blocks): Hotelling's T^2 of the k - 2 contrasts orthogonal to every line.  On a grid of `step`
    (0: none), an N rounded on it (`rounded`) has a mean off its true value by up to half a step in
    every block alike, which the contrasts would read as a bend: T^2 is then taken at the rounding
    errors within those bounds that bring the contrasts' mean nearest 0 (bounded least squares in
    the metric of their covariance), the test's worst case for "not straight", as the comparisons
    test against a grid's whole bound.  NaN with fewer than MIN_N_VALUES values of N, too few blocks
    for the contrasts (b <= k - 2), values that are not finite or all 0, or contrasts that never
    vary."""
    x = np.asarray(ns, dtype=float)
    y = np.asarray(blocks, dtype=float)
    k, b = y.shape
    p = k - 2
    if k < MIN_N_VALUES or b <= p:
        return np.nan
    if not np.all(np.isfinite(y)) or np.abs(y).max() == 0:
        return np.nan
    scale = np.abs(y).max()
    basis, _ = np.linalg.qr(np.column_stack([np.ones_like(x), x / x.max()]), mode="complete")
    contrasts = basis[:, 2:].T  # (p, k)
    z = (contrasts @ (y / scale)).T  # (b, p)
    mean = z.mean(axis=0)
    cov = np.atleast_2d(np.cov(z, rowvar=False))
    if np.linalg.matrix_rank(cov) < p:
        return np.nan
    off = rounded(y) if step and np.isfinite(step) else np.zeros(k, dtype=bool)
    if off.any():
        try:
            root = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            return np.nan
        half = step / 2 / scale
        fit = lsq_linear(np.linalg.solve(root, contrasts[:, off]), np.linalg.solve(root, mean), bounds=(-half, half))
        distance = 2 * float(fit.cost)
    else:
        distance = float(mean @ np.linalg.solve(cov, mean))
    t2 = b * distance
    return float(sps.f.sf((b - p) / (p * (b - 1)) * t2, p, b - p))


def rounded(blocks) -> np.ndarray:
    """Per N (rows of `blocks`): whether its values lie on one or two grid points, its noise below the
    step, so that its mean is off its true value by up to half a step (as `paired.rounding` takes
    such a cell); an N whose values spread over three or more points is dithered by its own noise."""
    v = np.asarray(blocks, dtype=float)
    return np.array([np.unique(row[np.isfinite(row)]).size <= 2 for row in v])


def _centre(values: np.ndarray, confidence: float) -> tuple[float, float, float, str]:
    """The centre of per-block values with its interval, as a comparison's (paired.Location)."""
    level = 1 - confidence
    loc = paired.Location.of(values, level)
    low, high = loc.interval(level)
    return float(loc.estimate), float(low), float(high), paired.TEST_NAMES[str(np.asarray(loc.test_at(level)).ravel()[0])]


def grid_allowance(coefficients, blocks, step: float, scale=None) -> float:
    """How far a grid of `step` (paired.grid_step: pages, clock ticks; 0: none) can move a linear
    combination of the per-N values (`coefficients`, one per N) in every block alike: an N whose
    values lie on one or two grid points (its noise below the step) is taken as rounded, its mean off
    its true value by up to half a step, as `paired.rounding` takes such a cell; an N whose values
    spread over three or more points is dithered by its own noise (its rounding error averages out
    over the blocks).  The bound is the worst case, |coefficient| x half a step summed over the
    rounded N (x 1 / `scale`, each N's typical value, for a combination of log values)."""
    if not step or not np.isfinite(step) or blocks is None:
        return 0.0
    half = step / 2 / (np.asarray(scale, dtype=float) if scale is not None else 1.0)
    return float(np.sum(np.abs(np.asarray(coefficients, dtype=float)) * half * rounded(blocks)))


def per_task_fit(ns, typicals, confidence: float = CONFIDENCE, theta: float = 1.0, blocks=None,
                 step: float = 0.0) -> dict:
    """The per-task cost, fixed cost and exponent of one series (see the module's docstring):
    `typicals` its typical value at each N, `theta` the noise model its lines are weighted by, and
    `blocks` (k values of N x b blocks) the values of the blocks that hold every N (None: the frame
    has no blocks).  From MIN_PAIRS blocks on: the centre of the blocks' lines with its interval;
    with fewer, the line through the typical values, without one.  `step`: the grid the values lie
    on (paired.grid_step, 0: none); an N rounded on it widens the intervals by `grid_allowance`."""
    x = np.asarray(ns, dtype=float)
    y = np.asarray(typicals, dtype=float)
    out = {"per_task": np.nan, "per_task_ci_low": np.nan, "per_task_ci_high": np.nan, "fixed_cost": np.nan,
           "exponent": np.nan, "exponent_ci_low": np.nan, "exponent_ci_high": np.nan, "noise_power": theta,
           "blocks": 0, "lack_of_fit_p": np.nan, "warning": "", "method": ""}
    if x.size < 2:
        out["warning"] = "a single value of N: no slope"
        return out
    w = line_weights(y, theta)
    coef = line_coefficients(x, w)
    logs = line_coefficients(np.log(x), np.ones_like(x)) if x.min() > 0 else None
    weights = (f"weights 1 / typical^{weight_power(theta)}, the samples' spread growing as value^{theta:.2g}"
               if np.all(y > 0) else "equal weights")
    notes = [] if np.all(y > 0) else ["typical values <= 0: unweighted lines and no exponent"]
    b = 0 if blocks is None else np.asarray(blocks).shape[1]
    if b >= MIN_PAIRS:
        v = np.asarray(blocks, dtype=float)
        icpt, slope = coef @ v
        out["per_task"], out["per_task_ci_low"], out["per_task_ci_high"], test = _centre(slope, confidence)
        grid = grid_allowance(coef[1], v, step)
        out["per_task_ci_low"] -= grid
        out["per_task_ci_high"] += grid
        out["fixed_cost"] = _centre(icpt, confidence)[0]
        if logs is not None and np.all(v > 0) and np.all(y > 0):
            out["exponent"], out["exponent_ci_low"], out["exponent_ci_high"], _ = _centre(
                (logs @ np.log(v))[1], confidence)
            log_grid = grid_allowance(logs[1], v, step, y)
            out["exponent_ci_low"] -= log_grid
            out["exponent_ci_high"] += log_grid
        if grid:
            notes.append(f"values rounded on a grid of {step:.4g}: the interval widened by up to ±{grid:.3g} "
                         "(half a step at each rounded N, carried through the line)")
        out["lack_of_fit_p"] = straightness_p(x, v, step)
        out["blocks"] = b
        out["method"] = (f"per block, the WLS line through its values ({weights}); the Hodges-Lehmann centre "
                         f"of the {b} blocks' slopes with the {test} interval")
    else:
        out["fixed_cost"], out["per_task"] = coef @ y
        if logs is not None and np.all(y > 0):
            out["exponent"] = float((logs @ np.log(y))[1])
        out["blocks"] = b
        out["method"] = f"the WLS line through the per-N typical values ({weights}); no interval"
        notes.append("no blocks in the frame: no interval" if blocks is None else
                     f"only {b} block{'s' if b != 1 else ''} hold{'s' if b == 1 else ''} every N: no interval "
                     f"(needs >= {MIN_PAIRS})")
    out["warning"] = "; ".join(notes)
    return out


def _spread(values: np.ndarray) -> float:
    """A robust spread of one N's samples (the normal-consistent MAD)."""
    v = values[~np.isnan(values)]
    return float(1.4826 * np.median(np.abs(v - np.median(v)))) if v.size > 2 else np.nan


def _series_ns(frame: pd.DataFrame) -> dict[tuple, set]:
    """The values of N of each series in `frame`, keyed as the cells' keys are (CellRef without N)."""
    if frame.empty:
        return {}
    frame = with_param_columns(frame)
    for c, empty in (("arm", ""), ("threads_requested", None)):
        if c not in frame.columns:
            frame = frame.assign(**{c: empty})
    pcols = param_columns(frame)
    keys = ["workload", "lang", "variant", "threads_requested", "arm", *pcols]
    out: dict[tuple, set] = {}
    for key, g in frame.groupby(keys, dropna=False, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        k = (key[0], key[1], key[2], key_threads(key[3]), key_text(key[4]), key_params(pcols, key[5:]))
        out.setdefault(k, set()).update(int(n) for n in pd.to_numeric(g["n"]))
    return out


def _lost_note(lost, valid) -> str:
    """Why the fit goes without some N the run took: no valid sample there, or (memory of idle
    tasks) valid samples of which none had every task alive at once."""
    def ns(group):
        return ", ".join(f"{int(n):,}" for n in group)

    none = [n for n in lost if n not in valid]
    short = [n for n in lost if n in valid]
    parts = ([f"no valid sample at N = {ns(none)}"] if none else []) + (
        [f"no sample with every task alive at N = {ns(short)}"] if short else [])
    return f"{'; '.join(parts)}: fitted without {'it' if len(lost) == 1 else 'them'}"


def _order(key: tuple) -> tuple:
    w, lang, variant, threads, arm, params = key
    return (w, lang, variant, threads is None, threads or 0, arm, params)


def series_step(samples, resolution: float = 0.0) -> float:
    """The grid a series' values lie on: each N's own step read as a cell's is (paired.grid_step,
    with the metric's `resolution`), the coarsest of them on which every value of every N lies; 0
    for none.  Each N alone: where every N sits on one or two points, the gaps between two N's
    levels are no step (pages 597, 802 and 2,647 are 205 and 9 x 205 pages apart, and a pooled
    reading took 205 pages for the grid)."""
    groups = [np.asarray(v, dtype=float) for v in samples if np.asarray(v).size]
    if not groups:
        return 0.0
    every = np.concatenate(groups)
    for step in sorted({float(paired.grid_step(v, v, resolution)) for v in groups}, reverse=True):
        if step > 0 and bool(paired.on_grid(every, step)):
            return step
    return 0.0


def _series_threads(per_n: list[float]) -> float:
    """The threads a series ran with: the one value every N's cell reports (stats.threads_used);
    NaN where one is unknown or they differ (OS threads, one per task)."""
    return float("nan") if any(pd.isna(v) for v in per_n) else stats.threads_used(per_n)


def per_task_cost(df: pd.DataFrame, metric: str = "elapsed_s", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Per series: the marginal cost of one more task with its interval, the fixed cost, and the
    exponent b of metric ~ N^b with its interval, read off the blocks that hold every N (see the
    module's docstring), from the samples that count for the metric (validity.counted, through
    CellValues: for memory, idle and sleep tasks only where every task was alive at once).  An N the run
    took without a sample that counts is left out, and the row says so; a row whose per-N values
    leave a straight line (Holm over the table) says that too."""
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    values = CellValues(df, metric)
    series: dict[tuple, dict[int, object]] = {}
    for ref in values.refs():
        series.setdefault((ref.workload, ref.lang, ref.variant, ref.threads, ref.arm, ref.params), {})[ref.n] = ref
    taken_ns = _series_ns(df)
    valid_ns = _series_ns(df[df["valid"].astype(bool)] if "valid" in df.columns else df)
    rows = []
    for key in sorted(series, key=_order):
        cells = series[key]
        points = sorted(cells)
        if len(points) < 2:
            continue
        samples = [values.cells[cells[n]][1] for n in points]
        typ = np.array([typical(v) for v in samples])
        theta = variance_power(points, [_spread(v) for v in samples], typ)
        blocks = None
        if values.paired_data:
            per = [values.per_block(cells[n]) for n in points]
            common = per[0].index
            for p in per[1:]:
                common = common.intersection(p.index)
            blocks = np.array([p.loc[common].to_numpy(dtype=float) for p in per]).reshape(len(points), len(common))
        step = series_step(samples, rules.resolution(metric))
        fit = per_task_fit(np.array(points, dtype=float), typ, confidence, theta, blocks, step)
        lost = sorted(taken_ns.get(key, set()) - set(points))
        if lost:
            fit["warning"] = "; ".join(filter(None, [fit["warning"], _lost_note(lost, valid_ns.get(key, set()))]))
        w, lang, variant, threads, arm, params = key
        rows.append({"workload": w, "lang": lang, "variant": variant, "threads_requested": threads, "arm": arm,
                     "params": ",".join(f"{k}={v}" for k, v in params),
                     # the threads the series' samples ran with, where every N's agree (not one per task)
                     "threads": _series_threads([values.threads_of(cells[n]) for n in points]), "metric": metric,
                     "ns": ",".join(str(n) for n in points), "n_values": len(points),
                     "samples": int(sum(v.size for v in samples)), **fit})
    table = pd.DataFrame(rows, columns=COLUMNS)
    if not table.empty:
        adjusted = holm(table["lack_of_fit_p"].to_numpy(dtype=float))
        for i in np.flatnonzero(adjusted < ALPHA):
            note = (f"the per-N values leave a straight line (Holm-corrected p = {adjusted[i]:.2g}): the cost of "
                    "one more task changes with N, and the slope is the line's through these N")
            table.at[i, "warning"] = "; ".join(filter(None, [table.at[i, "warning"], note]))
    return table
