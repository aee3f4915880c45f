"""laiguokun/LSTNet's models/LSTNet.py (Conv2d over the window, GRU, skip-GRU over
period-strided steps, highway linear, F.sigmoid output), utils.py's Data_utility (max-normalised series,
Variable batches, torch.randperm shuffling), Optim.py (hand-written gradient-norm shrinking through
param.grad.data) and main.py's loop: MSELoss/L1Loss(size_average=False) with torch's legacy-argument warnings,
loss.data[0] (IndexError on a 0-dim tensor since torch 0.5, printed, then .item()), whole-model torch.save into
an open file and torch.load of it (refused under weights_only=True, then loaded with weights_only=False).
Prints the series statistics, losses and validation/test metrics.
Usage: lstnet_small.py cthtorch|torch

Changed from the original: the imports, argparse replaced by an Args object, a synthetic 200x4 series instead of
the data files, int() around the skip length (the Python 2 code's float division), 3 epochs, warnings printed to
stdout so both libraries' texts are compared.
LSTNet: MIT License, Copyright (c) 2017 Guokun Lai.
Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""
import importlib, sys, warnings, math, os, tempfile
import numpy as np
torch = importlib.import_module(sys.argv[1])
nn = importlib.import_module(sys.argv[1] + ".nn")
F = importlib.import_module(sys.argv[1] + ".nn.functional")
optim = importlib.import_module(sys.argv[1] + ".optim")
Variable = importlib.import_module(sys.argv[1] + ".autograd").Variable
warnings.simplefilter("always")


def _show(msg, cat, *a, **k):
    print("WARN", cat.__name__, str(msg).replace("cthtorch", "torch")[:200])
warnings.showwarning = _show


class Args: pass
args = Args()
args.cuda = False; args.window = 24; args.hidRNN = 16; args.hidCNN = 8; args.hidSkip = 4; args.CNN_kernel = 6
args.skip = 6; args.highway_window = 4; args.dropout = 0.2; args.output_fun = 'sigmoid'; args.horizon = 3
args.clip = 10.; args.lr = 0.003; args.batch_size = 16; args.epochs = 3; args.normalize = 2


def normal_std(x):
    return x.std() * np.sqrt((len(x) - 1.)/(len(x)))


class Data_utility(object):
    def __init__(self, rawdat, train, valid, cuda, horizon, window, normalize=2):
        self.cuda = cuda
        self.P = window
        self.h = horizon
        self.rawdat = rawdat
        self.dat = np.zeros(self.rawdat.shape)
        self.n, self.m = self.dat.shape
        self.normalize = 2
        self.scale = np.ones(self.m)
        self._normalized(normalize)
        self._split(int(train * self.n), int((train+valid) * self.n), self.n)
        self.scale = torch.from_numpy(self.scale).float()
        tmp = self.test[1] * self.scale.expand(self.test[1].size(0), self.m)
        if self.cuda:
            self.scale = self.scale.cuda()
        self.scale = Variable(self.scale)
        self.rse = normal_std(tmp)
        self.rae = torch.mean(torch.abs(tmp - torch.mean(tmp)))

    def _normalized(self, normalize):
        if (normalize == 2):
            for i in range(self.m):
                self.scale[i] = np.max(np.abs(self.rawdat[:, i]))
                self.dat[:, i] = self.rawdat[:, i] / np.max(np.abs(self.rawdat[:, i]))

    def _split(self, train, valid, test):
        train_set = range(self.P+self.h-1, train)
        valid_set = range(train, valid)
        test_set = range(valid, self.n)
        self.train = self._batchify(train_set, self.h)
        self.valid = self._batchify(valid_set, self.h)
        self.test = self._batchify(test_set, self.h)

    def _batchify(self, idx_set, horizon):
        n = len(idx_set)
        X = torch.zeros((n, self.P, self.m))
        Y = torch.zeros((n, self.m))
        for i in range(n):
            end = idx_set[i] - self.h + 1
            start = end - self.P
            X[i, :, :] = torch.from_numpy(self.dat[start:end, :])
            Y[i, :] = torch.from_numpy(self.dat[idx_set[i], :])
        return [X, Y]

    def get_batches(self, inputs, targets, batch_size, shuffle=True):
        length = len(inputs)
        if shuffle:
            index = torch.randperm(length)
        else:
            index = torch.LongTensor(range(length))
        start_idx = 0
        while (start_idx < length):
            end_idx = min(length, start_idx + batch_size)
            excerpt = index[start_idx:end_idx]
            X = inputs[excerpt]; Y = targets[excerpt]
            if (self.cuda):
                X = X.cuda(); Y = Y.cuda()
            yield Variable(X), Variable(Y)
            start_idx += batch_size


class Model(nn.Module):
    def __init__(self, args, data):
        super(Model, self).__init__()
        self.use_cuda = args.cuda
        self.P = args.window
        self.m = data.m
        self.hidR = args.hidRNN
        self.hidC = args.hidCNN
        self.hidS = args.hidSkip
        self.Ck = args.CNN_kernel
        self.skip = args.skip
        self.pt = (self.P - self.Ck)/self.skip
        self.hw = args.highway_window
        self.conv1 = nn.Conv2d(1, self.hidC, kernel_size=(self.Ck, self.m))
        self.GRU1 = nn.GRU(self.hidC, self.hidR)
        self.dropout = nn.Dropout(p=args.dropout)
        if (self.skip > 0):
            self.GRUskip = nn.GRU(self.hidC, self.hidS)
            self.linear1 = nn.Linear(self.hidR + self.skip * self.hidS, self.m)
        else:
            self.linear1 = nn.Linear(self.hidR, self.m)
        if (self.hw > 0):
            self.highway = nn.Linear(self.hw, 1)
        self.output = None
        if (args.output_fun == 'sigmoid'):
            self.output = F.sigmoid
        if (args.output_fun == 'tanh'):
            self.output = F.tanh

    def forward(self, x):
        batch_size = x.size(0)
        c = x.view(-1, 1, self.P, self.m)
        c = F.relu(self.conv1(c))
        c = self.dropout(c)
        c = torch.squeeze(c, 3)
        r = c.permute(2, 0, 1).contiguous()
        _, r = self.GRU1(r)
        r = self.dropout(torch.squeeze(r, 0))
        if (self.skip > 0):
            s = c[:, :, int(-self.pt * self.skip):].contiguous()
            s = s.view(batch_size, self.hidC, int(self.pt), self.skip)
            s = s.permute(2, 0, 3, 1).contiguous()
            s = s.view(int(self.pt), batch_size * self.skip, self.hidC)
            _, s = self.GRUskip(s)
            s = s.view(batch_size, self.skip * self.hidS)
            s = self.dropout(s)
            r = torch.cat((r, s), 1)
        res = self.linear1(r)
        if (self.hw > 0):
            z = x[:, -self.hw:, :]
            z = z.permute(0, 2, 1).contiguous().view(-1, self.hw)
            z = self.highway(z)
            z = z.view(-1, self.m)
            res = res + z
        if (self.output):
            res = self.output(res)
        return res


class Optim(object):
    def _makeOptimizer(self):
        if self.method == 'sgd':
            self.optimizer = optim.SGD(self.params, lr=self.lr)
        elif self.method == 'adam':
            self.optimizer = optim.Adam(self.params, lr=self.lr)

    def __init__(self, params, method, lr, max_grad_norm, lr_decay=1, start_decay_at=None):
        self.params = list(params)
        self.last_ppl = None
        self.lr = lr
        self.max_grad_norm = max_grad_norm
        self.method = method
        self.lr_decay = lr_decay
        self.start_decay_at = start_decay_at
        self.start_decay = False
        self._makeOptimizer()

    def step(self):
        grad_norm = 0
        for param in self.params:
            grad_norm += math.pow(param.grad.data.norm(), 2)
        grad_norm = math.sqrt(grad_norm)
        if grad_norm > 0:
            shrinkage = self.max_grad_norm / grad_norm
        else:
            shrinkage = 1.
        for param in self.params:
            if shrinkage < 1:
                param.grad.data.mul_(shrinkage)
        self.optimizer.step()
        return grad_norm

    def updateLearningRate(self, ppl, epoch):
        if self.start_decay_at is not None and epoch >= self.start_decay_at:
            self.start_decay = True
        if self.last_ppl is not None and ppl > self.last_ppl:
            self.start_decay = True
        if self.start_decay:
            self.lr = self.lr * self.lr_decay
            print("Decaying learning rate to %g" % self.lr)
        self.last_ppl = ppl
        self._makeOptimizer()


def evaluate(data, X, Y, model, evaluateL2, evaluateL1, batch_size):
    model.eval()
    total_loss = 0
    total_loss_l1 = 0
    n_samples = 0
    predict = None
    test = None
    for X, Y in data.get_batches(X, Y, batch_size, False):
        output = model(X)
        if predict is None:
            predict = output
            test = Y
        else:
            predict = torch.cat((predict, output))
            test = torch.cat((test, Y))
        scale = data.scale.expand(output.size(0), data.m)
        total_loss += evaluateL2(output * scale, Y * scale).item()
        total_loss_l1 += evaluateL1(output * scale, Y * scale).item()
        n_samples += (output.size(0) * data.m)
    rse = math.sqrt(total_loss / n_samples)/data.rse
    rae = (total_loss_l1/n_samples)/data.rae
    predict = predict.data.cpu().numpy()
    Ytest = test.data.cpu().numpy()
    sigma_p = (predict).std(axis=0)
    sigma_g = (Ytest).std(axis=0)
    mean_p = predict.mean(axis=0)
    mean_g = Ytest.mean(axis=0)
    index = (sigma_g != 0)
    correlation = ((predict - mean_p) * (Ytest - mean_g)).mean(axis=0)/(sigma_p * sigma_g)
    correlation = (correlation[index]).mean()
    return rse, rae, correlation


def train(data, X, Y, model, criterion, optim, batch_size):
    model.train()
    total_loss = 0
    n_samples = 0
    for X, Y in data.get_batches(X, Y, batch_size, True):
        model.zero_grad()
        output = model(X)
        scale = data.scale.expand(output.size(0), data.m)
        loss = criterion(output * scale, Y * scale)
        loss.backward()
        grad_norm = optim.step()
        try:
            total_loss += loss.data[0]
        except IndexError as e:
            print("IndexError", e)
            total_loss += loss.item()
        n_samples += (output.size(0) * data.m)
    return total_loss / n_samples


torch.manual_seed(54321)
np.random.seed(54321)
t = np.arange(200)[:, None]
raw = 2 + np.sin(t / 5.0 + np.arange(4)) + 0.1 * np.random.rand(200, 4)
Data = Data_utility(raw, 0.6, 0.2, args.cuda, args.horizon, args.window, args.normalize)
print(Data.rse, Data.rae)
model = Model(args, Data)
print(model)
nParams = sum([p.nelement() for p in model.parameters()])
print('* number of parameters: %d' % nParams)
criterion = nn.MSELoss(size_average=False)
evaluateL2 = nn.MSELoss(size_average=False)
evaluateL1 = nn.L1Loss(size_average=False)
opt = Optim(model.parameters(), 'adam', args.lr, args.clip)
best_val = 10000000
save = os.path.join(tempfile.mkdtemp(), "model.pt")
for epoch in range(1, args.epochs+1):
    train_loss = train(Data, Data.train[0], Data.train[1], model, criterion, opt, args.batch_size)
    val_loss, val_rae, val_corr = evaluate(Data, Data.valid[0], Data.valid[1], model, evaluateL2, evaluateL1,
                                           args.batch_size)
    print('| end of epoch {:3d} | train_loss {:5.4f} | valid rse {:5.4f} | valid rae {:5.4f} | valid corr  {:5.4f}'
          .format(epoch, float(train_loss), val_loss, float(val_rae), val_corr))
    if val_loss < best_val:
        with open(save, 'wb') as f:
            torch.save(model, f)
        best_val = val_loss
with open(save, 'rb') as f:
    try:
        model = torch.load(f)
    except Exception as e:
        print(type(e).__name__, str(e).split("\n")[-3][:160])
        f.seek(0)
        model = torch.load(f, weights_only=False)
test_acc, test_rae, test_corr = evaluate(Data, Data.test[0], Data.test[1], model, evaluateL2, evaluateL1,
                                         args.batch_size)
print("test rse {:5.4f} | test rae {:5.4f} | test corr {:5.4f}".format(test_acc, float(test_rae), test_corr))
# py2-era float pt: view with a float size
try:
    torch.zeros(4, 6).view(2, 12 / 1.0)
except TypeError as e:
    print("TypeError", e)
