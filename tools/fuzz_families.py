"""Hand-written hostile calls for the op families added in sessions 30-32, for tools/fuzz.py's runner:
torch.special (Bessel, Airy, zeta, orthogonal polynomials), signal.windows, svd/pca_lowrank,
index_put_(accumulate=True), sum/mean/nansum/nanmean (every rank, 0-size, bad dims, dtype=, out=),
number-first overloads (torch.pow(2, x)), the float32 LSTM path (odd hidden sizes, empty, NaN,
non-contiguous or wrong-shaped h0/c0 and weights), meta tensors mixed with cpu ones, distributions
and transforms, the JIT's fused kernels called from C (layouts, dtypes, shapes changing between calls),
gradient hooks that return the wrong thing and set_ across dtypes and devices.

    python tools/fuzz_families.py [--timeout T] [--only SUBSTRING]

Each call runs in a child (as tools/fuzz.py's): a crash, hang or SystemError is printed with a reproducer.
Exit status: 0 when nothing was found, 1 otherwise.
Left out as they hang torch as well: VonMises sampling with concentration 0, 1e30 or nan
(validate_args=False), pca_lowrank(niter=10**9).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:                                   # the scripted functions the JIT cases call (imported in the child)
    import cthtorch as torch

    @torch.jit.script
    def f2(x, y):
        return (x * y + x).sigmoid() - y

    @torch.jit.script
    def f1(x):
        return torch.tanh(x) * 2 + x.relu()
except ImportError:
    pass


def calls():
    calls = []
    T = ["torch.randn(3)", "torch.randn(0)", "torch.randn(2,3)", "torch.randn(4,3).t()", "torch.randn(6)[::2]",
         "torch.tensor(2.)", "torch.arange(5)", "torch.tensor([float('nan'), float('inf'), -float('inf'), 0., -1.])",
         "torch.randn(3, dtype=torch.float64)", "torch.tensor([True, False])", "torch.randn(3).half()",
         "torch.randn(3, device='meta')", "torch.randint(0, 5, (3,))", "torch.randn(2,0,3)", "torch.randn(3)+1j"]
    un = ["bessel_j0","bessel_j1","bessel_y0","bessel_y1","modified_bessel_i0","modified_bessel_i1","modified_bessel_k0",
          "modified_bessel_k1","scaled_modified_bessel_k0","scaled_modified_bessel_k1","airy_ai","spherical_bessel_j0",
          "i0","i0e","i1","i1e","ndtri","log_ndtr","erfcx","entr","digamma","sinc","ndtr","expit","logit","gammaln"]
    for f in un:
        for t in T:
            calls.append("torch.special.%s(%s)" % (f, t))
        calls.append("torch.special.%s(torch.randn(3), out=torch.empty(5))" % f)
        calls.append("torch.special.%s(torch.randn(3), out=torch.empty(3, dtype=torch.int64))" % f)
        calls.append("torch.special.%s(torch.randn(3), out=torch.empty(2,3)[:, 0])" % f)
        calls.append("torch.special.%s(torch.randn(4), out=torch.empty(3, device='meta'))" % f)
        calls.append("torch.special.%s(2.0)" % f)
        calls.append("torch.special.%s(None)" % f)
    binf = ["zeta", "xlog1py", "xlogy", "chebyshev_polynomial_t","chebyshev_polynomial_u","chebyshev_polynomial_v","chebyshev_polynomial_w",
            "hermite_polynomial_h","hermite_polynomial_he","laguerre_polynomial_l","legendre_polynomial_p",
            "shifted_chebyshev_polynomial_t","shifted_chebyshev_polynomial_u","shifted_chebyshev_polynomial_v","shifted_chebyshev_polynomial_w",
            "gammainc","gammaincc","polygamma","multigammaln"]
    N = ["torch.tensor(3)", "torch.tensor(-1)", "torch.tensor(10**6)", "torch.tensor(2**62)", "torch.tensor(-2**63)", "3", "-5", "2**62", "2**63", "2.5",
         "float('nan')", "float('inf')", "torch.tensor([1, 2, 3])", "torch.tensor([[1],[2]])", "torch.randn(3)", "torch.tensor(float('nan'))", "torch.empty(0, dtype=torch.int64)", "torch.tensor(3, device='meta')", "None"]
    for f in binf:
        for x in T[:9] + T[11:12]:
            for n in N:
                calls.append("torch.special.%s(%s, %s)" % (f, x, n))
                calls.append("torch.special.%s(%s, %s)" % (f, n, x))
    # windows
    for w in ["bartlett","blackman","cosine","exponential","gaussian","general_cosine","general_hamming","hamming","hann","kaiser","nuttall"]:
        for m in ["0","1","2","7","-1","2**40","2.5","None","torch.tensor(3)","2**63"]:
            calls.append("torch.signal.windows.%s(%s)" % (w, m))
            calls.append("torch.signal.windows.%s(%s, sym=False, dtype=torch.float64)" % (w, m))
        calls.append("torch.signal.windows.%s(5, dtype=torch.int64)" % w)
        calls.append("torch.signal.windows.%s(5, device='meta')" % w)
    for w in ["bartlett_window","blackman_window","hamming_window","hann_window","kaiser_window"]:
        for m in ["0","1","-1","2**40","2**63"]:
            calls.append("torch.%s(%s)" % (w, m))
    calls += ["torch.signal.windows.gaussian(5, std=0.)", "torch.signal.windows.gaussian(5, std=-1.)", "torch.signal.windows.exponential(5, tau=0.)",
              "torch.signal.windows.exponential(5, center=1., sym=True)", "torch.signal.windows.kaiser(5, beta=-1.)", "torch.signal.windows.kaiser(5, beta=float('nan'))",
              "torch.signal.windows.general_cosine(5, a=[])", "torch.signal.windows.general_cosine(5, a=None)", "torch.signal.windows.general_hamming(5, alpha=float('inf'))"]
    # lowrank
    for A in ["torch.randn(5,3)", "torch.randn(0,3)", "torch.randn(3,0)", "torch.randn(2,5,3)", "torch.randn(5,3,dtype=torch.float64)", "torch.randint(0,3,(5,3))",
              "torch.full((5,3), float('nan'))", "torch.randn(5)", "torch.randn(5,3,device='meta')", "torch.randn(6,4)[::2]", "torch.randn(3,5).t()"]:
        for q in ["None", "0", "1", "3", "10", "-1"]:
            calls.append("torch.svd_lowrank(%s, q=%s)" % (A, q))
            calls.append("torch.pca_lowrank(%s, q=%s)" % (A, q))
        calls.append("torch.svd_lowrank(%s, niter=-1)" % A)
        calls.append("torch.pca_lowrank(%s, center=False, niter=10**4)" % A)
        calls.append("torch.svd_lowrank(%s, M=torch.randn(5,3))" % A)
    # index_put accumulate
    for dt in ["torch.float32", "torch.float64", "torch.int64", "torch.bool", "torch.float16", "torch.int8"]:
        for idx in ["torch.tensor([0,0,-1,-1])", "torch.tensor([5])", "torch.tensor([-6])", "torch.tensor([2**62])", "torch.tensor([0.,1.])",
                    "torch.tensor([True,False,True,False,True])", "torch.tensor([True])", "torch.empty(0,dtype=torch.int64)", "torch.tensor([[0,1],[1,0]])",
                    "torch.tensor([0,1], dtype=torch.int32)", "torch.tensor([0,1], dtype=torch.uint8)", "torch.tensor([0,1], dtype=torch.int16)", "torch.tensor([0,1], device='meta')"]:
            for v in ["torch.tensor(1.)", "torch.ones(4)", "torch.ones(3)", "torch.ones(2,2)", "torch.ones(1, dtype=torch.int64)", "torch.ones(4, dtype=torch.float64)", "torch.ones(4)[::1].expand(4)"]:
                calls.append("torch.zeros(5, dtype=%s).index_put_((%s,), %s, accumulate=True)" % (dt, idx, v))
        calls.append("torch.zeros(5,3, dtype=%s).index_put_((torch.tensor([0,0,4]), torch.tensor([-1,-1,2])), torch.tensor(1, dtype=%s), accumulate=True)" % (dt, dt))
        calls.append("torch.zeros(5,3, dtype=%s).index_put_((torch.tensor([0,0,4]), torch.tensor([3,-4,2])), torch.tensor(1, dtype=%s), accumulate=True)" % (dt, dt))
        calls.append("torch.zeros(5,3, dtype=%s).t().index_put_((torch.tensor([0,0,2]),), torch.ones(5, dtype=%s), accumulate=True)" % (dt, dt))
        calls.append("torch.zeros(5,3, dtype=%s).index_put_((None, torch.tensor([0,0,2])), torch.ones(5,3, dtype=%s), accumulate=True)" % (dt, dt))
        calls.append("torch.zeros(5,3, dtype=%s).index_put_((torch.tensor([0,0]), None, torch.tensor([0])), torch.tensor(1, dtype=%s), accumulate=True)" % (dt, dt))
        calls.append("torch.zeros(5,3, dtype=%s).index_put_((), torch.tensor(1, dtype=%s), accumulate=True)" % (dt, dt))
        calls.append("torch.zeros(0,3, dtype=%s).index_put_((torch.tensor([0]),), torch.tensor(1, dtype=%s), accumulate=True)" % (dt, dt))
        calls.append("torch.zeros((), dtype=%s).index_put_((torch.tensor([0,0]),), torch.tensor(1, dtype=%s), accumulate=True)" % (dt, dt))
        calls.append("torch.zeros(5, dtype=%s).expand(3,5).index_put_((torch.tensor([0,0]),), torch.tensor(1, dtype=%s), accumulate=True)" % (dt, dt))
    # sum/mean
    S = ["torch.randn(())", "torch.randn(0)", "torch.randn(3,0,2)", "torch.randn(2,3,4,5,6)", "torch.randn(4,6)[:, ::2]", "torch.randn(4,5).t()", "torch.randn(1,1,1,1,1,1,1,1,1,1)",
         "torch.randn(100003)", "torch.randn(33, 65)", "torch.arange(12).reshape(3,4)", "torch.tensor([True, False])", "torch.randn(3).half()", "torch.randn(3, device='meta')",
         "torch.randn(5,7).expand(3,5,7)", "torch.randn(8,9,10).permute(2,0,1)", "torch.randn(2,3)+1j", "torch.randn(3).bfloat16()"]
    D = ["0", "-1", "5", "-6", "2**62", "-2**63", "(0,0)", "(0,-1)", "()", "[]", "(0,1,2,3)", "None", "'a'", "1.5", "(0, None)"]
    for op in ["sum", "mean", "nansum", "nanmean"]:
        for x in S:
            calls.append("torch.%s(%s)" % (op, x))
            for d in D:
                calls.append("torch.%s(%s, %s)" % (op, x, d))
                calls.append("torch.%s(%s, %s, keepdim=True)" % (op, x, d))
            for dt in ["torch.float64", "torch.int64", "torch.float16", "torch.bool", "torch.complex64"]:
                calls.append("torch.%s(%s, dtype=%s)" % (op, x, dt))
                calls.append("torch.%s(%s, 0, dtype=%s)" % (op, x, dt))
            for o in ["torch.empty(0)", "torch.empty(3)", "torch.empty((), dtype=torch.int64)", "torch.empty(7)[::2]", "torch.empty(1, device='meta')", "torch.empty(2, dtype=torch.float64)"]:
                calls.append("torch.%s(%s, 0, out=%s)" % (op, x, o))
                calls.append("torch.%s(%s, -1, True, dtype=torch.float64, out=%s)" % (op, x, o))
    # number_first
    for op in ["pow", "sub", "add", "mul", "div", "remainder", "fmod", "floor_divide", "true_divide", "atan2", "maximum", "bitwise_and", "eq", "lt", "rsub", "xlogy", "float_power", "ldexp", "copysign", "hypot", "logaddexp"]:
        for n in ["2", "3.5", "True", "2**63", "-2**63", "float('nan')", "1j", "None", "torch.tensor(2)"]:
            for x in T[:6] + T[8:12] + ["torch.tensor([0,1,2])", "torch.tensor([-1,0,2], dtype=torch.int8)"]:
                calls.append("torch.%s(%s, %s)" % (op, n, x))
            calls.append("torch.%s(%s, torch.randn(3), out=torch.empty(3, dtype=torch.int64))" % (op, n))
            calls.append("torch.%s(%s, torch.randn(3), alpha=2)" % (op, n))
            calls.append("torch.%s(%s, torch.randn(3), out=torch.empty(7)[::3])" % (op, n))
    # LSTM
    for H in [1, 3, 7, 9, 17]:
        for I in [1, 5]:
            for xs in ["(1,1,%d)", "(4,1,%d)", "(1,3,%d)", "(0,2,%d)", "(2,0,%d)", "(3,2,%d)"]:
                x = "torch.randn%s" % (xs % I)
                calls.append("torch.nn.LSTM(%d, %d)(%s)" % (I, H, x))
                calls.append("torch.nn.LSTM(%d, %d, num_layers=2, bidirectional=True)(%s)" % (I, H, x))
                calls.append("torch.nn.LSTM(%d, %d, batch_first=True)(%s)" % (I, H, x))
            B = 2
            calls.append("torch.nn.LSTM(%d, %d)(torch.full((3,2,%d), float('nan')))" % (I, H, I))
            calls.append("torch.nn.LSTM(%d, %d)(torch.full((3,2,%d), float('inf')))" % (I, H, I))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(2,3,%d).transpose(0,1))" % (I, H, I))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,2,%d), (torch.randn(2,1,%d).transpose(0,1), torch.randn(%d,1,2).permute(1,2,0)))" % (I, H, I, H, H))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,2,%d), (torch.randn(1,2,%d)[:, :, :], torch.randn(1,2,2*%d)[:, :, ::2]))" % (I, H, I, H, H))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,2,%d), (torch.randn(1,3,%d), torch.randn(1,2,%d)))" % (I, H, I, H, H))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,2,%d), (torch.randn(1,2,%d+1), torch.randn(1,2,%d)))" % (I, H, I, H, H))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,2,%d+1))" % (I, H, I))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,2,%d, dtype=torch.float64))" % (I, H, I))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,%d))" % (I, H, I))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(%d))" % (I, H, I))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,2,%d, device='meta'))" % (I, H, I))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,%d), (torch.randn(1,%d), torch.randn(1,%d)))" % (I, H, I, H, H))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,%d), (torch.randn(1,2,%d), torch.randn(1,2,%d)))" % (I, H, I, H, H))
            calls.append("torch.nn.LSTM(%d, %d, proj_size=1)(torch.randn(3,2,%d))" % (I, H, I))
            calls.append("torch.nn.LSTM(%d, %d)(torch.randn(3,2,%d).requires_grad_()).__getitem__(0).sum().backward()" % (I, H, I))
            calls.append("torch.nn.LSTMCell(%d, %d)(torch.randn(2,%d), (torch.randn(2,%d).t().contiguous().t(), torch.randn(%d,2).t()))" % (I, H, I, H, H))
            calls.append("torch.nn.LSTMCell(%d, %d)(torch.randn(%d))" % (I, H, I))
            calls.append("torch.nn.LSTMCell(%d, %d)(torch.randn(0,%d))" % (I, H, I))
            calls.append("torch._VF.lstm(torch.randn(3,2,%d), (torch.randn(1,2,%d), torch.randn(1,2,%d)), [torch.randn(4*%d,%d), torch.randn(4*%d,%d)], True, 1, 0.0, False, False, False)" % (I, H, H, H, I, H, H))
            calls.append("torch._VF.lstm(torch.randn(3,2,%d), (torch.randn(1,2,%d), torch.randn(1,2,%d)), [torch.randn(4*%d,%d+1), torch.randn(4*%d,%d)], False, 1, 0.0, False, False, False)" % (I, H, H, H, I, H, H))
            calls.append("torch._VF.lstm(torch.randn(3,2,%d), (torch.randn(1,2,%d), torch.randn(1,2,%d)), [torch.randn(4*%d,%d), torch.randn(4*%d,%d), torch.randn(3), torch.randn(4*%d)], True, 1, 0.0, False, False, False)" % (I, H, H, H, I, H, H, H))
            calls.append("torch._VF.lstm(torch.randn(3,2,%d), (torch.randn(1,2,%d), torch.randn(1,2,%d)), [torch.randn(4*%d,%d)], False, 1, 0.0, False, False, False)" % (I, H, H, H, I))
            calls.append("torch._VF.lstm(torch.randn(3,2,%d), (torch.randn(1,2,%d),), [torch.randn(4*%d,%d), torch.randn(4*%d,%d)], False, 1, 0.0, False, False, False)" % (I, H, H, I, H, H))
            calls.append("torch._VF.lstm(torch.randn(3,2,%d), (torch.randn(1,2,%d), torch.randn(1,2,%d)), [torch.randn(4*%d,%d), torch.randn(4*%d,%d)], False, 2, 0.0, False, False, False)" % (I, H, H, H, I, H, H))
            calls.append("torch._VF.lstm(torch.randn(3,2,%d), (torch.randn(1,2,%d), torch.randn(1,2,%d)), [torch.randn(4*%d,%d), torch.randn(4*%d,%d)], False, 0, 0.0, False, False, False)" % (I, H, H, H, I, H, H))
            calls.append("torch._VF.lstm(torch.randn(3,2,%d), (torch.randn(1,2,%d), torch.randn(1,2,%d)), [torch.randn(4*%d,%d), torch.randn(4*%d,%d)], False, -1, 0.0, False, False, False)" % (I, H, H, H, I, H, H))
            calls.append("torch._VF.lstm(torch.randn(3,2,%d), (torch.randn(1,2,%d), torch.randn(1,2,%d)), [torch.randn(4*%d,%d).t(), torch.randn(4*%d,%d)[:, :]], False, 1, 0.0, False, False, False)" % (I, H, H, I, H, H, H))
            calls.append("torch._VF.lstm_cell(torch.randn(2,%d), (torch.randn(2,%d), torch.randn(2,%d)), torch.randn(4*%d,%d), torch.randn(4*%d,%d))" % (I, H, H, H, I, H, H))
            calls.append("torch._VF.lstm_cell(torch.randn(2,%d), (torch.randn(3,%d), torch.randn(2,%d)), torch.randn(4*%d,%d), torch.randn(4*%d,%d))" % (I, H, H, H, I, H, H))
            calls.append("torch._VF.lstm_cell(torch.randn(2,%d), (torch.randn(2,%d), torch.randn(2,%d)), torch.randn(4*%d,%d+2), torch.randn(4*%d,%d))" % (I, H, H, H, I, H, H))
            calls.append("torch._VF.lstm_cell(torch.randn(2,%d), (torch.randn(2,%d), torch.randn(2,%d)), torch.randn(%d,%d), torch.randn(4*%d,%d), torch.randn(1), torch.randn(2))" % (I, H, H, H, I, H, H))
    # meta
    M = ["torch.randn(2,3,device='meta')", "torch.empty(0, device='meta')", "torch.empty((), device='meta')", "torch.randn(4,3,device='meta').t()"]
    C = ["torch.randn(2,3)", "torch.tensor(2.)", "torch.randn(3)"]
    for m in M:
        for c in C:
            for op in ["add", "mul", "matmul", "cat", "where", "maximum", "index_select", "copy_"]:
                if op == "cat":
                    calls.append("torch.cat([%s, %s])" % (m, c))
                    calls.append("torch.cat([%s, %s])" % (c, m))
                elif op == "copy_":
                    calls.append("%s.copy_(%s)" % (m, c))
                    calls.append("%s.copy_(%s)" % (c, m))
                elif op == "where":
                    calls.append("torch.where(%s > 0, %s, %s)" % (c, m, c))
                elif op == "index_select":
                    calls.append("torch.index_select(%s, 0, torch.tensor([0]))" % m)
                    calls.append("torch.index_select(%s, 0, torch.tensor([0], device='meta'))" % c)
                else:
                    calls.append("torch.%s(%s, %s)" % (op, m, c))
                    calls.append("torch.%s(%s, %s)" % (op, c, m))
        for e in ["repr(%s)", "str(%s)", "%s.tolist()", "%s.item()", "float(%s)", "%s.numpy()", "__import__('copy').deepcopy(%s)", "%s.view(-1)", "%s[0]", "%s[..., None]",
                  "%s.as_strided((2,2),(1,1))", "%s.as_strided((2,2),(1,1), 5)", "%s.unfold(0, 2, 1)", "%s.expand(3, -1, -1)", "%s.reshape(-1)", "%s.sum()", "%s.mean(0)", "%s.sort()", "%s.max()",
                  "%s.nonzero()", "%s.unique()", "%s.masked_select(%s > 0)", "torch.save(%s, __import__('io').BytesIO())", "%s.to('cpu')", "%s.cpu()", "%s.clone().requires_grad_().sum().backward()",
                  "%s.requires_grad_().exp().sum().backward()", "%s.__reduce_ex__(2)", "%s.storage()", "%s.untyped_storage()", "%s.data_ptr()", "%s.is_nonzero()", "bool(%s)", "%s[%s > 0]",
                  "%s.index_put_((torch.tensor([0]),), torch.tensor(1.), True)", "torch.nn.functional.linear(%s, torch.randn(3,3))", "torch.nn.Linear(3,3,device='meta')(%s)", "%s.set_(torch.randn(3).untyped_storage())",
                  "%s.new_tensor([1,2])", "%s.fill_(torch.tensor(1.))", "%s.equal(%s)", "%s.allclose(%s)", "torch.testing.assert_close(%s, %s)", "hash(%s)", "%s.__array__()", "%s.apply_(lambda v: v)", "%s.resize_(10)", "%s.contiguous(memory_format=torch.channels_last)"]:
            calls.append(e.replace("%s", m))
    # distributions and transforms
    D = torch_d = "torch.distributions"
    for d, a in [("Normal", "torch.zeros(3), torch.ones(3)"), ("Normal", "torch.zeros(0), torch.ones(0)"), ("Normal", "0., -1."), ("Gamma", "torch.tensor([0., -1.]), 1."), ("Beta", "torch.tensor(float('nan')), 1."),
                 ("Dirichlet", "torch.ones(0)"), ("Dirichlet", "torch.ones(())"), ("Categorical", "torch.tensor([])"), ("Categorical", "torch.tensor([0.,0.])"), ("Categorical", "logits=torch.tensor([float('inf'), 0.])"),
                 ("Multinomial", "10**12, torch.tensor([1.,1.])"), ("Multinomial", "-1, torch.tensor([1.,1.])"), ("Binomial", "torch.tensor(2**40), torch.tensor(0.5)"), ("Binomial", "torch.tensor(-1.), torch.tensor(0.5)"),
                 ("Poisson", "torch.tensor([1e30, -1., float('nan')])"), ("MultivariateNormal", "torch.zeros(2), torch.zeros(2,2)"), ("MultivariateNormal", "torch.zeros(0), torch.eye(0)"),
                 ("MultivariateNormal", "torch.zeros(2), scale_tril=torch.full((2,2), float('nan'))"), ("LowRankMultivariateNormal", "torch.zeros(2), torch.zeros(2,0), torch.ones(2)"),
                 ("Wishart", "torch.tensor(1.), torch.eye(3)"), ("Wishart", "torch.tensor(5.), torch.eye(0)"),
                 ("LKJCholesky", "1, 0.5"), ("LKJCholesky", "0, 1."), ("LKJCholesky", "3, -1."), ("Kumaraswamy", "1e-30, 1e30"), ("ContinuousBernoulli", "torch.tensor([0., 0.5, 1.])"),
                 ("RelaxedOneHotCategorical", "torch.tensor(0.), torch.tensor([0.5,0.5])"), ("Geometric", "torch.tensor([0., 1.])"), ("NegativeBinomial", "torch.tensor(1e30), torch.tensor(0.5)"),
                 ("StudentT", "torch.tensor([0., -1., 1e-30])"), ("Chi2", "torch.tensor([0.])"), ("InverseGamma", "torch.tensor(1e-30), torch.tensor(1e-30)"), ("GeneralizedPareto", "0., 1., 0."),
                 ("Weibull", "torch.tensor(1e-30), torch.tensor(1e-30)"), ("Gumbel", "0., 0."), ("HalfCauchy", "torch.tensor(0.)"), ("FisherSnedecor", "torch.tensor(1e-30), torch.tensor(1e30)"),
                 ("Uniform", "1., 0."), ("Uniform", "torch.zeros(0), torch.ones(0)"), ("OneHotCategorical", "torch.tensor([])"), ("Laplace", "0., float('inf')"), ("Pareto", "1., 1e-30"), ("LogNormal", "0., 1e30")]:
            for s in ["%s.%s(%s)", "%s.%s(%s, validate_args=False).sample()", "%s.%s(%s, validate_args=False).sample((2**40,))", "%s.%s(%s, validate_args=False).sample((0,))",
                      "%s.%s(%s, validate_args=False).rsample((3,))", "%s.%s(%s, validate_args=False).entropy()", "%s.%s(%s, validate_args=False).mean", "%s.%s(%s, validate_args=False).variance",
                      "%s.%s(%s, validate_args=False).log_prob(torch.tensor(float('nan')))", "%s.%s(%s, validate_args=False).log_prob(torch.randn(7,1,1))", "%s.%s(%s, validate_args=False).cdf(torch.tensor(0.5))",
                      "%s.%s(%s, validate_args=False).icdf(torch.tensor([0., 1., 2.]))", "%s.%s(%s, validate_args=False).enumerate_support()", "repr(%s.%s(%s, validate_args=False))",
                      "%s.%s(%s, validate_args=False).expand((2**40,))", "%s.%s(%s, validate_args=False).expand((3,)).sample()"]:
                calls.append(s % (D, d, a))
    for t in ["ExpTransform()", "SigmoidTransform()", "TanhTransform()", "SoftmaxTransform()", "StickBreakingTransform()", "LowerCholeskyTransform()", "CorrCholeskyTransform()",
              "PowerTransform(torch.tensor(-1.))", "AffineTransform(0., 0.)", "CumulativeDistributionTransform(torch.distributions.Normal(0., 1.))", "PositiveDefiniteTransform()", "SoftplusTransform()",
              "AbsTransform()", "ReshapeTransform((2,3),(3,2))", "IndependentTransform(ExpTransform(), 1)", "CatTransform([ExpTransform()], 0, [0])", "StackTransform([ExpTransform()], 0)", "ComposeTransform([])"]:
        for x in ["torch.randn(())", "torch.randn(0)", "torch.randn(2,3)", "torch.tensor([float('nan'), float('inf')])", "torch.randn(3,3)", "torch.randn(2,3,dtype=torch.float64)", "torch.randn(2,3,device='meta')"]:
            tt = "torch.distributions.transforms." + t.replace("(torch.distributions.Normal", "(torch.distributions.Normal")
            calls.append("%s(%s)" % (tt, x))
            calls.append("%s.inv(%s)" % (tt, x))
            calls.append("%s.log_abs_det_jacobian(%s, %s)" % (tt, x, x))
            calls.append("%s.forward_shape(%s.shape)" % (tt, x))
    # JIT fused
    J = "(__import__('sys').path.insert(0, %r) or __import__('fuzz_families'))" % HERE
    X = ["torch.randn(3)", "torch.randn(0)", "torch.randn(2,3)", "torch.randn(3,2).t()", "torch.randn(8)[::2]", "torch.randn(())", "torch.randn(4,1).expand(4,5)", "torch.randn(2,3,dtype=torch.float64)",
         "torch.arange(6)", "torch.tensor([True])", "torch.randn(3).half()", "torch.randn(3, device='meta')", "torch.randn(2,3,4,5,6,7,8)", "torch.randn(2,3,4).permute(2,0,1)", "torch.full((5,), float('nan'))",
         "torch.randn(100000)", "torch.randn(3)[1:]", "torch.randn(2,3).as_strided((2,3),(0,1))", "torch.randn(3)+1j", "torch.randn(3).requires_grad_()"]
    for a in X:
        calls.append("[%s.f1(%s) for _ in range(4)]" % (J, a))
        for b in X[:8] + ["2.0", "torch.tensor(2.)", "None", "torch.randn(4)"]:
            calls.append("[%s.f2(%s, %s) for _ in range(3)]" % (J, a, b))
    calls.append("[%s.f2(x, x) for x in [torch.randn(3), torch.randn(5), torch.randn(0), torch.randn(2,3), torch.randn(3,2).t(), torch.randn(7), torch.randn(3)]]" % J)
    calls.append("[%s.f1(x) for x in [torch.randn(n) for n in range(40)] + [torch.randn(n, 3).t() for n in range(10)]]" % J)
    # gradient hooks returning the wrong thing, and set_ across dtypes and devices (session 36)
    R = ["'a'", "None", "(g, g)", "[g]", "()", "torch.ones(4)", "torch.ones(3, dtype=torch.float64)", "torch.ones(3, dtype=torch.int64)",
         "torch.ones(3, device='meta')", "torch.ones(1).expand(3)", "torch.ones(3) + 1j", "g.t()", "(torch.ones(4),)", "(None,)", "('a',)", "(g[0], g[0])"]
    for r in R:
        calls.append("(lambda x: (x.register_hook(lambda g: %s), (x * 2).sum().backward(), x.grad))(torch.randn(3, requires_grad=True))" % r)
        calls.append("(lambda x: (lambda y: (y.register_hook(lambda g: %s), y.sum().backward(), x.grad))(x * 2))(torch.randn(3, requires_grad=True))" % r)
        calls.append("(lambda x: (lambda y: (y.grad_fn.register_prehook(lambda g: %s), y.sum().backward(), x.grad))(x * 2))(torch.randn(3, requires_grad=True))" % r)
        calls.append("(lambda x: (lambda y: (y.grad_fn.register_hook(lambda g, go: %s), y.sum().backward(), x.grad))(x * x))(torch.randn(3, requires_grad=True))" % r)
        calls.append("(lambda x: (x.register_post_accumulate_grad_hook(lambda g: %s), (x * 2).sum().backward(), x.grad))(torch.randn(3, requires_grad=True))" % r)
    for nr in ["1", "-1", "2**31-1"]:
        calls.append("(lambda y: (y.grad_fn._register_tensor_prehook(%s, lambda g: g), y.sum().backward()))(torch.randn(3, requires_grad=True) * 2)" % nr)
    for src in ["torch.zeros(2, dtype=torch.float64)", "torch.zeros(2, device='meta')", "torch.zeros(3, device='meta').untyped_storage()", "torch.zeros(3, dtype=torch.int8).untyped_storage()",
                "torch.zeros(2, dtype=torch.bool)", "torch.arange(6.).untyped_storage()"]:
        for x in ["torch.randn(3)", "torch.randn(3, device='meta')", "torch.randn(3, requires_grad=True)", "torch.randn(3, requires_grad=True)[:2]", "torch.randn(2, 3).t()"]:
            calls.append("(lambda x: (x.set_(%s), repr(x), x.sum()))(%s)" % (src, x))
    return calls


def main(argv=None):
    import fuzz
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds one call may take before it is a hang")
    ap.add_argument("--only", help="run only the calls containing this text")
    a = ap.parse_args(argv)
    cs = [c for c in calls() if not a.only or a.only in c]
    counts, findings = fuzz.fuzz_calls(cs, 300, a.timeout, 2048, lambda s: print(s, flush=True))
    print("\n== %d calls: %d crashes, %d hangs, %d SystemErrors" % (len(cs), counts["crash"], counts["hang"], counts["SystemError"]))
    for kind, detail, seq in findings:
        print("\n# %s: %s (%s)\n%s" % (kind, fuzz.target_of(seq[-1]), detail, fuzz.reproducer(seq)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
