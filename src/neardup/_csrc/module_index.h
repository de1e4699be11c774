/* Bindings of the index kernels (included by module.c). */

static int get_perm(bufs *bs, PyObject *rsh, PyObject *msk, PyObject *lsh, nd_perm *pm,
                    int64_t *ntab) {
    Py_buffer *r, *m, *l;
    if (get_arrays(bs, ARRAYS(ARR(r, rsh, 'u', 8, 0, 2), ARR(m, msk, 'u', 8, 0, 2),
                              ARR(l, lsh, 'u', 8, 0, 2))) < 0)
        return -1;
    if (m->len != r->len || l->len != r->len || DIM(m, 1) != DIM(r, 1)) {
        PyErr_SetString(PyExc_ValueError, "rsh, msk, lsh must have one shape");
        return -1;
    }
    if (DIM(r, 1) > 64) {
        PyErr_SetString(PyExc_ValueError, "a permutation has at most 64 blocks");
        return -1;
    }
    *pm = (nd_perm){.rsh = r->buf, .msk = m->buf, .lsh = l->buf, .blocks = DIM(r, 1)};
    *ntab = DIM(r, 0);
    return 0;
}

static int get_out(bufs *bs, PyObject *out_a, PyObject *out_b, PyObject *out_d, nd_out *o) {
    Py_buffer *va, *vb, *vd;
    if (get_arrays(bs, ARRAYS(ARR(va, out_a, 'i', 8, 1, 1), ARR(vb, out_b, 'i', 8, 1, 1),
                              ARR(vd, out_d, 'i', 8, 1, 1))) < 0)
        return -1;
    o->a = va->buf;
    o->b = vb->buf;
    o->d = vd->buf;
    o->cap = LEN(va) < LEN(vb) ? LEN(va) : LEN(vb);
    o->cap = LEN(vd) < o->cap ? LEN(vd) : o->cap;
    o->written = 0;
    return 0;
}

/* keys/pos (tables, n), offsets (tables, 2**q + 1): the StaticTables arrays; dedup (tables,
 * tables): the masks of the rule that reports each pair from one table only. */
static int get_tables(bufs *bs, PyObject *keys, PyObject *pos, PyObject *offsets, PyObject *dedup,
                      nd_tables *tb, const uint64_t **dd) {
    Py_buffer *k, *p, *o, *d;
    if (get_arrays(bs, ARRAYS(ARR(k, keys, 'u', 8, 0, 2), ARR(p, pos, 'u', 4, 0, 2),
                              ARR(o, offsets, 'u', 4, 0, 2), ARR(d, dedup, 'u', 8, 0, 2))) < 0)
        return -1;
    if (DIM(p, 0) != DIM(k, 0) || DIM(p, 1) != DIM(k, 1) || DIM(o, 0) != DIM(k, 0) ||
        DIM(o, 1) < 2 || DIM(d, 0) != DIM(k, 0) || DIM(d, 1) != DIM(k, 0)) {
        PyErr_SetString(PyExc_ValueError, "keys, pos, offsets and dedup disagree in shape");
        return -1;
    }
    tb->keys = k->buf;
    tb->pos = p->buf;
    tb->offsets = o->buf;
    *dd = d->buf;
    tb->ntab = DIM(k, 0);
    tb->nkeys = DIM(k, 1);
    tb->nbuckets = DIM(o, 1) - 1;
    tb->q = 0;
    while (((int64_t)1 << tb->q) < tb->nbuckets) tb->q++;
    if (((int64_t)1 << tb->q) != tb->nbuckets) {
        PyErr_SetString(PyExc_ValueError, "offsets must have 2**q + 1 columns");
        return -1;
    }
    return 0;
}

/* probes[:nprobes]: the bucket xors to visit, each below nbuckets. */
static int get_probes(bufs *bs, PyObject *probes, int64_t nprobes, int64_t nbuckets,
                      const int64_t **pr) {
    Py_buffer *v;
    if (get_arrays(bs, ARRAYS(ARR(v, probes, 'i', 8, 0, 1))) < 0) return -1;
    const int64_t *p = *pr = v->buf;
    if (nprobes < 0 || nprobes > LEN(v)) goto bad;
    for (int64_t i = 0; i < nprobes; i++)
        if (p[i] < 0 || p[i] >= nbuckets) goto bad;
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "probes must be bucket xors below 2**q");
    return -1;
}

/* search_tables(start, queries, k, keys, pos, offsets, q, rsh, msk, lsh, probes, nprobes,
 * dedup, radius, alive, [t_lo, t_hi,] oq, op, od): every table, or tables t_lo..t_hi-1 when
 * given (a pass per table over queries sorted by its bucket, see index/tables.py). */
static PyObject *search_tables_impl(PyObject *args, int ranged) {
    PyObject *queries, *keys, *pos, *offsets, *rsh, *msk, *lsh, *probes, *dedup, *alive, *oq, *op,
        *od;
    Py_buffer *qs, *al;
    Py_ssize_t start, k, q, nprobes, radius, t_lo = 0, t_hi = -1;
    bufs bs = {.n = 0};
    nd_perm pm;
    nd_tables tb;
    nd_out o;
    int64_t ntab, resume;
    const int64_t *pr;
    const uint64_t *dd;
    int ok = ranged ? PyArg_ParseTuple(args, "nOnOOOnOOOOnOnOnnOOO", &start, &queries, &k, &keys,
                                       &pos, &offsets, &q, &rsh, &msk, &lsh, &probes, &nprobes,
                                       &dedup, &radius, &alive, &t_lo, &t_hi, &oq, &op, &od)
                    : PyArg_ParseTuple(args, "nOnOOOnOOOOnOnOOOO", &start, &queries, &k, &keys,
                                       &pos, &offsets, &q, &rsh, &msk, &lsh, &probes, &nprobes,
                                       &dedup, &radius, &alive, &oq, &op, &od);
    if (!ok) return NULL;
    GETS(ARR(qs, queries, 'u', 8, 0, 1), ARR(al, alive, 'b', 1, 0, 1));
    if (get_perm(&bs, rsh, msk, lsh, &pm, &ntab) < 0 ||
        get_tables(&bs, keys, pos, offsets, dedup, &tb, &dd) < 0 || get_out(&bs, oq, op, od, &o) < 0)
        return failed(&bs);
    if (tb.q != q || ntab != tb.ntab) FAIL(PyExc_ValueError, "tables and permutation disagree");
    if (t_hi < 0) t_hi = ntab;
    if (t_lo < 0 || t_lo >= t_hi || t_hi > ntab) FAIL(PyExc_IndexError, "table range out of bounds");
    if (get_probes(&bs, probes, nprobes, tb.nbuckets, &pr) < 0) return failed(&bs);
    int rc;
    NOGIL(rc = nd_search_tables(start, qs->buf, LEN(qs), k, &tb, &pm, pr, nprobes, dd, radius,
                                al->buf, LEN(al), t_lo, t_hi, &o, &resume));
    return done_two(&bs, rc, o.written, resume);
}

static PyObject *py_search_tables(PyObject *self, PyObject *args) {
    return search_tables_impl(args, 0);
}

static PyObject *py_search_tables_range(PyObject *self, PyObject *args) {
    return search_tables_impl(args, 1);
}

static PyObject *py_scan_range(PyObject *self, PyObject *args) {
    PyObject *queries, *fps, *alive, *oq, *op, *od;
    Py_buffer *qs, *f, *al;
    Py_ssize_t start, k, lo, hi;
    bufs bs = {.n = 0};
    nd_out o;
    int64_t resume;
    if (!PyArg_ParseTuple(args, "nOnOnnOOOO", &start, &queries, &k, &fps, &lo, &hi, &alive, &oq,
                          &op, &od))
        return NULL;
    GETS(ARR(qs, queries, 'u', 8, 0, 1), ARR(f, fps, 'u', 8, 0, 1), ARR(al, alive, 'b', 1, 0, 1));
    if (get_out(&bs, oq, op, od, &o) < 0) return failed(&bs);
    if (lo < 0 || hi > LEN(f) || hi > LEN(al)) FAIL(PyExc_IndexError, "scan range out of bounds");
    NOGIL(nd_scan_range(start, qs->buf, LEN(qs), k, f->buf, lo, hi, al->buf, &o, &resume));
    return done_two(&bs, 0, o.written, resume);
}

static PyObject *py_brute_pairs(PyObject *self, PyObject *args) {
    PyObject *fps, *oi, *oj, *od;
    Py_buffer *f;
    Py_ssize_t start, k;
    bufs bs = {.n = 0};
    nd_out o;
    int64_t resume;
    if (!PyArg_ParseTuple(args, "nOnOOO", &start, &fps, &k, &oi, &oj, &od)) return NULL;
    GETS(ARR(f, fps, 'u', 8, 0, 1));
    if (get_out(&bs, oi, oj, od, &o) < 0) return failed(&bs);
    NOGIL(nd_brute_pairs(start, f->buf, LEN(f), k, &o, &resume));
    return done_two(&bs, 0, o.written, resume);
}

static PyObject *py_join_tables(PyObject *self, PyObject *args) {
    PyObject *keys, *pos, *offsets, *probes, *dedup, *oi, *oj, *od;
    Py_ssize_t start, k, nprobes, radius;
    bufs bs = {.n = 0};
    nd_tables tb;
    nd_out o;
    int64_t resume;
    const int64_t *pr;
    const uint64_t *dd;
    if (!PyArg_ParseTuple(args, "nnOOOOnOnOOO", &start, &k, &keys, &pos, &offsets, &probes,
                          &nprobes, &dedup, &radius, &oi, &oj, &od))
        return NULL;
    if (get_tables(&bs, keys, pos, offsets, dedup, &tb, &dd) < 0 ||
        get_out(&bs, oi, oj, od, &o) < 0 || get_probes(&bs, probes, nprobes, tb.nbuckets, &pr) < 0)
        return failed(&bs);
    NOGIL(nd_join_tables(start, k, &tb, pr, nprobes, dd, radius, &o, &resume));
    return done_two(&bs, 0, o.written, resume);
}

static PyObject *py_join_tables_r0(PyObject *self, PyObject *args) {
    PyObject *keys, *pos, *offsets, *dedup, *oi, *oj, *od;
    Py_ssize_t start, k;
    long long hot;
    bufs bs = {.n = 0};
    nd_tables tb;
    nd_out o;
    int64_t resume;
    const uint64_t *dd;
    if (!PyArg_ParseTuple(args, "nnOOOOLOOO", &start, &k, &keys, &pos, &offsets, &dedup, &hot, &oi,
                          &oj, &od))
        return NULL;
    if (get_tables(&bs, keys, pos, offsets, dedup, &tb, &dd) < 0 || get_out(&bs, oi, oj, od, &o) < 0)
        return failed(&bs);
    NOGIL(nd_join_tables_r0(start, k, &tb, dd, hot, &o, &resume));
    return done_two(&bs, 0, o.written, resume);
}

/* fps, or the rows `positions` of fps (None: all of them, in order), the permutation, and the
 * table t / top bits checked: the inputs top_counts and scatter_top share. */
typedef struct {
    Py_buffer *f;
    const uint32_t *pp;
    int64_t n;
    nd_perm pm;
} top_in;

static int get_top_in(bufs *bs, PyObject *fps, PyObject *positions, PyObject *rsh, PyObject *msk,
                      PyObject *lsh, Py_ssize_t t, Py_ssize_t top, top_in *ti) {
    int64_t ntab;
    Py_buffer *f, *p;
    if (get_arrays(bs, ARRAYS(ARR(f, fps, 'u', 8, 0, 1))) < 0) return -1;
    ti->f = f;
    ti->pp = NULL;
    ti->n = LEN(f);
    if (positions != Py_None) {
        if (get_arrays(bs, ARRAYS(ARR(p, positions, 'u', 4, 0, 1))) < 0) return -1;
        ti->pp = p->buf;
        ti->n = LEN(p);
        for (int64_t i = 0; i < ti->n; i++)
            if (ti->pp[i] >= (uint64_t)LEN(f)) {
                PyErr_SetString(PyExc_IndexError, "position out of bounds");
                return -1;
            }
    }
    if (get_perm(bs, rsh, msk, lsh, &ti->pm, &ntab) < 0) return -1;
    if (t < 0 || t >= ntab || top < 0 || top > 24) {
        PyErr_SetString(PyExc_ValueError, "bad table or top bits");
        return -1;
    }
    return 0;
}

/* top_counts(fps, positions or None, rsh, msk, lsh, t, top, counts) */
static PyObject *py_top_counts(PyObject *self, PyObject *args) {
    PyObject *fps, *positions, *rsh, *msk, *lsh, *counts;
    Py_buffer *c;
    Py_ssize_t t, top;
    bufs bs = {.n = 0};
    top_in ti;
    if (!PyArg_ParseTuple(args, "OOOOOnnO", &fps, &positions, &rsh, &msk, &lsh, &t, &top, &counts))
        return NULL;
    if (get_top_in(&bs, fps, positions, rsh, msk, lsh, t, top, &ti) < 0) return failed(&bs);
    GETS(ARR(c, counts, 'i', 8, 1, 1));
    if (LEN(c) != ((int64_t)1 << top) + 1) FAIL(PyExc_ValueError, "counts must hold 2**top + 1");
    NOGIL(nd_top_counts(ti.f->buf, ti.pp, ti.n, &ti.pm, t, top, c->buf));
    return done_none(&bs, 0);
}

/* scatter_top(fps, positions or None, rsh, msk, lsh, t, top, starts, keys, pos) */
static PyObject *py_scatter_top(PyObject *self, PyObject *args) {
    PyObject *fps, *positions, *rsh, *msk, *lsh, *starts, *keys, *pos;
    Py_buffer *s, *k, *ps;
    Py_ssize_t t, top;
    bufs bs = {.n = 0};
    top_in ti;
    if (!PyArg_ParseTuple(args, "OOOOOnnOOO", &fps, &positions, &rsh, &msk, &lsh, &t, &top,
                          &starts, &keys, &pos))
        return NULL;
    if (get_top_in(&bs, fps, positions, rsh, msk, lsh, t, top, &ti) < 0) return failed(&bs);
    GETS(ARR(s, starts, 'i', 8, 0, 1), ARR(k, keys, 'u', 8, 1, 1), ARR(ps, pos, 'u', 4, 1, 1));
    if (LEN(s) != ((int64_t)1 << top) + 1 || LEN(k) < ti.n || LEN(ps) < ti.n)
        FAIL(PyExc_ValueError, "bad starts or output size");
    int rc;
    NOGIL(rc = nd_scatter_top(ti.f->buf, ti.pp, ti.n, &ti.pm, t, top, s->buf, k->buf, ps->buf));
    return done_none(&bs, rc);
}

static PyObject *py_bucket_segments(PyObject *self, PyObject *args) {
    PyObject *keys, *pos, *starts, *offsets;
    Py_buffer *k, *p, *s, *o;
    Py_ssize_t q, top;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOnnOO", &keys, &pos, &q, &top, &starts, &offsets)) return NULL;
    GETS(ARR(k, keys, 'u', 8, 1, 1), ARR(p, pos, 'u', 4, 1, 1), ARR(s, starts, 'i', 8, 0, 1),
         ARR(o, offsets, 'u', 4, 1, 1));
    if (top < 0 || q < top || q > 32 || LEN(s) != ((int64_t)1 << top) + 1 ||
        LEN(o) != ((int64_t)1 << q) + 1 || LEN(p) != LEN(k))
        FAIL(PyExc_ValueError, "bad q, top, starts or offsets size");
    int rc;
    NOGIL(rc = nd_bucket_segments(k->buf, p->buf, LEN(k), q, top, s->buf, o->buf));
    return done_none(&bs, rc);
}

static PyObject *py_offsets_from_sorted(PyObject *self, PyObject *args) {
    Py_buffer *k, *o;
    Py_ssize_t q;
    bufs bs = {.n = 0};
    if (keys_num_out(&bs, args, &k, &q, &o, 4, "offsets") < 0) return failed(&bs);
    if (q < 0 || q > 32 || LEN(o) < ((int64_t)1 << q) + 1) FAIL(PyExc_ValueError, "offsets too small");
    nd_offsets_from_sorted(k->buf, LEN(k), q, o->buf, LEN(o));
    return done_none(&bs, 0);
}

static PyObject *py_sort_buckets(PyObject *self, PyObject *args) {
    PyObject *keys, *pos, *offsets;
    Py_buffer *k, *p, *o;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOO", &keys, &pos, &offsets)) return NULL;
    GETS(ARR(k, keys, 'u', 8, 1, 1), ARR(p, pos, 'u', 4, 1, 1), ARR(o, offsets, 'u', 4, 0, 1));
    if (LEN(p) != LEN(k) || LEN(o) < 1 || ((uint32_t *)o->buf)[LEN(o) - 1] > LEN(k))
        FAIL(PyExc_ValueError, "keys, pos and offsets disagree");
    int rc;
    NOGIL(rc = nd_sort_buckets(k->buf, p->buf, o->buf, LEN(o) - 1));
    return done_none(&bs, rc);
}

/* expand_pairs(a, b, dist, order, starts, counts, out_i, out_j, out_d): outputs pre-sized. */
static PyObject *py_expand_pairs(PyObject *self, PyObject *args) {
    PyObject *a, *b, *dist, *order, *starts, *counts, *oi, *oj, *od;
    Py_buffer *va, *vb, *vd, *vo, *vs, *vc, *wi, *wj, *wd;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &a, &b, &dist, &order, &starts, &counts, &oi, &oj, &od))
        return NULL;
    GETS(ARR(va, a, 'i', 8, 0, 1), ARR(vb, b, 'i', 8, 0, 1), ARR(vd, dist, 'i', 8, 0, 1),
         ARR(vo, order, 'i', 8, 0, 1), ARR(vs, starts, 'i', 8, 0, 1), ARR(vc, counts, 'i', 8, 0, 1),
         ARR(wi, oi, 'i', 8, 1, 1), ARR(wj, oj, 'i', 8, 1, 1), ARR(wd, od, 'i', 8, 1, 1));
    const int64_t *pa = va->buf, *pb = vb->buf, *pc = vc->buf;
    int64_t ng = LEN(vc), total = 0;
    if (LEN(vs) != ng + 1 || LEN(vb) != LEN(va) || LEN(vd) != LEN(va))
        FAIL(PyExc_ValueError, "pairs or groups disagree in length");
    for (int64_t e = 0; e < LEN(va); e++) {
        if (pa[e] < 0 || pa[e] >= ng || pb[e] < 0 || pb[e] >= ng)
            FAIL(PyExc_IndexError, "group out of range");
        total += pc[pa[e]] * pc[pb[e]];
    }
    for (int64_t g = 0; g < ng; g++) total += pc[g] * (pc[g] - 1) / 2;
    if (LEN(wi) != total || LEN(wj) != total || LEN(wd) != total)
        FAIL(PyExc_ValueError, "outputs must hold exactly %lld pairs", (long long)total);
    NOGIL(nd_expand_pairs(pa, pb, vd->buf, LEN(va), vo->buf, vs->buf, pc, ng, wi->buf, wj->buf, wd->buf));
    return done_none(&bs, 0);
}

#define INDEX_METHODS                                                                       \
    {"search_tables", py_search_tables, METH_VARARGS, "Batched probe search of one run."},  \
    {"search_tables_range", py_search_tables_range, METH_VARARGS,                          \
     "Batched probe search of some tables of one run."},                                   \
    {"scan_range", py_scan_range, METH_VARARGS, "Brute-force scan of store positions."},   \
    {"brute_pairs", py_brute_pairs, METH_VARARGS, "All pairs within k (tiny inputs)."},    \
    {"join_tables", py_join_tables, METH_VARARGS, "Self-join of bucketed tables."},        \
    {"join_tables_r0", py_join_tables_r0, METH_VARARGS, "Self-join, radius 0."},          \
    {"top_counts", py_top_counts, METH_VARARGS, "Group starts on the top key bits."},      \
    {"scatter_top", py_scatter_top, METH_VARARGS, "Scatter permuted keys into groups."},   \
    {"bucket_segments", py_bucket_segments, METH_VARARGS, "Finish bucketing."},            \
    {"offsets_from_sorted", py_offsets_from_sorted, METH_VARARGS, "Bucket starts."},       \
    {"sort_buckets", py_sort_buckets, METH_VARARGS, "Sort each bucket by key."},           \
    {"expand_pairs", py_expand_pairs, METH_VARARGS, "Distinct-value pairs to positions."},
