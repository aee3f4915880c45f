"""Key-value stores, as torch.distributed's: rendezvous and small side-channel
data (heartbeats, object sizes) go through them, never tensors.

HashStore lives in one process; TCPStore serves a HashStore's table over a
socket from the process that passes is_master=True (clients keep one
connection each); FileStore keeps the table in a file that processes lock.
Values are bytes; add() keeps a decimal counter, as torch's stores do.
"""
import datetime
import fcntl
import os
import pickle
import socket
import struct
import threading
import time

__all__ = ["Store", "HashStore", "TCPStore", "FileStore", "PrefixStore", "DistError", "DistStoreError",
           "DistNetworkError", "DistBackendError"]

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


class DistError(RuntimeError):
    pass


class DistBackendError(DistError):
    pass


class DistNetworkError(DistError):
    pass


class DistStoreError(DistError):
    pass


for _c in (DistError, DistBackendError, DistNetworkError, DistStoreError):
    _c.__module__ = "torch.distributed"


def _bytes(v):
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, (list, tuple)):   # torch accepts a list of byte values
        return bytes(v)
    raise TypeError("set(): incompatible function arguments: value must be str or bytes, got %s" % type(v).__name__)


def _seconds(timeout):
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)


def _timeout_error(seconds, keys):
    return DistStoreError("wait timeout after %dms, keys: %s" % (round(seconds * 1000),
                                                                 ", ".join("/" + k for k in keys)))


class _Table:
    """The key-value table and its semantics, shared by HashStore and the
    TCPStore server. Waiters sleep on one condition, woken by every write."""

    def __init__(self):
        self.data = {}
        self.cond = threading.Condition()

    def set(self, key, value):
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def wait(self, keys, seconds):
        deadline = time.monotonic() + seconds
        with self.cond:
            while not all(k in self.data for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return True

    def get(self, key, seconds):
        if not self.wait([key], seconds):
            raise _timeout_error(seconds, [key])
        return self.data[key]

    def add(self, key, amount):
        with self.cond:
            v = int(self.data.get(key, b"0")) + int(amount)
            self.data[key] = str(v).encode()
            self.cond.notify_all()
            return v

    def compare_set(self, key, expected, desired):
        with self.cond:
            cur = self.data.get(key)
            if cur is None:
                if expected == b"":
                    self.data[key] = desired
                    self.cond.notify_all()
                    return desired
                return expected
            if cur == expected:
                self.data[key] = desired
                self.cond.notify_all()
                return desired
            return cur

    def delete_key(self, key):
        with self.cond:
            return self.data.pop(key, None) is not None

    def num_keys(self):
        return len(self.data)

    def check(self, keys):
        return all(k in self.data for k in keys)

    def multi_get(self, keys, seconds):
        if not self.wait(keys, seconds):
            raise _timeout_error(seconds, keys)
        return [self.data[k] for k in keys]

    def multi_set(self, keys, values):
        with self.cond:
            self.data.update(zip(keys, values))
            self.cond.notify_all()

    def append(self, key, value):
        with self.cond:
            self.data[key] = self.data.get(key, b"") + value
            self.cond.notify_all()


class Store:
    """The interface of every store (torch.distributed.Store)."""

    def __init__(self):
        self._timeout = _DEFAULT_TIMEOUT

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout

    def _call(self, op, *args):
        raise NotImplementedError

    def set(self, key, value):
        self._call("set", key, _bytes(value))

    def get(self, key):
        return self._call("get", key, _seconds(self._timeout))

    def add(self, key, value):
        return self._call("add", key, int(value))

    def compare_set(self, key, expected_value, desired_value):
        return self._call("compare_set", key, _bytes(expected_value), _bytes(desired_value))

    def wait(self, keys, timeout=None):
        seconds = _seconds(self._timeout if timeout is None else timeout)
        if not self._call("wait", list(keys), seconds):
            raise self._timeout_exc("wait", seconds, keys)

    def _timeout_exc(self, op, seconds, keys):
        """The error of a get/wait that timed out (each store words it its own way, as torch's)."""
        return _timeout_error(seconds, keys)

    def check(self, keys):
        return self._call("check", list(keys))

    def delete_key(self, key):
        return self._call("delete_key", key)

    def num_keys(self):
        return self._call("num_keys")

    def multi_get(self, keys):
        return self._call("multi_get", list(keys), _seconds(self._timeout))

    def multi_set(self, keys, values):
        self._call("multi_set", list(keys), [_bytes(v) for v in values])

    def append(self, key, value):
        self._call("append", key, _bytes(value))


Store.__module__ = "torch.distributed"


class HashStore(Store):
    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _call(self, op, *args):
        try:
            return getattr(self._table, op)(*args)
        except DistStoreError:
            raise self._timeout_exc(op, 0, []) from None

    def _timeout_exc(self, op, seconds, keys):
        return DistStoreError("Wait timeout")


class PrefixStore(Store):
    def __init__(self, prefix, store):
        super().__init__()
        self._prefix, self._store = prefix, store
        self._timeout = store.timeout

    @property
    def underlying_store(self):
        return self._store

    def _k(self, key):
        return self._prefix + "/" + key

    def _call(self, op, *args):
        if op in ("num_keys",):
            return self._store._call(op)
        if op in ("wait", "check", "multi_get", "multi_set"):
            return self._store._call(op, [self._k(k) for k in args[0]], *args[1:])
        return self._store._call(op, self._k(args[0]), *args[1:])


# TCPStore: one request/response per call over a persistent connection;
# a frame is a 4-byte length and a pickle of (op, args) or (ok, result).
def _send_frame(sock, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(struct.pack("!I", len(data)) + data)


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed by the peer")
        buf += chunk
    return bytes(buf)


def _recv_frame(sock):
    (n,) = struct.unpack("!I", _recv_exact(sock, 4))
    return pickle.loads(_recv_exact(sock, n))


_OPS = {"set", "get", "add", "compare_set", "wait", "check", "delete_key", "num_keys", "multi_get", "multi_set",
        "append"}


class _TCPServer:
    """The master's table served on a listening socket, a thread per client."""

    def __init__(self, host, port):
        self.table = _Table()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((host, port))
        except OSError as e:
            self.sock.close()
            raise DistNetworkError("The server socket has failed to listen on any local network address. "
                                   "port: %d, useIpv6: false, code: %d, name: %s, message: %s"
                                   % (port, -e.errno if e.errno else -1, e.__class__.__name__, e.strerror)) from None
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True, name="TCPStore-server").start()

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            while True:
                try:
                    op, args = _recv_frame(conn)
                except (ConnectionError, OSError, EOFError):
                    return
                try:
                    if op not in _OPS:
                        raise ValueError("unknown store operation %r" % op)
                    reply = (True, getattr(self.table, op)(*args))
                except Exception as e:   # sent by name: the classes claim torch's module for printing
                    reply = (False, (type(e).__name__, str(e)))
                try:
                    _send_frame(conn, reply)
                except OSError:
                    return

    def close(self):
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


_ERRORS = {"DistStoreError": DistStoreError, "ValueError": ValueError, "TypeError": TypeError}


class TCPStore(Store):
    def __init__(self, host_name, port=0, world_size=None, is_master=False, timeout=_DEFAULT_TIMEOUT,
                 wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=True):
        super().__init__()
        self._timeout = timeout
        self.host = host_name
        self._server = None
        if is_master:
            self._server = _TCPServer(socket.gethostbyname(host_name) if host_name else "127.0.0.1", port)
            port = self._server.port
        self.port = port
        self._lock = threading.Lock()
        self._sock = self._connect(_seconds(timeout))
        if world_size is not None and world_size > 0:
            # as torch: workers check in, and the master waits for all of them
            self.add("/cth/store_workers", 1)
            if is_master and wait_for_workers:
                deadline = time.monotonic() + _seconds(timeout)
                while int(self.get("/cth/store_workers")) < world_size:
                    if time.monotonic() > deadline:
                        raise DistStoreError("Timed out after %d seconds waiting for clients. %d/%d clients joined."
                                             % (_seconds(timeout), int(self.get("/cth/store_workers")), world_size))
                    time.sleep(0.01)

    @property
    def libuvBackend(self):
        return False

    def _connect(self, seconds):
        deadline = time.monotonic() + seconds
        while True:
            try:
                s = socket.create_connection((self.host, self.port), timeout=max(0.1, deadline - time.monotonic()))
                s.settimeout(None)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return s
            except OSError as e:
                if time.monotonic() > deadline:
                    raise DistNetworkError("The client socket has timed out after %dms while trying to connect to "
                                           "(%s, %d). %s" % (round(seconds * 1000), self.host, self.port, e)) from None
                time.sleep(0.05)

    def _call(self, op, *args):
        with self._lock:
            try:
                _send_frame(self._sock, (op, args))
                ok, result = _recv_frame(self._sock)
            except (ConnectionError, OSError, EOFError) as e:
                raise DistNetworkError("failed to reach the TCPStore at %s:%d (%s)" % (self.host, self.port, e)) from None
        if not ok:
            name, msg = result
            raise _ERRORS.get(name, RuntimeError)(msg)
        return result

    def __del__(self):
        try:
            self._sock.close()
        except Exception:
            pass
        if self._server is not None:
            self._server.close()


class FileStore(Store):
    """The table in a file, read and rewritten under an exclusive lock;
    waiting readers poll it."""

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = file_name
        self.world_size = world_size
        open(self.path, "ab").close()

    def _call(self, op, *args):
        if op in ("wait", "get", "multi_get"):
            keys, seconds = (args[0] if op != "get" else [args[0]]), args[-1]
            deadline = time.monotonic() + seconds
            while True:
                with self._locked(write=False) as table:
                    if table.check(keys):
                        if op == "wait":
                            return True
                        vals = [table.data[k] for k in keys]
                        return vals[0] if op == "get" else vals
                if time.monotonic() > deadline:
                    if op == "wait":
                        return False
                    raise self._timeout_exc(op, seconds, keys)
                time.sleep(0.01)
        with self._locked(write=op not in ("check", "num_keys")) as table:
            r = getattr(table, op)(*args)
        return True if op == "delete_key" else r   # torch's FileStore says True even for a missing key

    def _timeout_exc(self, op, seconds, keys):
        if op == "wait":
            return RuntimeError("Wait timeout")
        return RuntimeError("Timeout waiting for key: %s after %d ms" % (", ".join(keys), round(seconds * 1000)))

    class _Locked:
        def __init__(self, path, write):
            self.path, self.write = path, write

        def __enter__(self):
            self.f = open(self.path, "r+b")
            fcntl.flock(self.f, fcntl.LOCK_EX if self.write else fcntl.LOCK_SH)
            raw = self.f.read()
            self.table = _Table()
            if raw:
                self.table.data = pickle.loads(raw)
            return self.table

        def __exit__(self, *exc):
            try:
                if self.write and exc[0] is None:
                    self.f.seek(0)
                    self.f.truncate()
                    self.f.write(pickle.dumps(self.table.data))
                    self.f.flush()
            finally:
                fcntl.flock(self.f, fcntl.LOCK_UN)
                self.f.close()

    def _locked(self, write):
        return FileStore._Locked(self.path, write)


for _c in (HashStore, PrefixStore, TCPStore, FileStore):
    _c.__module__ = "torch.distributed"
