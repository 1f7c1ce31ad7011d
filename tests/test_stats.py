"""Intervals and paired tests against values computed by hand."""

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats

from lengthgen.stats import (
    binary_comparison,
    binomial_two_sided,
    bonferroni_scale,
    bootstrap_mean,
    difference_interval,
    examples_for_power,
    fisher_exact,
    holm,
    mcnemar,
    p_text,
    paired_comparison,
    paired_permutation,
    rank_comparison,
    run_differences_comparison,
    runs_for_power,
    smallest_permutation_p,
    t_power,
    verdict,
    widen,
    wilson,
    wilson_error,
)


def test_wilson_interval_matches_the_formula_and_stays_inside_zero_and_one():
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    low, high = wilson(30, 100)
    assert low < 0.3 < high and high - low == pytest.approx(0.1769, abs=1e-3)
    assert all(math.isnan(v) for v in wilson(0, 0))


def test_wilson_error_is_half_the_interval_in_z_units_and_positive_at_the_bounds():
    assert wilson_error(5, 10) == pytest.approx((0.7634 - 0.2366) / (2 * 1.96), abs=1e-3)
    assert wilson_error(0, 10) == pytest.approx(0.2775 / (2 * 1.96), abs=1e-3)  # a run at 0 still has error
    assert wilson_error(10, 10) == pytest.approx(wilson_error(0, 10))


def test_the_symmetric_binomial_p_is_scipys_binomtest_for_every_count():
    from scipy.stats import binomtest

    for n in (1, 2, 7, 10, 51, 300, 1001):
        for k in range(n + 1):
            assert binomial_two_sided(k, n) == pytest.approx(binomtest(k, n, 0.5).pvalue, rel=1e-9, abs=1e-300), (k, n)
    assert binomial_two_sided(3, 10, 0.3) == pytest.approx(binomtest(3, 10, 0.3).pvalue)


def test_exact_binomial_and_mcnemar_count_only_the_discordant_pairs():
    assert binomial_two_sided(0, 10) == pytest.approx(2 * 0.5 ** 10)
    assert binomial_two_sided(5, 10) == pytest.approx(1.0)
    assert binomial_two_sided(2, 10) == pytest.approx(2 * (1 + 10 + 45) / 1024)
    right = [True] * 12 + [False] * 8 + [True] * 30
    left = [False] * 12 + [False] * 8 + [True] * 30  # agree on the last 38 pairs: they do not count
    result = mcnemar(right, left)
    assert (result["pairs"], result["only_first"], result["only_second"]) == (50, 12, 0)
    assert result["p"] == pytest.approx(2 * 0.5 ** 12)
    assert mcnemar([True, False], [False, True])["p"] == 1.0
    with pytest.raises(ValueError, match="different lengths"):
        mcnemar([True], [True, False])


def test_paired_permutation_is_exact_for_few_pairs():
    assert paired_permutation([1, 1, 1], [0, 0, 0]) == pytest.approx(2 / 8)  # all + or all -
    assert paired_permutation([0.5, 0.5], [0.5, 0.5]) == 1.0  # no pair differs
    assert paired_permutation([1, 0, 2], [0, 1, 0]) == pytest.approx(6 / 8)  # differences 1, -1, 2: |sum| >= 2 in 6 of 8
    many = paired_permutation(np.full(40, 0.6), np.full(40, 0.4))
    assert many < 0.001


def test_bootstrap_interval_covers_the_mean_and_resamples_whole_clusters():
    rng = np.random.default_rng(1)
    values = rng.random(200)
    low, high = bootstrap_mean(values)
    assert low < values.mean() < high and high - low < 0.1
    assert bootstrap_mean(values) == bootstrap_mean(values)  # seeded
    assert bootstrap_mean([0.7] * 5) == pytest.approx((0.7, 0.7))
    # Ten examples, each read under 50 prompts that agree: 10 independent values, not 500.
    clustered = np.repeat(rng.random(10), 50)
    assert np.diff(bootstrap_mean(clustered, clusters=np.repeat(np.arange(10), 50)))[0] > \
           3 * np.diff(bootstrap_mean(clustered))[0]
    assert bootstrap_mean([1.0, math.nan, 1.0]) == pytest.approx((1.0, 1.0))


def test_a_verdict_names_a_direction_only_when_the_test_supports_one():
    assert verdict(0.3, 0.001, "right above", "left above") == "right above (p = 0.001)"
    assert verdict(-0.3, 0.001, "right above", "left above") == "left above (p = 0.001)"
    assert verdict(0.3, 0.2, "right above", "left above") == "not distinguishable from noise (p = 0.2)"


def test_fisher_exact_against_hand_computed_tables():
    # 3 of 4 against 1 of 4: tables at most as likely as the observed (k = 1, 3 right on the first side
    # of 4 successes in 8) are k = 0, 1, 3, 4, of probability (1 + 16 + 16 + 1) / 70.
    assert fisher_exact(3, 4, 1, 4) == pytest.approx(34 / 70)
    assert fisher_exact(1, 10, 11, 14) == pytest.approx(0.0027594562)  # R: fisher.test(matrix(c(1, 9, 11, 3), 2))
    assert fisher_exact(5, 10, 5, 10) == pytest.approx(1.0)
    assert math.isnan(fisher_exact(0, 0, 3, 4))


def test_newcombe_difference_interval():
    # Independent samples: Newcombe (1998)'s example, 56/70 against 48/80, method 10: 0.0524 to 0.3339.
    first, second = [True] * 56 + [False] * 14, [True] * 48 + [False] * 32
    assert difference_interval(first, second, paired=False) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    # Paired: 1 both, 1 first only, 7 second only, 12 neither (the table Fagerland et al. use for it).
    first = [True, True] + [False] * 7 + [False] * 12
    second = [True, False] + [True] * 7 + [False] * 12
    assert difference_interval(first, second, paired=True) == pytest.approx((-0.5069, -0.0256), abs=1e-4)
    # Every example right on both sides: the interval is not [0, 0] but shrinks with the examples.
    low, high = difference_interval([True] * 20, [True] * 20, paired=True)
    assert low == pytest.approx(-high) and 0.1 < high < 0.2
    assert difference_interval([True] * 300, [True] * 300, paired=True)[1] < 0.02
    # Outcomes that agree more than chance narrow the paired interval against the unpaired one.
    first, second = [True] * 40 + [False] * 50 + [True] * 10, [True] * 40 + [False] * 50 + [False] * 10
    paired, unpaired = difference_interval(first, second, True), difference_interval(first, second, False)
    assert paired[1] - paired[0] < unpaired[1] - unpaired[0]


def test_binary_comparison_pairs_or_not():
    first, second = [True] * 12, [False] * 10 + [True] * 2
    paired = binary_comparison(first, second, paired=True)
    assert (paired["test"], paired["pairs"], paired["p"]) == ("McNemar exact", 12, pytest.approx(2 * 0.5 ** 10))
    unpaired = binary_comparison(first, second, paired=False, above="first above")
    assert (unpaired["test"], unpaired["pairs"]) == ("Fisher exact", None)
    assert unpaired["p"] == pytest.approx(fisher_exact(12, 12, 2, 12)) and unpaired["verdict"].startswith("first above")
    assert (unpaired["first_low"], unpaired["first_high"]) == pytest.approx(wilson(12, 12))
    assert unpaired["difference_low"] < unpaired["difference"] < unpaired["difference_high"]
    assert binary_comparison([True] * 3, [False] * 5, paired=False)["second_examples"] == 5


# -- families of comparisons and how p is printed -------------------------------------------------
def test_holm_against_the_hand_computed_step_down():
    # Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04; monotone: 0.04 -> 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.03] + [0.4] * 11)[0] == pytest.approx(0.36)
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([0.02]) == pytest.approx([0.02])  # a family of one is its own p
    adjusted = holm([0.01, math.nan, 0.02])  # a missing p stays missing and does not count
    assert math.isnan(adjusted[1]) and adjusted[[0, 2]] == pytest.approx([0.02, 0.02])
    assert holm([]).size == 0


def test_a_family_wise_interval_widens_each_half_by_the_normal_quantiles_ratio():
    assert bonferroni_scale(1) == pytest.approx(1.0)
    assert bonferroni_scale(12) == pytest.approx(2.8653 / 1.95996, abs=1e-4)  # z(1 - 0.05/24) / z(0.975)
    low, high = widen(0.15, 0.11, 0.21, 12)  # asymmetric: each side keeps its own half-width
    assert (0.15 - low, high - 0.15) == pytest.approx((0.04 * bonferroni_scale(12), 0.06 * bonferroni_scale(12)))
    assert widen(0.15, 0.11, 0.21, 1) == pytest.approx((0.11, 0.21))


def test_a_permutation_p_at_its_floor_prints_as_a_bound():
    assert p_text(1 / 10001, 10000) == "p < 1e-4"  # not "p = 0.0001": the test cannot go lower
    assert p_text(1 / 2001, 2000) == "p < 5e-4" and p_text(1 / 1001, 1000) == "p < 0.001"
    assert p_text(3 / 10001, 10000) == "p = 0.0003"  # above the floor: a value
    assert p_text(1 / 10001) == "p = 0.0001"  # an exact test's p is a value at any size
    assert p_text(1e-6) == "p = 1e-06" and p_text(0.036) == "p = 0.036" and p_text(math.nan) == "p = nan"
    assert verdict(0.3, 1 / 10001, "right above", "left above", 10000) == "right above (p < 1e-4)"
    # A paired comparison of many values sampled 10,000 sign flips, none as extreme as the data.
    compared = paired_comparison(np.full(40, 0.6) + np.linspace(0, 0.01, 40), np.full(40, 0.4), binary=False,
                                 above="first above")
    assert compared["p"] == pytest.approx(1 / 10001) and compared["verdict"] == "first above (p < 1e-4)"


def test_two_arms_of_models_are_compared_by_welchs_t_over_their_seeds():
    from lengthgen.stats import runs_comparison, t_quantile, t_two_sided_p

    # two models an arm, no error of their own: the spread between the seeds is all there is
    both = runs_comparison([(0.5, 0.0), (0.6, 0.0)], [(0.1, 0.0), (0.2, 0.0)], bounds=(0.0, 1.0))
    assert both["test"] == "Welch t over 2 and 2 pretraining seeds" and both["seeds"] == 2
    assert both["difference"] == pytest.approx(0.4) and both["first_value"] == pytest.approx(0.55)
    error = math.sqrt(0.005 / 2 + 0.005 / 2)  # each arm's variance 0.005 over its 2 models
    assert both["p"] == pytest.approx(t_two_sided_p(0.4 / error, 2))  # Welch-Satterthwaite: (v1+v2)^2/(v1^2+v2^2) = 2
    assert both["difference_low"] == pytest.approx(0.4 - t_quantile(0.975, 2) * error)
    assert (both["first_low"], both["first_high"]) == (0.0, 1.0)  # an arm of 2: t with 1 df, wider than 0-1
    unbounded = runs_comparison([(0.5, 0.0), (0.6, 0.0)], [(0.1, 0.0), (0.2, 0.0)])
    assert unbounded["first_low"] == pytest.approx(0.55 - t_quantile(0.975, 1) * math.sqrt(0.0025))
    assert (both["seeds_first_above"], both["seeds_second_above"]) == (2, 0)
    # models that agree by chance never make an arm surer than their own sampling error
    floored = runs_comparison([(0.5, 0.1), (0.5, 0.1)], [(0.3, 0.1), (0.3, 0.1)])
    assert floored["difference_high"] - floored["difference"] > 0.1
    # one model an arm: a z test on the models' own errors, and it says so
    one = runs_comparison([(0.5, 0.03)], [(0.4, 0.04)])
    assert one["test"] == "z, one pretraining seed each" and one["seeds"] == 1
    assert one["p"] == pytest.approx(2 * (1 - NormalDist().cdf(0.1 / 0.05)))
    # one arm against zero: a one-sample t over its models
    alone = runs_comparison([(0.1, 0.0), (0.3, 0.0), (0.2, 0.0)], None)
    assert alone["test"] == "t over 3 pretraining seeds" and alone["difference"] == pytest.approx(0.2)
    assert alone["p"] == pytest.approx(t_two_sided_p(0.2 / math.sqrt(0.01 / 3), 2))
    with pytest.raises(ValueError, match="at least one model"):
        runs_comparison([], [(0.1, 0.0)])


def test_steps_to_reach_are_tested_on_ranks_with_never_last():
    """"Never reached" is censored at the cap: ranked last, by an unknown amount, never averaged into a t test."""
    separated = rank_comparison([100, 250], [50, 60], cap=250)
    assert separated.p == pytest.approx(2 / 6) and math.isnan(separated.difference_low)  # 2 of the 6 splits
    assert rank_comparison([400], [50, 60], cap=250).first_value == 250  # past the cap is the cap
    assert rank_comparison([400], [50, 60], cap=250).p == pytest.approx(2 / 3)  # 1 v 2: 2 of 3 splits as extreme
    assert rank_comparison([250, 250], [250, 250], cap=250).p == 1.0
    first, second = [3.0, 5.0, 9.0], [1.0, 2.0, 4.0]
    ranks = stats.rankdata(first + second)
    exact = stats.permutation_test((ranks[:3], ranks[3:]), lambda x, y: np.mean(x) - np.mean(y),
                                   permutation_type="independent", n_resamples=np.inf).pvalue
    assert rank_comparison(first, second, cap=100).p == pytest.approx(exact) == pytest.approx(0.2)


def test_the_smallest_p_an_exact_permutation_test_can_reach():
    assert smallest_permutation_p(2, 2) == pytest.approx(1 / 3)  # the corpora arms today: never below 0.05
    assert smallest_permutation_p(3) == 0.25 and smallest_permutation_p(5, 5) == pytest.approx(2 / 252)
    assert smallest_permutation_p(1) == 1.0


def test_power_and_runs_needed_match_the_textbook_values():
    """Cohen's tables (noncentral t): d = 1 with 10 paired runs 0.803; d = 0.5 needs 34 paired runs
    for 80% at 0.05. Two arms: 20 a side 0.869 and 64 a side with the equal-variance test's 38 df;
    with the 19 that Welch's test can fall to, 0.851 and 65 (the lower bound the power reports)."""
    assert t_power(1.0, 1.0, 10, two_arms=False) == pytest.approx(0.8031, abs=1e-3)
    error = math.sqrt(2 / 20)
    critical = stats.t.ppf(0.975, 19)
    assert t_power(1.0, 1.0, 20, two_arms=True) == pytest.approx(
        stats.nct.sf(critical, 19, 1 / error) + stats.nct.cdf(-critical, 19, 1 / error)) == pytest.approx(0.8506, abs=1e-3)
    assert runs_for_power(0.5, 1.0, two_arms=True) == 65 and runs_for_power(0.5, 1.0, two_arms=False) == 34
    assert runs_for_power(0.5, 1.0, two_arms=True, alpha=0.05 / 6) > 64  # Holm's first step asks for more
    assert runs_for_power(0.0, 1.0, True) is None and runs_for_power(0.3, None, True) is None
    assert t_power(0.3, 0.1, 1, two_arms=False) == 0.0  # one run: no t test at all
    assert t_power(0.30, 0.015, 4, two_arms=True, alpha=0.025) == pytest.approx(1.0)  # scipy's NaN far in the tail
    assert runs_for_power(0.30, 0.015, two_arms=True, alpha=0.025) == 3


def test_examples_needed_scale_with_the_square_of_the_z_asked_for():
    p = 2 * (1 - NormalDist().cdf(1.4))  # z 1.4 on 100 examples; 80% at 0.05 asks for z 1.96 + 0.84 = 2.80
    assert examples_for_power(100, p) == 401  # 100 x (2.8016 / 1.4)^2 = 400.5, rounded up
    assert examples_for_power(100, 1.0) is None


def test_each_runs_difference_of_drops_is_a_one_sample_t_over_the_runs():
    drops = run_differences_comparison([0.5, 0.7, 0.6], [0.1, 0.2, 0.4], [0.001] * 3, [0.001] * 3)
    assert drops.p == pytest.approx(stats.ttest_1samp([0.4, 0.5, 0.2], 0).pvalue)
    assert (drops.df, drops.seeds, drops.spread) == (2, 3, pytest.approx(np.std([0.4, 0.5, 0.2], ddof=1)))
    one = run_differences_comparison([0.5], [0.1], [0.1], [0.1])
    assert one.test.startswith("z") and one.p == pytest.approx(2 * (1 - NormalDist().cdf(0.4 / math.sqrt(0.02))))
