"""Fault detection: MPI itself waits forever on a dead peer, so each rank
publishes a heartbeat in the default group's store and watches its peers'.

Each rank's heartbeat key holds (state, beat, issued): state is "alive",
"exited" or "failed: <error>", beat counts up every INTERVAL seconds, and
issued maps each group id to the number of operations this rank has issued
on it. A wait on a group's work asks blame(): a peer that has not issued the
pending operation and has failed, exited, or stopped beating for STALE
seconds is dead, and the wait raises an error naming it instead of hanging.
"""
import pickle
import sys
import threading
import time

INTERVAL = 0.5
STALE = 5.0


class Monitor:
    def __init__(self, store, rank, world_size):
        self.store, self.rank, self.world_size = store, rank, world_size
        self.issued = {}
        self.state = "alive"
        self.beat = 0
        self.peers = {}          # rank -> (state, issued, monotonic time its beat last changed)
        self.store_lost = None
        self._stop = threading.Event()
        self._publish()
        self.thread = threading.Thread(target=self._run, daemon=True, name="cthtorch-dist-heartbeat")
        self.thread.start()

    def key(self, r):
        return "cth/hb/%d" % r

    def _publish(self):
        self.store.set(self.key(self.rank), pickle.dumps((self.state, self.beat, dict(self.issued))))

    def _run(self):
        keys = [self.key(r) for r in range(self.world_size)]
        while not self._stop.wait(INTERVAL):
            self.beat += 1
            try:
                self._publish()
                vals = self.store.multi_get(keys)
            except Exception as e:   # the store's host is gone
                self.store_lost = str(e)
                continue
            now = time.monotonic()
            for r, v in enumerate(vals):
                state, beat, issued = pickle.loads(v)
                old = self.peers.get(r)
                changed = old is None or old[3] != beat
                self.peers[r] = (state, issued, now if changed else old[2], beat)

    def finish(self, state):
        """The last word of this rank: "exited" or "failed: ..." (the first
        one said stands)."""
        if self.state != "alive":
            return
        self.state = state
        self._stop.set()
        try:
            self._publish()
        except Exception:
            pass

    def blame(self, gid, seq, ranks):
        """The peers among `ranks` (global) that are dead and had not issued
        operation `seq` of group `gid`, with why: [(rank, reason)]."""
        now = time.monotonic()
        out = []
        for r in ranks:
            if r == self.rank or r not in self.peers:
                continue
            state, issued, changed_at, _ = self.peers[r]
            if issued.get(gid, 0) >= seq:
                continue
            if state != "alive":
                out.append((r, state))
            elif now - changed_at > STALE:
                out.append((r, "no heartbeat for %.0f s (the process died or hangs)" % (now - changed_at)))
        return out

    def lagging(self, gid, seq, ranks):
        """Peers that had not issued operation `seq` of group gid yet."""
        return [r for r in ranks if r != self.rank and r in self.peers and self.peers[r][1].get(gid, 0) < seq]

    def stop(self):
        self._stop.set()


def install_exit_hooks(get_monitor):
    """An uncaught exception marks this rank failed before the process ends,
    so peers waiting on it fail at once with its error."""
    prev = sys.excepthook

    def hook(tp, value, tb):
        mon = get_monitor()
        if mon is not None and not issubclass(tp, KeyboardInterrupt):
            mon.finish("failed: %s: %s" % (tp.__name__, value))
        prev(tp, value, tb)
    sys.excepthook = hook
