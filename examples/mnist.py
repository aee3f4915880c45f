"""The classic MNIST CNN (pytorch/examples' network), trained with cthtorch.

    python examples/mnist.py [--data DIR] [--epochs N] [--out DIR] [--logdir DIR] [--resume] [--onnx PATH]
    python examples/mnist.py --world-size 2 ...        # 2 processes, DistributedDataParallel
    python -m cthtorch.distributed.run --nproc_per_node=2 examples/mnist.py ...   # the same, launched by hand

Distributed, each rank trains on its DistributedSampler shard with a
--batch-size / world-size batch, so the global batch and the number of steps
are the single-process job's; rank 0 evaluates, prints and saves.

Data: MNIST IDX files in DIR (train-* and t10k-*, gzipped or not, flat or in
DIR/MNIST/raw). With only the 10,000-image t10k set present, the first 8,000
images train and the last 2,000 test. With no MNIST files at all, it trains on
scikit-learn's 8x8 digits (shipped inside the package, upsampled to 28x28) and
says so. It shows a tqdm progress bar, prints per-epoch loss and test
accuracy, saves a checkpoint after each epoch (--resume continues from it),
logs to TensorBoard under --logdir (default OUT/runs) and ends with
matplotlib PNGs in OUT: loss and accuracy curves per epoch and a grid of test
digits with predicted and true labels (examples/mnist_report.py); the
model's graph goes to TensorBoard too, and --onnx PATH exports the trained
model to ONNX.
"""
import argparse
import copy
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import cthtorch as torch  # noqa: E402
import cthtorch.nn as nn  # noqa: E402
import cthtorch.nn.functional as F  # noqa: E402
import cthtorch.optim as optim  # noqa: E402
from cthtorch.optim.lr_scheduler import StepLR  # noqa: E402
from cthtorch.utils.data import DataLoader, Subset, TensorDataset  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mnist_report import EpochBar, Report  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def find_mnist(root):
    from cthtorch.vision.datasets.mnist import MNIST
    found = {}
    for train in (True, False):
        try:
            ds = MNIST(root, train=train)
            found[train] = ds
        except RuntimeError:
            pass
    return found


def normalize(images_uint8):
    x = images_uint8.float().div(255.0).unsqueeze(1)
    return (x - 0.1307) / 0.3081


def load_data(root, limit_train=None):
    found = find_mnist(root)
    if True in found and False in found:
        tr, te = found[True], found[False]
        train = TensorDataset(normalize(tr.data), tr.targets)
        test = TensorDataset(normalize(te.data), te.targets)
        source = "MNIST from %s (train %d, test %d images)" % (root, len(train), len(test))
    elif found:
        ds = next(iter(found.values()))
        x, y = normalize(ds.data), ds.targets
        n = len(y)
        cut = int(n * 0.8)
        train = TensorDataset(x[:cut], y[:cut])
        test = TensorDataset(x[cut:], y[cut:])
        source = "MNIST %s set from %s: first %d images train, last %d test" % (
            "train" if True in found else "t10k", root, cut, n - cut)
    else:
        from sklearn.datasets import load_digits
        d = load_digits()
        imgs = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
        imgs = F.interpolate(imgs, size=(28, 28), mode="bilinear", align_corners=False)
        x = (imgs - imgs.mean()) / imgs.std()
        y = torch.tensor(d.target, dtype=torch.int64)
        g = torch.Generator().manual_seed(0)
        perm = torch.randperm(len(y), generator=g)
        x, y = x[perm], y[perm]
        cut = int(len(y) * 0.8)
        train, test = TensorDataset(x[:cut], y[:cut]), TensorDataset(x[cut:], y[cut:])
        source = ("no MNIST files in %s: using scikit-learn's 8x8 digits upsampled to 28x28 (train %d, test %d)"
                  % (root, cut, len(y) - cut))
    if limit_train:
        train = Subset(train, list(range(min(limit_train, len(train)))))
    return train, test, source


def train_epoch(model, loader, optimizer, epoch, log, device=None, report=None):
    model.train()
    losses = []
    bar = EpochBar(epoch, len(loader.sampler), log)   # the sampler: a rank's shard when distributed
    for data, target in loader:
        if device is not None and device.type != "cpu":
            data, target = data.to(device, non_blocking=True), target.to(device, non_blocking=True)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        bar.step(len(target), losses[-1])
        if report is not None:
            report.train_step(losses[-1])
    bar.close()
    return losses


def evaluate(model, loader, device=None):
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            if device is not None and device.type != "cpu":
                data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    n = len(loader.dataset)
    return test_loss / n, correct / n


def checkpoint_path(args):
    return os.path.join(args.out, "mnist_cnn.pt")


def save_checkpoint(args, model, optimizer, scheduler, epoch, acc, history):
    """After every epoch, so an interrupted run can --resume."""
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epochs": epoch, "test_accuracy": acc,
                "history": history}, checkpoint_path(args))


def resume(args, model, optimizer, scheduler):
    """Loads --resume's checkpoint (default OUT/mnist_cnn.pt) into the model,
    optimizer and scheduler; returns (epochs done, history, accuracy)."""
    path = checkpoint_path(args) if args.resume == "auto" else args.resume
    if not os.path.exists(path):
        sys.exit("--resume: no checkpoint at %s" % path)
    ck = torch.load(path, map_location="cpu")   # load_state_dict moves it to the model's device
    model.load_state_dict(ck["model"])
    optimizer.load_state_dict(ck["optimizer"])
    if "scheduler" in ck:
        scheduler.load_state_dict(ck["scheduler"])
    print("resumed from %s after epoch %d (test accuracy %.2f%%)" % (path, ck["epochs"], 100 * ck["test_accuracy"]))
    return ck["epochs"], ck.get("history"), ck["test_accuracy"]


def relaunch(world_size, argv):
    """--world-size N outside a launcher: run this script again as N ranks."""
    import subprocess
    args = [a for a in (sys.argv[1:] if argv is None else argv)]
    cmd = [sys.executable, "-m", "cthtorch.distributed.run", "--standalone", "--nproc_per_node=%d" % world_size,
           os.path.abspath(__file__)] + args
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root] + [x for x in [os.environ.get("PYTHONPATH")] if x]))
    code = subprocess.call(cmd, env=env)
    if code:
        sys.exit(code)


def main(argv=None):
    p = argparse.ArgumentParser(description="cthtorch MNIST example")
    p.add_argument("--data", default="./data", help="folder with MNIST IDX files (default ./data)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--test-batch-size", type=int, default=1000)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=1.0)
    p.add_argument("--gamma", type=float, default=0.7)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit-train", type=int, default=0, help="use only the first N training images")
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--out", default="checkpoints", help="checkpoint and figures folder (default checkpoints)")
    p.add_argument("--logdir", default=None, help="TensorBoard log folder (default OUT/runs)")
    p.add_argument("--resume", nargs="?", const="auto", default=None, metavar="CHECKPOINT",
                   help="continue from a checkpoint (default OUT/mnist_cnn.pt) up to --epochs")
    p.add_argument("--onnx", default=None, metavar="PATH",
                   help="also export the trained model to ONNX at PATH (batch size left dynamic)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--device", default=None, help="cpu or cuda[:N] (default: cuda when a GPU is present, else cpu)")
    p.add_argument("--world-size", type=int, default=1,
                   help="train with N processes (DistributedDataParallel); started through cthtorch.distributed.run")
    args = p.parse_args(argv)
    launched = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if args.world_size > 1 and not launched:
        return relaunch(args.world_size, argv)
    rank, world = 0, 1
    if launched:
        import cthtorch.distributed as dist
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.manual_seed(args.seed)
    train, test, source = load_data(args.data, args.limit_train)
    if rank == 0:
        print("data:", source + ("; %d processes, DistributedDataParallel" % world if world > 1 else ""))
    pin = device.type == "cuda"
    if world > 1:
        from cthtorch.utils.data.distributed import DistributedSampler
        sampler = DistributedSampler(train, seed=args.seed)
        train_loader = DataLoader(train, batch_size=max(1, args.batch_size // world), sampler=sampler,
                                  num_workers=args.workers, pin_memory=pin)
    else:
        sampler = None
        train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                                  pin_memory=pin)
    test_loader = DataLoader(test, batch_size=args.test_batch_size, pin_memory=pin)
    net = model = Net().to(device)
    if world > 1:
        model = nn.parallel.DistributedDataParallel(net)   # starts from rank 0's weights
    if device.type != "cpu" and rank == 0:
        print("device:", device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    os.makedirs(args.out, exist_ok=True)
    # the checkpoint holds the bare net's weights (no DDP "module." prefix)
    done, history, acc = resume(args, net, optimizer, scheduler) if args.resume else (0, None, 0.0)
    logdir = args.logdir or os.path.join(args.out, "runs")
    report = Report(logdir, history, {"lr": args.lr, "gamma": args.gamma, "batch_size": args.batch_size,
                                      "epochs": args.epochs, "seed": args.seed}) if rank == 0 else None
    for epoch in range(done + 1, args.epochs + 1):
        t0 = time.time()
        if sampler is not None:
            sampler.set_epoch(epoch)
        losses = train_epoch(model, train_loader, optimizer, epoch, not args.quiet and rank == 0, device, report)
        lr = optimizer.param_groups[0]["lr"]
        scheduler.step()
        if rank != 0:   # rank 0 alone evaluates, reports and saves
            continue
        test_loss, acc = evaluate(net, test_loader, device)
        train_loss = sum(losses) / len(losses)
        print("Epoch %d: train loss %.4f, test loss %.4f, test accuracy %.2f%% (%.1fs)"
              % (epoch, train_loss, test_loss, 100 * acc, time.time() - t0))
        report.epoch_end(epoch, train_loss, test_loss, acc, lr, net)
        save_checkpoint(args, net, optimizer, scheduler, epoch, acc, report.history)
    if rank == 0:
        figures = report.finish(net, test, args.out, device)
        print("checkpoint: %s" % checkpoint_path(args))
        print("figures:    %s" % "\n            ".join(figures))
        print("TensorBoard logs: %s  (view: tensorboard --logdir %s)" % (logdir, logdir))
        if args.onnx:
            # exported from a CPU copy: the file is the same, and the trace needs no GPU kernels
            cpu_net = net if device.type == "cpu" else copy.deepcopy(net).cpu()
            torch.onnx.export(cpu_net, (test[0][0].unsqueeze(0),), args.onnx, input_names=["image"], output_names=["log_probs"],
                              dynamic_axes={"image": {0: "batch"}, "log_probs": {0: "batch"}})
            print("ONNX model: %s" % args.onnx)
    if world > 1:
        dist.destroy_process_group()
    return acc


if __name__ == "__main__":
    main()
