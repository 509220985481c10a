/* Every kernel table this build has against csrc/kernels/generic/registry.def: a slot is
 * filled exactly when the list names it for that instruction set, every listed name spells
 * its kinds (isa_q_<x>_<precision>_<y>, isa_d_<input>_<output>), and no slot is listed twice.
 * The parity test (test_kernels.c) checks what filled slots compute; this one catches a slot
 * that silently stays empty (correct through the fallback, only slower) or a stray one. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "tables.h"

typedef struct reg_entry {
    const char *isa, *name, *kinds;   /* kinds: the enum names, space-separated */
    int q, a, b, c;                   /* q: QuantizeLinear (a, b, c = x, precision, y) */
} reg_entry;

#define REG_Q(xk, qk, yk, full) 1, xk, qk, yk
#define REG_D(dk, ok, full) 0, dk, ok, 0
#define REG_KINDS_Q(xk, qk, yk, full) #xk " " #qk " " #yk
#define REG_KINDS_D(dk, ok, full) #dk " " #ok
#define QK_ENTRY(isa, kind, name, ...) \
    {#isa, #name, REG_KINDS_##kind(__VA_ARGS__), REG_##kind(__VA_ARGS__)},
static const reg_entry reg[] = {
#include "kernels/generic/registry.def"
};
#undef QK_ENTRY
#define NREG (sizeof reg / sizeof reg[0])

/* "QK_X_F32 QK_Q_F32 QK_Y_B8" -> "_f32_f32_b8": the lower-case part after each kind prefix */
static void kind_suffix(const char *kinds, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *k = kinds; *k && o + 2 < cap;) {
        while (*k == ' ') k++;
        const char *end = strchr(k, ' ');
        if (!end) end = k + strlen(k);
        const char *p = k;
        for (int u = 0; u < 2 && p < end; p++) u += *p == '_';   /* skip "QK_X_" */
        out[o++] = '_';
        for (; p < end && o + 1 < cap; p++) out[o++] = (char)tolower((unsigned char)*p);
        k = end;
    }
    out[o] = 0;
}

static int listed(const char *isa, int q, int a, int b, int c)
{
    int hits = 0;
    for (size_t i = 0; i < NREG; i++)
        hits += !strcmp(reg[i].isa, isa) && reg[i].q == q && reg[i].a == a && reg[i].b == b &&
                (!q || reg[i].c == c);
    return hits;
}

int main(void)
{
    int bad = 0, tables = 0;
    size_t checked = 0;
    for (size_t i = 0; i < NREG; i++) {   /* names spell their kinds; no slot twice */
        char want[96], suffix[64];
        kind_suffix(reg[i].kinds, suffix, sizeof suffix);
        snprintf(want, sizeof want, "%s_%s%s", reg[i].isa, reg[i].q ? "q" : "d", suffix);
        if (strcmp(want, reg[i].name)) {
            printf("FAIL %s: its kinds (%s) spell %s\n", reg[i].name, reg[i].kinds, want);
            bad++;
        }
        if (listed(reg[i].isa, reg[i].q, reg[i].a, reg[i].b, reg[i].c) != 1) {
            printf("FAIL %s: its slot is listed more than once\n", reg[i].name);
            bad++;
        }
    }
    for (const ctest_table *ct = ctest_tables; ct->name; ct++) {
        char isa[32];
        snprintf(isa, sizeof isa, "%s", ct->name);
        char *dash = strchr(isa, '-');   /* "avx512-simde": the avx512 source on SIMDe */
        if (dash) *dash = 0;
        const qk_table *t = ct->t;
        int filled = 0;
        for (int x = 0; x < QK_NX; x++)
            for (int q = 0; q < QK_NQ; q++)
                for (int y = 0; y < QK_NY; y++) {
                    int has = t->quant[x][q][y] != NULL, want = listed(isa, 1, x, q, y) > 0;
                    filled += has;
                    if (has != want) {
                        printf("FAIL %s: quant[%d][%d][%d] is %s but the list %s it\n",
                               ct->name, x, q, y, has ? "filled" : "empty",
                               want ? "names" : "does not name");
                        bad++;
                    }
                }
        for (int d = 0; d < QK_ND; d++)
            for (int o = 0; o < QK_NO; o++) {
                int has = t->dequant[d][o] != NULL, want = listed(isa, 0, d, o, 0) > 0;
                filled += has;
                if (has != want) {
                    printf("FAIL %s: dequant[%d][%d] is %s but the list %s it\n", ct->name, d,
                           o, has ? "filled" : "empty", want ? "names" : "does not name");
                    bad++;
                }
            }
        if (!t->minmax_f32 || !t->recip_f32 || !t->widen_zp || !t->minmax_cols ||
            !t->minmax_groups) {
            printf("FAIL %s: no minmax_f32 / recip_f32 / widen_zp / minmax_cols / "
                   "minmax_groups\n", ct->name);
            bad++;
        }
        /* an empty slot falls back to the base table: it must be another SIMD table or none */
        int base_ok = t->base == NULL;
        for (const ctest_table *o = ctest_tables; o->name; o++)
            base_ok |= o->t == t->base && o->t != t;
        if (!base_ok) {
            printf("FAIL %s: its base table is not a known SIMD table\n", ct->name);
            bad++;
        }
        printf("%-13s %3d entries, as listed\n", ct->name, filled);
        checked += (size_t)filled;
        tables++;
    }
    printf("registry: %zu list lines, %d tables, %zu entries checked, %d problems\n",
           (size_t)NREG, tables, checked, bad);
    return bad != 0;
}
