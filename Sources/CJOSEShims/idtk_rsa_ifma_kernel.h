/* The Montgomery arithmetic of idtk_rsa_ifma.c, written once over a lane type V and included once per
 * implementation: V is __m512i (eight lanes, AVX-512 IFMA) or uint64_t (one lane, portable C). Every operation
 * means the same thing in each lane, so the portable build checks the arithmetic of the vector one.
 *
 * Before including, define: V, KATTR (function attributes), KFN(name), VZERO(), VSET1(x), VADD(a, b),
 * VAND(a, b), VSRL52(a), MADDLO(acc, a, b) = acc + low 52 bits of (a mod 2^52)(b mod 2^52), MADDHI(acc, a, b) =
 * acc + high 52 bits of that 104-bit product (vpmadd52luq / vpmadd52huq); for an eight-lane V also VLOAD(p) and
 * VSTORE(p, v) (eight aligned uint64_t). The includer also defines MASK52 and COLUMN_FIRST(k). */

/* Montgomery multiplication by product scanning: the result's limbs are computed column by column (column k: every
 * product whose limbs' indices add up to k), each column summed in registers, so that nothing but the m limbs and
 * the result is stored. R = 2^2080. A column's sum t holds the low halves of its products, the high halves of
 * column k - 1's and the carry of column k - 1. The reduction's part of column k (reduce_column) adds m_i n_(k-i)
 * for the m chosen so far; while k < 40 it chooses m_k so that t + m_k n_0 is divisible by 2^52 and drops those
 * 52 zero bits; from k = 40 on the column is the result's limb k - 40. Each accumulator sums at most 40 halves
 * below 2^52, and a column's t at most 4 x 40 + 2 and a carry (< 2^8): below 2^61, no overflow. The result of
 * (x + m n) / R with x < R n is below x / R + n: for x = a b with a, b < 2n, below 2n (4n < R), and for x = a < 2n
 * (out of the domain), at most n. Its limb 80 and last carry are zero, so columns 0...79 are computed.
 * (On the lent Xeon this is 1.36 times as fast as the row-by-row form before it, which stored every limb of its
 * rows after each multiply-accumulate: BENCHMARKS.md, issue 27.) */

/* Adds the low halves of x_i y_(k-i), i = first...last, to *lo and their high halves to *hi, on two chains each
 * (even and odd i), so that a multiply-accumulate seldom waits for the one before it (four cycles of latency). */
static inline __attribute__((always_inline)) KATTR void KFN(column)(const V *x, const V *y, int k, int first, int last,
                                                                 V *lo, V *hi) {
    V lo1 = *lo, hi1 = *hi, lo2 = VZERO(), hi2 = VZERO();
    int i = first;
    for (; i < last; i += 2) {
        lo1 = MADDLO(lo1, x[i], y[k - i]);
        hi1 = MADDHI(hi1, x[i], y[k - i]);
        lo2 = MADDLO(lo2, x[i + 1], y[k - i - 1]);
        hi2 = MADDHI(hi2, x[i + 1], y[k - i - 1]);
    }
    if (i == last) {
        lo1 = MADDLO(lo1, x[i], y[k - i]);
        hi1 = MADDHI(hi1, x[i], y[k - i]);
    }
    *lo = VADD(lo1, lo2);
    *hi = VADD(hi1, hi2);
}

/* Column k's reduction, as above: `t` is column k's sum of the product's terms; `mhi` carries the reduction's high
 * halves to the next column, `carry` the column's bits above 52. */
static inline __attribute__((always_inline)) KATTR void KFN(reduce_column)(int k, V t, V *carry, V *mhi, V *m,
                                                                        const V *n, V n0, V *r) {
    const int first = COLUMN_FIRST(k);
    const int last = k < IDTK_RSA2048_LIMBS ? k - 1 : IDTK_RSA2048_LIMBS - 1;
    V lo = VZERO(), next = VZERO();
    KFN(column)(m, n, k, first, last, &lo, &next);
    t = VADD(VADD(t, lo), VADD(*mhi, *carry));
    if (k < IDTK_RSA2048_LIMBS) {
        m[k] = MADDLO(VZERO(), VAND(t, VSET1(MASK52)), n0);
        t = MADDLO(t, m[k], n[0]);
        next = MADDHI(next, m[k], n[0]);
    } else {
        r[k - IDTK_RSA2048_LIMBS] = VAND(t, VSET1(MASK52));
    }
    *carry = VSRL52(t);
    *mhi = next;
}

/* r = a b R^-1 mod n, up to one extra n (r < 2n for a, b < 2n), as 40 normalised 52-bit limbs. r may alias a or
 * b: limb k - 40 of r is written in column k, after the last read of limb k - 40 of a and b (column k - 1). */
static KATTR void KFN(amm)(V *r, const V *a, const V *b, const V *n, V n0) {
    V m[IDTK_RSA2048_LIMBS], carry = VZERO(), mhi = VZERO(), hi = VZERO();
    for (int k = 0; k < 2 * IDTK_RSA2048_LIMBS; k++) {
        const int first = COLUMN_FIRST(k);
        const int last = k < IDTK_RSA2048_LIMBS ? k : IDTK_RSA2048_LIMBS - 1;
        V lo = VZERO(), next = VZERO();
        KFN(column)(a, b, k, first, last, &lo, &next);
        KFN(reduce_column)(k, VADD(lo, hi), &carry, &mhi, m, n, n0, r);
        hi = next;
    }
}

/* r = a a R^-1 mod n, what amm(r, a, a) returns, with each product of two different limbs taken once: column k
 * sums a_i a_(k-i) for i < k - i, doubles the sum (with the high halves of column k - 1's such products) and adds
 * the square a_(k/2)^2's low half when k is even, the high half of a_((k-1)/2)^2 when k is odd. 4,840
 * multiply-accumulates against amm's 6,400. r may alias a, as in amm. */
static KATTR void KFN(ams)(V *r, const V *a, const V *n, V n0) {
    V m[IDTK_RSA2048_LIMBS], carry = VZERO(), mhi = VZERO(), hi = VZERO(), square_hi = VZERO();
    for (int k = 0; k < 2 * IDTK_RSA2048_LIMBS; k++) {
        const int first = COLUMN_FIRST(k);
        V lo = VZERO(), next = VZERO();
        KFN(column)(a, a, k, first, k / 2 - (k % 2 == 0), &lo, &next);  /* i < k - i */
        const V twice = VADD(lo, hi);
        V t = VADD(VADD(twice, twice), square_hi);
        square_hi = VZERO();
        if (k % 2 == 0 && k / 2 < IDTK_RSA2048_LIMBS) {
            t = MADDLO(t, a[k / 2], a[k / 2]);
            square_hi = MADDHI(square_hi, a[k / 2], a[k / 2]);
        }
        KFN(reduce_column)(k, t, &carry, &mhi, m, n, n0, r);
        hi = next;
    }
}

/* r = a R^-1 mod n for a < 2n: out of the Montgomery domain, what amm(r, a, 1) returns, by the reduction alone
 * (3,200 multiply-accumulates); at most n. r may alias a. */
static KATTR void KFN(from_montgomery)(V *r, const V *a, const V *n, V n0) {
    V m[IDTK_RSA2048_LIMBS], carry = VZERO(), mhi = VZERO();
    for (int k = 0; k < 2 * IDTK_RSA2048_LIMBS; k++) {
        KFN(reduce_column)(k, k < IDTK_RSA2048_LIMBS ? a[k] : VZERO(), &carry, &mhi, m, n, n0, r);
    }
}

/* y = s^65537 R^0 mod n, up to one extra n (y <= n): s into the Montgomery domain (s rr R^-1 = s R, < 2n for
 * any s < 2^2048), sixteen squarings (ams), one multiplication by s R, and out of the domain (from_montgomery,
 * whose result is at most n). */
static KATTR void KFN(power65537)(V *y, const V *s, const V *n, const V *rr, V n0) {
    V x[IDTK_RSA2048_LIMBS];
    KFN(amm)(x, s, rr, n, n0);
    KFN(ams)(y, x, n, n0);
    for (int k = 1; k < 16; k++) KFN(ams)(y, y, n, n0);
    KFN(amm)(y, y, x, n, n0);
    KFN(from_montgomery)(y, y, n, n0);
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
