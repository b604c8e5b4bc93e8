/* The packed form of a tuple of Tokens (utf8fuzz.outcome.pack_tokens, which is
 * its definition): four native int64 per token - kind | reason << 8, start, end,
 * and the code point, or -1 for None.
 *
 * Why: the fuzz loop compares every decoder with its reference on every input,
 * and a Token object costs about a thousand instructions to make. A decoder whose
 * tokens are made in C (the ICU glue) can show all of them in its screen as one
 * bytes object, and the differ compares that with the reference walk's own
 * packing (made in C too) in one memcmp. In-process only: never stored. */
#ifndef UTF8FUZZ_PACKED_TOKENS_H
#define UTF8FUZZ_PACKED_TOKENS_H

#include <stdint.h>

enum { PK_CHAR = 0, PK_ERROR = 1, PK_RESERVED = 2 };    /* Token.kind */
enum { PR_NONE = 0, PR_ILLEGAL = 1, PR_TRUNCATED = 2 }; /* Token.reason */

typedef struct {
    int64_t kind_reason, start, end, value;
} packed_tok;

#endif
