/* utf8fuzz.fast._fast: a UTF-8 decoder that is a drop-in for bytes.decode("utf-8"),
 * and a Corrected UTF-8 decoder and encoder.
 *
 * Decoding valid input is three steps (see simd.c for the kernels):
 *   1. one validating pass that also counts continuation bytes and finds the
 *      largest lead byte, which give the number of code points and the PEP 393
 *      kind (a lead >= F0 means U+10000 or above, >= C4 means U+0100 or above);
 *   2. one PyUnicode_New of exactly that size and kind;
 *   3. one transcoding kernel for that kind.
 * Invalid input takes the same route up to the first error, then a scalar
 * maximal-subpart walk (Unicode's "U+FFFD substitution of maximal subparts", which
 * CPython follows), so that errors, spans and reasons are CPython's exactly.
 *
 * Error handlers other than strict, replace, ignore and surrogateescape are
 * CPython's business: for those, invalid input is handed to PyUnicode_DecodeUTF8,
 * so that e.g. an unknown handler raises LookupError exactly when CPython does
 * (only when there is an error to handle).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include "fast.h"
#include "screen.h"
#include "../small_tuples.h"

/* In auto mode, inputs shorter than this take the scalar path: a 64-byte SIMD block
 * costs more than it saves. A forced path is used for every length, so that the
 * tests reach its tail handling. */
#define SHORT_INPUT 64

static const char *const PATH_NAMES[PATH_COUNT] = {"scalar", "sse2", "ssse3", "avx2", "avx512"};
static const fast_path *g_path = &fast_scalar;
static int g_path_id = PATH_SCALAR;
static int g_forced = 0;
static PyObject *g_array_type = NULL;

static const fast_path *path_for(size_t n) {
    return (!g_forced && n < SHORT_INPUT) ? &fast_scalar : g_path;
}

/* A scratch buffer kept between calls. Temporary buffers of a few hundred KiB
 * are otherwise returned to the OS by malloc's trimming and faulted in again on
 * every call, which can cost more than the decoding. The GIL guards it; a caller
 * takes it (leaving NULL, so that a re-entrant call - a finalizer run by an
 * allocation - gets its own) and gives it back. */
#define SCRATCH_KEEP ((size_t)8 << 20)
static void *g_scratch = NULL;
static size_t g_scratch_size = 0;

static void *scratch_take(size_t size, size_t *got) {
    if (g_scratch && g_scratch_size >= size) {
        void *p = g_scratch;
        *got = g_scratch_size;
        g_scratch = NULL;
        g_scratch_size = 0;
        return p;
    }
    *got = size;
    return PyMem_Malloc(size ? size : 1);
}

static void scratch_give(void *p, size_t size) {
    if (size <= SCRATCH_KEEP && size > g_scratch_size) {
        PyMem_Free(g_scratch);
        g_scratch = p;
        g_scratch_size = size;
    } else {
        PyMem_Free(p);
    }
}

enum { H_STRICT, H_REPLACE, H_IGNORE, H_ESCAPE, H_OTHER };

static int handler_of(const char *errors) {
    if (errors == NULL || strcmp(errors, "strict") == 0) return H_STRICT;
    if (strcmp(errors, "replace") == 0) return H_REPLACE;
    if (strcmp(errors, "ignore") == 0) return H_IGNORE;
    if (strcmp(errors, "surrogateescape") == 0) return H_ESCAPE;
    return H_OTHER;
}

static Py_UCS4 maxchar_of(unsigned maxb) {
    return maxb < 0x80 ? 0x7F : maxb < 0xC4 ? 0xFF : maxb < 0xF0 ? 0xFFFF : 0x10FFFF;
}

/* CPython's reasons (Objects/unicodeobject.c, unicode_decode_utf8). */
static const char *u8_reason(uint8_t lead, int kind) {
    if (kind == 2) return "unexpected end of data";
    if (lead < 0xC2 || lead > 0xF4) return "invalid start byte";
    return "invalid continuation byte";
}

static int get_buffer(PyObject *obj, Py_buffer *view) {
    return PyObject_GetBuffer(obj, view, PyBUF_SIMPLE);
}

static void raise_decode_error(const char *encoding, const uint8_t *s, size_t n, size_t a,
                               size_t b, const char *reason) {
    PyObject *exc = PyUnicodeDecodeError_Create(encoding, (const char *)s, (Py_ssize_t)n,
                                                (Py_ssize_t)a, (Py_ssize_t)b, reason);
    if (exc) {
        PyErr_SetObject(PyExc_UnicodeDecodeError, exc);
        Py_DECREF(exc);
    }
}

static void raise_changed(void) {
    PyErr_SetString(PyExc_RuntimeError,
                    "utf8fuzz.fast: the input changed while it was being decoded "
                    "(or the validation and the transcoding disagree)");
}

/* A (start, end) pair (small_tuples.h). */
static PyObject *span_pair(size_t a, size_t b) {
    return ssize_tuple((Py_ssize_t)a, (Py_ssize_t)b, NULL);
}

/* Appends (a, b) to list: 0, or -1 with an exception set. */
static int append_span(PyObject *list, size_t a, size_t b) {
    PyObject *t = span_pair(a, b);
    int r = t ? PyList_Append(list, t) : -1;
    Py_XDECREF(t);
    return r;
}

/* The first error at or after token boundary i: 0 and its span and kind, or -1 with
 * SystemError when there is none (the SIMD validation said there was). */
static int find_error(const uint8_t *s, size_t n, size_t i, size_t *a, size_t *b, int *kind) {
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t len;
        int k = u8_token(s, n, i, &cp, &len);
        if (k) {
            *a = i;
            *b = i + len;
            *kind = k;
            return 0;
        }
        i += len;
    }
    PyErr_Format(PyExc_SystemError,
                 "utf8fuzz.fast: the %s path reported an error the scalar walk does not find",
                 g_path->name);
    return -1;
}

/* -- unicode: decode -------------------------------------------------------------- */

/* Transcode valid s[a:b) into kind `kind` at out[o:cap); -1 when the kernel stopped
 * short (a changed buffer), else the new o. */
static Py_ssize_t transcode(const fast_path *fp, int kind, const uint8_t *s, size_t b, size_t a,
                            void *out, size_t o, size_t cap) {
    size_t pi = a, r;
    if (kind == PyUnicode_1BYTE_KIND)
        r = fp->to_ucs1(s, b, a, (uint8_t *)out, o, cap, &pi);
    else if (kind == PyUnicode_2BYTE_KIND)
        r = fp->to_ucs2(s, b, a, (uint16_t *)out, o, cap, &pi);
    else
        r = fp->to_ucs4(s, b, a, (uint32_t *)out, o, cap, &pi);
    return pi == b ? (Py_ssize_t)r : -1;
}

static PyObject *decode_valid(const fast_path *fp, const uint8_t *s, size_t n, const u8stats *st) {
    size_t count = n - st->ncont;
    Py_UCS4 maxc = maxchar_of(st->maxb);
    PyObject *u = PyUnicode_New((Py_ssize_t)count, maxc);
    if (!u) return NULL;
    if (maxc == 0x7F) {
        memcpy(PyUnicode_DATA(u), s, n); /* ASCII: the bytes are the string */
        return u;
    }
    Py_ssize_t o = transcode(fp, PyUnicode_KIND(u), s, n, 0, PyUnicode_DATA(u), 0, count);
    if (o != (Py_ssize_t)count) {
        Py_DECREF(u);
        raise_changed();
        return NULL;
    }
    return u;
}

/* The tokens of s[i:n) with an error handler, as code points into out (room for
 * n - i: no token is shorter than a byte, nor gives more code points than bytes).
 * Returns the count and sets *maxc. */
static size_t walk_with_handler(const fast_path *fp, const uint8_t *s, size_t n, size_t i,
                                uint32_t *out, int h, Py_UCS4 *maxc) {
    size_t o = 0, cap = n - i;
    uint32_t mx = 0;
    while (i < n) {
        uint32_t cp;
        size_t len;
        if (s[i] < 0x80) {
            /* Runs between errors are short: copy inline, go SIMD only for long ones. */
            size_t i0 = i;
            while (i < n && s[i] < 0x80 && i - i0 < 16) out[o++] = s[i++];
            if (i - i0 == 16) i = fp->ascii32(s, n, i, out, &o, cap);
            if (mx < 0x7F) mx = 0x7F; /* as good as the run's true maximum for the kind */
            continue;
        }
        int k = u8_token(s, n, i, &cp, &len);
        if (k == 0) {
            out[o++] = cp;
            if (cp > mx) mx = cp;
        } else if (h == H_REPLACE) {
            out[o++] = 0xFFFD;
            if (mx < 0xFFFD) mx = 0xFFFD;
        } else if (h == H_ESCAPE) {
            for (size_t q = 0; q < len; q++) out[o++] = 0xDC00 + s[i + q];
            if (mx < 0xDCFF) mx = 0xDCFF;
        }
        i += len;
    }
    *maxc = mx;
    return o;
}

/* s[0:a) is valid and s[a] starts an error: the prefix goes through the kernels
 * straight into the str, the rest through one scalar walk into a UCS4 buffer that
 * is then narrowed into the str (one allocation of the str, of the right kind). */
static PyObject *decode_with_handler(const fast_path *fp, const uint8_t *s, size_t n, size_t a,
                                     int h) {
    u8stats st = {0, 0};
    size_t r;
    if (a > 0 && !fp->scan(s, a, &st, &r)) {
        raise_changed();
        return NULL;
    }
    if (n - a > (size_t)PY_SSIZE_T_MAX / 4) return PyErr_NoMemory();
    size_t tmp_size;
    uint32_t *tmp = scratch_take((n - a) * 4, &tmp_size);
    if (!tmp) return PyErr_NoMemory();
    Py_UCS4 rest_max, maxc = a ? maxchar_of(st.maxb) : 0;
    size_t prefix = a - st.ncont;
    size_t rest = walk_with_handler(fp, s, n, a, tmp, h, &rest_max);
    if (rest_max > maxc) maxc = rest_max; /* PyUnicode_New reads only the kind from it */
    PyObject *u = PyUnicode_New((Py_ssize_t)(prefix + rest), maxc);
    if (!u) {
        scratch_give(tmp, tmp_size);
        return NULL;
    }
    int kind = PyUnicode_KIND(u);
    void *data = PyUnicode_DATA(u);
    Py_ssize_t o = 0;
    if (a > 0) o = transcode(fp, kind, s, a, 0, data, 0, prefix);
    if (o != (Py_ssize_t)prefix) {
        scratch_give(tmp, tmp_size);
        Py_DECREF(u);
        raise_changed();
        return NULL;
    }
    if (kind == PyUnicode_1BYTE_KIND) {
        uint8_t *d = (uint8_t *)data + prefix;
        for (size_t k = 0; k < rest; k++) d[k] = (uint8_t)tmp[k];
    } else if (kind == PyUnicode_2BYTE_KIND) {
        uint16_t *d = (uint16_t *)data + prefix;
        for (size_t k = 0; k < rest; k++) d[k] = (uint16_t)tmp[k];
    } else {
        memcpy((uint32_t *)data + prefix, tmp, rest * 4);
    }
    scratch_give(tmp, tmp_size);
    return u;
}

static PyObject *decode_buf(const uint8_t *s, size_t n, const char *errors) {
    int h = handler_of(errors);
    if (n == 0) return PyUnicode_New(0, 0);
    const fast_path *fp = path_for(n);
    u8stats st;
    size_t restart, a, b;
    int kind;
    if (fp->scan(s, n, &st, &restart)) return decode_valid(fp, s, n, &st);
    if (find_error(s, n, restart, &a, &b, &kind) < 0) return NULL;
    switch (h) {
    case H_STRICT:
        raise_decode_error("utf-8", s, n, a, b, u8_reason(s[a], kind));
        return NULL;
    case H_OTHER:
        return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, errors);
    default:
        return decode_with_handler(fp, s, n, a, h);
    }
}

PyDoc_STRVAR(decode_doc,
"decode(data, errors='strict') -> str\n\n"
"Decode UTF-8 exactly as bytes(data).decode('utf-8', errors): the same str, and on\n"
"error the same UnicodeDecodeError (start, end, reason). data is any contiguous\n"
"buffer. strict, replace, ignore and surrogateescape run here; any other handler\n"
"is passed to CPython's decoder when the input has an error.");

static PyObject *fast_decode(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"data", "errors", NULL};
    PyObject *obj;
    const char *errors = NULL;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s:decode", kwlist, &obj, &errors)) return NULL;
    Py_buffer view;
    if (get_buffer(obj, &view) < 0) return NULL;
    PyObject *r = decode_buf((const uint8_t *)view.buf, (size_t)view.len, errors);
    PyBuffer_Release(&view);
    return r;
}

PyDoc_STRVAR(validate_doc,
"validate(data) -> None | (start, end)\n\n"
"None when data is well-formed UTF-8 (Corrigendum #1, Table 3.1B), else the\n"
"first error's span as CPython's UnicodeDecodeError gives it.");

/* validate and first_error: the scan and the walk that decode_buf runs before it
 * raises, the first error handed back (with CPython's reason when `reason`). */
static PyObject *u8_first_error_obj(PyObject *obj, int reason) {
    Py_buffer view;
    if (get_buffer(obj, &view) < 0) return NULL;
    const uint8_t *s = view.buf;
    size_t n = (size_t)view.len, restart, a, b;
    u8stats st;
    int kind;
    PyObject *r = NULL;
    if (path_for(n)->scan(s, n, &st, &restart))
        r = Py_NewRef(Py_None);
    else if (find_error(s, n, restart, &a, &b, &kind) == 0)
        r = reason ? Py_BuildValue("(nns)", (Py_ssize_t)a, (Py_ssize_t)b, u8_reason(s[a], kind))
                   : Py_BuildValue("(nn)", (Py_ssize_t)a, (Py_ssize_t)b);
    PyBuffer_Release(&view);
    return r;
}

static PyObject *fast_validate(PyObject *self, PyObject *obj) {
    (void)self;
    return u8_first_error_obj(obj, 0);
}

PyDoc_STRVAR(first_error_doc,
"first_error(data) -> None | (start, end, reason)\n\n"
"What decode(data) in strict mode raises, without raising: None when data is\n"
"well-formed UTF-8, else the UnicodeDecodeError's start, end and reason.");

static PyObject *fast_first_error(PyObject *self, PyObject *obj) {
    (void)self;
    return u8_first_error_obj(obj, 1);
}

PyDoc_STRVAR(error_spans_doc,
"error_spans(data) -> list[(start, end)]\n\n"
"Every error's span under the maximal-subpart policy, in order.");

static PyObject *fast_error_spans(PyObject *self, PyObject *obj) {
    (void)self;
    Py_buffer view;
    if (get_buffer(obj, &view) < 0) return NULL;
    const uint8_t *s = view.buf;
    size_t n = (size_t)view.len, p = 0;
    PyObject *out = PyList_New(0);
    while (out && p < n) {
        size_t restart, a, b;
        u8stats st;
        int kind;
        if (path_for(n - p)->scan(s + p, n - p, &st, &restart)) break;
        if (find_error(s + p, n - p, restart, &a, &b, &kind) < 0) {
            Py_CLEAR(out);
            break;
        }
        if (append_span(out, p + a, p + b) < 0) {
            Py_CLEAR(out);
            break;
        }
        p += b;
    }
    PyBuffer_Release(&view);
    return out;
}

/* -- Corrected UTF-8 ---------------------------------------------------------------- */

/* Sequence length by lead byte ("Putting it all together"): 0 for a continuation
 * byte, 7 for the reserved FE/FF. */
static uint8_t C8_LEN[256];

enum { C8_CHAR, C8_ILLEGAL, C8_TRUNCATED, C8_RESERVED };

/* One Corrected UTF-8 token at s[i]. Every complete sequence is well-formed, so the
 * only errors are lone continuation bytes and sequences cut short; a reserved unit
 * runs from FE/FF to the next recognized lead byte (00..7F, C0..FD). */
static inline int c8_token(const uint8_t *s, size_t n, size_t i, uint32_t *cp, size_t *len) {
    uint8_t b = s[i];
    unsigned L = C8_LEN[b];
    if (L == 1) {
        *cp = b;
        *len = 1;
        return C8_CHAR;
    }
    if (L == 0) {
        *len = 1;
        return C8_ILLEGAL;
    }
    if (L == 7) {
        size_t j = i + 1;
        while (j < n && (is_cont(s[j]) || s[j] >= 0xFE)) j++;
        *len = j - i;
        return C8_RESERVED;
    }
    size_t j = i + 1;
    uint32_t v = b & (0x7F >> L);
    while (j < i + L && j < n && is_cont(s[j])) v = (v << 6) | (s[j++] & 0x3F);
    if (j < i + L) {
        *len = j - i;
        return j == n ? C8_TRUNCATED : C8_ILLEGAL;
    }
    /* the offsets of the table's rows */
    switch (L) {
    case 2: v += 160; break;
    case 3: v += v >= 0xCF60 ? 4256 : 2208; break; /* EC BD A0 starts the E000 row */
    case 4: v += 69792; break;
    case 5: v += 2166944; break;
    default: v += 69275808; break;
    }
    *cp = v;
    *len = L;
    return C8_CHAR;
}

static const char *c8_reason(const uint8_t *s, size_t a, int k) {
    switch (k) {
    case C8_TRUNCATED: return "unexpected end of data";
    case C8_RESERVED: return "reserved sequence (FE/FF)";
    default: return C8_LEN[s[a]] == 0 ? "invalid start byte" : "invalid continuation byte";
    }
}

static int corrected_handler(const char *errors) {
    int h = handler_of(errors);
    if (h != H_OTHER) return h;
    PyObject *handler = PyCodec_LookupError(errors); /* LookupError when unknown */
    if (!handler) return -1;
    Py_DECREF(handler);
    PyErr_Format(PyExc_ValueError,
                 "decode_corrected supports the error handlers strict, replace, ignore and "
                 "surrogateescape, not '%s'",
                 errors);
    return -1;
}

static PyObject *u32_array(const uint32_t *buf, size_t count) {
    PyObject *arr = PyObject_CallFunction(g_array_type, "s", "I");
    if (!arr) return NULL;
    if (count) {
        PyObject *mv = PyMemoryView_FromMemory((char *)buf, (Py_ssize_t)(count * 4), PyBUF_READ);
        PyObject *r = mv ? PyObject_CallMethod(arr, "frombytes", "O", mv) : NULL;
        Py_XDECREF(mv);
        if (!r) {
            Py_DECREF(arr);
            return NULL;
        }
        Py_DECREF(r);
    }
    return arr;
}

PyDoc_STRVAR(decode_corrected_doc,
"decode_corrected(data, errors='strict') -> array('I')\n\n"
"Decode Corrected UTF-8 to code points (up to U+8421109F), as the corrected\n"
"reference does. A reserved FE/FF unit has no code point: strict raises\n"
"UnicodeDecodeError with its span (reason 'reserved sequence (FE/FF)'), replace\n"
"gives one U+FFFD for it as for each error, ignore drops it, surrogateescape\n"
"gives U+DC00+byte for each of its bytes and each error's.");

/* The Corrected UTF-8 decoding loop that every decode_corrected* function runs, so
 * that they differ only in how the result is handed back: the code points of s into
 * buf (room for n: every token is at least one byte and gives at most one code point
 * per byte), *o of them. In strict mode it stops at the first error or reserved unit:
 * 1 with its span [*ea, *eb) and kind *ek; else 0. */
static int c8_decode_into(const uint8_t *s, size_t n, int h, uint32_t *buf, size_t *o_out,
                          size_t *ea, size_t *eb, int *ek) {
    size_t o = 0, i = 0;
    ascii32_fn ascii = path_for(n)->ascii32;
    c8_blocks_fn blocks = path_for(n)->c8_blocks;
    while (i < n) {
        if (blocks && i + 16 <= n) {
            size_t i2 = blocks(s, n, i, buf, &o, n);
            if (i2 != i) {
                i = i2;
                continue;
            }
        }
        if (s[i] < 0x80) {
            i = ascii(s, n, i, buf, &o, n);
            continue;
        }
        uint32_t cp;
        size_t len;
        int k = c8_token(s, n, i, &cp, &len);
        if (k == C8_CHAR) {
            buf[o++] = cp;
        } else if (h == H_STRICT) {
            *ea = i;
            *eb = i + len;
            *ek = k;
            *o_out = o;
            return 1;
        } else if (h == H_REPLACE) {
            buf[o++] = 0xFFFD;
        } else if (h == H_ESCAPE) {
            for (size_t q = 0; q < len; q++) buf[o++] = 0xDC00 + s[i + q];
        }
        i += len;
    }
    *o_out = o;
    return 0;
}

enum { C8_AS_ARRAY, C8_AS_TEXT, C8_FIRST_ERROR };

/* decode_corrected (as an array or, when it can be one, a str) and
 * corrected_first_error: one c8_decode_into, the result handed back as `as`. */
static PyObject *c8_decode_obj(PyObject *obj, int h, int as) {
    Py_buffer view;
    if (get_buffer(obj, &view) < 0) return NULL;
    const uint8_t *s = view.buf;
    size_t n = (size_t)view.len, o, a = 0, b = 0;
    int k = 0;
    PyObject *result = NULL;
    if (n > (size_t)PY_SSIZE_T_MAX / 4) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    size_t buf_size;
    uint32_t *buf = scratch_take(n * 4, &buf_size);
    if (!buf) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    if (c8_decode_into(s, n, h, buf, &o, &a, &b, &k)) {
        if (as == C8_FIRST_ERROR)
            result = Py_BuildValue("(nns)", (Py_ssize_t)a, (Py_ssize_t)b, c8_reason(s, a, k));
        else
            raise_decode_error("corrected-utf-8", s, n, a, b, c8_reason(s, a, k));
    } else if (as == C8_FIRST_ERROR) {
        result = Py_NewRef(Py_None);
    } else if (as == C8_AS_TEXT) {
        uint32_t mx = 0;
        for (size_t q = 0; q < o; q++)
            if (buf[q] > mx) mx = buf[q];
        /* a str holds up to U+10FFFF (surrogates too); above, the caller needs the array */
        result = mx > 0x10FFFF ? Py_NewRef(Py_None)
                               : PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf,
                                                           (Py_ssize_t)o);
    } else {
        result = u32_array(buf, o);
    }
    scratch_give(buf, buf_size);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *fast_decode_corrected(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"data", "errors", NULL};
    PyObject *obj;
    const char *errors = NULL;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s:decode_corrected", kwlist, &obj, &errors))
        return NULL;
    int h = corrected_handler(errors);
    return h < 0 ? NULL : c8_decode_obj(obj, h, C8_AS_ARRAY);
}

PyDoc_STRVAR(decode_corrected_text_doc,
"decode_corrected_text(data, errors='strict') -> str | None\n\n"
"decode_corrected's code points as a str (surrogates included), or None when one\n"
"is above U+10FFFF, which a str cannot hold. The same decoding, errors and\n"
"exceptions as decode_corrected.");

static PyObject *fast_decode_corrected_text(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"data", "errors", NULL};
    PyObject *obj;
    const char *errors = NULL;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s:decode_corrected_text", kwlist, &obj,
                                     &errors))
        return NULL;
    int h = corrected_handler(errors);
    return h < 0 ? NULL : c8_decode_obj(obj, h, C8_AS_TEXT);
}

PyDoc_STRVAR(corrected_first_error_doc,
"corrected_first_error(data) -> None | (start, end, reason)\n\n"
"What decode_corrected(data) in strict mode raises, without raising: None when it\n"
"decodes, else its UnicodeDecodeError's start, end and reason.");

static PyObject *fast_corrected_first_error(PyObject *self, PyObject *obj) {
    (void)self;
    return c8_decode_obj(obj, H_STRICT, C8_FIRST_ERROR);
}

PyDoc_STRVAR(corrected_error_spans_doc,
"corrected_error_spans(data) -> list[(start, end)]\n\n"
"Every error's and reserved FE/FF unit's span in Corrected UTF-8, in order (the\n"
"outcome model's 'spans' view: a reserved unit has no code point).");

static PyObject *fast_corrected_error_spans(PyObject *self, PyObject *obj) {
    (void)self;
    Py_buffer view;
    if (get_buffer(obj, &view) < 0) return NULL;
    const uint8_t *s = view.buf;
    size_t n = (size_t)view.len, i = 0;
    PyObject *out = PyList_New(0);
    while (out && i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t len;
        if (c8_token(s, n, i, &cp, &len) != C8_CHAR) {
            if (append_span(out, i, i + len) < 0) Py_CLEAR(out);
        }
        i += len;
    }
    PyBuffer_Release(&view);
    return out;
}

/* Corrected UTF-8 encoding of one code point; 0 when it has none (C1 controls,
 * surrogates, above U+8421109F). */
static int c8_encode(uint64_t cp, uint8_t *out) {
    static const struct {
        uint64_t lo, hi, offset;
        uint8_t len, lead;
    } rows[] = {
        {0xA0, 0x89F, 160, 2, 0xC0},
        {0x8A0, 0xD7FF, 2208, 3, 0xE0},
        {0xE000, 0x1109F, 4256, 3, 0xE0},
        {0x110A0, 0x21109F, 69792, 4, 0xF0},
        {0x2110A0, 0x421109F, 2166944, 5, 0xF8},
        {0x42110A0, 0x8421109F, 69275808, 6, 0xFC},
    };
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        if (cp < rows[r].lo || cp > rows[r].hi) continue;
        uint64_t v = cp - rows[r].offset;
        int L = rows[r].len;
        for (int q = L - 1; q > 0; q--) {
            out[q] = (uint8_t)(0x80 | (v & 0x3F));
            v >>= 6;
        }
        out[0] = (uint8_t)(rows[r].lead | v);
        return L;
    }
    return 0;
}

/* Raise the reference's own EncodeError for a refused code point (same type, same
 * message), by asking the reference to encode it. */
static void refuse(PyObject *cp, Py_ssize_t index) {
    PyObject *mod = PyImport_ImportModule("utf8fuzz.profiles.corrected");
    PyObject *prof = mod ? PyObject_GetAttrString(mod, "PROFILE") : NULL;
    PyObject *r = prof ? PyObject_CallMethod(prof, "encode_one", "On", cp, index) : NULL;
    if (r) {
        PyErr_Format(PyExc_SystemError,
                     "utf8fuzz.fast refused a code point that the reference encodes (index %zd)",
                     index);
        Py_DECREF(r);
    }
    Py_XDECREF(prof);
    Py_XDECREF(mod);
}

static int refuse_u64(uint64_t cp, Py_ssize_t index) {
    PyObject *o = PyLong_FromUnsignedLongLong(cp);
    if (o) {
        refuse(o, index);
        Py_DECREF(o);
    }
    return -1;
}

PyDoc_STRVAR(encode_corrected_doc,
"encode_corrected(codepoints) -> bytes\n\n"
"Encode code points (a str, a buffer of unsigned 8- or 32-bit ints such as\n"
"array('I'), or an iterable of ints) in Corrected UTF-8. A code point it has no\n"
"sequence for raises the corrected reference's EncodeError, with its message.");

static PyObject *fast_encode_corrected(PyObject *self, PyObject *obj) {
    (void)self;
    PyObject *seq = NULL, *out = NULL;
    Py_buffer view;
    int have_view = 0;
    Py_ssize_t count;
    int mode; /* 0 str, 1 u8 buffer, 2 u32 buffer, 3 sequence */
    if (PyUnicode_Check(obj)) {
        mode = 0;
        count = PyUnicode_GET_LENGTH(obj);
    } else if (PyObject_CheckBuffer(obj) &&
               PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
        have_view = 1;
        const char *f = view.format ? view.format : "B";
        if (*f == '@' || *f == '=') f++;
        if (view.itemsize == 1 && strcmp(f, "B") == 0) mode = 1;
        else if (view.itemsize == 4 && (strcmp(f, "I") == 0 || strcmp(f, "L") == 0)) mode = 2;
        else mode = 3;
        count = view.len / (view.itemsize ? view.itemsize : 1);
    } else {
        PyErr_Clear();
        mode = 3;
        count = 0;
    }
    if (mode == 3) {
        seq = PySequence_Fast(obj, "codepoints must be a str or an iterable of ints");
        if (!seq) goto fail;
        count = PySequence_Fast_GET_SIZE(seq);
    }
    if (count > PY_SSIZE_T_MAX / 6) {
        PyErr_NoMemory();
        goto fail;
    }
    out = PyBytes_FromStringAndSize(NULL, count * 6);
    if (!out) goto fail;
    uint8_t *w = (uint8_t *)PyBytes_AS_STRING(out), *w0 = w;
    for (Py_ssize_t k = 0; k < count; k++) {
        uint64_t cp;
        if (mode == 0) {
            cp = PyUnicode_READ_CHAR(obj, k);
        } else if (mode == 1) {
            cp = ((const uint8_t *)view.buf)[k];
        } else if (mode == 2) {
            uint32_t v;
            memcpy(&v, (const char *)view.buf + 4 * k, 4);
            cp = v;
        } else {
            PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
            if (!PyLong_Check(item) && !PyIndex_Check(item)) {
                PyErr_Format(PyExc_TypeError, "code points must be ints, not %.80s (at index %zd)",
                             Py_TYPE(item)->tp_name, k);
                goto fail;
            }
            PyObject *num = PyNumber_Index(item);
            if (!num) goto fail;
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(num, &overflow);
            if (v == -1 && PyErr_Occurred()) {
                Py_DECREF(num);
                goto fail;
            }
            if (overflow || v < 0) {
                refuse(num, k);
                Py_DECREF(num);
                goto fail;
            }
            Py_DECREF(num);
            cp = (uint64_t)v;
        }
        int L = c8_encode(cp, w);
        if (!L) {
            refuse_u64(cp, k);
            goto fail;
        }
        w += L;
    }
    if (have_view) PyBuffer_Release(&view);
    Py_XDECREF(seq);
    if (_PyBytes_Resize(&out, (Py_ssize_t)(w - w0)) < 0) return NULL;
    return out;
fail:
    if (have_view) PyBuffer_Release(&view);
    Py_XDECREF(seq);
    Py_XDECREF(out);
    return NULL;
}

/* -- code paths ----------------------------------------------------------------------- */

static int path_id(const char *name) {
    for (int p = 0; p < PATH_COUNT; p++)
        if (strcmp(name, PATH_NAMES[p]) == 0) return p;
    return -1;
}

static int best_path(void) {
    for (int p = PATH_COUNT - 1; p > 0; p--)
        if (fast_simd_paths[p] && fast_cpu_has(p)) return p;
    return PATH_SCALAR;
}

static PyObject *available_list(void) {
    PyObject *l = PyList_New(0);
    for (int p = 0; l && p < PATH_COUNT; p++) {
        if (fast_simd_paths[p] && fast_cpu_has(p)) {
            PyObject *s = PyUnicode_FromString(PATH_NAMES[p]);
            if (!s || PyList_Append(l, s) < 0) Py_CLEAR(l);
            Py_XDECREF(s);
        }
    }
    return l;
}

/* Select a path by name ("auto" or NULL for the best): 0, or -1 with `exc` set. */
static int select_path(const char *name, PyObject *exc) {
    if (name == NULL || *name == '\0' || strcmp(name, "auto") == 0) {
        g_path_id = best_path();
        g_path = fast_simd_paths[g_path_id];
        g_forced = 0;
        return 0;
    }
    int p = path_id(name);
    if (p < 0) {
        PyErr_Format(exc,
                     "unknown code path '%s': choose scalar, sse2, ssse3, avx2, avx512 or auto",
                     name);
        return -1;
    }
    if (!fast_simd_paths[p]) {
        PyErr_Format(exc, "code path '%s' is not built into this module (not an x86-64 build)",
                     name);
        return -1;
    }
    if (!fast_cpu_has(p)) {
        char missing[128];
        PyErr_Format(exc, "code path '%s' needs CPU features this CPU lacks: %s", name,
                     fast_cpu_missing(p, missing, sizeof missing));
        return -1;
    }
    g_path_id = p;
    g_path = fast_simd_paths[p];
    g_forced = 1;
    return 0;
}

static PyObject *fast_set_path(PyObject *self, PyObject *arg) {
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    PyObject *prev = PyUnicode_FromString(g_forced ? PATH_NAMES[g_path_id] : "auto");
    if (!prev) return NULL;
    if (select_path(name, PyExc_ValueError) < 0) {
        Py_DECREF(prev);
        return NULL;
    }
    return prev;
}

static PyObject *fast_current_path(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return Py_BuildValue("(ss)", PATH_NAMES[g_path_id], g_forced ? "forced" : "auto");
}

static PyObject *fast_info(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    PyObject *cpu = PyDict_New();
#if defined(__x86_64__) && defined(__GNUC__)
    static const char *const feats[] = {"sse2", "ssse3", "sse4.2", "popcnt", "avx2", "bmi2",
                                        "avx512f", "avx512bw", "avx512vl", "avx512vbmi2"};
    __builtin_cpu_init();
    for (size_t k = 0; cpu && k < sizeof feats / sizeof feats[0]; k++) {
        int has;
        switch (k) {
        case 0: has = __builtin_cpu_supports("sse2"); break;
        case 1: has = __builtin_cpu_supports("ssse3"); break;
        case 2: has = __builtin_cpu_supports("sse4.2"); break;
        case 3: has = __builtin_cpu_supports("popcnt"); break;
        case 4: has = __builtin_cpu_supports("avx2"); break;
        case 5: has = __builtin_cpu_supports("bmi2"); break;
        case 6: has = __builtin_cpu_supports("avx512f"); break;
        case 7: has = __builtin_cpu_supports("avx512bw"); break;
        case 8: has = __builtin_cpu_supports("avx512vl"); break;
        default: has = __builtin_cpu_supports("avx512vbmi2"); break;
        }
        if (PyDict_SetItemString(cpu, feats[k], has ? Py_True : Py_False) < 0) Py_CLEAR(cpu);
    }
#endif
    PyObject *built = PyList_New(0);
    for (int p = 0; built && p < PATH_COUNT; p++) {
        if (!fast_simd_paths[p]) continue;
        PyObject *s = PyUnicode_FromString(PATH_NAMES[p]);
        if (!s || PyList_Append(built, s) < 0) Py_CLEAR(built);
        Py_XDECREF(s);
    }
    PyObject *avail = available_list();
    PyObject *r = NULL;
    if (cpu && built && avail)
        r = Py_BuildValue("{s:s,s:s,s:O,s:O,s:O,s:n}", "selected", PATH_NAMES[g_path_id],
                          "mode", g_forced ? "forced" : "auto", "built", built, "available",
                          avail, "cpu", cpu, "short_input", (Py_ssize_t)SHORT_INPUT);
    Py_XDECREF(cpu);
    Py_XDECREF(built);
    Py_XDECREF(avail);
    return r;
}

static PyMethodDef methods[] = {
    {"decode", (PyCFunction)(void (*)(void))fast_decode, METH_VARARGS | METH_KEYWORDS,
     decode_doc},
    {"validate", fast_validate, METH_O, validate_doc},
    {"first_error", fast_first_error, METH_O, first_error_doc},
    {"error_spans", fast_error_spans, METH_O, error_spans_doc},
    {"decode_corrected", (PyCFunction)(void (*)(void))fast_decode_corrected,
     METH_VARARGS | METH_KEYWORDS, decode_corrected_doc},
    {"decode_corrected_text", (PyCFunction)(void (*)(void))fast_decode_corrected_text,
     METH_VARARGS | METH_KEYWORDS, decode_corrected_text_doc},
    {"corrected_first_error", fast_corrected_first_error, METH_O, corrected_first_error_doc},
    {"encode_corrected", fast_encode_corrected, METH_O, encode_corrected_doc},
    {"corrected_error_spans", fast_corrected_error_spans, METH_O, corrected_error_spans_doc},
    {"info", fast_info, METH_NOARGS,
     "info() -> dict: the selected code path, whether it was forced, the paths built and "
     "available here, and the CPU features."},
    {"path", fast_current_path, METH_NOARGS,
     "path() -> (selected, mode): info()'s 'selected' and 'mode' alone, cheaply."},
    {"set_path", fast_set_path, METH_O,
     "set_path(name) -> previous: force a code path (scalar, sse2, ssse3, avx2, avx512) or "
     "'auto'. "
     "ValueError for a path this CPU cannot run."},
    {"fast_screen", (PyCFunction)(void (*)(void))fast_screen, METH_FASTCALL, fast_screen_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fast",
    "The utf8fuzz fast path (C). Use utf8fuzz.fast, which documents it.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fast(void) {
    for (int b = 0; b < 256; b++)
        C8_LEN[b] = b < 0x80 ? 1 : b < 0xC0 ? 0 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : b < 0xF8 ? 4
                  : b < 0xFC ? 5 : b < 0xFE ? 6 : 7;
    fast_simd_init();
    if (sizeof(unsigned int) != 4) {
        PyErr_SetString(PyExc_ImportError, "utf8fuzz.fast needs a 4-byte unsigned int");
        return NULL;
    }
    if (select_path(getenv("UTF8FUZZ_FAST_PATH"), PyExc_ImportError) < 0) {
        /* say which variable caused it */
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        PyErr_Format(PyExc_ImportError, "UTF8FUZZ_FAST_PATH=%s: %S", getenv("UTF8FUZZ_FAST_PATH"),
                     v ? v : Py_None);
        Py_XDECREF(t);
        Py_XDECREF(v);
        Py_XDECREF(tb);
        return NULL;
    }
    if (!g_array_type) {
        PyObject *array = PyImport_ImportModule("array");
        if (!array) return NULL;
        g_array_type = PyObject_GetAttrString(array, "array");
        Py_DECREF(array);
        if (!g_array_type) return NULL;
    }
    if (fast_screen_init() < 0) return NULL;
    return PyModule_Create(&module);
}
