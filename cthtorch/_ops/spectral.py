"""torch.stft / torch.istft, written in terms of unfold/fold, the window and
torch.fft (whose DFT is C: src/ATen/ATComplex.c), so autograd follows."""
import warnings

import cthtorch
from cthtorch import _ops

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
              "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
              "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")


def _window(window, n_fft, win_length, dtype, name):
    if not 0 < win_length <= n_fft:
        raise RuntimeError("%s: expected 0 < win_length <= n_fft, but got win_length=%d" % (name, win_length))
    if window is None:
        warnings.warn(_NO_WINDOW)
        window = cthtorch.ones(win_length, dtype=dtype)
    if window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError("%s: expected a 1D window tensor of size equal to win_length=%d, but got window with "
                           "size %s" % (name, win_length, list(window.shape)))
    if win_length < n_fft:   # centred in a frame of n_fft, zeros either side
        left = (n_fft - win_length) // 2
        window = cthtorch.nn.functional.pad(window, (left, n_fft - win_length - left))
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    if return_complex is None:
        if not input.is_complex() and (window is None or not window.is_complex()):
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if input.dim() not in (1, 2):
        raise RuntimeError("stft: expected a 1D or 2D tensor, but got %dD" % input.dim())
    x = input.unsqueeze(0) if input.dim() == 1 else input
    if center:
        p = n_fft // 2
        x = cthtorch.nn.functional.pad(x.unsqueeze(1), (p, p), mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError("stft: expected 0 < n_fft <= %d, but got n_fft=%d" % (length, n_fft))
    if hop <= 0:
        raise RuntimeError("stft: expected hop_length > 0, but got hop_length=%d" % hop)
    w = _window(window, n_fft, win_length, x.dtype if not x.is_complex() else x.real.dtype, "stft")
    frames = x.unfold(-1, n_fft, hop) * w                     # (batch, n_frames, n_fft)
    if onesided is None:
        onesided = not (x.is_complex() or w.is_complex())
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
    if onesided is None:
        onesided = z.shape[-2] != n_fft
    w = _window(window if window is not None else cthtorch.ones(win_length, dtype=z.real.dtype), n_fft, win_length,
                z.real.dtype, "istft")
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
