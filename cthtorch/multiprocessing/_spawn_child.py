"""One child of multiprocessing.spawn (run by the rank bootstrap under
mpiexec): recreate the parent's __main__ as multiprocessing's spawn does,
then call fn(rank, *args), reporting failures as torch's children do."""
import multiprocessing.spawn as _mp_spawn
import os
import pickle
import sys
import traceback


def main(workdir):
    rank = int(os.environ["RANK"])
    with open(os.path.join(workdir, "pid%d" % rank), "w") as f:
        f.write(str(os.getpid()))
    with open(os.path.join(workdir, "prep"), "rb") as f:
        _mp_spawn.prepare(pickle.load(f))
    import cthtorch.multiprocessing  # noqa: F401 -- registers the tensor reductions the arguments use
    with open(os.path.join(workdir, "args%d" % rank), "rb") as f:
        fn, args = pickle.load(f)
    try:
        fn(rank, *args)
    except KeyboardInterrupt:
        pass   # SIGINT: the parent is ending the job
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code:
            with open(os.path.join(workdir, "exit%d" % rank), "w") as f:
                f.write(str(code))
        raise
    except Exception as e:
        with open(os.path.join(workdir, "error%d" % rank), "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        c10d = sys.modules.get("cthtorch.distributed.distributed_c10d")
        if c10d is not None:   # tell the peers at once (the parent shows the traceback)
            c10d._mark_failed(e)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
