# The models below are condensed from BlinkDL/RWKV-LM (RWKV-v4: src/model.py's GPT-mode RWKV_TimeMix /
# RWKV_ChannelMix / RWKV_Init, the WKV kernel written as its CPU loop) and its RNN-mode runner
# (RWKV_in_150_lines.py: a torch.jit.ScriptModule with @torch.jit.script_method time/channel mixing).
# RWKV-LM: Copyright (c) BlinkDL (Bo Peng). Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License. You may obtain a copy of the License at
#     http://www.apache.org/licenses/LICENSE-2.0
# Unless required by applicable law or agreed to in writing, software distributed under the License is
# distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and limitations under the License.
"""RWKV-v4 at a tiny size: the GPT-mode model (time shift by nn.ZeroPad2d, learned time-mix, the WKV
recurrence with its running max, squared-ReLU channel mix, orthogonal/zero init by scale_init) trained six
Adam steps with gradient clipping on a seeded token grid; its state_dict saved and loaded into the RNN-mode
ScriptModule (weights renamed into SimpleNamespaces, time_decay as -exp, script methods mutating the state
tensor in place), whose last logits equal the GPT model's, then top-p sampling by numpy.
Prints the losses, logits, state entries and samples.
Usage: rwkv_small.py cthtorch|torch"""
import importlib
import math
import os
import sys
import tempfile
import types

import numpy as np
torch = importlib.import_module(sys.argv[1])
nn = torch.nn
F = torch.nn.functional
np.set_printoptions(precision=4, suppress=True, linewidth=200)
torch.set_printoptions(precision=4, sci_mode=False)

# RNN mode (RWKV_in_150_lines)
class RWKV_RNN(torch.jit.ScriptModule):
    def __init__(self, args, w):
        super().__init__()
        self.args = args
        self.eval()
        for k in w.keys():
            if '.time_' in k: w[k] = w[k].squeeze()
            if '.time_decay' in k: w[k] = -torch.exp(w[k].float())
            else: w[k] = w[k].float()
        self.w = types.SimpleNamespace()
        self.w.blocks = {}
        for k in w.keys():
            parts = k.split('.')
            last = parts.pop()
            here = self.w
            for p in parts:
                if p.isdigit():
                    p = int(p)
                    if p not in here: here[p] = types.SimpleNamespace()
                    here = here[p]
                else:
                    if not hasattr(here, p): setattr(here, p, types.SimpleNamespace())
                    here = getattr(here, p)
            setattr(here, last, w[k])

    def layer_norm(self, x, w):
        return F.layer_norm(x, (self.args.n_embd,), weight=w.weight, bias=w.bias)

    @torch.jit.script_method
    def channel_mixing(self, x, state, i:int, time_mix_k, time_mix_r, kw, vw, rw):
        xk = x * time_mix_k + state[5*i+0] * (1 - time_mix_k)
        xr = x * time_mix_r + state[5*i+0] * (1 - time_mix_r)
        state[5*i+0] = x
        r = torch.sigmoid(rw @ xr)
        k = torch.square(torch.relu(kw @ xk))
        return r * (vw @ k)

    @torch.jit.script_method
    def time_mixing(self, x, state, i:int, time_mix_k, time_mix_v, time_mix_r, time_first, time_decay, kw, vw, rw, ow):
        xk = x * time_mix_k + state[5*i+1] * (1 - time_mix_k)
        xv = x * time_mix_v + state[5*i+1] * (1 - time_mix_v)
        xr = x * time_mix_r + state[5*i+1] * (1 - time_mix_r)
        state[5*i+1] = x
        r = torch.sigmoid(rw @ xr)
        k = kw @ xk
        v = vw @ xv
        aa = state[5*i+2]
        bb = state[5*i+3]
        pp = state[5*i+4]
        ww = time_first + k
        qq = torch.maximum(pp, ww)
        e1 = torch.exp(pp - qq)
        e2 = torch.exp(ww - qq)
        a = e1 * aa + e2 * v
        b = e1 * bb + e2
        wkv = a / b
        ww = pp + time_decay
        qq = torch.maximum(ww, k)
        e1 = torch.exp(ww - qq)
        e2 = torch.exp(k - qq)
        state[5*i+2] = e1 * aa + e2 * v
        state[5*i+3] = e1 * bb + e2
        state[5*i+4] = qq
        return ow @ (r * wkv)

    def forward(self, token, state):
        with torch.no_grad():
            if state == None:
                state = torch.zeros(self.args.n_layer * 5, self.args.n_embd)
                for i in range(self.args.n_layer): state[5*i+4] = -1e30 # -infinity
            x = self.w.emb.weight[token]
            x = self.layer_norm(x, self.w.blocks[0].ln0)
            for i in range(self.args.n_layer):
                att = self.w.blocks[i].att
                x = x + self.time_mixing(self.layer_norm(x, self.w.blocks[i].ln1), state, i,
                    att.time_mix_k, att.time_mix_v, att.time_mix_r, att.time_first, att.time_decay,
                    att.key.weight, att.value.weight, att.receptance.weight, att.output.weight)
                ffn = self.w.blocks[i].ffn
                x = x + self.channel_mixing(self.layer_norm(x, self.w.blocks[i].ln2), state, i,
                    ffn.time_mix_k, ffn.time_mix_r,
                    ffn.key.weight, ffn.value.weight, ffn.receptance.weight)
            x = self.w.head.weight @ self.layer_norm(x, self.w.ln_out)
            return x.float(), state

def sample_logits(out, temperature=1.0, top_p=0.8):
    probs = F.softmax(out, dim=-1).numpy()
    sorted_probs = np.sort(probs)[::-1]
    cumulative_probs = np.cumsum(sorted_probs)
    cutoff = float(sorted_probs[np.argmax(cumulative_probs > top_p)])
    probs[probs < cutoff] = 0
    if temperature != 1.0:
        probs = probs.pow(1.0 / temperature)
    probs = probs / np.sum(probs)
    out = np.random.choice(a=len(probs), p=probs)
    return out

# the GPT-mode training model (RWKV-v4 src/model.py, CPU path of WKV written as a loop)
class RWKV_TimeMix(nn.Module):
    def __init__(self, config, layer_id):
        super().__init__()
        self.layer_id = layer_id
        self.ctx_len = config.ctx_len
        self.n_embd = config.n_embd
        attn_sz = config.n_embd
        with torch.no_grad():
            ratio_0_to_1 = (layer_id / (config.n_layer - 1))
            ratio_1_to_almost0 = (1.0 - (layer_id / config.n_layer))
            decay_speed = torch.ones(attn_sz)
            for h in range(attn_sz):
                decay_speed[h] = -5 + 8 * (h / (attn_sz-1)) ** (0.7 + 1.3 * ratio_0_to_1)
            self.time_decay = nn.Parameter(decay_speed)
            zigzag = (torch.tensor([(i+1)%3 - 1 for i in range(attn_sz)]) * 0.5)
            self.time_first = nn.Parameter(torch.ones(attn_sz) * math.log(0.3) + zigzag)
            x = torch.ones(1, 1, config.n_embd)
            for i in range(config.n_embd):
                x[0, 0, i] = i / config.n_embd
            self.time_mix_k = nn.Parameter(torch.pow(x, ratio_1_to_almost0))
            self.time_mix_v = nn.Parameter(torch.pow(x, ratio_1_to_almost0) + 0.3 * ratio_0_to_1)
            self.time_mix_r = nn.Parameter(torch.pow(x, 0.5 * ratio_1_to_almost0))
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.key = nn.Linear(config.n_embd, attn_sz, bias=False)
        self.value = nn.Linear(config.n_embd, attn_sz, bias=False)
        self.receptance = nn.Linear(config.n_embd, attn_sz, bias=False)
        self.output = nn.Linear(attn_sz, config.n_embd, bias=False)
        self.key.scale_init = 0
        self.receptance.scale_init = 0
        self.output.scale_init = 0

    def jit_func(self, x):
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xv = x * self.time_mix_v + xx * (1 - self.time_mix_v)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)
        k = self.key(xk)
        v = self.value(xv)
        r = self.receptance(xr)
        sr = torch.sigmoid(r)
        return sr, k, v

    def forward(self, x):
        B, T, C = x.size()
        sr, k, v = self.jit_func(x)
        w = -torch.exp(self.time_decay)
        u = self.time_first
        aa = torch.zeros(B, C); bb = torch.zeros(B, C); pp = torch.full((B, C), -1e38)
        out = []
        for t in range(T):
            kk = k[:, t]; vv = v[:, t]
            ww = u + kk
            p = torch.maximum(pp, ww)
            e1 = torch.exp(pp - p); e2 = torch.exp(ww - p)
            out.append((e1 * aa + e2 * vv) / (e1 * bb + e2))
            ww = w + pp
            p = torch.maximum(ww, kk)
            e1 = torch.exp(ww - p); e2 = torch.exp(kk - p)
            aa = e1 * aa + e2 * vv
            bb = e1 * bb + e2
            pp = p
        rwkv = sr * torch.stack(out, dim=1)
        rwkv = self.output(rwkv)
        return rwkv

class RWKV_ChannelMix(nn.Module):
    def __init__(self, config, layer_id):
        super().__init__()
        self.layer_id = layer_id
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        with torch.no_grad():
            ratio_1_to_almost0 = (1.0 - (layer_id / config.n_layer))
            x = torch.ones(1, 1, config.n_embd)
            for i in range(config.n_embd):
                x[0, 0, i] = i / config.n_embd
            self.time_mix_k = nn.Parameter(torch.pow(x, ratio_1_to_almost0))
            self.time_mix_r = nn.Parameter(torch.pow(x, ratio_1_to_almost0))
        hidden_sz = 4 * config.n_embd
        self.key = nn.Linear(config.n_embd, hidden_sz, bias=False)
        self.receptance = nn.Linear(config.n_embd, config.n_embd, bias=False)
        self.value = nn.Linear(hidden_sz, config.n_embd, bias=False)
        self.value.scale_init = 0
        self.receptance.scale_init = 0

    def forward(self, x):
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)
        k = self.key(xk)
        k = torch.square(torch.relu(k))
        kv = self.value(k)
        rkv = torch.sigmoid(self.receptance(xr)) * kv
        return rkv

class GPTConfig:
    def __init__(self, vocab_size, ctx_len, **kwargs):
        self.vocab_size = vocab_size
        self.ctx_len = ctx_len
        for k, v in kwargs.items():
            setattr(self, k, v)

class Block(nn.Module):
    def __init__(self, config, layer_id):
        super().__init__()
        self.config = config
        self.layer_id = layer_id
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.ln2 = nn.LayerNorm(config.n_embd)
        if self.layer_id == 0:
            self.ln0 = nn.LayerNorm(config.n_embd)
        self.att = RWKV_TimeMix(config, layer_id)
        self.ffn = RWKV_ChannelMix(config, layer_id)

    def forward(self, x):
        if self.layer_id == 0:
            x = self.ln0(x)
        x = x + self.att(self.ln1(x))
        x = x + self.ffn(self.ln2(x))
        return x

def RWKV_Init(model, args):
    print("\n[--> first run, init model params (very slow for large models) <--]")
    for mm in model.modules():
        if "RecursiveScriptModule" in str(type(mm)):
            if mm.original_name not in ["Linear"]:
                continue
            ww = None
            for name, param in mm.named_parameters():
                if name == "weight":
                    ww = param
        else:
            if not isinstance(mm, (nn.Linear, nn.Embedding)):
                continue
            ww = mm.weight
        with torch.no_grad():
            name = "[unknown weight]"
            for name, parameter in model.named_parameters():
                if id(ww) == id(parameter):
                    break
            shape = ww.shape
            gain = 1.0
            scale = 1.0
            if isinstance(mm, nn.Embedding):
                gain = math.sqrt(max(shape[0], shape[1]))
                if shape[0] == args.vocab_size and shape[1] == args.n_embd:
                    scale = 1e-4
                else:
                    scale = 0
            if isinstance(mm, nn.Linear):
                if shape[0] > shape[1]:
                    gain = math.sqrt(shape[0] / shape[1])
                if shape[0] == args.vocab_size and shape[1] == args.n_embd:
                    scale = 0.5
            if hasattr(mm, "scale_init"):
                scale = mm.scale_init
            gain *= scale
            if scale == -999:
                nn.init.eye_(ww)
            elif gain == 0:
                nn.init.zeros_(ww)
            elif gain > 0:
                nn.init.orthogonal_(ww, gain=gain)
            else:
                nn.init.normal_(ww, mean=0.0, std=-scale)

class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.step = 0
        self.config = config
        self.emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.blocks = nn.Sequential(*[Block(config, i) for i in range(config.n_layer)])
        self.ln_out = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.ctx_len = config.ctx_len
        RWKV_Init(self, config)
        print("number of parameters: %e" % sum(p.numel() for p in self.parameters()))

    def configure_optimizers(self, train_config):
        no_decay = set()
        for mn, m in self.named_modules():
            for pn, p in m.named_parameters():
                fpn = '%s.%s' % (mn, pn) if mn else pn
                no_decay.add(fpn)
        param_dict = {pn: p for pn, p in self.named_parameters()}
        optim_groups = [{"params": [param_dict[pn] for pn in sorted(list(no_decay))], "weight_decay": 0.0}]
        optimizer = torch.optim.Adam(optim_groups, lr=train_config.learning_rate, betas=train_config.betas,
                                     eps=train_config.eps)
        return optimizer

    def forward(self, idx, targets=None):
        B, T = idx.size()
        assert T <= self.ctx_len, "Cannot forward, because len(input) > model ctx_len."
        x = self.emb(idx)
        x = self.blocks(x)
        x = self.ln_out(x)
        x = self.head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(x.view(-1, x.size(-1)), targets.to(x.device).reshape(-1))
        return x, loss

torch.manual_seed(0); np.random.seed(0)
V, ctx = 23, 12
cfg = GPTConfig(V, ctx, model_type='RWKV', n_layer=2, n_embd=32)
model = GPT(cfg)
tc = types.SimpleNamespace(learning_rate=4e-3, betas=(0.9, 0.99), eps=1e-8)
opt = model.configure_optimizers(tc)
data = torch.randint(0, V, (6, ctx + 1))
for step in range(6):
    logits, loss = model(data[:, :-1], data[:, 1:])
    model.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")
with tempfile.TemporaryDirectory() as d:
    torch.save(model.state_dict(), os.path.join(d, "rwkv.pth"))
    w = torch.load(os.path.join(d, "rwkv.pth"), map_location='cpu')
args = types.SimpleNamespace(n_layer=2, n_embd=32)
rnn = RWKV_RNN(args, w)
state = None
for token in data[0, :6].tolist():
    out, state = rnn.forward(token, state)
print("logits", [round(v, 5) for v in out[:6].tolist()], tuple(state.shape), state[4, :3].tolist())
full, _ = model(data[:1, :6])
print("rnn equals gpt", (full[0, -1] - out).abs().max().item() < 1e-4)
toks = []
for i in range(8):
    token = sample_logits(out, temperature=1.0, top_p=0.8)
    toks.append(int(token))
    out, state = rnn.forward(token, state)
print("samples", toks, "last logits", [round(v, 5) for v in out[:4].tolist()])
print(type(rnn).__name__, isinstance(rnn, torch.jit.ScriptModule), type(rnn.time_mixing).__name__)
