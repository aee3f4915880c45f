"""A worker raising during an RPC job (2 ranks under the launcher): the
trainer raises after a call; the parameter server, waiting in rpc.shutdown()
for it, must fail at once naming it, not wait for the launcher's timeout."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import cthtorch.distributed.rpc as rpc  # noqa: E402


def main():
    rank = int(os.environ["RANK"])
    rpc.init_rpc("ps" if rank == 0 else "trainer", rank=rank, world_size=2)
    if rank == 1:
        assert rpc.rpc_sync("ps", max, args=(1, 2)) == 2
        raise ValueError("trainer broke")
    start = time.monotonic()
    try:
        rpc.shutdown()
    except RuntimeError as e:
        print("shutdown failed after %.1f s: %s" % (time.monotonic() - start, e), flush=True)
        raise


if __name__ == "__main__":
    main()
