"""szagoruyko/wide-residual-networks, pytorch/resnet.py and pytorch/utils.py (functional WRN: parameters in a flat
dict of tensors, F.conv2d / F.batch_norm on them), trained a few SGD steps as pytorch/main.py does (data_parallel
over one device id calls f directly; the optimiser is main.py's) on random 32x32 images, then a save/load
round trip of the params and optimizer state as main.py's log() writes them. nested_dict.items_flat (a
third-party package) is a small local function here. Usage: wrn_functional_small.py cthtorch|torch

BSD 2-Clause License

Copyright (c) 2016, Sergey Zagoruyko
All rights reserved.

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

* Redistributions of source code must retain the above copyright notice, this
  list of conditions and the following disclaimer.

* Redistributions in binary form must reproduce the above copyright notice,
  this list of conditions and the following disclaimer in the documentation
  and/or other materials provided with the distribution.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
"""
import importlib
import io
import sys
from functools import partial

torch = importlib.import_module(sys.argv[1])
F = torch.nn.functional
kaiming_normal_ = torch.nn.init.kaiming_normal_
SGD = torch.optim.SGD
Broadcast = importlib.import_module(sys.argv[1] + ".nn.parallel._functions").Broadcast
scatter, parallel_apply, gather = torch.nn.parallel.scatter, torch.nn.parallel.parallel_apply, torch.nn.parallel.gather


def _items_flat(d, prefix=()):
    # nested_dict(params).items_flat(): (key path, leaf) pairs
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _items_flat(v, prefix + (k,))
        else:
            yield prefix + (k,), v


# ---- utils.py
def cast(params, dtype='float'):
    if isinstance(params, dict):
        return {k: cast(v, dtype) for k,v in params.items()}
    else:
        return getattr(params.cuda() if torch.cuda.is_available() else params, dtype)()


def conv_params(ni, no, k=1):
    return kaiming_normal_(torch.Tensor(no, ni, k, k))


def linear_params(ni, no):
    return {'weight': kaiming_normal_(torch.Tensor(no, ni)), 'bias': torch.zeros(no)}


def bnparams(n):
    return {'weight': torch.rand(n),
            'bias': torch.zeros(n),
            'running_mean': torch.zeros(n),
            'running_var': torch.ones(n)}


def data_parallel(f, input, params, mode, device_ids, output_device=None):
    assert isinstance(device_ids, list)
    if output_device is None:
        output_device = device_ids[0]

    if len(device_ids) == 1:
        return f(input, params, mode)

    params_all = Broadcast.apply(device_ids, *params.values())
    params_replicas = [{k: params_all[i + j*len(params)] for i, k in enumerate(params.keys())}
                       for j in range(len(device_ids))]

    replicas = [partial(f, params=p, mode=mode)
                for p in params_replicas]
    inputs = scatter([input], device_ids)
    outputs = parallel_apply(replicas, inputs)
    return gather(outputs, output_device)


def flatten(params):
    return {'.'.join(k): v for k, v in _items_flat(params) if v is not None}
def batch_norm(x, params, base, mode):
    return F.batch_norm(x, weight=params[base + '.weight'],
                        bias=params[base + '.bias'],
                        running_mean=params[base + '.running_mean'],
                        running_var=params[base + '.running_var'],
                        training=mode)


def print_tensor_dict(params):
    kmax = max(len(key) for key in params.keys())
    for i, (key, v) in enumerate(params.items()):
        print(str(i).ljust(5), key.ljust(kmax + 3), str(tuple(v.shape)).ljust(23), torch.typename(v), v.requires_grad)


def set_requires_grad_except_bn_(params):
    for k, v in params.items():
        if not k.endswith('running_mean') and not k.endswith('running_var'):
            v.requires_grad = True


# ---- resnet.py
def resnet(depth, width, num_classes):
    assert (depth - 4) % 6 == 0, 'depth should be 6n+4'
    n = (depth - 4) // 6
    widths = [int(v * width) for v in (16, 32, 64)]

    def gen_block_params(ni, no):
        return {
            'conv0': conv_params(ni, no, 3),
            'conv1': conv_params(no, no, 3),
            'bn0': bnparams(ni),
            'bn1': bnparams(no),
            'convdim': conv_params(ni, no, 1) if ni != no else None,
        }

    def gen_group_params(ni, no, count):
        return {'block%d' % i: gen_block_params(ni if i == 0 else no, no)
                for i in range(count)}

    flat_params = cast(flatten({
        'conv0': conv_params(3, 16, 3),
        'group0': gen_group_params(16, widths[0], n),
        'group1': gen_group_params(widths[0], widths[1], n),
        'group2': gen_group_params(widths[1], widths[2], n),
        'bn': bnparams(widths[2]),
        'fc': linear_params(widths[2], num_classes),
    }))

    set_requires_grad_except_bn_(flat_params)

    def block(x, params, base, mode, stride):
        o1 = F.relu(batch_norm(x, params, base + '.bn0', mode), inplace=True)
        y = F.conv2d(o1, params[base + '.conv0'], stride=stride, padding=1)
        o2 = F.relu(batch_norm(y, params, base + '.bn1', mode), inplace=True)
        z = F.conv2d(o2, params[base + '.conv1'], stride=1, padding=1)
        if base + '.convdim' in params:
            return z + F.conv2d(o1, params[base + '.convdim'], stride=stride)
        else:
            return z + x

    def group(o, params, base, mode, stride):
        for i in range(n):
            o = block(o, params, '%s.block%d' % (base,i), mode, stride if i == 0 else 1)
        return o

    def f(input, params, mode):
        x = F.conv2d(input, params['conv0'], padding=1)
        g0 = group(x, params, 'group0', mode, 1)
        g1 = group(g0, params, 'group1', mode, 2)
        g2 = group(g1, params, 'group2', mode, 2)
        o = F.relu(batch_norm(g2, params, 'bn', mode))
        o = F.avg_pool2d(o, 8, 1, 0)
        o = o.view(o.size(0), -1)
        o = F.linear(o, params['fc.weight'], params['fc.bias'])
        return o

    return f, flat_params

# ---- main.py's training step, shrunk
torch.manual_seed(0)
f, params = resnet(10, 2, 10)
print_tensor_dict(params)
print('Total number of parameters:', sum(p.numel() for p in params.values() if p.requires_grad))
optimizer = SGD([v for v in params.values() if v.requires_grad], 0.1, momentum=0.9, weight_decay=0.0005)
inputs, targets = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))
for step in range(3):
    y = data_parallel(f, cast(inputs, 'float'), params, True, [0]).float()
    loss = F.cross_entropy(y, cast(targets, 'long'))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print('step', step, 'loss %.6f' % loss.item())
with torch.no_grad():
    y = f(inputs, params, False)
print('eval logits %.5f %.5f' % (y.sum().item(), y.abs().sum().item()))
print('running_mean', params['group0.block0.bn0.running_mean'][:4].tolist())
buf = io.BytesIO()
torch.save(dict(params=params, epoch=1, optimizer=optimizer.state_dict()), buf)
buf.seek(0)
state_dict = torch.load(buf)
for k, v in params.items():
    v.data.copy_(state_dict['params'][k])
optimizer.load_state_dict(state_dict['optimizer'])
print('reloaded epoch', state_dict['epoch'], 'momentum', optimizer.param_groups[0]['momentum'])
