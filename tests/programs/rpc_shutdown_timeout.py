"""rpc.shutdown(timeout=) on 2 ranks: the parameter server's shutdown gives up
after its timeout, with torch's text naming the trainer, which is still busy;
the trainer's own shutdown later completes the barrier, and both exit cleanly."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import cthtorch.distributed.rpc as rpc  # noqa: E402


def main():
    rank = int(os.environ["RANK"])
    rpc.init_rpc("ps" if rank == 0 else "trainer", rank=rank, world_size=int(os.environ["WORLD_SIZE"]))
    if rank == 1:
        time.sleep(3.0)   # busy past the server's timeout
        rpc.shutdown()
        print("ok trainer shut down", flush=True)
        return
    start = time.monotonic()
    try:
        rpc.shutdown(timeout=0.5)
    except RuntimeError as e:
        took = time.monotonic() - start
        want = ("Followers ['trainer'] timed out in _all_gather after 0.50 seconds. The first exception is RPC ran "
                "for more than set timeout (500 ms) and will now be marked with an error")
        assert str(e) == want, str(e)
        assert took < 2.5, took
        print("ok shutdown timed out after %.2f s" % took, flush=True)
    else:
        raise AssertionError("rpc.shutdown(timeout=0.5) returned while the trainer was busy")
    try:
        rpc.rpc_sync("trainer", abs, args=(1,))
    except RuntimeError as e:   # RPC is shut down here all the same
        assert "RPC has not been initialized" in str(e), str(e)
    print("ok rpc is down", flush=True)


if __name__ == "__main__":
    main()
