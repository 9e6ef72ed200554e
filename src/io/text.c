/*
 * Line and token splitting for the text readers (see text.h).
 */
#include "text.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lexer_init(text_lexer *lx, const char *data, size_t size) {
    memset(lx, 0, sizeof *lx);
    lx->pos = data;
    lx->end = data + size;
    lx->next_line = 1;
}

void lexer_free(text_lexer *lx) {
    free(lx->tokens);
    lx->tokens = NULL;
    lx->n_tokens = lx->cap_tokens = 0;
}

/* Blanks between tokens (a newline ends the line instead), by table: the
 * lexer tests every byte of the input. */
static const bool blank[256] = {[' '] = true, ['\t'] = true, ['\r'] = true, ['\v'] = true,
                                ['\f'] = true};

static inline bool is_space(char c) { return blank[(unsigned char)c]; }

static int push_token(text_lexer *lx, const char *s, const char *e) {
    if (lx->n_tokens == lx->cap_tokens) {
        int32_t cap = lx->cap_tokens ? 2 * lx->cap_tokens : 64;
        text_token *t = realloc(lx->tokens, (size_t)cap * sizeof *t);
        if (!t) return -1;
        lx->tokens = t;
        lx->cap_tokens = cap;
    }
    lx->tokens[lx->n_tokens++] = (text_token){s, (int32_t)(e - s)};
    return 0;
}

int lexer_next_line(text_lexer *lx) {
    lx->n_tokens = 0;
    if (lx->pos >= lx->end) return 0;
    lx->line = lx->next_line++;
    const char *p = lx->pos;
    const char *eol = memchr(p, '\n', (size_t)(lx->end - p));
    if (!eol) eol = lx->end;
    lx->pos = eol < lx->end ? eol + 1 : eol;
    const char *hash = memchr(p, '#', (size_t)(eol - p));
    const char *stop = hash ? hash : eol;
    while (p < stop) {
        while (p < stop && is_space(*p)) ++p;
        if (p >= stop) break;
        const char *s = p;
        while (p < stop && !is_space(*p)) ++p;
        if (p - s > INT32_MAX || push_token(lx, s, p)) return -1;
    }
    return 1;
}

int lexer_next_token(text_lexer *lx, text_token *tok) {
    for (;;) {
        const char *p = lx->pos;
        while (p < lx->end && is_space(*p)) ++p;
        lx->pos = p;
        if (p >= lx->end) return 0;
        if (*p == '\n') {
            lx->pos = p + 1;
            lx->next_line++;
            continue;
        }
        if (*p == '#') {
            const char *eol = memchr(p, '\n', (size_t)(lx->end - p));
            lx->pos = eol ? eol : lx->end;
            continue;
        }
        const char *s = p;
        while (p < lx->end && !is_space(*p) && *p != '\n' && *p != '#') ++p;
        lx->pos = p;
        lx->line = lx->next_line;
        tok->s = s;
        tok->len = p - s > INT32_MAX ? INT32_MAX : (int32_t)(p - s);
        return 1;
    }
}

int token_to_int(text_token t, int64_t *out) {
    int32_t k = 0;
    int negative = 0;
    if (t.len > 0 && (t.s[0] == '-' || t.s[0] == '+')) {
        negative = t.s[0] == '-';
        k = 1;
    }
    if (k >= t.len) return -1;
    int64_t value = 0;
    for (; k < t.len; ++k) {
        char c = t.s[k];
        if (c < '0' || c > '9') return -1;
        const int digit = c - '0';
        if (value > INT64_MAX / 10 || (value == INT64_MAX / 10 && digit > INT64_MAX % 10))
            return -1;
        value = value * 10 + digit;
    }
    *out = negative ? -value : value;
    return 0;
}

/* strtod on a NUL-terminated copy of the token, which must be consumed
 * whole: the reader accepts what strtod accepts but its hexadecimal forms
 * (0x10, 0x1p3), which neither format has (callers refuse non-finite
 * values where they do not belong), and a nonzero number strtod rounds to
 * 0 (1e-400): as 0, a UAI potential would forbid its state. */
int token_to_double(text_token t, double *out) {
    char small[128];
    if (t.len <= 0) return -1;
    const int32_t sign = t.s[0] == '-' || t.s[0] == '+';
    if (t.len > sign + 1 && t.s[sign] == '0' && (t.s[sign + 1] == 'x' || t.s[sign + 1] == 'X'))
        return -1;
    char *buf = (size_t)t.len < sizeof small ? small : malloc((size_t)t.len + 1);
    if (!buf) return -1;
    memcpy(buf, t.s, (size_t)t.len);
    buf[t.len] = '\0';
    char *end;
    errno = 0;
    double x = strtod(buf, &end);
    int rc = end == buf + t.len ? 0 : -1; /* an embedded NUL stops strtod short */
    if (rc == 0 && x == 0.0 && errno == ERANGE) rc = TOKEN_UNDERFLOW;
    if (rc == 0 && isinf(x) && errno == ERANGE) rc = TOKEN_OVERFLOW;
    if (buf != small) free(buf);
    if (rc == 0) *out = x;
    return rc;
}

const char *token_text(text_token t, char *buf, size_t size) {
    size_t n = (size_t)t.len, shown = n + 1 > size ? size - 4 : n;
    for (size_t k = 0; k < shown; ++k) { /* bytes other than printable ASCII as '?' */
        const unsigned char c = (unsigned char)t.s[k];
        buf[k] = c < 32 || c > 126 ? '?' : (char)c;
    }
    if (shown < n) {
        memcpy(buf + shown, "...", 4);
    } else {
        buf[shown] = '\0';
    }
    return buf;
}
