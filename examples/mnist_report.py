"""What examples/mnist.py shows while and after it trains: a tqdm progress
bar per epoch (rate, ETA, live loss), TensorBoard event files (scalars per
step and epoch, the figures, a histogram of each layer's weights, the run's
hyperparameters) and matplotlib PNGs: the loss and accuracy curves per epoch
and a grid of test digits labelled with the prediction and the truth, wrong
ones in red.

tqdm, matplotlib and tensorboard are example dependencies: they are imported
here, never by cthtorch's core.
"""
import copy
import os

import cthtorch as torch


class EpochBar:
    """One epoch's progress bar, counted in images; disabled when quiet."""

    def __init__(self, epoch, total, enabled=True):
        from tqdm import tqdm
        self.bar = tqdm(total=total, desc="Epoch %d" % epoch, unit="img", unit_scale=False, dynamic_ncols=True,
                        disable=not enabled, leave=True)

    def step(self, n, loss):
        self.bar.set_postfix(loss="%.4f" % loss, refresh=False)
        self.bar.update(n)

    def close(self):
        self.bar.close()


class Report:
    """The run's TensorBoard log and its history of per-epoch numbers (kept
    in the checkpoint so --resume continues the curves)."""

    LOG_EVERY = 10   # steps between logged training losses

    def __init__(self, logdir, history=None, hparams=None):
        from cthtorch.utils.tensorboard import SummaryWriter
        self.history = history or {"epoch": [], "train_loss": [], "test_loss": [], "accuracy": [], "step": 0}
        self.logdir = logdir
        self.hparams = hparams or {}
        # resuming: events a previous run wrote after the checkpoint's step are dropped
        self.writer = SummaryWriter(logdir, purge_step=self.history["step"] or None)

    def epoch_bar(self, epoch, total, enabled):
        return EpochBar(epoch, total, enabled)

    def train_step(self, loss):
        self.history["step"] += 1
        if self.history["step"] % self.LOG_EVERY == 0:
            self.writer.add_scalar("train/loss", loss, self.history["step"])

    def epoch_end(self, epoch, train_loss, test_loss, accuracy, lr, model):
        h = self.history
        for k, v in (("epoch", epoch), ("train_loss", train_loss), ("test_loss", test_loss), ("accuracy", accuracy)):
            h[k].append(v)
        w = self.writer
        w.add_scalars("loss", {"train": train_loss, "test": test_loss}, epoch)
        w.add_scalar("test/accuracy", accuracy, epoch)
        w.add_scalar("lr", lr, epoch)
        for name, p in model.named_parameters():
            w.add_histogram("weights/" + name, p, epoch)
        w.flush()

    def finish(self, model, test_set, out_dir, device=None):
        """Writes the PNGs, logs them, the model's graph and the
        hyperparameters, closes the log; returns the PNG paths."""
        curves = os.path.join(out_dir, "loss_curve.png")
        accuracy = os.path.join(out_dir, "accuracy_curve.png")
        digits = os.path.join(out_dir, "test_digits.png")
        h = self.history
        epoch = h["epoch"][-1] if h["epoch"] else 0
        for path, fig in ((curves, loss_figure(h)), (accuracy, accuracy_figure(h)),
                          (digits, digits_figure(model, test_set, device))):
            fig.savefig(path, dpi=100)
            self.writer.add_figure(os.path.splitext(os.path.basename(path))[0], fig, epoch)
        # traced on a CPU copy: the drawing is the same, and the trace needs no GPU kernels
        on_cpu = device is None or device.type == "cpu"
        self.writer.add_graph(model if on_cpu else copy.deepcopy(model).cpu(), test_set[0][0].unsqueeze(0))
        if h["accuracy"]:
            self.writer.add_hparams(self.hparams, {"hparam/accuracy": h["accuracy"][-1],
                                                   "hparam/test_loss": h["test_loss"][-1]}, run_name="hparams")
        self.writer.close()
        return [curves, accuracy, digits]


def _figure(w, h):
    # a bare Figure drawn by the Agg canvas: no pyplot, no display, no global state
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(w, h))
    FigureCanvasAgg(fig)
    return fig


def loss_figure(h):
    fig = _figure(6.4, 4)
    ax = fig.add_subplot()
    ax.plot(h["epoch"], h["train_loss"], "o-", label="train (mean over the epoch)")
    ax.plot(h["epoch"], h["test_loss"], "s-", label="test")
    ax.set_xlabel("epoch")
    ax.set_ylabel("NLL loss")
    ax.set_title("MNIST loss per epoch")
    ax.grid(alpha=0.3)
    ax.legend()
    if h["epoch"]:
        ax.set_xticks(h["epoch"])
    fig.tight_layout()
    return fig


def accuracy_figure(h):
    fig = _figure(6.4, 4)
    ax = fig.add_subplot()
    ax.plot(h["epoch"], [100 * a for a in h["accuracy"]], "o-", color="tab:green")
    for e, a in zip(h["epoch"], h["accuracy"]):
        ax.annotate("%.2f%%" % (100 * a), (e, 100 * a), textcoords="offset points", xytext=(0, 6), ha="center")
    ax.set_xlabel("epoch")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("MNIST test accuracy per epoch")
    ax.grid(alpha=0.3)
    if h["epoch"]:
        ax.set_xticks(h["epoch"])
    fig.tight_layout()
    return fig


def digits_figure(model, test_set, device=None, rows=4, cols=8):
    """The first rows*cols test digits with 'predicted (true)' over each;
    misclassified ones in red with a red frame."""
    n = min(rows * cols, len(test_set))
    images = torch.stack([test_set[i][0] for i in range(n)])
    labels = [int(test_set[i][1]) for i in range(n)]
    model.eval()
    with torch.no_grad():
        x = images if device is None or device.type == "cpu" else images.to(device)
        preds = model(x).argmax(dim=1).cpu().tolist()
    fig = _figure(cols * 1.2, rows * 1.4)
    wrong = 0
    for i in range(n):
        ax = fig.add_subplot(rows, cols, i + 1)
        ax.imshow(images[i, 0].numpy(), cmap="gray")
        ok = preds[i] == labels[i]
        wrong += not ok
        ax.set_title("%d (%d)" % (preds[i], labels[i]), color="black" if ok else "red", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        for s in ax.spines.values():
            s.set_edgecolor("black" if ok else "red")
            s.set_linewidth(1 if ok else 3)
    fig.suptitle("test digits: predicted (true); %d of %d wrong, in red" % (wrong, n))
    fig.tight_layout()
    return fig
