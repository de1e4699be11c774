/* Bindings of the key table kernels (included by module.c); signatures mirror
 * neardup/_numba/keys.py. */
#include "keys.h"

static PyObject *py_key_lookup(PyObject *self, PyObject *args) {
    PyObject *keys, *offsets, *queries, *oq, *oa;
    Py_ssize_t p;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOnOOO", &keys, &offsets, &p, &queries, &oq, &oa)) return NULL;
    GET(k, keys, 'u', 8, 0, 1);
    GET(off, offsets, 'i', 8, 0, 1);
    GET(qs, queries, 'u', 8, 0, 1);
    GET(vq, oq, 'i', 8, 1, 1);
    GET(va, oa, 'i', 8, 1, 1);
    if (p < 1 || p > 62 || LEN(off) != ((int64_t)1 << p) + 1)
        FAIL(PyExc_ValueError, "offsets must have 2**p + 1 entries (1 <= p <= 62)");
    const int64_t *o = off->buf; /* entries are clamped to [0, len(keys)] by the kernel */
    int64_t cap = LEN(vq) < LEN(va) ? LEN(vq) : LEN(va), c;
    NOGIL(c = nd_key_lookup(k->buf, LEN(k), o, p, qs->buf, LEN(qs), vq->buf, va->buf, cap));
    return done_long(&bs, c);
fail:
    return failed(&bs);
}

static PyObject *py_key_merge(PyObject *self, PyObject *args) {
    PyObject *ak, *as, *bk, *bsl, *dead, *ok, *os;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOOOOO", &ak, &as, &bk, &bsl, &dead, &ok, &os)) return NULL;
    GET(vak, ak, 'u', 8, 0, 1);
    GET(vas, as, 'u', 4, 0, 1);
    GET(vbk, bk, 'u', 8, 0, 1);
    GET(vbs, bsl, 'u', 4, 0, 1);
    GET(vd, dead, 'b', 1, 0, 1);
    GET(vok, ok, 'u', 8, 1, 1);
    GET(vos, os, 'u', 4, 1, 1);
    int64_t na = LEN(vak), nb = LEN(vbk), nd = LEN(vd), m;
    if (LEN(vas) != na || LEN(vbs) != nb || LEN(vok) < na + nb || LEN(vos) < na + nb)
        FAIL(PyExc_ValueError, "merge: keys and slots disagree in length, or output too short");
    const uint32_t *sa = vas->buf, *sb = vbs->buf;
    for (int64_t i = 0; i < na; i++)
        if (sa[i] >= nd) FAIL(PyExc_IndexError, "merge: slot beyond the dead mask");
    for (int64_t i = 0; i < nb; i++)
        if (sb[i] >= nd) FAIL(PyExc_IndexError, "merge: slot beyond the dead mask");
    NOGIL(m = nd_key_merge(vak->buf, sa, na, vbk->buf, sb, nb, vd->buf, vok->buf, vos->buf));
    return done_long(&bs, m);
fail:
    return failed(&bs);
}

static PyObject *py_key_offsets(PyObject *self, PyObject *args) {
    PyObject *keys, *offsets;
    Py_ssize_t p;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OnO", &keys, &p, &offsets)) return NULL;
    GET(k, keys, 'u', 8, 0, 1);
    GET(off, offsets, 'i', 8, 1, 1);
    if (p < 1 || p > 40 || LEN(off) != ((int64_t)1 << p) + 1)
        FAIL(PyExc_ValueError, "offsets must have 2**p + 1 entries (1 <= p <= 40)");
    const uint64_t *kv = k->buf;
    for (int64_t i = 1; i < LEN(k); i++)
        if (kv[i] < kv[i - 1]) FAIL(PyExc_ValueError, "key_offsets needs sorted keys");
    NOGIL(nd_key_offsets(kv, LEN(k), p, off->buf));
    return done_none(&bs, 0);
fail:
    return failed(&bs);
}

#define KEY_METHODS                                                                  \
    {"key_lookup", py_key_lookup, METH_VARARGS, "Key table bucket lookup of one run."}, \
    {"key_merge", py_key_merge, METH_VARARGS, "Merge two key-sorted runs, dropping dead slots."}, \
    {"key_offsets", py_key_offsets, METH_VARARGS, "Bucket offsets of sorted keys (top p bits)."},
