/*
 * fi_reference.c - the fault pattern the faultinject documentation promises, computed from
 * plugins/faultinject/rules.c alone (no shim, no driver), for run_faultinject.sh to compare with
 * what the loaded plugin did.
 *
 *   fi_reference RULE SEED N CODE   prints "alloc R1 ... RN": CODE where the rule fires on its
 *                                   matching call i (at time 0), 0 elsewhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

int main(int argc, char **argv)
{
    fi_rule_syntax r;
    char err[FI_ERRLEN];
    long n;
    uint64_t seed, hash;
    if (argc != 5) {
        fprintf(stderr, "usage: fi_reference RULE SEED N CODE\n");
        return 2;
    }
    if (fi_rule_parse(argv[1], strlen(argv[1]), &r, err, sizeof err) != 0) {
        fprintf(stderr, "fi_reference: %s\n", err);
        return 1;
    }
    seed = fi_seed(strtoll(argv[2], NULL, 0));
    hash = fi_rule_hash(argv[1]);
    n = strtol(argv[3], NULL, 10);
    printf("alloc");
    for (long i = 1; i <= n; i++)
        printf(" %s", fi_when_fires(&r.when, (uint64_t)i, 0, seed, hash) ? argv[4] : "0");
    printf("\n");
    fi_rule_syntax_free(&r);
    return 0;
}
