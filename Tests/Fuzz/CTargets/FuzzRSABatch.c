/* libFuzzer target: the batch RSA-2048 kernel (Sources/CJOSEShims/idtk_rsa_ifma.c) against libcrypto's
 * BN_mod_exp. C, built by scripts/fuzz with clang -fsanitize=fuzzer,address (no Swift package needed).
 *
 * Input: byte 0 picks the lane count (1...8); then for each lane, one byte picks its signature's kind and
 * its modulus slot, and the following bytes fill the modulus and the signature. Moduli are made odd with the
 * top bit set (the kernel's domain); lanes share moduli when their slots are equal, and bytes the input lacks
 * come from a generator seeded by the input, so short inputs still give full-size numbers. Every implementation
 * the CPU runs (portable, emulated IFMA, and IFMA when present) must equal BN_mod_exp in every lane. */
#include "idtk_rsa_ifma.h"

#include <openssl/bn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *data;
    size_t size, at;
    uint64_t state;
} input;

static uint8_t take(input *in) {
    if (in->at < in->size) return in->data[in->at++];
    uint64_t z = (in->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint8_t)(z ^ (z >> 31));
}

static void fail(const char *what, int implementation, size_t lane) {
    fprintf(stderr, "FUZZ FINDING: %s (implementation %d, lane %zu)\n", what, implementation, lane);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    input in = {data, size, 0, 0x243F6A8885A308D3ull ^ size};
    for (size_t i = 0; i < size && i < 64; i++) in.state = in.state * 31 + data[i];
    const size_t lanes = 1 + take(&in) % 8;

    static uint8_t moduli[4][256];
    static idtk_rsa2048_key keys[4];
    static BIGNUM *n_bn[4];
    static BN_CTX *ctx;
    static BIGNUM *s, *e, *r;
    if (ctx == NULL) {
        ctx = BN_CTX_new();
        s = BN_new(); e = BN_new(); r = BN_new();
        for (int k = 0; k < 4; k++) n_bn[k] = BN_new();
        BN_set_word(e, 65537);
    }
    int made = 0;
    uint8_t sigs[8 * 256], got[8 * 256];
    const idtk_rsa2048_key *lane_keys[8];
    int slots[8];
    for (size_t lane = 0; lane < lanes; lane++) {
        const uint8_t choice = take(&in);
        const int slot = choice & 3;
        slots[lane] = slot;
        if (!(made >> slot & 1)) {
            for (int b = 0; b < 256; b++) moduli[slot][b] = take(&in);
            moduli[slot][0] |= 0x80;
            moduli[slot][255] |= 1;
            if (!idtk_rsa2048_key_init(&keys[slot], moduli[slot], 256, 65537, NULL)) fail("key_init refused a modulus", 0, lane);
            BN_bin2bn(moduli[slot], 256, n_bn[slot]);
            made |= 1 << slot;
        }
        lane_keys[lane] = &keys[slot];
        uint8_t *sig = sigs + 256 * lane;
        switch ((choice >> 2) % 8) {
        case 0: memset(sig, 0, 256); sig[255] = (uint8_t)(choice >> 5 & 1); break;  /* 0 or 1 */
        case 1: memcpy(sig, moduli[slot], 256); break;                               /* n */
        case 2:                                                                      /* n - 1 (n is odd) */
            memcpy(sig, moduli[slot], 256);
            sig[255] -= 1;
            break;
        case 3: memset(sig, 0xFF, 256); break;                                       /* 2^2048 - 1 */
        case 4: memcpy(sig, moduli[slot], 256); sig[take(&in)] ^= take(&in); break;  /* near n, either side */
        default: for (int b = 0; b < 256; b++) sig[b] = take(&in); break;
        }
    }
    uint8_t expected[8 * 256];
    for (size_t lane = 0; lane < lanes; lane++) {
        BN_bin2bn(sigs + 256 * lane, 256, s);
        if (!BN_mod_exp(r, s, e, n_bn[slots[lane]], ctx)) fail("BN_mod_exp failed", 0, lane);
        BN_bn2binpad(r, expected + 256 * lane, 256);
    }
    const int implementations[3] = {IDTK_RSA_BATCH_PORTABLE, IDTK_RSA_BATCH_EMULATED_IFMA, IDTK_RSA_BATCH_IFMA};
    for (int i = 0; i < 3; i++) {
        if (implementations[i] == IDTK_RSA_BATCH_IFMA && !idtk_rsa_batch_ifma_available()) continue;
        if (idtk_rsa2048_batch_power(implementations[i], lane_keys, sigs, got, lanes) != (1 << lanes) - 1) {
            fail("the kernel did not take every lane", implementations[i], 0);
        }
        for (size_t lane = 0; lane < lanes; lane++) {
            if (memcmp(got + 256 * lane, expected + 256 * lane, 256) != 0) fail("lane differs from BN_mod_exp", implementations[i], lane);
        }
    }
    return 0;
}
