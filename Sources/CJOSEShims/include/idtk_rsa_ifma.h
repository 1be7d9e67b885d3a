#ifndef IDTOKENKIT_RSA_IFMA_H
#define IDTOKENKIT_RSA_IFMA_H

/* RSA-2048 public operations, eight at once: s^e mod n for up to eight (signature, key) pairs, computed side by
 * side in the eight 64-bit lanes of AVX-512 registers with the IFMA multiply-accumulate instructions
 * (vpmadd52luq/vpmadd52huq), when the CPU has them. Numbers are 40 limbs of 52 bits; each lane does its own
 * Montgomery multiplications with its own modulus, so the lanes of one call may hold different keys.
 *
 * The same arithmetic also runs as portable C (IDTK_RSA_BATCH_PORTABLE), one lane after another: it is what the
 * differential tests and the fuzz target check on machines without IFMA, and far slower than libcrypto, so it is
 * never chosen by default. Inputs are public (signatures and public keys), so nothing here is constant-time. */

#include <stddef.h>
#include <stdint.h>

#define IDTK_RSA2048_LIMBS 40
#define IDTK_RSA2048_BYTES 256
#define IDTK_RSA_BATCH_LANES 8

/* The kernel's implementations. */
#define IDTK_RSA_BATCH_IFMA 1
#define IDTK_RSA_BATCH_PORTABLE 2
/* The IFMA implementation's eight-lane code with each vector instruction computed in C: for tests on CPUs
 * without IFMA (it checks the lane layout, padding and conversions the portable one does not use); slow. */
#define IDTK_RSA_BATCH_EMULATED_IFMA 3

/* A 2048-bit public key's Montgomery constants, computed once when the key is loaded. */
typedef struct {
    uint64_t n[IDTK_RSA2048_LIMBS];  /* the modulus, 52-bit limbs, least significant first */
    uint64_t rr[IDTK_RSA2048_LIMBS]; /* R^2 mod n, R = 2^(52*40) = 2^2080, 52-bit limbs */
    uint64_t n0;                     /* -n^-1 mod 2^52 */
    uint64_t e;                      /* the public exponent */
    uint64_t n64[32];                /* the modulus, 64-bit words, least significant first */
} idtk_rsa2048_key;

/* Fills `key` from a big-endian modulus and exponent, and R^2 mod n as 256 big-endian bytes when the caller
 * has it (libcrypto's BN_mod takes a few microseconds; NULL: computed here by 2113 doublings, about 85 us).
 * Returns 1 when the modulus is odd and exactly 2048 bits (after leading zero bytes), the exponent is at least
 * 3 and r_squared is below n, else 0 (the key then stays on libcrypto). */
int idtk_rsa2048_key_init(idtk_rsa2048_key *key, const uint8_t *modulus, size_t modulus_count, uint64_t exponent,
                          const uint8_t *r_squared);

/* 1 when this CPU can run IDTK_RSA_BATCH_IFMA (AVX-512 F, VL and IFMA, with the OS saving the registers). */
int idtk_rsa_batch_ifma_available(void);

/* For each lane i of the `lanes` (1...8) whose key keys[i] is not NULL and has e = 65537: out[256 i ...] =
 * (signature i)^65537 mod n, big-endian, 256 bytes, where signature i is the 256 big-endian bytes at
 * signatures[256 i ...] (any value below 2^2048, n or above too). Other lanes' output is not written: the caller
 * computes them otherwise (libcrypto). Returns the lanes computed as a bit mask (bit i: lane i), 0 when
 * `implementation` is unknown or cannot run on this CPU, `lanes` is out of range, or no lane could be taken. */
int idtk_rsa2048_batch_power(int implementation, const idtk_rsa2048_key *const *keys, const uint8_t *signatures,
                             uint8_t *out, size_t lanes);

#endif
