/* utf8fuzz.fast._fast.fast_screen: the fast path adapter's whole screen
 * (utf8fuzz.decoders.fast), _Fast.run's token derivation and checks in C.
 *
 * The fast path differs from its reference on almost no input, and its full
 * outcome made its tokens in Python, per sampled input, at ten times the cost of
 * its six library calls; here the same derivation gives every view on every input.
 * It calls the fast path's functions it is handed (the adapter's own, so a profile's
 * adapter chooses them), not the kernels directly: what it screens is what run()
 * decodes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../profiles/packed_tokens.h"
#include "../decoders/glue.h"
#include "screen.h"

static PyObject *S_reserved, *S_surrogateescape, *S_end_of_data;

int fast_screen_init(void)
{
    if (glue_init() < 0)
        return -1;
    if ((!S_reserved && !(S_reserved = PyUnicode_InternFromString("reserved"))) ||
        (!S_surrogateescape &&
         !(S_surrogateescape = PyUnicode_InternFromString("surrogateescape"))) ||
        (!S_end_of_data &&
         !(S_end_of_data = PyUnicode_InternFromString("unexpected end of data"))))
        return -1;
    return 0;
}

/* A span (start, end) as two Py_ssize_t; 0 on success, -1 when o is not one. */
static int read_span(PyObject *o, Py_ssize_t *a, Py_ssize_t *b)
{
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) < 2)
        return -1;
    *a = PyLong_AsSsize_t(PyTuple_GET_ITEM(o, 0));
    if (*a == -1 && PyErr_Occurred())
        return -1;
    *b = PyLong_AsSsize_t(PyTuple_GET_ITEM(o, 1));
    return *b == -1 && PyErr_Occurred() ? -1 : 0;
}

enum { FR_NONE = 0, FR_ILLEGAL = PR_ILLEGAL, FR_TRUNCATED = PR_TRUNCATED, FR_RESERVED = 3 };

/* _Fast._strict: the first error's span and reason (FR_*) from strict(data), checked
 * against validate(data) when there is one. Returns 1 with the values; 0 when the
 * two disagree or strict gave something else (the full outcome tells); -1 with an
 * exception set. */
static int fast_strict(PyObject *strict, PyObject *validate, PyObject *data, int has_reserved,
                       Py_ssize_t *a, Py_ssize_t *b, int *reason)
{
    PyObject *first = PyObject_CallOneArg(strict, data);
    if (!first)
        return -1;
    int ok = 1;
    *reason = FR_NONE;
    if (first != Py_None) {
        if (read_span(first, a, b) < 0 || PyTuple_GET_SIZE(first) != 3 ||
            !PyUnicode_Check(PyTuple_GET_ITEM(first, 2))) {
            ok = 0;
        } else {
            PyObject *why = PyTuple_GET_ITEM(first, 2);
            *reason = PyUnicode_Compare(why, S_end_of_data) == 0 ? FR_TRUNCATED
                      : has_reserved && PyUnicode_CompareWithASCIIString(
                            why, "reserved sequence (FE/FF)") == 0 ? FR_RESERVED
                      : FR_ILLEGAL;
        }
    }
    if (ok && validate != Py_None) {
        PyObject *v = PyObject_CallOneArg(validate, data);
        if (!v) {
            Py_DECREF(first);
            return -1;
        }
        Py_ssize_t va, vb;
        if (v == Py_None)
            ok = first == Py_None;
        else
            ok = first != Py_None && read_span(v, &va, &vb) == 0 &&
                 PyTuple_GET_SIZE(v) == 2 && va == *a && vb == *b;
        Py_DECREF(v);
    }
    Py_DECREF(first);
    if (PyErr_Occurred())
        return -1;
    return ok;
}

/* A text view as the fast path gives it: a str, or (a Corrected UTF-8 text above
 * U+10FFFF) an array of 4-byte code points. */
typedef struct {
    PyObject *obj;
    Py_buffer buf; /* the array's, when obj is not a str */
    int kind;
    const void *data;
    Py_ssize_t len;
} Units;

static Py_UCS4 unit_at(const Units *u, Py_ssize_t i)
{
    return u->kind ? PyUnicode_READ(u->kind, u->data, i) : ((const uint32_t *)u->data)[i];
}

/* Reads what text(data, mode) gave, else array(data, mode) when text gave None and
 * there is an array function. Returns 1, 0 when it is neither a str nor an array of
 * 4-byte items (the full outcome tells), -1 with an exception set. */
static int get_units(PyObject *text, PyObject *array, PyObject *data, PyObject *mode, Units *u)
{
    PyObject *targs[2] = {data, mode};
    if (!(u->obj = PyObject_Vectorcall(text, targs, 2, NULL)))
        return -1;
    if (PyUnicode_Check(u->obj)) {
        u->kind = PyUnicode_KIND(u->obj);
        u->data = PyUnicode_DATA(u->obj);
        u->len = PyUnicode_GET_LENGTH(u->obj);
        return 1;
    }
    if (u->obj != Py_None || array == Py_None)
        return 0;
    Py_SETREF(u->obj, PyObject_Vectorcall(array, targs, 2, NULL));
    if (!u->obj)
        return -1;
    if (PyObject_GetBuffer(u->obj, &u->buf, PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    if (u->buf.itemsize != 4 || u->buf.len % 4) {
        PyBuffer_Release(&u->buf);
        return 0;
    }
    u->kind = 0;
    u->data = u->buf.buf;
    u->len = u->buf.len / 4;
    return 1;
}

static void units_release(Units *u)
{
    if (u->obj && !u->kind && u->data)
        PyBuffer_Release(&u->buf);
    Py_XDECREF(u->obj);
}

/* A text view for the screen: the str itself, or the array's code points as the
 * tuple of ints Outcome.view gives. */
static PyObject *units_view(const Units *u)
{
    if (u->kind)
        return Py_NewRef(u->obj);
    PyObject *t = PyTuple_New(u->len);
    for (Py_ssize_t i = 0; t && i < u->len; i++) {
        PyObject *v = PyLong_FromUnsignedLong(unit_at(u, i));
        if (!v)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

const char fast_screen_doc[] =
"fast_screen(strict, validate, error_spans, text, array, lengths, reserved, data)\n\n"
"utf8fuzz.decoders.fast._Fast.run's tokens and checks, in C, as a whole screen: the\n"
"fast path's own functions give the first error (strict; validate, or None), the\n"
"error spans and the replace, ignore and surrogateescape texts (text(data, errors), a\n"
"str; where it says None, array(data, errors), code points in 4-byte items, or None\n"
"for no such function); lengths[b] is the length a lead byte b begins (0: none),\n"
"reserved[b] is 1 where a span starting with b is a reserved unit. Returns every\n"
"view, tokens packed (as utf8fuzz.decoders._icu.icu_screen does); or None where run()\n"
"would not build its outcome from tokens.";

PyObject *fast_screen(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8 || !PyBytes_Check(args[5]) || PyBytes_GET_SIZE(args[5]) != 256 ||
        !PyBytes_Check(args[6]) || PyBytes_GET_SIZE(args[6]) != 256 || !PyBytes_Check(args[7])) {
        PyErr_SetString(PyExc_TypeError, "expected (strict, validate, error_spans, text, "
                                         "array, 256 lengths, 256 reserved flags, bytes)");
        return NULL;
    }
    PyObject *strict = args[0], *validate = args[1], *data = args[7];
    const unsigned char *len_of = (const unsigned char *)PyBytes_AS_STRING(args[5]);
    const unsigned char *reserved = (const unsigned char *)PyBytes_AS_STRING(args[6]);
    int has_reserved = memchr(reserved, 1, 256) != NULL;
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    PyObject *spans = NULL, *packed = NULL, *res = NULL, *views[3] = {NULL, NULL, NULL};
    PyObject *span_tuple = NULL, *strict_span = NULL;
    Units texts[3] = {{0}, {0}, {0}}; /* replace, ignore, escape */
    Py_ssize_t sa = 0, sb = 0;
    int sreason, got = fast_strict(strict, validate, data, has_reserved, &sa, &sb, &sreason);
    if (got <= 0)
        return got < 0 ? NULL : Py_NewRef(Py_None);
    if (!(spans = PyObject_CallOneArg(args[2], data)))
        return NULL;
    PyObject *const modes[3] = {K_replace, K_ignore, S_surrogateescape};
    for (int v = 0; v < 3; v++) {
        int r = get_units(args[3], args[4], data, modes[v], &texts[v]);
        if (r < 0) goto done;
        if (r == 0) goto none;
    }
    if (!PyList_Check(spans))
        goto none;
    const Units *chars = &texts[0];
    Py_ssize_t nchars = chars->len, nspans = PyList_GET_SIZE(spans);
    /* at most one token per byte */
    if (!(packed = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(packed_tok))))
        goto done;
    packed_tok *tk = (packed_tok *)PyBytes_AS_STRING(packed);
    Py_ssize_t nt = 0, pos = 0, k = 0;
    for (Py_ssize_t i = 0; i <= nspans; i++) {
        Py_ssize_t a = n, b = n;
        if (i < nspans && read_span(PyList_GET_ITEM(spans, i), &a, &b) < 0) {
            if (PyErr_Occurred()) goto done;
            goto none;
        }
        while (pos < a) {  /* characters, each as long as its lead byte says */
            Py_ssize_t size = pos < n ? len_of[d[pos]] : 0;
            if (size == 0 || pos + size > a || k >= nchars)
                goto none;
            tk[nt++] = (packed_tok){PK_CHAR, pos, pos + size, (int64_t)unit_at(chars, k)};
            k++;
            pos += size;
        }
        if (pos != a || (a == n && b == n))
            break;
        if (k >= nchars || unit_at(chars, k) != 0xFFFD || b <= a || a >= n || b > n)
            goto none;
        k++;
        int64_t kind = reserved[d[a]] ? PK_RESERVED : PK_ERROR, why = PR_ILLEGAL;
        if (kind == PK_RESERVED) {
            why = PR_NONE;
        } else if (b >= n) {  /* only an error reaching the end can be truncated */
            PyObject *tail = PyBytes_FromStringAndSize((const char *)d + a, n - a);
            Py_ssize_t ta, tb;
            int treason, tgot = tail ? fast_strict(strict, validate, tail, has_reserved, &ta,
                                                   &tb, &treason) : -1;
            Py_XDECREF(tail);
            if (tgot < 0) goto done;
            if (tgot == 0 || treason == FR_RESERVED) goto none;
            why = treason == FR_TRUNCATED ? PR_TRUNCATED : PR_ILLEGAL;
        }
        tk[nt++] = (packed_tok){kind | why << 8, a, b, -1};
        pos = b;
    }
    if (pos != n || k != nchars)
        goto none;
    /* the direct views against the ones the tokens give (_Fast.run's checks) */
    Py_ssize_t first = -1;
    for (Py_ssize_t i = 0; i < nt && first < 0; i++)
        if (tk[i].kind_reason & 0xFF) first = i;
    if (first < 0 ? sreason != FR_NONE
                  : sreason == FR_NONE || tk[first].start != sa || tk[first].end != sb ||
                        ((tk[first].kind_reason & 0xFF) == PK_RESERVED
                             ? sreason != FR_RESERVED
                             : sreason != (tk[first].kind_reason >> 8)))
        goto none;
    for (int v = 1; v < 3; v++) {  /* ignore, then escape */
        const Units *t = &texts[v];
        Py_ssize_t m = 0;
        for (Py_ssize_t i = 0; i < nt; i++) {
            if ((tk[i].kind_reason & 0xFF) == PK_CHAR) {
                if (m >= t->len || unit_at(t, m) != (Py_UCS4)tk[i].value) goto none;
                m++;
            } else if (v == 2) {
                for (Py_ssize_t x = tk[i].start; x < tk[i].end; x++, m++)
                    if (m >= t->len || unit_at(t, m) != 0xDC00u + d[x]) goto none;
            }
        }
        if (m != t->len)
            goto none;
    }
    if (_PyBytes_Resize(&packed, nt * (Py_ssize_t)sizeof(packed_tok)) < 0)
        goto done;
    if (!(span_tuple = PyList_AsTuple(spans)))
        goto done;
    if (first < 0)
        strict_span = Py_NewRef(Py_None);
    else if (!(strict_span = span(sa, sb)))
        goto done;
    for (int v = 0; v < 3; v++)
        if (!(views[v] = units_view(&texts[v])))
            goto done;
    PyObject *reason = sreason == FR_NONE ? Py_None
                       : sreason == FR_TRUNCATED ? S_truncated
                       : sreason == FR_ILLEGAL ? S_illegal : S_reserved;
    if (!(res = PyDict_New()) || PyDict_SetItem(res, K_tokens, packed) < 0 ||
        PyDict_SetItem(res, K_strict, strict_span) < 0 ||
        PyDict_SetItem(res, K_spans, span_tuple) < 0 ||
        PyDict_SetItem(res, K_reason, reason) < 0 ||
        PyDict_SetItem(res, K_replace, views[0]) < 0 ||
        PyDict_SetItem(res, K_ignore, views[1]) < 0 ||
        PyDict_SetItem(res, K_escape, views[2]) < 0)
        Py_CLEAR(res);
    goto done;
none:
    res = Py_NewRef(Py_None);
done:
    Py_XDECREF(spans);
    Py_XDECREF(packed);
    Py_XDECREF(span_tuple);
    Py_XDECREF(strict_span);
    for (int v = 0; v < 3; v++) {
        Py_XDECREF(views[v]);
        units_release(&texts[v]);
    }
    return res;
}
