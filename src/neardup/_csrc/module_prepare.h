/* prepare_pack (included by module.c): NFKC + casefold of many str, written as one UTF-8
 * buffer, equal to
 *     b"".join(prepare_text(t).encode("utf-8", "surrogatepass") for t in texts)
 * with offsets[i] .. offsets[i+1] the bytes of text i.
 *
 * Python's unicodedata stays the rule book: the table is built from it at run time
 * (neardup/features/normalize.py, _nfkc_table), one uint32 per BMP code point:
 *   0            the code point is its own NFKC + casefold and composes with nothing: copy it;
 *   PREP_UNSAFE  context matters (a combining mark, a character that composes with the one
 *                before it, or one whose mapping holds such a character): the whole text goes
 *                to `fallback(text) -> str` (prepare_text);
 *   else         (offset << 5) | length of its NFKC + casefold UTF-8 bytes in `pool`.
 * ASCII is lower-cased here; above the BMP, CJK Extensions B-F (U+20000-2F7FF) and G-H
 * (U+30000-3FFFF) are copied (ideographs: no decomposition, no case, never combine) and every
 * other code point sends its text to the fallback. Because no character that reaches the fast
 * path can compose with or reorder around its neighbours, NFKC of the text is the
 * concatenation of the per-character NFKC, and casefold is per character: the result is
 * byte-identical to the Python path. The mostly-CJK texts this exists for spend ~5 ns per
 * character here against ~30 in the numpy + unicodedata batch path. */
#define PREP_UNSAFE 0xFFFFFFFFu

typedef struct {
    char *p;
    size_t len, cap;
} growbuf;

static int gb_reserve(growbuf *g, size_t extra) {
    if (g->len + extra <= g->cap) return 0;
    size_t cap = g->cap ? g->cap : 1 << 16;
    while (cap < g->len + extra) cap *= 2;
    char *p = realloc(g->p, cap);
    if (!p) return -1;
    g->p = p;
    g->cap = cap;
    return 0;
}

static inline char *put_utf8(char *o, uint32_t c) {
    if (c < 0x80) {
        *o++ = (char)c;
    } else if (c < 0x800) {
        *o++ = (char)(0xC0 | (c >> 6));
        *o++ = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) { /* surrogates too, as "surrogatepass" writes them */
        *o++ = (char)(0xE0 | (c >> 12));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (char)(0x80 | (c & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (c >> 18));
        *o++ = (char)(0x80 | ((c >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (char)(0x80 | (c & 0x3F));
    }
    return o;
}

/* One text through the table; 1 when it needs the fallback, -1 out of memory. */
static int prep_fast(growbuf *g, PyObject *s, const uint32_t *table, const char *pool) {
    Py_ssize_t m = PyUnicode_GET_LENGTH(s);
    if (gb_reserve(g, (size_t)m * 4 + 32) < 0) return -1;
    char *o = g->p + g->len;
    if (PyUnicode_IS_ASCII(s)) {
        const unsigned char *d = PyUnicode_1BYTE_DATA(s);
        for (Py_ssize_t j = 0; j < m; j++) o[j] = (char)(d[j] + ((unsigned)(d[j] - 'A') < 26u) * 32);
        g->len += (size_t)m;
        return 0;
    }
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t j = 0; j < m; j++) {
        uint32_t c = PyUnicode_READ(kind, data, j);
        if (c < 0x80) {
            *o++ = (char)(c + ((c - 'A') < 26u) * 32);
            continue;
        }
        uint32_t e = 0;
        if (c < 0x10000) {
            e = table[c];
        } else if (!((c >= 0x20000 && c < 0x2F800) || (c >= 0x30000 && c < 0x40000))) {
            e = PREP_UNSAFE;
        }
        if (e == 0) {
            o = put_utf8(o, c);
        } else if (e == PREP_UNSAFE) {
            return 1;
        } else { /* a mapping (<= 31 bytes) may outgrow the 4 bytes reserved per character */
            size_t at = (size_t)(o - g->p), n = e & 31u;
            g->len = at;
            if (gb_reserve(g, (size_t)(m - j) * 4 + 32) < 0) return -1;
            o = g->p + at;
            memcpy(o, pool + (e >> 5), n);
            o += n;
        }
    }
    g->len = (size_t)(o - g->p);
    return 0;
}

/* The fallback's str for one text, appended as UTF-8 (surrogatepass). */
static int prep_slow(growbuf *g, PyObject *s, PyObject *fallback) {
    PyObject *r = PyObject_CallOneArg(fallback, s);
    if (!r) return -1;
    PyObject *b = PyUnicode_Check(r) ? PyUnicode_AsEncodedString(r, "utf-8", "surrogatepass") : NULL;
    Py_DECREF(r);
    if (!b) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "fallback must return a str");
        return -1;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(b);
    if (gb_reserve(g, (size_t)n) < 0) {
        Py_DECREF(b);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(g->p + g->len, PyBytes_AS_STRING(b), (size_t)n);
    g->len += (size_t)n;
    Py_DECREF(b);
    return 0;
}

/* Texts through the table with the GIL released (issue 24: the dedup pipeline packs chunk i
 * on a thread while the main thread parses and decides; this was its longest hold of the
 * GIL). items: a private list's references, so no other thread can free them; the str are
 * immutable. A text that needs the fallback is left empty and flagged in slow (1). Returns
 * the number flagged, or -1 when out of memory. */
static int64_t pack_fast(growbuf *g, PyObject *const *items, Py_ssize_t n, const uint32_t *tab,
                         const char *pool, int64_t *off, uint8_t *slow) {
    int64_t nslow = 0;
    off[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t start = g->len;
        int rc = prep_fast(g, items[i], tab, pool);
        if (rc < 0) return -1;
        slow[i] = (uint8_t)rc;
        if (rc == 1) {
            g->len = start;
            nslow++;
        }
        off[i + 1] = (int64_t)g->len;
    }
    return nslow;
}

/* The flagged texts' fallback bytes put in place (with the GIL): g and off rewritten; 0, or
 * -1 with the error set. */
static int pack_slow(growbuf *g, PyObject *const *items, Py_ssize_t n, PyObject *fallback,
                     int64_t *off, const uint8_t *slow) {
    int64_t *old = malloc(sizeof(int64_t) * (size_t)(n + 1));
    growbuf h = {NULL, 0, 0};
    int rc = 0;
    if (!old) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(old, off, sizeof(int64_t) * (size_t)(n + 1));
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        if (slow[i]) {
            rc = prep_slow(&h, items[i], fallback);
        } else {
            size_t len = (size_t)(old[i + 1] - old[i]);
            if (gb_reserve(&h, len) < 0) {
                PyErr_NoMemory();
                rc = -1;
                break;
            }
            memcpy(h.p + h.len, g->p + old[i], len);
            h.len += len;
        }
        off[i + 1] = (int64_t)h.len;
    }
    free(old);
    free(g->p);
    *g = h;
    return rc;
}

/* prepare_pack(texts: list[str], table, pool, fallback, offsets) -> bytes */
static PyObject *py_prepare_pack(PyObject *self, PyObject *args) {
    PyObject *texts, *table, *pool, *fallback, *offsets, *own = NULL, *res = NULL;
    Py_buffer *t, *p, *of;
    bufs bs = {.n = 0};
    growbuf g = {NULL, 0, 0};
    uint8_t *slow = NULL;
    if (!PyArg_ParseTuple(args, "O!OOOO", &PyList_Type, &texts, &table, &pool, &fallback, &offsets))
        return NULL;
    GETS(ARR(t, table, 'u', 4, 0, 1), ARR(p, pool, 'u', 1, 0, 1), ARR(of, offsets, 'i', 8, 1, 1));
    Py_ssize_t n = PyList_GET_SIZE(texts);
    if (LEN(t) != 0x10000) FAIL(PyExc_ValueError, "table must have 65536 entries");
    if (LEN(of) != n + 1) FAIL(PyExc_ValueError, "offsets must have len(texts) + 1 entries");
    const uint32_t *tab = t->buf;
    for (int64_t c = 0; c < 0x10000; c++) /* a corrupt table must not read outside the pool */
        if (tab[c] != PREP_UNSAFE && (tab[c] >> 5) + (tab[c] & 31u) > (uint64_t)LEN(p))
            FAIL(PyExc_ValueError, "table entry %lld points outside the pool", (long long)c);
    /* from here on errors go to out: (own, slow and g to free) */
    if (!(own = PyList_GetSlice(texts, 0, n))) goto out;
    PyObject *const *items = (PyObject *const *)((PyListObject *)own)->ob_item;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyUnicode_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "texts[%zd] is %s, expected str", i,
                         Py_TYPE(items[i])->tp_name);
            goto out;
        }
    if (!(slow = malloc((size_t)(n > 0 ? n : 1)))) {
        PyErr_NoMemory();
        goto out;
    }
    int64_t *off = of->buf, nslow;
    const char *pl = p->buf;
    NOGIL(nslow = pack_fast(&g, items, n, tab, pl, off, slow));
    if (nslow < 0) {
        PyErr_NoMemory();
        goto out;
    }
    if (nslow > 0 && pack_slow(&g, items, n, fallback, off, slow) < 0) goto out;
    res = PyBytes_FromStringAndSize(g.p ? g.p : "", (Py_ssize_t)g.len);
out:
    free(g.p);
    free(slow);
    Py_XDECREF(own);
    release(&bs);
    return res;
}

#define PREPARE_METHODS {"prepare_pack", py_prepare_pack, METH_VARARGS, "NFKC + casefold of many str as one UTF-8 buffer."},
