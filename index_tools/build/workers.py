"""Worker processes of the builders, which leave interruptions to their parent.

`ordered_map` runs a function on items in worker processes and yields the results in order,
a bounded number in flight. It ends at once, whatever the workers are doing, when the
parent is interrupted (Ctrl-C, SIGTERM) or fails, and a worker that dies is an error, never
a hang. Why not `multiprocessing.Pool` or `ProcessPoolExecutor`: their workers share queues
guarded by locks, and their teardown waits on pipes and threads; a worker killed holding a
lock, or a pipe left full when its reader stopped, left the parent waiting forever (Ctrl-C
during `build --jobs 2` hung in 3 of 8 tries, holding the writer lock).

Here each worker has a pipe of its own to the parent and holds no lock. One thread of the
parent (the feeder) reads the items, gives a chunk to each idle worker (an idle worker is
waiting to read it, so the send cannot block for good) and collects the results; the
caller's thread takes them in order. To end, the parent kills its workers and stops
waiting. Ctrl-C reaches every process of the terminal's group, SIGTERM often does too:

- a worker ignores SIGINT (its parent ends it) and dies on SIGTERM without a word;
- on Linux a worker dies with its parent (a parent killed with -9 leaves none behind);
- signals are blocked while workers start and in the feeder thread: they reach the
  parent's main thread, which handles them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from multiprocessing.connection import wait

_SIGNALS = {signal.SIGINT, getattr(signal, "SIGTERM", signal.SIGINT)}
_POLL = 0.25  # seconds between checks of the stop flag in waits


class WorkerDied(RuntimeError):
    """A worker process ended while it worked (killed, out of memory)."""


@contextlib.contextmanager
def _signals_blocked():
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def ordered_map(
    func: Callable,
    items: Iterable,
    jobs: int,
    initializer: Callable | None = None,
    initargs: tuple = (),
    chunksize: int = 8,
    ahead: int = 4,
) -> Iterator:
    """`func(item)` for each item, in order, computed by `jobs` worker processes (forked
    where the system can, so that they share what is loaded). At most `jobs * (ahead + 2)`
    chunks of `chunksize` items are in flight. An exception of `func` or of the items is
    raised here; WorkerDied when a worker ends unexpectedly. Close the iterator (or run
    it to its end) to end the workers."""
    pool = _Pool(func, jobs, initializer, initargs, jobs * ahead)
    with _signals_blocked():  # kept blocked in the feeder thread
        feeder = threading.Thread(
            target=pool.feed, args=(iter(items), chunksize), name="recitation-feeder", daemon=True
        )
        feeder.start()
    try:
        while True:
            try:
                kind, value = pool.results.get(timeout=_POLL)
            except queue.Empty:
                continue
            if kind == "chunk":
                yield from value
            elif kind == "error":
                raise value
            else:
                return
    finally:
        pool.stop()
        feeder.join(timeout=10)
        pool.reap()


class _Worker:
    def __init__(self, ctx, func, initializer, initargs):
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(
            target=_serve,
            args=(child, func, os.getpid(), initializer, initargs),
            name="recitation-worker",
            daemon=True,
        )
        self.process.start()
        child.close()
        self.busy: int | None = None  # the chunk it works on


class _Pool:
    def __init__(self, func, jobs, initializer, initargs, ahead: int):
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.results: queue.Queue = queue.Queue(maxsize=max(1, ahead))
        self.stopping = threading.Event()
        self.workers: list[_Worker] = []
        with _signals_blocked():  # none reaches a worker before it is set up
            try:
                for _ in range(jobs):
                    self.workers.append(_Worker(ctx, func, initializer, initargs))
            except BaseException:
                self.stop()
                self.reap()
                raise

    def _put(self, item) -> bool:
        while not self.stopping.is_set():
            try:
                self.results.put(item, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def feed(self, items: Iterator, chunksize: int) -> None:
        """The feeder thread: chunks to idle workers, results back in order."""
        sent = taken = 0
        done: dict[int, list] = {}
        exhausted = False
        try:
            while not self.stopping.is_set():
                for w in self.workers:
                    if w.busy is None and not exhausted:
                        chunk = list(islice(items, chunksize))
                        if not chunk:
                            exhausted = True
                            break
                        try:  # it waits for it: the send never blocks for good
                            w.conn.send((sent, chunk))
                        except OSError:
                            raise _died(w) from None
                        w.busy, sent = sent, sent + 1
                while taken in done:
                    if not self._put(("chunk", done.pop(taken))):
                        return
                    taken += 1
                busy = [w for w in self.workers if w.busy is not None]
                if not busy:
                    if exhausted:
                        self._put(("end", None))
                        return
                    continue
                ready = set(
                    wait([w.conn for w in busy] + [w.process.sentinel for w in busy], _POLL)
                )
                for w in busy:
                    if w.conn in ready:
                        try:
                            number, ok, value = w.conn.recv()
                        except (EOFError, OSError):
                            raise _died(w) from None
                        if not ok:
                            raise value
                        done[number], w.busy = value, None
                    elif w.process.sentinel in ready:
                        raise _died(w)
        except BaseException as e:
            if not self.stopping.is_set():
                self._put(("error", e))

    def stop(self) -> None:
        """End the workers now (they hold no lock: nothing waits for them)."""
        self.stopping.set()
        for w in self.workers:
            with contextlib.suppress(Exception):
                if w.process.exitcode is None:
                    w.process.kill()

    def reap(self) -> None:
        for w in self.workers:
            with contextlib.suppress(Exception):
                w.process.join(timeout=10)
            with contextlib.suppress(Exception):
                w.conn.close()


def _died(w: _Worker) -> WorkerDied:
    """What became of a worker whose pipe closed: its exit status once it is reaped (a
    negative one: killed by that signal)."""
    with contextlib.suppress(Exception):
        w.process.join(timeout=5)
    code = w.process.exitcode
    if code is None:
        return WorkerDied("a worker process ended unexpectedly")
    if code < 0:
        return WorkerDied(f"a worker process ended unexpectedly (killed by signal {-code})")
    return WorkerDied(f"a worker process ended unexpectedly (exit status {code})")


def _serve(conn, func, parent: int, initializer, initargs) -> None:
    """A worker: chunks in, results out, until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _end_with_parent(parent)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            number, chunk = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = (number, True, [func(item) for item in chunk])
        except Exception as e:
            e.add_note("in a worker process:\n" + traceback.format_exc())
            answer = (number, False, e)
        try:
            conn.send(answer)
        except (EOFError, OSError):
            return
        except Exception as e:  # an exception that cannot be pickled
            with contextlib.suppress(Exception):
                conn.send((number, False, RuntimeError(f"{type(e).__name__}: {e}")))


def _end_with_parent(parent: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent ended before that
        os._exit(1)
