/* utf8fuzz.decoders._iconv: the iconv adapter's per-call glue
 * (utf8fuzz.decoders.iconv).
 *
 * Through ctypes, the up to six iconv() calls per ill-formed fuzz input (the
 * span search) cost tens of microseconds; here they are made from C and only
 * compact results cross back. glibc's iconv is libc, so it is called through
 * <iconv.h>; the conversion descriptor is opened by the adapter (ctypes) and
 * passed as an integer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glue.h"

/* How to read a target's output: the adapter's OUT_* constants (iconv.py). */
enum { OUT_UTF32LE = 0, OUT_HOST32 = 1, OUT_UTF8 = 2 };

/* An open iconv descriptor passed from Python as an integer. */
static int get_cd(PyObject *o, iconv_t *cd)
{
    void *p;
    if (get_ptr(o, &p))
        return -1;
    if (!p || p == (void *)-1) {
        PyErr_SetString(PyExc_ValueError, "not an open iconv descriptor");
        return -1;
    }
    *cd = (iconv_t)p;
    return 0;
}

/* One iconv() over src[0:n] from the initial state into out (room bytes). Returns
 * the errno (0 when it converted everything) and sets *consumed and *written. */
static int iconv_once(iconv_t cd, const char *src, size_t n, char *out, size_t room,
                      size_t *consumed, size_t *written)
{
    char *in = (char *)src, *o = out;  /* iconv's prototype is not const-correct */
    size_t inleft = n, outleft = room;
    iconv(cd, NULL, NULL, NULL, NULL);  /* back to the initial state */
    errno = 0;
    size_t r = iconv(cd, &in, &inleft, &o, &outleft);
    int e = r == (size_t)-1 ? errno : 0;
    *consumed = (size_t)(in - src);
    *written = (size_t)(o - out);
    return r == (size_t)-1 && e == 0 ? -1 : e;
}

/* The code points glibc wrote. UTF-8 output is read with RFC 2279's bit layout
 * (glibc writes 5- and 6-byte forms for what it accepted); anything else is left
 * to the caller (returns -1). */
static Py_ssize_t out_codepoints(const unsigned char *o, size_t len, int kind,
                                 uint32_t *cps)
{
    Py_ssize_t n = 0;
    if (kind != OUT_UTF8) {
        for (size_t i = 0; i + 4 <= len; i += 4) {
            uint32_t v;
            if (kind == OUT_UTF32LE)
                v = (uint32_t)o[i] | (uint32_t)o[i + 1] << 8 | (uint32_t)o[i + 2] << 16 |
                    (uint32_t)o[i + 3] << 24;
            else
                memcpy(&v, o + i, 4);
            cps[n++] = v;
        }
        return len % 4 ? -1 : n;
    }
    for (size_t i = 0; i < len;) {
        unsigned b = o[i];
        int k = b < 0x80 ? 1 : b < 0xC0 ? 0 : b < 0xE0 ? 2 : b < 0xF0 ? 3
              : b < 0xF8 ? 4 : b < 0xFC ? 5 : b < 0xFE ? 6 : 0;
        if (k == 0 || i + (size_t)k > len)
            return -1;
        uint32_t v = k == 1 ? b : b & (0x7Fu >> k);
        for (int j = 1; j < k; j++) {
            if ((o[i + j] & 0xC0) != 0x80)
                return -1;
            v = v << 6 | (o[i + j] & 0x3F);
        }
        cps[n++] = v;
        i += (size_t)k;
    }
    return n;
}

PyDoc_STRVAR(iconv_run_doc,
"iconv_run(cd, data, kind, search) -> (consumed, errno, end, codepoints)\n\n"
"One iconv() over data from the initial state. errno is 0, EILSEQ, EINVAL or any\n"
"other errno of iconv() (there or in the search), for the caller to raise.\n"
"On EILSEQ at p with search true, end is p plus the longest t in 2..min(6, n-p)\n"
" for which data[p:p+t] alone gives EINVAL, else p + 1; without\n"
"it, -1. codepoints is the output's tuple of ints when errno is 0 (None when the\n"
"UTF-8 output is not RFC 2279-shaped, for the caller to read), else None.\n"
"kind: 0 UTF-32LE/UCS-4LE, 1 host-order 32-bit (WCHAR_T), 2 UTF-8.");

/* One iconv() over data, as iconv_run describes it: *p, *e and *end set, and the
 * code points (a tuple) when it converted everything and C could read them, else
 * None; NULL with an exception set. */
static PyObject *iconv_do(PyObject *cd_obj, PyObject *data, int kind, int search,
                          Py_ssize_t *p_out, int *e_out, Py_ssize_t *end_out, Py_ssize_t *n_out)
{
    iconv_t cd;
    if (get_cd(cd_obj, &cd))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *src = view.buf;
    size_t n = (size_t)view.len;
    size_t room = 8 * n + 16;  /* 6-byte forms to UCS-4 still fit: 4 bytes out per byte in */
    char out_stack[1024];
    char *out = room <= sizeof out_stack ? out_stack : malloc(room);
    PyObject *cps = NULL;
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    size_t p, written;
    int e = iconv_once(cd, src, n, out, room, &p, &written);
    Py_ssize_t end = -1;
    if (e == EILSEQ && search) {
        end = (Py_ssize_t)p + 1;
        size_t tmax = n - p < 6 ? n - p : 6;  /* glibc reads at most 6-byte forms */
        char piece_out[64];
        for (size_t t = 2; t <= tmax; t++) {
            size_t c2, w2;
            int e2 = iconv_once(cd, src + p, t, piece_out, sizeof piece_out, &c2, &w2);
            if (e2 != 0 && e2 != EILSEQ && e2 != EINVAL) {
                e = e2;  /* the caller raises it, as for the first call */
                break;
            }
            if (e2 == EINVAL)
                end = (Py_ssize_t)(p + t);
        }
    }
    if (e == 0) {
        uint32_t cps_stack[256];
        /* at most one code point per output byte */
        uint32_t *buf = written <= 256 ? cps_stack : malloc(written * sizeof *buf + 4);
        if (!buf) {
            PyErr_NoMemory();
            goto done;
        }
        Py_ssize_t nc = out_codepoints((const unsigned char *)out, written, kind, buf);
        if (nc < 0) {
            cps = Py_NewRef(Py_None);
        } else if ((cps = PyTuple_New(nc))) {
            for (Py_ssize_t i = 0; i < nc; i++) {
                PyObject *v = PyLong_FromUnsignedLong(buf[i]);
                if (!v) {
                    Py_CLEAR(cps);
                    break;
                }
                PyTuple_SET_ITEM(cps, i, v);
            }
        }
        if (buf != cps_stack) free(buf);
    } else {
        cps = Py_NewRef(Py_None);
    }
    *p_out = (Py_ssize_t)p;
    *e_out = e;
    *end_out = end;
    *n_out = (Py_ssize_t)n;
done:
    if (out && out != out_stack) free(out);
    PyBuffer_Release(&view);
    return cps;
}

static PyObject *iconv_run(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "expected (cd, data, kind, search)");
        return NULL;
    }
    int kind = (int)PyLong_AsLong(args[2]);
    if (kind == -1 && PyErr_Occurred())
        return NULL;
    int search = PyObject_IsTrue(args[3]);
    if (search < 0)
        return NULL;
    Py_ssize_t p, end, n;
    int e;
    PyObject *cps = iconv_do(args[0], args[1], kind, search, &p, &e, &end, &n);
    if (!cps)
        return NULL;
    PyObject *res = Py_BuildValue("(ninO)", p, e, end, cps);
    Py_DECREF(cps);
    return res;
}

PyDoc_STRVAR(iconv_screen_doc,
"iconv_screen(decoder, kind, data)\n\n"
"utf8fuzz.decoders.iconv.Iconv.screen in C: iconv_run(decoder._cd, data, kind, True)\n"
"as the screen's views - every text view (a tuple) when it converted everything,\n"
"else the strict span and reason - or None (where C could not read the output, on\n"
"another errno, or with the descriptor closed: the full path tells). The descriptor\n"
"is read from the decoder at each call.");

/* Four converters on every fuzz input: as a Python method the screen's frame cost
 * about as much as the conversion. */
static PyObject *iconv_screen(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "expected (decoder, kind, data)");
        return NULL;
    }
    int kind = (int)PyLong_AsLong(args[1]);
    if (kind == -1 && PyErr_Occurred())
        return NULL;
    PyObject *cd = PyObject_GetAttrString(args[0], "_cd");
    Py_ssize_t p, end, n;
    int e;
    PyObject *cps = cd ? iconv_do(cd, args[2], kind, 1, &p, &e, &end, &n) : NULL;
    Py_XDECREF(cd);
    if (!cps)  /* a closed descriptor, a decoder gone: the full path tells (a crash) */
        return screen_failed();
    PyObject *d = NULL, *sp = NULL;
    if (e == 0 && cps != Py_None) {  /* accepted: what it wrote is every text view */
        if ((d = PyDict_New()) &&
            (PyDict_SetItem(d, K_strict, Py_None) < 0 || PyDict_SetItem(d, K_reason, Py_None) < 0 ||
             PyDict_SetItem(d, K_spans, S_no_spans) < 0 || PyDict_SetItem(d, K_replace, cps) < 0 ||
             PyDict_SetItem(d, K_ignore, cps) < 0 || PyDict_SetItem(d, K_escape, cps) < 0))
            Py_CLEAR(d);
    } else if (e == EINVAL || e == EILSEQ) {
        if ((sp = span(p, e == EINVAL ? n : end)) && (d = PyDict_New()) &&
            (PyDict_SetItem(d, K_strict, sp) < 0 ||
             PyDict_SetItem(d, K_reason, e == EINVAL ? S_truncated : S_illegal) < 0))
            Py_CLEAR(d);
        Py_XDECREF(sp);
    } else {
        d = Py_NewRef(Py_None);  /* the full path decides, or raises it: a crash */
    }
    Py_DECREF(cps);
    return d;
}

PyDoc_STRVAR(iconv_convert_doc,
"iconv_convert(cd, data) -> (consumed, errno, output bytes)\n\n"
"One iconv() over data from the initial state; errno 0 when all converted.");

static PyObject *iconv_convert(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    iconv_t cd;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "expected (cd, data)");
        return NULL;
    }
    if (get_cd(args[0], &cd))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[1], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    size_t n = (size_t)view.len, room = 8 * n + 16, p, written;
    char *out = malloc(room);
    PyObject *res = NULL;
    if (!out) {
        PyErr_NoMemory();
    } else {
        int e = iconv_once(cd, view.buf, n, out, room, &p, &written);
        res = Py_BuildValue("(niy#)", (Py_ssize_t)p, e, out, (Py_ssize_t)written);
        free(out);
    }
    PyBuffer_Release(&view);
    return res;
}

/* ---- the module ----------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"iconv_run", (PyCFunction)(void (*)(void))iconv_run, METH_FASTCALL, iconv_run_doc},
    {"iconv_screen", (PyCFunction)(void (*)(void))iconv_screen, METH_FASTCALL, iconv_screen_doc},
    {"iconv_convert", (PyCFunction)(void (*)(void))iconv_convert, METH_FASTCALL,
     iconv_convert_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_iconv",
    "The iconv adapter's per-call glue (see utf8fuzz.decoders.iconv).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__iconv(void)
{
    if (glue_init() < 0)
        return NULL;
    return PyModule_Create(&module);
}
