"""F.interpolate (upsample_* kernels) forward and backward: cthtorch and
torch timed side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_upsample.py [threads]"""
import numpy as np

from bench_scatter import main


def cases(L):
    rs = np.random.RandomState(0)
    x = L.from_numpy(rs.randn(8, 64, 56, 56).astype(np.float32))
    v = L.from_numpy(rs.randn(2, 16, 16, 32, 32).astype(np.float32))
    s = L.from_numpy(rs.randn(16, 64, 1024).astype(np.float32))
    img = L.from_numpy(rs.rand(1, 3, 512, 512).astype(np.float32))
    img8 = L.from_numpy(rs.randint(0, 256, (4, 3, 512, 512)).astype(np.uint8))   # torch: its AVX2 kernel (<= 4 ch)
    feat8 = L.from_numpy(rs.randint(0, 256, (2, 16, 128, 128)).astype(np.uint8))   # torch: its generic kernel
    xg = L.from_numpy(rs.randn(4, 32, 56, 56).astype(np.float32)).requires_grad_()
    F = L.nn.functional

    def bwd(**kw):
        def run():
            F.interpolate(xg, **kw).sum().backward()
        return run
    return {
        "nearest 2x 8x64x56x56": lambda: F.interpolate(x, scale_factor=2, mode="nearest"),
        "nearest-exact 1.5x 8x64x56x56": lambda: F.interpolate(x, scale_factor=1.5, mode="nearest-exact"),
        "bilinear 2x 8x64x56x56": lambda: F.interpolate(x, scale_factor=2, mode="bilinear"),
        "bilinear align_corners -> 97x83": lambda: F.interpolate(x, size=(97, 83), mode="bilinear",
                                                                 align_corners=True),
        "bicubic 2x 8x64x56x56": lambda: F.interpolate(x, scale_factor=2, mode="bicubic"),
        "linear 2x 16x64x1024": lambda: F.interpolate(s, scale_factor=2, mode="linear"),
        "trilinear 2x 2x16x16x32x32": lambda: F.interpolate(v, scale_factor=2, mode="trilinear"),
        "nearest fwd+bwd 2x 4x32x56x56": bwd(scale_factor=2, mode="nearest"),
        "bilinear fwd+bwd 2x 4x32x56x56": bwd(scale_factor=2, mode="bilinear"),
        "bicubic fwd+bwd 2x 4x32x56x56": bwd(scale_factor=2, mode="bicubic"),
        "bilinear antialias 0.3x 8x64x56x56": lambda: F.interpolate(x, scale_factor=0.3, mode="bilinear",
                                                                    antialias=True),
        "bicubic antialias -> 224x224 of 3x512x512": lambda: F.interpolate(img, size=(224, 224), mode="bicubic",
                                                                           antialias=True),
        "uint8 bilinear antialias -> 224x224 of 4x3x512x512": lambda: F.interpolate(img8, size=(224, 224),
                                                                                  mode="bilinear", antialias=True),
        "uint8 bicubic antialias -> 224x224 of 4x3x512x512": lambda: F.interpolate(img8, size=(224, 224),
                                                                                 mode="bicubic", antialias=True),
        "uint8 bicubic antialias 1.6x 2x16x128x128": lambda: F.interpolate(feat8, scale_factor=1.6, mode="bicubic",
                                                                         antialias=True),
        "bilinear antialias fwd+bwd 0.5x 4x32x56x56": bwd(scale_factor=0.5, mode="bilinear", antialias=True),
    }


if __name__ == "__main__":
    main(cases)
