/* Differential check of the batch RSA-2048 kernel (Sources/CJOSEShims/idtk_rsa_ifma.c) against libcrypto's
 * BN_mod_exp: COUNT (signature, key) pairs in batches of eight lanes, each lane with a key drawn from a pool of
 * moduli (random odd 2048-bit numbers, replaced as the run goes, plus edge moduli), signatures random (below
 * and above n) or one of 0, 1, 2, n-1, n, n+1, 2^2048-1; the lanes of a batch mix keys, and batches of 1...7
 * lanes occur too, and lanes whose key has e = 3, which the kernel must leave to its caller. Every implementation the CPU can run is checked: the portable one
 * on every batch, the IFMA code with its instructions emulated in C on every fourth (it is slower), IFMA on
 * every batch when the CPU has it.
 * Any modulus works for s^e mod n, so the moduli need not be RSA keys, which keeps thousands of keys cheap.
 *
 * Usage: rsa_batch_check [COUNT [SEED]]   (scripts/test runs it; COUNT defaults to 1,000,000)
 * Exit status 0 when every lane equals BN_mod_exp, 1 with the first difference printed otherwise. */
#include "idtk_rsa_ifma.h"

#include <openssl/bn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t state;
static uint64_t next(void) { /* splitmix64 */
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static void random_bytes(uint8_t *p, size_t count) {
    for (size_t i = 0; i < count; i++) p[i] = (uint8_t)(next() >> 24);
}

#define POOL 256
typedef struct {
    uint8_t n[256];
    idtk_rsa2048_key key;
    BIGNUM *bn;
} pool_key;

static void make_key(pool_key *k, int kind) {
    switch (kind) {
    case 0: memset(k->n, 0xFF, 256); break;                                  /* 2^2048 - 1 */
    case 1: memset(k->n, 0, 256); k->n[0] = 0x80; k->n[255] = 1; break;       /* 2^2047 + 1 */
    case 2: memset(k->n, 0, 256); k->n[0] = 0x80; k->n[255] = 0xFF; k->n[200] = 0xFF; break;
    case 3: memset(k->n, 0xFF, 256); k->n[0] = 0x80; break;                   /* 2^2047 + (2^2040 - 1)...: sparse top */
    default: random_bytes(k->n, 256); k->n[0] |= 0x80; k->n[255] |= 1; break;
    }
    k->bn = BN_bin2bn(k->n, 256, k->bn);
    /* R^2 mod n from the caller (libcrypto, as JOSE gives it) for every other key, else computed by the kernel. */
    static int alternate;
    uint8_t rr[256];
    const uint8_t *given = NULL;
    if ((alternate++ & 1) == 0) {
        BN_CTX *ctx = BN_CTX_new();
        BIGNUM *r = BN_new();
        BN_set_bit(r, 4160);
        BN_mod(r, r, k->bn, ctx);
        BN_bn2binpad(r, rr, 256);
        BN_free(r);
        BN_CTX_free(ctx);
        given = rr;
    }
    /* Pool entry 3 has e = 3, a lane the kernel must leave alone (its bit clear in the returned mask). */
    if (!idtk_rsa2048_key_init(&k->key, k->n, 256, kind == 3 ? 3 : 65537, given)) {
        fprintf(stderr, "key_init refused a 2048-bit odd modulus\n");
        exit(2);
    }
}

static void set_bn_bytes(const BIGNUM *v, uint8_t *out) { BN_bn2binpad(v, out, 256); }

/* A signature for key k, of one of several kinds. */
static void make_signature(const pool_key *k, uint8_t *sig, BN_CTX *ctx) {
    const unsigned kind = (unsigned)(next() % 16);
    BIGNUM *v = BN_CTX_get(ctx);
    switch (kind) {
    case 0: memset(sig, 0, 256); return;
    case 1: memset(sig, 0, 256); sig[255] = 1; return;
    case 2: memset(sig, 0, 256); sig[255] = 2; return;
    case 3: BN_copy(v, k->bn); BN_sub_word(v, 1); set_bn_bytes(v, sig); return;    /* n - 1 */
    case 4: memcpy(sig, k->n, 256); return;                                          /* n */
    case 5: BN_copy(v, k->bn); BN_add_word(v, 1); if (BN_num_bytes(v) <= 256) { set_bn_bytes(v, sig); return; } break;
    case 6: memset(sig, 0xFF, 256); return;                                           /* 2^2048 - 1 */
    case 7: random_bytes(sig, 256); sig[0] |= 0x80; return;                           /* often >= n */
    default: break;
    }
    random_bytes(sig, 256);
}

int main(int argc, char **argv) {
    const long count = argc > 1 ? atol(argv[1]) : 1000000;
    state = argc > 2 ? strtoull(argv[2], NULL, 10) : 20261124;
    int implementations[3], implementation_count = 0;
    implementations[implementation_count++] = IDTK_RSA_BATCH_PORTABLE;
    implementations[implementation_count++] = IDTK_RSA_BATCH_EMULATED_IFMA;
    if (idtk_rsa_batch_ifma_available()) implementations[implementation_count++] = IDTK_RSA_BATCH_IFMA;

    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *e = BN_new(), *s = BN_new(), *r = BN_new();
    BN_set_word(e, 65537);
    static pool_key pool[POOL];
    for (int i = 0; i < POOL; i++) make_key(&pool[i], i);
    long keys_made = POOL;

    uint8_t sigs[8 * 256], expected[8 * 256], got[8 * 256];
    const idtk_rsa2048_key *keys[8];
    int chosen[8];
    long pairs = 0, batches = 0;
    const clock_t started = clock();
    while (pairs < count) {
        /* One batch in eight has fewer lanes; a fresh modulus replaces a random pool entry every fourth batch. */
        size_t lanes = next() % 8 == 0 ? 1 + next() % 7 : 8;
        if ((long)lanes > count - pairs) lanes = (size_t)(count - pairs);
        if (batches % 4 == 0) {
            make_key(&pool[4 + next() % (POOL - 4)], 4);
            keys_made++;
        }
        for (size_t l = 0; l < lanes; l++) {
            chosen[l] = (int)(next() % POOL);
            keys[l] = &pool[chosen[l]].key;
            BN_CTX_start(ctx);
            make_signature(&pool[chosen[l]], sigs + 256 * l, ctx);
            BN_CTX_end(ctx);
            BN_bin2bn(sigs + 256 * l, 256, s);
            BN_set_word(e, keys[l]->e);
            if (!BN_mod_exp(r, s, e, pool[chosen[l]].bn, ctx)) { fprintf(stderr, "BN_mod_exp failed\n"); return 2; }
            set_bn_bytes(r, expected + 256 * l);
        }
        for (int i = 0; i < implementation_count; i++) {
            if (implementations[i] == IDTK_RSA_BATCH_EMULATED_IFMA && batches % 4 != 0) continue;
            memset(got, 0xAA, sizeof got);
            int expected_mask = 0;
            for (size_t l = 0; l < lanes; l++) expected_mask |= (keys[l]->e == 65537) << l;
            const int mask = idtk_rsa2048_batch_power(implementations[i], keys, sigs, got, lanes);
            if (mask != expected_mask) {
                fprintf(stderr, "implementation %d computed lanes %#x of a batch of %zu, expected %#x\n",
                        implementations[i], mask, lanes, expected_mask);
                return 1;
            }
            for (size_t l = 0; l < lanes; l++) {
                if (!(mask >> l & 1)) {
                    for (int b = 0; b < 256; b++) {
                        if (got[256 * l + b] != 0xAA) { fprintf(stderr, "a lane left out was written\n"); return 1; }
                    }
                    continue;
                }
                if (memcmp(got + 256 * l, expected + 256 * l, 256) != 0) {
                    fprintf(stderr, "MISMATCH: implementation %d, batch %ld, lane %zu of %zu\n  n = ", implementations[i], batches, l, lanes);
                    for (int b = 0; b < 256; b++) fprintf(stderr, "%02x", pool[chosen[l]].n[b]);
                    fprintf(stderr, "\n  s = ");
                    for (int b = 0; b < 256; b++) fprintf(stderr, "%02x", sigs[256 * l + b]);
                    fprintf(stderr, "\n");
                    return 1;
                }
            }
        }
        pairs += (long)lanes;
        batches++;
    }
    printf("rsa_batch_check: %ld (signature, key) pairs in %ld batches over %ld moduli equal BN_mod_exp "
           "(implementations: portable, emulated IFMA on every fourth batch%s), %.1f s\n", pairs, batches, keys_made,
           implementation_count > 2 ? ", IFMA" : "; this CPU has no AVX-512 IFMA",
           (double)(clock() - started) / CLOCKS_PER_SEC);
    return 0;
}
