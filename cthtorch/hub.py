"""torch.hub: nothing is downloaded at run time in cthtorch, so every entry
point that would fetch raises a clear error; the directory helpers work."""
import os

_hub_dir = None


def get_dir():
    return _hub_dir or os.path.join(os.path.expanduser(os.getenv("TORCH_HOME", "~/.cache/torch")), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _no_download(what):
    raise RuntimeError("cthtorch.hub.%s: cthtorch never downloads at run time; fetch the files yourself and load "
                       "them with cthtorch.load" % what)


def load(repo_or_dir, model, *args, source="github", **kwargs):
    _no_download("load")


def list(github, force_reload=False, **kwargs):  # noqa: A001 (torch's name)
    _no_download("list")


def help(github, model, force_reload=False, **kwargs):  # noqa: A001
    _no_download("help")


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """Loads a file already in the hub cache; never downloads."""
    from cthtorch.serialization import load as _load
    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    path = os.path.join(model_dir, file_name or os.path.basename(url.split("?")[0]))
    if os.path.exists(path):
        return _load(path, map_location=map_location, weights_only=weights_only)
    raise RuntimeError("cthtorch.hub.load_state_dict_from_url: %s is not in the cache (%s) and cthtorch never "
                       "downloads at run time; place the file there" % (url, path))


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    _no_download("download_url_to_file")
