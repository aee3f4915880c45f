"""gradcheck and gradgradcheck (float64, PyTorch's tolerances) over the
differentiable ops a model uses, with broadcasting, non-contiguous and 0-d
inputs. Each case: name, function of the inputs, input shapes, and how inputs
are drawn (kept away from kinks and poles)."""
import zlib

import numpy as np
import pytest

import cthtorch as ct
from cthtorch.autograd import gradcheck, gradgradcheck

F = ct.nn.functional


# a zero in row 0, two in row 1, none in row 2: prod's exact-zero paths
ZEROS_34 = ct.tensor([[1., 0., 1., 1.], [0., 1., 1., 0.], [1., 1., 1., 1.]], dtype=ct.float64)


def pos(*shape):
    return ("pos", shape)       # in (0.5, 1.5)


def any_(*shape):
    return ("any", shape)       # standard normal, away from 0


def unit(*shape):
    return ("unit", shape)      # in (-0.8, 0.8)


CASES = [
    ("add_broadcast", lambda a, b: a + b, [any_(3, 4), any_(4)]),
    ("sub_scalar", lambda a: 2.5 - a, [any_(3)]),
    ("mul_broadcast", lambda a, b: a * b, [any_(2, 1, 3), any_(4, 1)]),
    ("div", lambda a, b: a / b, [any_(3, 2), pos(3, 2)]),
    ("pow_tensor", lambda a, b: a ** b, [pos(4), any_(4)]),
    ("pow_scalar", lambda a: a ** 3, [any_(2, 3)]),
    ("rpow", lambda a: 2.0 ** a, [any_(3)]),
    ("neg_abs", lambda a: (-a).abs(), [any_(5)]),
    ("exp", lambda a: a.exp(), [any_(3, 3)]),
    ("log", lambda a: a.log(), [pos(4)]),
    ("log1p_expm1", lambda a: a.log1p() + a.expm1(), [pos(4)]),
    ("sqrt_rsqrt", lambda a: a.sqrt() + a.rsqrt(), [pos(4)]),
    ("sin_cos_tan", lambda a: a.sin() + a.cos() + a.tan(), [unit(4)]),
    ("asin_acos_atan", lambda a: a.asin() + a.acos() + a.atan(), [unit(4)]),
    ("sinh_cosh_tanh", lambda a: a.sinh() * a.cosh() + a.tanh(), [any_(4)]),
    ("sigmoid_logit", lambda a: a.sigmoid() + ((a.sigmoid() * 0.8) + 0.1).logit(), [any_(4)]),
    ("erf_erfc_erfinv", lambda a: a.erf() + a.erfc() + (a * 0.5).erfinv(), [unit(4)]),
    ("atan2_hypot", lambda a, b: ct.atan2(a, b) + ct.hypot(a, b), [any_(3), pos(3)]),
    ("lgamma", lambda a: a.lgamma(), [pos(4)]),
    ("digamma_polygamma", lambda a: a.digamma() + ct.polygamma(3, a) + ct.polygamma(1, -a - 0.5), [pos(4)]),
    ("clamp", lambda a: a.clamp(-0.5, 0.5), [any_(6)]),
    ("where", lambda a, b: ct.where(a > 0, a, b), [any_(5), any_(5)]),
    ("lerp_addcmul_addcdiv", lambda a, b, c: ct.lerp(a, b, 0.3) + ct.addcmul(a, b, c, value=0.5)
     + ct.addcdiv(a, b, c + 3, value=2), [any_(3), any_(3), pos(3)]),
    ("maximum_minimum", lambda a, b: ct.maximum(a, b) + ct.minimum(a, b), [any_(4), any_(4)]),
    ("sum_dims", lambda a: a.sum((0, 2), keepdim=True), [any_(2, 3, 4)]),
    ("mean_var_std", lambda a: a.mean(1) + a.var(1) + a.std(0).sum(), [any_(3, 4)]),
    ("prod", lambda a: a.prod(1), [pos(2, 3)]),
    ("amax_max", lambda a: a.amax(1) + a.max(0).values.sum(), [any_(3, 4)]),
    ("max_sort_topk", lambda a: a.max(1).values + a.sort(1).values[:, 0] + a.topk(2, 1).values.sum(1) + a.median(1).values,
     [any_(3, 4)]),
    ("logsumexp", lambda a: a.logsumexp(1), [any_(3, 4)]),
    ("norm", lambda a: a.norm() + a.norm(p=1, dim=0).sum(), [any_(3, 4)]),
    ("cumsum_cumprod", lambda a: a.cumsum(0) + a.cumprod(1), [pos(3, 3)]),
    ("prod_all_keepdim_noncontig", lambda a: a.prod() + a.t().prod(0, keepdim=True).sum(), [any_(3, 4)]),
    ("prod_zeros", lambda a: (a * ZEROS_34).prod(1), [any_(3, 4)]),
    ("cumprod_zeros", lambda a: (a * ZEROS_34).cumprod(1) + (a * ZEROS_34).t().cumprod(1).t(), [any_(3, 4)]),
    ("softmax_logsoftmax", lambda a: F.softmax(a, 1) + F.log_softmax(a, 0), [any_(3, 4)]),
    ("mm_matmul", lambda a, b: a @ b, [any_(3, 4), any_(4, 2)]),
    ("matmul_batched_broadcast", lambda a, b: ct.matmul(a, b), [any_(2, 3, 4), any_(4, 5)]),
    ("bmm_baddbmm", lambda a, b, c: ct.baddbmm(c, a, b, beta=0.5), [any_(2, 2, 3), any_(2, 3, 2), any_(2, 2, 2)]),
    ("mv_dot_outer", lambda a, v: (a @ v).sum() + v.dot(v) + ct.outer(v, v).sum(), [any_(3, 4), any_(4)]),
    ("addmm", lambda c, a, b: ct.addmm(c, a, b, beta=0.5, alpha=2), [any_(2), any_(3, 4), any_(4, 2)]),
    ("linear", lambda x, w, b: F.linear(x, w, b), [any_(3, 4), any_(2, 4), any_(2)]),
    ("transpose_noncontig", lambda a: (a.t() * 2).contiguous().view(-1), [any_(3, 4)]),
    ("permute_reshape", lambda a: a.permute(2, 0, 1).reshape(4, -1) ** 2, [any_(2, 3, 4)]),
    ("expand_squeeze", lambda a: a.unsqueeze(0).expand(3, 2, 2).squeeze().sum(0), [any_(2, 2)]),
    ("index_select_gather", lambda a: a.index_select(0, ct.tensor([2, 0, 2])).gather(1, ct.tensor([[0], [1], [1]])),
     [any_(3, 2)]),
    ("advanced_indexing", lambda a: a[ct.tensor([0, 2]), 1:] * a[1, 1:], [any_(3, 3)]),
    ("masked_fill_select", lambda a: a.masked_fill(a > 0.5, 0.0) + a.masked_select(a < 0).sum(), [any_(6)]),
    ("cat_stack_split", lambda a, b: ct.cat([a, b]).sum(0) + ct.stack([a, b]).split(1)[0].sum(), [any_(2, 3), any_(2, 3)]),
    ("flip_roll_repeat", lambda a: a.flip(0).roll(1, 1).repeat(2, 1), [any_(2, 3)]),
    ("tril_triu_diag", lambda a: a.tril() + a.triu(1) + ct.diag(a.diagonal()), [any_(3, 3)]),
    ("scalar_0d", lambda a, b: (a * b).exp(), [any_(), any_(3)]),
    ("relu_family", lambda a: F.relu(a) + F.leaky_relu(a, 0.1) + F.elu(a) + F.selu(a) + F.celu(a), [any_(6)]),
    ("gelu_silu_mish", lambda a: F.gelu(a) + F.gelu(a, approximate="tanh") + F.silu(a) + F.mish(a), [any_(6)]),
    ("softplus_logsigmoid", lambda a: F.softplus(a) + F.logsigmoid(a) + F.softsign(a) + F.tanhshrink(a), [any_(6)]),
    ("hardtanh_hardswish", lambda a: F.hardtanh(a) + F.hardswish(a) + F.hardsigmoid(a) + F.relu6(a), [unit(6)]),
    ("glu_prelu", lambda a, w: F.glu(a, -1) + F.prelu(a[:, :2], w), [any_(3, 4), pos(1)]),
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [any_(2, 2, 5, 5), any_(3, 2, 3, 3), any_(3)]),
    ("conv2d_groups_dilation", lambda x, w: F.conv2d(x, w, groups=2, dilation=2, padding=2), [any_(1, 4, 5, 5), any_(4, 2, 3, 3)]),
    ("conv1d", lambda x, w: F.conv1d(x, w, padding=1), [any_(2, 2, 6), any_(3, 2, 3)]),
    ("conv_transpose2d", lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1), [any_(1, 2, 3, 3), any_(2, 3, 3, 3)]),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2), [any_(1, 2, 4, 4)]),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1), [any_(1, 2, 5, 5)]),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [any_(1, 2, 5, 7)]),
    ("batch_norm_train", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [any_(4, 3, 2), pos(3), any_(3)]),
    ("batch_norm_eval", lambda x, w, b: F.batch_norm(x, ct.tensor([0.1, -0.2, 0.3], dtype=ct.float64),
                                                     ct.tensor([1.5, 0.5, 2.0], dtype=ct.float64), w, b, training=False),
     [any_(4, 3, 2), pos(3), any_(3)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b), [any_(3, 4), pos(4), any_(4)]),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [any_(2, 4, 3), pos(4), any_(4)]),
    ("embedding", lambda w: F.embedding(ct.tensor([[0, 2], [2, 1]]), w), [any_(3, 4)]),
    ("cross_entropy", lambda x: F.cross_entropy(x, ct.tensor([0, 2, 1]), label_smoothing=0.1), [any_(3, 4)]),
    ("cross_entropy_probs", lambda x, p: F.cross_entropy(x, p.softmax(1)), [any_(3, 4), any_(3, 4)]),
    ("nll_weighted", lambda x: F.nll_loss(x.log_softmax(1), ct.tensor([1, 0, 3]),
                                          weight=ct.tensor([0.5, 2.0, 1.0, 1.5], dtype=ct.float64)), [any_(3, 4)]),
    ("mse_l1_smoothl1", lambda a, b: F.mse_loss(a, b) + F.l1_loss(a, b) + F.smooth_l1_loss(a, b) + F.huber_loss(a, b),
     [any_(5), any_(5)]),
    ("bce_with_logits", lambda x, t: F.binary_cross_entropy_with_logits(x, t.sigmoid(), pos_weight=ct.tensor([2.0, 1.0])),
     [any_(3, 2), any_(3, 2)]),
    ("bce", lambda x, t: F.binary_cross_entropy(x.sigmoid(), t.sigmoid()), [any_(4), any_(4)]),
    ("kl_div", lambda x, t: F.kl_div(x.log_softmax(1), t.softmax(1), reduction="batchmean"), [any_(2, 3), any_(2, 3)]),
    ("interpolate_bilinear", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False), [any_(1, 1, 3, 3)]),
    ("interpolate_nearest", lambda x: F.interpolate(x, size=(5, 4), mode="nearest"), [any_(1, 1, 3, 2)]),
    ("pad_modes", lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect") + 0 * F.pad(x, (1, 2, 2, 1), mode="replicate"),
     [any_(1, 1, 4, 4)]),
    ("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2) ** 2, [any_(1, 4, 2, 2)]),
    ("unfold_fold", lambda x: F.fold(F.unfold(x, 2), (3, 3), 2), [any_(1, 2, 3, 3)]),
    ("cosine_similarity", lambda a, b: F.cosine_similarity(a, b), [any_(3, 4), any_(3, 4)]),
    ("normalize", lambda a: F.normalize(a, dim=1), [any_(3, 4)]),
    ("einsum", lambda a, b: ct.einsum("bij,bjk->bik", a, b), [any_(2, 2, 3), any_(2, 3, 2)]),
    ("linalg_inv_det", lambda a: ct.linalg.inv(a + 3 * ct.eye(3, dtype=a.dtype)).sum()
     + ct.linalg.det(a + 3 * ct.eye(3, dtype=a.dtype)), [any_(3, 3)]),
    ("cdist", lambda a, b: ct.cdist(a, b), [any_(3, 2), any_(4, 2)]),
    # Python-level autograd.Functions: their backward must itself be recorded
    ("logcumsumexp", lambda a: a.logcumsumexp(1), [any_(3, 4)]),
    ("linalg_svdvals_pinv", lambda a: ct.linalg.svdvals(a).sum() + ct.linalg.pinv(a), [any_(3, 3)]),
    ("linalg_svd_wide", lambda a: ct.linalg.svd(a, full_matrices=True)[1], [any_(2, 4)]),
    ("linalg_cholesky_eigh", lambda a: ct.linalg.cholesky(a @ a.mT + 3 * ct.eye(3, dtype=a.dtype)).sum()
     + ct.linalg.eigh(a + a.mT)[0], [any_(3, 3)]),
    ("linalg_solve_slogdet", lambda a, b: ct.linalg.solve(a + 3 * ct.eye(3, dtype=a.dtype), b).sum(0)
     + ct.linalg.slogdet(a + 3 * ct.eye(3, dtype=a.dtype))[1], [any_(3, 3), any_(3, 2)]),
    ("linalg_lu_factor_lu", lambda a: ct.linalg.lu_factor(a)[0] + ct.linalg.lu(a)[2], [any_(2, 3, 3)]),
    ("linalg_lu_solve", lambda a, b: ct.linalg.lu_solve(*ct.linalg.lu_factor(a), b)
     + ct.linalg.lu_solve(*ct.linalg.lu_factor(a), b, adjoint=True), [any_(3, 3), any_(3, 2)]),
    ("linalg_qr_wide_tall", lambda a: ct.linalg.qr(a)[1].sum() + ct.linalg.qr(a.mT)[0], [any_(2, 4)]),
    ("polygamma_i0_i1", lambda a: ct.polygamma(1, a) + ct.polygamma(0, a) + ct.i0(a) + ct.special.i1(a), [pos(4)]),
    ("pdist_pairwise", lambda a, b: F.pdist(a).sum() + F.pairwise_distance(a, b), [any_(3, 2), any_(3, 2)]),
    ("vector_norms", lambda a: ct.linalg.vector_norm(a, 3, 1) + ct.linalg.vector_norm(a, float("inf"), 1)
     + ct.linalg.vector_norm(a, 1, 1), [any_(3, 4)]),
    ("triplet_margin", lambda a, p, n: F.triplet_margin_loss(a, p, n), [any_(2, 3), any_(2, 3), any_(2, 3)]),
    ("grid_sample", lambda x, g: F.grid_sample(x, g.tanh(), align_corners=False), [any_(1, 1, 3, 3), any_(1, 2, 2, 2)]),
    ("embedding_bag", lambda w: F.embedding_bag(ct.tensor([0, 2, 1, 2]), w, ct.tensor([0, 2]), mode="mean") ** 2,
     [any_(3, 2)]),
    ("lp_pool_adaptive_max", lambda x: F.lp_pool2d(x.abs() + 0.5, 2, 2).sum() + F.adaptive_max_pool2d(x * x, 2),
     [any_(1, 1, 4, 4)]),
    ("sdpa", lambda q: F.scaled_dot_product_attention(q, q * 2, q), [any_(1, 3, 2)]),
]



def make(spec, rs):
    kind, shape = spec
    if kind == "pos":
        a = rs.uniform(0.5, 1.5, size=shape)
    elif kind == "unit":
        a = rs.uniform(-0.8, 0.8, size=shape)
    else:
        a = rs.randn(*shape)
        a = np.where(np.abs(a) < 0.1, 0.3, a)   # away from kinks at 0
    return ct.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


@pytest.mark.parametrize("name,fn,specs", CASES, ids=[c[0] for c in CASES])
def test_gradcheck(name, fn, specs):
    rs = np.random.RandomState(zlib.crc32(name.encode()))
    inputs = [make(s, rs) for s in specs]
    assert gradcheck(fn, inputs)


# backwards that torch does not differentiate either (its derivatives.yaml says not_implemented)
ONCE_DIFFERENTIABLE = {"pdist_pairwise": "_pdist_backward", "embedding_bag": "_embedding_bag_backward"}


@pytest.mark.parametrize("name,fn,specs", CASES, ids=[c[0] for c in CASES])
def test_gradgradcheck(name, fn, specs):
    rs = np.random.RandomState(zlib.crc32(name.encode()))
    inputs = [make(s, rs) for s in specs]
    if name in ONCE_DIFFERENTIABLE:
        with pytest.raises(NotImplementedError, match="the derivative for '%s' is not implemented"
                           % ONCE_DIFFERENTIABLE[name]):
            gradgradcheck(fn, inputs)
        return
    assert gradgradcheck(fn, inputs)


def test_once_differentiable_backward_raises_on_double_backward():
    # a backward marked once_differentiable: a second derivative must raise, not come out zero
    from cthtorch.autograd.function import Function, once_differentiable

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = ct.tensor([1., 2., 3., 4.], dtype=ct.float64, requires_grad=True)
    g, = ct.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [2., 4., 6., 8.]
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


@pytest.mark.parametrize("op", ["prod", "cumprod"])
def test_third_derivative_of_prod_raises(op):
    x = ct.tensor([[0.5, 2.0, 0.0], [1.5, -1.0, 3.0]], dtype=ct.float64, requires_grad=True)
    y = x.prod(1).sum() if op == "prod" else x.cumprod(1).sum()
    g, = ct.autograd.grad(y, x, create_graph=True)
    gg, = ct.autograd.grad((g * g).sum(), x, create_graph=True)
    with pytest.raises(NotImplementedError, match="third derivative"):
        gg.sum().backward()
