"""NLP sequence-labelling code as people copy it: allennlp's nn/util.py (get_mask_from_sequence_lengths via
new_ones().cumsum, sort_batch_by_length, masked_softmax both ways, masked_log_softmax, masked_max/mean with
torch.finfo minima, batched_index_select over flattened offsets, weighted_sum, sequence_cross_entropy_with_logits
with label smoothing, viterbi_decode with top-k paths, start/end constraints and observations) and kmkurn/pytorch-crf's
CRF (forward algorithm with logsumexp, viterbi with max and backtracking, uint8 masks through torch.where, the
token_mean reduction), over a packed bidirectional LSTM tagger trained by SGD on synthetic tokens. Prints the
masks, losses, decodes and scores. Usage: allennlp_crf_small.py cthtorch|torch

Changed from the original: the imports, the functions trimmed to the branches used, a toy tagger around them.
allennlp: Apache License, Version 2.0, Copyright the AllenNLP authors (http://www.apache.org/licenses/LICENSE-2.0).
Unless required by applicable law or agreed to in writing, software distributed under the License is distributed
on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
pytorch-crf: MIT License, Copyright (c) 2017 Kemal Kurniawan.
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
import importlib, sys, math
from typing import List, Optional, Tuple
torch = importlib.import_module(sys.argv[1])
nn = importlib.import_module(sys.argv[1] + ".nn")
F = importlib.import_module(sys.argv[1] + ".nn.functional")
rnn_utils = importlib.import_module(sys.argv[1] + ".nn.utils.rnn")

def get_mask_from_sequence_lengths(sequence_lengths, max_length: int):
    ones = sequence_lengths.new_ones(sequence_lengths.size(0), max_length)
    range_tensor = ones.cumsum(dim=1)
    return sequence_lengths.unsqueeze(1) >= range_tensor

def sort_batch_by_length(tensor, sequence_lengths):
    sorted_sequence_lengths, permutation_index = sequence_lengths.sort(0, descending=True)
    sorted_tensor = tensor.index_select(0, permutation_index)
    index_range = torch.arange(0, len(sequence_lengths), device=sequence_lengths.device)
    _, reverse_mapping = permutation_index.sort(0, descending=False)
    restoration_indices = index_range.index_select(0, reverse_mapping)
    return sorted_tensor, sorted_sequence_lengths, restoration_indices, permutation_index

def tiny_value_of_dtype(dtype):
    if not dtype.is_floating_point:
        raise TypeError("Only supports floating point dtypes.")
    if dtype == torch.float or dtype == torch.double:
        return 1e-13
    elif dtype == torch.half:
        return 1e-4
    else:
        raise TypeError("Does not support dtype " + str(dtype))

def min_value_of_dtype(dtype):
    return info_value_of_dtype(dtype).min

def info_value_of_dtype(dtype):
    if dtype == torch.bool:
        raise TypeError("Does not support torch.bool")
    elif dtype.is_floating_point:
        return torch.finfo(dtype)
    else:
        return torch.iinfo(dtype)

def masked_softmax(vector, mask, dim: int = -1, memory_efficient: bool = False):
    if mask is None:
        result = torch.nn.functional.softmax(vector, dim=dim)
    else:
        while mask.dim() < vector.dim():
            mask = mask.unsqueeze(1)
        if not memory_efficient:
            result = torch.nn.functional.softmax(vector * mask, dim=dim)
            result = result * mask
            result = result / (result.sum(dim=dim, keepdim=True) + tiny_value_of_dtype(result.dtype))
        else:
            masked_vector = vector.masked_fill(~mask, min_value_of_dtype(vector.dtype))
            result = torch.nn.functional.softmax(masked_vector, dim=dim)
    return result

def masked_log_softmax(vector, mask, dim: int = -1):
    if mask is not None:
        while mask.dim() < vector.dim():
            mask = mask.unsqueeze(1)
        vector = vector + (mask + tiny_value_of_dtype(vector.dtype)).log()
    return torch.nn.functional.log_softmax(vector, dim=dim)

def masked_max(vector, mask, dim: int, keepdim: bool = False):
    replaced_vector = vector.masked_fill(~mask, min_value_of_dtype(vector.dtype))
    max_value, _ = replaced_vector.max(dim=dim, keepdim=keepdim)
    return max_value

def masked_mean(vector, mask, dim: int, keepdim: bool = False):
    replaced_vector = vector.masked_fill(~mask, 0.0)
    value_sum = torch.sum(replaced_vector, dim=dim, keepdim=keepdim)
    value_count = torch.sum(mask, dim=dim, keepdim=keepdim)
    return value_sum / value_count.float().clamp(min=tiny_value_of_dtype(torch.float))

def get_range_vector(size: int, device: int):
    if device > -1:
        return torch.cuda.LongTensor(size, device=device).fill_(1).cumsum(0) - 1
    else:
        return torch.arange(0, size, dtype=torch.long)

def get_device_of(tensor):
    if not tensor.is_cuda:
        return -1
    else:
        return tensor.get_device()

def flatten_and_batch_shift_indices(indices, sequence_length: int):
    if torch.max(indices) >= sequence_length or torch.min(indices) < 0:
        raise ValueError(f"All elements in indices should be in range (0, {sequence_length - 1})")
    offsets = get_range_vector(indices.size(0), get_device_of(indices)) * sequence_length
    for _ in range(len(indices.size()) - 1):
        offsets = offsets.unsqueeze(1)
    offset_indices = indices + offsets
    offset_indices = offset_indices.view(-1)
    return offset_indices

def batched_index_select(target, indices, flattened_indices=None):
    if flattened_indices is None:
        flattened_indices = flatten_and_batch_shift_indices(indices, target.size(1))
    flattened_target = target.view(-1, target.size(-1))
    flattened_selected = flattened_target.index_select(0, flattened_indices)
    selected_shape = list(indices.size()) + [target.size(-1)]
    selected_targets = flattened_selected.view(*selected_shape)
    return selected_targets

def weighted_sum(matrix, attention):
    if attention.dim() == 2 and matrix.dim() == 3:
        return attention.unsqueeze(1).bmm(matrix).squeeze(1)
    if attention.dim() == 3 and matrix.dim() == 3:
        return attention.bmm(matrix)
    if matrix.dim() - 1 < attention.dim():
        expanded_size = list(matrix.size())
        for i in range(attention.dim() - matrix.dim() + 1):
            matrix = matrix.unsqueeze(1)
            expanded_size.insert(i + 1, attention.size(i + 1))
        matrix = matrix.expand(*expanded_size)
    intermediate = attention.unsqueeze(-1).expand_as(matrix) * matrix
    return intermediate.sum(dim=-2)

def sequence_cross_entropy_with_logits(logits, targets, weights, average: str = "batch", label_smoothing=None, gamma=None, alpha=None):
    weights = weights.to(logits.dtype)
    non_batch_dims = tuple(range(1, len(weights.shape)))
    weights_batch_sum = weights.sum(dim=non_batch_dims)
    logits_flat = logits.view(-1, logits.size(-1))
    log_probs_flat = torch.nn.functional.log_softmax(logits_flat, dim=-1)
    targets_flat = targets.view(-1, 1).long()
    if label_smoothing is not None and label_smoothing > 0.0:
        num_classes = logits.size(-1)
        smoothing_value = label_smoothing / num_classes
        smoothed_targets = torch.full_like(log_probs_flat, smoothing_value).scatter_(-1, targets_flat, 1.0 - label_smoothing + smoothing_value)
        negative_log_likelihood_flat = -log_probs_flat * smoothed_targets
        negative_log_likelihood_flat = negative_log_likelihood_flat.sum(-1, keepdim=True)
    else:
        negative_log_likelihood_flat = -torch.gather(log_probs_flat, dim=1, index=targets_flat)
    negative_log_likelihood = negative_log_likelihood_flat.view(*targets.size())
    negative_log_likelihood = negative_log_likelihood * weights
    if average == "batch":
        per_batch_loss = negative_log_likelihood.sum(non_batch_dims) / (weights_batch_sum + tiny_value_of_dtype(negative_log_likelihood.dtype))
        num_non_empty_sequences = (weights_batch_sum > 0).sum() + tiny_value_of_dtype(negative_log_likelihood.dtype)
        return per_batch_loss.sum() / num_non_empty_sequences
    elif average == "token":
        return negative_log_likelihood.sum() / (weights_batch_sum.sum() + tiny_value_of_dtype(negative_log_likelihood.dtype))
    else:
        return negative_log_likelihood.sum(non_batch_dims) / (weights_batch_sum + tiny_value_of_dtype(negative_log_likelihood.dtype))

def viterbi_decode(tag_sequence, transition_matrix, tag_observations=None, allowed_start_transitions=None,
                   allowed_end_transitions=None, top_k=None):
    if top_k is None:
        top_k = 1
        flatten_output = True
    else:
        flatten_output = False
    sequence_length, num_tags = list(tag_sequence.size())
    has_start_end_restrictions = (allowed_end_transitions is not None or allowed_start_transitions is not None)
    if has_start_end_restrictions:
        if allowed_end_transitions is None:
            allowed_end_transitions = torch.zeros(num_tags)
        if allowed_start_transitions is None:
            allowed_start_transitions = torch.zeros(num_tags)
        num_tags = num_tags + 2
        new_transition_matrix = torch.zeros(num_tags, num_tags)
        new_transition_matrix[:-2, :-2] = transition_matrix
        allowed_start_transitions = torch.cat([allowed_start_transitions, torch.tensor([-math.inf, -math.inf])])
        allowed_end_transitions = torch.cat([allowed_end_transitions, torch.tensor([-math.inf, -math.inf])])
        new_transition_matrix[-2, :] = allowed_start_transitions
        new_transition_matrix[-1, :] = -math.inf
        new_transition_matrix[:, -1] = allowed_end_transitions
        new_transition_matrix[:, -2] = -math.inf
        transition_matrix = new_transition_matrix
    if tag_observations:
        if len(tag_observations) != sequence_length:
            raise ValueError("bad")
    else:
        tag_observations = [-1 for _ in range(sequence_length)]
    if has_start_end_restrictions:
        tag_observations = [num_tags - 2] + tag_observations + [num_tags - 1]
        zero_sentinel = torch.zeros(1, num_tags)
        extra_tags_sentinel = torch.ones(sequence_length, 2) * -math.inf
        tag_sequence = torch.cat([tag_sequence, extra_tags_sentinel], -1)
        tag_sequence = torch.cat([zero_sentinel, tag_sequence, zero_sentinel], 0)
        sequence_length = tag_sequence.size(0)
    path_scores = []
    path_indices = []
    if tag_observations[0] != -1:
        one_hot = torch.zeros(num_tags)
        one_hot[tag_observations[0]] = 100000.0
        path_scores.append(one_hot.unsqueeze(0))
    else:
        path_scores.append(tag_sequence[0, :].unsqueeze(0))
    for timestep in range(1, sequence_length):
        summed_potentials = path_scores[timestep - 1].unsqueeze(2) + transition_matrix
        summed_potentials = summed_potentials.view(-1, num_tags)
        max_k = min(summed_potentials.size()[0], top_k)
        scores, paths = torch.topk(summed_potentials, k=max_k, dim=0)
        observation = tag_observations[timestep]
        if observation != -1:
            one_hot = torch.zeros(num_tags)
            one_hot[observation] = 100000.0
            path_scores.append(one_hot.unsqueeze(0))
        else:
            path_scores.append(tag_sequence[timestep, :] + scores)
        path_indices.append(paths.squeeze())
    path_scores_v = path_scores[-1].view(-1)
    max_k = min(path_scores_v.size()[0], top_k)
    viterbi_scores, best_paths = torch.topk(path_scores_v, k=max_k, dim=0)
    viterbi_paths = []
    for i in range(max_k):
        viterbi_path = [best_paths[i]]
        for backward_timestep in reversed(path_indices):
            viterbi_path.append(int(backward_timestep.view(-1)[viterbi_path[-1]]))
        viterbi_path.reverse()
        if has_start_end_restrictions:
            viterbi_path = viterbi_path[1:-1]
        viterbi_path = [j % num_tags for j in viterbi_path]
        viterbi_paths.append(viterbi_path)
    if flatten_output:
        return viterbi_paths[0], viterbi_scores[0]
    return viterbi_paths, viterbi_scores

# ---------------- kmkurn/pytorch-crf
class CRF(nn.Module):
    def __init__(self, num_tags: int, batch_first: bool = False) -> None:
        if num_tags <= 0:
            raise ValueError(f'invalid number of tags: {num_tags}')
        super().__init__()
        self.num_tags = num_tags
        self.batch_first = batch_first
        self.start_transitions = nn.Parameter(torch.empty(num_tags))
        self.end_transitions = nn.Parameter(torch.empty(num_tags))
        self.transitions = nn.Parameter(torch.empty(num_tags, num_tags))
        self.reset_parameters()
    def reset_parameters(self) -> None:
        nn.init.uniform_(self.start_transitions, -0.1, 0.1)
        nn.init.uniform_(self.end_transitions, -0.1, 0.1)
        nn.init.uniform_(self.transitions, -0.1, 0.1)
    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(num_tags={self.num_tags})'
    def forward(self, emissions, tags, mask=None, reduction: str = 'sum'):
        self._validate(emissions, tags=tags, mask=mask)
        if reduction not in ('none', 'sum', 'mean', 'token_mean'):
            raise ValueError(f'invalid reduction: {reduction}')
        if mask is None:
            mask = torch.ones_like(tags, dtype=torch.uint8)
        if self.batch_first:
            emissions = emissions.transpose(0, 1)
            tags = tags.transpose(0, 1)
            mask = mask.transpose(0, 1)
        numerator = self._compute_score(emissions, tags, mask)
        denominator = self._compute_normalizer(emissions, mask)
        llh = numerator - denominator
        if reduction == 'none':
            return llh
        if reduction == 'sum':
            return llh.sum()
        if reduction == 'mean':
            return llh.mean()
        assert reduction == 'token_mean'
        return llh.sum() / mask.type_as(emissions).sum()
    def decode(self, emissions, mask=None):
        self._validate(emissions, mask=mask)
        if mask is None:
            mask = emissions.new_ones(emissions.shape[:2], dtype=torch.uint8)
        if self.batch_first:
            emissions = emissions.transpose(0, 1)
            mask = mask.transpose(0, 1)
        return self._viterbi_decode(emissions, mask)
    def _validate(self, emissions, tags=None, mask=None):
        if emissions.dim() != 3:
            raise ValueError(f'emissions must have dimension of 3, got {emissions.dim()}')
        if emissions.size(2) != self.num_tags:
            raise ValueError(f'expected last dimension of emissions is {self.num_tags}, got {emissions.size(2)}')
        if tags is not None:
            if emissions.shape[:2] != tags.shape:
                raise ValueError('the first two dimensions of emissions and tags must match, '
                                 f'got {tuple(emissions.shape[:2])} and {tuple(tags.shape)}')
        if mask is not None:
            if emissions.shape[:2] != mask.shape:
                raise ValueError('bad mask')
            no_empty_seq = not self.batch_first and mask[0].all()
            no_empty_seq_bf = self.batch_first and mask[:, 0].all()
            if not no_empty_seq and not no_empty_seq_bf:
                raise ValueError('mask of the first timestep must all be on')
    def _compute_score(self, emissions, tags, mask):
        assert emissions.dim() == 3 and tags.dim() == 2
        assert emissions.shape[:2] == tags.shape
        assert emissions.size(2) == self.num_tags
        assert mask.shape == tags.shape
        assert mask[0].all()
        seq_length, batch_size = tags.shape
        mask = mask.type_as(emissions)
        score = self.start_transitions[tags[0]]
        score += emissions[0, torch.arange(batch_size), tags[0]]
        for i in range(1, seq_length):
            score += self.transitions[tags[i - 1], tags[i]] * mask[i]
            score += emissions[i, torch.arange(batch_size), tags[i]] * mask[i]
        seq_ends = mask.long().sum(dim=0) - 1
        last_tags = tags[seq_ends, torch.arange(batch_size)]
        score += self.end_transitions[last_tags]
        return score
    def _compute_normalizer(self, emissions, mask):
        seq_length = emissions.size(0)
        score = self.start_transitions + emissions[0]
        for i in range(1, seq_length):
            broadcast_score = score.unsqueeze(2)
            broadcast_emissions = emissions[i].unsqueeze(1)
            next_score = broadcast_score + self.transitions + broadcast_emissions
            next_score = torch.logsumexp(next_score, dim=1)
            score = torch.where(mask[i].unsqueeze(1), next_score, score)
        score += self.end_transitions
        return torch.logsumexp(score, dim=1)
    def _viterbi_decode(self, emissions, mask):
        seq_length, batch_size = mask.shape
        score = self.start_transitions + emissions[0]
        history = []
        for i in range(1, seq_length):
            broadcast_score = score.unsqueeze(2)
            broadcast_emission = emissions[i].unsqueeze(1)
            next_score = broadcast_score + self.transitions + broadcast_emission
            next_score, indices = next_score.max(dim=1)
            score = torch.where(mask[i].unsqueeze(1), next_score, score)
            history.append(indices)
        score += self.end_transitions
        seq_ends = mask.long().sum(dim=0) - 1
        best_tags_list = []
        for idx in range(batch_size):
            _, best_last_tag = score[idx].max(dim=0)
            best_tags = [best_last_tag.item()]
            for hist in reversed(history[:seq_ends[idx]]):
                best_last_tag = hist[idx][best_tags[-1]]
                best_tags.append(best_last_tag.item())
            best_tags.reverse()
            best_tags_list.append(best_tags)
        return best_tags_list

class Tagger(nn.Module):
    def __init__(self, vocab, emb, hidden, num_tags):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hidden // 2, num_layers=1, bidirectional=True, batch_first=True)
        self.proj = nn.Linear(hidden, num_tags)
        self.crf = CRF(num_tags, batch_first=True)
    def emissions(self, tokens, lengths):
        sorted_tokens, sorted_lengths, restore, _ = sort_batch_by_length(tokens, lengths)
        packed = rnn_utils.pack_padded_sequence(self.emb(sorted_tokens), sorted_lengths.cpu(), batch_first=True)
        out, _ = self.lstm(packed)
        out, _ = rnn_utils.pad_packed_sequence(out, batch_first=True, total_length=tokens.size(1))
        return self.proj(out.index_select(0, restore))

torch.manual_seed(0)
B, T, V, K = 4, 6, 20, 5
lengths = torch.tensor([6, 3, 5, 2])
mask = get_mask_from_sequence_lengths(lengths, T)
print(mask)
tokens = torch.randint(1, V, (B, T)) * mask
tags = torch.randint(0, K, (B, T)) * mask
vec = torch.randn(B, T)
print(masked_softmax(vec, mask))
print(masked_softmax(vec, mask, memory_efficient=True))
print(masked_log_softmax(vec, mask))
h = torch.randn(B, T, 3)
print(masked_max(h, mask.unsqueeze(-1), dim=1), masked_mean(h, mask.unsqueeze(-1), dim=1))
idx = torch.tensor([[0, 2], [1, 1], [4, 0], [1, 0]])
print(batched_index_select(h, idx))
print(weighted_sum(h, masked_softmax(vec, mask)))
print(sort_batch_by_length(h, lengths)[1:])
m = Tagger(V, 8, 10, K)
opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
for ep in range(6):
    opt.zero_grad()
    em = m.emissions(tokens, lengths)
    nll = -m.crf(em, tags, mask=mask, reduction='mean')
    seq_loss = sequence_cross_entropy_with_logits(em, tags, mask, label_smoothing=0.1)
    (nll + seq_loss).backward()
    nn.utils.clip_grad_norm_(m.parameters(), 5.0)
    opt.step()
    print(f"epoch {ep} crf nll {nll.item():.5f} seq ce {seq_loss.item():.5f}")
with torch.no_grad():
    em = m.emissions(tokens, lengths)
    print(m.crf.decode(em, mask=mask))
    print(m.crf(em, tags, mask=mask, reduction='none'))
    print(m.crf(em, tags, mask=mask.byte(), reduction='token_mean'))
    for b in range(B):
        path, score = viterbi_decode(em[b, :lengths[b]], m.crf.transitions, allowed_start_transitions=m.crf.start_transitions, allowed_end_transitions=m.crf.end_transitions)
        print(path, round(score.item(), 4))
    paths, scores = viterbi_decode(em[0], m.crf.transitions, top_k=3)
    print(paths, scores)
    print(viterbi_decode(em[0], m.crf.transitions, tag_observations=[1, -1, -1, 2, -1, -1]))
print(m.crf)
print(min_value_of_dtype(torch.float), min_value_of_dtype(torch.half), info_value_of_dtype(torch.long))
try:
    CRF(3)(torch.randn(2, 2, 3), torch.zeros(2, 2, dtype=torch.long), mask=torch.tensor([[0, 1], [1, 1]], dtype=torch.uint8))
except ValueError as e:
    print("ValueError", e)
