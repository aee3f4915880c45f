"""torchvision.datasets.utils: the argument check and directory listings datasets share (downloading and
archive helpers are not here: nothing is fetched at run time)."""
import os


def list_dir(root, prefix=False):
    """the directories in root, in os.listdir's order (as torchvision lists them), joined to root if prefix"""
    root = os.path.expanduser(root)
    directories = [p for p in os.listdir(root) if os.path.isdir(os.path.join(root, p))]
    return [os.path.join(root, d) for d in directories] if prefix else directories


def list_files(root, suffix, prefix=False):
    """the files in root ending with suffix (a str or tuple), in os.listdir's order"""
    root = os.path.expanduser(root)
    files = [p for p in os.listdir(root) if os.path.isfile(os.path.join(root, p)) and p.endswith(suffix)]
    return [os.path.join(root, d) for d in files] if prefix else files


def iterable_to_str(iterable):
    return "'" + "', '".join([str(item) for item in iterable]) + "'"


def verify_str_arg(value, arg=None, valid_values=None, custom_msg=None):
    """value, after checking it is a str and (when valid_values is given) one of them; ValueError otherwise"""
    if not isinstance(value, str):
        if arg is None:
            msg = "Expected type str, but got type {type}."
        else:
            msg = "Expected type str for argument {arg}, but got type {type}."
        raise ValueError(msg.format(type=type(value), arg=arg))
    if valid_values is None:
        return value
    if value not in valid_values:
        if custom_msg is not None:
            msg = custom_msg
        else:
            msg = "Unknown value '{value}' for argument {arg}. Valid values are {{{valid_values}}}."
            msg = msg.format(value=value, arg=arg, valid_values=iterable_to_str(valid_values))
        raise ValueError(msg)
    return value
