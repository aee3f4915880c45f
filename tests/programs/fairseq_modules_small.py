"""fairseq's transformer building blocks at a tiny size, as fairseq/utils.py, modules/sinusoidal_positional_embedding.py,
modules/learned_positional_embedding.py, incremental_decoding_utils.py, modules/multihead_attention.py and
criterions/label_smoothed_cross_entropy.py write them: make_positions (cumsum over the padding mask, left padding),
SinusoidalPositionalEmbedding (torch.onnx.operators.shape_as_tensor, a non-persistent weights buffer, a _float_tensor
buffer), the @with_incremental_state uuid-keyed state dicts, MultiheadAttention's F.multi_head_attention_forward fast
path (use_separate_proj_weight with torch.empty([0]), bool key_padding_mask beside a float future mask) and its
manual incremental path (prev_key/prev_value/prev_key_padding_mask, static_kv encoder attention,
reorder_incremental_state for beam search), label_smoothed_nll_loss with gather and ignore_index. A one-layer
decoder trains five Adam steps on synthetic tokens, then decodes incrementally and compares with the full pass.
Prints the losses, gradient norms and decoding results. Usage: fairseq_modules_small.py cthtorch|torch

Changed from the original: the imports, the modules trimmed to the paths used (no quant_noise, no xformers, no
TPU/ONNX branches), a toy decoder layer around them.
fairseq: MIT License, Copyright (c) Facebook, Inc. and its affiliates.
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
import importlib, sys, math, uuid
from typing import Dict, Optional, Tuple, List
torch = importlib.import_module(sys.argv[1])
nn = importlib.import_module(sys.argv[1] + ".nn")
F = importlib.import_module(sys.argv[1] + ".nn.functional")

Tensor = torch.Tensor
onnx_ops = importlib.import_module(sys.argv[1] + ".onnx.operators")

def make_positions(tensor, padding_idx: int, onnx_trace: bool = False):
    mask = tensor.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx

def softmax(x, dim: int, onnx_trace: bool = False):
    if onnx_trace:
        return F.softmax(x.float(), dim=dim)
    else:
        return F.softmax(x, dim=dim, dtype=torch.float32)

class FairseqIncrementalState(object):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.init_incremental_state()
    def init_incremental_state(self):
        self._incremental_state_id = str(uuid.uuid4())
    def _get_full_incremental_state_key(self, key: str) -> str:
        return "{}.{}".format(self._incremental_state_id, key)
    def get_incremental_state(self, incremental_state, key):
        full_key = self._get_full_incremental_state_key(key)
        if incremental_state is None or full_key not in incremental_state:
            return None
        return incremental_state[full_key]
    def set_incremental_state(self, incremental_state, key, value):
        if incremental_state is not None:
            full_key = self._get_full_incremental_state_key(key)
            incremental_state[full_key] = value
        return incremental_state

def with_incremental_state(cls):
    cls.__bases__ = (FairseqIncrementalState,) + tuple(b for b in cls.__bases__ if b != FairseqIncrementalState)
    return cls

class SinusoidalPositionalEmbedding(nn.Module):
    def __init__(self, embedding_dim, padding_idx, init_size=1024):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx if padding_idx is not None else 0
        self.register_buffer("weights", SinusoidalPositionalEmbedding.get_embedding(init_size, embedding_dim, padding_idx), persistent=False)
        self.max_positions = int(1e5)
        self.onnx_trace = False
        self.register_buffer("_float_tensor", torch.FloatTensor(1))

    def prepare_for_onnx_export_(self):
        self.onnx_trace = True

    @staticmethod
    def get_embedding(num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None):
        half_dim = embedding_dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
        emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
        emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
        if embedding_dim % 2 == 1:
            emb = torch.cat([emb, torch.zeros(num_embeddings, 1)], dim=1)
        if padding_idx is not None:
            emb[padding_idx, :] = 0
        return emb

    def forward(self, input, incremental_state=None, timestep=None, positions=None):
        bspair = onnx_ops.shape_as_tensor(input)
        bsz, seq_len = bspair[0], bspair[1]
        max_pos = self.padding_idx + 1 + seq_len
        if max_pos > self.weights.size(0):
            self.weights = SinusoidalPositionalEmbedding.get_embedding(max_pos, self.embedding_dim, self.padding_idx).to(self.weights)
        self.weights = self.weights.to(self._float_tensor)
        if incremental_state is not None:
            pos = timestep.view(-1)[0] + 1 if timestep is not None else seq_len
            return self.weights[self.padding_idx + pos, :].expand(bsz, 1, -1)
        positions = make_positions(input, self.padding_idx, onnx_trace=self.onnx_trace)
        return self.weights.index_select(0, positions.view(-1)).view(bsz, seq_len, -1).detach()

class LearnedPositionalEmbedding(nn.Embedding):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int):
        super().__init__(num_embeddings, embedding_dim, padding_idx)
        self.onnx_trace = False
        if self.padding_idx is not None:
            self.max_positions = self.num_embeddings - self.padding_idx - 1
        else:
            self.max_positions = self.num_embeddings
    def forward(self, input, incremental_state=None, positions=None):
        if positions is None:
            if incremental_state is not None:
                positions = torch.zeros((1, 1), device=input.device, dtype=input.dtype).fill_(int(self.padding_idx + input.size(1)))
            else:
                positions = make_positions(input, self.padding_idx, onnx_trace=self.onnx_trace)
        return F.embedding(positions, self.weight, self.padding_idx, self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse)

@with_incremental_state
class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, kdim=None, vdim=None, dropout=0.0, bias=True,
                 add_bias_kv=False, add_zero_attn=False, self_attention=False, encoder_decoder_attention=False):
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.qkv_same_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout_p = dropout
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == self.embed_dim
        self.scaling = self.head_dim ** -0.5
        self.self_attention = self_attention
        self.encoder_decoder_attention = encoder_decoder_attention
        self.k_proj = nn.Linear(self.kdim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(self.vdim, embed_dim, bias=bias)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        if add_bias_kv:
            self.bias_k = nn.Parameter(torch.Tensor(1, 1, embed_dim))
            self.bias_v = nn.Parameter(torch.Tensor(1, 1, embed_dim))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self.reset_parameters()
        self.onnx_trace = False
        self.skip_embed_dim_check = False

    def reset_parameters(self):
        if self.qkv_same_dim:
            nn.init.xavier_uniform_(self.k_proj.weight, gain=1 / math.sqrt(2))
            nn.init.xavier_uniform_(self.v_proj.weight, gain=1 / math.sqrt(2))
            nn.init.xavier_uniform_(self.q_proj.weight, gain=1 / math.sqrt(2))
        else:
            nn.init.xavier_uniform_(self.k_proj.weight)
            nn.init.xavier_uniform_(self.v_proj.weight)
            nn.init.xavier_uniform_(self.q_proj.weight)
        nn.init.xavier_uniform_(self.out_proj.weight)
        if self.out_proj.bias is not None:
            nn.init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            nn.init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            nn.init.xavier_normal_(self.bias_v)

    def forward(self, query, key: Optional[Tensor], value: Optional[Tensor], key_padding_mask: Optional[Tensor] = None,
                incremental_state=None, need_weights: bool = True, static_kv: bool = False,
                attn_mask: Optional[Tensor] = None, before_softmax: bool = False, need_head_weights: bool = False):
        if need_head_weights:
            need_weights = True
        is_tpu = query.device.type == "xla"
        tgt_len, bsz, embed_dim = query.size()
        src_len = tgt_len
        assert list(query.size()) == [tgt_len, bsz, embed_dim]
        if key is not None:
            src_len, key_bsz, _ = key.size()
            if not torch.jit.is_scripting():
                assert value is not None
                assert src_len, key_bsz == value.shape[:2]
        if (not self.onnx_trace and not is_tpu and incremental_state is None and not static_kv
                and not torch.jit.is_scripting() and not self.skip_embed_dim_check):
            assert key is not None and value is not None
            return F.multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, torch.empty([0]),
                torch.cat((self.q_proj.bias, self.k_proj.bias, self.v_proj.bias)),
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout_p, self.out_proj.weight,
                self.out_proj.bias, self.training, key_padding_mask.bool() if key_padding_mask is not None else None,
                need_weights, attn_mask, use_separate_proj_weight=True, q_proj_weight=self.q_proj.weight,
                k_proj_weight=self.k_proj.weight, v_proj_weight=self.v_proj.weight)
        if incremental_state is not None:
            saved_state = self._get_input_buffer(incremental_state)
            if saved_state is not None and "prev_key" in saved_state:
                if static_kv:
                    assert self.encoder_decoder_attention and not self.self_attention
                    key = value = None
        else:
            saved_state = None
        if self.self_attention:
            q = self.q_proj(query); k = self.k_proj(query); v = self.v_proj(query)
        elif self.encoder_decoder_attention:
            q = self.q_proj(query)
            if key is None:
                assert value is None
                k = v = None
            else:
                k = self.k_proj(key); v = self.v_proj(key)
        else:
            q = self.q_proj(query); k = self.k_proj(key); v = self.v_proj(value)
        q *= self.scaling
        q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        if k is not None:
            k = k.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        if v is not None:
            v = v.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        if saved_state is not None:
            if "prev_key" in saved_state:
                _prev_key = saved_state["prev_key"]
                assert _prev_key is not None
                prev_key = _prev_key.view(bsz * self.num_heads, -1, self.head_dim)
                if static_kv:
                    k = prev_key
                else:
                    assert k is not None
                    k = torch.cat([prev_key, k], dim=1)
                src_len = k.size(1)
            if "prev_value" in saved_state:
                _prev_value = saved_state["prev_value"]
                prev_value = _prev_value.view(bsz * self.num_heads, -1, self.head_dim)
                if static_kv:
                    v = prev_value
                else:
                    v = torch.cat([prev_value, v], dim=1)
            prev_key_padding_mask: Optional[Tensor] = None
            if "prev_key_padding_mask" in saved_state:
                prev_key_padding_mask = saved_state["prev_key_padding_mask"]
            key_padding_mask = MultiheadAttention._append_prev_key_padding_mask(
                key_padding_mask=key_padding_mask, prev_key_padding_mask=prev_key_padding_mask,
                batch_size=bsz, src_len=k.size(1), static_kv=static_kv)
            saved_state["prev_key"] = k.view(bsz, self.num_heads, -1, self.head_dim)
            saved_state["prev_value"] = v.view(bsz, self.num_heads, -1, self.head_dim)
            saved_state["prev_key_padding_mask"] = key_padding_mask
            assert incremental_state is not None
            incremental_state = self._set_input_buffer(incremental_state, saved_state)
        assert k is not None
        assert k.size(1) == src_len
        if key_padding_mask is not None and key_padding_mask.dim() == 0:
            key_padding_mask = None
        attn_weights = torch.bmm(q, k.transpose(1, 2))
        assert list(attn_weights.size()) == [bsz * self.num_heads, tgt_len, src_len]
        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(0)
            attn_weights += attn_mask
        if key_padding_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2).to(torch.bool), float("-inf"))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_weights_float = softmax(attn_weights, dim=-1, onnx_trace=self.onnx_trace)
        attn_weights = attn_weights_float.type_as(attn_weights)
        attn_probs = F.dropout(attn_weights, p=self.dropout_p, training=self.training)
        attn = torch.bmm(attn_probs, v)
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, self.embed_dim)
        attn = self.out_proj(attn)
        attn_weights_out = None
        if need_weights:
            attn_weights_out = attn_weights_float.view(bsz, self.num_heads, tgt_len, src_len).transpose(1, 0)
            if not need_head_weights:
                attn_weights_out = attn_weights_out.mean(dim=0)
        return attn, attn_weights_out

    @staticmethod
    def _append_prev_key_padding_mask(key_padding_mask, prev_key_padding_mask, batch_size, src_len, static_kv):
        if prev_key_padding_mask is not None and static_kv:
            new_key_padding_mask = prev_key_padding_mask
        elif prev_key_padding_mask is not None and key_padding_mask is not None:
            new_key_padding_mask = torch.cat([prev_key_padding_mask.float(), key_padding_mask.float()], dim=1)
        elif prev_key_padding_mask is not None:
            if src_len > prev_key_padding_mask.size(1):
                filler = torch.zeros((batch_size, src_len - prev_key_padding_mask.size(1)), device=prev_key_padding_mask.device)
                new_key_padding_mask = torch.cat([prev_key_padding_mask.float(), filler.float()], dim=1)
            else:
                new_key_padding_mask = prev_key_padding_mask.float()
        elif key_padding_mask is not None:
            if src_len > key_padding_mask.size(1):
                filler = torch.zeros((batch_size, src_len - key_padding_mask.size(1)), device=key_padding_mask.device)
                new_key_padding_mask = torch.cat([filler.float(), key_padding_mask.float()], dim=1)
            else:
                new_key_padding_mask = key_padding_mask.float()
        else:
            new_key_padding_mask = prev_key_padding_mask
        return new_key_padding_mask

    @torch.jit.export
    def reorder_incremental_state(self, incremental_state, new_order: Tensor):
        input_buffer = self._get_input_buffer(incremental_state)
        if input_buffer is not None:
            for k in input_buffer.keys():
                input_buffer_k = input_buffer[k]
                if input_buffer_k is not None:
                    if self.encoder_decoder_attention and input_buffer_k.size(0) == new_order.size(0):
                        break
                    input_buffer[k] = input_buffer_k.index_select(0, new_order)
            incremental_state = self._set_input_buffer(incremental_state, input_buffer)
        return incremental_state

    def _get_input_buffer(self, incremental_state):
        result = self.get_incremental_state(incremental_state, "attn_state")
        if result is not None:
            return result
        else:
            empty_result: Dict[str, Optional[Tensor]] = {}
            return empty_result

    def _set_input_buffer(self, incremental_state, buffer):
        return self.set_incremental_state(incremental_state, "attn_state", buffer)

def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=None, reduce=True):
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    if ignore_index is not None:
        pad_mask = target.eq(ignore_index)
        nll_loss.masked_fill_(pad_mask, 0.0)
        smooth_loss.masked_fill_(pad_mask, 0.0)
    else:
        nll_loss = nll_loss.squeeze(-1)
        smooth_loss = smooth_loss.squeeze(-1)
    if reduce:
        nll_loss = nll_loss.sum()
        smooth_loss = smooth_loss.sum()
    eps_i = epsilon / (lprobs.size(-1) - 1)
    loss = (1.0 - epsilon - eps_i) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss

def Embedding(num_embeddings, embedding_dim, padding_idx):
    m = nn.Embedding(num_embeddings, embedding_dim, padding_idx=padding_idx)
    nn.init.normal_(m.weight, mean=0, std=embedding_dim ** -0.5)
    nn.init.constant_(m.weight[padding_idx], 0)
    return m

class TinyDecoder(nn.Module):
    def __init__(self, vocab, dim, heads, pad):
        super().__init__()
        self.pad = pad
        self.embed_tokens = Embedding(vocab, dim, pad)
        self.embed_scale = math.sqrt(dim)
        self.embed_positions = SinusoidalPositionalEmbedding(dim, pad, init_size=8)
        self.self_attn = MultiheadAttention(dim, heads, dropout=0.1, self_attention=True)
        self.encoder_attn = MultiheadAttention(dim, heads, encoder_decoder_attention=True)
        self.ln = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)
        self._future_mask = torch.empty(0)
    def buffered_future_mask(self, tensor):
        dim = tensor.size(0)
        if self._future_mask.size(0) == 0 or (not self._future_mask.device == tensor.device) or self._future_mask.size(0) < dim:
            self._future_mask = torch.triu(torch.zeros([dim, dim]).float().fill_(float("-inf")), 1)
        self._future_mask = self._future_mask.to(tensor)
        return self._future_mask[:dim, :dim]
    def forward(self, prev_output_tokens, enc, enc_pad, incremental_state=None):
        positions = self.embed_positions(prev_output_tokens, incremental_state=incremental_state)
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
            positions = positions[:, -1:]
        x = self.embed_scale * self.embed_tokens(prev_output_tokens) + positions
        x = x.transpose(0, 1)
        self_attn_padding_mask = None
        if prev_output_tokens.eq(self.pad).any():
            self_attn_padding_mask = prev_output_tokens.eq(self.pad)
        attn_mask = self.buffered_future_mask(x) if incremental_state is None else None
        r = x
        x, _ = self.self_attn(query=x, key=x, value=x, key_padding_mask=self_attn_padding_mask,
                              incremental_state=incremental_state, need_weights=False, attn_mask=attn_mask)
        x = self.ln(x + r)
        x2, attn = self.encoder_attn(query=x, key=enc, value=enc, key_padding_mask=enc_pad,
                                     incremental_state=incremental_state, static_kv=True, need_weights=True)
        x = F.relu(self.fc(x + x2))
        x = x.transpose(0, 1)
        return F.linear(x, self.embed_tokens.weight), attn

torch.manual_seed(0)
V, D, H, PAD = 13, 16, 4, 1
dec = TinyDecoder(V, D, H, PAD)
enc = torch.randn(6, 3, D)
enc_pad = torch.zeros(3, 6, dtype=torch.bool); enc_pad[1, 4:] = True; enc_pad[2, 5:] = True
tokens = torch.randint(2, V, (3, 7)); tokens[0, :2] = PAD   # left pad
target = torch.randint(2, V, (3, 7)); target[0, :2] = PAD
print(make_positions(tokens, PAD))
opt = torch.optim.Adam(dec.parameters(), lr=1e-2, betas=(0.9, 0.98), eps=1e-8)
for step in range(5):
    dec.train()
    logits, attn = dec(tokens, enc, enc_pad)
    lprobs = F.log_softmax(logits, dim=-1, dtype=torch.float32)
    loss, nll = label_smoothed_nll_loss(lprobs.view(-1, lprobs.size(-1)), target.view(-1), 0.1, ignore_index=PAD)
    opt.zero_grad(); loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(dec.parameters(), 0.1)
    opt.step()
    print("step %d loss %.5f nll %.5f gnorm %.5f" % (step, loss.item(), nll.item() / math.log(2), gn.item()))
print(attn.shape, attn.sum(-1))
dec.eval()
# incremental decoding, beam reorder
with torch.no_grad():
    full, _ = dec(tokens[:, :4], enc, enc_pad)
    inc_state: Dict[str, Dict[str, Optional[Tensor]]] = {}
    outs = []
    for t in range(1, 5):
        o, _ = dec(tokens[:, :t], enc, enc_pad, incremental_state=inc_state)
        outs.append(o)
    inc = torch.cat(outs, 1)
    print("incremental max diff < 1e-4:", (inc[1:] - full[1:]).abs().max().item() < 1e-4)
    print(sorted(len(v) for v in inc_state.values()), [tuple(v['prev_key'].shape) for v in inc_state.values()])
    new_order = torch.tensor([2, 0, 1])
    dec.self_attn.reorder_incremental_state(inc_state, new_order)
    print([tuple(v['prev_key'].shape) for v in inc_state.values()])
    print(F.log_softmax(inc[:, -1], -1).topk(3, dim=-1))
pe = SinusoidalPositionalEmbedding(7, PAD, init_size=4)
print(pe(tokens).shape, pe(tokens)[0, :3])
print(pe.state_dict().keys())
lpe = LearnedPositionalEmbedding(12, 4, PAD)
print(lpe(tokens).shape, lpe.max_positions)
