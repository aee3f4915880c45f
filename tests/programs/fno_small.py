"""The Fourier neural operator scripts in small (zongyi-li/fourier_neural_operator, later neuraloperator:
fourier_1d.py and fourier_2d.py, MIT License, Copyright (c) 2020 Zongyi Li): SpectralConv1d/2d with torch.cfloat weights, rfft/rfft2,
complex einsum into a zeroed complex buffer, irfft/irfft2 back; LpLoss, UnitGaussianNormalizer, count_params over
complex parameters; Adam (which steps complex weights as real pairs) with CosineAnnealingLR and StepLR, three
epochs each on seeded synthetic Burgers-like and Darcy-like data; the state dict saved and loaded with its complex
weights. Prints the losses, parameter counts and learning rates. Usage: fno_small.py cthtorch|torch"""
import importlib
import io
import operator
import sys
from functools import reduce
from timeit import default_timer

import numpy as np

torch = importlib.import_module(sys.argv[1])
nn, F = torch.nn, torch.nn.functional
torch.manual_seed(0)
np.random.seed(0)


class LpLoss(object):
    def __init__(self, d=2, p=2, size_average=True, reduction=True):
        super(LpLoss, self).__init__()
        assert d > 0 and p > 0
        self.d = d
        self.p = p
        self.reduction = reduction
        self.size_average = size_average

    def abs(self, x, y):
        num_examples = x.size()[0]
        h = 1.0 / (x.size()[1] - 1.0)
        all_norms = (h**(self.d/self.p))*torch.norm(x.view(num_examples,-1) - y.view(num_examples,-1), self.p, 1)
        if self.reduction:
            if self.size_average:
                return torch.mean(all_norms)
            else:
                return torch.sum(all_norms)
        return all_norms

    def rel(self, x, y):
        num_examples = x.size()[0]
        diff_norms = torch.norm(x.reshape(num_examples,-1) - y.reshape(num_examples,-1), self.p, 1)
        y_norms = torch.norm(y.reshape(num_examples,-1), self.p, 1)
        if self.reduction:
            if self.size_average:
                return torch.mean(diff_norms/y_norms)
            else:
                return torch.sum(diff_norms/y_norms)
        return diff_norms/y_norms

    def __call__(self, x, y):
        return self.rel(x, y)


class UnitGaussianNormalizer(object):
    def __init__(self, x, eps=0.00001):
        super(UnitGaussianNormalizer, self).__init__()
        self.mean = torch.mean(x, 0)
        self.std = torch.std(x, 0)
        self.eps = eps

    def encode(self, x):
        x = (x - self.mean) / (self.std + self.eps)
        return x

    def decode(self, x, sample_idx=None):
        if sample_idx is None:
            std = self.std + self.eps
            mean = self.mean
        else:
            if len(self.mean.shape) == len(sample_idx[0].shape):
                std = self.std[sample_idx] + self.eps
                mean = self.mean[sample_idx]
            if len(self.mean.shape) > len(sample_idx[0].shape):
                std = self.std[:,sample_idx]+ self.eps
                mean = self.mean[:,sample_idx]
        x = (x * std) + mean
        return x

    def cuda(self):
        self.mean = self.mean.cuda()
        self.std = self.std.cuda()

    def cpu(self):
        self.mean = self.mean.cpu()
        self.std = self.std.cpu()


def count_params(model):
    c = 0
    for p in list(model.parameters()):
        c += reduce(operator.mul, list(p.size()+(2,) if p.is_complex() else p.size()))
    return c


class SpectralConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, modes1):
        super(SpectralConv1d, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.modes1 = modes1
        self.scale = (1 / (in_channels*out_channels))
        self.weights1 = nn.Parameter(self.scale * torch.rand(in_channels, out_channels, self.modes1, dtype=torch.cfloat))

    def compl_mul1d(self, input, weights):
        return torch.einsum("bix,iox->box", input, weights)

    def forward(self, x):
        batchsize = x.shape[0]
        x_ft = torch.fft.rfft(x)
        out_ft = torch.zeros(batchsize, self.out_channels, x.size(-1)//2 + 1,  device=x.device, dtype=torch.cfloat)
        out_ft[:, :, :self.modes1] = self.compl_mul1d(x_ft[:, :, :self.modes1], self.weights1)
        x = torch.fft.irfft(out_ft, n=x.size(-1))
        return x


class SpectralConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, modes1, modes2):
        super(SpectralConv2d, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.modes1 = modes1
        self.modes2 = modes2
        self.scale = (1 / (in_channels * out_channels))
        self.weights1 = nn.Parameter(self.scale * torch.rand(in_channels, out_channels, self.modes1, self.modes2, dtype=torch.cfloat))
        self.weights2 = nn.Parameter(self.scale * torch.rand(in_channels, out_channels, self.modes1, self.modes2, dtype=torch.cfloat))

    def compl_mul2d(self, input, weights):
        return torch.einsum("bixy,ioxy->boxy", input, weights)

    def forward(self, x):
        batchsize = x.shape[0]
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(batchsize, self.out_channels,  x.size(-2), x.size(-1)//2 + 1, dtype=torch.cfloat, device=x.device)
        out_ft[:, :, :self.modes1, :self.modes2] = \
            self.compl_mul2d(x_ft[:, :, :self.modes1, :self.modes2], self.weights1)
        out_ft[:, :, -self.modes1:, :self.modes2] = \
            self.compl_mul2d(x_ft[:, :, -self.modes1:, :self.modes2], self.weights2)
        x = torch.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))
        return x


class FNOLayers(nn.Module):
    """What FNO1d and FNO2d share (each script spells it out in full): the lift, two Fourier layers (spectral
    conv + 1x1 conv, GELU between) and the projection, created in the scripts' order (the same initial weights)."""
    def __init__(self, in_features, width, spectral, pointwise):
        super().__init__()
        self.width = width
        self.padding = 2
        self.fc0 = nn.Linear(in_features, self.width)
        self.conv0 = spectral()
        self.conv1 = spectral()
        self.w0 = pointwise(self.width, self.width, 1)
        self.w1 = pointwise(self.width, self.width, 1)
        self.fc1 = nn.Linear(self.width, 32)
        self.fc2 = nn.Linear(32, 1)

    def fourier_layers(self, x):
        x1 = self.conv0(x)
        x2 = self.w0(x)
        x = F.gelu(x1 + x2)
        return self.conv1(x) + self.w1(x)

    def project(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class FNO1d(FNOLayers):
    def __init__(self, modes, width):
        super(FNO1d, self).__init__(2, width, lambda: SpectralConv1d(width, width, modes), nn.Conv1d)
        self.modes1 = modes

    def forward(self, x):
        grid = self.get_grid(x.shape, x.device)
        x = torch.cat((x, grid), dim=-1)
        x = self.fc0(x)
        x = x.permute(0, 2, 1)
        x = self.fourier_layers(x)
        x = x.permute(0, 2, 1)
        return self.project(x)

    def get_grid(self, shape, device):
        batchsize, size_x = shape[0], shape[1]
        gridx = torch.tensor(np.linspace(0, 1, size_x), dtype=torch.float)
        gridx = gridx.reshape(1, size_x, 1).repeat([batchsize, 1, 1])
        return gridx.to(device)


class FNO2d(FNOLayers):
    def __init__(self, modes1, modes2,  width):
        super(FNO2d, self).__init__(3, width, lambda: SpectralConv2d(width, width, modes1, modes2), nn.Conv2d)
        self.modes1 = modes1
        self.modes2 = modes2

    def forward(self, x):
        grid = self.get_grid(x.shape, x.device)
        x = torch.cat((x, grid), dim=-1)
        x = self.fc0(x)
        x = x.permute(0, 3, 1, 2)
        x = F.pad(x, [0,self.padding, 0,self.padding])
        x = self.fourier_layers(x)
        x = x[..., :-self.padding, :-self.padding]
        x = x.permute(0, 2, 3, 1)
        return self.project(x)

    def get_grid(self, shape, device):
        batchsize, size_x, size_y = shape[0], shape[1], shape[2]
        gridx = torch.tensor(np.linspace(0, 1, size_x), dtype=torch.float)
        gridx = gridx.reshape(1, size_x, 1, 1).repeat([batchsize, 1, size_y, 1])
        gridy = torch.tensor(np.linspace(0, 1, size_y), dtype=torch.float)
        gridy = gridy.reshape(1, 1, size_y, 1).repeat([batchsize, size_x, 1, 1])
        return torch.cat((gridx, gridy), dim=-1).to(device)


# ---- 1d (Burgers) ----
ntrain, ntest, s = 16, 4, 32
x_data = torch.from_numpy(np.random.randn(ntrain + ntest, s).astype(np.float32))
y_data = torch.cumsum(x_data, dim=1) / s
x_train, y_train = x_data[:ntrain].reshape(ntrain, s, 1), y_data[:ntrain]
x_test, y_test = x_data[-ntest:].reshape(ntest, s, 1), y_data[-ntest:]
train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train), batch_size=4, shuffle=True)
test_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_test, y_test), batch_size=4, shuffle=False)
model = FNO1d(6, 16)
print(count_params(model))
optimizer = torch.optim.Adam(model.parameters(), lr=0.001, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=3 * 4)
myloss = LpLoss(size_average=False)
for ep in range(3):
    model.train()
    train_mse = 0
    train_l2 = 0
    for x, y in train_loader:
        optimizer.zero_grad()
        out = model(x)
        mse = F.mse_loss(out.view(4, -1), y.view(4, -1), reduction='mean')
        l2 = myloss(out.view(4, -1), y.view(4, -1))
        l2.backward()
        optimizer.step()
        scheduler.step()
        train_mse += mse.item()
        train_l2 += l2.item()
    model.eval()
    test_l2 = 0.0
    with torch.no_grad():
        for x, y in test_loader:
            out = model(x)
            test_l2 += myloss(out.view(4, -1), y.view(4, -1)).item()
    train_mse /= len(train_loader)
    print(ep, "%.6f %.6f %.6f" % (train_mse, train_l2 / ntrain, test_l2 / ntest))

# ---- 2d (Darcy) ----
ntrain, ntest, r = 8, 4, 16
a = torch.rand(ntrain + ntest, r, r)
u = torch.sin(3 * a) + a ** 2
x_train, y_train = a[:ntrain], u[:ntrain]
x_test, y_test = a[-ntest:], u[-ntest:]
x_normalizer = UnitGaussianNormalizer(x_train)
x_train = x_normalizer.encode(x_train)
x_test = x_normalizer.encode(x_test)
y_normalizer = UnitGaussianNormalizer(y_train)
y_train = y_normalizer.encode(y_train)
x_train = x_train.reshape(ntrain, r, r, 1)
x_test = x_test.reshape(ntest, r, r, 1)
train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train), batch_size=4, shuffle=True)
test_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_test, y_test), batch_size=4, shuffle=False)
model = FNO2d(4, 4, 8)
print(count_params(model))
optimizer = torch.optim.Adam(model.parameters(), lr=0.001, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
myloss = LpLoss(size_average=False)
for ep in range(3):
    model.train()
    t1 = default_timer()
    train_l2 = 0
    for x, y in train_loader:
        optimizer.zero_grad()
        out = model(x).reshape(4, r, r)
        out = y_normalizer.decode(out)
        y = y_normalizer.decode(y)
        loss = myloss(out.view(4, -1), y.view(4, -1))
        loss.backward()
        optimizer.step()
        train_l2 += loss.item()
    scheduler.step()
    model.eval()
    test_l2 = 0.0
    with torch.no_grad():
        for x, y in test_loader:
            out = model(x).reshape(4, r, r)
            out = y_normalizer.decode(out)
            test_l2 += myloss(out.view(4, -1), y.view(4, -1)).item()
    t2 = default_timer()
    print(ep, "%.6f %.6f" % (train_l2 / ntrain, test_l2 / ntest), scheduler.get_last_lr())
print(model.conv0.weights1.dtype, model.conv0.weights1.grad.dtype, model.conv0.weights1.shape)
buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
sd = torch.load(buf)
print(sd["conv0.weights1"].dtype, torch.equal(sd["conv0.weights1"], model.conv0.weights1))
print("%.6f" % model.conv0.weights1.abs().sum().item(), "%.6f" % model.conv1.weights2.angle().sum().item())
