"""L-BFGS (PyTorch's algorithm, with or without the strong-Wolfe line search)."""
import cthtorch
from cthtorch.optim._line_search import strong_wolfe
from cthtorch.optim.optimizer import Optimizer


def _real(t):
    return cthtorch.view_as_real(t) if t.is_complex() else t


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        # a complex parameter is searched as its (real, imag) pairs, as torch's
        return cthtorch.cat([_real(p.grad if p.grad is not None else cthtorch.zeros_like(p)).reshape(-1)
                             for p in self._params])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            p = _real(p)
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=step_size)
            offset += n

    def step(self, closure):
        g = self.param_groups[0]
        lr, max_iter, tol_grad, tol_change, hist = g["lr"], g["max_iter"], g["tolerance_grad"], g["tolerance_change"], g["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with cthtorch.enable_grad():
            orig_loss = closure()
        current_evals = 1   # max_eval bounds the evaluations of this call, as in torch
        state["func_evals"] += 1
        with cthtorch.no_grad():   # float() of a loss needing grad warns only where grad mode is on
            loss = float(orig_loss)
            flat_grad = self._gather_flat_grad()
            if flat_grad.abs().max().item() <= tol_grad:
                return orig_loss
            d, t = state.get("d"), state.get("t")
            old_dirs, old_stps, ro = state.setdefault("old_dirs", []), state.setdefault("old_stps", []), state.setdefault("ro", [])
            H_diag = state.get("H_diag", 1)
            prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
            n_iter = 0
            while n_iter < max_iter:
                n_iter += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    d = flat_grad.neg()
                    H_diag = 1
                else:
                    y = flat_grad.sub(prev_flat_grad)
                    s = d.mul(t)
                    ys = y.dot(s).item()
                    if ys > 1e-10:
                        if len(old_dirs) == hist:
                            old_dirs.pop(0)
                            old_stps.pop(0)
                            ro.pop(0)
                        old_dirs.append(y)
                        old_stps.append(s)
                        ro.append(1.0 / ys)
                        H_diag = ys / y.dot(y).item()
                    q = flat_grad.neg()
                    al = state.setdefault("al", [None] * hist)
                    for i in range(len(old_dirs) - 1, -1, -1):
                        al[i] = old_stps[i].dot(q).item() * ro[i]
                        q.add_(old_dirs[i], alpha=-al[i])
                    d = q.mul(H_diag)
                    for i in range(len(old_dirs)):
                        be_i = old_dirs[i].dot(d).item() * ro[i]
                        d.add_(old_stps[i], alpha=al[i] - be_i)
                prev_flat_grad = flat_grad.clone()
                prev_loss = loss
                t = min(1.0, 1.0 / flat_grad.abs().sum().item()) * lr if state["n_iter"] == 1 else lr
                gtd = flat_grad.dot(d).item()
                if gtd > -tol_change:
                    break
                if g["line_search_fn"] == "strong_wolfe":
                    x0 = [p.detach().clone() for p in self._params]

                    def evaluate(step):
                        self._add_grad(step, d)
                        with cthtorch.enable_grad():
                            f_t = closure()
                        f_t = float(f_t)
                        g_t = self._gather_flat_grad()
                        for p, v in zip(self._params, x0):
                            p.copy_(v)
                        return f_t, g_t
                    loss, flat_grad, t, ls_evals = strong_wolfe(evaluate, d, t, loss, flat_grad, gtd)
                    self._add_grad(t, d)
                    state["func_evals"] += ls_evals
                    current_evals += ls_evals
                else:
                    self._add_grad(t, d)
                    if n_iter != max_iter:
                        with cthtorch.enable_grad():
                            loss = closure()
                        loss = float(loss)
                        flat_grad = self._gather_flat_grad()
                        state["func_evals"] += 1
                        current_evals += 1
                if current_evals >= g["max_eval"] or flat_grad.abs().max().item() <= tol_grad:
                    break
                if d.mul(t).abs().max().item() <= tol_change or abs(loss - prev_loss) < tol_change:
                    break
            state.update(d=d, t=t, H_diag=H_diag, prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
