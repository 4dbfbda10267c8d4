/* Replays the search kernel's cases (inputs and the answers the Python search gives, written
 * by tests/native/cases.py) against a built library, the way the engine calls it: the same
 * driver runs natively, under qemu-user (linux-arm64) and under Wine (windows-x64).
 *
 * usage: driver LIBRARY CASES   prints "kernel cases: N passed, M failed", exits 1 on a failure
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#include <windows.h>
#define OPEN(path) ((void *)LoadLibraryA(path))
#define SYMBOL(lib, name) ((void *)GetProcAddress((HMODULE)(lib), name))
#else
#include <dlfcn.h>
#define OPEN(path) dlopen(path, RTLD_NOW)
#define SYMBOL(lib, name) dlsym(lib, name)
#endif

typedef struct { /* kernel.c's rc_shard */
    const uint8_t *tok;
    uint64_t tok_len;
    const uint32_t *sa;
    uint64_t sa_len;
    uint64_t width;
    const uint8_t *top_keys;
    uint64_t top_len;
    uint64_t top_step;
    uint64_t top_bytes;
} rc_shard;

typedef struct { /* kernel.c's rc_vocabulary */
    const uint64_t *hashes;
    const uint8_t *records;
    uint64_t n;
    const uint32_t *buckets;
    const uint64_t *offsets;
    const uint8_t *words;
    uint64_t words_len;
} rc_vocabulary;

typedef int (*version_fn)(void);
typedef int (*interval_fn)(const rc_shard *, const uint8_t *, uint64_t, uint64_t, uint64_t,
                           uint64_t, uint64_t *);
typedef int (*intervals_fn)(const rc_shard *, const uint8_t *, uint64_t, const uint64_t *,
                            uint64_t, uint64_t, uint64_t *);
typedef int (*spans_fn)(const rc_shard *, const uint8_t *, uint64_t, const uint64_t *,
                        const uint64_t *, uint64_t, uint64_t *);
typedef int (*extend_fn)(const rc_shard *, const uint8_t *, uint64_t, const int64_t *,
                         const int64_t *, uint64_t, int, int64_t *);
typedef int (*documents_fn)(const rc_shard *, const int64_t *, uint64_t, const int32_t *,
                            uint64_t, int, uint64_t, uint64_t, int32_t *);
typedef int (*distinct_fn)(const int32_t *, uint64_t, const uint8_t *, const uint32_t *,
                           uint8_t *, const uint64_t *, uint64_t, uint64_t *, uint64_t *);
typedef int (*first_places_fn)(const int32_t *, uint64_t, uint64_t, const int32_t *, uint64_t,
                               int32_t *, int64_t *);
typedef int (*crowded_spans_fn)(const rc_shard *, const uint8_t *, uint64_t, uint64_t, uint64_t,
                                uint64_t, uint64_t, uint64_t, uint64_t, uint64_t *, uint64_t *,
                                uint64_t *, uint64_t *, uint64_t *, uint64_t, uint64_t *,
                                uint64_t, uint64_t *);

typedef int (*word_ids_fn)(const rc_vocabulary *, const uint64_t *, const uint8_t *,
                           const uint64_t *, uint64_t, uint32_t *);

typedef int (*is_table_fn)(const uint8_t *, uint64_t, uint8_t *, uint64_t, uint64_t *, uint64_t,
                           int32_t *);

typedef int (*runs_fn)(const rc_shard *, const uint8_t *, uint64_t, const int64_t *,
                       const uint64_t *, uint64_t, const int64_t *, uint64_t, const int32_t *,
                       uint64_t, int, const uint8_t *, const int64_t *, uint64_t, uint64_t,
                       uint64_t, uint64_t, int64_t, int64_t *, uint64_t, int64_t *, uint64_t,
                       uint64_t *);

typedef int (*span_checks_fn)(const uint8_t *, uint64_t, uint64_t, const uint8_t *, uint64_t,
                              uint8_t *, uint64_t, uint64_t *, uint64_t, int32_t *);

typedef int (*word_bounds_fn)(const uint8_t *, uint64_t, uint64_t *, uint64_t *, uint64_t,
                              uint64_t *);

static FILE *in;

static long long num(void)
{
    long long v;
    if (fscanf(in, "%lld", &v) != 1) {
        fprintf(stderr, "driver: the cases file ends too early\n");
        exit(2);
    }
    return v;
}

static unsigned long long unum(void) /* a 64-bit hash */
{
    unsigned long long v;
    if (fscanf(in, "%llu", &v) != 1) {
        fprintf(stderr, "driver: the cases file ends too early\n");
        exit(2);
    }
    return v;
}

static void *array(size_t n, size_t size) /* never NULL, even for 0 entries */
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "driver: out of memory\n");
        exit(2);
    }
    return p;
}

static uint8_t *bytes(size_t n)
{
    uint8_t *p = array(n, 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)num();
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: driver LIBRARY CASES\n");
        return 2;
    }
    void *lib = OPEN(argv[1]);
    if (!lib) {
        fprintf(stderr, "driver: cannot load %s\n", argv[1]);
        return 2;
    }
    version_fn version = (version_fn)SYMBOL(lib, "rc_version");
    interval_fn interval = (interval_fn)SYMBOL(lib, "rc_interval");
    intervals_fn intervals = (intervals_fn)SYMBOL(lib, "rc_intervals");
    spans_fn spans = (spans_fn)SYMBOL(lib, "rc_spans");
    extend_fn extend = (extend_fn)SYMBOL(lib, "rc_extend");
    documents_fn documents = (documents_fn)SYMBOL(lib, "rc_documents");
    crowded_spans_fn crowded_spans = (crowded_spans_fn)SYMBOL(lib, "rc_crowded_spans");
    distinct_fn distinct = (distinct_fn)SYMBOL(lib, "rc_distinct");
    first_places_fn first_places = (first_places_fn)SYMBOL(lib, "rc_first_places");
    word_ids_fn word_ids = (word_ids_fn)SYMBOL(lib, "rc_word_ids");
    is_table_fn is_table = (is_table_fn)SYMBOL(lib, "rc_is_table");
    runs_fn runs = (runs_fn)SYMBOL(lib, "rc_runs");
    span_checks_fn span_checks = (span_checks_fn)SYMBOL(lib, "rc_span_checks");
    word_bounds_fn word_bounds = (word_bounds_fn)SYMBOL(lib, "rc_word_bounds");
    if (!version || !interval || !intervals || !spans || !extend || !documents || !crowded_spans ||
        !distinct || !first_places || !word_ids || !is_table || !span_checks || !word_bounds || !runs) {
        fprintf(stderr, "driver: %s lacks an rc_ function\n", argv[1]);
        return 2;
    }
    in = fopen(argv[2], "r");
    if (!in) {
        fprintf(stderr, "driver: cannot read %s\n", argv[2]);
        return 2;
    }
    if (version() != num()) {
        fprintf(stderr, "driver: the library's version differs from the cases'\n");
        return 2;
    }
    rc_shard s = {0};
    int64_t *starts = NULL;
    int32_t *blocks = NULL;
    uint64_t ndocs = 0, nblocks = 0;
    int bits = 0;
    long passed = 0, failed = 0;
    char kind[16];
    while (fscanf(in, "%15s", kind) == 1) {
        int ok = 1;
        if (!strcmp(kind, "shard")) { /* width tok_len sa_len ndocs nblocks bits top_step
                                         top_bytes, then the arrays */
            free((void *)s.tok), free((void *)s.sa), free(starts), free(blocks);
            free((void *)s.top_keys);
            s.width = (uint64_t)num();
            s.tok_len = (uint64_t)num();
            s.sa_len = (uint64_t)num();
            ndocs = (uint64_t)num();
            nblocks = (uint64_t)num();
            bits = (int)num();
            s.top_step = (uint64_t)num();
            s.top_bytes = (uint64_t)num();
            s.top_len = s.top_step ? (s.sa_len + s.top_step - 1) / s.top_step : 0;
            s.tok = bytes(s.tok_len);
            uint32_t *sa = array(s.sa_len, 4);
            for (uint64_t i = 0; i < s.sa_len; i++)
                sa[i] = (uint32_t)num();
            s.sa = sa;
            starts = array(ndocs, 8);
            for (uint64_t i = 0; i < ndocs; i++)
                starts[i] = num();
            blocks = array(nblocks, 4);
            for (uint64_t i = 0; i < nblocks; i++)
                blocks[i] = (int32_t)num();
            s.top_keys = bytes(s.top_len * s.top_bytes);
            if (!s.top_step) {
                free((void *)s.top_keys);
                s.top_keys = NULL;
            }
            continue;
        }
        if (!strcmp(kind, "interval")) { /* rc m skip lo hi pattern a b */
            int want_rc = (int)num();
            uint64_t m = num(), skip = num(), lo = num(), hi = num();
            uint8_t *pat = bytes(m);
            uint64_t want[2] = {(uint64_t)num(), (uint64_t)num()}, got[2] = {0, 0};
            int rc = interval(&s, pat, m, skip, lo, hi, got);
            ok = rc == want_rc && (rc || (got[0] == want[0] && got[1] == want[1]));
            free(pat);
        } else if (!strcmp(kind, "intervals")) { /* rc q_len count m query offsets pairs */
            int want_rc = (int)num();
            uint64_t q_len = num(), count = num(), m = num();
            uint8_t *q = bytes(q_len);
            uint64_t *offs = array(count, 8), *want = array(2 * count, 8);
            uint64_t *got = array(2 * count, 8);
            for (uint64_t i = 0; i < count; i++)
                offs[i] = (uint64_t)num();
            for (uint64_t i = 0; i < 2 * count; i++)
                want[i] = (uint64_t)num();
            int rc = intervals(&s, q, q_len, offs, count, m, got);
            ok = rc == want_rc && (rc || !memcmp(got, want, 2 * count * 8));
            free(q), free(offs), free(want), free(got);
        } else if (!strcmp(kind, "spans")) { /* rc qn count query starts ends pairs */
            int want_rc = (int)num();
            uint64_t qn = num(), count = num();
            uint8_t *q = bytes(qn * s.width);
            uint64_t *starts_ = array(count, 8), *ends_ = array(count, 8);
            uint64_t *want = array(2 * count, 8), *got = array(2 * count, 8);
            for (uint64_t i = 0; i < count; i++)
                starts_[i] = (uint64_t)num();
            for (uint64_t i = 0; i < count; i++)
                ends_[i] = (uint64_t)num();
            for (uint64_t i = 0; i < 2 * count; i++)
                want[i] = (uint64_t)num();
            int rc = spans(&s, q, qn, starts_, ends_, count, got);
            ok = rc == want_rc && (rc || !memcmp(got, want, 2 * count * 8));
            free(q), free(starts_), free(ends_), free(want), free(got);
        } else if (!strcmp(kind, "extend")) { /* rc way qn count query qs cs expected */
            int want_rc = (int)num(), way = (int)num();
            uint64_t qn = num(), count = num();
            uint8_t *q = bytes(qn * s.width);
            int64_t *qs = array(count, 8), *cs = array(count, 8), *want = array(count, 8);
            int64_t *got = array(count, 8);
            for (uint64_t i = 0; i < count; i++)
                qs[i] = num();
            for (uint64_t i = 0; i < count; i++)
                cs[i] = num();
            for (uint64_t i = 0; i < count; i++)
                want[i] = num();
            int rc = extend(&s, q, qn, qs, cs, count, way, got);
            ok = rc == want_rc && (rc || !memcmp(got, want, count * 8));
            free(q), free(qs), free(cs), free(want), free(got);
        } else if (!strcmp(kind, "runs")) { /* rc qn query nwin (b lo hi)... has_alive alive
                                               nen en w reach t tail count rows */
            int want_rc = (int)num();
            uint64_t qn = num();
            uint8_t *q = bytes(qn * s.width);
            uint64_t nwin = num(), places = 0;
            int64_t *wins = array(nwin, 8);
            uint64_t *ivs = array(2 * nwin, 8);
            for (uint64_t j = 0; j < nwin; j++) {
                wins[j] = num(), ivs[2 * j] = (uint64_t)num(), ivs[2 * j + 1] = (uint64_t)num();
                places += ivs[2 * j + 1] - ivs[2 * j];
            }
            uint8_t *alive = num() ? bytes(ndocs) : NULL;
            uint64_t nen = num();
            int64_t *en = array(nen, 8);
            for (uint64_t i = 0; i < nen; i++)
                en[i] = num();
            uint64_t w = num(), reach = num(), t = num();
            int64_t tail = num();
            uint64_t count = num(), got_count = 0;
            int64_t *want = array(4 * count, 8), *got = array(4 * (places + 1), 8);
            int64_t *work = array(3 * places + 1, 8);
            for (uint64_t i = 0; i < 4 * count; i++)
                want[i] = num();
            int rc = runs(&s, q, qn, wins, ivs, nwin, starts, ndocs, blocks, nblocks, bits, alive,
                          en, nen, w, reach, t, tail, work, 3 * places + 1, got, places + 1,
                          &got_count);
            ok = rc == want_rc &&
                 (rc || (got_count == count && !memcmp(got, want, 4 * count * 8)));
            free(q), free(wins), free(ivs), free(alive), free(en), free(want), free(got);
            free(work);
        } else if (!strcmp(kind, "crowded_spans")) { /* rc qn lowest a e0 t least_end few query
                                                           count (start, end, places, lo, hi) */
            int want_rc = (int)num();
            uint64_t qn = num(), lowest = num(), a = num(), e0 = num(), t = num();
            uint64_t least_end = num(), few = num();
            uint8_t *q = bytes(qn * s.width);
            uint64_t count = num(), cap = (qn + 2) * (qn + 2) + few, got_count = 0;
            uint64_t *want = array(5 * count + 1, 8), *got = array(5 * cap, 8);
            for (uint64_t i = 0; i < 5 * count; i++)
                want[i] = unum(); /* (an interval not searched: 2**64 - 1) */
            uint64_t *work = array(6 * (qn + 1), 8); /* (the run's table too) */
            ok = 1;
            for (int shared = 0; ok && shared < 2; shared++) { /* the same answer either way */
                int rc = crowded_spans(&s, q, qn, lowest, a, e0, t, least_end, few, got,
                                       got + cap, got + 2 * cap, got + 3 * cap, got + 4 * cap,
                                       cap, shared ? work : NULL, 6 * (qn + 1), &got_count);
                ok = rc == want_rc && (rc || got_count == count);
                for (uint64_t i = 0; ok && !rc && i < count; i++)
                    for (int k = 0; ok && k < 5; k++)
                        ok = got[k * cap + i] == want[5 * i + k];
            }
            free(q), free(want), free(got), free(work);
        } else if (!strcmp(kind, "distinct")) { /* rc count docs ndocs alive (or -1) weights
                                                      (or -1) nlevels levels expected (the
                                                      counts, then the files with weights) */
            int want_rc = (int)num();
            uint64_t count = num();
            int32_t *docs = array(count + 1, 4);
            for (uint64_t i = 0; i < count; i++)
                docs[i] = (int32_t)num();
            uint64_t nd = num();
            int64_t first = num();
            uint8_t *alive = NULL, *mark = array(nd + 1, 1);
            memset(mark, 0, nd + 1);
            if (first >= 0) {
                alive = array(nd + 1, 1);
                alive[0] = (uint8_t)first;
                for (uint64_t i = 1; i < nd; i++)
                    alive[i] = (uint8_t)num();
            }
            int64_t first_w = num();
            uint32_t *weights = NULL;
            if (first_w >= 0) {
                weights = array(nd + 1, 4);
                weights[0] = (uint32_t)first_w;
                for (uint64_t i = 1; i < nd; i++)
                    weights[i] = (uint32_t)num();
            }
            uint64_t nl = num(), nw = weights ? 2 * nl : nl;
            uint64_t *levels = array(2 * nl + 1, 8), *want = array(nw + 1, 8);
            uint64_t *got = array(nw + 1, 8);
            for (uint64_t i = 0; i < 2 * nl; i++)
                levels[i] = (uint64_t)num();
            for (uint64_t i = 0; i < nw; i++)
                want[i] = (uint64_t)num();
            int rc = distinct(docs, nd, alive, weights, mark, levels, nl, got,
                              weights ? got + nl : NULL);
            ok = rc == want_rc && (rc || !memcmp(got, want, nw * 8));
            for (uint64_t i = 0; ok && i < nd; i++)
                ok = !mark[i]; /* left zero */
            free(docs), free(alive), free(weights), free(mark), free(levels), free(want),
                free(got);
        } else if (!strcmp(kind, "first_places")) { /* rc count docs ndocs m want expected */
            int want_rc = (int)num();
            uint64_t count = num();
            int32_t *docs = array(count + 1, 4);
            for (uint64_t i = 0; i < count; i++)
                docs[i] = (int32_t)num();
            uint64_t nd = num(), m = num();
            int32_t *want = array(m + 1, 4), *slot = array(nd + 1, 4);
            int64_t *expect = array(m + 1, 8), *got = array(m + 1, 8);
            memset(slot, 0, (nd + 1) * 4);
            for (uint64_t i = 0; i < m; i++)
                want[i] = (int32_t)num();
            for (uint64_t i = 0; i < m; i++)
                expect[i] = num();
            int rc = first_places(docs, count, nd, want, m, slot, got);
            ok = rc == want_rc && (rc || !memcmp(got, expect, m * 8));
            for (uint64_t i = 0; ok && i < nd; i++)
                ok = !slot[i]; /* left zero */
            free(docs), free(want), free(slot), free(expect), free(got);
        } else if (!strcmp(kind, "word_ids")) { /* rc buckets n hashes ids offsets words_len
                                                      words nq hashes offsets bytes_len bytes
                                                      expected */
            int want_rc = (int)num(), with_buckets = (int)num();
            uint64_t n = num();
            uint64_t *hashes = array(n + 1, 8), *offsets = array(n + 1, 8);
            uint8_t *records = array(12 * n + 1, 1);
            for (uint64_t i = 0; i < n; i++)
                hashes[i] = unum();
            for (uint64_t i = 0; i < n; i++) { /* (hash, id) records, little-endian */
                uint64_t id = num();
                for (int b = 0; b < 8; b++)
                    records[12 * i + b] = (uint8_t)(hashes[i] >> (8 * b));
                for (int b = 0; b < 4; b++)
                    records[12 * i + 8 + b] = (uint8_t)(id >> (8 * b));
            }
            for (uint64_t i = 0; i <= n; i++)
                offsets[i] = num();
            uint64_t words_len = num();
            uint8_t *words = bytes(words_len);
            uint32_t *buckets = array(65537, 4);
            for (uint64_t k = 0, j = 0; k <= 65536; k++) { /* as kernel.py makes them */
                while (j < n && k < 65536 && (hashes[j] >> 48) < k)
                    j++;
                buckets[k] = (uint32_t)(k < 65536 ? j : n);
            }
            rc_vocabulary v = {hashes, records, n, with_buckets ? buckets : NULL, offsets, words,
                               words_len};
            uint64_t nq = num();
            uint64_t *qh = array(nq + 1, 8), *qoff = array(nq + 1, 8);
            for (uint64_t i = 0; i < nq; i++)
                qh[i] = unum();
            for (uint64_t i = 0; i <= nq; i++)
                qoff[i] = num();
            uint64_t qlen = num();
            uint8_t *qb = bytes(qlen);
            uint32_t *want = array(nq + 1, 4), *got = array(nq + 1, 4);
            for (uint64_t i = 0; i < nq; i++)
                want[i] = (uint32_t)num();
            int rc = word_ids(&v, qh, qb, qoff, nq, got);
            ok = rc == want_rc && (rc || !memcmp(got, want, nq * 4));
            free(hashes), free(offsets), free(records), free(words), free(buckets);
            free(qh), free(qoff), free(qb), free(want), free(got);
        } else if (!strcmp(kind, "word_bounds")) { /* rc n text count starts ends */
            int want_rc = (int)num();
            uint64_t n = num();
            uint8_t *text = bytes(n);
            uint64_t m = num();
            uint64_t *want = array(2 * m + 1, 8), *got = array(2 * n + 1, 8), count = 0;
            for (uint64_t i = 0; i < 2 * m; i++)
                want[i] = (uint64_t)num();
            int rc = word_bounds(text, n, got, got + n, n, &count);
            ok = rc == want_rc && (rc || (count == m && !memcmp(got, want, m * 8) &&
                                          !memcmp(got + n, want + m, m * 8)));
            free(text), free(want), free(got);
        } else if (!strcmp(kind, "is_table")) { /* rc n text expected */
            int want_rc = (int)num();
            uint64_t n = num();
            uint8_t *text = bytes(n), *buf = array(n + 1, 1);
            uint64_t *work = array(7 * n + 16, 8);
            int want = (int)num();
            int32_t got = -1;
            int rc = is_table(text, n, buf, n + 1, work, 7 * n + 16, &got);
            ok = rc == want_rc && (rc || got == want);
            free(text), free(buf), free(work);
        } else if (!strcmp(kind, "span_checks")) { /* rc n m words k keys key repetitive */
            int want_rc = (int)num();
            uint64_t n = num(), m = num();
            uint8_t *words = bytes(m), *low = array(m + 1, 1);
            uint64_t k = num();
            uint8_t *keys = bytes(k);
            uint64_t *work = array(6 * n + 16, 8);
            int want_key = (int)num(), want_rep = (int)num();
            int32_t got[2] = {-1, -1};
            int rc = span_checks(words, m, n, keys, k, low, m, work, 6 * n + 16, got);
            ok = rc == want_rc && (rc || (got[0] == want_key && got[1] == want_rep));
            free(words), free(low), free(keys), free(work);
        } else if (!strcmp(kind, "documents")) { /* rc lo hi expected */
            int want_rc = (int)num();
            uint64_t lo = num(), hi = num();
            int32_t *want = array(hi - lo, 4), *got = array(hi - lo, 4);
            for (uint64_t i = 0; i < hi - lo; i++)
                want[i] = (int32_t)num();
            int rc = documents(&s, starts, ndocs, blocks, nblocks, bits, lo, hi, got);
            ok = rc == want_rc && (rc || !memcmp(got, want, (hi - lo) * 4));
            free(want), free(got);
        } else {
            fprintf(stderr, "driver: unknown case %s\n", kind);
            return 2;
        }
        if (ok)
            passed++;
        else {
            failed++;
            if (failed <= 5)
                fprintf(stderr, "driver: case %ld (%s) differs\n", passed + failed, kind);
        }
    }
    free((void *)s.tok), free((void *)s.sa), free(starts), free(blocks);
    free((void *)s.top_keys);
    fclose(in);
    printf("kernel cases: %ld passed, %ld failed\n", passed, failed);
    return failed ? 1 : 0;
}
