"""PackedSequence and the pad/pack helpers."""
import collections

import cthtorch


class PackedSequence(collections.namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                                                "unsorted_indices"])):
    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        return type(self)(self.data.to(*args, **kwargs), self.batch_sizes, self.sorted_indices, self.unsorted_indices)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    max_len = max(s.shape[0] for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    # torch returns a contiguous tensor in either layout; programs call .view on it (e.g. trg[1:].view(-1))
    shape = (len(sequences), max_len) if batch_first else (max_len, len(sequences))
    out = cthtorch.full(shape + trailing, padding_value, dtype=sequences[0].dtype, device=sequences[0].device)
    for i, s in enumerate(sequences):
        n = s.shape[0]
        rows = slice(max_len - n, max_len) if padding_side == "left" else slice(0, n)
        if batch_first:
            out[i, rows] = s
        else:
            out[rows, i] = s
    return out


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    lengths = cthtorch.as_tensor(lengths, dtype=cthtorch.int64)
    if enforce_sorted:
        if any(lengths[i] < lengths[i + 1] for i in range(len(lengths) - 1)):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                               "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        lengths, sorted_indices = cthtorch.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    lens = lengths.tolist()
    if min(lens) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0")
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(max(lens))]
    data = cthtorch.cat([input[t, :b] for t, b in enumerate(batch_sizes)], 0)
    return PackedSequence(data, cthtorch.tensor(batch_sizes, dtype=cthtorch.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    data, batch_sizes = sequence.data, sequence.batch_sizes.tolist()
    B, T = batch_sizes[0], len(batch_sizes)
    if total_length is not None:
        if total_length < T:
            raise ValueError("Expected total_length to be at least the length of the longest sequence")
        T = total_length
    out = cthtorch.full((T, B) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
    rows, off = [], 0
    for t, b in enumerate(batch_sizes):
        rows.append(cthtorch.cat([data[off:off + b], out[t, b:]], 0) if b < B else data[off:off + b])
        off += b
    for t in range(len(batch_sizes), T):
        rows.append(out[t])
    out = cthtorch.stack(rows, 0)
    lengths = cthtorch.tensor([sum(1 for b in batch_sizes if b > i) for i in range(B)], dtype=cthtorch.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices)
    return (out.transpose(0, 1) if batch_first else out), lengths


def pack_sequence(sequences, enforce_sorted=True):
    lengths = cthtorch.tensor([s.shape[0] for s in sequences], dtype=cthtorch.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(lengths)]


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def invert_permutation(permutation):
    """the permutation q with q[p[i]] = i (None stays None): what undoes a sort of a batch"""
    if permutation is None:
        return None
    out = cthtorch.empty_like(permutation, memory_format=cthtorch.contiguous_format)
    return out.scatter_(0, permutation, cthtorch.arange(0, permutation.numel(), device=permutation.device))
