"""Order statistics for the benchmark (python3 stdlib only).

Percentiles interpolate linearly between closest ranks (numpy's default), so p50 of
an even count is the mean of the two middle samples. The confidence interval of the
median is the distribution-free one from the binomial order statistics: no
assumption about the shape of a latency distribution (they are skewed).
"""
import math


def percentile(xs, p):
    """p in 0..100 of an unsorted sequence; None when empty."""
    if not xs:
        return None
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    pos = (len(s) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def median(xs):
    return percentile(xs, 50)


def median_ci95(xs):
    """(low, high) bounds of a 95% confidence interval of the median, or None when
    there are too few samples for one (n < 6)."""
    n = len(xs)
    if n < 6:
        return None
    s = sorted(xs)
    half = 1.96 * math.sqrt(n) / 2.0
    lo = max(0, int(math.floor(n / 2.0 - half)) - 1)
    hi = min(n - 1, int(math.ceil(n / 2.0 + half)) - 1)
    return s[lo], s[hi]


def summary(xs):
    """Count, median, percentiles, mean, min, max and the median's CI of xs."""
    if not xs:
        return {"n": 0}
    ci = median_ci95(xs)
    return {
        "n": len(xs),
        "p50": percentile(xs, 50),
        "p90": percentile(xs, 90),
        "p95": percentile(xs, 95),
        "p99": percentile(xs, 99),
        "mean": sum(xs) / len(xs),
        "min": min(xs),
        "max": max(xs),
        "p50_ci95": list(ci) if ci else None,
    }


def ratio_ci95(xs, ys, p=50, rounds=1000, seed=1):
    """The ratio of the p-th percentiles percentile(xs)/percentile(ys) and a 95%
    bootstrap interval of it (both samples resampled independently, a fixed seed so
    a report is reproducible from its raw samples): (ratio, (low, high)) or
    (ratio, None) when either sample has fewer than 6 values."""
    import random
    a, b = percentile(xs, p), percentile(ys, p)
    if a is None or not b:
        return None, None
    r = a / b
    if len(xs) < 6 or len(ys) < 6:
        return r, None
    rng = random.Random(seed)
    out = []
    for _ in range(rounds):
        ra = percentile([rng.choice(xs) for _ in xs], p)
        rb = percentile([rng.choice(ys) for _ in ys], p)
        if rb:
            out.append(ra / rb)
    return r, (percentile(out, 2.5), percentile(out, 97.5))


def pairs_ci95(ratios):
    """Median of per-round ratios (A B A B ... pairs) and a 95% interval: the
    t-interval of their mean when there are 3 or more rounds, else their range."""
    if not ratios:
        return None, None
    m = median(ratios)
    n = len(ratios)
    if n < 2:
        return m, None
    if n < 3:
        return m, (min(ratios), max(ratios))
    mean = sum(ratios) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in ratios) / (n - 1))
    t = {3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}.get(n, 2.0)
    h = t * sd / math.sqrt(n)
    return m, (mean - h, mean + h)
