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
