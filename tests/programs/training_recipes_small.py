# Training infrastructure as pytorch/tutorials' recipes write it (BSD 3-Clause License, Copyright (c) 2017-2022,
# Pytorch contributors): saving_and_loading_a_general_checkpoint, warmstarting_model_using_parameters_from_a_
# different_model (strict=False), zeroing_out_gradients, amp_recipe on the CPU (bfloat16 autocast, GradScaler
# and its state), the torch.optim.swa_utils examples (AveragedModel, SWALR, update_bn, EMA through
# get_ema_multi_avg_fn) and the schedulers programs chain (SequentialLR, ChainedScheduler, OneCycleLR,
# CosineAnnealingWarmRestarts, ReduceLROnPlateau), whose states go through a weights_only checkpoint, and
# torch.compile(model). Prints losses and learning rates. Usage: training_recipes_small.py cthtorch|torch
import importlib
import io
import sys
torch = importlib.import_module(sys.argv[1])
nn, F, optim = torch.nn, torch.nn.functional, torch.optim
swa_utils = importlib.import_module(sys.argv[1] + ".optim.swa_utils")
lr_scheduler = optim.lr_scheduler
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(8, 16, bias=False)   # BatchNorm follows: a bias would only be noise to Adam
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


class NetB(Net):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(3, 3)

    def forward(self, x):
        return self.head(super().forward(x))


loader = [(torch.randn(16, 8), torch.randint(0, 3, (16,))) for _ in range(4)]
criterion = nn.CrossEntropyLoss()


def train_epoch(model, optimizer, scheduler=None, per_batch=False):
    total = 0.0
    for inputs, labels in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
        if per_batch:
            scheduler.step()
        total += loss.item()
    return total / len(loader)


def roundtrip(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf)   # weights_only=True, the default


# general checkpoint: model, optimizer, epoch, loss; resume and train on
net = Net()
optimizer = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for epoch in range(2):
    print("epoch", epoch, "loss", train_epoch(net, optimizer))
ck = roundtrip({"epoch": 2, "model_state_dict": net.state_dict(), "optimizer_state_dict": optimizer.state_dict(),
                "loss": 0.5})
model = Net()
optimizer2 = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
model.load_state_dict(ck["model_state_dict"])
optimizer2.load_state_dict(ck["optimizer_state_dict"])
model.train()
print("resumed", ck["epoch"], "loss", train_epoch(model, optimizer2), "same as", train_epoch(net, optimizer))

# warmstart a bigger model, strict=False
netB = NetB()
keys = netB.load_state_dict(roundtrip(model.state_dict()), strict=False)
print("missing", len(keys.missing_keys), "unexpected", len(keys.unexpected_keys))
print("warm loss", train_epoch(netB, optim.Adam(netB.parameters(), lr=1e-3)))

# schedulers people chain; every state goes through a weights_only checkpoint and resumes
for name in ("sequential", "chained", "onecycle", "warm_restarts", "lambda", "plateau"):
    torch.manual_seed(1)
    m = Net()
    opt = optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    if name == "sequential":
        sched = lr_scheduler.SequentialLR(opt, [lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=2),
                                                lr_scheduler.CosineAnnealingLR(opt, T_max=6)], milestones=[2])
    elif name == "chained":
        sched = lr_scheduler.ChainedScheduler([lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=3),
                                               lr_scheduler.ExponentialLR(opt, gamma=0.9)])
    elif name == "onecycle":
        sched = lr_scheduler.OneCycleLR(opt, max_lr=0.3, epochs=4, steps_per_epoch=len(loader))
    elif name == "warm_restarts":
        sched = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=1e-3)
    elif name == "lambda":
        sched = lr_scheduler.LambdaLR(opt, lambda e: 0.8 ** e)
    else:
        sched = lr_scheduler.ReduceLROnPlateau(opt, "min", patience=0, factor=0.5)
    for epoch in range(3):
        loss = train_epoch(m, opt, sched, per_batch=name == "onecycle")
        if name == "plateau":
            sched.step(1.0)
        elif name != "onecycle":
            sched.step()
        print(name, epoch, "loss", loss, "lr", sched.get_last_lr()[0], "momentum", opt.param_groups[0]["momentum"])
    state = roundtrip({"scheduler": sched.state_dict(), "optimizer": opt.state_dict()})
    sched.load_state_dict(state["scheduler"])
    opt.load_state_dict(state["optimizer"])
    loss = train_epoch(m, opt, sched, per_batch=name == "onecycle")
    print(name, "resumed loss", loss, "lr", opt.param_groups[0]["lr"])

# SWA: AveragedModel, SWALR after a cosine schedule, update_bn; EMA with the multi-tensor average
torch.manual_seed(2)
model = Net()
optimizer = optim.SGD(model.parameters(), lr=0.1)
swa_model = swa_utils.AveragedModel(model)
ema_model = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9))
scheduler = lr_scheduler.CosineAnnealingLR(optimizer, T_max=100)
swa_scheduler = swa_utils.SWALR(optimizer, swa_lr=0.05, anneal_epochs=2, anneal_strategy="cos")
for epoch in range(5):
    loss = train_epoch(model, optimizer)
    ema_model.update_parameters(model)
    if epoch > 1:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    else:
        scheduler.step()
    print("swa", epoch, "loss", loss, "lr", optimizer.param_groups[0]["lr"], "n", swa_model.n_averaged.item())
swa_utils.update_bn([x for x, _ in loader], swa_model)
x = loader[0][0]
swa_model.eval()
ema_model.eval()
print("swa out", swa_model(x).sum().item(), "bn mean", swa_model.module.bn.running_mean.sum().item())
print("ema out", ema_model(x).sum().item())

# AMP on the CPU: bfloat16 autocast, a GradScaler (disabled on the CPU path as the recipe's use_amp switch does)
torch.manual_seed(3)
net = Net()
opt = optim.SGD(net.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", enabled=False)
for inputs, labels in loader:
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        output = net(inputs)
        loss = criterion(output, labels)
    print("amp", output.dtype, loss.dtype)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad(set_to_none=True)
print("scaler", sorted(scaler.state_dict().items()))

# torch.compile(model): the wrapper's state_dict prefix, stripped as nanoGPT's loader does
torch.manual_seed(4)
net = Net()
cmodel = torch.compile(net)
copt = optim.AdamW(cmodel.parameters(), lr=1e-2)
print("compiled loss", train_epoch(cmodel, copt))
sd = roundtrip(cmodel.state_dict())
unwanted_prefix = "_orig_mod."
for k, v in list(sd.items()):
    if k.startswith(unwanted_prefix):
        sd[k[len(unwanted_prefix):]] = sd.pop(k)
fresh = Net()
fresh.load_state_dict(sd)
fresh.eval()
cmodel.eval()
print("compiled out", cmodel(x).sum().item(), fresh(x).sum().item())
