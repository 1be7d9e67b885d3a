/* The Montgomery arithmetic of idtk_rsa_ifma.c, written once over a lane type V and included once per
 * implementation: V is __m512i (eight lanes, AVX-512 IFMA) or uint64_t (one lane, portable C). Every operation
 * means the same thing in each lane, so the portable build checks the arithmetic of the vector one.
 *
 * Before including, define: V, KATTR (function attributes), KFN(name), VZERO(), VSET1(x), VADD(a, b),
 * VAND(a, b), VSRL52(a), MADDLO(acc, a, b) = acc + low 52 bits of (a mod 2^52)(b mod 2^52), MADDHI(acc, a, b) =
 * acc + high 52 bits of that 104-bit product (vpmadd52luq / vpmadd52huq); for an eight-lane V also VLOAD(p) and
 * VSTORE(p, v) (eight aligned uint64_t). */

/* r = a b R^-1 mod n, R = 2^2080, up to one extra n: for a, b < 2n it returns r < 2n (because 4n < R), as
 * 40 normalised 52-bit limbs. Operand scanning: row i adds a b_i and m n (m chosen so that limb i becomes
 * divisible by 2^52) at limb offset i, so the row's division by 2^52 is a change of offset and no limb moves.
 * The low halves of the products go to lo[], the high halves to hi[] (one limb up): within a row no limb is
 * written twice by different j, so the multiply-accumulates of a row do not wait on each other (one array
 * with lo and hi both added into it made a chain from each limb to the next). Carries are not propagated
 * inside the rows: a limb of lo[] or hi[] receives at most 2 x 40 terms below 2^52 and one carry, < 2^60,
 * so it never overflows 64 bits; only limb i of row i, whose low 52 bits choose m, has its carry moved up.
 * r may alias a or b: it is written after the last read of them. */
static KATTR void KFN(amm)(V *r, const V *a, const V *b, const V *n, V n0) {
    V lo[2 * IDTK_RSA2048_LIMBS + 1], hi[2 * IDTK_RSA2048_LIMBS + 1];
    const V mask = VSET1(0xFFFFFFFFFFFFFull);
    for (int k = 0; k < 2 * IDTK_RSA2048_LIMBS + 1; k++) lo[k] = hi[k] = VZERO();
    for (int i = 0; i < IDTK_RSA2048_LIMBS; i++) {
        const V bi = b[i];
        /* Limb i is complete but for this row's j = 0 terms: choose m from it, then retire it. */
        V low = VADD(MADDLO(lo[i], a[0], bi), hi[i]);
        const V m = MADDLO(VZERO(), VAND(low, mask), n0);
        low = MADDLO(low, n[0], m);
        lo[i + 1] = VADD(lo[i + 1], VSRL52(low));
        for (int j = 1; j < IDTK_RSA2048_LIMBS; j++) lo[i + j] = MADDLO(MADDLO(lo[i + j], a[j], bi), n[j], m);
        for (int j = 0; j < IDTK_RSA2048_LIMBS; j++) hi[i + j + 1] = MADDHI(MADDHI(hi[i + j + 1], a[j], bi), n[j], m);
    }
    /* The result is limbs 40...80 of lo + hi (< 2n < 2^2049, so limb 80 and the last carry are zero). */
    V carry = VZERO();
    for (int k = 0; k < IDTK_RSA2048_LIMBS; k++) {
        const V v = VADD(VADD(lo[IDTK_RSA2048_LIMBS + k], hi[IDTK_RSA2048_LIMBS + k]), carry);
        r[k] = VAND(v, mask);
        carry = VSRL52(v);
    }
}

/* y = s^65537 R^0 mod n, up to one extra n (y <= n): s into the Montgomery domain (s rr R^-1 = s R, < 2n for
 * any s < 2^2048), sixteen squarings, one multiplication by s R, and out of the domain (a multiplication by 1,
 * whose result is at most n). */
static KATTR void KFN(power65537)(V *y, const V *s, const V *n, const V *rr, V n0) {
    V x[IDTK_RSA2048_LIMBS], one[IDTK_RSA2048_LIMBS];
    KFN(amm)(x, s, rr, n, n0);
    KFN(amm)(y, x, x, n, n0);
    for (int k = 1; k < 16; k++) KFN(amm)(y, y, y, n, n0);
    KFN(amm)(y, y, x, n, n0);
    one[0] = VSET1(1);
    for (int k = 1; k < IDTK_RSA2048_LIMBS; k++) one[k] = VZERO();
    KFN(amm)(y, y, one, n, n0);
}

#ifdef VLOAD
/* Eight lanes side by side (when the includer defines VLOAD and VSTORE, for an eight-lane V): lanes outside
 * `mask` compute a zero signature with the key they are given, and are dropped. */
static KATTR void KFN(batch8)(const idtk_rsa2048_key *const *keys, const uint8_t *signatures, uint8_t *out, size_t lanes,
                             int mask) {
    _Alignas(64) uint64_t s[IDTK_RSA2048_LIMBS][IDTK_RSA_BATCH_LANES] = {{0}};
    _Alignas(64) uint64_t n[IDTK_RSA2048_LIMBS][IDTK_RSA_BATCH_LANES];
    _Alignas(64) uint64_t rr[IDTK_RSA2048_LIMBS][IDTK_RSA_BATCH_LANES];
    _Alignas(64) uint64_t n0[IDTK_RSA_BATCH_LANES];
    _Alignas(64) uint64_t y[IDTK_RSA2048_LIMBS][IDTK_RSA_BATCH_LANES];
    for (size_t lane = 0; lane < IDTK_RSA_BATCH_LANES; lane++) {
        const idtk_rsa2048_key *key = keys[lane];
        if (mask >> lane & 1) {
            uint64_t words[32];
            bytes_to_words(signatures + IDTK_RSA2048_BYTES * lane, words);
            words_to_limbs(words, &s[0][lane], IDTK_RSA_BATCH_LANES);
        }
        for (int k = 0; k < IDTK_RSA2048_LIMBS; k++) {
            n[k][lane] = key->n[k];
            rr[k][lane] = key->rr[k];
        }
        n0[lane] = key->n0;
    }
    V vs[IDTK_RSA2048_LIMBS], vn[IDTK_RSA2048_LIMBS], vrr[IDTK_RSA2048_LIMBS], vy[IDTK_RSA2048_LIMBS];
    for (int k = 0; k < IDTK_RSA2048_LIMBS; k++) {
        vs[k] = VLOAD(s[k]);
        vn[k] = VLOAD(n[k]);
        vrr[k] = VLOAD(rr[k]);
    }
    KFN(power65537)(vy, vs, vn, vrr, VLOAD(n0));
    for (int k = 0; k < IDTK_RSA2048_LIMBS; k++) VSTORE(y[k], vy[k]);
    for (size_t lane = 0; lane < lanes; lane++) {
        if (mask >> lane & 1) finish_lane(&y[0][lane], IDTK_RSA_BATCH_LANES, keys[lane], out + IDTK_RSA2048_BYTES * lane);
    }
}
#endif
