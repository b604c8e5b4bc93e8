/* The reference walk's one-input result (utf8fuzz.profiles._walk.Walk), as the
 * walker (_walk.c) and the differ's screening and judging (engine/_screen.c) both
 * read it, and the C API _walk exports to the latter through a capsule. Include
 * after Python.h. */
#ifndef UTF8FUZZ_WALK_H
#define UTF8FUZZ_WALK_H

#include <stdint.h>

#include "packed_tokens.h"

/* A token's kind and reason, numbered as in the packed form. */
enum { K_CHAR = PK_CHAR, K_ERROR = PK_ERROR, K_RESERVED = PK_RESERVED };
enum { R_NONE = PR_NONE, R_ILLEGAL = PR_ILLEGAL, R_TRUNCATED = PR_TRUNCATED };

/* A token as the walk records it. end is kept although tokens tile (end is the
 * next start): views would otherwise need a case for the last one. */
typedef struct {
    int64_t value;
    Py_ssize_t start, end;
    int32_t row;
    uint8_t kind, reason;
} tok_t;

/* What a walk builds on first use and keeps: a view (C_TOKENS..C_ESCAPE, in
 * utf8fuzz.outcome's order), a text view as a str, the coverage features, the
 * packed tokens. */
enum { C_TOKENS, C_SPANS, C_STRICT, C_REASON, C_REPLACE, C_IGNORE, C_ESCAPE,
       C_TEXT_REPLACE, C_TEXT_IGNORE, C_TEXT_ESCAPE, C_FEATURES, C_PACKED, C_COUNT };

typedef struct Walker Walker; /* _walk.c's: the compiled table */

typedef struct {
    PyObject_VAR_HEAD
    Walker *walker;
    PyObject *data;      /* bytes */
    Py_ssize_t ntok;
    Py_ssize_t nerr;     /* tokens that are not chars */
    Py_ssize_t first_err; /* index of the first one, or -1 */
    int64_t max_value;   /* largest char value */
    PyObject *cache[C_COUNT];
    tok_t toks[1];
} Walk;

/* A token in its packed form (packed_tokens.h). */
static inline packed_tok pack(const tok_t *t) {
    return (packed_tok){t->kind | (int64_t)t->reason << 8, t->start, t->end,
                        t->kind == K_CHAR ? t->value : -1};
}

/* token_index(offset): max(0, bisect_right([t.start for t in tokens], offset) - 1),
 * the token holding a byte offset (the last one past the end; 0 when there are
 * none), by binary search on the starts. */
static inline Py_ssize_t token_at(const Walk *r, long long off) {
    Py_ssize_t lo = 0, hi = r->ntok; /* count the starts <= off */
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if ((long long)r->toks[mid].start <= off) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 ? lo - 1 : 0;
}

/* What _walk exports to other extensions, as the capsule WALK_CAPI_NAME. Function
 * pointers, not a Python call: the screening loop uses them for every decoder on
 * every fuzz input. */
#define WALK_CAPI_NAME "utf8fuzz.profiles._walk._C_API"

typedef struct {
    size_t size;             /* sizeof(walk_capi): a stale build is refused */
    PyTypeObject *walk_type; /* Walk's type: only its instances are Walk structs */
    /* cached(r, c): what r builds for C_* c (a new reference); NULL with an exception */
    PyObject *(*cached)(Walk *r, int c);
    /* view_index(name, text): C_* of a view name (text: its C_TEXT_*), or -1 (an
     * exception set only if comparing name raised) */
    int (*view_index)(PyObject *name, int text);
    /* agrees(walk, seen, views): Walk.agrees for any walk (a C one or a PyWalk):
     * 1, 0, or -1 with an exception set */
    int (*agrees)(PyObject *walk, PyObject *seen, PyObject *views);
} walk_capi;

/* The capsule's API, imported (importing utf8fuzz.profiles._walk); NULL with an
 * exception set. */
static inline const walk_capi *walk_capi_import(void) {
    /* PyCapsule_Import only imports the top package and reads attributes from
     * there (CPython 3.11): a submodule not yet imported is not found. */
    PyObject *mod = PyImport_ImportModule("utf8fuzz.profiles._walk");
    if (!mod) return NULL;
    Py_DECREF(mod);
    const walk_capi *api = PyCapsule_Import(WALK_CAPI_NAME, 0);
    if (api && api->size != sizeof *api) {
        PyErr_SetString(PyExc_ImportError,
                        WALK_CAPI_NAME " is from another build: rebuild the extensions");
        return NULL;
    }
    return api;
}

#endif
