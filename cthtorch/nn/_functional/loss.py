"""Losses as composites of differentiable ops: multi_margin_loss, multilabel_margin_loss,
triplet_margin_with_distance_loss, ctc_loss (the CTC forward recursion in log space) and linear_cross_entropy."""
import math

import cthtorch
from cthtorch._utils import _tensor_arg
from cthtorch.overrides import _handle_with_locals, has_torch_function_variadic as _has_torch_function_variadic
from cthtorch.nn._functional import _F
from cthtorch.amp._cpu_policy import fp32_on_cpu


def _reduce(loss, reduction):
    return _F()._apply_loss_reduction(loss, reduction)


@fp32_on_cpu
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    if _has_torch_function_variadic(input, target, weight):
        return _handle_with_locals(multi_margin_loss, locals())
    reduction = _F()._legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = input.unsqueeze(0) if input.dim() <= 1 else input
    if x.dim() != 2:
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: %s"
                           % list(input.shape))
    y = target.reshape(-1)
    n, c = x.shape
    if y.numel() != n:
        raise RuntimeError("inconsistent target size, expected %d but got %s" % (n, list(target.shape)))
    xy = x.gather(1, y.unsqueeze(1))
    z = (margin - xy + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, y).unsqueeze(1)
    not_target = cthtorch.ones(n, c, dtype=x.dtype).scatter(1, y.unsqueeze(1), 0.0)
    loss = (z * not_target).sum(1) / c
    if input.dim() <= 1 and reduction == "none":
        loss = loss.reshape(target.shape)
    return _reduce(loss, reduction)


@fp32_on_cpu
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _has_torch_function_variadic(input, target):
        return _handle_with_locals(multilabel_margin_loss, locals())
    _tensor_arg("multilabel_margin_loss", "input", input, 1)
    _tensor_arg("multilabel_margin_loss", "target", target, 2)
    reduction = _F()._legacy_reduction(size_average, reduce, reduction)
    x = input.unsqueeze(0) if input.dim() <= 1 else input
    t = target.reshape(x.shape)
    if target.shape != input.shape:
        raise RuntimeError("inconsistent target size: %s for input of size: %s" % (list(target.shape),
                                                                                  list(input.shape)))
    n, c = x.shape
    # targets are the indices before the first -1 of each row
    valid = (t >= 0).to(cthtorch.int64).cumprod(1).to(x.dtype)                  # (n, c)
    idx = t.clamp_min(0)
    is_target = cthtorch.zeros(n, c, dtype=x.dtype).scatter_add(1, idx, valid).clamp_max(1)
    xy = x.gather(1, idx)                                                        # (n, k)
    z = (1 - xy.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)                      # (n, k, c)
    z = z * valid.unsqueeze(2) * (1 - is_target).unsqueeze(1)
    loss = z.sum((1, 2)) / c
    if input.dim() <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    if _has_torch_function_variadic(anchor, positive, negative):
        return _handle_with_locals(triplet_margin_with_distance_loss, locals())
    if margin <= 0:
        raise ValueError("TripletMarginWithDistanceLoss: expected margin to be greater than 0, got %s instead"
                         % margin)
    if not (anchor.dim() == positive.dim() == negative.dim()):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same number of "
                           "dimensions, but got: anchor %dD, positive %dD, and negative %dD inputs"
                           % (anchor.dim(), positive.dim(), negative.dim()))
    dist = distance_function if distance_function is not None else _F().pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = cthtorch.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


# ---------------------------------------------------------------- CTC
_NEG = -1e30   # "log 0" that keeps logsumexp's gradient finite; sums below _NEG / 10 mean impossible


def _lengths(v):
    return [int(x) for x in (v.reshape(-1).tolist() if isinstance(v, cthtorch.Tensor) else v)]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    if _has_torch_function_variadic(log_probs, targets, input_lengths, target_lengths):
        return _handle_with_locals(ctc_loss, locals())
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.dim() != 3:
        raise RuntimeError("ctc_loss expects log_probs of 2 or 3 dimensions, got %d" % log_probs.dim())
    T, N, C = lp.shape
    il, tl = _lengths(input_lengths), _lengths(target_lengths)
    if len(il) != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    for v in il:
        if v > T:
            raise RuntimeError("Expected input_lengths to have value at most %d, but got value %d (while checking "
                               "arguments for ctc_loss_cpu)" % (T, v))
    tg = targets.unsqueeze(0) if unbatched and targets.dim() == 1 else targets
    if tg.dim() == 1:   # concatenated targets
        flat = tg.tolist()
        rows, pos = [], 0
        for n in tl:
            rows.append(flat[pos:pos + n])
            pos += n
    else:
        rows = []
        for b, n in enumerate(tl):
            if n > tg.shape[1]:
                raise RuntimeError("Expected tensor to have size at least %d at dimension 1, but got size %d for "
                                   "argument #2 'targets' (while checking arguments for ctc_loss_cpu)"
                                   % (n, tg.shape[1]))
            rows.append(tg[b, :n].tolist())
    S = max(tl) if tl else 0
    W = 2 * S + 1
    ext = [[blank] * W for _ in range(N)]
    skip = [[False] * W for _ in range(N)]
    for b, r in enumerate(rows):
        for j, lab in enumerate(r):
            ext[b][2 * j + 1] = lab
            if j and lab != r[j - 1]:
                skip[b][2 * j + 1] = True
    ext_t = cthtorch.tensor(ext, dtype=cthtorch.int64).reshape(N, W)
    skip_t = cthtorch.tensor(skip, dtype=cthtorch.bool).reshape(N, W)
    lpe = lp.gather(2, ext_t.unsqueeze(0).expand(T, N, W))                        # (T, N, W)
    neg = lambda *shape: cthtorch.full(shape, _NEG, dtype=lp.dtype)  # noqa: E731
    alpha = cthtorch.cat([lpe[0, :, :min(2, W)], neg(N, W - min(2, W))], 1)
    live = cthtorch.tensor(il, dtype=cthtorch.int64).reshape(N, 1)
    for t in range(1, T):
        a1 = cthtorch.cat([neg(N, 1), alpha[:, :-1]], 1)
        a2 = cthtorch.where(skip_t, cthtorch.cat([neg(N, 2), alpha[:, :-2]], 1) if W > 2 else neg(N, W), neg(N, W))
        new = cthtorch.stack([alpha, a1, a2]).logsumexp(0) + lpe[t]
        alpha = cthtorch.where(live > t, new, alpha)
    last = cthtorch.tensor([[2 * n, max(2 * n - 1, 0)] for n in tl], dtype=cthtorch.int64).reshape(N, 2)
    ends = alpha.gather(1, last)
    no_label = cthtorch.tensor([[False, n == 0] for n in tl], dtype=cthtorch.bool).reshape(N, 2)
    ll = cthtorch.where(no_label, neg(N, 2), ends).logsumexp(1)
    # torch's CTC backward returns exp(log_probs) - posterior (the gradient w.r.t. logits when log_probs come
    # from log_softmax); a zero-valued term adds the exp(log_probs) part over each sample's valid frames
    mask_t = (cthtorch.arange(T).reshape(T, 1) < live.reshape(1, N)).to(lp.dtype).unsqueeze(2)
    e = lp.exp() * mask_t
    nll = -ll + (e - e.detach()).sum((0, 2))
    impossible = ll < _NEG / 10
    fill = 0.0 if zero_infinity else float("inf")
    nll = cthtorch.where(impossible, cthtorch.full_like(nll, fill), nll)
    if reduction == "mean":
        return (nll / cthtorch.tensor(tl, dtype=lp.dtype).clamp_min(1)).mean()
    if reduction == "sum":
        return nll.sum()
    if reduction == "none":
        return nll.reshape(()) if unbatched else nll
    raise ValueError("%s is not a valid value for reduction" % reduction)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target) with torch's checks; linear_weight is
    (C, *out_features, in_features) for a K-dimensional loss. torch's options pick a chunked evaluation that
    saves memory; the value is the same, and here it is computed in one piece."""
    if _has_torch_function_variadic(input, linear_weight, target, linear_bias, weight):
        return _handle_with_locals(linear_cross_entropy, locals())
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError("expected input with dimensionality 1 or 2, got %d" % input.dim())
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got %d" % linear_weight.dim())
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got %d and %d, "
                           "respectively" % (in_features, linear_weight.shape[-1]))
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError("expected linear_bias shape %s, got %s" % ((num_classes, *out_features),
                                                                      tuple(linear_bias.shape)))
    if out_features and not num_batches:
        raise RuntimeError("K-dimensional loss defined by linear_weight shape %s requires batched input, (N, %d), "
                           "got unbatched input with shape %s" % (tuple(linear_weight.shape), in_features,
                                                                  tuple(input.shape)))
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if out_features:
        rows = num_classes * math.prod(out_features)
        linear_weight = linear_weight.reshape(rows, in_features)
        linear_bias = linear_bias.reshape(rows) if linear_bias is not None else None
    logits = _F().linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return _F().cross_entropy(logits, target, weight=weight, reduction=reduction,
                              ignore_index=-100 if ignore_index is None else ignore_index,
                              label_smoothing=label_smoothing)
