/*
 * Line and token splitting for the text readers (see text.h).
 */
#include "text.h"

#include <float.h>
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

/* Clinger's fast path: a decimal [sign] digits [. digits] [e [sign] digits]
 * whose digits form an integer below 2^53 and whose power of ten is at
 * most 22 in magnitude is that integer times or over an exactly
 * representable power of ten, so one IEEE multiplication or division
 * rounds it correctly, as strtod would. Scores in .fg and .uai files are
 * nearly all such decimals, and strtod was a third of the time spent
 * reading them.
 *
 * Many files also print 17 significant digits (0.32230078999998757), past
 * 2^53. Where long double has a 64-bit significand (x86), an integer of up
 * to 19 digits and a power of ten up to 10^27 are both exact in it, so the
 * one long-double operation rounds the true value t once, to L; rounding L
 * to double then gives what rounding t would, unless L lies exactly halfway
 * between two doubles (a halfway point strictly between t and L would be
 * a long double nearer to t than L). That case is left to strtod, and so is
 * everything when the x87 unit has been set to round to fewer bits.
 * Returns 0 for anything else (strtod then decides). */
static int decimal_fast_path(text_token t, double *out) {
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
    return 0; /* wider intermediates would round twice */
#endif
    static const double power_of_ten[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                          1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                          1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *p = t.s, *end = t.s + t.len;
    int negative = 0;
    if (p < end && (*p == '-' || *p == '+')) negative = *p++ == '-';
    const uint64_t mantissa_limit = (UINT64_MAX - 9) / 10; /* 19 digits always fit */
    uint64_t mantissa = 0;
    int32_t digits = 0, exponent = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p, ++digits) {
        if (mantissa > mantissa_limit) return 0;
        mantissa = 10 * mantissa + (uint64_t)(*p - '0');
    }
    if (p < end && *p == '.') {
        for (++p; p < end && *p >= '0' && *p <= '9'; ++p, ++digits, --exponent) {
            if (mantissa > mantissa_limit) return 0;
            mantissa = 10 * mantissa + (uint64_t)(*p - '0');
        }
    }
    if (digits == 0) return 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        ++p;
        int exp_negative = 0;
        if (p < end && (*p == '-' || *p == '+')) exp_negative = *p++ == '-';
        int32_t e = 0, exp_digits = 0;
        for (; p < end && *p >= '0' && *p <= '9' && e < 1000; ++p, ++exp_digits)
            e = 10 * e + (*p - '0');
        if (exp_digits == 0) return 0;
        exponent += exp_negative ? -e : e;
    }
    if (p != end) return 0;
    double x;
    if (mantissa <= (UINT64_C(1) << 53) && exponent >= -22 && exponent <= 22) {
        x = (double)mantissa;
        x = exponent < 0 ? x / power_of_ten[-exponent] : x * power_of_ten[exponent];
    } else {
#if LDBL_MANT_DIG == 64
        /* exact: 5^27 < 2^64 */
        static const long double wide_power_of_ten[] = {
            1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
            1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
            1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
        if (exponent < -27 || exponent > 27) return 0;
        /* x87 arithmetic rounds to the precision its control word sets,
         * which a host program may have lowered (to 53 bits, say) */
        volatile long double one = 1.0L;
        if (one + LDBL_EPSILON == one) return 0;
        long double wide = (long double)mantissa;
        wide = exponent < 0 ? wide / wide_power_of_ten[-exponent]
                            : wide * wide_power_of_ten[exponent];
        int binary_exponent;
        uint64_t significand = (uint64_t)ldexpl(frexpl(wide, &binary_exponent), 64);
        if ((significand & 0x7ff) == 0x400) return 0; /* halfway between two doubles */
        x = (double)wide;
#else
        return 0;
#endif
    }
    *out = negative ? -x : x;
    return 1;
}

int token_to_double(text_token t, double *out) {
    if (decimal_fast_path(t, out)) return 0;
    char buf[1024];
    if (t.len <= 0 || (size_t)t.len >= sizeof buf) return -1;
    memcpy(buf, t.s, (size_t)t.len);
    buf[t.len] = '\0';
    if (memchr(buf, '\0', (size_t)t.len)) return -1;
    char *end;
    double x = strtod(buf, &end);
    if (end != buf + t.len) return -1;
    *out = x;
    return 0;
}

const char *token_text(text_token t, char *buf, size_t size) {
    size_t n = (size_t)t.len, shown = n + 1 > size ? size - 4 : n;
    for (size_t k = 0; k < shown; ++k) /* control bytes, NUL included, as '?' */
        buf[k] = (unsigned char)t.s[k] < 32 ? '?' : t.s[k];
    if (shown < n) {
        memcpy(buf + shown, "...", 4);
    } else {
        buf[shown] = '\0';
    }
    return buf;
}
