/*
 * rules.h - the fault rules of the faultinject plugin, without a host: the
 * syntax 'SELECTOR:ERROR[:WHEN]' and the decision "does the Nth matching call
 * fail?". faultinject.c resolves selectors and error names through the host;
 * a fuzz harness links rules.c alone (fi_rule_parse_fuzz).
 * docs/plugins/faultinject.md is the user's description of both.
 */
#ifndef FI_RULES_H
#define FI_RULES_H

#include <stddef.h>
#include <stdint.h>

#define FI_ERRLEN 256

/* WHEN conditions; a rule fires on a call when all its conditions hold. */
#define FI_W_NTH    (1u << 0)   /* nth=N      the Nth matching call only        */
#define FI_W_EVERY  (1u << 1)   /* every=N    calls N, 2N, 3N, ...              */
#define FI_W_AFTER  (1u << 2)   /* after=N    every call after the first N      */
#define FI_W_P      (1u << 3)   /* p=X        probability X, from the seed      */
#define FI_W_WINDOW (1u << 4)   /* window=S-E seconds since process start       */

typedef struct fi_when {
    uint32_t kinds;             /* FI_W_* given; 0: every matching call fires    */
    uint64_t nth, every, after;
    double p;
    double win_start, win_end;  /* [start, end); end is +inf when omitted        */
} fi_when;

/* One rule as written: what is left to the host is resolving 'selector' and 'error'. */
typedef struct fi_rule_syntax {
    char *selector;             /* as given, blanks around it removed            */
    char *error;                /* a name, or the number's text                  */
    int error_is_number;
    int32_t error_number;       /* when error_is_number: the value, never 0      */
    fi_when when;
} fi_rule_syntax;

/* Parses 'len' bytes (no NUL needed). 0 on success (free with fi_rule_syntax_free),
   -1 with a one-line reason in 'err' (and nothing to free). */
int fi_rule_parse(const char *text, size_t len, fi_rule_syntax *out, char *err, size_t errlen);
void fi_rule_syntax_free(fi_rule_syntax *r);

/* Fuzzing entry point: parses one rule, frees it; 0 if it parsed, -1 if not. */
int fi_rule_parse_fuzz(const char *data, size_t len);

/* The seed option: 0 stands for FI_DEFAULT_SEED, anything else is used as is. */
#define FI_DEFAULT_SEED 0x243f6a8885a308d3ull
uint64_t fi_seed(int64_t option_value);

/* FNV-1a of a rule's text: its identity in the random stream. */
uint64_t fi_rule_hash(const char *text);

/* The splitmix64 output function (one step from state 'x'). */
uint64_t fi_splitmix64(uint64_t x);

/* The random number of matching call 'n' of a rule: splitmix64 applied to
   (seed, rule hash, n) in turn, so it depends on nothing else:
   fi_splitmix64(fi_splitmix64(fi_splitmix64(seed) ^ rule_hash) ^ n). */
uint64_t fi_random(uint64_t seed, uint64_t rule_hash, uint64_t n);

/* Does matching call 'n' (1-based) at 't' seconds since process start fire? */
int fi_when_fires(const fi_when *w, uint64_t n, double t, uint64_t seed, uint64_t rule_hash);

#endif /* FI_RULES_H */
