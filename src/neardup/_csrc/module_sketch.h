/* Bindings of the shingle and MinHash kernels (included by module.c). */

/* What shingles and sketch share: the texts (buf, offsets, modes, cls), checked, n and seed. */
typedef struct {
    texts tx;
    int64_t ndoc;
    Py_ssize_t n;
    uint64_t seed;
} shingling;

/* A shingling entry point's outputs and kernel call, given the buffers (released on return). */
typedef PyObject *(*shingling_run)(bufs *bs, const shingling *sh, PyObject *a, PyObject *b);

/* Parse (buf, offsets, modes, cls, n, seed, a, b), check the texts, then run(a, b). */
static PyObject *shingling_call(PyObject *args, shingling_run run) {
    PyObject *buf, *offsets, *modes, *cls, *a, *b;
    shingling sh;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOOnO&OO", &buf, &offsets, &modes, &cls, &sh.n, to_u64, &sh.seed,
                          &a, &b))
        return NULL;
    sh.ndoc = get_texts(&bs, buf, offsets, modes, cls, &sh.tx);
    return sh.ndoc < 0 ? failed(&bs) : run(&bs, &sh, a, b);
}

static PyObject *shingles_run(bufs *bs, const shingling *sh, PyObject *flat, PyObject *out_off) {
    const texts *tx = &sh->tx;
    Py_buffer *fl, *oo;
    if (get_arrays(bs, ARRAYS(ARR(fl, flat, 'u', 8, 1, 1), ARR(oo, out_off, 'i', 8, 1, 1))) < 0)
        return failed(bs);
    if (LEN(oo) < sh->ndoc + 1 || LEN(fl) < LEN(tx->b) + sh->ndoc + 1) {
        PyErr_SetString(PyExc_ValueError, "out_off/flat too small");
        return failed(bs);
    }
    int64_t pos;
    NOGIL(pos = nd_shingles(tx->b->buf, LEN(tx->b), tx->of->buf, sh->ndoc, tx->md->buf, tx->c->buf,
                            sh->n, sh->seed, fl->buf, oo->buf));
    return pos < 0 ? done_none(bs, pos) : done_long(bs, pos);
}

/* shingles(buf, offsets, modes, cls, n, seed, flat, out_off): sorted unique shingle hashes per
 * document, into flat[out_off[d]:out_off[d + 1]]. */
static PyObject *py_shingles(PyObject *self, PyObject *args) {
    return shingling_call(args, shingles_run);
}

static PyObject *sketch_run(bufs *bs, const shingling *sh, PyObject *salts, PyObject *out) {
    const texts *tx = &sh->tx;
    Py_buffer *sa, *o;
    if (get_arrays(bs, ARRAYS(ARR(sa, salts, 'u', 8, 0, 1), ARR(o, out, 'u', 8, 1, 2))) < 0)
        return failed(bs);
    if (DIM(o, 0) != sh->ndoc || DIM(o, 1) != LEN(sa)) {
        PyErr_SetString(PyExc_ValueError, "out must be (docs, salts)");
        return failed(bs);
    }
    int rc;
    NOGIL(rc = nd_sketch(tx->b->buf, tx->of->buf, sh->ndoc, tx->md->buf, tx->c->buf, sh->n,
                         sh->seed, sa->buf, LEN(sa), o->buf));
    return done_none(bs, rc);
}

/* sketch(buf, offsets, modes, cls, n, seed, salts, out): MinHash minima straight from the
 * texts, equal to minhash() over shingles(). */
static PyObject *py_sketch(PyObject *self, PyObject *args) {
    return shingling_call(args, sketch_run);
}

/* minhash(flat, offsets, salts, out): the minima of shingle sets, as shingles() writes them. */
static PyObject *py_minhash(PyObject *self, PyObject *args) {
    PyObject *flat, *offsets, *salts, *out;
    Py_buffer *fl, *of, *sa, *o;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOO", &flat, &offsets, &salts, &out)) return NULL;
    GETS(ARR(fl, flat, 'u', 8, 0, 1), ARR(of, offsets, 'i', 8, 0, 1)); /* the sets */
    GETS(ARR(sa, salts, 'u', 8, 0, 1), ARR(o, out, 'u', 8, 1, 2));     /* the minima */
    if (check_offsets(of, LEN(fl)) < 0) return failed(&bs);
    int64_t ndoc = LEN(of) - 1;
    if (DIM(o, 0) != ndoc || DIM(o, 1) != LEN(sa))
        FAIL(PyExc_ValueError, "out must be (docs, salts)");
    NOGIL(nd_minhash(fl->buf, of->buf, ndoc, sa->buf, LEN(sa), o->buf));
    return done_none(&bs, 0);
}

#define SKETCH_METHODS                                                                     \
    {"shingles", py_shingles, METH_VARARGS, "Sorted unique shingle hashes per document."}, \
    {"minhash", py_minhash, METH_VARARGS, "MinHash minima per document and salt."},        \
    {"sketch", py_sketch, METH_VARARGS, "MinHash minima straight from the texts."},
