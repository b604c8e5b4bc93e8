/* (a, b) - or (a, b, x) - as Py_BuildValue("(nn)") or ("(nnO)") makes it, without
 * parsing a format. The C extensions build such a tuple for every error span of
 * every fuzz input, and the format parsing cost several times the tuple
 * (callgrind: 7% of the fuzz loop's instructions). Shared by the fast path, the
 * reference walk and the ICU/iconv glue; include after Python.h. */
#ifndef UTF8FUZZ_SMALL_TUPLES_H
#define UTF8FUZZ_SMALL_TUPLES_H

/* A new reference; x (may be NULL) is borrowed. */
static inline PyObject *ssize_tuple(Py_ssize_t a, Py_ssize_t b, PyObject *x) {
    PyObject *t = PyTuple_New(x ? 3 : 2);
    if (!t) return NULL;
    PyObject *ia = PyLong_FromSsize_t(a), *ib = ia ? PyLong_FromSsize_t(b) : NULL;
    if (!ib) {
        Py_XDECREF(ia);
        Py_DECREF(t);
        return NULL;
    }
    PyTuple_SET_ITEM(t, 0, ia);
    PyTuple_SET_ITEM(t, 1, ib);
    if (x) {
        Py_INCREF(x);
        PyTuple_SET_ITEM(t, 2, x);
    }
    return t;
}

#endif
