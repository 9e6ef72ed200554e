/*
 * A small lexer for the text formats (.fg, .uai, .evid): splits a buffer
 * into lines and whitespace-separated tokens, strips '#' comments, tracks
 * line numbers for messages, and converts tokens to numbers strictly (the
 * whole token must be the number). It never reads past the buffer, which
 * need not be NUL-terminated.
 */
#ifndef CONCORD_TEXT_H
#define CONCORD_TEXT_H

#include <stddef.h>
#include <stdint.h>

typedef struct text_token {
    const char *s;
    int32_t len;
} text_token;

typedef struct text_lexer {
    const char *pos, *end;
    int64_t line;        /* line of the last line or token returned */
    int64_t next_line;   /* line number of the text at pos */
    text_token *tokens;  /* tokens of the last line read */
    int32_t n_tokens, cap_tokens;
} text_lexer;

void lexer_init(text_lexer *lx, const char *data, size_t size);
void lexer_free(text_lexer *lx);

/* Reads the next line's tokens into lx->tokens. Returns 1 when a line was
 * read (possibly with no tokens), 0 at the end of input, -1 when out of
 * memory. */
int lexer_next_line(text_lexer *lx);

/* Reads the next token, across lines. Returns 1, or 0 at the end. */
int lexer_next_token(text_lexer *lx, text_token *tok);

/* Strict conversions of decimal numbers; return 0 on success, -1 if the
 * token is not entirely a number of that kind (or the integer overflows
 * int64), and token_to_double TOKEN_UNDERFLOW for a nonzero number below
 * the smallest double and TOKEN_OVERFLOW for a number beyond the largest
 * (which strtod rounds to an infinity: -1e999 is not -inf, which forbids;
 * the *_TEXT say so in messages). */
enum { TOKEN_UNDERFLOW = -2, TOKEN_OVERFLOW = -3 };
#define TOKEN_UNDERFLOW_TEXT "is below the smallest positive double (4.9e-324) in magnitude"
#define TOKEN_OVERFLOW_TEXT "is beyond the largest double (1.8e308) in magnitude"
int token_to_int(text_token t, int64_t *out);
int token_to_double(text_token t, double *out);

/* Copies the token into buf (truncated with "..." if long), for messages:
 * bytes other than printable ASCII (control bytes, NUL, and any byte of a
 * binary file or a non-ASCII character) show as '?'. */
const char *token_text(text_token t, char *buf, size_t size);

#endif /* CONCORD_TEXT_H */
