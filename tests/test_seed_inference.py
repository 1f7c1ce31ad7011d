"""The seed-level interval and test, proved by simulation: tables drawn with a known difference and
real between-seed variation, as fine-tuning gives them (each training run its own accuracy)."""

import math

import numpy as np
import pytest

from lengthgen.stats import (
    binary_comparison,
    seed_level_accuracy,
    seed_level_comparison,
    t_quantile,
    t_two_sided_p,
)

TABLES = 1000
EXAMPLES = 300


def draw_accuracies(rng, mean: float, spread: float, seeds: int) -> np.ndarray:
    """Each training run's true accuracy: the task's mean plus a run effect, kept inside (0, 1)."""
    return np.clip(mean + spread * rng.standard_normal(seeds), 0.02, 0.98)


def true_difference(first: float, second: float, spread: float) -> float:
    """The difference a population of training runs has (the clipping moves it off first - second)."""
    rng = np.random.default_rng(12345)
    many = 2_000_000
    return float(draw_accuracies(rng, first, spread, many).mean() - draw_accuracies(rng, second, spread, many).mean())


def simulate(method, seeds: int, spread: float, first: float, second: float, seed: int) -> tuple[float, float]:
    """(coverage of the true difference by the 95% interval, share of tables with p < 0.05) over TABLES
    simulated tables of `seeds` runs x EXAMPLES paired examples per side."""
    rng = np.random.default_rng(seed)
    truth = true_difference(first, second, spread)
    covered = rejected = 0
    for _ in range(TABLES):
        a_rates, b_rates = draw_accuracies(rng, first, spread, seeds), draw_accuracies(rng, second, spread, seeds)
        a = [(rng.random(EXAMPLES) < rate).tolist() for rate in a_rates]
        b = [(rng.random(EXAMPLES) < rate).tolist() for rate in b_rates]
        result = method(a, b)
        covered += result["difference_low"] <= truth <= result["difference_high"]
        rejected += result["p"] < 0.05
    return covered / TABLES, rejected / TABLES


def seed_level(a, b):
    return seed_level_comparison(a, b, paired=True)


def pooled(a, b):
    """What the tables did before: every seed's examples as one sample."""
    return binary_comparison([v for seed in a for v in seed], [v for seed in b for v in seed], paired=True)


SETTINGS = [(3, 0.05), (3, 0.25), (5, 0.05), (5, 0.25)]


@pytest.mark.parametrize("seeds, spread", SETTINGS)
def test_the_seed_level_interval_covers_and_its_test_holds_its_level(seeds, spread):
    coverage, _ = simulate(seed_level, seeds, spread, 0.7, 0.5, seed=seeds * 100 + int(spread * 100))
    _, false_positives = simulate(seed_level, seeds, spread, 0.6, 0.6, seed=seeds * 100 + int(spread * 100) + 1)
    assert coverage >= 0.93, f"{seeds} seeds, between-seed sd {spread}: coverage {coverage:.3f}"
    assert false_positives <= 0.06, f"{seeds} seeds, between-seed sd {spread}: false positives {false_positives:.3f}"


@pytest.mark.parametrize("seeds, spread", SETTINGS)
def test_pooling_seeds_as_examples_fails_the_same_simulation(seeds, spread):
    """The pooled method counts the run-to-run variation once: its interval misses, its test fires."""
    coverage, _ = simulate(pooled, seeds, spread, 0.7, 0.5, seed=seeds * 100 + int(spread * 100))
    _, false_positives = simulate(pooled, seeds, spread, 0.6, 0.6, seed=seeds * 100 + int(spread * 100) + 1)
    assert coverage < 0.93 and false_positives > 0.06, (coverage, false_positives)


def test_student_t_matches_its_tables():
    assert t_quantile(0.975, 2) == pytest.approx(4.302653, abs=1e-5)
    assert t_quantile(0.975, 4) == pytest.approx(2.776445, abs=1e-5)
    assert t_quantile(0.975, 1) == pytest.approx(12.706205, abs=1e-4)
    assert t_two_sided_p(2.0, 5) == pytest.approx(0.101939, abs=1e-6)
    assert t_two_sided_p(0.0, 3) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_two_sided_p(1.0, 0)


def test_one_seed_is_the_within_seed_comparison_and_says_how_many_seeds_lean_each_way():
    a, b = [[True] * 9 + [False]], [[True] * 5 + [False] * 5]
    result = seed_level_comparison(a, b, paired=True)
    within = binary_comparison(a[0], b[0], paired=True)
    assert result["seeds"] == 1 and result["test"] == "McNemar exact"
    assert (result["p"], result["difference_low"]) == (within["p"], within["difference_low"])
    assert (result["seeds_first_above"], result["seeds_second_above"]) == (1, 0)


def test_three_seeds_that_disagree_are_not_significant_though_pooled_they_are():
    """The README's case: UF 0.45 +- 0.23 over three seeds against UB 0.00."""
    uf = [[True] * k + [False] * (300 - k) for k in (210, 60, 135)]  # 0.70, 0.20, 0.45
    ub = [[False] * 300] * 3
    result = seed_level_comparison(uf, ub, paired=True)
    assert result["difference"] == pytest.approx(0.45)
    assert result["difference_low"] < 0 < result["difference_high"] and result["p"] > 0.05
    assert result["pooled_p"] < 1e-10 and result["pooled_low"] > 0.4
    assert (result["seeds"], result["seeds_first_above"], result["seeds_second_above"]) == (3, 3, 0)


def test_seeds_all_at_one_keep_the_sampling_error():
    result = seed_level_comparison([[True] * 300] * 3, [[True] * 300] * 3, paired=True)
    assert result["difference"] == 0 and result["difference_low"] < -0.01 and result["difference_high"] > 0.01
    mean, low, high = seed_level_accuracy([[True] * 300] * 3)
    assert mean == 1.0 and 0.98 < low < 1.0 and high == 1.0
    assert not math.isnan(result["p"])
