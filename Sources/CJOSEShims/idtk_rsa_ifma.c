#include "idtk_rsa_ifma.h"

#include <string.h>

#define MASK52 0xFFFFFFFFFFFFFull

/* The lowest limb index i of column k's products x_i y_(k-i) of two 40-limb numbers (the kernel's columns). */
#define COLUMN_FIRST(k) ((k) < IDTK_RSA2048_LIMBS ? 0 : (k) - IDTK_RSA2048_LIMBS + 1)

/* MARK: conversions and the per-key constants (portable, run once per key or once per lane) */

/* 256 big-endian bytes into 32 little-endian 64-bit words. */
static void bytes_to_words(const uint8_t *bytes, uint64_t *words) {
    for (int w = 0; w < 32; w++) {
        uint64_t v = 0;
        const uint8_t *p = bytes + IDTK_RSA2048_BYTES - 8 * (w + 1);
        for (int b = 0; b < 8; b++) v = (v << 8) | p[b];
        words[w] = v;
    }
}

static void words_to_bytes(const uint64_t *words, uint8_t *bytes) {
    for (int w = 0; w < 32; w++) {
        uint64_t v = words[w];
        uint8_t *p = bytes + IDTK_RSA2048_BYTES - 8 * (w + 1);
        for (int b = 7; b >= 0; b--) { p[b] = (uint8_t)v; v >>= 8; }
    }
}

/* 32 words (2048 bits) into 40 limbs of 52 bits, limb k at limbs[k * stride]. */
static void words_to_limbs(const uint64_t *words, uint64_t *limbs, size_t stride) {
    for (int k = 0; k < IDTK_RSA2048_LIMBS; k++) {
        const int bit = 52 * k, w = bit / 64, shift = bit % 64;
        uint64_t v = w < 32 ? words[w] >> shift : 0;
        if (shift > 12 && w + 1 < 32) v |= words[w + 1] << (64 - shift);
        limbs[k * stride] = v & MASK52;
    }
}

/* 40 normalised 52-bit limbs (limb k at limbs[k * stride]) into 33 words. */
static void limbs_to_words(const uint64_t *limbs, size_t stride, uint64_t *words) {
    memset(words, 0, 33 * sizeof(uint64_t));
    for (int k = 0; k < IDTK_RSA2048_LIMBS; k++) {
        const int bit = 52 * k, w = bit / 64, shift = bit % 64;
        const uint64_t v = limbs[k * stride];
        words[w] |= v << shift;
        if (shift > 12) words[w + 1] |= v >> (64 - shift);
    }
}

/* a >= b, on `count` words. */
static int words_at_least(const uint64_t *a, const uint64_t *b, int count) {
    for (int w = count - 1; w >= 0; w--) {
        if (a[w] != b[w]) return a[w] > b[w];
    }
    return 1;
}

static void words_subtract(uint64_t *a, const uint64_t *b, int count) {
    uint64_t borrow = 0;
    for (int w = 0; w < count; w++) {
        const uint64_t d = a[w] - b[w] - borrow;
        borrow = (a[w] < b[w]) | ((a[w] == b[w]) & borrow);
        a[w] = d;
    }
}

int idtk_rsa2048_key_init(idtk_rsa2048_key *key, const uint8_t *modulus, size_t modulus_count, uint64_t exponent,
                          const uint8_t *r_squared) {
    while (modulus_count > 0 && modulus[0] == 0) { modulus++; modulus_count--; }
    if (modulus_count != IDTK_RSA2048_BYTES || modulus[0] < 0x80 || (modulus[IDTK_RSA2048_BYTES - 1] & 1) == 0
        || exponent < 3) return 0;
    memset(key, 0, sizeof *key);
    bytes_to_words(modulus, key->n64);
    words_to_limbs(key->n64, key->n, 1);
    key->e = exponent;
    /* n^-1 mod 2^64 by Newton's iteration (each step doubles the correct low bits; n n = 1 mod 8). */
    uint64_t inverse = key->n64[0];
    for (int i = 0; i < 5; i++) inverse *= 2 - key->n64[0] * inverse;
    key->n0 = (0 - inverse) & MASK52;
    uint64_t x[33] = {0}, n[33] = {0};
    memcpy(n, key->n64, sizeof key->n64);
    if (r_squared != NULL) {
        bytes_to_words(r_squared, x);
        if (words_at_least(x, n, 33)) return 0;
        words_to_limbs(x, key->rr, 1);
        return 1;
    }
    /* R^2 = 2^4160 mod n by doubling 2^2047 (below n, whose top bit is set) 2113 times, each step reduced. */
    x[31] = 1ull << 63;
    for (int step = 0; step < 2 * 52 * IDTK_RSA2048_LIMBS - 2047; step++) {
        for (int w = 32; w > 0; w--) x[w] = (x[w] << 1) | (x[w - 1] >> 63);
        x[0] <<= 1;
        if (words_at_least(x, n, 33)) words_subtract(x, n, 33);
    }
    words_to_limbs(x, key->rr, 1);
    return 1;
}

/* The final reduction of a lane (y <= n, so at most one subtraction) and its big-endian bytes. */
static void finish_lane(const uint64_t *limbs, size_t stride, const idtk_rsa2048_key *key, uint8_t *out) {
    uint64_t words[33], n[33];
    limbs_to_words(limbs, stride, words);
    memcpy(n, key->n64, sizeof key->n64);
    n[32] = 0;
    if (words_at_least(words, n, 33)) words_subtract(words, n, 33);
    words_to_bytes(words, out);
}

/* MARK: the portable implementation: one lane at a time, V = uint64_t */

#define V uint64_t
#define KATTR
#define KFN(name) portable_##name
#define VZERO() ((uint64_t)0)
#define VSET1(x) ((uint64_t)(x))
#define VADD(a, b) ((a) + (b))
#define VAND(a, b) ((a) & (b))
#define VSRL52(a) ((a) >> 52)
#define MADDLO(acc, a, b) ((acc) + ((((a) & MASK52) * ((b) & MASK52)) & MASK52))
#define MADDHI(acc, a, b) ((acc) + (uint64_t)(((unsigned __int128)((a) & MASK52) * ((b) & MASK52)) >> 52))
#include "idtk_rsa_ifma_kernel.h"
#undef V
#undef KATTR
#undef KFN
#undef VZERO
#undef VSET1
#undef VADD
#undef VAND
#undef VSRL52
#undef MADDLO
#undef MADDHI

static void batch_portable(const idtk_rsa2048_key *const *keys, const uint8_t *signatures, uint8_t *out, size_t lanes,
                           int mask) {
    for (size_t lane = 0; lane < lanes; lane++) {
        if (!(mask >> lane & 1)) continue;
        uint64_t words[32], s[IDTK_RSA2048_LIMBS], y[IDTK_RSA2048_LIMBS];
        bytes_to_words(signatures + IDTK_RSA2048_BYTES * lane, words);
        words_to_limbs(words, s, 1);
        portable_power65537(y, s, keys[lane]->n, keys[lane]->rr, keys[lane]->n0);
        finish_lane(y, 1, keys[lane], out + IDTK_RSA2048_BYTES * lane);
    }
}

/* MARK: the IFMA implementation's code with each instruction computed in C (V = eight uint64_t): the lane
 * layout, padding and conversions of the eight-lane code run and are checked on CPUs without IFMA. */

typedef struct { uint64_t l[IDTK_RSA_BATCH_LANES]; } v8;
static inline v8 v8_set1(uint64_t x) { v8 r; for (int i = 0; i < IDTK_RSA_BATCH_LANES; i++) r.l[i] = x; return r; }
static inline v8 v8_add(v8 a, v8 b) { for (int i = 0; i < IDTK_RSA_BATCH_LANES; i++) a.l[i] += b.l[i]; return a; }
static inline v8 v8_and(v8 a, v8 b) { for (int i = 0; i < IDTK_RSA_BATCH_LANES; i++) a.l[i] &= b.l[i]; return a; }
static inline v8 v8_srl52(v8 a) { for (int i = 0; i < IDTK_RSA_BATCH_LANES; i++) a.l[i] >>= 52; return a; }
static inline v8 v8_maddlo(v8 acc, v8 a, v8 b) {
    for (int i = 0; i < IDTK_RSA_BATCH_LANES; i++) acc.l[i] += ((a.l[i] & MASK52) * (b.l[i] & MASK52)) & MASK52;
    return acc;
}
static inline v8 v8_maddhi(v8 acc, v8 a, v8 b) {
    for (int i = 0; i < IDTK_RSA_BATCH_LANES; i++) {
        acc.l[i] += (uint64_t)(((unsigned __int128)(a.l[i] & MASK52) * (b.l[i] & MASK52)) >> 52);
    }
    return acc;
}
static inline v8 v8_load(const uint64_t *p) { v8 r; memcpy(r.l, p, sizeof r.l); return r; }
static inline void v8_store(uint64_t *p, v8 v) { memcpy(p, v.l, sizeof v.l); }

#define V v8
#define KATTR
#define KFN(name) emulated_##name
#define VZERO() v8_set1(0)
#define VSET1(x) v8_set1(x)
#define VADD(a, b) v8_add((a), (b))
#define VAND(a, b) v8_and((a), (b))
#define VSRL52(a) v8_srl52(a)
#define MADDLO(acc, a, b) v8_maddlo((acc), (a), (b))
#define MADDHI(acc, a, b) v8_maddhi((acc), (a), (b))
#define VLOAD(p) v8_load(p)
#define VSTORE(p, v) v8_store((p), (v))
#include "idtk_rsa_ifma_kernel.h"
#undef V
#undef KATTR
#undef KFN
#undef VZERO
#undef VSET1
#undef VADD
#undef VAND
#undef VSRL52
#undef MADDLO
#undef MADDHI
#undef VLOAD
#undef VSTORE

/* MARK: the AVX-512 IFMA implementation: eight lanes, V = __m512i */

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define IDTK_HAVE_IFMA 1
#include <cpuid.h>
#include <immintrin.h>

#define V __m512i
#define KATTR __attribute__((target("avx512f,avx512ifma,avx512vl")))
#define KFN(name) ifma_##name
#define VZERO() _mm512_setzero_si512()
#define VSET1(x) _mm512_set1_epi64((long long)(x))
#define VADD(a, b) _mm512_add_epi64((a), (b))
#define VAND(a, b) _mm512_and_si512((a), (b))
#define VSRL52(a) _mm512_srli_epi64((a), 52)
#define MADDLO(acc, a, b) _mm512_madd52lo_epu64((acc), (a), (b))
#define MADDHI(acc, a, b) _mm512_madd52hi_epu64((acc), (a), (b))
#define VLOAD(p) _mm512_load_si512(p)
#define VSTORE(p, v) _mm512_store_si512((p), (v))
#include "idtk_rsa_ifma_kernel.h"

static int ifma_check(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) return 0;
    unsigned xcr0_lo, xcr0_hi;
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    /* The OS saves the SSE, AVX and the three AVX-512 register states (bits 1, 2, 5, 6, 7). */
    if ((xcr0_lo & 0xE6) != 0xE6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & bit_AVX512F) && (b & bit_AVX512IFMA) && (b & bit_AVX512VL);
}
#endif

int idtk_rsa_batch_ifma_available(void) {
#if IDTK_HAVE_IFMA
    static int state = -1;  /* a benign race: every thread computes the same answer */
    if (state < 0) state = ifma_check();
    return state;
#else
    return 0;
#endif
}

int idtk_rsa2048_batch_power(int implementation, const idtk_rsa2048_key *const *keys, const uint8_t *signatures,
                             uint8_t *out, size_t lanes) {
    if (lanes < 1 || lanes > IDTK_RSA_BATCH_LANES) return 0;
    /* The lanes the kernel computes; the others take the key of the first of them (and are not written). */
    const idtk_rsa2048_key *taken[IDTK_RSA_BATCH_LANES];
    const idtk_rsa2048_key *first = NULL;
    int mask = 0;
    for (size_t lane = 0; lane < lanes; lane++) {
        if (keys[lane] != NULL && keys[lane]->e == 65537) {
            mask |= 1 << lane;
            if (first == NULL) first = keys[lane];
        }
    }
    if (first == NULL) return 0;
    for (size_t lane = 0; lane < IDTK_RSA_BATCH_LANES; lane++) {
        taken[lane] = lane < lanes && (mask >> lane & 1) ? keys[lane] : first;
    }
    switch (implementation) {
#if IDTK_HAVE_IFMA
    case IDTK_RSA_BATCH_IFMA:
        if (!idtk_rsa_batch_ifma_available()) return 0;
        ifma_batch8(taken, signatures, out, lanes, mask);
        return mask;
#endif
    case IDTK_RSA_BATCH_PORTABLE:
        batch_portable(taken, signatures, out, lanes, mask);
        return mask;
    case IDTK_RSA_BATCH_EMULATED_IFMA:
        emulated_batch8(taken, signatures, out, lanes, mask);
        return mask;
    default:
        return 0;
    }
}
