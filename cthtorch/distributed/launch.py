"""The deprecated torch.distributed.launch: run.py, except that without
--use-env each rank's script gets --local-rank=N as an argument."""
import sys

from cthtorch.distributed import run as _run


def main(args=None):
    args = list(sys.argv[1:] if args is None else args)
    use_env = False
    for flag in ("--use-env", "--use_env"):
        if flag in args:
            args.remove(flag)
            use_env = True
    parsed = _run.parse_args(args)
    if not use_env:
        parsed.local_rank_arg = True
    sys.exit(_run.run(parsed))


if __name__ == "__main__":
    main()
