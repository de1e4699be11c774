/* Bindings of the key table kernels (included by module.c); signatures mirror
 * neardup/_numba/keys.py. A run arrives as (offsets uint32, tags uint8/16/32/64, shift, slots
 * uint32, or uint8 of 3 bytes a row); the tag width is the tags array's itemsize. */
#include "keys.h"

/* The `itemsize` of an array object, or -1 (no error left set) when it has none. */
static long item_size(PyObject *array) {
    PyObject *size = PyObject_GetAttrString(array, "itemsize");
    long item = size ? PyLong_AsLong(size) : -1;
    Py_XDECREF(size);
    PyErr_Clear();
    return item;
}

/* The tag width of a run's tags array (1, 2, 4 or 8 bytes), or -1 with a TypeError naming it. */
static int tag_width(PyObject *tags, const char *name) {
    long width = item_size(tags);
    if (width != 1 && width != 2 && width != 4 && width != 8) {
        PyErr_Format(PyExc_TypeError, "%s must be a uint8, uint16, uint32 or uint64 array", name);
        return -1;
    }
    return (int)width;
}

/* Slots of `rows` rows: uint32, or uint8 with 3 bytes a row; sets *width (4 or 3). */
static Py_buffer *get_slots(bufs *bs, PyObject *slots, int64_t rows, int writable, int *width,
                            const char *name) {
    long item = item_size(slots);
    if (item != 1 && item != 4) {
        PyErr_Format(PyExc_TypeError, "%s must be a uint32 array or uint8 (3 bytes a slot)", name);
        return NULL;
    }
    Py_buffer *s = get(bs, slots, 'u', item, writable, 1, name);
    if (!s) return NULL;
    *width = item == 4 ? 4 : 3;
    if (rows >= 0 && LEN(s) != rows * (item == 4 ? 1 : 3)) {
        PyErr_Format(PyExc_ValueError, "%s: a run's tags and slots disagree in length", name);
        return NULL;
    }
    return s;
}

/* Fill `r` from a run's arrays (slots may be Py_None: a lookup reads no slot). */
static int get_run(bufs *bs, PyObject *offsets, PyObject *tags, Py_ssize_t shift,
                   PyObject *slots, nd_key_run *r) {
    int width = tag_width(tags, "tags");
    if (width < 0) return -1;
    Py_buffer *o = get(bs, offsets, 'u', 4, 0, 1, "offsets");
    Py_buffer *t = o ? get(bs, tags, 'u', width, 0, 1, "tags") : NULL;
    if (!t) return -1;
    if (LEN(o) < 2 || shift < 0 || shift > 63) {
        PyErr_SetString(PyExc_ValueError, "offsets need 2 or more entries and 0 <= shift <= 63");
        return -1;
    }
    r->offsets = o->buf;
    r->nbuckets = LEN(o) - 1;
    r->tags = t->buf;
    r->width = (int)width;
    r->shift = (int)shift;
    r->n = LEN(t);
    r->slots = NULL;
    r->slot_width = 4;
    if (slots != Py_None) {
        Py_buffer *s = get_slots(bs, slots, r->n, 0, &r->slot_width, "slots");
        if (!s) return -1;
        r->slots = s->buf;
    }
    return 0;
}

static PyObject *py_key_pack(PyObject *self, PyObject *args) {
    Py_buffer *k, *o;
    Py_ssize_t bits;
    bufs bs = {.n = 0};
    if (keys_num_out(&bs, args, &k, &bits, &o, 8, "out") < 0) return failed(&bs);
    if (bits < 32 || bits > 64 || LEN(o) < LEN(k))
        FAIL(PyExc_ValueError, "key_pack: 32 <= bits <= 64 and an output as long as the keys");
    NOGIL(nd_key_pack(k->buf, LEN(k), (int)bits, o->buf));
    return done_none(&bs, 0);
}

static PyObject *py_key_lookup(PyObject *self, PyObject *args) {
    PyObject *offsets, *tags, *queries, *oq, *oa;
    Py_ssize_t shift;
    nd_key_run r;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOnOOO", &offsets, &tags, &shift, &queries, &oq, &oa))
        return NULL;
    if (get_run(&bs, offsets, tags, shift, Py_None, &r) < 0) goto fail;
    GET(qs, queries, 'u', 8, 0, 1);
    GET(vq, oq, 'i', 8, 1, 1);
    GET(va, oa, 'i', 8, 1, 1);
    int64_t cap = LEN(vq) < LEN(va) ? LEN(vq) : LEN(va), c;
    NOGIL(c = nd_key_lookup(&r, qs->buf, LEN(qs), vq->buf, va->buf, cap));
    return done_long(&bs, c);
fail:
    return failed(&bs);
}

/* -1 (an error set) or the rows of run r whose slot is not dead */
static int64_t check_run(const nd_key_run *r, const uint8_t *dead, int64_t ndead,
                         const char *which, uint32_t *top) {
    int64_t live = 0;
    for (int64_t t = 0; t < r->nbuckets; t++)
        if (r->offsets[t + 1] < r->offsets[t]) goto bad;
    if (r->offsets[0] != 0 || r->offsets[r->nbuckets] != r->n) goto bad;
    for (int64_t i = 0; i < r->n; i++) {
        uint32_t s = nd_slot_at(r->slots, r->slot_width, i);
        if (s >= ndead) {
            PyErr_Format(PyExc_IndexError, "merge: a slot of run %s is beyond the dead mask", which);
            return -1;
        }
        live += !dead[s];
        if (s > *top) *top = s;
    }
    return live;
bad:
    PyErr_Format(PyExc_ValueError, "merge: the offsets of run %s are inconsistent", which);
    return -1;
}

static PyObject *py_key_merge(PyObject *self, PyObject *args) {
    PyObject *ao, *at, *as, *bo, *bt, *bsl, *dead, *out_offsets, *out_tags, *os;
    Py_ssize_t ash, bsh, osh;
    nd_key_run a, b;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOnOOOnOOOOnO", &ao, &at, &ash, &as, &bo, &bt, &bsh, &bsl, &dead,
                          &out_offsets, &out_tags, &osh, &os))
        return NULL;
    if (get_run(&bs, ao, at, ash, as, &a) < 0 || get_run(&bs, bo, bt, bsh, bsl, &b) < 0) goto fail;
    GET(vd, dead, 'b', 1, 0, 1);
    GET(voo, out_offsets, 'u', 4, 1, 1); /* GET's errors name the argument as the stub does */
    int width = tag_width(out_tags, "out_tags");
    if (width < 0) goto fail;
    GET(vot, out_tags, 'u', width, 1, 1);
    int sw;
    Py_buffer *vos = get_slots(&bs, os, -1, 1, &sw, "out_slots");
    if (!vos) goto fail;
    uint32_t top = 0;
    int64_t la = check_run(&a, vd->buf, LEN(vd), "a", &top);
    int64_t lb = la < 0 ? -1 : check_run(&b, vd->buf, LEN(vd), "b", &top);
    if (lb < 0) goto fail;
    if (sw == 3 && top >= (1u << 24))
        FAIL(PyExc_ValueError, "merge: a slot is too large for 3-byte output slots");
    if (LEN(voo) < 2 || osh < 0 || osh > 63 || LEN(vot) < la + lb || LEN(vos) / (sw == 4 ? 1 : 3) < la + lb)
        FAIL(PyExc_ValueError, "merge: output offsets, shift or rows (the live ones) too short");
    int64_t m;
    NOGIL(m = nd_key_merge(&a, &b, vd->buf, voo->buf, LEN(voo) - 1, vot->buf, (int)width,
                           (int)osh, vos->buf, sw));
    return done_long(&bs, m);
fail:
    return failed(&bs);
}

static PyObject *py_key_offsets(PyObject *self, PyObject *args) {
    Py_buffer *k, *off;
    Py_ssize_t shift;
    bufs bs = {.n = 0};
    if (keys_num_out(&bs, args, &k, &shift, &off, 4, "offsets") < 0) return failed(&bs);
    if (shift < 0 || shift > 63 || LEN(off) < 2 || LEN(k) > (int64_t)UINT32_MAX)
        FAIL(PyExc_ValueError, "key_offsets: 0 <= shift <= 63, 2 or more offsets, < 2**32 keys");
    const uint64_t *kv = k->buf;
    for (int64_t i = 1; i < LEN(k); i++)
        if (kv[i] < kv[i - 1]) FAIL(PyExc_ValueError, "key_offsets needs sorted keys");
    NOGIL(nd_key_offsets(kv, LEN(k), (int)shift, off->buf, LEN(off) - 1));
    return done_none(&bs, 0);
}

#define KEY_METHODS                                                                  \
    {"key_pack", py_key_pack, METH_VARARGS, "Table keys of mix64 band keys."},        \
    {"key_lookup", py_key_lookup, METH_VARARGS, "Key table bucket lookup of one run."}, \
    {"key_merge", py_key_merge, METH_VARARGS, "Merge two runs, dropping dead slots."}, \
    {"key_offsets", py_key_offsets, METH_VARARGS, "Bucket offsets of sorted keys (key >> shift)."},
