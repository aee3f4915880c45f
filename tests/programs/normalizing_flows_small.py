"""karpathy/pytorch-normalizing-flows (MIT License, Copyright (c) 2019 Andrej Karpathy), condensed:
made.py's MADE with MaskedLinear masks from numpy, nflib/flows.py's AffineConstantFlow, ActNorm
(data-dependent init through .data), AffineHalfFlow (RealNVP/NICE), SlowMAF, MAF/IAF (swapped
forward/backward), Glow's Invertible1x1Conv (orthogonal_ + lu_factor/lu_unpack), spline_flows.py's
NSF_CL rational-quadratic coupling (boolean-mask assignment, gather-based searchsorted), a
NormalizingFlowModel over a MultivariateNormal prior, trained a few Adam steps per flow on seeded
two-moons data; plus the notebook's TransformedDistribution(Uniform, SigmoidTransform().inv) prior.
Prints the losses, latent moments, inverse round-trip errors and distribution values.
Usage: normalizing_flows_small.py cthtorch|torch"""
import importlib
import sys
import numpy as np
torch = importlib.import_module(sys.argv[1])
nn, F, init = torch.nn, torch.nn.functional, torch.nn.init
MultivariateNormal, TransformedDistribution = torch.distributions.MultivariateNormal, torch.distributions.TransformedDistribution
Normal, Uniform = torch.distributions.Normal, torch.distributions.Uniform
SigmoidTransform, AffineTransform = torch.distributions.transforms.SigmoidTransform, torch.distributions.transforms.AffineTransform
class MaskedLinear(nn.Linear):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias)
        self.register_buffer('mask', torch.ones(out_features, in_features))
    def set_mask(self, mask):
        self.mask.data.copy_(torch.from_numpy(mask.astype(np.uint8).T))
    def forward(self, input):
        return F.linear(input, self.mask * self.weight, self.bias)

class MADE(nn.Module):
    def __init__(self, nin, hidden_sizes, nout, num_masks=1, natural_ordering=False):
        super().__init__()
        self.nin = nin; self.nout = nout; self.hidden_sizes = hidden_sizes
        assert self.nout % self.nin == 0, "nout must be integer multiple of nin"
        self.net = []
        hs = [nin] + hidden_sizes + [nout]
        for h0, h1 in zip(hs, hs[1:]):
            self.net.extend([MaskedLinear(h0, h1), nn.ReLU()])
        self.net.pop()
        self.net = nn.Sequential(*self.net)
        self.natural_ordering = natural_ordering
        self.num_masks = num_masks
        self.seed = 0
        self.m = {}
        self.update_masks()
    def update_masks(self):
        if self.m and self.num_masks == 1: return
        L = len(self.hidden_sizes)
        rng = np.random.RandomState(self.seed)
        self.seed = (self.seed + 1) % self.num_masks
        self.m[-1] = np.arange(self.nin) if self.natural_ordering else rng.permutation(self.nin)
        for l in range(L):
            self.m[l] = rng.randint(self.m[l-1].min(), self.nin-1, size=self.hidden_sizes[l])
        masks = [self.m[l-1][:,None] <= self.m[l][None,:] for l in range(L)]
        masks.append(self.m[L-1][:,None] < self.m[-1][None,:])
        if self.nout > self.nin:
            k = int(self.nout / self.nin)
            masks[-1] = np.concatenate([masks[-1]]*k, axis=1)
        layers = [l for l in self.net.modules() if isinstance(l, MaskedLinear)]
        for l, m in zip(layers, masks):
            l.set_mask(m)
    def forward(self, x):
        return self.net(x)

class LinearMLP(nn.Module):
    def __init__(self, nin, nout, nh):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nin, nh), nn.LeakyReLU(0.2), nn.Linear(nh, nh), nn.LeakyReLU(0.2),
                                 nn.Linear(nh, nh), nn.LeakyReLU(0.2), nn.Linear(nh, nout))
    def forward(self, x): return self.net(x)
MLP = LinearMLP

class AffineConstantFlow(nn.Module):
    def __init__(self, dim, scale=True, shift=True):
        super().__init__()
        self.s = nn.Parameter(torch.randn(1, dim, requires_grad=True)) if scale else None
        self.t = nn.Parameter(torch.randn(1, dim, requires_grad=True)) if shift else None
    def forward(self, x):
        s = self.s if self.s is not None else x.new_zeros(x.size())
        t = self.t if self.t is not None else x.new_zeros(x.size())
        z = x * torch.exp(s) + t
        log_det = torch.sum(s, dim=1)
        return z, log_det
    def backward(self, z):
        s = self.s if self.s is not None else z.new_zeros(z.size())
        t = self.t if self.t is not None else z.new_zeros(z.size())
        x = (z - t) * torch.exp(-s)
        log_det = torch.sum(-s, dim=1)
        return x, log_det

class ActNorm(AffineConstantFlow):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.data_dep_init_done = False
    def forward(self, x):
        if not self.data_dep_init_done:
            assert self.s is not None and self.t is not None
            self.s.data = (-torch.log(x.std(dim=0, keepdim=True))).detach()
            self.t.data = (-(x * torch.exp(self.s)).mean(dim=0, keepdim=True)).detach()
            self.data_dep_init_done = True
        return super().forward(x)

class AffineHalfFlow(nn.Module):
    def __init__(self, dim, parity, net_class=MLP, nh=24, scale=True, shift=True):
        super().__init__()
        self.dim = dim; self.parity = parity
        self.s_cond = lambda x: x.new_zeros(x.size(0), self.dim // 2)
        self.t_cond = lambda x: x.new_zeros(x.size(0), self.dim // 2)
        if scale: self.s_cond = net_class(self.dim // 2, self.dim // 2, nh)
        if shift: self.t_cond = net_class(self.dim // 2, self.dim // 2, nh)
    def forward(self, x):
        x0, x1 = x[:,::2], x[:,1::2]
        if self.parity: x0, x1 = x1, x0
        s = self.s_cond(x0); t = self.t_cond(x0)
        z0 = x0
        z1 = torch.exp(s) * x1 + t
        if self.parity: z0, z1 = z1, z0
        z = torch.cat([z0, z1], dim=1)
        log_det = torch.sum(s, dim=1)
        return z, log_det
    def backward(self, z):
        z0, z1 = z[:,::2], z[:,1::2]
        if self.parity: z0, z1 = z1, z0
        s = self.s_cond(z0); t = self.t_cond(z0)
        x0 = z0
        x1 = (z1 - t) * torch.exp(-s)
        if self.parity: x0, x1 = x1, x0
        x = torch.cat([x0, x1], dim=1)
        log_det = torch.sum(-s, dim=1)
        return x, log_det

class SlowMAF(nn.Module):
    def __init__(self, dim, parity, net_class=MLP, nh=24):
        super().__init__()
        self.dim = dim
        self.layers = nn.ModuleDict()
        self.layers[str(0)] = LinearMLP(0 + 1, 2, nh) if False else None or nn.Linear(1, 2)
        for i in range(1, dim):
            self.layers[str(i)] = net_class(i, 2, nh)
        self.order = list(range(dim)) if parity else list(range(dim))[::-1]
    def forward(self, x):
        z = torch.zeros_like(x)
        log_det = torch.zeros(x.size(0))
        for i in range(self.dim):
            st = self.layers[str(i)](x[:, :i]) if i > 0 else self.layers[str(0)](torch.zeros(x.size(0), 1))
            s, t = st[:, 0], st[:, 1]
            z[:, self.order[i]] = x[:, i] * torch.exp(s) + t
            log_det += s
        return z, log_det

class MAF(nn.Module):
    def __init__(self, dim, parity, net_class=MADE, nh=24):
        super().__init__()
        self.dim = dim
        self.net = net_class(dim, [nh, nh, nh], 2*dim, num_masks=1, natural_ordering=True)
        self.parity = parity
    def forward(self, x):
        st = self.net(x)
        s, t = st.split(self.dim, dim=1)
        z = x * torch.exp(s) + t
        z = z.flip(dims=(1,)) if self.parity else z
        log_det = torch.sum(s, dim=1)
        return z, log_det
    def backward(self, z):
        x = torch.zeros_like(z)
        log_det = torch.zeros(z.size(0))
        z = z.flip(dims=(1,)) if self.parity else z
        for i in range(self.dim):
            st = self.net(x.clone())
            s, t = st.split(self.dim, dim=1)
            x[:, i] = (z[:, i] - t[:, i]) * torch.exp(-s[:, i])
            log_det += -s[:, i]
        return x, log_det

class IAF(MAF):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.forward, self.backward = self.backward, self.forward

class Invertible1x1Conv(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        Q = torch.nn.init.orthogonal_(torch.randn(dim, dim))
        P, L, U = torch.lu_unpack(*torch.linalg.lu_factor(Q))
        self.P = P
        self.L = nn.Parameter(L)
        self.S = nn.Parameter(U.diag())
        self.U = nn.Parameter(torch.triu(U, diagonal=1))
    def _assemble_W(self):
        L = torch.tril(self.L, diagonal=-1) + torch.diag(torch.ones(self.dim))
        U = torch.triu(self.U, diagonal=1)
        W = self.P @ L @ (U + torch.diag(self.S))
        return W
    def forward(self, x):
        W = self._assemble_W()
        z = x @ W
        log_det = torch.sum(torch.log(torch.abs(self.S)))
        return z, log_det
    def backward(self, z):
        W = self._assemble_W()
        W_inv = torch.inverse(W)
        x = z @ W_inv
        log_det = -torch.sum(torch.log(torch.abs(self.S)))
        return x, log_det

DEFAULT_MIN_BIN_WIDTH = 1e-3; DEFAULT_MIN_BIN_HEIGHT = 1e-3; DEFAULT_MIN_DERIVATIVE = 1e-3
def searchsorted(bin_locations, inputs, eps=1e-6):
    bin_locations[..., -1] += eps
    return torch.sum(inputs[..., None] >= bin_locations, dim=-1) - 1
def unconstrained_RQS(inputs, unnormalized_widths, unnormalized_heights, unnormalized_derivatives, inverse=False, tail_bound=1.,
                      min_bin_width=DEFAULT_MIN_BIN_WIDTH, min_bin_height=DEFAULT_MIN_BIN_HEIGHT, min_derivative=DEFAULT_MIN_DERIVATIVE):
    inside_intvl_mask = (inputs >= -tail_bound) & (inputs <= tail_bound)
    outside_interval_mask = ~inside_intvl_mask
    outputs = torch.zeros_like(inputs)
    logabsdet = torch.zeros_like(inputs)
    unnormalized_derivatives = F.pad(unnormalized_derivatives, pad=(1, 1))
    constant = np.log(np.exp(1 - min_derivative) - 1)
    unnormalized_derivatives[..., 0] = constant
    unnormalized_derivatives[..., -1] = constant
    outputs[outside_interval_mask] = inputs[outside_interval_mask]
    logabsdet[outside_interval_mask] = 0
    outputs[inside_intvl_mask], logabsdet[inside_intvl_mask] = RQS(
        inputs=inputs[inside_intvl_mask], unnormalized_widths=unnormalized_widths[inside_intvl_mask, :],
        unnormalized_heights=unnormalized_heights[inside_intvl_mask, :], unnormalized_derivatives=unnormalized_derivatives[inside_intvl_mask, :],
        inverse=inverse, left=-tail_bound, right=tail_bound, bottom=-tail_bound, top=tail_bound,
        min_bin_width=min_bin_width, min_bin_height=min_bin_height, min_derivative=min_derivative)
    return outputs, logabsdet
def RQS(inputs, unnormalized_widths, unnormalized_heights, unnormalized_derivatives, inverse=False, left=0., right=1., bottom=0., top=1.,
        min_bin_width=DEFAULT_MIN_BIN_WIDTH, min_bin_height=DEFAULT_MIN_BIN_HEIGHT, min_derivative=DEFAULT_MIN_DERIVATIVE):
    if torch.min(inputs) < left or torch.max(inputs) > right:
        raise ValueError("Input outside domain")
    num_bins = unnormalized_widths.shape[-1]
    widths = F.softmax(unnormalized_widths, dim=-1)
    widths = min_bin_width + (1 - min_bin_width * num_bins) * widths
    cumwidths = torch.cumsum(widths, dim=-1)
    cumwidths = F.pad(cumwidths, pad=(1, 0), mode='constant', value=0.0)
    cumwidths = (right - left) * cumwidths + left
    cumwidths[..., 0] = left; cumwidths[..., -1] = right
    widths = cumwidths[..., 1:] - cumwidths[..., :-1]
    derivatives = min_derivative + F.softplus(unnormalized_derivatives)
    heights = F.softmax(unnormalized_heights, dim=-1)
    heights = min_bin_height + (1 - min_bin_height * num_bins) * heights
    cumheights = torch.cumsum(heights, dim=-1)
    cumheights = F.pad(cumheights, pad=(1, 0), mode='constant', value=0.0)
    cumheights = (top - bottom) * cumheights + bottom
    cumheights[..., 0] = bottom; cumheights[..., -1] = top
    heights = cumheights[..., 1:] - cumheights[..., :-1]
    if inverse: bin_idx = searchsorted(cumheights, inputs)[..., None]
    else: bin_idx = searchsorted(cumwidths, inputs)[..., None]
    input_cumwidths = cumwidths.gather(-1, bin_idx)[..., 0]
    input_bin_widths = widths.gather(-1, bin_idx)[..., 0]
    input_cumheights = cumheights.gather(-1, bin_idx)[..., 0]
    delta = heights / widths
    input_delta = delta.gather(-1, bin_idx)[..., 0]
    input_derivatives = derivatives.gather(-1, bin_idx)[..., 0]
    input_derivatives_plus_one = derivatives[..., 1:].gather(-1, bin_idx)
    input_derivatives_plus_one = input_derivatives_plus_one[..., 0]
    input_heights = heights.gather(-1, bin_idx)[..., 0]
    if inverse:
        a = (((inputs - input_cumheights) * (input_derivatives + input_derivatives_plus_one - 2 * input_delta) + input_heights * (input_delta - input_derivatives)))
        b = (input_heights * input_derivatives - (inputs - input_cumheights) * (input_derivatives + input_derivatives_plus_one - 2 * input_delta))
        c = - input_delta * (inputs - input_cumheights)
        discriminant = b.pow(2) - 4 * a * c
        assert (discriminant >= 0).all()
        root = (2 * c) / (-b - torch.sqrt(discriminant))
        outputs = root * input_bin_widths + input_cumwidths
        theta_one_minus_theta = root * (1 - root)
        denominator = input_delta + ((input_derivatives + input_derivatives_plus_one - 2 * input_delta) * theta_one_minus_theta)
        derivative_numerator = input_delta.pow(2) * (input_derivatives_plus_one * root.pow(2) + 2 * input_delta * theta_one_minus_theta + input_derivatives * (1 - root).pow(2))
        logabsdet = torch.log(derivative_numerator) - 2 * torch.log(denominator)
        return outputs, -logabsdet
    else:
        theta = (inputs - input_cumwidths) / input_bin_widths
        theta_one_minus_theta = theta * (1 - theta)
        numerator = input_heights * (input_delta * theta.pow(2) + input_derivatives * theta_one_minus_theta)
        denominator = input_delta + ((input_derivatives + input_derivatives_plus_one - 2 * input_delta) * theta_one_minus_theta)
        outputs = input_cumheights + numerator / denominator
        derivative_numerator = input_delta.pow(2) * (input_derivatives_plus_one * theta.pow(2) + 2 * input_delta * theta_one_minus_theta + input_derivatives * (1 - theta).pow(2))
        logabsdet = torch.log(derivative_numerator) - 2 * torch.log(denominator)
        return outputs, logabsdet

class NSF_CL(nn.Module):
    def __init__(self, dim, K=5, B=3, hidden_dim=8, base_network=LinearMLP):
        super().__init__()
        self.dim = dim; self.K = K; self.B = B
        self.f1 = base_network(dim // 2, (3 * K - 1) * dim // 2, hidden_dim)
        self.f2 = base_network(dim // 2, (3 * K - 1) * dim // 2, hidden_dim)
    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        lower, upper = x[:, :self.dim // 2], x[:, self.dim // 2:]
        out = self.f1(lower).reshape(-1, self.dim // 2, 3 * self.K - 1)
        W, H, D = torch.split(out, self.K, dim=2)
        W, H = torch.softmax(W, dim=2), torch.softmax(H, dim=2)
        W, H = 2 * self.B * W, 2 * self.B * H
        D = F.softplus(D)
        upper, ld = unconstrained_RQS(upper, W, H, D, inverse=False, tail_bound=self.B)
        log_det += torch.sum(ld, dim=1)
        out = self.f2(upper).reshape(-1, self.dim // 2, 3 * self.K - 1)
        W, H, D = torch.split(out, self.K, dim=2)
        W, H = torch.softmax(W, dim=2), torch.softmax(H, dim=2)
        W, H = 2 * self.B * W, 2 * self.B * H
        D = F.softplus(D)
        lower, ld = unconstrained_RQS(lower, W, H, D, inverse=False, tail_bound=self.B)
        log_det += torch.sum(ld, dim=1)
        return torch.cat([lower, upper], dim=1), log_det

class NormalizingFlow(nn.Module):
    def __init__(self, flows):
        super().__init__()
        self.flows = nn.ModuleList(flows)
    def forward(self, x):
        m, _ = x.shape
        log_det = torch.zeros(m)
        zs = [x]
        for flow in self.flows:
            x, ld = flow.forward(x)
            log_det += ld
            zs.append(x)
        return zs, log_det
    def backward(self, z):
        m, _ = z.shape
        log_det = torch.zeros(m)
        xs = [z]
        for flow in self.flows[::-1]:
            z, ld = flow.backward(z)
            log_det += ld
            xs.append(z)
        return xs, log_det

class NormalizingFlowModel(nn.Module):
    def __init__(self, prior, flows):
        super().__init__()
        self.prior = prior
        self.flow = NormalizingFlow(flows)
    def forward(self, x):
        zs, log_det = self.flow.forward(x)
        prior_logprob = self.prior.log_prob(zs[-1]).view(x.size(0), -1).sum(1)
        return zs, prior_logprob, log_det
    def backward(self, z):
        xs, log_det = self.flow.backward(z)
        return xs, log_det
    def sample(self, num_samples):
        z = self.prior.sample((num_samples,))
        xs, _ = self.flow.backward(z)
        return xs

class DatasetMoons:
    def sample(self, n):
        rng = np.random.RandomState(0)
        t = rng.rand(n) * np.pi
        x = np.stack([np.cos(t), np.sin(t)], 1) + 0.1 * rng.randn(n, 2)
        return torch.from_numpy(x.astype(np.float32))

torch.manual_seed(0)
d = DatasetMoons()
prior = MultivariateNormal(torch.zeros(2), torch.eye(2))
print(prior.batch_shape, prior.event_shape)
runs = {
    'realnvp': [AffineHalfFlow(dim=2, parity=i % 2) for i in range(4)],
    'maf': [MAF(dim=2, parity=i % 2) for i in range(2)],
    'iaf': [IAF(dim=2, parity=i % 2) for i in range(2)],
    'nice+actnorm': [ActNorm(dim=2)] + [AffineHalfFlow(dim=2, parity=i % 2, scale=False) for i in range(2)],
    'glow': [x for _ in range(2) for x in (ActNorm(dim=2), Invertible1x1Conv(dim=2), AffineHalfFlow(dim=2, parity=0))],
    'nsf': [NSF_CL(dim=2, K=4, B=3, hidden_dim=8) for _ in range(2)],
    'slowmaf': [SlowMAF(dim=2, parity=i % 2, nh=8) for i in range(2)],
}
for name, flows in runs.items():
    model = NormalizingFlowModel(prior, flows)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    print(name, "number of params: ", sum(p.numel() for p in model.parameters()))
    model.train()
    for k in range(6):
        x = d.sample(64)
        zs, prior_logprob, log_det = model(x)
        logprob = prior_logprob + log_det
        loss = -torch.sum(logprob)
        model.zero_grad()
        loss.backward()
        optimizer.step()
        if k % 2 == 0:
            print(name, k, f'{loss.item():.6f}')
    model.eval()
    x = d.sample(16)
    zs, prior_logprob, _ = model(x)
    z = zs[-1]
    print(name, f'{z.mean().item():.6f}', f'{z.std().item():.6f}')
    if name not in ('nsf', 'slowmaf'):
        xs = model.sample(8)
        xback, ld = model.backward(zs[-1])
        print(name, "roundtrip_ok", bool((xback[-1] - x).abs().max().item() < 1e-3), xs[-1].shape)

# distributions API
base = TransformedDistribution(Uniform(torch.zeros(2), torch.ones(2)), [SigmoidTransform().inv, AffineTransform(torch.zeros(2), torch.ones(2))])
s = base.sample((3,))
print(s.shape, base.log_prob(s).shape, base)
lp = base.log_prob(torch.tensor([[0.1, -0.2]]))
print(lp)
mvn = MultivariateNormal(torch.tensor([1., 2.]), covariance_matrix=torch.tensor([[2., 0.3], [0.3, 1.]]))
print(mvn.log_prob(torch.tensor([[0.5, 0.5], [1., 1.]])), mvn.entropy(), mvn.scale_tril, mvn.precision_matrix, mvn.mean, mvn.variance)
print(mvn.rsample((2,)).shape, mvn.sample().shape)
n = Normal(torch.zeros(2), 1.0)
print(n.log_prob(torch.ones(2)), n)
