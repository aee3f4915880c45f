"""pytorch/examples word_language_model in small: LSTM, GRU and Transformer language models (its RNNModel and
TransformerModel, tied embedding, dropout) trained by hand-written SGD with clip_grad_norm_ on a seeded
synthetic corpus for 20 steps; prints each model's per-step losses and its evaluation loss.
Usage: word_lm_small.py cthtorch|torch"""
import importlib
import math
import random
import sys
import warnings

torch = importlib.import_module(sys.argv[1])
nn, F = torch.nn, torch.nn.functional
warnings.simplefilter("ignore")


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.decoder.weight = self.encoder.weight   # tied
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return F.log_softmax(self.decoder(self.drop(out)).view(-1, self.decoder.out_features), dim=1), hidden


class TransformerModel(nn.Transformer):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.2):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.decoder = nn.Linear(ninp, ntoken)
        pos = torch.arange(0, 64, dtype=torch.float).unsqueeze(1)
        div = torch.exp(torch.arange(0, ninp, 2).float() * (-math.log(10000.0) / ninp))
        self.pe = torch.zeros(64, 1, ninp)
        self.pe[:, 0, 0::2], self.pe[:, 0, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        self.drop = nn.Dropout(dropout)

    def forward(self, src):
        mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        x = self.drop(self.input_emb(src) * math.sqrt(self.d_model) + self.pe[:src.size(0)])
        return F.log_softmax(self.decoder(self.encoder(x, mask=mask)), dim=-1).view(-1, self.decoder.out_features)


rng = random.Random(0)
ids = torch.tensor([rng.randrange(40) if rng.random() < 0.7 else 7 for _ in range(3400)])
data = ids.narrow(0, 0, 3400 // 8 * 8).view(8, -1).t().contiguous()


def init_hidden(kind):
    h = torch.zeros(2, 8, 16)
    return (h, torch.zeros(2, 8, 16)) if kind == "LSTM" else h


for kind in ("LSTM", "GRU", "Transformer"):
    torch.manual_seed(1111)
    model = RNNModel(kind, 40, 16, 16, 2) if kind != "Transformer" else TransformerModel(40, 16, 2, 32, 2)
    lr = 5.0 if kind != "Transformer" else 1.0
    hidden = init_hidden(kind)
    model.train()
    for step, i in enumerate(range(0, 20 * 20, 20)):
        x, y = data[i:i + 20], data[i + 1:i + 21].reshape(-1)
        x = x[:len(y) // 8]
        model.zero_grad()
        if kind != "Transformer":
            hidden = tuple(h.detach() for h in hidden) if kind == "LSTM" else hidden.detach()
            out, hidden = model(x, hidden)
        else:
            out = model(x)
        loss = F.nll_loss(out, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        print(kind, step, "%.6f" % loss.item())
    model.eval()
    with torch.no_grad():
        x = data[:40]
        out = model(x, init_hidden(kind))[0] if kind != "Transformer" else model(x)
        print(kind, "eval", "%.6f" % F.nll_loss(out, data[1:41].reshape(-1)).item())
