"""The classic MNIST CNN (pytorch/examples' network), trained with cthtorch.

    python examples/mnist.py [--data DIR] [--epochs N] [--out DIR]
    python examples/mnist.py --world-size 2 ...        # 2 processes, DistributedDataParallel
    python -m cthtorch.distributed.run --nproc_per_node=2 examples/mnist.py ...   # the same, launched by hand

Distributed, each rank trains on its DistributedSampler shard with a
--batch-size / world-size batch, so the global batch and the number of steps
are the single-process job's; rank 0 evaluates, prints and saves.

Data: MNIST IDX files in DIR (train-* and t10k-*, gzipped or not, flat or in
DIR/MNIST/raw). With only the 10,000-image t10k set present, the first 8,000
images train and the last 2,000 test. With no MNIST files at all, it trains on
scikit-learn's 8x8 digits (shipped inside the package, upsampled to 28x28) and
says so. It prints a progress bar, per-epoch loss and test accuracy, saves a
checkpoint and a loss-curve PNG.
"""
import argparse
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


def progress(epoch, done, total, loss, width=30):
    filled = int(width * done / total)
    bar = "#" * filled + "." * (width - filled)
    sys.stdout.write("\rEpoch %d [%s] %d/%d  loss %.4f" % (epoch, bar, done, total, loss))
    sys.stdout.flush()


def train_epoch(model, loader, optimizer, epoch, log, device=None):
    model.train()
    total, seen, losses = len(loader.sampler), 0, []
    for data, target in loader:
        if device is not None and device.type != "cpu":
            data, target = data.to(device, non_blocking=True), target.to(device, non_blocking=True)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        seen += len(target)
        losses.append(loss.item())
        if log:
            progress(epoch, seen, total, losses[-1])
    if log:
        sys.stdout.write("\n")
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


def save_curve(losses, epoch_marks, path):
    from PIL import Image, ImageDraw
    w, h, m = 640, 360, 40
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    d.rectangle([m, m // 2, w - m // 2, h - m], outline="black")
    if losses:
        lo, hi = min(losses), max(losses)
        span = (hi - lo) or 1.0
        pts = [(m + (w - 1.5 * m) * i / max(len(losses) - 1, 1), (h - m) - (h - 1.5 * m) * (v - lo) / span)
               for i, v in enumerate(losses)]
        d.line(pts, fill=(31, 119, 180), width=2)
        for k in epoch_marks:
            x = m + (w - 1.5 * m) * k / max(len(losses) - 1, 1)
            d.line([(x, m // 2), (x, h - m)], fill=(200, 200, 200))
        d.text((m + 4, m // 2 + 4), "training loss %.3f .. %.3f" % (hi, lo), fill="black")
    d.text((w // 2 - 30, h - m + 12), "step", fill="black")
    img.save(path)


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
    p.add_argument("--out", default="checkpoints")
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
    losses, marks, acc = [], [], 0.0
    for epoch in range(1, args.epochs + 1):
        t0 = time.time()
        if sampler is not None:
            sampler.set_epoch(epoch)
        losses += train_epoch(model, train_loader, optimizer, epoch, not args.quiet and rank == 0, device)
        marks.append(len(losses) - 1)
        scheduler.step()
        if rank != 0:
            continue
        test_loss, acc = evaluate(net, test_loader, device)
        print("Epoch %d: train loss %.4f, test loss %.4f, test accuracy %.2f%% (%.1fs)"
              % (epoch, sum(losses[-len(train_loader):]) / len(train_loader), test_loss, 100 * acc, time.time() - t0))
    if rank == 0:
        ckpt = os.path.join(args.out, "mnist_cnn.pt")
        torch.save({"model": net.state_dict(), "optimizer": optimizer.state_dict(), "epochs": args.epochs,
                    "test_accuracy": acc}, ckpt)
        curve = os.path.join(args.out, "loss_curve.png")
        save_curve(losses, marks, curve)
        print("saved checkpoint %s and loss curve %s" % (ckpt, curve))
    if world > 1:
        dist.destroy_process_group()
    return acc


if __name__ == "__main__":
    main()
