/* neardup._overlap: thin CPython bindings over the plain C kernels of neardup.overlap
 * (overlap_kernels.h: tokens, the per-pair step, the gram index).
 *
 * Arguments are checked here, with the GIL held, so a wrong buffer gives a TypeError or
 * ValueError naming the argument; the kernels then run without the GIL where they touch no
 * Python object. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "overlap_kernels.h"

/* A Python object owning one C object: its struct (the pointer in `field`, and `mu`, the lock
 * its methods hold while they run without the GIL), tp_new (a failed `make` is a MemoryError)
 * and tp_dealloc (`release`), written once for every such type. */
#define OWNING_OBJECT(Obj, ctype, field, make, release)                                    \
    typedef struct {                                                                     \
        PyObject_HEAD ctype *field;                                                      \
        PyThread_type_lock mu;                                                           \
    } Obj;                                                                               \
    static PyObject *Obj##_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {     \
        Obj *self = (Obj *)PyType_GenericNew(type, args, kwds);                          \
        if (self && (!(self->mu = PyThread_allocate_lock()) || !(self->field = make()))) { \
            Py_DECREF(self);                                                             \
            return PyErr_NoMemory();                                                     \
        }                                                                                \
        return (PyObject *)self;                                                         \
    }                                                                                    \
    static void Obj##_dealloc(Obj *self) {                                               \
        if (self->field) release(self->field);                                           \
        if (self->mu) PyThread_free_lock(self->mu);                                      \
        Py_TYPE(self)->tp_free((PyObject *)self);                                        \
    }

/* Run `stmt` on an OWNING_OBJECT's C object without the GIL, holding the object's own lock:
 * the other thread (the finder's worker) runs Python meanwhile, and two threads sharing the
 * object still change it one at a time, as the GIL made them. The lock is taken without the
 * GIL, so a thread holding it never waits for one that holds the GIL. */
#define UNLOCKED(self, stmt)                                                                 \
    do {                                                                                 \
        Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock((self)->mu, WAIT_LOCK);             \
        stmt;                                                                            \
        PyThread_release_lock((self)->mu);                                               \
        Py_END_ALLOW_THREADS                                                             \
    } while (0)

/* Take an OWNING_OBJECT's lock (waiting without the GIL) to read the object with the GIL: its
 * arrays or size, which a thread in UNLOCKED would be changing. */
#define LOCK(self)                                                                           \
    do {                                                                                 \
        Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock((self)->mu, WAIT_LOCK);             \
        Py_END_ALLOW_THREADS                                                             \
    } while (0)
#define UNLOCK(self) PyThread_release_lock((self)->mu)

/* The PyTypeObject fields of an OWNING_OBJECT type (its name, doc and methods). */
#define OWNING_TYPE(Obj, name, doc, methods)                                                 \
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = name, .tp_basicsize = sizeof(Obj),          \
    .tp_dealloc = (destructor)Obj##_dealloc, .tp_flags = Py_TPFLAGS_DEFAULT, .tp_doc = doc, \
    .tp_methods = methods, .tp_new = Obj##_new


/* ---------------------------------------------------------------- buffers */

typedef struct {
    Py_buffer b[8];
    int n;
} bufs;

static void release(bufs *bs) {
    for (int i = 0; i < bs->n; i++) PyBuffer_Release(&bs->b[i]);
    bs->n = 0;
}

static void *get(bufs *bs, PyObject *o, Py_ssize_t itemsize, Py_ssize_t min_len, int writable,
                 const char *name, Py_ssize_t *len) {
    Py_buffer *v = &bs->b[bs->n];
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s buffer", name,
                     writable ? " writable" : "");
        return NULL;
    }
    bs->n++;
    if (v->len % itemsize || v->len / itemsize < min_len) {
        PyErr_Format(PyExc_ValueError, "%s: expected at least %zd items of %zd bytes", name,
                     min_len, itemsize);
        return NULL;
    }
    if (len) *len = v->len / itemsize;
    return v->buf;
}

/* ---------------------------------------------------------------- tokens and grams */

static PyObject *py_prepare(PyObject *self, PyObject *args) {
    PyObject *text, *cls_o, *fold_o;
    Py_ssize_t word_units, cjk_units, coarse, fine;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "UOOnnnn", &text, &cls_o, &fold_o, &word_units, &cjk_units,
                          &coarse, &fine))
        return NULL;
    const uint8_t *cls = get(&bs, cls_o, 1, 0x110000, 0, "cls", NULL);
    if (!cls) goto fail;
    const uint32_t *fold = get(&bs, fold_o, 4, 0x110000, 0, "fold", NULL);
    if (!fold) goto fail;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    int64_t len = PyUnicode_GET_LENGTH(text), counts[3], n;
    int64_t *mem = malloc(sizeof(int64_t) * OV_PREPARE_SCRATCH(len));
    if (!mem) {
        PyErr_NoMemory();
        goto fail;
    }
    /* without the GIL (a 10^6-character text is tens of ms that other threads of a server
     * would wait): only the text's own immutable buffer (args hold it), the held tables and
     * this scratch are read or written */
    Py_BEGIN_ALLOW_THREADS
    n = ov_prepare(kind, data, len, cls, fold, word_units, cjk_units, coarse, fine, mem, counts);
    Py_END_ALLOW_THREADS
    if (n < 0) {
        free(mem);
        release(&bs);
        return PyLong_FromLongLong(-n - 1);  /* the code point whose fold is needed */
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(ov_packed_items(counts) * 8));
    if (!out) {
        free(mem);
        goto fail;
    }
    ov_pack(mem, len, counts, (int64_t *)PyBytes_AS_STRING(out));
    free(mem);
    release(&bs);
    return out;
fail:
    release(&bs);
    return NULL;
}


/* The packed documents out[0..n) (malloc'd int64 buffers of items[i] items) as a list of
 * bytes, each buffer freed; NULL with an exception set. */
static PyObject *packed_list(int64_t **out, const int64_t *items, Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b = list ? PyBytes_FromStringAndSize((const char *)out[i], 8 * items[i]) : NULL;
        if (!b) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, b);
        free(out[i]);
        out[i] = NULL;
    }
    return list;
}

/* prepare_many(texts, cls, fold, word_units, cjk_units, coarse, fine) -> (packed, stop):
 * [prepare(t, ...) for t in texts[:stop]], all of them in one pass without the GIL (the
 * finder's front thread: the main thread's Python runs meanwhile, and a call a text would wait
 * for the GIL after each); stop < len(texts) when texts[stop] holds a code point whose fold is
 * missing (the caller fills it in, as after prepare, and goes on from there). */
static PyObject *py_prepare_many(PyObject *self, PyObject *args) {
    PyObject *texts_o, *cls_o, *fold_o, *result = NULL;
    Py_ssize_t word_units, cjk_units, coarse, fine;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOnnnn", &texts_o, &cls_o, &fold_o, &word_units, &cjk_units,
                          &coarse, &fine))
        return NULL;
    PyObject *texts = PySequence_Tuple(texts_o);
    if (!texts) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(texts), stop = n, most = 0;
    int64_t **out = calloc((size_t)n + 1, sizeof(int64_t *));
    int64_t *items = calloc((size_t)n + 1, sizeof(int64_t)), *mem = NULL;
    const uint8_t *cls = get(&bs, cls_o, 1, 0x110000, 0, "cls", NULL);
    const uint32_t *fold = cls ? get(&bs, fold_o, 4, 0x110000, 0, "fold", NULL) : NULL;
    if (!fold) goto done;
    if (!out || !items) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyTuple_GET_ITEM(texts, i);
        if (!PyUnicode_Check(t)) {
            PyErr_Format(PyExc_TypeError, "texts[%zd] must be a str", i);
            goto done;
        }
        if (PyUnicode_GET_LENGTH(t) > most) most = PyUnicode_GET_LENGTH(t);
    }
    if (!(mem = malloc(sizeof(int64_t) * OV_PREPARE_SCRATCH(most)))) {
        PyErr_NoMemory();
        goto done;
    }
    int nomem = 0;
    /* only the texts' immutable buffers (the tuple holds them), the held tables, the scratch
     * and out are read or written */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && stop == n; i++) {
        PyObject *t = PyTuple_GET_ITEM(texts, i);
        int64_t len = PyUnicode_GET_LENGTH(t), counts[3];
        if (ov_prepare(PyUnicode_KIND(t), PyUnicode_DATA(t), len, cls, fold, word_units,
                       cjk_units, coarse, fine, mem, counts) < 0) {
            stop = i;
            break;
        }
        items[i] = ov_packed_items(counts);
        if (!(out[i] = malloc(sizeof(int64_t) * (size_t)items[i]))) nomem = 1, stop = i;
        else ov_pack(mem, len, counts, out[i]);
    }
    Py_END_ALLOW_THREADS
    if (nomem) PyErr_NoMemory();
    PyObject *list = packed_list(out, items, stop);
    if (list && !nomem) result = Py_BuildValue("(Nn)", list, stop);
    else Py_XDECREF(list);
done:
    for (Py_ssize_t i = 0; out && i < n; i++) free(out[i]);
    free(out);
    free(items);
    free(mem);
    release(&bs);
    Py_DECREF(texts);
    return result;
}

/* One text of template_keys, checked and held with the GIL: its str (a reference taken) and
 * its tokens' buffers. */
typedef struct {
    PyObject *text;
    bufs bs;
    const int64_t *st, *en;
    const uint64_t *th;
    Py_ssize_t n;
} tk_text;

/* Check and hold text k of template_keys (a str and its (starts, ends, units, hashes) tuple);
 * -1 with an exception set. */
static int tk_load(tk_text *T, PyObject *text, PyObject *t) {
    Py_ssize_t ne, nh;
    if (!PyUnicode_Check(text) || !PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 4) {
        PyErr_SetString(PyExc_TypeError, "texts must be str, tokens (starts, ends, units, "
                                         "hashes) tuples");
        return -1;
    }
    T->text = Py_NewRef(text);
    T->st = get(&T->bs, PyTuple_GET_ITEM(t, 0), 8, 0, 0, "starts", &T->n);
    T->en = T->st ? get(&T->bs, PyTuple_GET_ITEM(t, 1), 8, 0, 0, "ends", &ne) : NULL;
    T->th = T->en ? get(&T->bs, PyTuple_GET_ITEM(t, 3), 8, 0, 0, "hashes", &nh) : NULL;
    if (!T->th) return -1;
    if (ne != T->n || nh != T->n) {
        PyErr_SetString(PyExc_ValueError, "tokens: arrays of one size, digit one item each");
        return -1;
    }
    return 0;
}

/* template_keys(texts, tokens, ngram, mask, sample, digit, first, last, hashes) -> count:
 * templates.TemplateBatch's keys (ov_template_keys) of each text in turn, its tokens a
 * (starts, ends, units, hashes) tuple of tokens; token and gram indices run over the whole
 * batch; digit (bool) holds one item a token of the batch, first, last (int64) and hashes
 * (uint64) as many (keys are at most one a token). The texts are checked and held with the
 * GIL, then the batch's pass runs without it (the finder's worker: the main thread's Python
 * runs meanwhile). */
static PyObject *py_template_keys(PyObject *self, PyObject *args) {
    PyObject *texts, *toks, *dg_o, *f_o, *l_o, *h_o, *result = NULL;
    Py_ssize_t ngram, cap, total = 0, m = 0, nt = 0, k = 0, bad = -1;
    unsigned long long mask, sample;
    bufs out = {.n = 0};
    uint64_t *masked = NULL;
    tk_text *T = NULL;
    if (!PyArg_ParseTuple(args, "O!O!nKKOOOO", &PyList_Type, &texts, &PyList_Type, &toks, &ngram,
                          &mask, &sample, &dg_o, &f_o, &l_o, &h_o))
        return NULL;
    uint8_t *digit = get(&out, dg_o, 1, 0, 1, "digit", &cap);
    int64_t *first = digit ? get(&out, f_o, 8, cap, 1, "first", NULL) : NULL;
    int64_t *last = first ? get(&out, l_o, 8, cap, 1, "last", NULL) : NULL;
    uint64_t *gh = last ? get(&out, h_o, 8, cap, 1, "hashes", NULL) : NULL;
    if (!gh) goto done;
    nt = PyList_GET_SIZE(texts);
    if (nt != PyList_GET_SIZE(toks) || ngram < 1 || sample < 1) {
        PyErr_SetString(PyExc_ValueError, "one tokens tuple a text, ngram and sample >= 1");
        goto done;
    }
    masked = malloc(sizeof(uint64_t) * (size_t)(cap + 1));
    T = calloc((size_t)nt + 1, sizeof(tk_text));
    if (!masked || !T) {
        PyErr_NoMemory();
        goto done;
    }
    for (; k < nt; k++) {
        if (tk_load(&T[k], PyList_GET_ITEM(texts, k), PyList_GET_ITEM(toks, k)) < 0) goto done;
        if (total + T[k].n > cap) {
            PyErr_SetString(PyExc_ValueError, "tokens: arrays of one size, digit one item each");
            goto done;
        }
        total += T[k].n;
    }
    total = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < nt && bad < 0; i++) {
        PyObject *text = T[i].text;
        int64_t got = ov_template_keys(PyUnicode_KIND(text), PyUnicode_DATA(text),
                                       PyUnicode_GET_LENGTH(text), T[i].st, T[i].en, T[i].th,
                                       T[i].n, ngram, mask, sample, total, digit + total, masked,
                                       first + m, last + m, gh + m);
        if (got < 0) bad = i;
        total += T[i].n, m += got;
    }
    Py_END_ALLOW_THREADS
    if (bad >= 0)
        PyErr_Format(PyExc_ValueError, "tokens of text %zd lie outside it", bad);
    else
        result = PyLong_FromSsize_t(m);
done:
    for (Py_ssize_t i = 0; T && i <= k && i < nt; i++) {
        release(&T[i].bs);
        Py_XDECREF(T[i].text);
    }
    free(T);
    free(masked);
    release(&out);
    return result;
}

/* winnow(hashes: uint64, window, out: int64) -> count: the rightmost minimum of every window
 * of `window` hashes, each index once, ascending (as tokens.winnow). */
static PyObject *py_winnow(PyObject *self, PyObject *args) {
    PyObject *h_o, *out_o;
    Py_ssize_t window, n, cap;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OnO", &h_o, &window, &out_o)) return NULL;
    const uint64_t *h = get(&bs, h_o, 8, 0, 0, "hashes", &n);
    if (!h) goto fail;
    int64_t *out = get(&bs, out_o, 8, 0, 1, "out", &cap);
    if (!out) goto fail;
    if (cap < n) {
        PyErr_SetString(PyExc_ValueError, "out must hold len(hashes) items");
        goto fail;
    }
    int64_t m = ov_winnow(h, n, window, out);
    release(&bs);
    return PyLong_FromLongLong(m);
fail:
    release(&bs);
    return NULL;
}

/* ---------------------------------------------------------------- the per-pair step */

/* The scratch kept between calls (its pages stay mapped), or a fresh one when another call
 * holds it (calls run without the GIL); taken and given back with the GIL held. NULL: no
 * memory. */
static ov_ctx *kept_ctx;
static int kept_busy;

static ov_ctx *take_ctx(void) {
    if (!kept_busy && (kept_ctx || (kept_ctx = ov_ctx_new()))) {
        kept_busy = 1;
        return kept_ctx;
    }
    return ov_ctx_new();
}

static void give_ctx(ov_ctx *c) {
    if (c == kept_ctx)
        kept_busy = 0;
    else
        ov_ctx_free(c);
}


/* The passages as a list of (source index, span start, span end, source start, source end,
 * num, den) tuples, spans in code points (ds: the sources). */
static PyObject *found_list(const doc_t *q, const doc_t *ds, const found_vec *fv) {
    PyObject *result = PyList_New((Py_ssize_t)fv->n);
    if (!result) return NULL;
    for (int64_t i = 0; i < fv->n; i++) {
        const found_t *f = &fv->v[i];
        const doc_t *d = &ds[f->pair];
        PyObject *t = Py_BuildValue("(LLLLLLL)", (long long)f->pair, (long long)q->starts[f->q0],
                                    (long long)q->ends[f->q1 - 1], (long long)d->starts[f->d0],
                                    (long long)d->ends[f->d1 - 1], (long long)f->num,
                                    (long long)f->den);
        if (!t) {
            Py_DECREF(result);
            return NULL;
        }
        PyList_SET_ITEM(result, i, t);
    }
    return result;
}

/* One query and its sources, checked and unpacked with the GIL held, then run without it:
 * srcs (a tuple, owned) keeps the sources' bytes alive, the buffers the seeds and bounds. */
typedef struct {
    PyObject *q_o, *srcs;
    bufs bs;
    doc_t q, *ds;
    int64_t m, ns;
    const int64_t *seeds, *bounds;
    found_vec fv;
    int rc;
} job_t;

static void job_free(job_t *J) {
    release(&J->bs);
    Py_CLEAR(J->srcs);
    free(J->ds), free(J->fv.v);
    J->ds = NULL, J->fv.v = NULL;
}

/* Check and unpack (query, sources, seeds, bounds); -1 with an exception set. */
static int job_load(job_t *J, PyObject *q_o, PyObject *srcs, PyObject *seeds_o,
                    PyObject *bounds_o) {
    Py_ssize_t qlen, ns, nbnd;
    const int64_t *qp = get(&J->bs, q_o, 8, 3, 0, "query", &qlen);
    if (!qp) return -1;
    J->seeds = get(&J->bs, seeds_o, 8, 0, 0, "seeds", &ns);
    if (!J->seeds) return -1;
    J->bounds = get(&J->bs, bounds_o, 8, 1, 0, "bounds", &nbnd);
    if (!J->bounds) return -1;
    if (ov_unpack(qp, qlen, &J->q) < 0) {
        PyErr_SetString(PyExc_ValueError, "query is not a packed document");
        return -1;
    }
    J->srcs = PySequence_Tuple(srcs);
    if (!J->srcs) return -1;
    Py_ssize_t m = PyTuple_GET_SIZE(J->srcs);
    const int64_t *bounds = J->bounds;
    if (nbnd != m + 1 || ns % 4 || bounds[0] != 0 || bounds[m] != ns / 4) {
        PyErr_SetString(PyExc_ValueError, "bounds must be len(sources) + 1 offsets into seeds");
        return -1;
    }
    J->m = m, J->ns = ns;
    J->ds = malloc(sizeof(doc_t) * (size_t)(m + 1));
    if (!J->ds) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *so = PyTuple_GET_ITEM(J->srcs, j);
        if (!PyBytes_Check(so)) {
            PyErr_SetString(PyExc_TypeError, "sources must be packed documents (bytes)");
            return -1;
        }
        Py_ssize_t sl = PyBytes_GET_SIZE(so);
        if (sl % 8 || ov_unpack((const int64_t *)PyBytes_AS_STRING(so), sl / 8, &J->ds[j]) < 0) {
            PyErr_SetString(PyExc_ValueError, "source is not a packed document");
            return -1;
        }
        if (bounds[j] > bounds[j + 1] || bounds[j + 1] > ns / 4) {
            PyErr_SetString(PyExc_ValueError, "bounds must be ascending");
            return -1;
        }
    }
    return 0;
}

/* The passages of a loaded job (no Python objects touched: runs without the GIL). */
static void job_run(ov_ctx *c, job_t *J, const params_t *p) {
    J->rc = c ? ov_query(c, &J->q, J->ds, J->m, J->seeds, J->bounds, p, &J->fv) : -1;
}

/* The job's passages as found_list, or NULL with the exception of its failure. */
static PyObject *job_result(job_t *J) {
    if (J->rc == -2) {
        PyErr_SetString(PyExc_IndexError, "a seed lies outside its documents");
        return NULL;
    }
    if (J->rc) return PyErr_NoMemory();
    return found_list(&J->q, J->ds, &J->fv);
}

/* pairs(query, sources, seeds, bounds, near, gap, min_units, reach, fanout) -> list of
 * (source index, span start, span end, source start, source end, num, den): the passages of
 * the packed query in each packed source; source j's seeds are rows bounds[j]:bounds[j+1]. */
static PyObject *py_pairs(PyObject *self, PyObject *args) {
    PyObject *q_o, *srcs, *seeds_o, *bounds_o, *result = NULL;
    params_t p;
    job_t J = {.bs = {.n = 0}};
    if (!PyArg_ParseTuple(args, "OO!OOnnnnn", &q_o, &PyList_Type, &srcs, &seeds_o, &bounds_o,
                          &p.near, &p.gap, &p.min_units, &p.reach, &p.fanout))
        return NULL;
    if (job_load(&J, q_o, srcs, seeds_o, bounds_o) == 0) {
        ov_ctx *ctx = take_ctx();
        Py_BEGIN_ALLOW_THREADS
        job_run(ctx, &J, &p);
        Py_END_ALLOW_THREADS
        give_ctx(ctx);
        result = job_result(&J);
    }
    job_free(&J);
    return result;
}

/* frame_units(q, s, weights, strict, loose, ngram) -> (own, differ): templates._own_units for
 * one passage (its Python reference): q, s the two sides' token hashes (uint64); weights
 * (int64), strict and loose (bool) per token of q. The tokens of q in blocks of >= ngram
 * tokens (ov_frame) not covered (loose where the sides differ, else strict), their weights
 * summed; differ: fewer tokens matched than the longer side holds. With the GIL (a short
 * passage: microseconds). */
static PyObject *py_frame_units(PyObject *self, PyObject *args) {
    PyObject *q_o, *s_o, *w_o, *st_o, *lo_o, *result = NULL;
    Py_ssize_t ngram, nq, ns;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOOOn", &q_o, &s_o, &w_o, &st_o, &lo_o, &ngram)) return NULL;
    const uint64_t *q = get(&bs, q_o, 8, 0, 0, "q", &nq);
    if (!q) goto done;
    const uint64_t *s = get(&bs, s_o, 8, 0, 0, "s", &ns);
    if (!s) goto done;
    const int64_t *w = get(&bs, w_o, 8, nq, 0, "weights", NULL);
    if (!w) goto done;
    const uint8_t *strict = get(&bs, st_o, 1, nq, 0, "strict", NULL);
    if (!strict) goto done;
    const uint8_t *loose = get(&bs, lo_o, 1, nq, 0, "loose", NULL);
    if (!loose) goto done;
    uint8_t *shared = malloc((size_t)nq + 1);
    int64_t matched = shared ? ov_frame(q, nq, s, ns, ngram, shared) : -1;
    if (matched < 0) {
        free(shared);
        PyErr_NoMemory();
        goto done;
    }
    int differ = matched < (nq > ns ? nq : ns);
    const uint8_t *covered = differ ? loose : strict;
    int64_t own = 0;
    for (Py_ssize_t i = 0; i < nq; i++)
        if (shared[i] && !covered[i]) own += w[i];
    free(shared);
    result = Py_BuildValue("(LO)", (long long)own, differ ? Py_True : Py_False);
done:
    release(&bs);
    return result;
}

/* pairs_many(jobs, near, gap, min_units, reach, fanout) -> [pairs(*job, ...) for job in
 * jobs], each job a (query, sources, seeds, bounds) tuple; all of them run without the GIL,
 * so a Python thread can prepare the next ones meanwhile. */
static PyObject *py_pairs_many(PyObject *self, PyObject *args) {
    PyObject *jobs_o, *result = NULL;
    params_t p;
    if (!PyArg_ParseTuple(args, "Onnnnn", &jobs_o, &p.near, &p.gap, &p.min_units, &p.reach,
                          &p.fanout))
        return NULL;
    PyObject *jobs = PySequence_Tuple(jobs_o);
    if (!jobs) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(jobs), loaded = 0;
    job_t *J = calloc((size_t)n + 1, sizeof(job_t));
    if (!J) {
        Py_DECREF(jobs);
        return PyErr_NoMemory();
    }
    for (; loaded < n; loaded++) {
        PyObject *q_o, *srcs, *seeds_o, *bounds_o, *job = PyTuple_GET_ITEM(jobs, loaded);
        if (!PyTuple_Check(job) ||
            !PyArg_ParseTuple(job, "OO!OO", &q_o, &PyList_Type, &srcs, &seeds_o, &bounds_o)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "a job is (query, sources, seeds, bounds)");
            break;
        }
        if (job_load(&J[loaded], q_o, srcs, seeds_o, bounds_o) < 0) {
            loaded++;
            break;
        }
    }
    if (!PyErr_Occurred()) {
        ov_ctx *ctx = take_ctx();
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) job_run(ctx, &J[i], &p);
        Py_END_ALLOW_THREADS
        give_ctx(ctx);
        result = PyList_New(n);
        for (Py_ssize_t i = 0; result && i < n; i++) {
            PyObject *r = job_result(&J[i]);
            if (!r) Py_CLEAR(result);
            else PyList_SET_ITEM(result, i, r);
        }
    }
    for (Py_ssize_t i = 0; i < loaded; i++) job_free(&J[i]);
    free(J);
    Py_DECREF(jobs);
    return result;
}

/* ---------------------------------------------------------------- the gram index */

OWNING_OBJECT(IndexObject, ov_index, ix, ov_index_new, ov_index_free)

/* ov_index_add, its failure as an exception; -1 with it set */
static int add_grams(IndexObject *self, int64_t doc, const uint64_t *h, const int64_t *f,
                     const int64_t *l, const int64_t *idx, int64_t n) {
    int rc;
    UNLOCKED(self, rc = ov_index_add(self->ix, doc, h, f, l, idx, n));
    if (rc == -2) PyErr_SetString(PyExc_ValueError, "token offsets out of range");
    if (rc == -1) PyErr_NoMemory();
    return rc < 0 ? -1 : 0;
}

static int get_grams(bufs *bs, PyObject *h_o, PyObject *f_o, PyObject *l_o, const uint64_t **h,
                     const int64_t **f, const int64_t **l, Py_ssize_t *n) {
    Py_ssize_t nf, nl;
    *h = get(bs, h_o, 8, 0, 0, "hashes", n);
    if (!*h) return -1;
    *f = get(bs, f_o, 8, 0, 0, "first", &nf);
    if (!*f) return -1;
    *l = get(bs, l_o, 8, 0, 0, "last", &nl);
    if (!*l) return -1;
    if (nf != *n || nl != *n) {
        PyErr_SetString(PyExc_ValueError, "hashes, first and last must have one length");
        return -1;
    }
    return 0;
}

static PyObject *index_add(IndexObject *self, PyObject *args) {
    PyObject *h_o, *f_o, *l_o;
    Py_ssize_t doc, n;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "nOOO", &doc, &h_o, &f_o, &l_o)) return NULL;
    if (doc < 0 || doc > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "doc must be in [0, 2**32)");
        return NULL;
    }
    const uint64_t *h;
    const int64_t *f, *l;
    if (get_grams(&bs, h_o, f_o, l_o, &h, &f, &l, &n) < 0) goto fail;
    if (add_grams(self, doc, h, f, l, NULL, n) < 0) goto fail;
    release(&bs);
    Py_RETURN_NONE;
fail:
    release(&bs);
    return NULL;
}

/* The hits (sorted by document) of the documents with >= min_seeds of them, as the bytes
 * (docs, bounds, seeds) that Index.seeds returns. */
static PyObject *grouped(const hit_t *hits, int64_t k, int64_t min_seeds, const int64_t *f,
                         const int64_t *l) {
    int64_t nd, ns;
    ov_group_sizes(hits, k, min_seeds, &nd, &ns);
    PyObject *docs = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(8 * nd));
    PyObject *bounds = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(8 * (nd + 1)));
    PyObject *seeds = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(32 * ns));
    if (!docs || !bounds || !seeds) {
        Py_XDECREF(docs);
        Py_XDECREF(bounds);
        Py_XDECREF(seeds);
        return NULL;
    }
    ov_group(hits, k, min_seeds, f, l, (int64_t *)PyBytes_AS_STRING(docs),
             (int64_t *)PyBytes_AS_STRING(bounds), (int64_t *)PyBytes_AS_STRING(seeds));
    return Py_BuildValue("(NNN)", docs, bounds, seeds);
}

/* seeds(hashes, first, last, max_df, min_seeds[, max_seeds[, cap]]) -> (docs, bounds, seeds) as
 * bytes of int64: the postings of each query gram (skipping grams posted by more than max_df
 * documents: boilerplate; a text repeating a sentence posts its grams many times, once)
 * grouped by document (ascending), in query-gram then posting order, for the documents with
 * at least min_seeds of them; seeds rows (q_first, q_last, d_first, d_last). With max_seeds
 * > 0 and more postings than that, their count (an int) instead, before any is copied: a text
 * of a few words repeated meets each of its grams' many postings once per occurrence, so its
 * seeds grow with the square of its length (and the per-pair step's work with them). */
/* Index.seeds on the query grams (h, f, l)[0..n). */
static PyObject *seeds_core(IndexObject *self, const uint64_t *h, const int64_t *f,
                            const int64_t *l, int64_t n, int64_t max_df, int64_t min_seeds,
                            int64_t max_seeds, int64_t cap) {
    hit_t *hits = NULL;
    int64_t k;
    int rc;
    UNLOCKED(self, rc = ov_index_hits(self->ix, h, n, max_df, max_seeds, cap, &hits, &k));
    if (rc < 0) return PyErr_NoMemory();
    if (rc > 0) return PyLong_FromLongLong((long long)k); /* over max_seeds */
    PyObject *out = grouped(hits, k, min_seeds, f, l);
    free(hits);
    return out;
}

static PyObject *index_seeds(IndexObject *self, PyObject *args) {
    PyObject *h_o, *f_o, *l_o;
    Py_ssize_t max_df, min_seeds, n, max_seeds = 0, cap = 0;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOnn|nn", &h_o, &f_o, &l_o, &max_df, &min_seeds, &max_seeds,
                          &cap))
        return NULL;
    const uint64_t *h;
    const int64_t *f, *l;
    if (get_grams(&bs, h_o, f_o, l_o, &h, &f, &l, &n) < 0) goto fail;
    PyObject *out = seeds_core(self, h, f, l, n, max_df, min_seeds, max_seeds, cap);
    release(&bs);
    return out;
fail:
    release(&bs);
    return NULL;
}

/* The packed document's coarse grams (a bytes object from prepare), or NULL + TypeError. */
static int packed_doc(PyObject *o, doc_t *d) {
    if (!PyBytes_Check(o) || PyBytes_GET_SIZE(o) % 8 ||
        ov_unpack((const int64_t *)PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o) / 8, d) < 0) {
        PyErr_SetString(PyExc_TypeError, "expected a packed document (bytes from prepare)");
        return -1;
    }
    return 0;
}

/* seeds_packed(packed, max_df, min_seeds, window[, max_seeds[, cap]]): Index.seeds on the coarse
 * grams of a packed document that winnowing with `window` keeps (at most add_packed's window: a window of grams
 * shared with a posted document has its minimum kept on both sides, so no other gram needs a
 * probe; window 2: 1.5x fewer random probes than every gram, window 4: 2.5x). */
static PyObject *index_seeds_packed(IndexObject *self, PyObject *args) {
    PyObject *o;
    Py_ssize_t max_df, min_seeds, window, max_seeds = 0, cap = 0;
    doc_t d;
    if (!PyArg_ParseTuple(args, "Onnn|nn", &o, &max_df, &min_seeds, &window, &max_seeds, &cap) ||
        packed_doc(o, &d) < 0)
        return NULL;
    /* one block: the kept indices, then the kept grams' hash, first and last */
    int64_t *keep = malloc(sizeof(int64_t) * (size_t)(4 * d.nc + 4));
    if (!keep) return PyErr_NoMemory();
    int64_t m = ov_winnow(d.chash, d.nc, window, keep);
    uint64_t *h = (uint64_t *)(keep + d.nc + 1);
    int64_t *f = keep + 2 * d.nc + 2, *l = keep + 3 * d.nc + 3;
    for (int64_t i = 0; i < m; i++) {
        h[i] = d.chash[keep[i]];
        f[i] = d.cfirst[keep[i]];
        l[i] = d.clast[keep[i]];
    }
    PyObject *out = seeds_core(self, h, f, l, m, max_df, min_seeds, max_seeds, cap);
    free(keep);
    return out;
}

/* add_packed(doc, packed, window): post the winnowed coarse grams of a packed document. */
static PyObject *index_add_packed(IndexObject *self, PyObject *args) {
    PyObject *o;
    Py_ssize_t doc, window;
    doc_t d;
    if (!PyArg_ParseTuple(args, "nOn", &doc, &o, &window) || packed_doc(o, &d) < 0) return NULL;
    if (doc < 0 || doc > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "doc must be in [0, 2**32)");
        return NULL;
    }
    int64_t *keep = malloc(sizeof(int64_t) * (size_t)(d.nc + 1));
    if (!keep) return PyErr_NoMemory();
    int64_t m = ov_winnow(d.chash, d.nc, window, keep);
    int rc = add_grams(self, doc, d.chash, d.cfirst, d.clast, keep, m);
    free(keep);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* One document of look_post_many: its seeds grouped (docs[nd], bounds[nd + 1], seeds[4 ns] in
 * one block) and whether its look-ups were trimmed. */
typedef struct {
    int64_t *block, nd, ns;
    int trimmed;
} looked_t;

/* ov_index_hits and ov_group of one packed document's grams that winnowing with `window`
 * keeps (index_seeds_packed's), into L; 0, -1 (no memory) or 1 (over max_seeds: *over their
 * count). Called holding the index's lock, without the GIL. */
static int look_one(ov_index *ix, const doc_t *d, int64_t window, int64_t max_df,
                    int64_t min_seeds, int64_t max_seeds, int64_t cap, looked_t *L,
                    int64_t *over) {
    int64_t *keep = malloc(sizeof(int64_t) * (size_t)(4 * d->nc + 4)), k;
    if (!keep) return -1;
    int64_t m = ov_winnow(d->chash, d->nc, window, keep);
    uint64_t *h = (uint64_t *)(keep + d->nc + 1);
    int64_t *f = keep + 2 * d->nc + 2, *l = keep + 3 * d->nc + 3;
    for (int64_t i = 0; i < m; i++) {
        h[i] = d->chash[keep[i]];
        f[i] = d->cfirst[keep[i]];
        l[i] = d->clast[keep[i]];
    }
    hit_t *hits = NULL;
    int rc = ov_index_hits(ix, h, m, max_df, max_seeds, cap, &hits, &k);
    if (rc == 0) {
        ov_group_sizes(hits, k, min_seeds, &L->nd, &L->ns);
        L->block = malloc(sizeof(int64_t) * (size_t)(2 * L->nd + 1 + 4 * L->ns));
        if (!L->block) rc = -1;
        else
            ov_group(hits, k, min_seeds, f, l, L->block, L->block + L->nd,
                     L->block + 2 * L->nd + 1);
        free(hits);
    }
    if (rc > 0) *over = k;
    free(keep);
    return rc;
}

/* One document of look_post_many (its arguments in a): look up (trimmed when over its budget
 * and trim), then post it with add. 0, -1 (no memory), -2 (offsets out of range) or 1 (over
 * the budget without trim: *over, the postings' count). */
static int look_post_one(ov_index *ix, const doc_t *d, int64_t doc, const int64_t *a,
                         looked_t *L, int64_t *over) {
    /* a: add, window, query_window, max_df, min_seeds, per_gram, floor, trim */
    int64_t budget = a[5] * (d->nc > a[6] ? d->nc : a[6]);
    int rc = look_one(ix, d, a[2], a[3], a[4], budget, 0, L, over);
    if (rc > 0 && a[7]) {
        L->trimmed = 1;
        *over = 0; /* counted only for a refusal */
        rc = look_one(ix, d, a[2], a[3], a[4], 0, a[5], L, over);
    }
    if (rc != 0 || !a[0]) return rc;
    int64_t *keep = malloc(sizeof(int64_t) * (size_t)(d->nc + 1));
    if (!keep) return -1;
    int64_t m = ov_winnow(d->chash, d->nc, a[1], keep);
    rc = ov_index_add(ix, doc, d->chash, d->cfirst, d->clast, keep, m);
    free(keep);
    return rc;
}

/* look_post_many's answer for L[0..n): a list of (docs, bounds, seeds, trimmed), the blocks
 * freed; NULL with an exception set. */
static PyObject *looked_list(looked_t *L, Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *b = (const char *)L[i].block;
        int64_t nd = L[i].nd, ns = L[i].ns;
        PyObject *r = list ? Py_BuildValue("(y#y#y#O)", b, (Py_ssize_t)(8 * nd),
                                           b + 8 * nd, (Py_ssize_t)(8 * (nd + 1)),
                                           b + 8 * (2 * nd + 1), (Py_ssize_t)(32 * ns),
                                           L[i].trimmed ? Py_True : Py_False)
                           : NULL;
        if (!r) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, r);
        free(L[i].block);
        L[i].block = NULL;
    }
    return list;
}

/* look_post_many(packed, first_doc, add, window, query_window, max_df, min_seeds, per_gram,
 * floor, trim) -> (looked, stop, over): for each packed document k in turn, its seeds as
 * seeds_packed(packed[k], max_df, min_seeds, query_window, per_gram * max(its coarse grams,
 * floor)) gives them -- over that budget with trim, seeds_packed(..., 0, per_gram), trimmed --
 * then with add add_packed(first_doc + k, packed[k], window); looked[k] = (docs, bounds, seeds,
 * trimmed). One pass without the GIL, holding the index's lock (the finder's front thread).
 * stop < len(packed): document stop is over its budget without trim (it and those after it
 * neither looked up nor posted; over: its postings' count). */
static PyObject *index_look_post_many(IndexObject *self, PyObject *args) {
    PyObject *packed_o, *result = NULL;
    Py_ssize_t first, a[8];
    if (!PyArg_ParseTuple(args, "Onnnnnnnnn", &packed_o, &first, &a[0], &a[1], &a[2], &a[3],
                          &a[4], &a[5], &a[6], &a[7]))
        return NULL;
    PyObject *packed = PySequence_Tuple(packed_o);
    if (!packed) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(packed), stop = n;
    doc_t *D = calloc((size_t)n + 1, sizeof(doc_t));
    looked_t *L = calloc((size_t)n + 1, sizeof(looked_t));
    int64_t args64[8], over = 0;
    int rc = 0;
    for (int i = 0; i < 8; i++) args64[i] = a[i];
    if (!D || !L) {
        PyErr_NoMemory();
        goto done;
    }
    if (first < 0 || first + n > (Py_ssize_t)UINT32_MAX + 1) {
        PyErr_SetString(PyExc_OverflowError, "documents must be in [0, 2**32)");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (packed_doc(PyTuple_GET_ITEM(packed, i), &D[i]) < 0) goto done;
    UNLOCKED(self, for (Py_ssize_t i = 0; i < n && stop == n; i++) {
        rc = look_post_one(self->ix, &D[i], first + i, args64, &L[i], &over);
        if (rc != 0) stop = i;
    });
    if (rc == -2) PyErr_SetString(PyExc_ValueError, "token offsets out of range");
    else if (rc < 0) PyErr_NoMemory();
    PyObject *list = looked_list(L, stop);
    if (list && rc >= 0 && !PyErr_Occurred())
        result = Py_BuildValue("(NnL)", list, stop, (long long)over);
    else Py_XDECREF(list);
done:
    for (Py_ssize_t i = 0; L && i < n; i++) free(L[i].block);
    free(L);
    free(D);
    Py_DECREF(packed);
    return result;
}

/* arrays() -> (hashes, postings) as bytes: uint64 sorted, int64 rows (doc, first, last);
 * postings of one hash in insertion order. */
static PyObject *index_arrays(IndexObject *self, PyObject *unused) {
    LOCK(self);
    int64_t np = ov_index_postings(self->ix);
    PyObject *hs = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(8 * np));
    PyObject *ps = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(24 * np));
    int rc = hs && ps ? ov_index_arrays(self->ix, (uint64_t *)PyBytes_AS_STRING(hs),
                                        (int64_t *)PyBytes_AS_STRING(ps))
                      : -1;
    UNLOCK(self);
    if (rc < 0) {
        Py_XDECREF(hs);
        Py_XDECREF(ps);
        return hs && ps ? PyErr_NoMemory() : NULL;
    }
    return Py_BuildValue("(NN)", hs, ps);
}

static PyObject *index_len(IndexObject *self, PyObject *unused) {
    LOCK(self);
    int64_t np = ov_index_postings(self->ix);
    UNLOCK(self);
    return PyLong_FromLongLong(np);
}

static PyMethodDef index_methods[] = {
    {"add", (PyCFunction)index_add, METH_VARARGS, "add(doc, hashes, first, last)"},
    {"seeds", (PyCFunction)index_seeds, METH_VARARGS,
     "seeds(hashes, first, last, max_df, min_seeds[, max_seeds[, cap]]) -> (docs, bounds, "
     "seeds) bytes, or the postings' count when over max_seeds > 0; cap > 0: grams with more "
     "postings left out"},
    {"seeds_packed", (PyCFunction)index_seeds_packed, METH_VARARGS,
     "seeds_packed(packed, max_df, min_seeds, window[, max_seeds[, cap]]) -> (docs, bounds, "
     "seeds) bytes, or the postings' count when over max_seeds > 0; cap > 0: grams with more "
     "postings left out"},
    {"add_packed", (PyCFunction)index_add_packed, METH_VARARGS,
     "add_packed(doc, packed, window): post the winnowed coarse grams"},
    {"look_post_many", (PyCFunction)index_look_post_many, METH_VARARGS,
     "look_post_many(packed, first_doc, add, window, query_window, max_df, min_seeds, "
     "per_gram, floor, trim) -> (looked, stop, over): seeds_packed (trimmed over the budget) "
     "and add_packed of each document in turn, without the GIL"},
    {"arrays", (PyCFunction)index_arrays, METH_NOARGS, "arrays() -> (hashes, postings) bytes"},
    {"postings", (PyCFunction)index_len, METH_NOARGS, "postings() -> count"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject IndexType = {
    OWNING_TYPE(IndexObject, "neardup._overlap.Index", "Gram hash -> postings (see overlap_index.c).",
                index_methods),
};

/* ---------------------------------------------------------------- template key counts */

/* templates.TemplateCounts' table (ov_counts); counted without the GIL (a batch's keys: ~1
 * ms) holding its own lock, so threads sharing one see whole batches. */
OWNING_OBJECT(CountsObject, ov_counts, c, ov_counts_new, ov_counts_free)

/* count(keys: uint64, offsets: int64 (texts + 1), add, df: int64 out) */
static PyObject *counts_count(CountsObject *self, PyObject *args) {
    PyObject *h_o, *off_o, *df_o, *result = NULL;
    int add;
    Py_ssize_t m, no, nd;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOpO", &h_o, &off_o, &add, &df_o)) return NULL;
    const uint64_t *h = get(&bs, h_o, 8, 0, 0, "keys", &m);
    const int64_t *off = h ? get(&bs, off_o, 8, 1, 0, "offsets", &no) : NULL;
    int64_t *df = off ? get(&bs, df_o, 8, m, 1, "df", &nd) : NULL;
    if (!df) goto done;
    for (Py_ssize_t t = 0; t < no; t++)
        if (off[t] < (t ? off[t - 1] : 0) || off[t] > m) {
            PyErr_SetString(PyExc_ValueError, "offsets must rise within the keys");
            goto done;
        }
    int rc;
    UNLOCKED(self, rc = ov_counts_count(self->c, h, off, no - 1, add, df));
    result = rc < 0 ? PyErr_NoMemory() : Py_NewRef(Py_None);
done:
    release(&bs);
    return result;
}

/* put(keys: uint64, counts: int64): add counts[i] documents to keys[i] */
static PyObject *counts_put(CountsObject *self, PyObject *args) {
    PyObject *h_o, *k_o, *result = NULL;
    Py_ssize_t m;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OO", &h_o, &k_o)) return NULL;
    const uint64_t *h = get(&bs, h_o, 8, 0, 0, "keys", &m);
    const int64_t *k = h ? get(&bs, k_o, 8, m, 0, "counts", NULL) : NULL;
    if (!k) goto done;
    int rc;
    UNLOCKED(self, rc = ov_counts_put(self->c, h, k, m));
    result = rc < 0 ? PyErr_NoMemory() : Py_NewRef(Py_None);
done:
    release(&bs);
    return result;
}

/* arrays() -> (keys, counts) bytes, in table order */
static PyObject *counts_arrays(CountsObject *self, PyObject *Py_UNUSED(ignored)) {
    LOCK(self);
    Py_ssize_t n = (Py_ssize_t)ov_counts_size(self->c);
    PyObject *k = PyBytes_FromStringAndSize(NULL, n * 8), *d = NULL;
    if (k) d = PyBytes_FromStringAndSize(NULL, n * 8);
    if (d)
        ov_counts_arrays(self->c, (uint64_t *)PyBytes_AS_STRING(k),
                         (int64_t *)PyBytes_AS_STRING(d));
    UNLOCK(self);
    if (!d) {
        Py_XDECREF(k);
        return NULL;
    }
    return Py_BuildValue("(NN)", k, d);
}

static Py_ssize_t counts_len(CountsObject *self) {
    LOCK(self);
    Py_ssize_t n = (Py_ssize_t)ov_counts_size(self->c);
    UNLOCK(self);
    return n;
}

static PyMethodDef counts_methods[] = {
    {"count", (PyCFunction)counts_count, METH_VARARGS,
     "count(keys, offsets, add, df): per key the documents counted before its text"},
    {"put", (PyCFunction)counts_put, METH_VARARGS, "put(keys, counts): add counts to keys"},
    {"arrays", (PyCFunction)counts_arrays, METH_NOARGS, "arrays() -> (keys, counts) bytes"},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods counts_seq = {.sq_length = (lenfunc)counts_len};

static PyTypeObject CountsType = {
    OWNING_TYPE(CountsObject, "neardup._overlap.Counts",
                "Template key -> documents holding it (see overlap_index.c).", counts_methods),
    .tp_as_sequence = &counts_seq,
};

static PyMethodDef methods[] = {
    {"prepare", py_prepare, METH_VARARGS,
     "prepare(text, cls, fold, word_units, cjk_units, coarse, fine) -> packed bytes, or the "
     "code point (int) whose fold is missing"},
    {"prepare_many", py_prepare_many, METH_VARARGS,
     "prepare_many(texts, cls, fold, word_units, cjk_units, coarse, fine) -> (packed, stop): "
     "prepare of texts[:stop] without the GIL; texts[stop] needs a fold"},
    {"template_keys", py_template_keys, METH_VARARGS,
     "template_keys(texts, tokens, ngram, mask, sample, digit, first, last, hashes) -> count"},
    {"winnow", py_winnow, METH_VARARGS, "winnow(hashes, window, out) -> count"},
    {"pairs", py_pairs, METH_VARARGS,
     "pairs(query, sources, seeds, bounds, near, gap, min_units, reach, fanout) -> passages"},
    {"frame_units", py_frame_units, METH_VARARGS,
     "frame_units(q, s, weights, strict, loose, ngram) -> (own units, differ)"},
    {"pairs_many", py_pairs_many, METH_VARARGS,
     "pairs_many(jobs, near, gap, min_units, reach, fanout) -> [pairs(*job, ...) for job in "
     "jobs] (computed without the GIL)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_overlap", "Kernels of neardup.overlap (see overlap_kernels.h).", -1, methods,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__overlap(void) {
    if (PyType_Ready(&IndexType) < 0 || PyType_Ready(&CountsType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&IndexType);
    if (PyModule_AddObject(m, "Index", (PyObject *)&IndexType) < 0) {
        Py_DECREF(&IndexType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&CountsType);
    if (PyModule_AddObject(m, "Counts", (PyObject *)&CountsType) < 0) {
        Py_DECREF(&CountsType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
