"""Real-looking scripted programs, scripted by cthtorch and by torch side by side: a tokenizer-like
string loop (str indexing/slicing, dict.get, list.insert), a beam-search-like list loop (lists of
tuples, list slicing and concatenation, pop), a scripted class (@torch.jit.script on a class: made,
mutated and called from script code), and a small scripted LSTM module (a cell submodule, a list of
states, stack of a list slice) with outputs and gradients equal to eager."""
from typing import Dict, List, Tuple

import numpy as np

import cthtorch
from tests.oracle import require_torch
from tests.test_jit_script import both, close, close_ct, kinds

torch = require_torch()


def tokenize(text: str, vocab: Dict[str, int]) -> List[int]:
    out: List[int] = []
    word = ""
    i = 0
    while i < len(text):
        c = text[i]
        if c == " " or c == ",":
            if len(word) > 0:
                out.append(vocab.get(word.lower(), 0))
                word = ""
        else:
            word += c
        i += 1
    if len(word) > 0:
        out.append(vocab.get(word.lower(), 0))
    if text[:3] == "the":
        out.insert(0, -1)
    return out[:-1] + out[-1:] + out[::2][1:2]


def test_tokenizer_string_loop():
    ct_f, t_f = both(tokenize)
    vocab = {"the": 1, "cat": 2, "mat": 3}
    for text in ("the cat, sat on The mat", "", "mat,,cat", "thematic cat"):
        assert ct_f(text, vocab) == t_f(text, vocab)
    assert {"prim::Loop", "aten::slice", "aten::__getitem__", "aten::get", "aten::insert"} <= kinds(ct_f.graph)
    assert kinds(ct_f.graph) == kinds(t_f.graph)


def beam(logits: torch.Tensor, k: int) -> List[List[int]]:
    empty: List[int] = []
    beams: List[Tuple[float, List[int]]] = [(0.0, empty)]
    for t in range(logits.size(0)):
        cand: List[Tuple[float, List[int]]] = []
        for score, seq in beams:
            for j in range(logits.size(1)):
                cand.append((score + float(logits[t, j]), seq + [j]))
        best: List[Tuple[float, List[int]]] = []
        while len(best) < k and len(cand) > 0:
            bi = 0
            for ci in range(1, len(cand)):
                if cand[ci][0] > cand[bi][0]:
                    bi = ci
            best.append(cand.pop(bi))
        beams = best
    return [b[1] for b in beams][::-1]


def test_beam_search_list_loop():
    ct_f, t_f = both(beam)
    x = np.random.RandomState(0).rand(4, 5).astype(np.float32)
    for k in (1, 3):
        assert ct_f(cthtorch.tensor(x), k) == t_f(torch.tensor(x), k)
    # torch counts range(1, n) with aten::__range_length/__derive_index, cthtorch with aten::sub
    range_ops = {"aten::__range_length", "aten::__derive_index", "aten::sub"}
    assert kinds(ct_f.graph) - range_ops == kinds(t_f.graph) - range_ops


class Counter(object):
    def __init__(self, start: int):
        self.n = start
        self.history: List[int] = []

    def bump(self, by: int) -> int:
        self.n += by
        self.history.append(self.n)
        return self.n

    def last(self, k: int) -> List[int]:
        return self.history[-k:]


def use_counter(k: int) -> List[int]:
    c = Counter(k)
    c.bump(2)
    c.bump(c.n)
    return c.last(2) + [c.bump(1)]


def test_scripted_class():
    assert cthtorch.jit.script(Counter) is Counter and torch.jit.script(Counter) is Counter
    ct_f, t_f = both(use_counter)
    assert ct_f(5) == t_f(5) == [7, 14, 15]
    assert {"prim::CreateObject", "prim::CallMethod"} <= kinds(ct_f.graph)
    assert kinds(ct_f.graph) == kinds(t_f.graph)
    assert ct_f.code.splitlines()[:3] == t_f.code.splitlines()[:3]   # CreateObject, then __init__


def make_counting(lib):
    class Counting(lib.nn.Module):
        """A scripted module whose forward uses the class."""

        def forward(self, x, n: int):
            c = Counter(n)
            for _ in range(3):
                x = x * 2
                c.bump(1)
            return x + c.n
    return Counting()


def test_class_used_by_a_scripted_module():
    s_ct, s_t = cthtorch.jit.script(make_counting(cthtorch)), torch.jit.script(make_counting(torch))
    x = np.arange(4, dtype=np.float32)
    close(s_ct(cthtorch.tensor(x), 2), s_t(torch.tensor(x), 2))
    assert "prim::CreateObject" in kinds(s_ct.graph)


def make_lstm(lib):
    nn = lib.nn

    class Cell(nn.Module):
        def __init__(self, i: int, h: int):
            super().__init__()
            self.ih = nn.Linear(i, 4 * h)
            self.hh = nn.Linear(h, 4 * h)

        def forward(self, x, state: Tuple[lib.Tensor, lib.Tensor]) -> Tuple[lib.Tensor, lib.Tensor]:
            h, c = state
            gates = self.ih(x) + self.hh(h)
            i, f, g, o = gates.chunk(4, 1)
            c = lib.sigmoid(f) * c + lib.sigmoid(i) * lib.tanh(g)
            h = lib.sigmoid(o) * lib.tanh(c)
            return h, c

    class LSTMLoop(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = Cell(8, 16)

        def forward(self, xs):
            h = lib.zeros(xs.size(1), 16)
            c = lib.zeros(xs.size(1), 16)
            outs: List[lib.Tensor] = []
            for t in range(xs.size(0)):
                h, c = self.cell(xs[t], (h, c))
                outs.append(h)
            return lib.stack(outs[1:], 0)
    return LSTMLoop()


def test_scripted_lstm_module():
    m_ct, m_t = make_lstm(cthtorch), make_lstm(torch)
    for (n, p), (_, q) in zip(m_ct.named_parameters(), m_t.named_parameters()):
        with cthtorch.no_grad():
            p.copy_(cthtorch.tensor(q.detach().numpy()))
    s_ct, s_t = cthtorch.jit.script(m_ct), torch.jit.script(m_t)
    xs = np.random.RandomState(1).rand(6, 3, 8).astype(np.float32)
    out_ct, out_t = s_ct(cthtorch.tensor(xs)), s_t(torch.tensor(xs))
    close(out_ct, out_t)
    close_ct(out_ct, m_ct(cthtorch.tensor(xs)))
    out_ct.sum().backward()
    out_t.sum().backward()
    for (n, p), (_, q) in zip(m_ct.named_parameters(), m_t.named_parameters()):
        close(p.grad, q.grad, 1e-4)
    assert kinds(s_ct.graph) == kinds(s_t.graph)
