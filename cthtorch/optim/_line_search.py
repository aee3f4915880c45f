"""The strong-Wolfe line search LBFGS uses with line_search_fn="strong_wolfe":
bracket a step satisfying the sufficient-decrease and curvature conditions,
then shrink the bracket with safeguarded cubic interpolation (Nocedal &
Wright, algorithms 3.5/3.6, in the minFunc variant PyTorch follows, so the
same problem takes the same steps)."""
import math


def cubic_minimizer(x1, f1, g1, x2, f2, g2, lo=None, hi=None):
    """Minimiser of the cubic matching values and slopes at x1 and x2, kept in
    [lo, hi] (by default the interval the points span); the interval's middle
    when the cubic has no minimiser."""
    if lo is None:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


class _Point:
    """A trial step: its length, loss, gradient and directional derivative."""
    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def strong_wolfe(evaluate, d, t, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """evaluate(t) -> (loss, flat_grad) at the step t along d. Returns
    (loss, flat_grad, t, evaluations) of the accepted step."""
    d_norm = d.abs().max().item()
    start = _Point(0.0, f, g.clone(), gtd)
    prev = start
    fn, gn = evaluate(t)
    cur = _Point(t, fn, gn, gn.dot(d).item())
    evals, it = 1, 0
    lo_hi = None          # [a, b] bracket once found
    found = False
    while it < max_ls:
        # order matters: sufficient decrease, then curvature, then the sign of the slope
        if cur.f > f + c1 * cur.t * gtd or (it > 1 and cur.f >= prev.f):
            lo_hi = [prev, _Point(cur.t, cur.f, cur.g.clone(), cur.gtd)]
            break
        if abs(cur.gtd) <= -c2 * gtd:
            lo_hi = [cur]
            found = True
            break
        if cur.gtd >= 0:
            lo_hi = [prev, _Point(cur.t, cur.f, cur.g.clone(), cur.gtd)]
            break
        # extrapolate: the cubic's minimiser, between a little and ten times further
        nt = cubic_minimizer(prev.t, prev.f, prev.gtd, cur.t, cur.f, cur.gtd,
                             cur.t + 0.01 * (cur.t - prev.t), cur.t * 10)
        prev = _Point(cur.t, cur.f, cur.g.clone(), cur.gtd)
        fn, gn = evaluate(nt)
        cur = _Point(nt, fn, gn, gn.dot(d).item())
        evals += 1
        it += 1
    if it == max_ls:
        lo_hi = [start, cur]
    if found:
        best = lo_hi[0]
        return best.f, best.g, best.t, evals

    # zoom: shrink [a, b] keeping in "low" the end with the smaller loss
    low, high = (0, 1) if lo_hi[0].f <= lo_hi[-1].f else (1, 0)
    stalled = False
    while it < max_ls:
        a, b = lo_hi[0], lo_hi[1]
        if abs(b.t - a.t) * d_norm < tolerance_change:
            break
        nt = cubic_minimizer(a.t, a.f, a.gtd, b.t, b.f, b.gtd)
        top, bottom = max(a.t, b.t), min(a.t, b.t)
        margin = 0.1 * (top - bottom)
        if min(top - nt, nt - bottom) < margin:      # too close to an end
            if stalled or nt >= top or nt <= bottom:
                nt = top - margin if abs(nt - top) < abs(nt - bottom) else bottom + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        fn, gn = evaluate(nt)
        trial = _Point(nt, fn, gn.clone(), gn.dot(d).item())
        evals += 1
        it += 1
        if trial.f > f + c1 * nt * gtd or trial.f >= lo_hi[low].f:
            lo_hi[high] = trial
            low, high = (0, 1) if lo_hi[0].f <= lo_hi[1].f else (1, 0)
        else:
            if abs(trial.gtd) <= -c2 * gtd:
                found = True
            elif trial.gtd * (lo_hi[high].t - lo_hi[low].t) >= 0:
                lo_hi[high] = lo_hi[low]
            lo_hi[low] = trial
        if found:
            break
    best = lo_hi[low]
    return best.f, best.g, best.t, evals
