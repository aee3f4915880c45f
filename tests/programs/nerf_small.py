"""NeRF in small, condensed from yenchenlin/nerf-pytorch (run_nerf.py and run_nerf_helpers.py; MIT License,
Copyright (c) 2020 bmild): the positional Embedder (torch.sin/cos of 2^k frequencies from torch.linspace), the
NeRF MLP with a skip and view directions, get_rays (torch.meshgrid without indexing, its warning, and the numpy
indexing='xy' twin), ndc_rays, stratified sampling, raw2outputs (exclusive cumprod alpha compositing with
raw noise), sample_pdf (torch.searchsorted, gather) for the fine network, Adam with the hand-set exponential
learning-rate decay, img2mse/mse2psnr, and the checkpoint saved and loaded. Six iterations on a seeded 8x10
synthetic view. Prints losses, PSNRs and rendered values. Usage: nerf_small.py cthtorch|torch"""
import importlib
import io
import sys
import warnings

import numpy as np

torch = importlib.import_module(sys.argv[1])
nn, F = torch.nn, torch.nn.functional
warnings.simplefilter("ignore")
torch.manual_seed(0)
np.random.seed(0)
torch.set_printoptions(precision=6)
img2mse = lambda x, y: torch.mean((x - y) ** 2)
mse2psnr = lambda x: -10. * torch.log(x) / torch.log(torch.Tensor([10.]))
to8b = lambda x: (255 * np.clip(x, 0, 1)).astype(np.uint8)
class Embedder:
    def __init__(self, **kwargs):
        self.kwargs = kwargs; self.create_embedding_fn()
    def create_embedding_fn(self):
        embed_fns = []; d = self.kwargs['input_dims']; out_dim = 0
        if self.kwargs['include_input']:
            embed_fns.append(lambda x: x); out_dim += d
        max_freq = self.kwargs['max_freq_log2']; N_freqs = self.kwargs['num_freqs']
        if self.kwargs['log_sampling']:
            freq_bands = 2. ** torch.linspace(0., max_freq, steps=N_freqs)
        else:
            freq_bands = torch.linspace(2. ** 0., 2. ** max_freq, steps=N_freqs)
        for freq in freq_bands:
            for p_fn in self.kwargs['periodic_fns']:
                embed_fns.append(lambda x, p_fn=p_fn, freq=freq: p_fn(x * freq)); out_dim += d
        self.embed_fns = embed_fns; self.out_dim = out_dim
    def embed(self, inputs):
        return torch.cat([fn(inputs) for fn in self.embed_fns], -1)
def get_embedder(multires, i=0):
    if i == -1: return nn.Identity(), 3
    embed_kwargs = {'include_input': True, 'input_dims': 3, 'max_freq_log2': multires - 1, 'num_freqs': multires,
                    'log_sampling': True, 'periodic_fns': [torch.sin, torch.cos]}
    embedder_obj = Embedder(**embed_kwargs)
    embed = lambda x, eo=embedder_obj: eo.embed(x)
    return embed, embedder_obj.out_dim
class NeRF(nn.Module):
    def __init__(self, D=8, W=256, input_ch=3, input_ch_views=3, output_ch=4, skips=[4], use_viewdirs=False):
        super(NeRF, self).__init__()
        self.D, self.W, self.input_ch, self.input_ch_views, self.skips, self.use_viewdirs = D, W, input_ch, input_ch_views, skips, use_viewdirs
        self.pts_linears = nn.ModuleList([nn.Linear(input_ch, W)] + [nn.Linear(W, W) if i not in self.skips else nn.Linear(W + input_ch, W) for i in range(D - 1)])
        self.views_linears = nn.ModuleList([nn.Linear(input_ch_views + W, W // 2)])
        if use_viewdirs:
            self.feature_linear = nn.Linear(W, W); self.alpha_linear = nn.Linear(W, 1); self.rgb_linear = nn.Linear(W // 2, 3)
        else:
            self.output_linear = nn.Linear(W, output_ch)
    def forward(self, x):
        input_pts, input_views = torch.split(x, [self.input_ch, self.input_ch_views], dim=-1)
        h = input_pts
        for i, l in enumerate(self.pts_linears):
            h = self.pts_linears[i](h); h = F.relu(h)
            if i in self.skips: h = torch.cat([input_pts, h], -1)
        if self.use_viewdirs:
            alpha = self.alpha_linear(h); feature = self.feature_linear(h)
            h = torch.cat([feature, input_views], -1)
            for i, l in enumerate(self.views_linears):
                h = self.views_linears[i](h); h = F.relu(h)
            rgb = self.rgb_linear(h)
            outputs = torch.cat([rgb, alpha], -1)
        else:
            outputs = self.output_linear(h)
        return outputs
def get_rays(H, W, K, c2w):
    i, j = torch.meshgrid(torch.linspace(0, W - 1, W), torch.linspace(0, H - 1, H))
    i = i.t(); j = j.t()
    dirs = torch.stack([(i - K[0][2]) / K[0][0], -(j - K[1][2]) / K[1][1], -torch.ones_like(i)], -1)
    rays_d = torch.sum(dirs[..., np.newaxis, :] * c2w[:3, :3], -1)
    rays_o = c2w[:3, -1].expand(rays_d.shape)
    return rays_o, rays_d
def get_rays_np(H, W, K, c2w):
    i, j = np.meshgrid(np.arange(W, dtype=np.float32), np.arange(H, dtype=np.float32), indexing='xy')
    dirs = np.stack([(i - K[0][2]) / K[0][0], -(j - K[1][2]) / K[1][1], -np.ones_like(i)], -1)
    rays_d = np.sum(dirs[..., np.newaxis, :] * c2w[:3, :3], -1)
    rays_o = np.broadcast_to(c2w[:3, -1], np.shape(rays_d))
    return rays_o, rays_d
def ndc_rays(H, W, focal, near, rays_o, rays_d):
    t = -(near + rays_o[..., 2]) / rays_d[..., 2]
    rays_o = rays_o + t[..., None] * rays_d
    o0 = -1. / (W / (2. * focal)) * rays_o[..., 0] / rays_o[..., 2]
    o1 = -1. / (H / (2. * focal)) * rays_o[..., 1] / rays_o[..., 2]
    o2 = 1. + 2. * near / rays_o[..., 2]
    d0 = -1. / (W / (2. * focal)) * (rays_d[..., 0] / rays_d[..., 2] - rays_o[..., 0] / rays_o[..., 2])
    d1 = -1. / (H / (2. * focal)) * (rays_d[..., 1] / rays_d[..., 2] - rays_o[..., 1] / rays_o[..., 2])
    d2 = -2. * near / rays_o[..., 2]
    return torch.stack([o0, o1, o2], -1), torch.stack([d0, d1, d2], -1)
def sample_pdf(bins, weights, N_samples, det=False, pytest=False):
    weights = weights + 1e-5
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], -1)
    if det:
        u = torch.linspace(0., 1., steps=N_samples)
        u = u.expand(list(cdf.shape[:-1]) + [N_samples])
    else:
        u = torch.rand(list(cdf.shape[:-1]) + [N_samples])
    u = u.contiguous()
    inds = torch.searchsorted(cdf, u, right=True)
    below = torch.max(torch.zeros_like(inds - 1), inds - 1)
    above = torch.min((cdf.shape[-1] - 1) * torch.ones_like(inds), inds)
    inds_g = torch.stack([below, above], -1)
    matched_shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    cdf_g = torch.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
    bins_g = torch.gather(bins.unsqueeze(1).expand(matched_shape), 2, inds_g)
    denom = (cdf_g[..., 1] - cdf_g[..., 0])
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    samples = bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])
    return samples
def raw2outputs(raw, z_vals, rays_d, raw_noise_std=0, white_bkgd=False, pytest=False):
    raw2alpha = lambda raw, dists, act_fn=F.relu: 1. - torch.exp(-act_fn(raw) * dists)
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[..., :1].shape)], -1)
    dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
    rgb = torch.sigmoid(raw[..., :3])
    noise = 0.
    if raw_noise_std > 0.:
        noise = torch.randn(raw[..., 3].shape) * raw_noise_std
    alpha = raw2alpha(raw[..., 3] + noise, dists)
    weights = alpha * torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
    rgb_map = torch.sum(weights[..., None] * rgb, -2)
    depth_map = torch.sum(weights * z_vals, -1)
    disp_map = 1. / torch.max(1e-10 * torch.ones_like(depth_map), depth_map / torch.sum(weights, -1))
    acc_map = torch.sum(weights, -1)
    if white_bkgd: rgb_map = rgb_map + (1. - acc_map[..., None])
    return rgb_map, disp_map, acc_map, weights, depth_map
def batchify(fn, chunk):
    if chunk is None: return fn
    def ret(inputs): return torch.cat([fn(inputs[i:i + chunk]) for i in range(0, inputs.shape[0], chunk)], 0)
    return ret
def run_network(inputs, viewdirs, fn, embed_fn, embeddirs_fn, netchunk=1024 * 64):
    inputs_flat = torch.reshape(inputs, [-1, inputs.shape[-1]])
    embedded = embed_fn(inputs_flat)
    if viewdirs is not None:
        input_dirs = viewdirs[:, None].expand(inputs.shape)
        input_dirs_flat = torch.reshape(input_dirs, [-1, input_dirs.shape[-1]])
        embedded_dirs = embeddirs_fn(input_dirs_flat)
        embedded = torch.cat([embedded, embedded_dirs], -1)
    outputs_flat = batchify(fn, netchunk)(embedded)
    outputs = torch.reshape(outputs_flat, list(inputs.shape[:-1]) + [outputs_flat.shape[-1]])
    return outputs
embed_fn, input_ch = get_embedder(4)
embeddirs_fn, input_ch_views = get_embedder(2)
model = NeRF(D=4, W=32, input_ch=input_ch, input_ch_views=input_ch_views, output_ch=5, skips=[2], use_viewdirs=True)
model_fine = NeRF(D=4, W=32, input_ch=input_ch, input_ch_views=input_ch_views, output_ch=5, skips=[2], use_viewdirs=True)
grad_vars = list(model.parameters()) + list(model_fine.parameters())
optimizer = torch.optim.Adam(params=grad_vars, lr=5e-4, betas=(0.9, 0.999))
H, W, focal = 8, 10, 12.
K = np.array([[focal, 0, 0.5 * W], [0, focal, 0.5 * H], [0, 0, 1]])
c2w = torch.Tensor([[1, 0, 0, 0.1], [0, 0.8, -0.6, 0.2], [0, 0.6, 0.8, 4.0]])
rays_o, rays_d = get_rays(H, W, K, c2w)
ro_np, rd_np = get_rays_np(H, W, K, c2w.numpy())
print(rays_o.shape, np.allclose(rd_np, rays_d.numpy(), atol=1e-6))
ii, jj = torch.meshgrid(torch.arange(W), torch.arange(H), indexing='xy')
print(ii.shape, jj[1, :3])
rays = torch.stack([rays_o, rays_d], 0).reshape(2, -1, 3)
target = torch.rand(H * W, 3)
N_samples, N_importance = 16, 8
near, far = 2., 6.
for i in range(6):
    select = np.random.choice(H * W, size=[32], replace=False)
    select = torch.from_numpy(select).long()
    ro, rd = rays[0][select], rays[1][select]
    viewdirs = rd / torch.norm(rd, dim=-1, keepdim=True)
    t_vals = torch.linspace(0., 1., steps=N_samples)
    z_vals = near * (1. - t_vals) + far * (t_vals)
    z_vals = z_vals.expand([32, N_samples])
    mids = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
    upper = torch.cat([mids, z_vals[..., -1:]], -1)
    lower = torch.cat([z_vals[..., :1], mids], -1)
    t_rand = torch.rand(z_vals.shape)
    z_vals = lower + (upper - lower) * t_rand
    pts = ro[..., None, :] + rd[..., None, :] * z_vals[..., :, None]
    raw = run_network(pts, viewdirs, model, embed_fn, embeddirs_fn)
    rgb_map, disp_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rd, raw_noise_std=1.0)
    z_vals_mid = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
    z_samples = sample_pdf(z_vals_mid, weights[..., 1:-1], N_importance, det=False)
    z_samples = z_samples.detach()
    z_vals, _ = torch.sort(torch.cat([z_vals, z_samples], -1), -1)
    pts = ro[..., None, :] + rd[..., None, :] * z_vals[..., :, None]
    raw = run_network(pts, viewdirs, model_fine, embed_fn, embeddirs_fn)
    rgb_f, disp_f, acc_f, w_f, d_f = raw2outputs(raw, z_vals, rd)
    img_loss = img2mse(rgb_f, target[select])
    loss = img_loss + img2mse(rgb_map, target[select])
    psnr = mse2psnr(img_loss)
    optimizer.zero_grad(); loss.backward(); optimizer.step()
    decay_rate = 0.1; decay_steps = 250 * 1000
    new_lrate = 5e-4 * (decay_rate ** (i / decay_steps))
    for param_group in optimizer.param_groups: param_group['lr'] = new_lrate
    print(f"[TRAIN] Iter: {i} Loss: {loss.item()}  PSNR: {psnr.item()}")
    print("depth", depth_map.detach().sum().item(), "acc", acc_map.detach().mean().item())
print(sample_pdf(torch.linspace(0, 1, 5).expand(2, 5), torch.rand(2, 4), 6, det=True).tolist())
print(to8b(rgb_f.detach().numpy()).shape, rgb_f.detach().sum().item())
print(disp_f[:3].tolist(), acc_f[:3].tolist(), d_f[:3].tolist())
ro2, rd2 = ndc_rays(H, W, focal, 1., rays_o, rays_d)
print(ro2.sum().item(), rd2.sum().item())
buf = io.BytesIO()
torch.save({'global_step': 6, 'network_fn_state_dict': model.state_dict(), 'optimizer_state_dict': optimizer.state_dict()}, buf)
buf.seek(0)
ckpt = torch.load(buf)
optimizer.load_state_dict(ckpt['optimizer_state_dict']); model.load_state_dict(ckpt['network_fn_state_dict'])
print(ckpt['global_step'], sorted(ckpt['optimizer_state_dict']['state'])[:3])
print(torch.searchsorted(torch.tensor([1, 3, 5, 7, 9]), torch.tensor([[3, 6, 9], [3, 6, 9]]), side='right'))
print(torch.bucketize(torch.tensor([1.0, 5.0]), torch.tensor([1.0, 3.0, 5.0]), right=True), torch.searchsorted(torch.tensor([1., 2.]), 1.5))
