"""bentrevett/pytorch-sentiment-analysis notebooks 1-3: the NBoW, the packed
two-layer bidirectional LSTM (pack_padded_sequence with enforce_sorted=False,
inter-layer dropout, pad_packed_sequence) and the Conv1d CNN, their
initialize_weights (xavier_normal_, orthogonal_, kaiming_normal_), a
DataLoader whose collate_fn pads with pad_sequence, Adam, CrossEntropyLoss,
accuracy, best-checkpoint save/load and the predict step. Prints the epochs'
losses and accuracies. Usage: sentiment_rnn_small.py cthtorch|torch

Changed from the original: the imports, synthetic token ids and labels instead
of the IMDB dataset and torchtext vocabulary (no download), small sizes
(vocab 120, embeddings 24, 3 epochs) and the train/evaluate loops merged.
pytorch-sentiment-analysis: MIT License, Copyright (c) 2017 Ben Trevett.
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
import importlib
import os
import shutil
import sys
import tempfile

import numpy as np

torch = importlib.import_module(sys.argv[1])
nn, optim = torch.nn, torch.optim
seed = 1234
np.random.seed(seed); torch.manual_seed(seed); torch.cuda.manual_seed(seed)
torch.backends.cudnn.deterministic = True

class NBoW(nn.Module):
    def __init__(self, vocab_size, embedding_dim, output_dim, pad_index):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_index)
        self.fc = nn.Linear(embedding_dim, output_dim)
    def forward(self, ids, length=None):
        return self.fc(self.embedding(ids).mean(dim=1))

class LSTM(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, output_dim, n_layers, bidirectional, dropout_rate, pad_index):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_index)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, n_layers, bidirectional=bidirectional, dropout=dropout_rate, batch_first=True)
        self.fc = nn.Linear(hidden_dim * 2 if bidirectional else hidden_dim, output_dim)
        self.dropout = nn.Dropout(dropout_rate)
    def forward(self, ids, length):
        embedded = self.dropout(self.embedding(ids))
        packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, length, batch_first=True, enforce_sorted=False)
        packed_output, (hidden, cell) = self.lstm(packed_embedded)
        output, output_length = nn.utils.rnn.pad_packed_sequence(packed_output)
        if self.lstm.bidirectional:
            hidden = self.dropout(torch.cat([hidden[-1], hidden[-2]], dim=-1))
        else:
            hidden = self.dropout(hidden[-1])
        return self.fc(hidden)

class CNN(nn.Module):
    def __init__(self, vocab_size, embedding_dim, n_filters, filter_sizes, output_dim, dropout_rate, pad_index):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_index)
        self.convs = nn.ModuleList([nn.Conv1d(embedding_dim, n_filters, fs) for fs in filter_sizes])
        self.fc = nn.Linear(len(filter_sizes) * n_filters, output_dim)
        self.dropout = nn.Dropout(dropout_rate)
    def forward(self, ids, length=None):
        embedded = self.dropout(self.embedding(ids)).permute(0, 2, 1)
        conved = [torch.relu(conv(embedded)) for conv in self.convs]
        pooled = [conv.max(dim=-1).values for conv in conved]
        return self.fc(self.dropout(torch.cat(pooled, dim=-1)))

def initialize_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_normal_(m.weight); nn.init.zeros_(m.bias)
    elif isinstance(m, nn.LSTM):
        for name, param in m.named_parameters():
            if "bias" in name: nn.init.zeros_(param)
            elif "weight" in name: nn.init.orthogonal_(param)
    elif isinstance(m, nn.Conv1d):
        nn.init.kaiming_normal_(m.weight, nonlinearity="relu"); nn.init.zeros_(m.bias)

vocab_size, pad_index, unk_index = 120, 1, 0
rs = np.random.RandomState(0)
def make(n):
    data = []
    for _ in range(n):
        label = int(rs.randint(2)); L = int(rs.randint(8, 25))
        ids = rs.randint(2, vocab_size // 2, L) + label * (vocab_size // 2 - 2) * (rs.rand(L) < 0.3)
        data.append({"ids": torch.tensor(ids.astype(np.int64)), "length": torch.tensor(L), "label": torch.tensor(label)})
    return data
train_data, test_data = make(96), make(32)

def get_collate_fn(pad_index):
    def collate_fn(batch):
        batch_ids = nn.utils.rnn.pad_sequence([i["ids"] for i in batch], padding_value=pad_index, batch_first=True)
        return {"ids": batch_ids, "length": torch.stack([i["length"] for i in batch]), "label": torch.stack([i["label"] for i in batch])}
    return collate_fn

def get_accuracy(prediction, label):
    batch_size, _ = prediction.shape
    return prediction.argmax(dim=-1).eq(label).sum() / batch_size

def run_epoch(dl, model, criterion, optimizer=None):
    model.train(optimizer is not None)
    losses, accs = [], []
    with torch.set_grad_enabled(optimizer is not None):
        for batch in dl:
            prediction = model(batch["ids"], batch["length"])
            loss = criterion(prediction, batch["label"])
            if optimizer is not None:
                optimizer.zero_grad(); loss.backward(); optimizer.step()
            losses.append(loss.item()); accs.append(get_accuracy(prediction, batch["label"]).item())
    return np.mean(losses), np.mean(accs)

models = {"nbow": NBoW(vocab_size, 24, 2, pad_index),
          "lstm": LSTM(vocab_size, 24, 16, 2, 2, True, 0.5, pad_index),
          "cnn": CNN(vocab_size, 24, 8, [3, 5, 7], 2, 0.25, pad_index)}
tmp = tempfile.mkdtemp()
for name, model in models.items():
    if name != "nbow":
        model.apply(initialize_weights)
    print(name, f"The model has {sum(p.numel() for p in model.parameters() if p.requires_grad):,} trainable parameters")
    train_dl = torch.utils.data.DataLoader(dataset=train_data, batch_size=16, collate_fn=get_collate_fn(pad_index), shuffle=True)
    test_dl = torch.utils.data.DataLoader(dataset=test_data, batch_size=16, collate_fn=get_collate_fn(pad_index))
    optimizer = optim.Adam(model.parameters(), lr=5e-3)
    criterion = nn.CrossEntropyLoss()
    best = float("inf")
    for epoch in range(3):
        tl, ta = run_epoch(train_dl, model, criterion, optimizer)
        vl, va = run_epoch(test_dl, model, criterion)
        if vl < best:
            best = vl; torch.save(model.state_dict(), os.path.join(tmp, name + ".pt"))
        print(f"epoch: {epoch}"); print(f"train_loss: {tl:.3f}, train_acc: {ta:.3f}"); print(f"valid_loss: {vl:.3f}, valid_acc: {va:.3f}")
    model.load_state_dict(torch.load(os.path.join(tmp, name + ".pt")))
    ids = test_data[0]["ids"]
    prediction = model(ids.unsqueeze(0), torch.LongTensor([len(ids)])).squeeze(0)
    probability = torch.softmax(prediction, dim=-1)
    predicted_class = prediction.argmax(dim=-1).item()
    print(predicted_class, probability[predicted_class].item())
shutil.rmtree(tmp)
