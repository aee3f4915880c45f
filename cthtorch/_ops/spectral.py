"""torch.stft / torch.istft, written in terms of unfold/fold, the window and
torch.fft (whose DFT is C: src/ATen/ATComplex.c), so autograd follows."""

import cthtorch
from cthtorch import _ops
from cthtorch._utils import _dtype_name, _warn_once

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
              "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
              "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")


_NO_WINDOW_ISTFT = ("A window was not provided. A rectangular window will be applied.Please provide the same window "
                    "used by stft to make the inversion lossless.To suppress this warning and use a rectangular "
                    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
_RETURN_REAL = ("stft with return_complex=False is deprecated. In a future pytorch release, stft will return complex "
                "tensors for all inputs, and return_complex=False will raise an error.\nNote: you can still call "
                "torch.view_as_real on the complex output to recover the old return format.")


def _type_repr(t):
    # torch's Tensor::toString: complex dtypes have no legacy tensor type name
    return ("CPU%sType" if t.is_complex() else "torch.%sTensor") % _dtype_name(t.dtype)


def _opt(v):
    return "None" if v is None else str(int(v))


def _stft_repr(x, n_fft, hop, win_length, window, normalized, onesided, return_complex, align_to_window):
    """the call as torch's stft errors begin (the input after centre padding)"""
    return ("stft(%s%s, n_fft=%d, hop_length=%d, win_length=%d, window=%s, normalized=%d, onesided=%s, "
            "return_complex=%s, align_to_window=%s) : " % (_type_repr(x), list(x.shape), n_fft, hop, win_length,
                                                          _window_repr(window), int(normalized), _opt(onesided),
                                                          _opt(return_complex), _opt(align_to_window)))


def _window_repr(window):
    return "None" if window is None else "%s{%s}" % (_type_repr(window), list(window.shape))


def _window(window, n_fft, win_length, dtype, fail, istft=False):
    """the window zero-padded to n_fft; fail(text) raises the op's error (istft words them its own way)"""
    if not 0 < win_length <= n_fft:
        fail("expected 0 < win_length <= n_fft" + ("" if istft else ", but got win_length=%d" % win_length))
    if window is None:
        window = cthtorch.ones(win_length, dtype=dtype)
    if window.dim() != 1 or window.shape[0] != win_length:
        fail("Invalid window shape. window has to be 1D and length of `win_length`" if istft else
             "expected a 1D window tensor of size equal to win_length=%d, but got window with size %s"
             % (win_length, list(window.shape)))
    if win_length < n_fft:   # centred in a frame of n_fft, zeros either side
        left = (n_fft - win_length) // 2
        window = cthtorch.nn.functional.pad(window, (left, n_fft - win_length - left))
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    x = input
    if center:   # torch's Python side: viewed as 3-D for F.pad, so its errors name that shape
        nd = input.dim()
        p = n_fft // 2
        x = cthtorch.nn.functional.pad(input.view([1] * (3 - nd) + list(input.shape)), (p, p), mode=pad_mode)
        x = x.view(x.shape[-nd:])
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length

    if return_complex is None:
        if not input.is_complex() and (window is None or not window.is_complex()):
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True

    def fail(msg):
        raise RuntimeError(_stft_repr(x, n_fft, hop, win_length, window, normalized, onesided, return_complex,
                                      align_to_window) + msg)
    if window is None:
        _warn_once("stft_window", _NO_WINDOW)
    if not return_complex:
        _warn_once("stft_real", _RETURN_REAL)
    if not (x.is_floating_point() or x.is_complex()):
        fail("expected a tensor of floating point or complex values")
    if x.dim() not in (1, 2):
        fail("expected a 1D or 2D tensor")
    if align_to_window and win_length < n_fft:
        raise NotImplementedError("cthtorch: stft(align_to_window=True) with win_length < n_fft is not implemented")
    x2 = x.unsqueeze(0) if x.dim() == 1 else x
    length = x2.shape[-1]
    if not 0 < n_fft <= length:
        fail("expected 0 < n_fft < %d, but got n_fft=%d" % (length, n_fft))
    if hop <= 0:
        fail("expected hop_length > 0, but got hop_length=%d" % hop)
    w = _window(window, n_fft, win_length, x2.dtype if not x2.is_complex() else x2.real.dtype, fail)
    frames = x2.unfold(-1, n_fft, hop) * w                     # (batch, n_frames, n_fft)
    if onesided is None:
        onesided = not (x2.is_complex() or w.is_complex())
    norm = "ortho" if normalized else "backward"
    spec = cthtorch.fft.rfft(frames, dim=-1, norm=norm) if onesided else cthtorch.fft.fft(frames, dim=-1, norm=norm)
    spec = spec.transpose(-1, -2)                               # (batch, freq, n_frames)
    if input.dim() == 1:
        spec = spec.squeeze(0)
    return spec if return_complex else cthtorch.view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    z = input.unsqueeze(0) if input.dim() == 2 else input       # (batch, freq, n_frames)
    n_frames = z.shape[-1]
    onesided_arg = onesided   # as given, for the errors
    if onesided is None:
        onesided = z.shape[-2] != n_fft
    if window is None:
        _warn_once("istft_window", _NO_WINDOW_ISTFT)

    def fail(msg):
        raise RuntimeError("istft(%s%s, n_fft=%d, hop_length=%d, win_length=%d, window=%s, center=%d, normalized=%d, "
                           "onesided=%s, length=%s, return_complex=%d) : %s"
                           % (_type_repr(input), list(input.shape), n_fft, hop, win_length, _window_repr(window),
                              int(center), int(normalized), _opt(onesided_arg), _opt(length), int(return_complex),
                              msg))
    w = _window(window, n_fft, win_length, z.real.dtype, fail, istft=True)
    norm = "ortho" if normalized else "backward"
    zt = z.transpose(-1, -2)
    if onesided:
        if return_complex:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        frames = cthtorch.fft.irfft(zt, n=n_fft, dim=-1, norm=norm)
    else:
        frames = cthtorch.fft.ifft(zt, n=n_fft, dim=-1, norm=norm)
        if not return_complex:
            frames = frames.real
    frames = frames * w                                          # (batch, n_frames, n_fft)
    total = n_fft + hop * (n_frames - 1)
    fold = cthtorch.nn.functional.fold

    def overlap_add(f):   # (batch, n_frames, n_fft) -> (batch, total)
        return fold(f.transpose(1, 2), (1, total), (1, n_fft), stride=(1, hop)).reshape(f.shape[0], total)
    if frames.is_complex():
        y = cthtorch.complex(overlap_add(frames.real.contiguous()), overlap_add(frames.imag.contiguous()))
    else:
        y = overlap_add(frames)
    env = overlap_add((w * w).expand(1, n_frames, n_fft).contiguous())
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center else total
    if length is not None:
        end = min(start + length, total)
    y, env = y[:, start:end], env[:, start:end]
    if float(env.abs().min()) < 1e-11:
        raise RuntimeError("istft: window overlap add min: %g" % float(env.abs().min()))
    y = y / env
    if length is not None and y.shape[-1] < length:
        y = cthtorch.nn.functional.pad(y, (0, length - y.shape[-1]))
    return y.squeeze(0) if input.dim() == 2 else y


_ops.op("torch", "stft", stft, __name__)
_ops.op("torch", "istft", istft, __name__)
# the method forms take the same arguments, self first
_ops.op("Tensor", "stft", stft, __name__)
_ops.op("Tensor", "istft", istft, __name__)
