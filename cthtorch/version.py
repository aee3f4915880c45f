"""torch.version: what this build is. cthtorch has no CUDA, ROCm or XPU
runtime, so those read None as in torch's CPU wheel; git_version is
"Unknown", what torch writes when built outside a git checkout."""
__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]
__version__ = "2.13.0+cthtorch"
debug = False
cuda = None
git_version = "Unknown"
hip = None
rocm = None
xpu = None
