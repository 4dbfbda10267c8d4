"""The language of code nobody names, read from its text (a shebang, a parse), for the
rename-insensitive view: whole files and pieces cut out of them in the eight languages
parsed, prose and Markdown read as none; `query` with no --language finds a renamed copy
piped in and says how it read the text."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from index_tools import BuildOptions, build_index
from index_tools.text.language_guess import guess_language, pick_language

SAMPLES = {
    "python": '''
class Ledger:
    """Entries kept in order, with a running balance."""

    def __init__(self, opening=0):
        self.entries = []
        self.balance = opening

    def post(self, amount, memo=""):
        if not amount:
            raise ValueError("an entry needs an amount")
        self.balance += amount
        self.entries.append((amount, memo, self.balance))
        return self.balance

    def report(self):
        for amount, memo, balance in self.entries:
            print(f"{memo:20} {amount:>10.2f} {balance:>10.2f}")
''',
    "javascript": """
export function debounce(fn, wait) {
  let timer = null;
  return function (...args) {
    clearTimeout(timer);
    timer = setTimeout(() => fn.apply(this, args), wait);
  };
}

export class Ledger {
  constructor(opening = 0) {
    this.entries = [];
    this.balance = opening;
  }

  post(amount, memo = "") {
    if (!amount) {
      throw new Error("an entry needs an amount");
    }
    this.balance += amount;
    this.entries.push({ amount, memo, balance: this.balance });
    return this.balance;
  }
}
""",
    "typescript": """
interface Entry {
  amount: number;
  memo: string;
  balance: number;
}

export class Ledger {
  private entries: Entry[] = [];
  constructor(private balance: number = 0) {}

  post(amount: number, memo: string = ""): number {
    if (!amount) {
      throw new Error("an entry needs an amount");
    }
    this.balance += amount;
    this.entries.push({ amount, memo, balance: this.balance });
    return this.balance;
  }
}
""",
    "java": """
public class Ledger {
    private final List<Entry> entries = new ArrayList<>();
    private long balance;

    public Ledger(long opening) {
        this.balance = opening;
    }

    public long post(long amount, String memo) {
        if (amount == 0) {
            throw new IllegalArgumentException("an entry needs an amount");
        }
        balance += amount;
        entries.add(new Entry(amount, memo, balance));
        return balance;
    }
}
""",
    "go": """
package ledger

import "errors"

type Ledger struct {
	entries []Entry
	balance int64
}

func (l *Ledger) Post(amount int64, memo string) (int64, error) {
	if amount == 0 {
		return 0, errors.New("an entry needs an amount")
	}
	l.balance += amount
	l.entries = append(l.entries, Entry{amount, memo, l.balance})
	return l.balance, nil
}
""",
    "rust": """
pub struct Ledger {
    entries: Vec<(i64, String, i64)>,
    balance: i64,
}

impl Ledger {
    pub fn post(&mut self, amount: i64, memo: &str) -> Result<i64, String> {
        if amount == 0 {
            return Err("an entry needs an amount".to_string());
        }
        self.balance += amount;
        self.entries.push((amount, memo.to_owned(), self.balance));
        Ok(self.balance)
    }
}
""",
    "c": """
#include <stdio.h>
#include <stdlib.h>

struct ledger {
    long *amounts;
    size_t count;
    long balance;
};

long ledger_post(struct ledger *l, long amount) {
    long *grown = realloc(l->amounts, (l->count + 1) * sizeof *grown);
    if (grown == NULL) {
        return -1;
    }
    l->amounts = grown;
    l->amounts[l->count++] = amount;
    l->balance += amount;
    return l->balance;
}
""",
    "cpp": """
#include <vector>
#include <string>

namespace books {

class Ledger {
public:
    explicit Ledger(long opening) : balance_(opening) {}

    long post(long amount, const std::string& memo) {
        if (amount == 0) {
            throw std::invalid_argument("an entry needs an amount");
        }
        balance_ += amount;
        entries_.emplace_back(amount, memo);
        return balance_;
    }

private:
    std::vector<std::pair<long, std::string>> entries_;
    long balance_;
};

}  // namespace books
""",
}


@pytest.mark.parametrize("language", list(SAMPLES))
def test_a_file_and_a_piece_of_it_are_read_as_their_language(language):
    text = SAMPLES[language].lstrip("\n")
    assert guess_language(text) == (language, "parse")
    lines = text.splitlines(keepends=True)
    # a piece cut inside a block: deeper indentation first, braces it did not open
    piece = "".join(lines[len(lines) // 2 - 4 : len(lines) - 2])
    assert guess_language(piece) == (language, "parse"), piece


@pytest.mark.parametrize(
    ("shebang", "language"),
    [
        ("#!/usr/bin/env python3", "python"),
        ("#!/usr/bin/python3.11", "python"),
        ("#!/usr/bin/env node", "javascript"),
        ("#!/usr/bin/env -S deno run --allow-net", "typescript"),
        ("#!/usr/bin/env rust-script", "rust"),
    ],
)
def test_a_shebang_names_the_language(shebang, language):
    assert guess_language(shebang + "\nx = 1\n") == (language, "shebang")


@pytest.mark.parametrize(
    "text",
    [
        "Hello. This is plain prose, with sentences and no code at all.\nAnother line here.\n",
        "# Title\n\nSome *markdown* text with a [link](https://example.com).\n\n- one\n- two\n",
        "",
        "   \n\n",
    ],
)
def test_prose_and_nothing_are_read_as_no_language(text):
    assert guess_language(text) is None


@pytest.mark.parametrize(
    ("named", "picked"),
    [
        ("python", ("python", "named")),
        ("typescriptreact", ("typescript", "named")),
        ("plaintext", ("javascript", "parse")),  # plain text to the editor, code to us
        ("", ("javascript", "parse")),
        ("ruby", ("javascript", "parse")),  # a language with no grammar here
        (None, ("javascript", "parse")),
    ],
)
def test_a_named_language_is_kept_when_parsed_else_read_from_the_text(named, picked):
    assert pick_language(named, SAMPLES["javascript"]) == picked


def test_nothing_is_picked_for_prose_in_a_plain_text_document():
    assert pick_language("plaintext", "Notes for Tuesday: call the bank, then lunch.\n") is None


FUNCTION = textwrap.dedent('''
    def settle(entries, rate, rounding=2):
        """Each account's balance once interest at `rate` is added."""
        totals = {}
        for account, amount in entries:
            totals[account] = totals.get(account, 0) + amount
        settled = {}
        for account, total in sorted(totals.items()):
            interest = total * rate if total > 0 else 0
            settled[account] = round(total + interest, rounding)
        return settled
''').lstrip()


def cli(*args, stdin: str):
    return subprocess.run(
        [sys.executable, "-m", "index_tools.cli", *map(str, args)],
        input=stdin, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_query_reads_a_renamed_copy_piped_in_and_says_how(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "books.py").write_text(FUNCTION, encoding="utf-8")
    build_index([str(tmp_path / "src")], tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    renamed = FUNCTION.replace("totals", "sums").replace("settled", "out")
    r = cli("query", tmp_path / "idx", "--min-tokens", "40", "--json", stdin=renamed)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    (m,) = report["matches"]
    assert m["exact"] is False
    assert {(p["from"], p["to"]) for p in m["renamed"]} == {("totals", "sums"), ("settled", "out")}
    assert report["language"] == {"name": "python", "from": "parse"}
    assert "read as python (a parse of the text; --language sets it)" in r.stderr
    # named, it is not read: nothing said; a language with no renamed view finds none
    r = cli("query", tmp_path / "idx", "--min-tokens", "40", "--language", "go", stdin=renamed)
    assert r.returncode == 0 and "read as" not in r.stderr
    assert r.stdout.startswith("no quoted span")
    r = cli(
        "query", tmp_path / "idx", "--min-tokens", "40", stdin="#!/usr/bin/env python3\n" + renamed
    )
    assert "Renamed copy" in r.stdout
    assert "read as python (its shebang; --language sets it)" in r.stderr
