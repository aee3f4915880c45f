"""A diagonal state-space sequence classifier in the style of state-spaces/s4's S4D
standalone layer and example.py loop: complex diagonal A (log of the negated real
part and imaginary part as parameters), a kernel from the discretised Vandermonde
product exp(dt*A)^l, convolution by rfft/irfft over 2L, GELU, Dropout1d, a 1x1
Conv1d + GLU output, post-LayerNorm residual blocks; the SSM parameters carry an
_optim dict and get their own AdamW group (lr 1e-3, no weight decay) beside the
others, with a cosine schedule; three epochs on seeded random sequences.
Prints losses, eval accuracies and the kernel's absolute sum.
Usage: s4d_small.py cthtorch|torch"""
import importlib
import math
import sys

torch = importlib.import_module(sys.argv[1])
nn, F = torch.nn, torch.nn.functional


class DiagSSMKernel(nn.Module):
    def __init__(self, d_model, n=16, dt_min=1e-3, dt_max=1e-1):
        super().__init__()
        log_dt = torch.rand(d_model) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        c = torch.randn(d_model, n // 2, dtype=torch.cfloat)
        self.C = nn.Parameter(torch.view_as_real(c))
        for name, t in (("log_dt", log_dt), ("log_A_real", torch.log(0.5 * torch.ones(d_model, n // 2))),
                        ("A_imag", math.pi * torch.arange(n // 2).float().expand(d_model, -1).clone())):
            self.register_parameter(name, nn.Parameter(t))
            setattr(getattr(self, name), "_optim", {"lr": 1e-3, "weight_decay": 0.0})

    def forward(self, length):
        dt = torch.exp(self.log_dt)
        A = -torch.exp(self.log_A_real) + 1j * self.A_imag
        dtA = A * dt.unsqueeze(-1)
        C = torch.view_as_complex(self.C) * (torch.exp(dtA) - 1.) / A
        powers = dtA.unsqueeze(-1) * torch.arange(length)
        return 2 * torch.einsum('hn,hnl->hl', C, torch.exp(powers)).real


class DiagSSM(nn.Module):
    def __init__(self, d_model, dropout):
        super().__init__()
        self.D = nn.Parameter(torch.randn(d_model))
        self.kernel = DiagSSMKernel(d_model)
        self.act, self.drop = nn.GELU(), nn.Dropout1d(dropout)
        self.out = nn.Sequential(nn.Conv1d(d_model, 2 * d_model, kernel_size=1), nn.GLU(dim=-2))

    def forward(self, u):  # (B, H, L)
        L = u.size(-1)
        k = self.kernel(L)
        y = torch.fft.irfft(torch.fft.rfft(k, n=2 * L) * torch.fft.rfft(u, n=2 * L), n=2 * L)[..., :L]
        y = y + u * self.D.unsqueeze(-1)
        return self.out(self.drop(self.act(y)))


class Classifier(nn.Module):
    def __init__(self, d_in, d_out, d_model=16, n_layers=2, dropout=0.1):
        super().__init__()
        self.encoder = nn.Linear(d_in, d_model)
        self.layers = nn.ModuleList([DiagSSM(d_model, dropout) for _ in range(n_layers)])
        self.norms = nn.ModuleList([nn.LayerNorm(d_model) for _ in range(n_layers)])
        self.decoder = nn.Linear(d_model, d_out)

    def forward(self, x):  # (B, L, d_in)
        x = self.encoder(x).transpose(-1, -2)
        for layer, norm in zip(self.layers, self.norms):
            x = norm((layer(x) + x).transpose(-1, -2)).transpose(-1, -2)
        return self.decoder(x.transpose(-1, -2).mean(dim=1))


torch.manual_seed(0)
model = Classifier(1, 4)
plain = [p for p in model.parameters() if not hasattr(p, "_optim")]
special = [p for p in model.parameters() if hasattr(p, "_optim")]
opt = torch.optim.AdamW(plain, lr=0.01, weight_decay=0.01)
opt.add_param_group({"params": special, **special[0]._optim})
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 3)
print("groups", [len(g["params"]) for g in opt.param_groups], [g["lr"] for g in opt.param_groups])
x, y = torch.randn(32, 48, 1), torch.randint(0, 4, (32,))
crit = nn.CrossEntropyLoss()
for epoch in range(3):
    model.train()
    for b in range(4):
        opt.zero_grad()
        loss = crit(model(x[b * 8:(b + 1) * 8]), y[b * 8:(b + 1) * 8])
        loss.backward()
        opt.step()
        print("epoch", epoch, "batch", b, "loss %.6f" % loss.item())
    sched.step()
    model.eval()
    with torch.no_grad():
        out = model(x)
        print("eval loss %.6f acc %d lr %.6f" % (crit(out, y).item(), (out.argmax(1) == y).sum().item(),
                                                 opt.param_groups[0]["lr"]))
print("kernel abs sum %.6f" % model.layers[0].kernel(48).abs().sum().item())
