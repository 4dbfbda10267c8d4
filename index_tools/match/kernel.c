/* The search's inner loops, compiled (match/kernel.py loads this through ctypes).
 *
 * The same answers as the Python search in suffix.py, which stays the reference: interval
 * search over a shard's suffix array (binary search, then galloping past the first place),
 * runs extended word by word from many places at once, and the document of each place of
 * an interval. Plain C99, no Python API: one library per platform serves every CPython.
 *
 * Every read of a mapped file is checked against the mapping's length first: a damaged
 * index file makes a call return RC_DAMAGED, which the Python side turns into the usual
 * one-line "damaged" error. Nothing here allocates, keeps state or writes outside `out`
 * (and the working memory a caller passes).
 *
 * Also here, for ASCII text, the checks of a span's kind that cost a lookup most
 * (text/kinds.py `is_table`, `is_repetitive` and the first step of `is_license`) and the
 * words' bounds (text/words.py `word_bounds`): those stay the reference.
 */
#include <stdint.h>
#include <string.h>

#if defined(_WIN32)
#define RC_EXPORT __declspec(dllexport)
#else
#define RC_EXPORT __attribute__((visibility("default")))
#endif

#define RC_OK 0
#define RC_DAMAGED 1 /* an entry of a mapped file points outside the mapping */
#define RC_ARGS 2    /* arguments out of range: the caller's mistake */
#define RC_FULL 3    /* more answers than the caller's `out` holds */

#define RC_VERSION 14 /* raised when a signature or a struct below changes */

/* One shard as the search reads it; made once per shard by kernel.py. */
typedef struct {
    const uint8_t *tok;  /* word ids back to back, big-endian, `width` bytes each */
    uint64_t tok_len;    /* bytes */
    const uint32_t *sa;  /* suffix array: word positions, native byte order */
    uint64_t sa_len;     /* entries */
    uint64_t width;      /* 2, 3 or 4 */
    /* the suffix array's top levels, in memory (NULL: none): the first `top_bytes` bytes of
     * the suffix at every `top_step`-th entry (zeros past the end of the ids), so that a
     * search's first probes read no mapped page: an index larger than memory still answers */
    const uint8_t *top_keys; /* top_len * top_bytes */
    uint64_t top_len;
    uint64_t top_step;
    uint64_t top_bytes;
} rc_shard;

/* The vocabulary as a query's words are looked up in it (store/shards.py `Vocabulary`). */
typedef struct {
    const uint64_t *hashes;  /* n: each entry's hash (xxh3-64 of the word), ascending */
    const uint8_t *records;  /* n records of 12 bytes: the hash, then the id (both little-endian) */
    uint64_t n;              /* entries: the vocabulary's words */
    const uint32_t *buckets; /* 65,537: the first entry whose hash's top 16 bits are >= k, so that
                              * a search reads one bucket (~160 entries of 10M) and not the
                              * hashes' top levels, cold in a large vocabulary; NULL: none */
    const uint64_t *offsets; /* n + 1: where word id - 2 starts in `words`; the next one's start
                              * is past its terminator */
    const uint8_t *words;    /* the words' UTF-8 bytes, each with a terminator */
    uint64_t words_len;
} rc_vocabulary;

#define RC_FIRST_WORD_ID 2
#define RC_UNKNOWN 0xFFFFFFFFu
#define RC_UNKNOWN_INTERVAL UINT64_MAX /* a span's interval not searched (rc_crowded_spans) */

RC_EXPORT int rc_version(void) { return RC_VERSION; }

/* -1, 0 or 1 as the suffix at word position p, from byte `skip` of it to byte m, compares
 * with pat[skip:m]; a suffix cut short by the end of the ids is less than a pattern it
 * starts. The caller has checked p < tok_len / width. */
static int compare(const rc_shard *s, uint64_t p, const uint8_t *pat, uint64_t skip, uint64_t m)
{
    uint64_t at = p * s->width + skip;
    uint64_t avail = at < s->tok_len ? s->tok_len - at : 0;
    uint64_t want = m - skip;
    uint64_t k = avail < want ? avail : want;
    int c = k ? memcmp(s->tok + at, pat + skip, (size_t)k) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return k < want ? -1 : 0;
}

/* compare() of suffix-array entry i, checked: RC_DAMAGED through *err when it points past
 * the ids. */
static int compare_at(const rc_shard *s, uint64_t i, const uint8_t *pat, uint64_t skip,
                      uint64_t m, int *err)
{
    uint64_t p = s->sa[i];
    if (p >= s->tok_len / s->width) {
        *err = RC_DAMAGED;
        return 0;
    }
    return compare(s, p, pat, skip, m);
}

/* The first top-table entry whose key's first k bytes are >= prefix[0:k] (or > with
 * `after`), among the entries [a, b). */
static uint64_t top_bound(const rc_shard *s, const uint8_t *prefix, uint64_t k, uint64_t a,
                          uint64_t b, int after)
{
    while (a < b) {
        uint64_t mid = a + (b - a) / 2;
        int c = memcmp(s->top_keys + mid * s->top_bytes, prefix, (size_t)k);
        if (c < 0 || (after && c == 0))
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

/* Narrows [*a, *b) to where the suffixes starting with pat[0:m] can lie, from the top
 * table alone, given `first`, the first entry whose key is >= the pattern's first k bytes:
 * an entry whose key is less than them is before them all (zero padding keeps that true of
 * a suffix cut short by the end of the ids), one whose key is greater after them all;
 * equal keys decide nothing. */
static void top_apply(const rc_shard *s, const uint8_t *pat, uint64_t k, uint64_t first,
                      uint64_t *a, uint64_t *b)
{
    /* the first key > prefix: galloping from `first`, whose key the search just read (most
     * prefixes are a few keys' at most: a search over the rest of the table would read a
     * dozen keys far away) */
    uint64_t past = first;
    if (first < s->top_len && memcmp(s->top_keys + first * s->top_bytes, pat, (size_t)k) == 0) {
        uint64_t known = first, step = 1; /* keys [first, known] equal the prefix */
        while (known + step < s->top_len &&
               memcmp(s->top_keys + (known + step) * s->top_bytes, pat, (size_t)k) == 0) {
            known += step;
            step *= 2;
        }
        uint64_t end = known + step < s->top_len ? known + step : s->top_len;
        past = top_bound(s, pat, k, known + 1, end, 1);
    }
    uint64_t lo = first ? (first - 1) * s->top_step + 1 : 0;
    uint64_t hi = past < s->top_len ? past * s->top_step : s->sa_len;
    if (lo > *a)
        *a = lo;
    if (hi < *b)
        *b = hi;
    if (*a > *b)
        *a = *b;
}

static void top_narrow(const rc_shard *s, const uint8_t *pat, uint64_t m, uint64_t *a,
                       uint64_t *b)
{
    uint64_t k = m < s->top_bytes ? m : s->top_bytes;
    top_apply(s, pat, k, top_bound(s, pat, k, 0, s->top_len, 0), a, b);
}

/* The first entry of [a, b) that compares >= pat[skip:m] (> with `after`), b if none: a
 * binary search over entries that compare in order. */
static uint64_t bound(const rc_shard *s, const uint8_t *pat, uint64_t m, uint64_t skip,
                      uint64_t a, uint64_t b, int after, int *err)
{
    while (a < b) {
        uint64_t mid = a + (b - a) / 2;
        /* the next step's entry, whichever way it goes, read while this one is compared
         * (the search waits on memory: 9-12% less time in a crowded anchor's) */
        if (b - a > 2) {
            __builtin_prefetch(s->sa + a + (mid - a) / 2);
            __builtin_prefetch(s->sa + mid + 1 + (b - mid - 1) / 2);
        }
        int c = compare_at(s, mid, pat, skip, m, err);
        if (*err)
            return a;
        if (c < 0 || (after && c == 0))
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

/* The rest of an interval search once its first entry >= the pattern is known: `a` that
 * entry, `end` a bound past which every entry is greater (out[0], out[1] = the interval). */
static int finish(const rc_shard *s, const uint8_t *pat, uint64_t m, uint64_t skip, uint64_t a,
                  uint64_t end, uint64_t *out)
{
    int err = RC_OK;
    out[0] = out[1] = a;
    if (a == end)
        return RC_OK;
    int c = compare_at(s, a, pat, skip, m, &err);
    if (err || c > 0)
        return err;
    if (c < 0) /* the first entry not less than the pattern is less: out of order */
        return RC_DAMAGED;
    /* galloping: most patterns have few places, found in a few probes past the first */
    uint64_t known = a, step = 1;
    while (known + step < end) {
        c = compare_at(s, known + step, pat, skip, m, &err);
        if (err)
            return err;
        if (c < 0) /* an entry past one equal to the pattern is less: out of order */
            return RC_DAMAGED;
        if (c != 0)
            break;
        known += step;
        step *= 2;
    }
    /* upper bound: the first entry > pattern, in (known, known + step] */
    out[1] = bound(s, pat, m, skip, known + 1, known + step < end ? known + step : end, 1, &err);
    return err;
}

/* The top table checked against the suffix array it samples, where an answer rests on it:
 * an interval [out[0], out[1]) (or the empty place of one) at an edge of [a0, b0), the
 * range the table narrowed [lo, hi) to, is bounded by the entry past that edge only if that
 * entry is less than the pattern (before a0) or greater (at b0); RC_DAMAGED if it is not.
 * Inside the range the search's own probes say as much, so an undamaged table costs a read
 * only where an interval meets an edge (about one search in 500). */
static int check_edges(const rc_shard *s, const uint8_t *pat, uint64_t m, uint64_t skip,
                       uint64_t lo, uint64_t hi, uint64_t a0, uint64_t b0, const uint64_t *out)
{
    int err = RC_OK;
    if (out[0] == a0 && a0 > lo && compare_at(s, a0 - 1, pat, skip, m, &err) >= 0)
        return err ? err : RC_DAMAGED;
    if (out[1] == b0 && b0 < hi && compare_at(s, b0, pat, skip, m, &err) <= 0)
        return err ? err : RC_DAMAGED;
    return err;
}

static int shard_ok(const rc_shard *s)
{
    if (!s || s->width < 2 || s->width > 4 || (s->sa_len && !s->sa) || (s->tok_len && !s->tok))
        return 0;
    if (s->top_keys && s->top_step && s->top_bytes &&
        s->top_len != (s->sa_len + s->top_step - 1) / s->top_step)
        return 0;
    return 1;
}

/* [*a, *b) narrowed by the top table, when it has one and the range is wide. */
static void narrow(const rc_shard *s, const uint8_t *pat, uint64_t m, uint64_t *a, uint64_t *b)
{
    if (s->top_keys && s->top_len && s->top_bytes && s->top_step && m &&
        *b - *a > 4 * s->top_step)
        top_narrow(s, pat, m, a, b);
}

#define GROUP 16 /* searches interleaved: the memory reads of one overlap the others' */

/* `narrow` of whole-array ranges [a[j], b[j]) for n <= GROUP patterns of m bytes (pattern
 * j at q + offs[j]), their searches of the top table in lockstep, each step's keys
 * prefetched for the whole group (its last levels are not in the cache). */
static void narrow_group(const rc_shard *s, const uint8_t *q, const uint64_t *offs, uint64_t n,
                         uint64_t m, uint64_t *a, uint64_t *b)
{
    if (!(s->top_keys && s->top_len && s->top_bytes && s->top_step && m &&
          s->sa_len > 4 * s->top_step))
        return;
    uint64_t k = m < s->top_bytes ? m : s->top_bytes;
    uint64_t lo[GROUP], hi[GROUP], mid[GROUP];
    for (uint64_t j = 0; j < n; j++)
        lo[j] = 0, hi[j] = s->top_len;
    for (;;) {
        int active = 0;
        for (uint64_t j = 0; j < n; j++)
            if (lo[j] < hi[j]) {
                mid[j] = lo[j] + (hi[j] - lo[j]) / 2;
                __builtin_prefetch(s->top_keys + mid[j] * s->top_bytes);
                active = 1;
            }
        if (!active)
            break;
        for (uint64_t j = 0; j < n; j++)
            if (lo[j] < hi[j]) {
                if (memcmp(s->top_keys + mid[j] * s->top_bytes, q + offs[j], (size_t)k) < 0)
                    lo[j] = mid[j] + 1;
                else
                    hi[j] = mid[j];
            }
    }
    for (uint64_t j = 0; j < n; j++)
        top_apply(s, q + offs[j], k, lo[j], &a[j], &b[j]);
}

/* Suffixes in [lo, hi) that start with pat[0:m], all of which are known to start with its
 * first `skip` bytes: out[0], out[1] = the interval. */
RC_EXPORT int rc_interval(const rc_shard *s, const uint8_t *pat, uint64_t m, uint64_t skip,
                          uint64_t lo, uint64_t hi, uint64_t *out)
{
    int err = RC_OK;
    if (!shard_ok(s) || !out || lo > hi || hi > s->sa_len || skip > m || (m && !pat))
        return RC_ARGS;
    uint64_t a = lo, b = hi;
    narrow(s, pat, m, &a, &b);
    uint64_t a0 = a;
    /* lower bound: the first entry >= pattern (entries from b on are greater) */
    a = bound(s, pat, m, skip, a, b, 0, &err);
    if (!err)
        err = finish(s, pat, m, skip, a, b, out);
    return err ? err : check_edges(s, pat, m, skip, lo, hi, a0, b, out);
}

/* rc_interval over the whole array for `count` patterns of m bytes, pattern i at
 * q + offs[i]: out[2i], out[2i + 1]. The binary searches run in lockstep in groups, each
 * step's reads of the suffix array and then of the ids prefetched for the whole group. */
RC_EXPORT int rc_intervals(const rc_shard *s, const uint8_t *q, uint64_t q_len,
                           const uint64_t *offs, uint64_t count, uint64_t m, uint64_t *out)
{
    if (!shard_ok(s) || (count && (!offs || !out || !q)))
        return RC_ARGS;
    for (uint64_t i = 0; i < count; i++)
        if (offs[i] > q_len || q_len - offs[i] < m)
            return RC_ARGS;
    for (uint64_t g = 0; g < count; g += GROUP) {
        uint64_t n = count - g < GROUP ? count - g : GROUP;
        uint64_t a[GROUP], b[GROUP], begin[GROUP], end[GROUP], mid[GROUP];
        for (uint64_t j = 0; j < n; j++)
            a[j] = 0, b[j] = s->sa_len;
        narrow_group(s, q, offs + g, n, m, a, b);
        for (uint64_t j = 0; j < n; j++)
            begin[j] = a[j], end[j] = b[j];
        for (;;) {
            int active = 0;
            for (uint64_t j = 0; j < n; j++)
                if (a[j] < b[j]) {
                    mid[j] = a[j] + (b[j] - a[j]) / 2;
                    __builtin_prefetch(s->sa + mid[j]);
                    active = 1;
                }
            if (!active)
                break;
            for (uint64_t j = 0; j < n; j++)
                if (a[j] < b[j]) {
                    uint64_t p = s->sa[mid[j]];
                    if (p >= s->tok_len / s->width)
                        return RC_DAMAGED;
                    __builtin_prefetch(s->tok + p * s->width);
                }
            for (uint64_t j = 0; j < n; j++)
                if (a[j] < b[j]) {
                    if (compare(s, s->sa[mid[j]], q + offs[g + j], 0, m) < 0)
                        a[j] = mid[j] + 1;
                    else
                        b[j] = mid[j];
                }
        }
        for (uint64_t j = 0; j < n; j++) {
            int err = finish(s, q + offs[g + j], m, 0, a[j], end[j], out + 2 * (g + j));
            if (!err)
                err = check_edges(s, q + offs[g + j], m, 0, 0, s->sa_len, begin[j], end[j],
                                  out + 2 * (g + j));
            if (err)
                return err;
        }
    }
    return RC_OK;
}

/* The interval of the query's words [starts[i], ends[i]) for each i < count (q: qn words):
 * out[2i], out[2i + 1]. One of a run of spans with the same start and ascending ends is
 * searched within the one before it, whose words are not compared again (a crowded anchor's
 * spans, counted at once). */
RC_EXPORT int rc_spans(const rc_shard *s, const uint8_t *q, uint64_t qn, const uint64_t *starts,
                       const uint64_t *ends, uint64_t count, uint64_t *out)
{
    if (!shard_ok(s) || (count && (!starts || !ends || !out || !q)))
        return RC_ARGS;
    const uint64_t w = s->width;
    for (uint64_t i = 0; i < count; i++) {
        if (starts[i] >= ends[i] || ends[i] > qn)
            return RC_ARGS;
        uint64_t lo = 0, hi = s->sa_len, known = 0;
        if (i && starts[i - 1] == starts[i] && ends[i - 1] <= ends[i]) {
            lo = out[2 * i - 2], hi = out[2 * i - 1];
            known = ends[i - 1] - starts[i];
        }
        if (lo == hi) { /* inside an empty interval: empty */
            out[2 * i] = out[2 * i + 1] = lo;
            continue;
        }
        int err = rc_interval(s, q + starts[i] * w, (ends[i] - starts[i]) * w, known * w, lo, hi,
                              out + 2 * i);
        if (err)
            return err;
    }
    return RC_OK;
}

/* Words equal from query word qa and shard word c on, at most `lim` (eight bytes at a
 * time, then byte by byte). */
static uint64_t equal_right(const rc_shard *s, const uint8_t *q, uint64_t qa, uint64_t c,
                            uint64_t lim)
{
    const uint64_t w = s->width;
    const uint8_t *x = q + qa * w, *y = s->tok + c * w;
    uint64_t bytes = lim * w, j = 0;
    for (; j + 8 <= bytes; j += 8) {
        uint64_t u, v;
        memcpy(&u, x + j, 8);
        memcpy(&v, y + j, 8);
        if (u != v)
            break;
    }
    while (j < bytes && x[j] == y[j])
        j++;
    return j / w;
}

/* Words equal before query word qa and shard word c, at most `lim`. */
static uint64_t equal_left(const rc_shard *s, const uint8_t *q, uint64_t qa, uint64_t c,
                           uint64_t lim)
{
    const uint64_t w = s->width;
    const uint8_t *x = q + qa * w, *y = s->tok + c * w; /* ends */
    uint64_t bytes = lim * w, j = 0;
    for (; j + 8 <= bytes; j += 8) {
        uint64_t u, v;
        memcpy(&u, x - j - 8, 8);
        memcpy(&v, y - j - 8, 8);
        if (u != v)
            break;
    }
    while (j < bytes && x[-(int64_t)j - 1] == y[-(int64_t)j - 1])
        j++;
    return j / w;
}

/* Words equal from query position qs[i] and shard position cs[i] on (way 1), or before
 * them (way -1), for each i < count: out[i]. The query is `qn` words in the shard's
 * width (ids past the width's range coded as a value no shard holds). */
RC_EXPORT int rc_extend(const rc_shard *s, const uint8_t *q, uint64_t qn, const int64_t *qs,
                        const int64_t *cs, uint64_t count, int way, int64_t *out)
{
    if (!s || (count && (!qs || !cs || !out)) || (qn && !q) || (way != 1 && way != -1))
        return RC_ARGS;
    if (s->width < 2 || s->width > 4 || (s->tok_len && !s->tok))
        return RC_ARGS;
    const uint64_t w = s->width, size = s->tok_len / w;
    for (uint64_t i = 0; i < count; i++) {
        if (qs[i] < 0 || cs[i] < 0 || (uint64_t)qs[i] > qn)
            return RC_ARGS;
        uint64_t a = (uint64_t)qs[i], c = (uint64_t)cs[i];
        if (c > size)
            return RC_DAMAGED; /* a place past the ids: from a damaged suffix array */
        uint64_t k = way > 0 ? equal_right(s, q, a, c, qn - a < size - c ? qn - a : size - c)
                             : equal_left(s, q, a, c, a < c ? a : c);
        out[i] = (int64_t)k;
    }
    return RC_OK;
}

/* *doc: the document holding word position p, searched from its block of 2**block_bits
 * words (blocks[k]: the document holding position k << block_bits, -1 before the first).
 * RC_DAMAGED when the tables do not hold p (a separator's own place is in no suffix array). */
static int document_at(const int64_t *starts, uint64_t ndocs, const int32_t *blocks,
                       uint64_t nblocks, int block_bits, uint64_t p, int64_t *doc)
{
    uint64_t k = p >> block_bits;
    if (k >= nblocks)
        return RC_DAMAGED;
    int64_t d = blocks[k] < 0 ? 0 : blocks[k];
    int64_t e = k + 1 < nblocks ? blocks[k + 1] : (int64_t)ndocs - 1;
    if (e < d || (uint64_t)e >= ndocs || starts[d] > (int64_t)p)
        return RC_DAMAGED;
    while (d < e) { /* the last document in [d, e] starting at or before p */
        int64_t mid = d + (e - d + 1) / 2;
        if (starts[mid] <= (int64_t)p)
            d = mid;
        else
            e = mid - 1;
    }
    *doc = d;
    return RC_OK;
}

/* Rows of three numbers, ordered by the first, then the second, then the third. */
static int row_less(const int64_t *x, const int64_t *y)
{
    return x[0] != y[0] ? x[0] < y[0] : x[1] != y[1] ? x[1] < y[1] : x[2] < y[2];
}

static void row_swap(int64_t *x, int64_t *y)
{
    for (int k = 0; k < 3; k++) {
        int64_t t = x[k];
        x[k] = y[k], y[k] = t;
    }
}

/* Heapsort of n rows of three (no memory but theirs; equal rows in any order). */
static void sort_rows(int64_t *r, uint64_t n)
{
    for (uint64_t end = n, start = n / 2; end > 1;) {
        if (start > 0)
            start--; /* building the heap */
        else
            row_swap(r, r + 3 * --end); /* the largest to its place */
        for (uint64_t i = start, c; (c = 2 * i + 1) < end; i = c) {
            if (c + 1 < end && row_less(r + 3 * c, r + 3 * (c + 1)))
                c++;
            if (!row_less(r + 3 * i, r + 3 * c))
                break;
            row_swap(r + 3 * i, r + 3 * c);
        }
    }
}

/* The runs around the found windows of one shard (suffix.py `_runs`, the reference): window
 * j starts at query word wins[j] and its places are the suffix array's entries
 * [ivs[2j], ivs[2j+1]) that lie in live documents (`alive`: one byte a document, NULL: all
 * live; documents found as rc_documents finds them). The places on one diagonal (place - window) whose windows of w words touch are one
 * run, extended word by word both ways; it is kept when it is at least t words, ends past
 * `tail` and holds some enumerated anchor (en[0:nen], ascending) with its `reach` words
 * whole. Out: the distinct runs, ascending, rows (start, end, document, its position of
 * start), *count of them. `work`: 3 entries a place. */
RC_EXPORT int rc_runs(const rc_shard *s, const uint8_t *q, uint64_t qn, const int64_t *wins,
                      const uint64_t *ivs, uint64_t nwin, const int64_t *starts, uint64_t ndocs,
                      const int32_t *blocks, uint64_t nblocks, int block_bits,
                      const uint8_t *alive, const int64_t *en, uint64_t nen, uint64_t w,
                      uint64_t reach, uint64_t t, int64_t tail, int64_t *work,
                      uint64_t work_len, int64_t *out, uint64_t out_cap, uint64_t *count)
{
    if (!s || !count || (qn && !q) || (nwin && (!wins || !ivs)) || !starts || !ndocs ||
        !blocks || block_bits < 0 || block_bits > 40 || (nen && !en) || !w ||
        (work_len && !work) || (out_cap && !out))
        return RC_ARGS;
    if (s->width < 2 || s->width > 4 || (s->tok_len && !s->tok) || (s->sa_len && !s->sa))
        return RC_ARGS;
    const uint64_t size = s->tok_len / s->width;
    uint64_t n = 0; /* places: rows (diagonal, window, 0) */
    for (uint64_t j = 0; j < nwin; j++) {
        uint64_t lo = ivs[2 * j], hi = ivs[2 * j + 1];
        if (lo > hi || hi > s->sa_len || wins[j] < 0 || (uint64_t)wins[j] + w > qn)
            return RC_ARGS;
        for (uint64_t i = lo; i < hi; i++) {
            int64_t p = (int64_t)s->sa[i];
            if ((uint64_t)p >= size)
                return RC_DAMAGED;
            if (alive) { /* (only then is a place's document needed here) */
                int64_t doc;
                if (document_at(starts, ndocs, blocks, nblocks, block_bits, (uint64_t)p, &doc))
                    return RC_DAMAGED;
                if (!alive[doc])
                    continue;
            }
            if (3 * (n + 1) > work_len)
                return RC_FULL;
            int64_t *r = work + 3 * n++;
            r[0] = p - wins[j], r[1] = wins[j], r[2] = 0;
        }
    }
    sort_rows(work, n);
    uint64_t g = 0; /* runs: rows (start, end, start's place), over the places' rows */
    for (uint64_t i = 0; i < n;) {
        int64_t d = work[3 * i], a0 = work[3 * i + 1], a1 = a0;
        uint64_t k = i + 1;
        for (; k < n && work[3 * k] == d && work[3 * k + 1] - a1 <= (int64_t)w; k++)
            a1 = work[3 * k + 1];
        i = k;
        uint64_t c0 = (uint64_t)(a0 + d), c1 = (uint64_t)(a1 + d) + w; /* (places: >= 0) */
        if (c1 > size)
            return RC_DAMAGED;
        uint64_t qa = (uint64_t)a0, qe = (uint64_t)a1 + w;
        int64_t st = a0 - (int64_t)equal_left(s, q, qa, c0, qa < c0 ? qa : c0);
        int64_t e = (int64_t)qe + (int64_t)equal_right(s, q, qe, c1, qn - qe < size - c1
                                                                         ? qn - qe
                                                                         : size - c1);
        uint64_t lo = 0, hi = nen; /* the first enumerated anchor >= st */
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (en[mid] < st)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (e - st < (int64_t)t || e <= tail || lo == nen || en[lo] + (int64_t)reach > e)
            continue;
        int64_t *r = work + 3 * g++; /* (g <= the places read so far) */
        r[0] = st, r[1] = e, r[2] = st + d;
    }
    sort_rows(work, g);
    uint64_t m = 0;
    for (uint64_t i = 0; i < g; i++) {
        const int64_t *r = work + 3 * i;
        if (i && r[0] == r[-3] && r[1] == r[-2] && r[2] == r[-1])
            continue;
        if (m == out_cap)
            return RC_FULL;
        int64_t doc;
        if (r[2] < 0 ||
            document_at(starts, ndocs, blocks, nblocks, block_bits, (uint64_t)r[2], &doc))
            return RC_DAMAGED;
        int64_t *o = out + 4 * m++;
        o[0] = r[0], o[1] = r[1], o[2] = doc, o[3] = r[2] - starts[doc];
    }
    *count = m;
    return RC_OK;
}

/* The document (index in the shard) holding each place of entries [lo, hi) of the suffix
 * array: out[i - lo]. `starts` are the documents' first positions, ascending; blocks[k]
 * the document holding position k << block_bits (a search starts there). */
RC_EXPORT int rc_documents(const rc_shard *s, const int64_t *starts, uint64_t ndocs,
                           const int32_t *blocks, uint64_t nblocks, int block_bits, uint64_t lo,
                           uint64_t hi, int32_t *out)
{
    if (!s || !starts || !ndocs || !blocks || lo > hi || hi > s->sa_len || block_bits < 0 ||
        block_bits > 40 || (hi > lo && (!out || !s->sa)) || s->width < 2 || s->width > 4)
        return RC_ARGS;
    const uint64_t size = s->tok_len / s->width;
    for (uint64_t i = lo; i < hi; i++) {
        /* random reads, overlapped: the block of a place 16 on, the first document of a
         * place 8 on (its block read by then) */
        if (i + 16 < hi && (s->sa[i + 16] >> block_bits) < nblocks)
            __builtin_prefetch(blocks + (s->sa[i + 16] >> block_bits));
        if (i + 8 < hi && (s->sa[i + 8] >> block_bits) < nblocks) {
            int32_t b = blocks[s->sa[i + 8] >> block_bits];
            if (b >= 0 && (uint64_t)b < ndocs)
                __builtin_prefetch(starts + b);
        }
        uint64_t p = s->sa[i];
        int64_t d;
        if (p >= size || document_at(starts, ndocs, blocks, nblocks, block_bits, p, &d))
            return RC_DAMAGED;
        out[i - lo] = (int32_t)d;
    }
    return RC_OK;
}

/* One end e of the query's words [s, e) and [s - 1, e) (none when s = 0): their intervals
 * in the suffix array; both empty past the query. */
typedef struct {
    uint64_t e, lo, hi, lo1, hi1;
} rc_point;

static uint64_t places_not_left(const rc_point *p) { return (p->hi - p->lo) - (p->hi1 - p->lo1); }

/* The interval of pat[0:m] among entries [a, b), all of which start with its first `skip`
 * bytes, given that it holds the entries [c, d) (a <= c < d <= b: a longer pattern's): its
 * first entry is searched in [a, c], its end in [d, b] only. */
static int interval_around(const rc_shard *s, const uint8_t *pat, uint64_t m, uint64_t skip,
                           uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t *out)
{
    int err = RC_OK;
    out[0] = bound(s, pat, m, skip, a, c, 0, &err);
    if (!err)
        out[1] = bound(s, pat, m, skip, d, b, 1, &err);
    return err;
}

/* The interval of pat[0:m] among entries [a, b) (all starting with its first `skip` bytes),
 * inside which a longer pattern's, [c, d), lies when it is not empty. */
static int interval_within(const rc_shard *s, const uint8_t *pat, uint64_t m, uint64_t skip,
                           uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t *out)
{
    if (c < d && a <= c && d <= b)
        return interval_around(s, pat, m, skip, a, b, c, d, out);
    return rc_interval(s, pat, m, skip, a, b, out);
}

/* Intervals of the query's words [p, e) by their end e < n, each with its p + 1 in `tag` (0:
 * none): a start's points leave the intervals of [start - 1, e) for the start before it,
 * which the crowded anchor's search takes next (rc_crowded_spans): half of its searches.
 * And those of the words [p, e) inside the run of one word around the anchor, [r0, r1), by
 * their length e - p (`run_tag` 1: held; NULL: none kept): the same words wherever they
 * start there (a separator line: `-` over and over, whose shifts are each a start with
 * millions of places, and 40% of such an anchor's searches). */
typedef struct {
    uint64_t *lo, *hi, *tag, n;
    uint64_t *run_lo, *run_hi, *run_tag, r0, r1;
} rc_known;

/* The interval of the query's words [p, e) from the run's table, when they lie in the run
 * and it holds it: 1, else 0. */
static int run_interval(const rc_known *k, int64_t p, uint64_t e, uint64_t *lo, uint64_t *hi)
{
    if (!k || !k->run_tag || p < (int64_t)k->r0 || e > k->r1 || (uint64_t)p >= e ||
        !k->run_tag[e - (uint64_t)p])
        return 0;
    *lo = k->run_lo[e - (uint64_t)p], *hi = k->run_hi[e - (uint64_t)p];
    return 1;
}

/* The interval of the query's words [p, e) kept in the run's table when they lie in the run. */
static void keep_run_interval(rc_known *k, int64_t p, uint64_t e, uint64_t lo, uint64_t hi)
{
    if (!k || !k->run_tag || p < (int64_t)k->r0 || e > k->r1 || (uint64_t)p >= e)
        return;
    k->run_lo[e - (uint64_t)p] = lo, k->run_hi[e - (uint64_t)p] = hi;
    k->run_tag[e - (uint64_t)p] = 1;
}

/* The point at end e, searched within the intervals of `from` (from->e <= e: its words are
 * known equal and not compared again) and around those of `to` (to->e > e: inside them),
 * when there is one; the interval of [start, e) taken from `known` when it holds it, and
 * that of [start - 1, e) left there (`known` may be NULL). */
static int point_at(const rc_shard *s, const uint8_t *q, uint64_t qn, uint64_t start,
                    const rc_point *from, const rc_point *to, uint64_t e, rc_known *known,
                    rc_point *out)
{
    const uint64_t w = s->width;
    const rc_point none = {0, 0, 0, 0, 0};
    uint64_t iv[2] = {0, 0};
    int err;
    if (!to || to->e > qn)
        to = &none;
    out->e = e;
    out->lo = out->hi = out->lo1 = out->hi1 = 0;
    if (e > qn)
        return RC_OK;
    if (known && e < known->n && known->tag[e] == start + 1) {
        out->lo = known->lo[e];
        out->hi = known->hi[e];
    } else if (run_interval(known, (int64_t)start, e, &out->lo, &out->hi)) {
    } else if (from->hi > from->lo) {
        err = interval_within(s, q + start * w, (e - start) * w, (from->e - start) * w,
                              from->lo, from->hi, to->lo, to->hi, iv);
        if (err)
            return err;
        out->lo = iv[0];
        out->hi = iv[1];
        keep_run_interval(known, (int64_t)start, e, iv[0], iv[1]);
    }
    /* (a place of [start - 1, e) holds [start, e): none when that has none) */
    if (start && from->hi1 > from->lo1 && out->hi > out->lo &&
        !run_interval(known, (int64_t)start - 1, e, &out->lo1, &out->hi1)) {
        uint64_t known_words = from->e > start ? from->e - start + 1 : 0; /* (of `from`) */
        err = interval_within(s, q + (start - 1) * w, (e - start + 1) * w, known_words * w,
                              from->lo1, from->hi1, to->lo1, to->hi1, iv);
        if (err)
            return err;
        out->lo1 = iv[0];
        out->hi1 = iv[1];
        keep_run_interval(known, (int64_t)start - 1, e, iv[0], iv[1]);
    }
    if (known && start && e < known->n) { /* (empty: 0, 0, as searched) */
        known->lo[e] = out->lo1, known->hi[e] = out->hi1, known->tag[e] = start;
    }
    return RC_OK;
}

/* Appends (e, 1) for each place of x's interval of [start, x.e) that extends neither left
 * nor right and ends before y_e; then sorts what it appended and merges equal ends, and
 * gives each end e the interval of [start, e) (out_lo, out_hi: the block of x's places that
 * reach e). */
static int read_places(const rc_shard *s, const uint8_t *q, uint64_t qn, uint64_t start,
                       const rc_point *x, uint64_t y_e, uint64_t *out_e, uint64_t *out_m,
                       uint64_t *out_lo, uint64_t *out_hi, uint64_t cap, uint64_t *count)
{
    const uint64_t w = s->width, size = s->tok_len / w, from = *count;
    for (uint64_t i = x->lo; i < x->hi; i++) {
        uint64_t p = s->sa[i];
        if (i + 8 < x->hi && s->sa[i + 8] + (x->e - start) < size) /* random reads, overlapped */
            __builtin_prefetch(s->tok + (s->sa[i + 8] + (x->e - start)) * w);
        if (p >= size || size - p < x->e - start)
            return RC_DAMAGED;
        uint64_t c = p + (x->e - start), lim = qn - x->e < size - c ? qn - x->e : size - c;
        uint64_t e = x->e + equal_right(s, q, x->e, c, lim);
        if (e >= y_e)
            continue;
        /* extends left: the word before it is the query's word before start (a separator,
         * all zero bytes, is in no place) */
        if (start && p) {
            const uint8_t *before = s->tok + (p - 1) * w, *want = q + (start - 1) * w;
            uint64_t zero = 0;
            if (!memcmp(before, want, (size_t)w) && memcmp(before, &zero, (size_t)w))
                continue;
        }
        if (*count >= cap)
            return RC_FULL;
        out_e[*count] = e;
        out_m[*count] = 1;
        (*count)++;
    }
    /* insertion sort of the few appended (at most read_places), then equal ends merged */
    for (uint64_t i = from + 1; i < *count; i++)
        for (uint64_t j = i; j > from && out_e[j - 1] > out_e[j]; j--) {
            uint64_t t = out_e[j];
            out_e[j] = out_e[j - 1];
            out_e[j - 1] = t;
        }
    uint64_t k = from;
    for (uint64_t i = from; i < *count; i++) {
        if (k > from && out_e[k - 1] == out_e[i])
            out_m[k - 1]++;
        else {
            out_e[k] = out_e[i];
            out_m[k] = 1;
            k++;
        }
    }
    *count = k;
    /* each end's interval: the block of x's places whose words equal the query's up to it
     * (x's places read again, their ids in the cache now; checked above) */
    for (uint64_t j = from; j < k; j++)
        out_lo[j] = x->hi, out_hi[j] = x->lo;
    for (uint64_t i = x->lo; i < x->hi; i++) {
        uint64_t c = s->sa[i] + (x->e - start), lim = qn - x->e < size - c ? qn - x->e : size - c;
        uint64_t e = x->e + equal_right(s, q, x->e, c, lim);
        for (uint64_t j = from; j < k && out_e[j] <= e; j++) { /* (ends ascending) */
            if (out_lo[j] == x->hi)
                out_lo[j] = i;
            out_hi[j] = i + 1;
        }
    }
    return RC_OK;
}

/* The end in the middle half of (x, y), y - x >= 2, with the most trailing zero bits: the
 * ranges split are mostly the same for every start (a range a few ends shorter has the same
 * point), whose points then meet the ones the start after left (rc_known). Each part at
 * most 3/4 of the range, and one end less. */
static uint64_t split(uint64_t x, uint64_t y)
{
    uint64_t lo = x + 1 + (y - x) / 4, hi = y - 1 - (y - x) / 4;
    if (lo >= hi)
        return x + (y - x) / 2;
    int d = 63 - __builtin_clzll(lo ^ hi); /* the highest bit where they differ */
    return hi >> d << d;
}

/* The ends e in [first, qn] at which places of the query's words [start, e) extend neither
 * left nor right (maximal there), with how many do: out_e[k], out_m[k] ascending, *count
 * of them, and the interval of [start, e) in the suffix array: out_lo[k], out_hi[k]. These
 * are the steps of f(e) = c(start, e) - c(start - 1, e), the places of [start, e) that do
 * not extend left, which can only drop as e grows (suffix.py's _crowded_spans, for one
 * shard): found by bisection, each point's intervals searched within the last one's (the
 * first within `known`'s, a point at or before `first`) or taken from `ivs`, and read place
 * by place once `few` places are left. The suffix array holds every place (the exact
 * view's, not a sampled one) and the query no separator. */
static int maximal_ends(const rc_shard *s, const uint8_t *q, uint64_t qn, uint64_t start,
                        const rc_point *known, uint64_t first, uint64_t few, rc_known *ivs,
                        uint64_t *out_e, uint64_t *out_m, uint64_t *out_lo, uint64_t *out_hi,
                        uint64_t cap, uint64_t *count)
{
    if (!shard_ok(s) || !count || (qn && !q) || start >= qn || first <= start || !known ||
        known->e > first || (cap && (!out_e || !out_m || !out_lo || !out_hi)))
        return RC_ARGS;
    *count = 0;
    if (first > qn)
        return RC_OK;
    rc_point stack[2 * 160][2]; /* ranges [x, y) still to split (a range of 2**64 ends in
                                  * fewer than 160 splits: each part at most 3/4 of it) */
    uint64_t depth = 0;
    rc_point x = *known, y = {qn + 1, 0, 0, 0, 0};
    int err = known->e == first ? RC_OK : point_at(s, q, qn, start, known, NULL, first, ivs, &x);
    if (err)
        return err;
    stack[depth][0] = x;
    stack[depth][1] = y;
    depth++;
    while (depth) {
        depth--;
        x = stack[depth][0];
        y = stack[depth][1];
        uint64_t fx = places_not_left(&x), fy = places_not_left(&y);
        if (fx == fy)
            continue; /* no step between: f moves one way only */
        if (x.hi - x.lo <= few) {
            err = read_places(s, q, qn, start, &x, y.e, out_e, out_m, out_lo, out_hi, cap,
                              count);
            if (err)
                return err;
            continue;
        }
        if (y.e - x.e == 1) {
            if (*count >= cap)
                return RC_FULL;
            out_e[*count] = x.e;
            out_m[*count] = fx - fy;
            out_lo[*count] = x.lo, out_hi[*count] = x.hi;
            (*count)++;
            continue;
        }
        rc_point m;
        err = point_at(s, q, qn, start, &x, &y, split(x.e, y.e), ivs, &m);
        if (err)
            return err;
        stack[depth][0] = m; /* the right half, taken after the left: ascending ends */
        stack[depth][1] = y;
        stack[depth + 1][0] = x;
        stack[depth + 1][1] = m;
        depth += 2;
    }
    return RC_OK;
}

/* a[i:j) reversed. */
static void reverse(uint64_t *a, uint64_t i, uint64_t j)
{
    for (; i + 1 < j; i++, j--) {
        uint64_t t = a[i];
        a[i] = a[j - 1], a[j - 1] = t;
    }
}

/* Entries [lo, hi) of a suffix array. */
typedef struct {
    uint64_t lo, hi;
} rc_entries;

/* The entries of the query's words [start, e) in the whole array (none before or past the
 * query); from the run's table of `known` (may be NULL) when it holds them, else kept there. */
static int places_interval(const rc_shard *s, const uint8_t *q, uint64_t qn, int64_t start,
                           uint64_t e, rc_known *known, rc_entries *out)
{
    uint64_t iv[2] = {0, 0};
    int err = RC_OK;
    if (run_interval(known, start, e, &iv[0], &iv[1])) {
    } else if (start >= 0 && e <= qn) {
        err = rc_interval(s, q + (uint64_t)start * s->width, (e - (uint64_t)start) * s->width,
                          0, 0, s->sa_len, iv);
        if (!err)
            keep_run_interval(known, start, e, iv[0], iv[1]);
    }
    out->lo = iv[0], out->hi = iv[1];
    return err;
}

/* Pairs (s, e) ordered by s, then e: heapsort of n of them (no memory but theirs). */
static void sort_pairs(uint64_t *s, uint64_t *e, uint64_t n)
{
#define PAIR_LESS(i, j) (s[i] != s[j] ? s[i] < s[j] : e[i] < e[j])
#define PAIR_SWAP(i, j)                                                                        \
    do {                                                                                       \
        uint64_t t_ = s[i];                                                                    \
        s[i] = s[j], s[j] = t_;                                                                \
        t_ = e[i];                                                                             \
        e[i] = e[j], e[j] = t_;                                                                \
    } while (0)
    for (uint64_t end = n, start = n / 2; end > 1;) {
        if (start > 0)
            start--;
        else {
            end--;
            PAIR_SWAP(0, end);
        }
        for (uint64_t i = start, c; (c = 2 * i + 1) < end; i = c) {
            if (c + 1 < end && PAIR_LESS(c, c + 1))
                c++;
            if (!PAIR_LESS(i, c))
                break;
            PAIR_SWAP(i, c);
        }
    }
#undef PAIR_LESS
#undef PAIR_SWAP
}

/* rc_crowded_spans in a shard holding few places of the words every span counted holds,
 * [a, e0) (e0: its `reach`), their entries [lo, hi): each place's own span read from it
 * (its words compared left and right of them), in place of the bisections. A place holds
 * exactly one span maximal, the one it extends to both ways; it counts where that span
 * starts in [lowest, a] and ends at or past max(e0, s + t, least_end), as the bisections
 * count it: the same rows. */
static int spans_from_places(const rc_shard *s, const uint8_t *q, uint64_t qn, uint64_t lowest,
                             uint64_t a, uint64_t e0, uint64_t t, uint64_t least_end,
                             uint64_t lo, uint64_t hi, uint64_t *out_s, uint64_t *out_e,
                             uint64_t *out_m, uint64_t *out_lo, uint64_t *out_hi, uint64_t cap,
                             uint64_t *count)
{
    const uint64_t w = s->width, size = s->tok_len / w, width = e0 - a;
    uint64_t n = 0;
    for (uint64_t i = lo; i < hi; i++) {
        uint64_t p = s->sa[i];
        if (i + 8 < hi && s->sa[i + 8] >= a - lowest + 1) /* random reads, overlapped */
            __builtin_prefetch(s->tok + (s->sa[i + 8] - (a - lowest + 1)) * w);
        if (p >= size || size - p < width)
            return RC_DAMAGED;
        /* left: up to one word past `lowest` (then the span starts before it: not this
         * anchor's), never past the query's or the shard's first word */
        uint64_t lim = a - lowest + 1;
        if (lim > a)
            lim = a;
        if (lim > p)
            lim = p;
        uint64_t left = equal_left(s, q, a, p, lim);
        if (left > a - lowest)
            continue;
        uint64_t start = a - left, c = p + width;
        uint64_t rlim = qn - e0 < size - c ? qn - e0 : size - c;
        uint64_t end = e0 + equal_right(s, q, e0, c, rlim);
        if (end < start + t || end < least_end)
            continue;
        if (n >= cap)
            return RC_FULL;
        out_s[n] = start, out_e[n] = end, n++;
    }
    sort_pairs(out_s, out_e, n);
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (k && out_s[k - 1] == out_s[i] && out_e[k - 1] == out_e[i]) {
            out_m[k - 1]++;
            continue;
        }
        out_s[k] = out_s[i], out_e[k] = out_e[i], out_m[k] = 1;
        out_lo[k] = out_hi[k] = RC_UNKNOWN_INTERVAL; /* (not searched: a few places' spans) */
        k++;
    }
    *count = k;
    return RC_OK;
}

/* The spans of one crowded anchor, in this shard (suffix.py's _crowded_spans): the starts s
 * in [lowest, a] where c(s, e0) rises over c(s - 1, e0), found by bisection (c(., e0) can
 * only drop as the start moves left), each with its maximal ends from
 * max(e0, s + t, least_end) on (maximal_ends above): out_s[k], out_e[k], out_m[k], ascending,
 * and each span's interval in this suffix array, out_lo[k], out_hi[k] (found on the way: a
 * span's counts need it). Summed over shards these are the spans' maximal places: a start
 * where no place of this shard is left-maximal has no maximal place here. The starts are
 * searched with the words every span counted holds, [a, reach) (reach >= e0), in place of
 * the window's; a shard holding at most `few` places of them has them read instead
 * (spans_from_places: the same rows, their intervals RC_UNKNOWN_INTERVAL, not searched).
 * `work`: 3 (qn + 1) entries, or 6 (qn + 1) (the run's table too: rc_known), or NULL (each
 * start's searches all its own). */
RC_EXPORT int rc_crowded_spans(const rc_shard *s, const uint8_t *q, uint64_t qn, uint64_t lowest,
                               uint64_t a, uint64_t e0, uint64_t t, uint64_t least_end, uint64_t few,
                               uint64_t *out_s, uint64_t *out_e, uint64_t *out_m,
                               uint64_t *out_lo, uint64_t *out_hi, uint64_t cap, uint64_t *work,
                               uint64_t work_len, uint64_t *count)
{
    if (!shard_ok(s) || !count || (qn && !q) || lowest > a || a >= e0 || e0 > qn ||
        (cap && (!out_s || !out_e || !out_m || !out_lo || !out_hi)) ||
        (work && work_len < 3 * (qn + 1)))
        return RC_ARGS;
    *count = 0;
    /* every span counted holds the query's words [a, reach): it starts at or before a and
     * ends at or past e0, least_end and its start's t words on, so past lowest + t; the
     * starts are found where places of [s, reach) do not extend left (fewer than of the
     * window's when the spans must reach further: an anchor in the context, the spans
     * ending in the suggestion) */
    uint64_t reach = e0;
    if (lowest + t > reach)
        reach = lowest + t;
    if (least_end > reach)
        reach = least_end;
    if (reach > qn) /* none: the window searched all the same (a damaged array is said) */
        return rc_interval(s, q + a * s->width, (e0 - a) * s->width, 0, 0, s->sa_len,
                           (uint64_t[2]){0, 0});
    /* ranges (x, y] of starts still to split, with the entries of [x, reach) and [y, reach)
     * (their places: c(x, reach) and c(y, reach)) */
    struct {
        int64_t x, y;
        rc_entries xe, ye;
    } stack[2 * 64 + 2];
    uint64_t depth = 0;
    /* the starts taken from the last: each start's points leave the intervals the start
     * before it searches, in `work`, beside those of the run around the anchor (without
     * it, none kept: the same answer) */
    rc_known known_ivs = {work, NULL, NULL, qn + 1, NULL, NULL, NULL, a, a + 1}, *ivs = NULL;
    if (work) {
        known_ivs.hi = work + (qn + 1), known_ivs.tag = work + 2 * (qn + 1);
        memset(known_ivs.tag, 0, (size_t)(qn + 1) * 8);
        ivs = &known_ivs;
    }
    if (work && work_len >= 6 * (qn + 1)) { /* the run: the words equal to the anchor's first */
        const uint64_t w = s->width;
        while (known_ivs.r0 && !memcmp(q + (known_ivs.r0 - 1) * w, q + a * w, (size_t)w))
            known_ivs.r0--;
        while (known_ivs.r1 < qn && !memcmp(q + known_ivs.r1 * w, q + a * w, (size_t)w))
            known_ivs.r1++;
        if (known_ivs.r1 - known_ivs.r0 > 1) {
            known_ivs.run_lo = work + 3 * (qn + 1), known_ivs.run_hi = work + 4 * (qn + 1);
            known_ivs.run_tag = work + 5 * (qn + 1);
            memset(known_ivs.run_tag, 0, (size_t)(qn + 1) * 8);
        }
    }
    rc_entries window, low;
    int err = places_interval(s, q, qn, (int64_t)a, reach, ivs, &window);
    if (err)
        return err;
    if (window.hi - window.lo <= few) /* (a large index's shards: few each of most windows) */
        return spans_from_places(s, q, qn, lowest, a, reach, t, least_end, window.lo, window.hi,
                                 out_s, out_e, out_m, out_lo, out_hi, cap, count);
    err = places_interval(s, q, qn, (int64_t)lowest - 1, reach, ivs, &low);
    if (err)
        return err;
    stack[0].x = (int64_t)lowest - 1, stack[0].y = (int64_t)a;
    stack[0].xe = low, stack[0].ye = window;
    depth = 1;
    while (depth && !err) {
        depth--;
        int64_t x = stack[depth].x, y = stack[depth].y;
        rc_entries xe = stack[depth].xe, ye = stack[depth].ye;
        if (xe.hi - xe.lo == ye.hi - ye.lo)
            continue;
        if (y - x == 1) { /* a start: y, its ends searched from [y, reach) and [x, reach) */
            uint64_t start = (uint64_t)y, first = e0;
            if (start + t > first)
                first = start + t;
            if (least_end > first)
                first = least_end;
            rc_point known = {reach, ye.lo, ye.hi, xe.lo, xe.hi};
            uint64_t k = *count;
            err = maximal_ends(s, q, qn, start, &known, first, few, ivs, out_e + k, out_m + k,
                               out_lo + k, out_hi + k, cap - k, count);
            if (err)
                break;
            for (uint64_t i = 0; i < *count; i++)
                out_s[k + i] = start;
            *count += k;
            continue;
        }
        int64_t m = x + (y - x) / 2;
        rc_entries me;
        err = places_interval(s, q, qn, m, reach, ivs, &me);
        if (err)
            break;
        /* the left half taken after the right: starts descending */
        stack[depth].x = x, stack[depth].y = m, stack[depth].xe = xe, stack[depth].ye = me;
        stack[depth + 1].x = m, stack[depth + 1].y = y, stack[depth + 1].xe = me;
        stack[depth + 1].ye = ye;
        depth += 2;
    }
    if (err)
        return err;
    /* the rows ascending: all reversed, then each start's ends again */
    uint64_t *cols[5] = {out_s, out_e, out_m, out_lo, out_hi};
    for (int c = 0; c < 5; c++)
        reverse(cols[c], 0, *count);
    for (uint64_t i = 0, j; i < *count; i = j) {
        for (j = i + 1; j < *count && out_s[j] == out_s[i]; j++)
            ;
        for (int c = 1; c < 5; c++)
            reverse(cols[c], i, j);
    }
    return RC_OK;
}

/* Marks the documents of docs[a:b) (their entries' documents), counting the live ones not
 * marked before, and adding their weights (their files) to *files when there are weights. */
static uint64_t mark_range(const int32_t *docs, uint64_t a, uint64_t b, const uint8_t *alive,
                           const uint32_t *weights, uint8_t *mark, uint64_t *files)
{
    uint64_t added = 0, w = 0;
    for (uint64_t i = a; i < b; i++) {
        int32_t d = docs[i];
        if (!mark[d]) {
            mark[d] = 1;
            if (!alive || alive[d]) {
                added++;
                w += weights ? weights[d] : 0;
            }
        }
    }
    *files += w;
    return added;
}

/* The distinct live documents of nested intervals of the suffix array: levels[2j],
 * levels[2j + 1] the entries [lo, hi) of level j, each inside the one before (the widest
 * first; an empty one holds none after it); docs[i] the document of entry levels[0] + i
 * (rc_documents), each below ndocs; alive[d] nonzero for a live document (NULL: all are).
 * out[j] = level j's count; with `weights` (a document's files: its identical copies
 * too), files[j] = the sum of its live documents' weights (NULL both, or neither).
 * Counted from the innermost level out, each entry once: the places of the crowded spans
 * of one start nest. `mark`: ndocs zero bytes, left zero. */
RC_EXPORT int rc_distinct(const int32_t *docs, uint64_t ndocs, const uint8_t *alive,
                          const uint32_t *weights, uint8_t *mark, const uint64_t *levels,
                          uint64_t nlevels, uint64_t *out, uint64_t *files)
{
    if (!mark || (nlevels && (!levels || !out)) || (!weights != !files))
        return RC_ARGS;
    uint64_t base = nlevels ? levels[0] : 0, used = 0;
    for (uint64_t j = 0; j < nlevels; j++) {
        out[j] = 0;
        if (files)
            files[j] = 0;
    }
    for (uint64_t j = 0; j < nlevels; j++) {
        uint64_t lo = levels[2 * j], hi = levels[2 * j + 1];
        if (hi <= lo)
            break;
        if (lo < base || (j && (lo < levels[2 * j - 2] || hi > levels[2 * j - 1])))
            return RC_ARGS; /* not nested */
        used = j + 1;
    }
    if (!used)
        return RC_OK;
    if (!docs)
        return RC_ARGS;
    uint64_t end = levels[1] - base;
    for (uint64_t i = 0; i < end; i++)
        if (docs[i] < 0 || (uint64_t)docs[i] >= ndocs)
            return RC_ARGS;
    uint64_t count = 0, w = 0, in_lo = 0, in_hi = 0; /* the level inside, relative to base */
    for (uint64_t j = used; j-- > 0;) {
        uint64_t lo = levels[2 * j] - base, hi = levels[2 * j + 1] - base;
        if (j + 1 == used)
            count += mark_range(docs, lo, hi, alive, weights, mark, &w);
        else
            count += mark_range(docs, lo, in_lo, alive, weights, mark, &w) +
                     mark_range(docs, in_hi, hi, alive, weights, mark, &w);
        in_lo = lo, in_hi = hi;
        out[j] = count;
        if (files)
            files[j] = w;
    }
    for (uint64_t i = 0; i < end; i++)
        mark[docs[i]] = 0;
    return RC_OK;
}

/* The first entry of docs[0:count] holding each document of want[0:m] (distinct, each
 * below ndocs): out[k], -1 when none does. `slot`: ndocs zero int32s, left zero. */
RC_EXPORT int rc_first_places(const int32_t *docs, uint64_t count, uint64_t ndocs,
                              const int32_t *want, uint64_t m, int32_t *slot, int64_t *out)
{
    if (!slot || (count && !docs) || (m && (!want || !out)))
        return RC_ARGS;
    int err = RC_OK;
    for (uint64_t k = 0; k < m; k++) {
        out[k] = -1;
        if (want[k] < 0 || (uint64_t)want[k] >= ndocs || slot[want[k]])
            err = RC_ARGS; /* out of range or twice */
        else
            slot[want[k]] = (int32_t)(k + 1);
    }
    for (uint64_t i = 0; i < count && !err; i++) {
        int32_t d = docs[i];
        if (d < 0 || (uint64_t)d >= ndocs) {
            err = RC_ARGS;
            break;
        }
        int32_t k = slot[d];
        if (k && out[k - 1] < 0)
            out[k - 1] = (int64_t)i;
    }
    for (uint64_t k = 0; k < m; k++)
        if (want[k] >= 0 && (uint64_t)want[k] < ndocs)
            slot[want[k]] = 0;
    return err;
}

/* The id of each of nq query words (word i: its hash qh[i] and its bytes
 * qb[qoff[i] : qoff[i + 1] - 1], a terminator after each), RC_UNKNOWN for a word the
 * vocabulary lacks: of the entries with its hash (in order), the first whose word is the
 * same bytes. An entry whose id or offsets point outside the vocabulary: RC_DAMAGED. */
RC_EXPORT int rc_word_ids(const rc_vocabulary *v, const uint64_t *qh, const uint8_t *qb,
                          const uint64_t *qoff, uint64_t nq, uint32_t *out)
{
    if (!v || (v->n && (!v->hashes || !v->records || !v->offsets || !v->words)) ||
        (nq && (!qh || !qb || !qoff || !out)))
        return RC_ARGS;
    for (uint64_t i = 0; i < nq; i++) {
        if (qoff[i + 1] <= qoff[i])
            return RC_ARGS;
        uint64_t h = qh[i], lo = 0, hi = v->n;
        if (v->buckets) {
            lo = v->buckets[h >> 48], hi = v->buckets[(h >> 48) + 1];
            if (lo > hi || hi > v->n)
                return RC_ARGS;
        }
        while (lo < hi) { /* the first entry of hash >= h */
            uint64_t mid = lo + (hi - lo) / 2;
            if (v->hashes[mid] < h)
                lo = mid + 1;
            else
                hi = mid;
        }
        const uint8_t *word = qb + qoff[i];
        uint64_t len = qoff[i + 1] - qoff[i] - 1;
        out[i] = RC_UNKNOWN;
        for (uint64_t j = lo; j < v->n && v->hashes[j] == h; j++) {
            const uint8_t *r = v->records + 12 * j + 8;
            uint64_t id = (uint64_t)r[0] | (uint64_t)r[1] << 8 | (uint64_t)r[2] << 16 |
                          (uint64_t)r[3] << 24;
            if (id < RC_FIRST_WORD_ID || id - RC_FIRST_WORD_ID >= v->n)
                return RC_DAMAGED;
            uint64_t k = id - RC_FIRST_WORD_ID, a = v->offsets[k], b = v->offsets[k + 1];
            if (a >= b || b > v->words_len)
                return RC_DAMAGED;
            if (b - 1 - a == len && !memcmp(v->words + a, word, len)) {
                out[i] = (uint32_t)id;
                break;
            }
        }
    }
    return RC_OK;
}

/* --- Whether a span is a table (text/kinds.py `is_table`, the reference) --------------------
 * For ASCII text (the caller checks): Python's classes are then these, byte for byte. A row
 * is a logical line (one whose brackets are still open goes on on the next, joined with a
 * space); its shape has strings ($), numbers (0) and names (a) as one character each. */

/* Each ASCII byte's classes as Python's are for ASCII text: a line break (str.splitlines),
 * whitespace (str.split), a word character (\w), a name's first ([A-Za-z_]). */
enum { LINE_BREAK = 1, SPACE = 2, WORD = 4, NAME_START = 8 };
static const uint8_t CLASS[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 2,
    2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0, 0, 0, 0, 0, 0,
    0, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 0, 0, 0, 0, 12,
    0, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static int is_line_break(uint8_t c) { return CLASS[c] & LINE_BREAK; }
static int is_space(uint8_t c) { return CLASS[c] & SPACE; }
static int is_word_char(uint8_t c) { return CLASS[c] & WORD; }
static int is_name_start(uint8_t c) { return CLASS[c] & NAME_START; }

/* The end of the line starting at `at` and where the next one starts (splitlines). */
static uint64_t line_end(const uint8_t *t, uint64_t n, uint64_t at, uint64_t *next)
{
    uint64_t e = at;
    while (e < n && !is_line_break(t[e]))
        e++;
    *next = e < n ? e + 1 + (t[e] == '\r' && e + 1 < n && t[e + 1] == '\n') : n;
    return e;
}

/* A line's brackets opened and closed, its comment and then its strings left out (`_rows`:
 * the comment is cut first, at the first '#', even one inside a string). */
static void line_brackets(const uint8_t *c, uint64_t n, int64_t *opened, int64_t *closed)
{
    uint64_t m = 0;
    while (m < n && c[m] != '#')
        m++;
    *opened = *closed = 0;
    for (uint64_t i = 0; i < m; i++) {
        uint8_t ch = c[i];
        if (ch == '\'' || ch == '"') {
            uint64_t j = i + 1;
            while (j < m && c[j] != ch)
                j++;
            if (j < m) { /* a string closed on this line: left out */
                i = j;
                continue;
            }
        }
        *opened += ch == '(' || ch == '[' || ch == '{';
        *closed += ch == ')' || ch == ']' || ch == '}';
    }
}

/* A row's shape, made in place (`_row_shape`); its length. No step writes more than it
 * reads, so each rewrites the buffer as it goes. */
static uint64_t row_shape(uint8_t *r, uint64_t n)
{
    uint64_t i, w, m = 0;
    while (m < n && r[m] != '#') /* what comes before its first '#' */
        m++;
    n = m;
    for (i = w = 0; i < n;) { /* a string ('...', "...", or unclosed to the end): $ */
        uint8_t ch = r[i];
        if (ch == '\'' || ch == '"') {
            uint64_t j = i + 1;
            while (j < n && r[j] != ch)
                j++;
            i = j < n ? j + 1 : n;
            r[w++] = '$';
        } else {
            r[w++] = ch, i++;
        }
    }
    n = w;
    uint8_t before = ' '; /* the character read before (\b: a word one or not) */
    for (i = w = 0; i < n;) { /* a number (\b\d[\w.]*): 0 */
        uint8_t ch = r[i];
        if (ch >= '0' && ch <= '9' && !is_word_char(before)) {
            uint64_t j = i + 1;
            while (j < n && (is_word_char(r[j]) || r[j] == '.'))
                j++;
            before = r[j - 1];
            i = j;
            r[w++] = '0';
        } else {
            before = ch, r[w++] = ch, i++;
        }
    }
    n = w;
    for (i = w = 0; i < n; i++) /* whitespace dropped */
        if (!is_space(r[i]))
            r[w++] = r[i];
    n = w;
    for (i = w = 0; i < n;) { /* a name ([A-Za-z_]\w*): a */
        if (is_name_start(r[i])) {
            while (++i < n && is_word_char(r[i]))
                ;
            r[w++] = 'a';
        } else {
            r[w++] = r[i++];
        }
    }
    n = w;
    for (i = w = 0; i < n; i++) /* brackets ()[] dropped */
        if (r[i] != '(' && r[i] != ')' && r[i] != '[' && r[i] != ']')
            r[w++] = r[i];
    n = w;
    for (i = w = 0; i < n;) { /* a run of string items ((,\$)+,?): one */
        if (r[i] == ',' && i + 1 < n && r[i + 1] == '$') {
            while (i + 1 < n && r[i] == ',' && r[i + 1] == '$')
                i += 2;
            i += i < n && r[i] == ',';
            r[w++] = ',', r[w++] = '$';
        } else {
            r[w++] = r[i++];
        }
    }
    return w;
}

/* The rows' shapes counted: each distinct one kept once in `buf`, found by its hash. */
typedef struct {
    uint8_t *buf;   /* the kept shapes back to back, then the row being read */
    uint64_t kept;  /* bytes of buf the kept shapes take */
    uint64_t *slot; /* a hash table of distinct shapes (index + 1; 0: empty), `mask + 1` */
    uint64_t mask;
    uint64_t *off, *len, *count; /* each distinct shape's, in order of first appearance */
    uint64_t distinct, shaped, best;
} rc_shapes;

/* The row at buf[kept : kept + n] counted; whether 70% of one shape is still in reach with
 * `later` lines to come. */
static int count_row(rc_shapes *s, uint64_t n, uint64_t later)
{
    uint8_t *row = s->buf + s->kept;
    n = row_shape(row, n);
    if (n) {
        uint64_t h = 1469598103934665603ull; /* FNV-1a */
        for (uint64_t i = 0; i < n; i++)
            h = (h ^ row[i]) * 1099511628211ull;
        uint64_t at = h & s->mask, d;
        for (;; at = (at + 1) & s->mask) {
            d = s->slot[at];
            if (!d) { /* a new shape: kept */
                d = s->distinct++;
                s->off[d] = s->kept, s->len[d] = n, s->count[d] = 0;
                s->slot[at] = d + 1;
                s->kept += n;
                break;
            }
            d -= 1;
            if (s->len[d] == n && !memcmp(s->buf + s->off[d], row, (size_t)n))
                break;
        }
        s->shaped++;
        if (++s->count[d] > s->best)
            s->best = s->count[d];
    }
    return 7 * s->shaped <= 10 * s->best + 3 * later;
}

/* Whether ASCII text[0:n] is a table (text/kinds.py `is_table`): *out 1 or 0. Its rows, one
 * logical line each, have at least 6 shapes, 70% of them the first of the most common one,
 * which holds ',', '=' or ':'. Working memory from the caller: `buf` n + 1 bytes, `work`
 * at least 7 * n + 16 entries (a hash table and three per line). */
RC_EXPORT int rc_is_table(const uint8_t *text, uint64_t n, uint8_t *buf, uint64_t buf_len,
                          uint64_t *work, uint64_t work_len, int32_t *out)
{
    if ((n && !text) || !buf || buf_len < n + 1 || !work || !out)
        return RC_ARGS;
    *out = 0;
    uint64_t lines = 0, next, size = 16;
    for (uint64_t at = 0; at < n; at = next, lines++)
        line_end(text, n, at, &next);
    while (size < 2 * lines)
        size <<= 1;
    if (work_len < size || work_len - size < 3 * lines)
        return RC_ARGS;
    rc_shapes s = {buf, 0, work, size - 1, work + size, work + size + lines,
                   work + size + 2 * lines, 0, 0, 0};
    memset(s.slot, 0, (size_t)size * sizeof *s.slot);
    int64_t depth = 0;
    uint64_t k = 0, row = 0; /* the row being read: its bytes so far (0 lines: none yet) */
    int reading = 0;
    for (uint64_t at = 0; at < n; at = next, k++) {
        uint64_t e = line_end(text, n, at, &next);
        if (depth > 0 && reading) { /* brackets still open: the row goes on */
            s.buf[s.kept + row++] = ' ';
        } else {
            if (reading && !count_row(&s, row, lines - k))
                return RC_OK;
            reading = 1, row = 0;
        }
        memcpy(s.buf + s.kept + row, text + at, (size_t)(e - at));
        row += e - at;
        int64_t opened, closed;
        line_brackets(text + at, e - at, &opened, &closed);
        if (depth || opened) {
            depth += opened - closed;
            if (depth < 0)
                depth = 0;
        }
    }
    if ((reading && !count_row(&s, row, 0)) || s.shaped < 6)
        return RC_OK;
    for (uint64_t d = 0; d < s.distinct; d++) {
        if (s.count[d] != s.best)
            continue;
        const uint8_t *shape = s.buf + s.off[d];
        int sign = memchr(shape, ',', s.len[d]) || memchr(shape, '=', s.len[d]) ||
                   memchr(shape, ':', s.len[d]);
        *out = (double)s.best / (double)s.shaped >= 0.7 && sign;
        break;
    }
    return RC_OK;
}

/* The words of ASCII text[0:n] (text/words.py `WORD_RE`: a run of word characters, or one
 * character that is neither one nor whitespace): word i is text[starts[i]:ends[i]],
 * *count of them. `cap`: the entries `starts` and `ends` hold (n is always enough). */
RC_EXPORT int rc_word_bounds(const uint8_t *text, uint64_t n, uint64_t *starts, uint64_t *ends,
                             uint64_t cap, uint64_t *count)
{
    if ((n && !text) || !count || (cap && (!starts || !ends)))
        return RC_ARGS;
    uint64_t k = 0;
    for (uint64_t i = 0; i < n;) {
        uint8_t c = CLASS[text[i]];
        if (c & SPACE) {
            i++;
            continue;
        }
        uint64_t j = i + 1;
        if (c & WORD)
            while (j < n && (CLASS[text[j]] & WORD))
                j++;
        if (k == cap)
            return RC_FULL;
        starts[k] = i, ends[k] = j, k++;
        i = j;
    }
    *count = k;
    return RC_OK;
}

/* --- Two checks of a span's words (text/kinds.py, the reference) -------------------------- */

/* Whether keys[0:k] (at most 64, each ended by '\n') has one that the words joined by single
 * spaces and lowered (ASCII) hold: `is_license`'s first step (`LEGAL_KEYS`). `low`: those m
 * bytes. One pass: at each byte, the keys starting with it. -1: more than 64 keys. */
static int has_key(const uint8_t *low, uint64_t m, const uint8_t *keys, uint64_t k)
{
    uint64_t first[256] = {0}, at[64], len[64], count = 0;
    for (uint64_t a = 0, b; a < k; a = b + 1) {
        for (b = a; b < k && keys[b] != '\n'; b++)
            ;
        if (b == a)
            continue;
        if (count == 64)
            return -1;
        at[count] = a, len[count] = b - a;
        first[keys[a]] |= 1ull << count++;
    }
    for (uint64_t i = 0; i < m; i++) {
        for (uint64_t mask = first[low[i]]; mask; mask &= mask - 1) {
            int j = __builtin_ctzll(mask);
            if (len[j] <= m - i && !memcmp(low + i, keys + at[j], (size_t)len[j]))
                return 1;
        }
    }
    return 0;
}

/* Whether a sequence is `is_repetitive`: a pattern of at most 32 words (numbers alike) that
 * 75% of the words repeat. codes[i]: word i's distinct word (from 1), 0 for a number, a
 * sign before a number left out already; d distinct codes among them. With under
 * most + 25% of the rest distinct, no period can be repeated so (a word first met past the
 * first p words differs from the word p before it). The comparisons are Python's, in
 * doubles. */
static int repetitive(const uint32_t *codes, uint64_t n, uint64_t d)
{
    uint64_t most = n / 3 < 32 ? n / 3 : 32;
    if (most == 0)
        return 0;
    if ((double)d > (double)most + 0.25 * (double)(n - most))
        return 0;
    for (uint64_t p = 1; p <= most; p++) {
        uint32_t same = 0; /* (32-bit: the compiler compares several at once) */
        for (uint64_t i = 0; i + p < n; i++)
            same += codes[i + p] == codes[i];
        if ((double)same >= 0.75 * (double)(n - p))
            return 1;
    }
    return 0;
}

/* Two checks of n ASCII words, words[0:m] (one '\n' between two): out[0] whether they hold
 * one of the keys (see has_key), out[1] `is_repetitive`. Working memory from the caller:
 * `low` m bytes, `work` at least 6 * n + 16 entries (a hash table, each word's start and
 * code). RC_ARGS when the words are not n, or one is empty. */
RC_EXPORT int rc_span_checks(const uint8_t *words, uint64_t m, uint64_t n, const uint8_t *keys,
                             uint64_t k, uint8_t *low, uint64_t low_len, uint64_t *work,
                             uint64_t work_len, int32_t *out)
{
    if (!n || n >= 1u << 31 || !words || (k && !keys) || !low || low_len < m || !work || !out)
        return RC_ARGS;
    uint64_t size = 16;
    while (size < 2 * n)
        size <<= 1;
    if (work_len < 6 * n + 16) /* (size <= 4 * n + 16) */
        return RC_ARGS;
    uint64_t *slot = work, *start = work + size;
    uint32_t *codes = (uint32_t *)(work + size + n);
    memset(slot, 0, (size_t)size * sizeof *slot); /* 0: empty, else a word's index + 1 */
    uint64_t count = 0, d = 0;
    for (uint64_t a = 0, b; a <= m; a = b + 1) {
        uint64_t h = 0;
        for (b = a; b < m && words[b] != '\n'; b++) {
            uint8_t c = words[b];
            h = ((h << 7) | (h >> 57)) ^ c;
            low[b] = c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
        }
        h *= 0x9E3779B97F4A7C15ull; /* (the top bits, mixed, pick the slot) */
        h >>= 32;
        if (b < m)
            low[b] = ' ';
        if (count == n || b == a)
            return RC_ARGS;
        start[count] = a;
        uint64_t j = h & (size - 1), len = b - a;
        for (;; j = (j + 1) & (size - 1)) {
            if (!slot[j]) { /* a new word */
                slot[j] = count + 1;
                d++;
                int number = words[a] >= '0' && words[a] <= '9';
                codes[count] = number ? 0 : (uint32_t)d;
                break;
            }
            uint64_t o = slot[j] - 1, os = start[o];
            uint64_t olen = (o + 1 < count ? start[o + 1] : a) - 1 - os;
            if (olen == len && !memcmp(words + os, words + a, (size_t)len)) {
                codes[count] = codes[o];
                break;
            }
        }
        count++;
    }
    if (count != n)
        return RC_ARGS;
    int key = has_key(low, m, keys, k);
    if (key < 0)
        return RC_ARGS;
    out[0] = key;
    /* a sign before a number is the number's: left out, in place; then the distinct codes
     * left, flagged in the hash table's memory (no longer needed, at least d + 1 entries) */
    uint64_t kept = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t a = start[i], len = (i + 1 < n ? start[i + 1] : m + 1) - 1 - a;
        int sign = len == 1 && (words[a] == '-' || words[a] == '+');
        if (!(sign && i + 1 < n && codes[i + 1] == 0))
            codes[kept++] = codes[i];
    }
    memset(slot, 0, (size_t)(d + 1) * sizeof *slot);
    uint64_t distinct = 0;
    for (uint64_t i = 0; i < kept; i++) {
        distinct += !slot[codes[i]];
        slot[codes[i]] = 1;
    }
    out[1] = repetitive(codes, kept, distinct);
    return RC_OK;
}
