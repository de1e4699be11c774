/* neardup._native: thin CPython bindings over the plain C kernels (kernels.h).
 *
 * Arrays arrive through the buffer protocol (numpy arrays, memmaps); each one is checked for
 * C-contiguity, element kind and size, dimensions and writability, so a wrong dtype gives a
 * TypeError naming the argument instead of reading garbage. Signatures mirror the numba
 * kernels they replace; the GIL is released around every loop. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "kernels.h"
#include "xxh3.h"

#define MAXB 16

typedef struct {
    Py_buffer b[MAXB];
    int n;
} bufs;

static void release(bufs *bs) {
    for (int i = 0; i < bs->n; i++) PyBuffer_Release(&bs->b[i]);
    bs->n = 0;
}

/* kind: 'u' unsigned int, 'i' signed int, 'f' float, 'b' one byte (bool or uint8). */
static Py_buffer *get(bufs *bs, PyObject *o, char kind, Py_ssize_t size, int writable, int ndim,
                      const char *name) {
    if (bs->n == MAXB) {
        PyErr_SetString(PyExc_RuntimeError, "neardup._native: too many array arguments");
        return NULL;
    }
    Py_buffer *v = &bs->b[bs->n];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, v, flags) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s array", name,
                     writable ? " writable" : "");
        return NULL;
    }
    bs->n++;
    const char *f = v->format ? v->format : "B";
    while (*f == '@' || *f == '=' || *f == '<') f++;
    const char *ok = kind == 'u' ? "BHILQ" : kind == 'i' ? "bhilq" : kind == 'f' ? "d" : "?Bb";
    if (f[0] == 0 || f[1] != 0 || strchr(ok, f[0]) == NULL || v->itemsize != size ||
        (ndim >= 0 && v->ndim != ndim)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a %d-d array of %s%d, got format '%s' (%zd bytes)",
                     name, ndim, kind == 'u' ? "uint" : kind == 'i' ? "int" : kind == 'f' ? "float" : "bool/uint",
                     (int)size * 8, v->format ? v->format : "B", v->itemsize);
        return NULL;
    }
    return v;
}

#define LEN(v) ((v)->itemsize ? (int64_t)((v)->len / (v)->itemsize) : 0)
#define DIM(v, i) ((int64_t)(v)->shape[i])
/* One array in an entry point whose failures go to its fail: label (module_keys.h's). */
#define GET(var, obj, kind, size, w, nd)                       \
    Py_buffer *var = get(&bs, obj, kind, size, w, nd, #obj); \
    if (!var) goto fail
/* In an entry point: raise exc with the message, the buffers released. */
#define FAIL(exc, ...)                  \
    do {                                \
        PyErr_Format(exc, __VA_ARGS__); \
        return failed(&bs);             \
    } while (0)

/* One array argument for get_arrays: the object, the name its errors give, where its view
 * goes and what get() checks. ARR(var, obj, kind, size, writable, ndim) writes one. */
typedef struct {
    PyObject *obj;
    const char *name;
    Py_buffer **view;
    char kind;
    Py_ssize_t size;
    int writable, ndim;
} arr;

#define ARR(var, obj, kind, size, w, nd) {obj, #obj, &var, kind, size, w, nd}
/* A list of ARR()s as get_arrays takes them: the list and its length. */
#define ARRAYS(...) \
    (const arr[]){__VA_ARGS__}, (int)(sizeof((const arr[]){__VA_ARGS__}) / sizeof(arr))

/* Every array argument of a call, in order: 0, or -1 with the first bad one's error set. */
static int get_arrays(bufs *bs, const arr *a, int n) {
    for (int i = 0; i < n; i++) {
        *a[i].view = get(bs, a[i].obj, a[i].kind, a[i].size, a[i].writable, a[i].ndim, a[i].name);
        if (!*a[i].view) return -1;
    }
    return 0;
}

/* get_arrays in an entry point: each Py_buffer *var (the caller's) set, or return the error. */
#define GETS(...)                                                         \
    do {                                                                  \
        if (get_arrays(&bs, ARRAYS(__VA_ARGS__)) < 0) return failed(&bs); \
    } while (0)
/* The prologue of the entry points that take (keys, a number, out): keys a uint64 array, out
 * a writable array of `size`-byte unsigned ints that errors call `out_name`. 0, or -1 with
 * the error set (what it got held in bs). */
static int keys_num_out(bufs *bs, PyObject *args, Py_buffer **k, Py_ssize_t *num, Py_buffer **o,
                        Py_ssize_t size, const char *out_name) {
    PyObject *keys, *out;
    if (!PyArg_ParseTuple(args, "OnO", &keys, num, &out)) return -1;
    return get_arrays(bs, ARRAYS(ARR(*k, keys, 'u', 8, 0, 1), {out, out_name, o, 'u', size, 1, 1}));
}

/* The kernel call with the GIL released (a statement; the buffers stay held). */
#define NOGIL(...)                \
    do {                          \
        Py_BEGIN_ALLOW_THREADS;   \
        __VA_ARGS__;              \
        Py_END_ALLOW_THREADS;     \
    } while (0)

/* The endings every entry point shares: the buffers are released on each path, and a
 * negative rc (a kernel whose allocation failed) is a MemoryError. */
static PyObject *failed(bufs *bs) {
    release(bs);
    return NULL;
}

static PyObject *done_none(bufs *bs, int64_t rc) {
    release(bs);
    if (rc < 0) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *done_long(bufs *bs, int64_t v) {
    release(bs);
    return PyLong_FromLongLong((long long)v);
}

static PyObject *done_two(bufs *bs, int64_t rc, int64_t a, int64_t b) {
    release(bs);
    if (rc < 0) return PyErr_NoMemory();
    return Py_BuildValue("LL", (long long)a, (long long)b);
}

/* "O&" converter: any integer (numpy scalars too) to uint64, modulo 2**64. */
static int to_u64(PyObject *o, void *out) {
    PyObject *i = PyNumber_Index(o);
    if (!i) return 0;
    unsigned long long v = PyLong_AsUnsignedLongLongMask(i);
    Py_DECREF(i);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) return 0;
    *(uint64_t *)out = v;
    return 1;
}

static PyObject *py_xxh3_64(PyObject *self, PyObject *args) {
    PyObject *data;
    Py_buffer *v;
    Py_ssize_t start, n;
    uint64_t seed = 0;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "Onn|O&", &data, &start, &n, to_u64, &seed)) return NULL;
    GETS(ARR(v, data, 'b', 1, 0, 1));
    if (start < 0 || n < 0 || start + n > LEN(v)) FAIL(PyExc_IndexError, "range out of bounds");
    uint64_t h = nd_xxh3_64((const uint8_t *)v->buf + start, (size_t)n, seed);
    release(&bs);
    return PyLong_FromUnsignedLongLong(h);
}

static PyObject *py_mix64(PyObject *self, PyObject *arg) {
    uint64_t x;
    if (!to_u64(arg, &x)) return NULL;
    return PyLong_FromUnsignedLongLong(nd_mix64(x));
}

static int check_text(Py_buffer *buf, Py_buffer *cls, int64_t lo, int64_t hi) {
    if (LEN(cls) < 0x110000) {
        PyErr_SetString(PyExc_ValueError, "cls must be the 0x110000-entry class table");
        return -1;
    }
    if (lo < 0 || hi < lo || hi > LEN(buf)) {
        PyErr_SetString(PyExc_IndexError, "text range out of bounds");
        return -1;
    }
    return 0;
}

static PyObject *py_token_spans(PyObject *self, PyObject *args) {
    PyObject *buf, *cls, *starts, *ends;
    Py_buffer *b, *c, *s, *e;
    Py_ssize_t lo, hi;
    int han_single;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OnnOpOO", &buf, &lo, &hi, &cls, &han_single, &starts, &ends))
        return NULL;
    GETS(ARR(b, buf, 'u', 1, 0, 1), ARR(c, cls, 'u', 1, 0, 1), ARR(s, starts, 'i', 8, 1, 1),
         ARR(e, ends, 'i', 8, 1, 1));
    if (check_text(b, c, lo, hi) < 0) return failed(&bs);
    if (LEN(s) < hi - lo + 1 || LEN(e) < hi - lo + 1) FAIL(PyExc_ValueError, "starts/ends too small");
    int64_t n = nd_token_spans(b->buf, lo, hi, c->buf, han_single, s->buf, e->buf);
    return done_long(&bs, n);
}

static PyObject *py_is_cjk(PyObject *self, PyObject *args) {
    PyObject *buf, *cls;
    Py_buffer *b, *c;
    Py_ssize_t lo, hi;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OnnO", &buf, &lo, &hi, &cls)) return NULL;
    GETS(ARR(b, buf, 'u', 1, 0, 1), ARR(c, cls, 'u', 1, 0, 1));
    if (check_text(b, c, lo, hi) < 0) return failed(&bs);
    int r = nd_is_cjk(b->buf, lo, hi, c->buf);
    release(&bs);
    return PyBool_FromLong(r);
}

static PyObject *py_char_stream(PyObject *self, PyObject *args) {
    PyObject *buf, *cls, *out, *cps;
    Py_buffer *b, *c, *o, *p;
    Py_ssize_t lo, hi;
    int joined = 0;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OnnOOO|p", &buf, &lo, &hi, &cls, &out, &cps, &joined)) return NULL;
    GETS(ARR(b, buf, 'u', 1, 0, 1), ARR(c, cls, 'u', 1, 0, 1), ARR(o, out, 'u', 1, 1, 1),
         ARR(p, cps, 'i', 8, 1, 1));
    if (check_text(b, c, lo, hi) < 0) return failed(&bs);
    if (LEN(o) < hi - lo || LEN(p) < hi - lo + 1) FAIL(PyExc_ValueError, "out/cp_starts too small");
    int64_t nb, ncp;
    nd_char_stream(b->buf, lo, hi, c->buf, o->buf, p->buf, joined, &nb, &ncp);
    return done_two(&bs, 0, nb, ncp);
}

static PyObject *py_feature_keys(PyObject *self, PyObject *args) {
    PyObject *buf, *cls, *stop, *scratch, *starts, *ends, *keys;
    Py_buffer *b, *c, *st, *sc, *s, *e, *k;
    Py_ssize_t lo, hi, n, n_cjk = 5;
    int mode, han_single;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OnnOinpOOOOO|n", &buf, &lo, &hi, &cls, &mode, &n, &han_single,
                          &stop, &scratch, &starts, &ends, &keys, &n_cjk))
        return NULL;
    GETS(ARR(b, buf, 'u', 1, 0, 1), ARR(c, cls, 'u', 1, 0, 1), ARR(st, stop, 'u', 8, 0, 1),
         ARR(sc, scratch, 'u', 1, 1, 1), ARR(s, starts, 'i', 8, 1, 1), ARR(e, ends, 'i', 8, 1, 1),
         ARR(k, keys, 'u', 8, 1, 1));
    if (check_text(b, c, lo, hi) < 0) return failed(&bs);
    int64_t m = hi - lo;
    if (LEN(sc) < 2 * m + 8 || LEN(s) < m + 1 || LEN(e) < m + 1 || LEN(k) < m + 1)
        FAIL(PyExc_ValueError, "scratch must hold 2*len+8 bytes, starts/ends/keys len+1");
    int64_t r = nd_feature_keys(b->buf, lo, hi, c->buf, mode, n, han_single, st->buf, LEN(st),
                                sc->buf, s->buf, e->buf, k->buf, n_cjk);
    return done_long(&bs, r);
}

static PyObject *py_simhash_words(PyObject *self, PyObject *args) {
    PyObject *keys, *weights, *out;
    Py_buffer *k, *w, *o;
    int unit;
    uint64_t seed;
    Py_ssize_t words;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOpO&nO", &keys, &weights, &unit, to_u64, &seed, &words, &out)) return NULL;
    GETS(ARR(k, keys, 'u', 8, 0, 1), ARR(w, weights, 'f', 8, 0, 1), ARR(o, out, 'u', 8, 1, 1));
    if (LEN(o) < words || (!unit && LEN(w) < LEN(k))) FAIL(PyExc_ValueError, "out or weights too small");
    nd_simhash_words(k->buf, w->buf, LEN(k), unit, seed, words, o->buf);
    return done_none(&bs, 0);
}

static int check_offsets(Py_buffer *off, int64_t nbuf) {
    const int64_t *o = off->buf;
    int64_t n = LEN(off);
    if (n < 1 || o[0] < 0 || o[n - 1] > nbuf) goto bad;
    for (int64_t i = 1; i < n; i++)
        if (o[i] < o[i - 1]) goto bad;
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "offsets must be non-decreasing within the buffer");
    return -1;
}

/* A batch of texts: buf (uint8), offsets (int64, ndoc + 1, within buf), cls (the class
 * table) and, unless modes is NULL, one int8 mode per text; returns ndoc, or -1. */
typedef struct {
    Py_buffer *b, *of, *md, *c;
} texts;

static int64_t get_texts(bufs *bs, PyObject *buf, PyObject *offsets, PyObject *modes, PyObject *cls,
                         texts *t) {
    if (!(t->b = get(bs, buf, 'u', 1, 0, 1, "buf"))) return -1;
    if (!(t->of = get(bs, offsets, 'i', 8, 0, 1, "offsets"))) return -1;
    t->md = NULL;
    if (modes && !(t->md = get(bs, modes, 'i', 1, 0, 1, "modes"))) return -1;
    if (!(t->c = get(bs, cls, 'u', 1, 0, 1, "cls"))) return -1;
    if (check_text(t->b, t->c, 0, 0) < 0 || check_offsets(t->of, LEN(t->b)) < 0) return -1;
    int64_t ndoc = LEN(t->of) - 1;
    if (t->md && LEN(t->md) < ndoc) {
        PyErr_SetString(PyExc_ValueError, "modes too small");
        return -1;
    }
    return ndoc;
}

/* The stop-word and IDF arrays of a fingerprint configuration, checked, into fc
 * (fingerprint_batch and prepare_batch both take them); 0, or -1 with the error set. */
static int get_fp_tables(bufs *bs, PyObject *stop, PyObject *idf_keys, PyObject *idf_vals,
                         nd_fp_conf *fc) {
    Py_buffer *st, *ik, *iv;
    if (get_arrays(bs, ARRAYS(ARR(st, stop, 'u', 8, 0, 1), ARR(ik, idf_keys, 'u', 8, 0, 1),
                              ARR(iv, idf_vals, 'f', 8, 0, 1))) < 0)
        return -1;
    if (LEN(iv) < LEN(ik)) {
        PyErr_SetString(PyExc_ValueError, "idf_vals shorter than idf_keys");
        return -1;
    }
    fc->stop_keys = st->buf;
    fc->nstop = LEN(st);
    fc->idf_keys = ik->buf;
    fc->idf_vals = iv->buf;
    fc->nidf = LEN(ik);
    return 0;
}

static PyObject *py_fingerprint_batch(PyObject *self, PyObject *args) {
    PyObject *buf, *offsets, *cls, *stop, *idf_keys, *idf_vals, *out, *empty;
    Py_buffer *o, *em;
    int mode, han_single, weighting;
    Py_ssize_t n, top_n, n_cjk = 5;
    double idf_default;
    uint64_t seed;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOinpOinOOdO&OO|n", &buf, &offsets, &cls, &mode, &n, &han_single,
                          &stop, &weighting, &top_n, &idf_keys, &idf_vals, &idf_default, to_u64, &seed,
                          &out, &empty, &n_cjk))
        return NULL;
    texts tx;
    int64_t ndoc = get_texts(&bs, buf, offsets, NULL, cls, &tx);
    if (ndoc < 0) return failed(&bs);
    nd_fp_conf fc;
    if (get_fp_tables(&bs, stop, idf_keys, idf_vals, &fc) < 0) return failed(&bs);
    GETS(ARR(o, out, 'u', 8, 1, 2), ARR(em, empty, 'b', 1, 1, 1));
    if (DIM(o, 0) != ndoc || LEN(em) != ndoc) FAIL(PyExc_ValueError, "out/empty need one row per document");
    int rc;
    NOGIL(rc = nd_fingerprint_batch(tx.b->buf, tx.of->buf, ndoc, tx.c->buf, mode, n, han_single,
                                    fc.stop_keys, fc.nstop, weighting, top_n, fc.idf_keys,
                                    fc.idf_vals, fc.nidf, idf_default, seed, o->buf, DIM(o, 1),
                                    em->buf, n_cjk));
    return done_none(&bs, rc);
}

/* prepare_batch(buf, offsets, cls, <fingerprint_batch's configuration: mode .. seed>, n_cjk,
 * fps, empty, sk_mode, ngrams, sk_seed, salts, mins, segment): fingerprint_batch and the
 * verifier's sketch (one block of len(salts) minima per entry of ngrams) with one tokenizer
 * pass; segment[d] = 1 where the fingerprint needs Han words (the caller's to redo). */
static PyObject *py_prepare_batch(PyObject *self, PyObject *args) {
    PyObject *buf, *offsets, *cls, *stop, *idf_keys, *idf_vals, *fps, *empty, *ngrams, *salts, *mins,
        *segment;
    Py_buffer *o, *em, *ng, *sa, *mn, *sg;
    nd_fp_conf fc;
    nd_sk_conf sc;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOinpOinOOdO&nOOiOO&OOO", &buf, &offsets, &cls, &fc.mode, &fc.n,
                          &fc.han_single, &stop, &fc.weighting, &fc.top_n, &idf_keys, &idf_vals,
                          &fc.idf_default, to_u64, &fc.seed, &fc.n_cjk, &fps, &empty, &sc.mode,
                          &ngrams, to_u64, &sc.seed, &salts, &mins, &segment))
        return NULL;
    texts tx;
    int64_t ndoc = get_texts(&bs, buf, offsets, NULL, cls, &tx);
    if (ndoc < 0) return failed(&bs);
    if (get_fp_tables(&bs, stop, idf_keys, idf_vals, &fc) < 0) return failed(&bs);
    GETS(ARR(o, fps, 'u', 8, 1, 2), ARR(em, empty, 'b', 1, 1, 1), ARR(ng, ngrams, 'i', 8, 0, 1),
         ARR(sa, salts, 'u', 8, 0, 1), ARR(mn, mins, 'u', 8, 1, 2), ARR(sg, segment, 'b', 1, 1, 1));
    if (DIM(o, 0) != ndoc || LEN(em) != ndoc || LEN(sg) != ndoc)
        FAIL(PyExc_ValueError, "fps/empty/segment need one row per document");
    if (DIM(mn, 0) != ndoc || DIM(mn, 1) != LEN(sa) * LEN(ng))
        FAIL(PyExc_ValueError, "mins must be (docs, len(salts) * len(ngrams))");
    for (int64_t j = 0; j < LEN(ng); j++)
        if (((const int64_t *)ng->buf)[j] < 1) FAIL(PyExc_ValueError, "ngrams must be >= 1");
    fc.words = DIM(o, 1);
    sc.ngrams = ng->buf;
    sc.nng = LEN(ng);
    sc.salts = sa->buf;
    sc.k = LEN(sa);
    int rc;
    NOGIL(rc = nd_prepare_batch(tx.b->buf, tx.of->buf, ndoc, tx.c->buf, &fc, o->buf, em->buf, &sc,
                                mn->buf, sg->buf));
    return done_none(&bs, rc);
}

/* collapse_spaces(buf, offsets, out, out_off): " ".join(t.split()) per document, in bytes. */
static PyObject *py_collapse_spaces(PyObject *self, PyObject *args) {
    PyObject *buf, *offsets, *out, *out_off;
    Py_buffer *b, *of, *o, *oo;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOO", &buf, &offsets, &out, &out_off)) return NULL;
    GETS(ARR(b, buf, 'u', 1, 0, 1), ARR(of, offsets, 'i', 8, 0, 1), ARR(o, out, 'u', 1, 1, 1),
         ARR(oo, out_off, 'i', 8, 1, 1));
    if (check_offsets(of, LEN(b)) < 0) return failed(&bs);
    if (LEN(o) < LEN(b) || LEN(oo) != LEN(of)) FAIL(PyExc_ValueError, "out or out_off too small");
    NOGIL(nd_collapse_spaces(b->buf, of->buf, LEN(of) - 1, o->buf, oo->buf));
    return done_none(&bs, 0);
}

#include "module_sketch.h"
#include "module_index.h"
#include "module_keys.h"
#include "module_prepare.h"

static PyMethodDef methods[] = {
    {"xxh3_64", py_xxh3_64, METH_VARARGS, "XXH3-64 of data[start:start+n] with a seed."},
    {"mix64", py_mix64, METH_O, "splitmix64 finaliser."},
    {"token_spans", py_token_spans, METH_VARARGS, "Byte spans of the tokens."},
    {"is_cjk", py_is_cjk, METH_VARARGS, "Whether a text is mostly CJK."},
    {"char_stream", py_char_stream, METH_VARARGS, "Text with separator runs collapsed."},
    {"feature_keys", py_feature_keys, METH_VARARGS, "Feature keys of one text."},
    {"simhash_words", py_simhash_words, METH_VARARGS, "SimHash of weighted keys."},
    {"fingerprint_batch", py_fingerprint_batch, METH_VARARGS, "Fingerprints of many texts."},
    {"prepare_batch", py_prepare_batch, METH_VARARGS, "Fingerprints and sketches, one pass."},
    {"collapse_spaces", py_collapse_spaces, METH_VARARGS, "Whitespace runs to one space."},
    SKETCH_METHODS INDEX_METHODS KEY_METHODS PREPARE_METHODS{NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_native",
                                       "neardup's compiled kernels (see neardup/_native/).", -1,
                                       methods};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&moduledef); }
