"""A graph attention network in the style of gordicaleksa/pytorch-GAT: the
edge-list layer (scores lifted onto edges with index_select, a neighbourhood
softmax whose denominators are summed with scatter_add_, messages scattered
back to their target nodes) and the dense layer (an N x N -inf connectivity
mask added before softmax, bmm aggregation), each two layers deep with 8 heads,
ELU, dropout 0.6 and Adam with weight decay, trained 25 epochs on a seeded
random graph; then a three-layer skip-connected multi-label model under
BCEWithLogitsLoss. Prints losses, accuracies and attention sums.
Usage: gat_small.py cthtorch|torch"""
import importlib
import sys
import warnings

import numpy as np

torch = importlib.import_module(sys.argv[1])
nn = torch.nn
warnings.simplefilter("ignore")


class GATLayer(nn.Module):
    def __init__(self, fin, fout, heads, concat, act, dense, skip=False, dropout=0.6):
        super().__init__()
        self.heads, self.fout, self.concat, self.dense = heads, fout, concat, dense
        self.proj = nn.Linear(fin, heads * fout, bias=False)
        self.a_src = nn.Parameter(torch.Tensor(1, heads, fout))
        self.a_dst = nn.Parameter(torch.Tensor(1, heads, fout))
        self.bias = nn.Parameter(torch.Tensor(heads * fout if concat else fout))
        self.skip = nn.Linear(fin, heads * fout, bias=False) if skip else None
        self.leaky, self.act, self.drop = nn.LeakyReLU(0.2), act, nn.Dropout(p=dropout)
        nn.init.xavier_uniform_(self.proj.weight)
        nn.init.xavier_uniform_(self.a_src)
        nn.init.xavier_uniform_(self.a_dst)
        nn.init.zeros_(self.bias)
        self.attention = None

    def edge_attention(self, h, s_src, s_dst, edges):
        src, dst = edges[0], edges[1]
        e = self.leaky(s_src.index_select(0, src) + s_dst.index_select(0, dst))       # (E, H)
        e = (e - e.max()).exp()
        denom = torch.zeros(h.shape[0], self.heads, dtype=e.dtype).scatter_add_(
            0, dst.unsqueeze(-1).expand_as(e), e)
        att = self.drop(e / (denom.index_select(0, dst) + 1e-16)).unsqueeze(-1)      # (E, H, 1)
        msg = h.index_select(0, src) * att
        out = torch.zeros(h.shape[0], self.heads, self.fout, dtype=h.dtype)
        out.index_add_(0, dst, msg)
        return out, att

    def dense_attention(self, h, s_src, s_dst, mask):
        scores = self.leaky(s_src.t().unsqueeze(-1) + s_dst.t().unsqueeze(1))        # (H, N, N): [h, i, j]
        att = self.drop(torch.softmax(scores.transpose(1, 2) + mask, dim=-1))       # row i attends over j
        return torch.bmm(att, h.transpose(0, 1)).transpose(0, 1), att

    def forward(self, data):
        x, topo = data
        x = self.drop(x)
        h = self.drop(self.proj(x).view(-1, self.heads, self.fout))
        s_src, s_dst = (h * self.a_src).sum(-1), (h * self.a_dst).sum(-1)            # (N, H)
        attend = self.dense_attention if self.dense else self.edge_attention
        out, self.attention = attend(h, s_src, s_dst, topo)
        if self.skip is not None:
            out = out + self.skip(x).view(-1, self.heads, self.fout)
        out = out.reshape(-1, self.heads * self.fout) if self.concat else out.mean(dim=1)
        out = out + self.bias
        return (out if self.act is None else self.act(out), topo)


def gat(fin, feats, heads, dense, skip=False, dropout=0.6):
    heads = [1] + heads
    layers = [GATLayer(feats[i] * heads[i] if i else fin, feats[i + 1], heads[i + 1], i < len(feats) - 2,
                       nn.ELU() if i < len(feats) - 2 else None, dense, skip, dropout) for i in range(len(feats) - 1)]
    return nn.Sequential(*layers)


rng = np.random.RandomState(0)
N, FIN, C = 100, 32, 5
feats = rng.rand(N, FIN).astype(np.float32)
feats /= feats.sum(1, keepdims=True)
labels = rng.randint(0, C, N)
pairs = {(int(s), int(d)) for s, d in zip(rng.randint(0, N, 400), rng.randint(0, N, 400)) if s != d}
edges = sorted(pairs | {(d, s) for s, d in pairs} | {(i, i) for i in range(N)})
edge_index = torch.tensor(np.array(edges).T, dtype=torch.long)
mask_np = np.full((N, N), -np.inf, dtype=np.float32)
mask_np[np.array(edges)[:, 1], np.array(edges)[:, 0]] = 0    # row = target, column = source
mask = torch.from_numpy(mask_np)
x, y = torch.tensor(feats), torch.tensor(labels, dtype=torch.long)
train_idx, val_idx = torch.arange(0, 50), torch.arange(50, 100)

for dense in (False, True):
    torch.manual_seed(0)
    model = gat(FIN, [FIN, 8, C], [8, 1], dense)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=5e-4)
    loss_fn = nn.CrossEntropyLoss()
    topo = mask if dense else edge_index
    for epoch in range(25):
        model.train()
        loss = loss_fn(model((x, topo))[0].index_select(0, train_idx), y.index_select(0, train_idx))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if epoch % 4 == 0:
            model.eval()
            with torch.no_grad():
                out = model((x, topo))[0]
            acc = torch.eq(out[val_idx].argmax(dim=-1), y[val_idx]).long().sum().item() / len(val_idx)
            print("dense" if dense else "edges", epoch, "loss %.6f" % loss.item(), "val acc", acc)
    print("attention", tuple(model[0].attention.shape), "%.5f" % model[0].attention.sum().item())

torch.manual_seed(0)
model = gat(FIN, [FIN, 32, 32, 4], [4, 4, 6], False, skip=True, dropout=0.0)
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
targets = torch.tensor(rng.randint(0, 2, (N, 4)), dtype=torch.float)
for epoch in range(12):
    out = model((x, edge_index))[0]
    loss = nn.BCEWithLogitsLoss()(out, targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 3 == 0:
        print("multilabel", epoch, "loss %.6f" % loss.item(), "acc %.6f" % ((out > 0).float() == targets).float().mean().item())
