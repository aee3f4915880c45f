"""A physics-informed network for Burgers' equation in small, after the PyTorch port of maziarraissi/PINNs
(MIT License, Copyright (c) 2018 Maziar Raissi; PyTorch port in the style of jayroxis/PINNs): an OrderedDict
Sequential of Linear+Tanh, u_t, u_x, u_xx by torch.autograd.grad with create_graph=True, LBFGS with a closure
and line_search_fn='strong_wolfe' (20 evaluations), the L-BFGS state dict; then an Adam loop on a second-order
ODE residual through grad-of-grad. Prints the losses, the relative error and the L-BFGS counters.
Usage: pinn_small.py cthtorch|torch"""
import importlib
import sys
from collections import OrderedDict

import numpy as np

torch = importlib.import_module(sys.argv[1])

np.random.seed(1234)
torch.manual_seed(1234)
device = torch.device('cpu')


class DNN(torch.nn.Module):
    def __init__(self, layers):
        super(DNN, self).__init__()
        self.depth = len(layers) - 1
        self.activation = torch.nn.Tanh
        layer_list = list()
        for i in range(self.depth - 1):
            layer_list.append(('layer_%d' % i, torch.nn.Linear(layers[i], layers[i+1])))
            layer_list.append(('activation_%d' % i, self.activation()))
        layer_list.append(('layer_%d' % (self.depth - 1), torch.nn.Linear(layers[-2], layers[-1])))
        layerDict = OrderedDict(layer_list)
        self.layers = torch.nn.Sequential(layerDict)

    def forward(self, x):
        out = self.layers(x)
        return out


class PhysicsInformedNN():
    def __init__(self, X_u, u, X_f, layers, lb, ub, nu):
        self.lb = torch.tensor(lb).float().to(device)
        self.ub = torch.tensor(ub).float().to(device)
        self.x_u = torch.tensor(X_u[:, 0:1], requires_grad=True).float().to(device)
        self.t_u = torch.tensor(X_u[:, 1:2], requires_grad=True).float().to(device)
        self.x_f = torch.tensor(X_f[:, 0:1], requires_grad=True).float().to(device)
        self.t_f = torch.tensor(X_f[:, 1:2], requires_grad=True).float().to(device)
        self.u = torch.tensor(u).float().to(device)
        self.layers = layers
        self.nu = nu
        self.dnn = DNN(layers).to(device)
        self.optimizer = torch.optim.LBFGS(
            self.dnn.parameters(),
            lr=1.0,
            max_iter=20,
            max_eval=20,
            history_size=50,
            tolerance_grad=1e-5,
            tolerance_change=1.0 * np.finfo(float).eps,
            line_search_fn="strong_wolfe"
        )
        self.iter = 0

    def net_u(self, x, t):
        u = self.dnn(torch.cat([x, t], dim=1))
        return u

    def net_f(self, x, t):
        u = self.net_u(x, t)
        u_t = torch.autograd.grad(u, t, grad_outputs=torch.ones_like(u), retain_graph=True, create_graph=True)[0]
        u_x = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), retain_graph=True, create_graph=True)[0]
        u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), retain_graph=True, create_graph=True)[0]
        f = u_t + u * u_x - self.nu * u_xx
        return f

    def loss_func(self):
        self.optimizer.zero_grad()
        u_pred = self.net_u(self.x_u, self.t_u)
        f_pred = self.net_f(self.x_f, self.t_f)
        loss_u = torch.mean((self.u - u_pred) ** 2)
        loss_f = torch.mean(f_pred ** 2)
        loss = loss_u + loss_f
        loss.backward()
        self.iter += 1
        if self.iter % 10 == 0:
            print('Iter %d, Loss: %.5e, Loss_u: %.5e, Loss_f: %.5e' % (self.iter, loss.item(), loss_u.item(), loss_f.item()))
        return loss

    def train(self):
        self.dnn.train()
        self.optimizer.step(self.loss_func)

    def predict(self, X):
        x = torch.tensor(X[:, 0:1], requires_grad=True).float().to(device)
        t = torch.tensor(X[:, 1:2], requires_grad=True).float().to(device)
        self.dnn.eval()
        u = self.net_u(x, t)
        f = self.net_f(x, t)
        u = u.detach().cpu().numpy()
        f = f.detach().cpu().numpy()
        return u, f


nu = 0.01 / np.pi
N_u, N_f = 40, 200
layers = [2, 20, 20, 20, 1]
x = np.linspace(-1, 1, 32)[:, None]
t = np.linspace(0, 0.99, 20)[:, None]
X, T = np.meshgrid(x, t)
X_star = np.hstack((X.flatten()[:, None], T.flatten()[:, None]))
u_star = (-np.sin(np.pi * X) * np.exp(-T)).flatten()[:, None]
lb, ub = X_star.min(0), X_star.max(0)
xx1 = np.hstack((X[0:1, :].T, T[0:1, :].T)); uu1 = u_star.reshape(T.shape)[0:1, :].T
xx2 = np.hstack((X[:, 0:1], T[:, 0:1])); uu2 = u_star.reshape(T.shape)[:, 0:1]
xx3 = np.hstack((X[:, -1:], T[:, -1:])); uu3 = u_star.reshape(T.shape)[:, -1:]
X_u_train = np.vstack([xx1, xx2, xx3])
X_f_train = lb + (ub - lb) * np.random.rand(N_f, 2)
X_f_train = np.vstack((X_f_train, X_u_train))
u_train = np.vstack([uu1, uu2, uu3])
idx = np.random.choice(X_u_train.shape[0], N_u, replace=False)
X_u_train = X_u_train[idx, :]
u_train = u_train[idx, :]
model = PhysicsInformedNN(X_u_train, u_train, X_f_train, layers, lb, ub, nu)
model.train()
u_pred, f_pred = model.predict(X_star)
error_u = np.linalg.norm(u_star - u_pred, 2) / np.linalg.norm(u_star, 2)
print('Error u: %e' % (error_u))
st = model.optimizer.state_dict()
print(sorted(st['state'][0].keys()), st['state'][0]['n_iter'], st['state'][0]['func_evals'], len(st['state'][0]['old_dirs']))
print(model.dnn)
# Adam variant with a closure-free loop and an MSE with grad-of-grad
net = DNN([1, 16, 1])
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
xs = torch.linspace(0, 1, 32, requires_grad=True).unsqueeze(1)
for it in range(5):
    opt.zero_grad()
    y = net(xs)
    dy = torch.autograd.grad(y.sum(), xs, create_graph=True)[0]
    d2y = torch.autograd.grad(dy, xs, torch.ones_like(dy), create_graph=True)[0]
    loss = torch.nn.functional.mse_loss(d2y + y, torch.zeros_like(y)) + (net(torch.zeros(1, 1)) - 1).pow(2).sum()
    loss.backward()
    opt.step()
    print('%.6f' % loss.item())
