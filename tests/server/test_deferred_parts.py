"""A lookup's parts left for after its diagnostic (the server's lookups): made from the
generation the lookup was answered from, even after a newer one was published and switched
to, which is let go once they are made."""

from __future__ import annotations

from index_tools import BuildOptions, add_to_index, build_index
from server import indexes
from server.indexes import Found, IndexHandle

OPTIONS = BuildOptions(jobs=1, progress=False)


def statements(first: int, last: int) -> str:
    return "".join(f"v{3 * i} = v{3 * i + 1} + v{3 * i + 2}\n" for i in range(first, last))


async def test_parts_left_for_later_are_read_from_their_generation_across_a_switch(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(indexes, "POLL_SECONDS", 0.0)  # every lookup looks for a newer one
    src, more = tmp_path / "corpus", tmp_path / "more"
    src.mkdir()
    more.mkdir()
    (src / "long.py").write_text(statements(0, 20), encoding="utf-8")
    (src / "short.py").write_text("x = 1\n" + statements(3, 17), encoding="utf-8")
    (more / "other.py").write_text(statements(40, 60), encoding="utf-8")
    idx = tmp_path / "idx"
    build_index([str(src)], idx, OPTIONS)
    handle = IndexHandle(idx)
    handle.open()
    await handle.wait()
    try:
        found = await handle.match(statements(0, 20), "", 20, "python", defer_parts=True)
        assert isinstance(found, Found)
        (m,) = found
        (part,) = m.parts
        assert not part.settled and part.file_count == 2
        old = found.lease.index
        whole = old.match(statements(0, 20), "", 20, language="python")  # (made at once)
        add_to_index(idx, [str(more)], OPTIONS)
        assert await handle.match(statements(40, 60), "", 20, "python")  # switched to it
        assert handle.generation != old.generation
        assert not old._text.closed  # held for the parts still to be made
        await handle.settle(found)
        assert part.settled and m.to_dict() == whole[0].to_dict()
        assert "short.py" in {s.path for s in part.sources}
        assert old._text.closed  # let go once they are made
        # a lookup with nothing left for later holds nothing
        plain = await handle.match(statements(40, 60), "", 20, "python", defer_parts=True)
        assert plain and not isinstance(plain, Found)
    finally:
        handle.close()
