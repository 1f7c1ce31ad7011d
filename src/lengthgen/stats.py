"""Uncertainty of the tables' numbers: intervals for accuracies and paired tests for mirror pairs.

- Wilson's score interval for a proportion of independent trials (an accuracy over examples);
- a percentile bootstrap for a mean (a teacher-forced share, a head score), resampling examples,
  or whole clusters of values that belong together (one example under several prompts);
- McNemar's exact test for two binary outcomes on the same examples (mirror tasks share their
  inputs, so their difference is judged on the examples where they disagree);
- a seed-level t interval and test for results of several training runs (`seed_level_comparison`):
  the seed, not the example, is the unit of replication, so what varies between runs is counted;
- Welch's t over independently trained models of two arms (`runs_comparison`: models pretrained
  on two corpora, a pretraining seed each), or one arm's models against zero;
- a paired sign-flip permutation test for a difference of means on the same examples;
- Holm's step-down adjustment, and Bonferroni-widened intervals, for a family of comparisons judged
  together (a claim over several pairs: one of twelve crosses 0.05 by chance about half the time);
- an exact permutation test on ranks for values with a cap ("never reached" ranked last), where a
  t test would treat the cap as a measurement;
- power: the runs per side a comparison needs to be decided (`runs_for_power`), and the smallest p
  an exact permutation test can reach with the runs there are (`smallest_permutation_p`);
- one formatter for every p printed, at its test's resolution.
Distributions (t, binomial, Fisher's table) are scipy's. Every comparison returns one typed result,
`Comparison`, that the tables spread into rows and the verdicts read.
Every random draw is seeded: a table is the same on every run.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from statistics import NormalDist

import numpy as np


def distributions():
    """scipy.stats, imported on first use: it costs about a CPU-second, and the workflow imports this
    module whenever it is parsed (every dry run among them)."""
    from scipy import stats

    return stats


Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
LEVEL = 0.05  # two-sided significance level of every comparison
BOOTSTRAP = 2000  # resamples for an interval
PERMUTATIONS = 10000  # sign flips for a paired test (exact below 2**14 flips)
EXACT_SPLITS = 100_000  # a rank test enumerates every split of the runs up to this many
POWER = 0.8  # the power `runs_for_power` sizes a design for


@dataclass(frozen=True)
class Comparison:
    """Two measured sides and their difference: every comparison function's result.

    Example-level comparisons (one model, its examples the sample) leave the run fields (`seeds`
    on) empty, and `row()` omits them; comparisons over training runs fill them: how many runs, how
    they lean, the pooled (runs' examples as one sample) test beside the run-level one, each run's
    value, the between-run spread of what is compared (paired runs: of their differences; two arms:
    of one model's value, pooled over the arms) and the test's degrees of freedom."""

    test: str
    first_value: float
    first_low: float
    first_high: float
    second_value: float
    second_low: float
    second_high: float
    difference: float
    p: float
    verdict: str
    pairs: int | None = None
    first_examples: int | None = None
    second_examples: int | None = None
    difference_low: float = math.nan
    difference_high: float = math.nan
    seeds: int | None = None
    seeds_first_above: int | None = None
    seeds_second_above: int | None = None
    pooled_p: float | None = None
    pooled_low: float | None = None
    pooled_high: float | None = None
    first_per_seed: tuple[float, ...] | None = None
    second_per_seed: tuple[float, ...] | None = None
    spread: float | None = None
    df: int | None = None

    @property
    def significant(self) -> bool:
        return bool(self.p < LEVEL)

    def __getitem__(self, name: str):
        """Read like the row it becomes (`result["p"]`)."""
        return self.significant if name == "significant" else getattr(self, name)

    def row(self) -> dict:
        """The table row's columns: every field (the run fields only for a comparison over runs), and
        `significant`. Per-run values as lists (a table's list column)."""
        values = asdict(self)
        if self.seeds is None:
            values = {k: v for k, v in values.items() if k not in RUN_FIELDS}
        for side in ("first_per_seed", "second_per_seed"):
            if values.get(side) is not None:
                values[side] = list(values[side])
        return {**values, "significant": self.significant}


_NAMES = [f.name for f in fields(Comparison)]
RUN_FIELDS = tuple(_NAMES[_NAMES.index("seeds"):])  # `seeds` and every field after it


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's 95% score interval for successes / trials (defined at 0 and at 1, unlike the normal one)."""
    if trials == 0:
        return (math.nan, math.nan)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return (max(0.0, centre - half), min(1.0, centre + half))


def interval_error(low: float, high: float) -> float:
    """The standard error a 95% interval implies: its width over 2 z."""
    return (high - low) / (2 * Z95)


def wilson_error(successes: int, trials: int) -> float:
    """A standard error for successes / trials that stays positive at 0 and at 1: Wilson's
    interval's, what a run contributes as its own measurement error."""
    return interval_error(*wilson(successes, trials))


def per_run_errors(accuracies: Sequence[float], examples: int | None) -> list[float]:
    """Each run's sampling error of its accuracy (Wilson's), the runs sharing `examples` equally
    (a table's example count over all its runs)."""
    each = max(1, round((examples or len(accuracies)) / len(accuracies)))
    return [wilson_error(round(a * each), each) for a in accuracies]


def bootstrap_mean(values: Sequence[float], clusters: Sequence | None = None, reps: int = BOOTSTRAP,
                   seed: int = 0) -> tuple[float, float]:
    """Percentile 95% interval of the mean, resampling values (or whole clusters of them)."""
    values = np.asarray(values, dtype=float)
    keep = ~np.isnan(values)
    values = values[keep]
    if values.size == 0:
        return (math.nan, math.nan)
    if clusters is None:
        groups = values[:, None]
        sizes = np.ones(values.size)
    else:
        labels = np.asarray(clusters, dtype=object)[keep]
        unique = {label: k for k, label in enumerate(dict.fromkeys(labels.tolist()))}
        index = np.array([unique[label] for label in labels.tolist()])
        sums, sizes = np.bincount(index, weights=values), np.bincount(index).astype(float)
        groups = sums[:, None]
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(sizes), size=(reps, len(sizes)))
    means = groups[draws, 0].sum(axis=1) / sizes[draws].sum(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return (float(low), float(high))


def outcomes(values: Sequence[bool]) -> np.ndarray:
    """Per-example outcomes (any truthy values) as a boolean array, so counts are vector sums."""
    return np.asarray(values, dtype=bool)


def binomial_two_sided(k: int, n: int, p: float = 0.5) -> float:
    """Exact two-sided binomial test (scipy's: the outcomes at most as likely as k of n). At p = 1/2
    (McNemar's) the distribution is symmetric, so those outcomes are both tails beyond k: twice the
    smaller tail, from the binomial's cdf (a hundred times faster than `binomtest`, and the same p)."""
    if n == 0:
        return 1.0
    if p == 0.5:
        from scipy.special import bdtr

        return min(1.0, 2.0 * float(bdtr(min(k, n - k), n, 0.5)))
    return float(distributions().binomtest(k, n, p).pvalue)


def mcnemar(first: Sequence[bool], second: Sequence[bool]) -> dict:
    """McNemar's exact test on paired binary outcomes: of the pairs where they differ, does one
    side win more often than a fair coin would give? Returns the discordant counts and p."""
    if len(first) != len(second):
        raise ValueError(f"paired outcomes of different lengths: {len(first)} and {len(second)}")
    first, second = outcomes(first), outcomes(second)
    only_first, only_second = int((first & ~second).sum()), int((second & ~first).sum())
    return {"pairs": len(first), "only_first": only_first, "only_second": only_second,
            "p": binomial_two_sided(only_first, only_first + only_second)}


def paired_permutation(first: Sequence[float], second: Sequence[float], reps: int = PERMUTATIONS,
                       seed: int = 0) -> float:
    """Two-sided p of the mean difference of paired values under random sign flips of each pair's
    difference (exact when there are few pairs that differ)."""
    differences = np.asarray(first, dtype=float) - np.asarray(second, dtype=float)
    differences = differences[~np.isnan(differences) & (differences != 0)]
    if differences.size == 0:
        return 1.0
    observed = abs(differences.sum())
    if 2 ** differences.size <= reps:
        signs = ((np.arange(2 ** differences.size)[:, None] >> np.arange(differences.size)) & 1) * 2 - 1
    else:
        signs = np.random.default_rng(seed).choice((-1, 1), size=(reps, differences.size))
    sums = np.abs(signs @ differences)
    return float(min(1.0, ((sums >= observed - 1e-12).sum() + (0 if 2 ** differences.size <= reps else 1))
                     / (len(signs) + (0 if 2 ** differences.size <= reps else 1))))


def p_text(p: float, n_permutations: int | None = None) -> str:
    """A p as a table prints it, at its test's resolution: a sampled permutation p cannot go below
    1/(n_permutations + 1), so at that floor it reads "p < 1e-4" (for 10,000), not "p = 0.0001",
    which would claim a precision the test does not have. Exact tests print two significant digits."""
    if p is None or math.isnan(p):
        return "p = nan"
    if n_permutations:
        floor = 1 / (n_permutations + 1)
        if p <= floor * (1 + 1e-9):
            # The smallest one-digit number above the floor: 1/10001 -> 1e-4, 1/3001 -> 4e-4.
            exponent = math.floor(math.log10(floor))
            digit = math.ceil(floor / 10 ** exponent * (1 - 1e-12))
            if digit * 10.0 ** exponent <= floor:
                digit += 1
            if digit >= 10:
                digit, exponent = 1, exponent + 1
            bound = f"{digit}e{exponent}" if exponent < -3 else f"{digit * 10.0 ** exponent:.{-exponent}f}"
            return f"p < {bound}"
    return f"p = {p:.2g}"


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p values of a family, in the input's order: the k-th smallest p is
    multiplied by (m - k + 1), then made monotone and capped at 1. Rejecting where the adjusted p <
    LEVEL keeps the chance of any false rejection in the family below LEVEL, under any dependence.
    A missing p (nan) stays missing and does not count in m."""
    p = np.asarray(pvalues, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    finite = np.flatnonzero(~np.isnan(p))
    m = finite.size
    if m == 0:
        return adjusted
    order = finite[np.argsort(p[finite], kind="stable")]
    steps = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted[order] = np.minimum(1.0, steps)
    return adjusted


def bonferroni_scale(m: int, level: float = LEVEL) -> float:
    """How much wider a family-wise interval is than a (1 - level) one, for m intervals read together:
    z(1 - level / (2m)) / z(1 - level / 2), the normal quantiles' ratio (1.46 for 12)."""
    normal = NormalDist()
    return normal.inv_cdf(1 - level / (2 * max(1, m))) / normal.inv_cdf(1 - level / 2)


def widen(estimate: float, low: float, high: float, m: int, level: float = LEVEL) -> tuple[float, float]:
    """A stored (1 - level) interval widened to hold for a family of m at once (Bonferroni): each
    half-width, below and above the estimate (score and bootstrap intervals need not be symmetric),
    rescaled by bonferroni_scale(m). Approximate for non-normal intervals; exact for normal ones."""
    scale = bonferroni_scale(m, level)
    return (estimate - (estimate - low) * scale, estimate + (high - estimate) * scale)


def verdict(difference: float, p: float, above: str, below: str, n_permutations: int | None = None) -> str:
    """How a table line states a paired comparison: a direction only where the test supports one."""
    if math.isnan(p) or p >= LEVEL:
        return f"not distinguishable from noise ({p_text(p, n_permutations)})"
    return f"{above if difference > 0 else below} ({p_text(p, n_permutations)})"


def mean_interval(values: Sequence[float], binary: bool, clusters: Sequence | None = None) -> tuple[float, float]:
    """The 95% interval of a mean over examples: Wilson for outcomes of independent examples, else a
    bootstrap (over clusters where values belong together)."""
    if binary and (clusters is None or len(set(clusters)) == len(clusters)):
        return wilson(int(np.count_nonzero(values)), len(values))
    return bootstrap_mean([float(v) for v in values], clusters)


def paired_comparison(first: Sequence, second: Sequence, binary: bool, clusters: Sequence | None = None,
                      above: str = "first above", below: str = "second above") -> Comparison:
    """Two measures on the same examples: each mean with its 95% interval, the difference with its
    interval (Newcombe's paired score interval for binary outcomes, else a bootstrap of the
    examples' differences, over clusters where values belong together), the paired test (McNemar
    for binary outcomes, else sign-flip permutation), and the verdict line."""
    first_values = [float(v) for v in first]
    second_values = [float(v) for v in second]
    n = len(first_values)
    first_mean = sum(first_values) / n if n else math.nan
    second_mean = sum(second_values) / n if n else math.nan
    first_low, first_high = mean_interval(first_values, binary, clusters)
    second_low, second_high = mean_interval(second_values, binary, clusters)
    if binary:
        p, (low, high) = mcnemar(first, second)["p"], difference_interval(first, second, paired=True)
    else:
        p = paired_permutation(first_values, second_values)
        low, high = bootstrap_mean([a - b for a, b in zip(first_values, second_values)], clusters)
    return Comparison("McNemar exact" if binary else "paired permutation", first_mean, first_low, first_high,
                      second_mean, second_low, second_high, first_mean - second_mean, p,
                      verdict(first_mean - second_mean, p, above, below, None if binary else PERMUTATIONS),
                      pairs=n, first_examples=n, second_examples=n, difference_low=low, difference_high=high)


def interval_text(low: float, high: float, digits: int = 2) -> str:
    return "" if math.isnan(low) else f"[{low:.{digits}f}, {high:.{digits}f}]"


# -- two proportions: paired or from independent examples --------------------------------------
def fisher_exact(first_successes: int, first_trials: int, second_successes: int, second_trials: int) -> float:
    """Fisher's exact two-sided p for two proportions from independent examples (scipy's: the tables
    with the margins fixed at most as likely as the observed one). For tasks that do not share their
    inputs, where McNemar's test does not apply."""
    if first_trials == 0 or second_trials == 0:
        return math.nan
    table = [[first_successes, first_trials - first_successes], [second_successes, second_trials - second_successes]]
    return float(distributions().fisher_exact(table).pvalue)


def difference_interval(first: Sequence[bool], second: Sequence[bool], paired: bool) -> tuple[float, float]:
    """95% interval of the difference of two proportions (first minus second), Newcombe's hybrid
    score interval built from the two Wilson intervals (method 10 of his 1998 papers): for
    independent examples, or for paired ones with the correction for their correlation. Unlike a
    bootstrap, it stays honest at 0 and 1: 20 examples all right on both sides give about ±0.16,
    not [0, 0]."""
    n1, n2 = len(first), len(second)
    if n1 == 0 or n2 == 0:
        return (math.nan, math.nan)
    first, second = outcomes(first), outcomes(second)
    s1, s2 = int(first.sum()), int(second.sum())
    p1, p2 = s1 / n1, s2 / n2
    (l1, u1), (l2, u2) = wilson(s1, n1), wilson(s2, n2)
    phi = 0.0
    if paired:
        if n1 != n2:
            raise ValueError(f"paired outcomes of different lengths: {n1} and {n2}")
        both = int((first & second).sum())
        only_first, only_second = s1 - both, s2 - both
        neither = n1 - both - only_first - only_second
        # The correlation of the two outcomes, with Newcombe's continuity correction (0 in between).
        denominator = math.sqrt(s1 * (n1 - s1) * s2 * (n2 - s2))
        cross = both * neither - only_first * only_second
        corrected = cross - n1 / 2 if cross > n1 / 2 else min(cross, 0)
        phi = corrected / denominator if denominator else 0.0
    below = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    above = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return (p1 - p2 - below, p1 - p2 + above)


def binary_comparison(first: Sequence[bool], second: Sequence[bool], paired: bool, above: str = "first above",
                      below: str = "second above") -> Comparison:
    """Two accuracies: each with its Wilson interval, the difference with its Newcombe interval, and
    McNemar's test on the same examples (paired) or Fisher's on independent ones; the verdict line.
    `pairs` is the number of paired examples (None when unpaired)."""
    if paired:
        return paired_comparison(first, second, True, above=above, below=below)
    n1, n2 = len(first), len(second)
    first, second = outcomes(first), outcomes(second)
    s1, s2 = int(first.sum()), int(second.sum())
    first_mean, second_mean = (s1 / n1 if n1 else math.nan), (s2 / n2 if n2 else math.nan)
    p = fisher_exact(s1, n1, s2, n2)
    low, high = difference_interval(first, second, paired)
    return Comparison("Fisher exact", first_mean, *wilson(s1, n1), second_mean, *wilson(s2, n2),
                      first_mean - second_mean, p, verdict(first_mean - second_mean, p, above, below),
                      first_examples=n1, second_examples=n2, difference_low=low, difference_high=high)


# -- several training runs: the seed as the unit -------------------------------------------------
def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom (scipy's)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    return math.nan if math.isnan(t) else float(2 * distributions().t.sf(abs(t), df))


def t_quantile(probability: float, df: int) -> float:
    """The `probability` quantile of Student's t with `df` degrees of freedom (scipy's)."""
    return float(distributions().t.ppf(probability, df))


def _seed_mean_interval(means: np.ndarray, within_se: np.ndarray, bounds=(-math.inf, math.inf)):
    """(mean, low, high, standard error) over seeds: the 95% t interval: the standard error from the spread of the seeds'
    values, never below the one their own sampling error alone would give (three seeds that agree by
    chance, or all at 1.0, do not make an interval of width 0)."""
    seeds = means.size
    standard_error = math.sqrt(max(float(np.var(means, ddof=1)), float(np.mean(within_se ** 2))) / seeds)
    half = t_quantile(0.975, seeds - 1) * standard_error
    mean = float(means.mean())
    return mean, max(bounds[0], mean - half), min(bounds[1], mean + half), standard_error


def seed_level_comparison(first: Sequence[Sequence[bool]], second: Sequence[Sequence[bool]], paired: bool,
                          above: str = "first above", below: str = "second above") -> Comparison:
    """Two accuracies over several training runs (seeds): first[s] and second[s] are seed s's
    per-example outcomes. With one seed, `binary_comparison` of it (between-seed variation not
    measured: `seeds` says 1, and the verdicts say "one run"). With more, each seed gives one
    difference of accuracies, and the test is a one-sample t test on those differences (df = seeds
    - 1), its interval the matching t interval: the seed is the unit, as it must be when seeds vary
    more than examples do. Beside it, the pooled numbers (every seed's examples as one sample:
    `pooled_p`, `pooled_low`, `pooled_high`), how many seeds lean each way, each seed's accuracies
    and the spread of the seeds' differences."""
    if len(first) != len(second) or not first:
        raise ValueError(f"one list of outcomes per seed on each side, not {len(first)} and {len(second)}")
    per_seed = [binary_comparison(a, b, paired) for a, b in zip(first, second)]
    differences = np.array([c.difference for c in per_seed])
    pooled = binary_comparison([v for a in first for v in a], [v for b in second for v in b], paired, above, below)
    runs = {"seeds": len(first), "seeds_first_above": int((differences > 0).sum()),
            "seeds_second_above": int((differences < 0).sum()), "pooled_p": pooled.p,
            "pooled_low": pooled.difference_low, "pooled_high": pooled.difference_high,
            "first_per_seed": tuple(c.first_value for c in per_seed),
            "second_per_seed": tuple(c.second_value for c in per_seed)}
    if len(first) == 1:
        return replace(pooled, **runs)

    def se(low, high):
        return np.array([interval_error(c[low], c[high]) for c in per_seed])

    first_value, first_low, first_high, _ = _seed_mean_interval(
        np.array(runs["first_per_seed"]), se("first_low", "first_high"), (0.0, 1.0))
    second_value, second_low, second_high, _ = _seed_mean_interval(
        np.array(runs["second_per_seed"]), se("second_low", "second_high"), (0.0, 1.0))
    difference, low, high, standard_error = _seed_mean_interval(
        differences, se("difference_low", "difference_high"), (-1.0, 1.0))
    df = len(first) - 1
    p = t_two_sided_p(difference / standard_error, df) if standard_error else float(difference == 0)
    return Comparison(f"t over {len(first)} seeds", first_value, first_low, first_high, second_value, second_low,
                      second_high, difference, p, verdict(difference, p, above, below), pairs=pooled.pairs,
                      first_examples=pooled.first_examples, second_examples=pooled.second_examples,
                      difference_low=low, difference_high=high, **runs,
                      spread=standard_error * math.sqrt(len(first)), df=df)


def seed_level_accuracy(outcomes: Sequence[Sequence[bool]]) -> tuple[float, float, float]:
    """One accuracy over seeds (outcomes[s]: seed s's per-example outcomes): (mean over seeds, 95%
    low, high): Wilson's interval for one seed, else the seed-level t interval."""
    if len(outcomes) == 1:
        right, trials = sum(bool(v) for v in outcomes[0]), len(outcomes[0])
        return (right / trials if trials else math.nan, *wilson(right, trials))
    means = np.array([sum(bool(v) for v in seed) / len(seed) for seed in outcomes])
    within = np.array([wilson_error(sum(bool(v) for v in seed), len(seed)) for seed in outcomes])
    mean, low, high, _ = _seed_mean_interval(means, within, (0.0, 1.0))
    return mean, low, high


# -- independently trained models: arms of pretraining seeds --------------------------------------
def runs_mean(runs: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(mean, standard error) over independent runs: runs[i] = (run i's value, its own standard
    error). The variance between the runs, never below their own measurement error."""
    mean, variance, _ = _arm(runs)
    return mean, math.sqrt(variance)


def _arm(runs: Sequence[tuple[float, float]]) -> tuple[float, float, int]:
    """(mean, squared standard error, models) of one arm: runs[i] = (model i's value, its standard
    error over examples). The variance between the models, never below their own sampling error."""
    values = np.array([v for v, _ in runs], dtype=float)
    within = float(np.mean([e ** 2 for _, e in runs]))
    between = float(np.var(values, ddof=1)) if len(runs) > 1 else 0.0
    return float(values.mean()), max(between, within) / len(runs), len(runs)


def runs_comparison(first: Sequence[tuple[float, float]], second: Sequence[tuple[float, float]] | None,
                    above: str = "first above", below: str = "second above",
                    bounds: tuple[float, float] = (-math.inf, math.inf)) -> Comparison:
    """Two arms of independently trained models (each model's value with its standard error over
    examples): the difference of the arms' means, Welch's t test over the models (its degrees of
    freedom Welch-Satterthwaite's, rounded down; an arm of one model counts its own error as known),
    each arm's error never below its models' own. `second` None: `first` against 0. With one model
    an arm on both sides, a z test on the models' own errors: between-seed variation is not
    measured (`seeds` says 1). `bounds`: the range a value can take (e.g. 0-1 for an accuracy).
    `seeds_first_above`: of the models matched by position (the same pretraining seed), how many
    of the first arm's are above the second's. `spread`: one model's standard deviation, pooled over
    the arms (what `runs_for_power` sizes arms by)."""
    if not first or (second is not None and not second):
        raise ValueError("each arm needs at least one model")
    m1, v1, n1 = _arm(first)
    m2, v2, n2 = _arm(second) if second is not None else (0.0, 0.0, 0)
    difference, variance = m1 - m2, v1 + v2
    degrees = sum(v ** 2 / (n - 1) for v, n in ((v1, n1), (v2, n2)) if n > 1)
    df = max(1, math.floor(variance ** 2 / degrees + 1e-9)) if degrees > 0 else None  # 1.9999... is 2
    error = math.sqrt(variance)
    statistic = difference / error if error else math.inf * (difference or math.nan)
    if math.isnan(statistic):
        p = 1.0
    elif df is None:
        p = 2 * (1 - NormalDist().cdf(abs(statistic)))
    else:
        p = t_two_sided_p(statistic, df)

    def interval(mean, var, df, low=bounds[0], high=bounds[1]):  # df None: the normal's quantile
        half = (Z95 if df is None else t_quantile(0.975, df)) * math.sqrt(var)
        return max(low, mean - half), min(high, mean + half)

    span = bounds[1] - bounds[0]
    first_low, first_high = interval(m1, v1, n1 - 1 or None)
    second_low, second_high = interval(m2, v2, n2 - 1 or None) if second is not None else (math.nan, math.nan)
    low, high = interval(difference, variance, df, -span, span)
    matched = list(zip(first, second)) if second is not None else [(a, (0.0, 0.0)) for a in first]
    models = n1 if second is None else f"{n1} and {n2}"
    test = f"z, one pretraining seed{'' if second is None else ' each'}" if df is None else \
        f"Welch t over {models} pretraining seeds" if second is not None else f"t over {n1} pretraining seeds"
    arms = [(v1, n1)] + ([(v2, n2)] if second is not None else [])
    spread = math.sqrt(sum(v * n for v, n in arms) / len(arms)) if df is not None else None
    return Comparison(test, m1, first_low, first_high, m2 if second is not None else math.nan, second_low,
                      second_high, difference, p, verdict(difference, p, above, below), difference_low=low,
                      difference_high=high, seeds=min(n1, n2) if second is not None else n1,
                      seeds_first_above=sum(a[0] > b[0] for a, b in matched),
                      seeds_second_above=sum(a[0] < b[0] for a, b in matched),
                      first_per_seed=tuple(v for v, _ in first),
                      second_per_seed=tuple(v for v, _ in second) if second is not None else None,
                      spread=spread, df=df)


# -- capped values: steps to reach a threshold, "never" ranked last ------------------------------
def rank_comparison(first: Sequence[float], second: Sequence[float], cap: float, above: str = "first above",
                    below: str = "second above") -> Comparison:
    """Two arms of runs whose values stop at `cap` (a run that never reached the threshold is at the
    cap: censored, not measured there). The test is an exact permutation test on the runs' ranks
    (ties, and every censored run, share a rank: "never" is last, by how much unknown), so no
    number stands in for "never"; the values' means are shown, without an interval (a mean of
    censored values has none that holds)."""
    if not first or not second:
        raise ValueError("each arm needs at least one run")
    values = np.minimum(np.asarray([*first, *second], dtype=float), cap)
    ranks = distributions().rankdata(values)
    a, b = ranks[:len(first)], ranks[len(first):]
    if np.ptp(ranks) == 0:
        p = 1.0
    elif math.comb(ranks.size, a.size) <= EXACT_SPLITS:  # every split of the runs into two arms of these sizes
        splits = np.array(list(itertools.combinations(range(ranks.size), a.size)))
        inside = np.zeros((len(splits), ranks.size), dtype=bool)
        inside[np.arange(len(splits))[:, None], splits] = True
        gaps = np.abs((inside @ ranks) / a.size - (~inside @ ranks) / b.size)
        p = float(np.mean(gaps >= abs(a.mean() - b.mean()) - 1e-9))
    else:
        p = float(distributions().permutation_test((a, b), lambda x, y: np.mean(x) - np.mean(y), vectorized=False,
                                                 permutation_type="independent", n_resamples=PERMUTATIONS,
                                                 rng=0).pvalue)
    m1, m2 = float(np.mean(values[:len(first)])), float(np.mean(values[len(first):]))
    return Comparison("exact rank permutation (never reached ranked last)", m1, math.nan, math.nan, m2, math.nan,
                      math.nan, m1 - m2, min(1.0, p), verdict(m1 - m2, min(1.0, p), above, below),
                      seeds=min(len(first), len(second)),
                      seeds_first_above=sum(x > y for x, y in zip(first, second)),
                      seeds_second_above=sum(x < y for x, y in zip(first, second)),
                      first_per_seed=tuple(float(v) for v in first), second_per_seed=tuple(float(v) for v in second))


# -- power: what deciding a comparison would take ---------------------------------------------
def smallest_permutation_p(first_runs: int, second_runs: int | None = None) -> float:
    """The smallest two-sided p an exact permutation test can give with these runs: runs paired (or
    one arm against 0, `second_runs` None), 2 of the 2^n sign patterns are the most extreme; two arms
    of n1 and n2, 2 (equal arms; 1 otherwise) of the C(n1 + n2, n1) splits. 2 v 2: 2/6 = 0.33."""
    if second_runs is None:
        return min(1.0, 2 / 2 ** first_runs)
    return min(1.0, (2 if first_runs == second_runs else 1) / math.comb(first_runs + second_runs, first_runs))


def t_power(difference: float, spread: float, runs: int, two_arms: bool, alpha: float = LEVEL) -> float:
    """The power of the two-sided t test at `alpha`: runs paired (one-sample t on their differences,
    sd `spread`) or two arms of `runs` models each (sd `spread` each), for a true `difference`. Two
    arms take the fewest degrees of freedom Welch's test can have (runs - 1), not the equal-variance
    2 (runs - 1): Welch's, rounded down, has fewer than that in almost every sample, so the power is
    a lower bound (3 v 3, sd 0.1, difference 0.3: 0.49 here, 0.52 simulated, 0.75 with 4 df)."""
    df = runs - 1
    if df < 1:
        return 0.0
    error = spread * math.sqrt((2 if two_arms else 1) / runs)
    critical = distributions().t.ppf(1 - alpha / 2, df)
    shift = abs(difference) / error
    power = float(distributions().nct.sf(critical, df, shift) + distributions().nct.cdf(-critical, df, shift))
    if math.isnan(power):  # scipy's noncentral t gives NaN far out in the tail: there the normal's is exact enough
        normal = NormalDist()
        power = 1 - normal.cdf(critical - shift) + normal.cdf(-critical - shift)
    return power


def runs_for_power(difference: float, spread: float | None, two_arms: bool, alpha: float = LEVEL,
                   power: float = POWER, most: int = 1000) -> int | None:
    """The fewest runs per side at which the t test finds `difference` with `power` at `alpha`, for
    runs whose value varies with sd `spread`: what a GPU budget for deciding a noise row is sized by.
    None where nothing can be sized (no difference, no spread) or it takes more than `most`."""
    if spread is None or not spread > 0 or difference is None or not abs(difference) > 0 or math.isnan(difference):
        return None
    def enough(runs: int) -> bool:
        return t_power(difference, spread, runs, two_arms, alpha) >= power

    high = 2
    while not enough(high):  # power grows with the runs: double to a bracket, then bisect
        if high >= most:
            return None
        high = min(most, high * 2)
    low = max(2, high // 2)
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle + 1, high)
    return high


def examples_for_power(examples: int, p: float, alpha: float = LEVEL, power: float = POWER) -> int | None:
    """For a comparison over one model's examples: how many examples the same effect would need for
    `power` at `alpha`, from the z its p implies (the statistic grows with the square root of n)."""
    if examples is None or p is None or math.isnan(p) or p >= 1 or examples < 1:
        return None
    normal = NormalDist()
    observed = normal.inv_cdf(1 - p / 2)
    return math.ceil(examples * ((normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)) / observed) ** 2)


def run_differences_comparison(first: Sequence[float], second: Sequence[float], first_errors: Sequence[float],
                               second_errors: Sequence[float], above: str = "first above",
                               below: str = "second above", bounds: tuple[float, float] = (-1.0, 1.0)) -> Comparison:
    """Two values per training run (run i's first[i] and second[i], each with its sampling error):
    the runs' differences' mean, its t interval and one-sample t test over the runs (df = runs - 1,
    the error never below the runs' own), as `seed_level_comparison` does for accuracies; one run:
    a z test on its own sampling error (between-run variation not measured). For values that are
    themselves differences, such as each task's drop from its in-distribution accuracy."""
    if len(first) != len(second) or not first:
        raise ValueError(f"one value per run on each side, not {len(first)} and {len(second)}")
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    ea, eb = np.asarray(first_errors, dtype=float), np.asarray(second_errors, dtype=float)
    differences, errors = a - b, np.sqrt(ea ** 2 + eb ** 2)
    runs = len(first)
    leaning = {"seeds": runs, "seeds_first_above": int((differences > 0).sum()),
               "seeds_second_above": int((differences < 0).sum()), "first_per_seed": tuple(a.tolist()),
               "second_per_seed": tuple(b.tolist())}
    if runs == 1:
        error = float(errors[0])
        difference = float(differences[0])
        p = 2 * (1 - NormalDist().cdf(abs(difference) / error)) if error else float(difference == 0)
        return Comparison("z on one run's sampling error", float(a[0]), float(a[0] - Z95 * ea[0]),
                          float(a[0] + Z95 * ea[0]), float(b[0]), float(b[0] - Z95 * eb[0]), float(b[0] + Z95 * eb[0]),
                          difference, p, verdict(difference, p, above, below),
                          difference_low=max(bounds[0], difference - Z95 * error),
                          difference_high=min(bounds[1], difference + Z95 * error), **leaning)
    first_value, first_low, first_high, _ = _seed_mean_interval(a, ea)
    second_value, second_low, second_high, _ = _seed_mean_interval(b, eb)
    difference, low, high, standard_error = _seed_mean_interval(differences, errors, bounds)
    p = t_two_sided_p(difference / standard_error, runs - 1) if standard_error else float(difference == 0)
    return Comparison(f"t over {runs} seeds", first_value, first_low, first_high, second_value, second_low,
                      second_high, difference, p, verdict(difference, p, above, below), difference_low=low,
                      difference_high=high, **leaning, spread=standard_error * math.sqrt(runs), df=runs - 1)
