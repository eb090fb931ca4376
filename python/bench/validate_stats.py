"""Small statistics for python/bench/meter_validate.py, standard library only (numpy may be absent).

Student-t quantiles (through the regularized incomplete beta function), means with t confidence
intervals, ordinary least squares with coefficient intervals, Wilson intervals for a proportion,
and rolling means over a sampled power trace.
"""
import math


def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / (c if abs(c) > tiny else tiny)
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / (c if abs(c) > tiny else tiny)
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b) for 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbeta) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbeta) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    """P(T <= t) for Student's t with df degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p, df):
    """The t value with P(T <= t) = p (0 < p < 1), by bisection."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError(f"t_quantile: p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def mean(xs):
    return sum(xs) / len(xs)


def median(xs):
    v = sorted(xs)
    k = len(v) // 2
    return v[k] if len(v) % 2 else 0.5 * (v[k - 1] + v[k])


def sd(xs):
    """Sample standard deviation (n - 1); 0 for one value."""
    if len(xs) < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def mean_ci(xs, level=0.95):
    """(mean, half-width of its t interval); the half-width is None for fewer than 2 values."""
    if not xs:
        return None, None
    if len(xs) < 2:
        return mean(xs), None
    return mean(xs), t_quantile(0.5 + level / 2, len(xs) - 1) * sd(xs) / math.sqrt(len(xs))


def _invert(a):
    """Inverse of a small square matrix (Gauss-Jordan with partial pivoting); ValueError if singular."""
    n = len(a)
    m = [list(map(float, row)) + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-300:
            raise ValueError("singular design matrix")
        m[col], m[piv] = m[piv], m[col]
        f = m[col][col]
        m[col] = [v / f for v in m[col]]
        for r in range(n):
            if r != col and m[r][col] != 0.0:
                g = m[r][col]
                m[r] = [v - g * w for v, w in zip(m[r], m[col])]
    return [row[n:] for row in m]


def ols(x_rows, y, level=0.95):
    """Least squares y ~ X (rows of regressors; add a 1 for an intercept).

    Returns {"coef", "se", "ci" (half-widths), "residuals", "fitted", "s" (residual sd), "df"}; se
    and ci are None when there are no degrees of freedom left.
    """
    n, k = len(y), len(x_rows[0])
    if n < k:
        raise ValueError(f"ols: {n} points for {k} coefficients")
    xtx = [[sum(r[i] * r[j] for r in x_rows) for j in range(k)] for i in range(k)]
    xty = [sum(r[i] * yy for r, yy in zip(x_rows, y)) for i in range(k)]
    inv = _invert(xtx)
    coef = [sum(inv[i][j] * xty[j] for j in range(k)) for i in range(k)]
    fitted = [sum(c * v for c, v in zip(coef, r)) for r in x_rows]
    residuals = [yy - f for yy, f in zip(y, fitted)]
    df = n - k
    out = {"coef": coef, "residuals": residuals, "fitted": fitted, "df": df, "se": None, "ci": None, "s": None}
    if df > 0:
        s2 = sum(e * e for e in residuals) / df
        se = [math.sqrt(max(0.0, s2 * inv[i][i])) for i in range(k)]
        t = t_quantile(0.5 + level / 2, df)
        out.update(se=se, ci=[t * s for s in se], s=math.sqrt(s2))
    return out


def wilson(k, n, z=1.959963984540054):
    """Wilson score interval (low, high) of a proportion k/n; (None, None) for n = 0."""
    if n == 0:
        return None, None
    p = k / n
    den = 1 + z * z / n
    center = (p + z * z / (2 * n)) / den
    half = z / den * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, center - half), min(1.0, center + half)


def rolling_means(points, t0_ns, t1_ns, width_s, step_s=0.01):
    """Means of a power trace over every window [t, t + width] inside [t0, t1], t stepping by step_s.

    `points` are (t_ns, watts) in time order; the trace is joined linearly and resampled every
    step_s, so each mean is over the resampled values. Returns a list (empty if the span is too short).
    """
    pts = [(t, v) for t, v in points if v is not None and t0_ns - 1e8 <= t <= t1_ns + 1e8]
    if len(pts) < 2:
        return []
    step_ns = step_s * 1e9
    grid, j, t = [], 0, float(t0_ns)
    while t <= t1_ns:
        while j + 1 < len(pts) and pts[j + 1][0] < t:
            j += 1
        if j + 1 >= len(pts):
            grid.append(pts[-1][1])
        elif t <= pts[j][0]:
            grid.append(pts[j][1])
        else:
            (ta, va), (tb, vb) = pts[j], pts[j + 1]
            grid.append(va + (vb - va) * (t - ta) / (tb - ta))
        t += step_ns
    w = max(1, int(round(width_s / step_s)))
    if len(grid) < w:
        return []
    prefix = [0.0]
    for v in grid:
        prefix.append(prefix[-1] + v)
    return [(prefix[i + w] - prefix[i]) / w for i in range(len(grid) - w + 1)]
