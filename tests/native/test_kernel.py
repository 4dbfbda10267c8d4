"""The compiled search kernel answers as the Python search does: in process on random shards,
and through one small driver (driver.c) replaying the same cases against the library of each
target — natively, linux-arm64 under qemu-user, windows-x64 under Wine — and under the
sanitizers (ASan and UBSan through gcc, UBSan through Zig). The macOS and windows-arm64
libraries, which nothing here runs, are checked by their headers: format, processor,
exported functions, and arm64 macOS's code signature.

Tools these need (qemu-user, an arm64 C library, Wine, gcc) come from scripts/system-deps.sh;
with RECITATION_NATIVE_REQUIRED=1 (the README's test command) a missing one fails the test
instead of skipping it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import binaries
import cases
import pytest

from index_tools.match import kernel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import build_kernel  # noqa: E402

REQUIRED = os.environ.get("RECITATION_NATIVE_REQUIRED") == "1"
EXPORTS = {
    "rc_version",
    "rc_interval",
    "rc_intervals",
    "rc_spans",
    "rc_extend",
    "rc_documents",
    "rc_crowded_spans",
    "rc_distinct",
    "rc_first_places",
    "rc_word_ids",
    "rc_is_table",
    "rc_word_bounds",
}
ARM64_ROOTS = [
    os.environ.get("RECITATION_ARM64_ROOT", ""),
    str(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "recitation-arm64-root"),
    "/usr/aarch64-linux-gnu",
]


def missing(what: str):
    if REQUIRED:
        pytest.fail(f"{what} (scripts/system-deps.sh installs it)")
    pytest.skip(what)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The library of every target and the driver of those that run here."""
    out = tmp_path_factory.mktemp("kernel")
    for target in build_kernel.ZIG_TARGETS:
        build_kernel.compile_for(target, out)
    for target in ("linux-x64", "linux-arm64", "win32-x64"):
        build_kernel.compile_for(target, out, driver=True)
    return out


@pytest.fixture(scope="module")
def case_file(tmp_path_factory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("cases") / "cases.txt"
    return path, cases.write(path, cases.shards(seed=11))


def replay(cmd: list[str], case_file, env=None, timeout=300) -> None:
    path, n = case_file
    done = subprocess.run(cmd + [str(path)], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"kernel cases: {n} passed, 0 failed" in done.stdout


@pytest.mark.parametrize("seed", range(4))
def test_the_loaded_kernel_answers_as_the_python_search(seed):
    if not kernel.available():
        pytest.fail(f"the native search did not load: {kernel.status()}")
    with kernel.using("native"):
        for sh in cases.shards(seed):
            for case in sh.cases:
                assert cases.run_native(sh, case) == (case.rc, case.answer), case.kind


def test_linux_x64_replays_the_cases(built, case_file):
    if build_kernel.host_target() != "linux-x64":
        pytest.skip("not a linux-x64 machine")
    replay([str(built / "driver-linux-x64"), str(built / "libkernel-linux-x64.so")], case_file)


def test_linux_arm64_replays_the_cases_under_qemu(built, case_file):
    qemu = shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")
    if qemu is None:
        missing("qemu-user is not installed")
    prefix = next(
        (r for r in ARM64_ROOTS if r and Path(r, "lib/ld-linux-aarch64.so.1").exists()), None
    )
    if prefix is None:
        missing("no arm64 C library (libc6-arm64-cross or the arm64 root)")
    cmd = [qemu, str(built / "driver-linux-arm64"), str(built / "libkernel-linux-arm64.so")]
    replay(cmd, case_file, env={"QEMU_LD_PREFIX": prefix})


def test_windows_x64_replays_the_cases_under_wine(built, case_file, tmp_path_factory):
    wine = shutil.which("wine") or shutil.which("wine64")
    if wine is None:
        missing("Wine is not installed")
    prefix = tmp_path_factory.mktemp("wine")  # a prefix of its own: nothing of the user's
    cmd = [wine, str(built / "driver-win32-x64.exe"), str(built / "libkernel-win32-x64.dll")]
    replay(cmd, case_file, env={"WINEDEBUG": "-all", "WINEPREFIX": str(prefix)}, timeout=600)


@pytest.mark.parametrize(
    "target, fmt, arch",
    [
        ("darwin-x64", "mach-o", "x86_64"),
        ("darwin-arm64", "mach-o", "arm64"),
        ("win32-x64", "pe", "x86_64"),
        ("win32-arm64", "pe", "arm64"),
    ],
)
def test_macos_and_windows_builds_by_their_headers(built, target, fmt, arch):
    b = binaries.read((built / build_kernel.library_name(target)).read_bytes())
    assert (b.format, b.arch) == (fmt, arch)
    assert b.exports >= EXPORTS
    if fmt == "pe":
        assert b.dll
    if target == "darwin-arm64":
        assert b.signed  # arm64 macOS loads no unsigned code


def test_linux_builds_link_against_an_old_glibc(built):
    """glibc 2.17: every symbol version the libraries need is at most that."""
    for target in ("linux-x64", "linux-arm64"):
        data = (built / build_kernel.library_name(target)).read_bytes()
        versions = {v.decode() for v in re.findall(rb"GLIBC_(2\.\d+)", data)}
        assert all(tuple(map(int, v.split("."))) <= (2, 17) for v in versions), versions


def test_sanitizers_find_nothing(built, case_file, tmp_path):
    """ASan and UBSan (gcc) on the kernel and the driver, UBSan trapping (Zig) on the
    kernel: the cases, damaged shards among them, run clean."""
    gcc = shutil.which("gcc")
    if gcc is None:
        missing("gcc is not installed")
    flags = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    lib, driver = tmp_path / "asan.so", tmp_path / "driver-asan"
    subprocess.run([gcc, *flags, "-shared", "-fPIC", str(build_kernel.SOURCE), "-o", str(lib)],
                   check=True)  # fmt: skip
    subprocess.run([gcc, *flags, str(build_kernel.DRIVER), "-o", str(driver), "-ldl"], check=True)
    replay([str(driver), str(lib)], case_file, env={"ASAN_OPTIONS": "detect_leaks=1"})
    if build_kernel.host_target() == "linux-x64":
        ubsan = build_kernel.compile_for(
            "linux-x64",
            tmp_path / "ubsan",
            ["-O1", "-fsanitize=undefined", "-fsanitize-trap=undefined"],
        )
        replay([str(built / "driver-linux-x64"), str(ubsan)], case_file)


@pytest.mark.parametrize("items", [0, 1, 2, 5, 6, 13])
def test_shards_searched_at_once_answer_in_order(items, monkeypatch):
    """`kernel.across` (each shard's compiled call on a core of its own): every item's
    answer, in the items' order, whatever the number of helper threads."""
    import threading
    import time

    for helpers in (0, 1, 3):
        monkeypatch.setattr(kernel, "HELPERS", helpers)
        seen: set[str] = set()

        def work(x: int, seen: set[str] = seen) -> int:
            seen.add(threading.current_thread().name)
            time.sleep(0.01)  # (a compiled call's time: a helper takes the next item)
            return x * x

        assert kernel.across(work, range(items)) == [x * x for x in range(items)]
        helped = any(name.startswith("recitation-search") for name in seen)
        assert helped == (helpers > 0 and items > 1)


def test_an_error_in_any_shard_is_raised_never_dropped(monkeypatch):
    monkeypatch.setattr(kernel, "HELPERS", 2)

    def work(x: int) -> int:
        if x == 4:
            raise kernel.damaged("suffix array")
        return x

    with pytest.raises(kernel.IndexOpenError, match="damaged"):
        kernel.across(work, range(6))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_searches_shards_with_helpers_of_its_own(monkeypatch):
    """A process forked after lookups ran (the builder's workers are) has none of its
    parent's helper threads: its searches make their own, never wait on the parent's."""
    monkeypatch.setattr(kernel, "HELPERS", 1)
    assert kernel.across(lambda x: x + 1, range(4)) == [1, 2, 3, 4]  # the parent's pool
    pid = os.fork()
    if pid == 0:  # the child: an answer within the time, or a failed exit
        import signal

        signal.alarm(20)
        ok = kernel.across(lambda x: x * 2, range(6)) == [0, 2, 4, 6, 8, 10]
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_work_too_small_to_wake_a_helper_runs_in_the_callers_thread(monkeypatch):
    import threading
    import time

    monkeypatch.setattr(kernel, "HELPERS", 2)
    for cost, helped in ((kernel.AT_ONCE_US / 2, False), (kernel.AT_ONCE_US * 2, True)):
        seen: set[str] = set()

        def work(x: int, seen: set[str] = seen) -> int:
            seen.add(threading.current_thread().name)
            time.sleep(0.01)
            return -x

        assert kernel.across(work, range(6), cost) == [0, -1, -2, -3, -4, -5]
        assert any(n.startswith("recitation-search") for n in seen) == helped


@pytest.mark.skipif(not kernel.available(), reason="no kernel library for this machine")
def test_document_tables_reused_from_call_to_call_stay_zero(tmp_path):
    """rc_distinct's marks and rc_first_places' slots are each thread's, reused: calls of
    all sizes, some failing (a document out of range, one asked twice), in two threads at
    once, each answer as a new table gives (numpy's, by hand)."""
    import threading

    import numpy as np

    k = kernel.active()
    errors: list[str] = []

    def calls(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(150):
            ndocs = int(rng.integers(1, 30000))
            docs = rng.integers(0, ndocs, size=int(rng.integers(0, 30000))).astype(np.int32)
            alive = rng.random(ndocs) < 0.8 if rng.random() < 0.5 else None
            if rng.random() < 0.15 and len(docs):  # a damaged table: out of range
                bad = docs.copy()
                bad[int(rng.integers(0, len(bad)))] = ndocs
                with pytest.raises(ValueError):
                    kernel.distinct(k, bad, ndocs, alive, [(0, len(bad))])
            lo = int(rng.integers(0, len(docs) + 1))
            levels = [(0, len(docs)), (lo, int(rng.integers(lo, len(docs) + 1)))]
            weights = rng.integers(0, 50, size=ndocs).astype(np.uint32) if seed % 2 else None
            got, files = kernel.distinct(k, docs, ndocs, alive, levels, weights)
            want, want_files = [], []
            for a, b in levels:
                held = np.unique(docs[a:b] if alive is None else docs[a:b][alive[docs[a:b]]])
                want.append(len(held))
                want_files.append(int(weights[held].sum()) if weights is not None else None)
            if got.tolist() != want:
                errors.append(f"distinct {got.tolist()} != {want}")
            if weights is not None and files.tolist() != want_files:
                errors.append(f"files {files.tolist()} != {want_files}")
            pick = rng.choice(ndocs, size=min(ndocs, int(rng.integers(0, 12))), replace=False)
            if rng.random() < 0.15 and len(pick) > 1:  # one document asked twice
                with pytest.raises(ValueError):
                    kernel.first_places(k, docs, ndocs, np.append(pick, pick[0]))
            got = kernel.first_places(k, docs, ndocs, pick).tolist()
            want = [int(np.argmax(docs == d)) if (docs == d).any() else -1 for d in pick]
            if got != want:
                errors.append(f"first places {got} != {want}")

    def thread(seed: int) -> None:
        try:
            calls(seed)
        except BaseException as e:  # (a thread's failure is the test's)
            errors.append(repr(e))

    threads = [threading.Thread(target=thread, args=(seed,)) for seed in (1, 2)]
    for t in threads:
        t.start()
    calls(3)
    for t in threads:
        t.join()
    assert not errors, errors[:3]


@pytest.mark.parametrize("failing", [0, 1])
def test_an_error_returns_only_once_every_helper_has_ended(monkeypatch, failing):
    """A shard's damage raised (in the caller's share, or a helper's) while other shards are
    still searched: `across` raises only once every call begun has returned, so that the
    caller may close the maps they read (a helper still reading a closed map is a crash)."""
    import threading
    import time

    monkeypatch.setattr(kernel, "HELPERS", 2)
    begun: list[int] = []
    ended: list[int] = []
    slow_begun = threading.Event()

    def work(x: int) -> int:
        begun.append(x)
        if x == failing:
            assert slow_begun.wait(20)  # (raised while item 2 is still searched)
            raise kernel.damaged("suffix array")
        if x == 2:  # slow: still searched when the failure is raised
            slow_begun.set()
            time.sleep(0.3)
        ended.append(x)
        return x

    with pytest.raises(kernel.IndexOpenError, match="damaged"):
        kernel.across(work, range(6))
    assert set(begun) - {failing} == set(ended), (begun, ended)
    assert 2 in ended


def test_the_largest_items_are_taken_first_and_answered_in_order(monkeypatch):
    """Items of unequal work (anchors in shards): with `sizes`, the threads take the largest
    first, each the next when done with one, and every answer comes in the items' order."""
    import threading

    monkeypatch.setattr(kernel, "HELPERS", 1)
    taken: list[tuple[int, str]] = []
    ended: list[int] = []
    lock = threading.Lock()
    rest_done = threading.Event()

    def work(x: int) -> int:
        with lock:
            taken.append((x, threading.current_thread().name))
        if x == 5:  # the largest: the other thread takes all the rest meanwhile
            assert rest_done.wait(20)
        else:
            with lock:
                ended.append(x)
                if len(ended) == 5:
                    rest_done.set()
        return -x

    sizes = [5, 90, 1, 40, 7, 300]
    assert kernel.across(work, range(6), sizes=sizes) == [0, -1, -2, -3, -4, -5]
    order = [x for x, _ in taken]  # one queue, largest first (the first two begun at once)
    assert set(order[:2]) == {5, 1} and order[2:] == [3, 4, 0, 2]
    by = dict(taken)
    assert {by[x] for x in (1, 3, 4, 0, 2)} == {by[1]} != {by[5]}


def test_a_helper_busy_elsewhere_is_not_waited_for(monkeypatch):
    """A lookup whose helpers are all busy (another index's lookup) takes every item itself
    and returns at once: a helper that never took an item is not waited for."""
    import threading

    monkeypatch.setattr(kernel, "HELPERS", 1)
    pool = kernel._helper_pool()
    release = threading.Event()
    blockers = [pool.submit(release.wait, 20) for _ in range(pool._max_workers)]
    try:
        assert kernel.across(lambda x: -x, range(6)) == [0, -1, -2, -3, -4, -5]
        assert not any(b.done() for b in blockers)  # (returned while they were still busy)
    finally:
        release.set()
        for b in blockers:
            b.result()
