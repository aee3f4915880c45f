"""The backward/LAPACK helpers our derivative formulas and composites call
live in cthtorch._C._internal, out of the places PyTorch programs look, and
each still checks its arguments: a bad call (ours, or a user reaching in)
raises instead of reading or writing out of bounds (issue 16)."""
import glob
import os
import sys

import pytest

import cthtorch as ct
import cthtorch.nn.functional as F
from oracle import require_torch

torch = require_torch()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import generate_code  # noqa: E402

I = ct._C._internal
INTERNAL = sorted({d.name for d in generate_code.load_decls(
    sorted(glob.glob(os.path.join(ROOT, "src", "ATen", "declarations", "*.yaml")))) if d.internal})


def test_internal_namespace_holds_every_internal_declaration():
    assert len(INTERNAL) > 50
    assert [n for n in INTERNAL if not callable(getattr(I, n, None))] == []


@pytest.mark.parametrize("where", ["torch", "Tensor", "_VariableFunctions", "_nn", "nn.functional"])
def test_internal_helpers_are_not_where_pytorch_programs_look(where):
    holder = {"torch": ct, "Tensor": ct.Tensor, "_VariableFunctions": ct._C._VariableFunctions, "_nn": ct._C._nn,
              "nn.functional": F}[where]
    reachable = [n for n in INTERNAL if hasattr(holder, n) or hasattr(holder, n + "_")]
    assert reachable == []


def test_torch_has_none_of_them_either():
    # what torch exports under these names we must export too: keep the list honest
    assert [n for n in INTERNAL if hasattr(torch, n) or hasattr(torch.Tensor, n)] == []


def t(*shape, dtype=None):
    return ct.randn(shape, dtype=dtype or ct.float32)


def idx(*vals):
    return ct.tensor(list(vals))


# (helper, arguments): every call is inconsistent in a way the public wrapper
# never is: mismatched shapes, out-of-range indices, wrong dtypes.
BAD_CALLS = [
    ("embedding_dense_backward", (t(2, 3), idx(0, 100), (10, 3), -1, False)),        # the example
    ("embedding_dense_backward", (t(2, 3), idx(0, -1), (10, 3), -1, False)),
    ("embedding_dense_backward", (t(2, 3), idx(0, 100), (10, 3), 100, True)),          # padding_idx out of range too
    ("embedding_dense_backward", (t(5, 3), idx(0, 1), (10, 3), -1, False)),            # grad rows != indices
    ("embedding_dense_backward", (t(2, 4), idx(0, 1), (10, 3), -1, False)),            # grad dim != embedding_dim
    ("embedding_dense_backward", (t(2, 3), t(2), (10, 3), -1, False)),                 # float indices
    ("embedding_dense_backward", (t(2, 3), idx(0, 1), (10, 3, 1), -1, False)),
    ("embedding_dense_backward", (t(), t(1, 2, 3, 3), [2, 3, 4, 5], 0, False)),
    ("_lapack_cholesky", (t(2, 3), True)),
    ("_lapack_cholesky", (t(5, 2, 3), False)),
    ("_lapack_eigh", (t(0, 3), True, False)),
    ("_lapack_eigh", (t(5, 2, 3), False, True)),
    ("_lapack_lu_solve", (t(0, 3), t(3), t(3, 3), True)),
    ("_lapack_lu_solve", (t(3, 3), ct.tensor([1, 2, 7], dtype=ct.int32), t(3, 2), False)),   # pivot past n
    ("_lapack_lu_solve", (t(3, 3), ct.tensor([0, 2, 3], dtype=ct.int32), t(3, 2), False)),   # pivot below 1
    ("_lapack_triangular_solve", (t(2, 3), t(3, 3), True, True, False)),
    ("_lapack_lu", (t(3),)),
    ("_lapack_qr", (t(3, 3), "bad")),
    ("_lapack_orgqr", (t(3), t(2))),                   # A not a matrix
    ("_lapack_orgqr", (t(2, 3), t(2))),                # wide A: m < n
    ("_lapack_orgqr", (t(3, 3), t(5))),                # more reflectors than columns
    ("_lapack_orgqr", (t(3, 3), t(2, dtype=ct.float64))),   # tau's dtype differs
    ("_lapack_orgqr", (t(2, 3, 3), t(3, 2))),          # tau's batch differs
    ("_lapack_geqrf", (t(3),)),
    ("_lapack_geqrf", (ct.ones(2, 3, dtype=ct.int64),)),
    ("_lapack_ldl_factor", (t(2, 3),)),
    ("_lapack_ldl_solve", (t(3, 3), ct.tensor([1, 2, 7], dtype=ct.int32), t(3, 2))),   # pivot past n
    ("_lapack_ldl_solve", (t(3, 3), ct.tensor([0, 2, 3], dtype=ct.int32), t(3, 2))),   # pivot 0
    ("_lapack_ldl_solve", (t(3, 3), ct.tensor([1, 2, 3], dtype=ct.int32), t(2, 2))),   # B's rows
    ("_lu_pivots_to_permutation", (ct.tensor([1, 5], dtype=ct.int32), 2)),
    ("_lu_pivots_to_permutation", (ct.tensor([1, 1], dtype=ct.int32), -3)),
    ("max_pool2d_with_indices_backward", (t(2, 3), t(2, 3, 4, 5), idx(0, 1))),
    ("max_pool2d_with_indices_backward", (t(1, 1, 2, 2), t(1, 1, 4, 4), ct.full((1, 1, 2, 2), 16))),
    ("max_pool2d_with_indices_backward", (t(1, 1, 2, 2), t(1, 1, 4, 4), ct.zeros(1, 1, 2, 2))),   # float indices
    ("max_pool2d_with_indices_backward", (t(1, 1, 3, 3), t(1, 1, 4, 4), ct.zeros(1, 1, 2, 2, dtype=ct.int64))),
    ("max_pool2d_with_indices_backward", (t(2, 1, 2, 2), t(1, 1, 4, 4), ct.zeros(2, 1, 2, 2, dtype=ct.int64))),
    ("_max_pool2d_take", (t(2, 3), t(3))),
    ("_max_pool2d_take", (t(1, 1, 4, 4), ct.full((1, 1, 2, 2), -2))),
    ("_max_pool2d_take", (t(1, 1, 4, 4), ct.full((1, 1, 2, 2), 16))),
    ("_max_pool2d_take", (t(1, 1, 4, 4), ct.tensor([True]))),
    ("avg_pool2d_backward", (t(1, 1, 3, 3), t(1, 1, 4, 4), [2, 2], [2, 2], [0, 0], False, True, None)),
    ("adaptive_avg_pool2d_backward", (idx(1, 2), t(1, 2, 3, 3))),
    ("adaptive_avg_pool2d_backward", (t(2, 2, 1, 1), t(1, 2, 3, 3))),
    ("adaptive_avg_pool2d_backward", (t(3), t(3, 3))),
    ("_adaptive_avg_pool2d_like", (t(1, 2, 3, 3), t(3))),
    ("conv2d_backward", (t(1, 2, 5, 5), t(1, 3, 6, 6), t(2, 3, 3, 3), [1, 1], [0, 0], [1, 1], 1)),
    ("conv2d_backward", (t(1, 4, 4, 4), t(1, 3, 6, 6), t(2, 3, 3, 3), [1, 1], [0, 0], [1, 1], 1)),
    ("conv2d_backward", (t(1, 2, 4, 4), t(1, 4, 6, 6), t(2, 3, 3, 3), [1, 1], [0, 0], [1, 1], 1)),
    ("conv2d_double_backward", (t(1, 3, 6, 6), None, None, t(1, 2, 5, 5), t(1, 3, 6, 6), t(2, 3, 3, 3),
                                [1, 1], [0, 0], [1, 1], 1)),
    ("nll_loss_backward", (t(), t(2, 3), idx(0, 7), None, 1, -100)),
    ("nll_loss_backward", (t(), t(2, 3), idx(0, -7), t(3), 1, -100)),
    ("nll_loss_backward", (t(3), t(2, 3), idx(0, 1), None, 0, -100)),         # grad of the wrong size
    ("nll_loss_backward", (t(2), t(2, 3), idx(0, 1), None, 1, -100)),
    ("nll_loss_backward", (t(), t(2, 3), idx(0, 1), t(5), 1, -100)),
    ("nll_loss_backward", (t(), t(2, 3), idx(0, 1), None, 7, -100)),
    ("native_batch_norm_backward", (t(2, 3), t(2, 3, 4), None, None, None, t(3), t(3), True, 1e-5)),
    ("native_batch_norm_backward", (t(2, 3, dtype=ct.float64), t(2, 3), None, None, None, t(3), t(3), True, 1e-5)),
    ("native_batch_norm_backward", (t(2, 3), t(2, 3), None, None, None, t(5), t(3), True, 1e-5)),
    ("native_batch_norm_backward", (t(3), t(3), None, None, None, t(3), t(3), True, 1e-5)),
    ("native_layer_norm_backward", (t(2, 3), t(2, 5), [5], t(2), t(2), None)),
    ("native_layer_norm_backward", (t(2, 5), t(2, 5), [5], t(1), t(2), None)),
    ("native_layer_norm_backward", (t(2, 5), t(2, 5), [5], t(2), t(2), t(3))),
    ("native_layer_norm_backward", (t(2, 5), t(2, 5, dtype=ct.float64), [5], t(2), t(2), None)),
    ("layer_norm_double_backward", (t(2, 5), None, None, t(2, 3), t(2, 5), [5], t(2), t(2), None)),
    ("layer_norm_double_backward", (t(2, 5), None, None, t(2, 5), t(2, 5), [5], t(1), t(2), None)),
    ("layer_norm_double_backward", (None, t(3), None, t(2, 5), t(2, 5), [5], t(2), t(2), t(5))),
    ("_group_norm_check", (t(2, 4, 3, dtype=ct.float64), t(4), None)),                # float32 weight, float64 input
    ("batch_norm_double_backward", (t(2, 3), None, None, t(2, 3), t(2, 3), None, None, None, t(1), t(3), True,
                                    1e-5)),
    ("batch_norm_double_backward", (t(4, 3), None, None, t(2, 3), t(2, 3), None, None, None, t(3), t(3), True,
                                    1e-5)),
    ("batch_norm_double_backward", (None, None, None, t(3), t(3), None, None, None, t(3), t(3), True, 1e-5)),
    ("prod_backward", (t(5), t(2, 3), [1], False)),
    ("prod_backward_ggrad", (t(2, 2), t(2), t(2, 3), [1], False)),
    ("prod_backward_gself", (t(2, 3), t(7), t(2, 3), [1], False)),
    ("cumprod_backward", (t(3, 2), t(2, 3), 1)),
    ("cumprod_backward_ggrad", (t(2), t(2, 3), t(2, 3), 1)),
    ("cumprod_backward_gself", (t(2, 3), t(2, 4), t(2, 3), 1)),
    ("scatter_grad", (t(2, 3), 1, t(2, 3), [2, 4], True)),                    # float indices
    ("scatter_grad", (t(2, 3), 1, idx(0, 1), [2, 4], True)),                  # indices shape != grad
    ("scatter_grad", (t(5, 3), 1, ct.zeros(5, 3, dtype=ct.int64), [2, 4], True)),
    ("scatter_grad", (t(2, 3), 0, ct.zeros(2, 3, dtype=ct.int64), [2, 4], False)),
    ("gather_grad", (t(2, 3), 1, t(2, 1), True)),
    ("gather_grad", (t(2, 3), 1, ct.zeros(5, 1, dtype=ct.int64), True)),
    ("gather_grad", (t(2, 3), 1, ct.zeros(2, 1, dtype=ct.int64), False)),
    ("index_select_backward", (t(2, 3), [4, 3], 0, idx(0, 9))),
    ("index_select_backward", (t(2, 3), [4, 3], 0, t(2))),
    ("index_select_backward", (t(5, 3), [4, 3], 0, idx(0, 1))),
    ("select_backward", (t(3), [4, 3], 0, 7)),
    ("slice_backward", (t(9, 3), [4, 3], 0, 0, 4, 1)),
    ("narrow_backward", (t(2, 3), [4, 3], 0, 3, 2)),
    ("diagonal_backward", (t(5), [3, 3], 0, 0, 1)),
    ("unfold_backward", (t(4, 3, 2), [4, 3], 1, 2, 1)),
    # (grad, input size, stride, offset, storage numel, view size, stride, offset)
    ("as_strided_backward", (t(5), [4], [1], 0, 4, [2, 3], [1, 1], 0)),
    ("as_strided_backward", (t(2, 3), [4], [1], 0, 4, [2, 3], [1], 0)),
    ("as_strided_backward", (t(2), [4], [1], 0, 3, [2], [1], 0)),                 # input past the storage
    ("as_strided_backward", (t(2), [4], [-1], 0, 4, [2], [1], 0)),                # input before element 0
    ("as_strided_backward", (t(2), [4], [1], -1, 4, [2], [1], 0)),
    ("as_strided_backward", (t(2), [4, 1], [1], 0, 4, [2], [1], 0)),              # input sizes != strides
    ("as_strided_backward", (t(2), [4, 2], [1, 2 ** 62], 0, 8, [2], [1], 0)),     # extent overflows
    ("as_strided_backward", (t(2), [0], [1], 0, -1, [2], [1], 0)),                # negative storage
    ("_lapack_svd", (t(3), False, True)),
    ("_gather_c", (t(2, 3), 1, ct.full((2, 3), 5))),
    ("_scatter_c", (t(2, 3), 1, ct.full((2, 3), 5), t(2, 3), 0, "sum")),
    ("_index_add_c", (t(2, 3), 1, idx(0, 5), t(2, 2), 1)),
    ("_repeat_interleave_backward", (t(5), [2], 0, idx(1, 2), 0)),
    ("_repeat_interleave_forward", (t(2), idx(1, 2, 3), 1, 0)),
    ("_histogram", (t(5), -1, None, None, None, None, False)),
    ("_tri_indices", (-1, 3, 0, True)),
    ("_polygamma_n", (0, t(3))),
    ("threshold_backward", (t(2, 3), t(4), 0.0)),
    ("gelu_backward", (t(2, 3), t(3, 2), "none")),
    ("elu_backward", (t(5), t(3), 1.0, 1.0, 1.0)),
    ("cumsum_reverse", (t(2, 3), 5)),
    ("logcumsumexp_reverse", (t(2, 3), -3)),
    ("_trigamma", ("not a tensor",)),
    # the 3-d adaptive pools, pdist, embedding_bag and the fused RNN cells
    ("_adaptive_avg_pool3d_like", (t(2, 3), t(1, 1, 2, 2, 2))),
    ("_adaptive_avg_pool3d_like", (t(1, 1, 4, 4, 4), t(2))),                  # like has too few dims to read
    ("adaptive_avg_pool3d_backward", (t(4), t(4))),                           # grad read only once ndim is checked
    ("as_strided_backward", (t(4), [4], [1], 0, 4, [2 ** 62 + 1, 4], [0, 0], 0)),  # the view's numel wraps to 4
    ("adaptive_avg_pool3d_backward", (t(1, 1, 2, 2), t(1, 1, 4, 4, 4))),
    ("adaptive_avg_pool3d_backward", (t(2, 1, 2, 2, 2), t(1, 1, 4, 4, 4))),
    ("adaptive_max_pool3d_backward", (t(1, 1, 2, 2, 2), t(1, 1, 4, 4, 4), ct.full((1, 1, 2, 2, 2), 64))),
    ("adaptive_max_pool3d_backward", (t(1, 1, 2, 2, 2), t(1, 1, 4, 4, 4), ct.zeros(1, 1, 2, 2, 2))),
    ("_max_pool3d_take", (t(1, 1, 4, 4, 4), ct.full((1, 1, 2, 2, 2), -2))),
    ("_max_pool3d_take", (t(1, 1, 4, 4, 4), ct.full((1, 1, 2, 2, 2), 64))),
    ("_pdist_backward", (t(10), t(3, 2), 2.0, t(10))),                      # 3 rows make 3 pairs
    ("_pdist_backward", (t(3), t(3, 2), 2.0, t(1))),
    ("_embedding_bag_backward", (t(2, 3), idx(0, 100, 2), idx(0, 1), idx(0, 0, 1), idx(1, 2), idx(0, 0), (10, 3),
                                 False, 0, None, None)),
    ("_embedding_bag_backward", (t(2, 3), idx(0, 1, 2), idx(0, 5), idx(0, 7, 1), idx(1, 2), idx(0, 0), (10, 3),
                                 False, 0, None, None)),
    ("_embedding_bag_backward", (t(2, 3), idx(0, 1, 2), idx(0, 1), idx(0, 0, 1), idx(1, 2), idx(0, 0), (10, 3),
                                 False, 2, None, None)),                  # max mode: too few max_indices
    ("_embedding_bag_backward", (t(5, 7), idx(0, 1, 2), idx(0, 1), idx(0, 0, 1), idx(1, 2), idx(0, 0), (10, 3),
                                 False, 0, None, None)),
    ("_embedding_bag_per_sample_weights_backward", (t(2, 3), t(10, 3), idx(0, 100, 2), idx(0, 1), idx(0, 0, 1), 0,
                                                    None)),
    # offsets not from 0 with offset2bag empty: indices before offsets[0] would have no bag (read out of bounds)
    ("_embedding_bag_backward", (t(2, 3), idx(1, 2, 3, 4), idx(2, 3), ct.zeros(0, dtype=ct.int64), idx(0, 0),
                                 idx(0, 0), (10, 3), False, 0, None, None)),
    ("_embedding_bag_per_sample_weights_backward", (t(2, 3), t(10, 3), idx(1, 2, 3, 4), idx(2, 3),
                                                    ct.zeros(0, dtype=ct.int64), 0, None)),
    ("_embedding_bag_per_sample_weights_backward", (t(2, 3), t(10, 3), idx(0, 1, 2), idx(0, 1), idx(0, 9, 1), 0,
                                                    None)),
    ("_fused_lstm_cell_backward", (t(2, 3), t(2, 3), None, t(2, 3), t(2, 3), t(2, 5))),
    ("_fused_lstm_cell_backward", (t(2, 3), None, None, t(4, 3), t(2, 3), t(2, 12))),
    ("_gemm_pack", (t(4),)),                                                           # not a matrix
    ("_gemm_pack", (t(4, 5, dtype=ct.float64),)),                                      # float32 only
    ("_gemm_packed", (t(3, 8), t(2, 9, 24), 30)),                                      # packed for another K
    ("_gemm_packed", (t(3, 8), t(2, 8, 24), 60)),                                      # n needs 3 panels
    ("_gemm_packed", (t(3, 8), t(2, 8, 24), 30, t(2, 30))),                            # c rows != a rows
    ("_lstm_layer_forward", (t(4, 3, 7), t(3, 2), t(3, 2), ct.zeros(1, 2, 24), False)),  # gates not (T, B, 4H)
    ("_lstm_layer_forward", (t(4, 3, 8), t(3, 5), t(3, 2), ct.zeros(1, 2, 24), False)),  # h0 of another H
    ("_lstm_layer_backward", (t(4, 3, 2), None, None, t(4, 3, 8), t(4, 3, 2), t(4, 3, 2), t(3, 2), ct.zeros(1, 2, 24), None, 0,
                              False, True)),                                         # packed for K=2, not 4H=8
    ("_lstm_layer_backward", (t(4, 3, 2), None, None, t(4, 3, 8), t(4, 3, 2), t(4, 3, 2), t(3, 2), ct.zeros(1, 8, 24),
                              ct.zeros(1, 2, 24), 5, False, True)),                  # packed_ih for K=2, not 4H=8
    ("_lstm_layer_backward", (t(4, 3, 2), None, None, t(4, 3, 8), t(4, 3, 2), t(4, 3, 2), t(3, 2), ct.zeros(1, 8, 24),
                              ct.zeros(1, 8, 24), 0, False, True)),                  # no input columns
    ("_fused_gru_cell_backward", (t(2, 3), None, t(2, 3), t(2, 5))),
    ("_fused_gru_cell_backward", (t(5, 3), None, t(2, 3), t(2, 12))),
    ("_unsafe_view", (t(2, 3), (7,))),                                                 # another element count
    # the fused losses' backward and second-derivative helpers: operands that do not broadcast
    ("smooth_l1_loss_backward", (t(5), t(3), t(3), 1, 1.0)),
    ("huber_loss_backward", (t(3), t(3), t(4), 1, 1.0)),
    ("_smooth_l1_loss_second", (t(5), t(3), t(3), 1, 1.0, 1.0)),
    ("binary_cross_entropy_with_logits_backward", (t(5), t(3), t(3), None, None, 1)),
    ("binary_cross_entropy_with_logits_target_backward", (t(3), t(3), t(3), t(4), None, 0)),   # weight
    ("_binary_cross_entropy_with_logits_second", (t(3), t(3), t(3), None, t(7), 0, 0)),        # pos_weight
    ("constant_pad_nd_backward", (t(2, 3), [2, 2])),                                   # crops past the grad
    ("constant_pad_nd_backward", (t(2, 3), [1, 1, 1, 1, 1, 1])),                       # more pads than dims
]
# the activation backwards are elementwise over grad_output and self: their
# shapes must broadcast to the one they compute
for _name, _extra in [("_gelu_second", ("tanh",)), ("silu_backward", ()), ("leaky_relu_backward", (0.01,)),
                      ("hardtanh_backward", (-1.0, 1.0)), ("softplus_backward", (1.0, 20.0)),
                      ("hardsigmoid_backward", ()), ("hardswish_backward", ()), ("mish_backward", ()),
                      ("_mish_second", ()), ("log_sigmoid_backward", ())]:
    BAD_CALLS.append((_name, (t(5), t(3)) + _extra))
# the upsample backwards: grad_output must have the output's shape (here one size too many)
for _name, _nd, _interp in [("upsample_nearest1d_backward", 1, False), ("upsample_nearest2d_backward", 2, False),
                            ("upsample_nearest3d_backward", 3, False), ("_upsample_nearest_exact1d_backward", 1, False),
                            ("_upsample_nearest_exact2d_backward", 2, False),
                            ("_upsample_nearest_exact3d_backward", 3, False), ("upsample_linear1d_backward", 1, True),
                            ("upsample_bilinear2d_backward", 2, True), ("upsample_trilinear3d_backward", 3, True),
                            ("upsample_bicubic2d_backward", 2, True), ("_upsample_bilinear2d_aa_backward", 2, True),
                            ("_upsample_bicubic2d_aa_backward", 2, True)]:
    BAD_CALLS.append((_name, (t(1, 2, *[3] * _nd), [4] * _nd, [1, 2] + [2] * _nd) + ((False,) if _interp else ())))
BAD_CALLS += [
    ("_split_views", (t(4, 3), -1, 0)),                                             # negative split_size
    ("_split_views", (t(4, 3), 0, 1)),                                              # 0 over a non-empty dim
    ("_split_views", (t(4, 3), 2, 2)),                                              # dim out of range
    ("_split_with_sizes_views", (t(4, 3), [1, 2], 0)),                              # sizes do not sum to 4
    ("_split_with_sizes_views", (t(4, 3), [5, -1], 0)),                             # a negative size
    ("_unbind_views", (t(), 0)),                                                    # 0-d
    ("_unbind_views", (t(4, 3), -3)),                                               # dim out of range
    ("_complex_conj", (None,)),                                                     # no tensor
    ("_fft_c2c_forward", (t(4), 0, 1.0)),                                           # real input
    ("_fft_c2c_backward", (t(4, dtype=ct.complex64), 3, 1.0)),                       # dim out of range
    ("angle_backward", (t(2), t(3, dtype=ct.complex64))),                           # shapes do not broadcast
    ("max_pool3d_with_indices_backward", (t(1, 1, 2, 2, 2), t(1, 1, 4, 4, 4), ct.full((1, 1, 2, 2, 2), 64))),
    ("avg_pool3d_backward", (t(1, 1, 3, 2, 2), t(1, 1, 4, 4, 4), [2], [2], [0], False, True, None)),
    ("grid_sampler_2d_backward", (t(1, 2, 5, 5), t(1, 2, 4, 4), t(1, 3, 3, 2), 0, 0, False)),  # grad's size != output's
    ("grid_sampler_2d_backward", (t(1, 2, 3, 3), t(1, 2, 4, 4), t(1, 3, 3, 2), 7, 0, False)),  # no such mode
    ("grid_sampler_3d_backward", (t(1, 2, 2, 2, 2), t(1, 2, 4, 4, 4), t(1, 2, 2, 2, 2), 0, 0, False)),  # grid's last dim
    ("_max_pool1d_values", (t(2, 3, 4), [0], [], [0], [1], False)),                  # kernel 0
    ("_max_pool1d_values", (t(2, 3, 4), [2], [], [0], [1, 1], False)),               # dilation of two values
    ("_max_pool1d_values", (t(2, 3, 4, 5), [2], [], [0], [1], False)),               # 4-d input
    ("_pad_circular_backward", (t(2, 3, 5), t(2, 3, 4), [1, 1])),                   # grad's size != output's
    ("_pad_circular_backward", (t(2, 3, 6), t(2, 3, 4), [1, 1, 1])),                # odd padding length
    ("_pad_circular_backward", (t(2, 3, 6), t(2, 3, 4), [5, 1])),                   # wraps more than once
    ("roi_align", (t(1, 2, 4, 4), t(2, 4), 1.0, 2, 2, -1, False)),                  # rois not [K, 5]
    ("roi_align", (t(1, 2, 4, 4), ct.tensor([[5., 0, 0, 1, 1]]), 1.0, 2, 2, -1, False)),  # batch index out of range
    ("roi_align_backward", (t(1, 3, 2, 2), ct.zeros(1, 5), 1.0, 2, 2, [1, 2, 4, 4], -1, False)),  # channels differ
    ("roi_pool", (t(1, 2, 4, 4), ct.zeros(1, 5), 1.0, 0, 2)),                       # empty output size
    ("roi_pool_backward", (t(1, 2, 2, 2), ct.zeros(1, 5), ct.full((1, 2, 2, 2), 99), [1, 2, 4, 4])),  # argmax range
    ("ps_roi_align", (t(1, 3, 4, 4), ct.zeros(1, 5), 1.0, 2, 2, -1)),               # channels not a multiple of 4
    ("ps_roi_align_backward", (t(1, 2, 2, 2), ct.zeros(1, 5), 1.0, 2, 2, [1, 4, 4, 4], -1)),  # 2 * 4 != 4 channels
    ("ps_roi_pool", (t(1, 4, 4, 4), ct.zeros(1, 5, dtype=ct.float64), 1.0, 2, 2)),  # rois' dtype differs
    ("ps_roi_pool_backward", (t(1, 1, 2, 2), ct.zeros(1, 5), 1.0, 2, 2, [1, 4, -4, 4])),  # negative size
]


@pytest.mark.parametrize("name,args", BAD_CALLS, ids=["%s-%d" % (n, i) for i, (n, _) in enumerate(BAD_CALLS)])
def test_bad_internal_call_raises(name, args):
    with pytest.raises((RuntimeError, IndexError, ValueError, TypeError)):
        getattr(I, name)(*args)


def test_every_internal_helper_has_a_bad_call():
    assert sorted(set(INTERNAL) - {n for n, _ in BAD_CALLS}) == []


def test_embedding_dense_backward_errors_match_torch():
    # torch's CPU kernel does not check the range of its indices; its
    # dtype check is the one to mirror
    g = ct.randn(2, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        I.embedding_dense_backward(g, ct.tensor([0, 100]), (10, 3), -1, False)
    with pytest.raises(RuntimeError) as ec:
        I.embedding_dense_backward(g, ct.tensor([0.0, 1.0]), (10, 3), -1, False)
    with pytest.raises(RuntimeError) as et:
        torch.ops.aten.embedding_dense_backward(torch.randn(2, 3), torch.tensor([0.0, 1.0]), 10, -1, False)
    assert str(ec.value).split(";")[0] == str(et.value).split(";")[0]


def test_public_callers_still_work():
    # the composites that moved to _C._internal: one call each, against torch
    x = torch.randn(4, 4, dtype=torch.float64)
    a = x @ x.T + 4 * torch.eye(4, dtype=torch.float64)
    ca = ct.tensor(a.numpy())
    assert ct.allclose(ct.linalg.cholesky(ca), ct.tensor(torch.linalg.cholesky(a).numpy()))
    assert ct.allclose(ct.linalg.eigvalsh(ca), ct.tensor(torch.linalg.eigvalsh(a).numpy()))
    assert ct.allclose(ct.linalg.inv(ca), ct.tensor(torch.linalg.inv(a).numpy()))
    w = ct.randn(10, 3, requires_grad=True)
    F.embedding(ct.tensor([1, 1, 4]), w).sum().backward()
    assert w.grad[1].tolist() == [2.0, 2.0, 2.0] and w.grad[0].tolist() == [0.0, 0.0, 0.0]
    v = ct.tensor([0.0, 2.0, 1.0, 5.0])
    assert ct.histc(v, bins=5, min=0, max=5).tolist() == torch.histc(torch.tensor(v.tolist()), 5, 0, 5).tolist()
    assert ct.gather(ct.arange(6).view(2, 3), 1, ct.tensor([[2], [0]])).tolist() == [[2], [3]]
    assert ct.polygamma(2, ct.tensor([1.0])).tolist() == pytest.approx(
        torch.polygamma(2, torch.tensor([1.0])).tolist())
