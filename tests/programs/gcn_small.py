"""A two-layer GCN in the style of tkipf/pygcn (scipy adjacency, row
normalisation, torch.sparse.FloatTensor, torch.spmm, Adam with weight decay,
dropout) trained 30 epochs on a seeded random graph; prints each epoch's
losses and accuracies and the test result. Usage: gcn_small.py cthtorch|torch"""
import importlib
import math
import sys
import warnings

import numpy as np
import scipy.sparse as sp

torch = importlib.import_module(sys.argv[1])
nn, F, optim = torch.nn, torch.nn.functional, torch.optim
warnings.simplefilter("ignore")


def row_normalize(mx):
    inv = np.power(np.array(mx.sum(1)), -1.0).flatten()
    inv[np.isinf(inv)] = 0.0
    return sp.diags(inv).dot(mx)


def to_torch_sparse(mx):
    mx = mx.tocoo().astype(np.float32)
    indices = torch.from_numpy(np.vstack((mx.row, mx.col)).astype(np.int64))
    return torch.sparse.FloatTensor(indices, torch.from_numpy(mx.data), torch.Size(mx.shape))


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    return preds.eq(labels).double().sum() / len(labels)


class GraphConvolution(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(n_in, n_out))
        self.bias = nn.Parameter(torch.FloatTensor(n_out))
        bound = 1.0 / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-bound, bound)
        self.bias.data.uniform_(-bound, bound)

    def forward(self, x, adj):
        return torch.spmm(adj, torch.mm(x, self.weight)) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1, self.gc2, self.dropout = GraphConvolution(nfeat, nhid), GraphConvolution(nhid, nclass), dropout

    def forward(self, x, adj):
        x = F.dropout(F.relu(self.gc1(x, adj)), self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


rs = np.random.RandomState(0)
n, nfeat, nclass = 300, 50, 4
edges = rs.randint(0, n, (900, 2))
adj = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n), dtype=np.float32)
adj = adj + adj.T.multiply(adj.T > adj) - adj.multiply(adj.T > adj)       # symmetric, as pygcn builds it
adj = to_torch_sparse(row_normalize(adj + sp.eye(n)))
features = torch.FloatTensor(np.array(row_normalize(sp.csr_matrix(rs.rand(n, nfeat) < 0.1)).todense()))
labels = torch.LongTensor(rs.randint(0, nclass, n))
idx_train, idx_val, idx_test = torch.LongTensor(range(140)), torch.LongTensor(range(140, 220)), torch.LongTensor(range(220, 300))

torch.manual_seed(42)
model = GCN(nfeat, 16, nclass, 0.5)
optimizer = optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
print(adj._nnz(), adj.is_sparse, adj.layout, adj.to_dense().sum().item(), model.gc1.weight.sum().item(),
      model.gc2.bias.sum().item())
for epoch in range(30):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    loss_train = F.nll_loss(output[idx_train], labels[idx_train])
    acc_train = accuracy(output[idx_train], labels[idx_train])
    loss_train.backward()
    optimizer.step()
    model.eval()
    output = model(features, adj)
    loss_val = F.nll_loss(output[idx_val], labels[idx_val])
    print("Epoch: {:04d}".format(epoch + 1), "loss_train: {:.4f}".format(loss_train.item()),
          "acc_train: {:.4f}".format(acc_train.item()), "loss_val: {:.4f}".format(loss_val.item()),
          "acc_val: {:.4f}".format(accuracy(output[idx_val], labels[idx_val]).item()))
model.eval()
output = model(features, adj)
print("Test set results:", "loss= {:.4f}".format(F.nll_loss(output[idx_test], labels[idx_test]).item()),
      "accuracy= {:.4f}".format(accuracy(output[idx_test], labels[idx_test]).item()))
