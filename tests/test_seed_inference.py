"""The run-level intervals and tests, proved by simulation: tables drawn with a known difference and
real between-run variation, as training gives them (each run its own accuracy, at 0 and 1 too).
The simulation can fail a method both ways: an interval that misses or a test that fires at no
difference (the pooled method), and a test that never finds a real difference (an always-noise
method, which covers every truth)."""

import math

import numpy as np
import pytest

from lengthgen.results.verdicts import runs_label
from lengthgen.stats import (
    binary_comparison,
    runs_comparison,
    seed_level_accuracy,
    seed_level_comparison,
    t_power,
    t_quantile,
    t_two_sided_p,
    wilson_error,
)

TABLES = 1000
EXAMPLES = 300
COVERAGE = 0.93  # the 95% interval, with the simulation's own error (sd about 0.007 at 1,000 tables)
FALSE_POSITIVES = 0.06
POWER = 0.8


def draw_accuracies(rng, mean: float, spread: float, runs: int) -> np.ndarray:
    """Each training run's true accuracy: the task's mean plus a normal run effect, inside [0, 1]
    (real runs sit at 0 and 1: a task never learnt, a task learnt perfectly)."""
    return np.clip(mean + spread * rng.standard_normal(runs), 0.0, 1.0)


def true_difference(first: float, second: float, spread: float) -> float:
    """The difference a population of training runs has (clipping at 0 and 1 moves it off first - second)."""
    rng = np.random.default_rng(12345)
    many = 2_000_000
    return float(draw_accuracies(rng, first, spread, many).mean() - draw_accuracies(rng, second, spread, many).mean())


def outcomes(rng, rates) -> list[list[bool]]:
    return [(rng.random(EXAMPLES) < rate).tolist() for rate in rates]


def rates(method, draw, truth: float, rng) -> tuple[float, float]:
    """(coverage of `truth` by the 95% interval, share of tables with p < 0.05) over TABLES tables,
    each the arguments `draw(rng)` gives the method."""
    covered = rejected = 0
    for _ in range(TABLES):
        result = method(*draw(rng))
        covered += result["difference_low"] <= truth <= result["difference_high"]
        rejected += result["p"] < 0.05
    return covered / TABLES, rejected / TABLES


def simulate(method, runs: int, spread: float, first: float, second: float, seed: int) -> tuple[float, float]:
    """`rates` over tables of `runs` training runs x EXAMPLES paired examples per side."""
    def draw(rng):
        return (outcomes(rng, draw_accuracies(rng, first, spread, runs)),
                outcomes(rng, draw_accuracies(rng, second, spread, runs)))
    return rates(method, draw, true_difference(first, second, spread), np.random.default_rng(seed))


def simulate_arms(method, models: int, spread: float, first: float, second: float,
                  seed: int) -> tuple[float, float]:
    """The same for two arms of independently trained models (the corpora experiment's design):
    each model's accuracy over its own EXAMPLES examples, with that accuracy's standard error."""
    def draw(rng):
        return tuple([(k / EXAMPLES, wilson_error(int(k), EXAMPLES))
                      for k in rng.binomial(EXAMPLES, draw_accuracies(rng, mean, spread, models))]
                     for mean in (first, second))
    return rates(method, draw, true_difference(first, second, spread), np.random.default_rng(seed))


def seed_level(a, b):
    return seed_level_comparison(a, b, paired=True)


def pooled(a, b):
    """What the tables did before: every seed's examples as one sample."""
    return binary_comparison([v for seed in a for v in seed], [v for seed in b for v in seed], paired=True)


def always_noise(*_):
    """A method no simulation of coverage and false positives alone can fail."""
    return {"difference_low": -1.0, "difference_high": 1.0, "p": 1.0}


def settings_seed(*values) -> int:
    return int(sum(v * 10 ** i for i, v in enumerate(values)) * 1000) % 2 ** 31


# (runs, between-run sd, the true accuracies for coverage, the true accuracy of both sides for false positives)
SETTINGS = [
    (2, 0.05, (0.7, 0.5), 0.6), (2, 0.25, (0.7, 0.5), 0.6),
    (3, 0.05, (0.7, 0.5), 0.6), (3, 0.25, (0.7, 0.5), 0.6),
    (5, 0.05, (0.7, 0.5), 0.6), (5, 0.25, (0.7, 0.5), 0.6),
    (3, 0.1, (1.0, 0.8), 1.0),  # at the ceiling: half of each side's runs at 1.0
    (5, 0.1, (0.95, 0.0), 0.02),  # learnt against never learnt; near the floor
]


@pytest.mark.parametrize("runs, spread, truths, null", SETTINGS)
def test_the_seed_level_interval_covers_and_its_test_holds_its_level(runs, spread, truths, null):
    assert_covers_and_holds_its_level(simulate, seed_level, runs, spread, truths, null)


def assert_covers_and_holds_its_level(simulator, method, runs, spread, truths, null):
    """Coverage >= COVERAGE at the truths, false positives <= FALSE_POSITIVES at the null."""
    seed = settings_seed(runs, spread, *truths)
    coverage, _ = simulator(method, runs, spread, *truths, seed=seed)
    _, false_positives = simulator(method, runs, spread, null, null, seed=seed + 1)
    assert coverage >= COVERAGE, f"{runs} runs a side, sd {spread}, {truths}: coverage {coverage:.3f}"
    assert false_positives <= FALSE_POSITIVES, (
        f"{runs} runs a side, sd {spread}, at {null}: false positives {false_positives:.3f}")


@pytest.mark.parametrize("runs, spread", [(3, 0.05), (3, 0.25), (5, 0.05), (5, 0.25)])
def test_pooling_seeds_as_examples_fails_the_same_simulation(runs, spread):
    """The pooled method counts the run-to-run variation once: its interval misses, its test fires."""
    seed = settings_seed(runs, spread, 0.7, 0.5)
    coverage, _ = simulate(pooled, runs, spread, 0.7, 0.5, seed=seed)
    _, false_positives = simulate(pooled, runs, spread, 0.6, 0.6, seed=seed + 1)
    assert coverage < COVERAGE and false_positives > FALSE_POSITIVES, (coverage, false_positives)


def test_one_run_is_right_about_itself_only_and_its_verdict_says_one_run():
    """With one run the interval is the within-run one: it covers the run's population only when runs
    do not vary, which one run cannot tell; hence every one-run verdict carries its label."""
    steady, _ = simulate(seed_level, 1, 0.0, 0.7, 0.5, seed=11)
    varying, false_positives = simulate(seed_level, 1, 0.25, 0.6, 0.6, seed=12)
    assert steady >= COVERAGE
    assert varying < 0.5 and false_positives > 0.5, (varying, false_positives)
    assert runs_label("shown", 1) == "shown (one run)" and runs_label("contradicted", 2) == "contradicted (2 runs)"
    assert runs_label("shown", 3) == "shown"


def test_the_seed_level_test_finds_a_real_difference_and_always_noise_does_not():
    """Power: a true difference of 0.3, between-run sd 0.1 a side, 5 runs: found in >= 80% of tables
    (the noncentral t gives 0.92 here). At 3 runs the t test cannot reach 80% (0.48 from the
    formula), so there the simulated power is checked against the formula.
    The always-noise method passes coverage and false positives and fails here."""
    found = {}
    for runs in (3, 5):
        coverage, found[runs] = simulate(seed_level, runs, 0.1, 0.65, 0.35, seed=runs)
        assert coverage >= COVERAGE
        # the sd of one run's difference: two run effects and two samples of EXAMPLES examples
        spread = math.sqrt(2 * 0.1 ** 2 + 2 * 0.65 * 0.35 / EXAMPLES)
        assert found[runs] == pytest.approx(t_power(0.3, spread, runs, two_arms=False), abs=0.05)
    assert found[5] >= POWER, found
    noise_coverage, noise_found = simulate(always_noise, 5, 0.1, 0.65, 0.35, seed=5)
    _, noise_false = simulate(always_noise, 5, 0.1, 0.6, 0.6, seed=6)
    assert noise_coverage == 1.0 and noise_false == 0.0 and noise_found < POWER


@pytest.mark.parametrize("models, spread, truths, null", [
    (2, 0.1, (0.7, 0.4), 0.6), (3, 0.1, (0.7, 0.4), 0.6), (5, 0.1, (0.7, 0.4), 0.6),
    (3, 0.1, (1.0, 0.7), 1.0), (5, 0.05, (0.9, 0.0), 0.0),
])
def test_welch_over_arms_of_models_covers_and_holds_its_level(models, spread, truths, null):
    assert_covers_and_holds_its_level(simulate_arms, runs_comparison, models, spread, truths, null)


def test_welch_finds_a_real_difference_between_arms_and_always_noise_does_not():
    """5 v 5 models, a true difference of 0.3, sd 0.1 a model: found in >= 80% of tables; at 3 and 5
    a side `t_power` (the runs needed for a noise row) is a lower bound on the simulated power, by
    at most 0.1 (its Welch df the fewest the test can have)."""
    spread = math.sqrt(0.1 ** 2 + 0.65 * 0.35 / EXAMPLES)  # one model: its run effect and its examples
    found = {}
    for models in (3, 5):
        _, found[models] = simulate_arms(runs_comparison, models, 0.1, 0.65, 0.35, seed=50 + models)
        assert 0 <= found[models] - t_power(0.3, spread, models, two_arms=True) <= 0.1, found
    _, noise_found = simulate_arms(always_noise, 5, 0.1, 0.65, 0.35, seed=55)
    assert found[5] >= POWER and noise_found < POWER, (found, noise_found)


def test_student_t_matches_its_tables():
    """scipy's t, where the hand-written one stood: the same values as the tables."""
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
