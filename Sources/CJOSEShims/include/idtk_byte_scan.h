#ifndef IDTOKENKIT_BYTE_SCAN_H
#define IDTOKENKIT_BYTE_SCAN_H

/* Sixteen-byte scans for the JSON reader in JOSE, as static inline functions so that the Swift compiler
 * inlines them into the reader's loops (a call would cost more than the scan of a short string). Swift's
 * own SIMD types do not lower these compares and the mask extraction to single vector instructions. */

#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

/* The position (0...15) of the first of the sixteen bytes at p that is '"', '\\', a control character (below 0x20)
 * or 0x80 and above, and with stop_at_del DEL (0x7F) too; 16 when there is none. Reads exactly sixteen bytes. The two
 * scans below call it with a constant, which the compiler folds. */
static inline unsigned idtk_first_special16(const uint8_t *p, int stop_at_del) {
#if defined(__SSE2__)
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    /* A signed compare: bytes 0x80...0xFF are negative, so they are "below 0x20" too. */
    __m128i low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
    __m128i hit = _mm_or_si128(_mm_or_si128(quote, backslash), low);
    if (stop_at_del) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F)));
    unsigned mask = (unsigned)_mm_movemask_epi8(hit);
    return mask ? (unsigned)__builtin_ctz(mask) : 16u;
#elif defined(__ARM_NEON)
    uint8x16_t v = vld1q_u8(p);
    uint8x16_t hit = vorrq_u8(vorrq_u8(vceqq_u8(v, vdupq_n_u8('"')), vceqq_u8(v, vdupq_n_u8('\\'))),
                              vorrq_u8(vcltq_u8(v, vdupq_n_u8(0x20)), vcgeq_u8(v, vdupq_n_u8(stop_at_del ? 0x7F : 0x80))));
    /* Four bits a byte: shift each 16-bit lane right by 4 and narrow. */
    uint64_t mask = vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(hit), 4)), 0);
    return mask ? (unsigned)(__builtin_ctzll(mask) >> 2) : 16u;
#else
    for (unsigned i = 0; i < 16; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\' || c < 0x20 || c >= (stop_at_del ? 0x7F : 0x80)) return i;
    }
    return 16u;
#endif
}

/* The position (0...15) of the first of the sixteen bytes at p that a JSON string cannot hold as is: '"',
 * '\\', a control character (below 0x20) or a byte of a multi-byte UTF-8 sequence (0x80 and above); 16 when
 * all sixteen are plain printable ASCII (DEL included, which JSON allows). The JSON reader's string scan. */
static inline unsigned idtk_first_string_special16(const uint8_t *p) { return idtk_first_special16(p, 0); }

/* The same with DEL: the first byte that is not printable ASCII (0x20...0x7E) or is '"' or '\\', where a JSON
 * string whose bytes are its text ends, or stops being that simple (the audit's record lines). */
static inline unsigned idtk_first_not_plain16(const uint8_t *p) { return idtk_first_special16(p, 1); }

/* The position (0...15) of the first of the sixteen bytes at p outside lo...hi (unsigned); 16 when all are in it.
 * ByteSearch's range scans: visible or printable ASCII (a bearer token, a header value), the end of a header line.
 * Reads exactly sixteen bytes. */
static inline unsigned idtk_first_outside16(const uint8_t *p, uint8_t lo, uint8_t hi) {
#if defined(__SSE2__)
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    /* Saturating differences: nonzero exactly where v < lo, or v > hi. */
    __m128i below = _mm_subs_epu8(_mm_set1_epi8((char)lo), v);
    __m128i above = _mm_subs_epu8(v, _mm_set1_epi8((char)hi));
    __m128i inside = _mm_cmpeq_epi8(_mm_or_si128(below, above), _mm_setzero_si128());
    unsigned mask = ~(unsigned)_mm_movemask_epi8(inside) & 0xFFFFu;
    return mask ? (unsigned)__builtin_ctz(mask) : 16u;
#elif defined(__ARM_NEON)
    uint8x16_t v = vld1q_u8(p);
    uint8x16_t hit = vorrq_u8(vcltq_u8(v, vdupq_n_u8(lo)), vcgtq_u8(v, vdupq_n_u8(hi)));
    uint64_t mask = vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(hit), 4)), 0);
    return mask ? (unsigned)(__builtin_ctzll(mask) >> 2) : 16u;
#else
    for (unsigned i = 0; i < 16; i++) {
        if (p[i] < lo || p[i] > hi) return i;
    }
    return 16u;
#endif
}

/* How many of the n bytes at p can be skipped, sixty-four at a time, as all inside lo...hi: a multiple of 64 that
 * stops before the first block holding a byte outside the range (the caller finds that byte sixteen at a time). For
 * the long runs of a header line that holds a token, where one test a block costs a third of four. */
static inline size_t idtk_inside_blocks64(const uint8_t *p, size_t n, uint8_t lo, uint8_t hi) {
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i low = _mm_set1_epi8((char)lo), high = _mm_set1_epi8((char)hi);
    while (i + 64 <= n) {
        __m128i a = _mm_loadu_si128((const __m128i *)(p + i)), b = _mm_loadu_si128((const __m128i *)(p + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(p + i + 32)), d = _mm_loadu_si128((const __m128i *)(p + i + 48));
        /* Saturating differences, as in idtk_first_outside16: nonzero in a lane outside the range. */
        __m128i out = _mm_or_si128(_mm_or_si128(_mm_subs_epu8(low, a), _mm_subs_epu8(a, high)),
                                   _mm_or_si128(_mm_subs_epu8(low, b), _mm_subs_epu8(b, high)));
        out = _mm_or_si128(out, _mm_or_si128(_mm_or_si128(_mm_subs_epu8(low, c), _mm_subs_epu8(c, high)),
                                             _mm_or_si128(_mm_subs_epu8(low, d), _mm_subs_epu8(d, high))));
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(out, _mm_setzero_si128())) != 0xFFFF) break;
        i += 64;
    }
#elif defined(__ARM_NEON)
    const uint8x16_t low = vdupq_n_u8(lo), high = vdupq_n_u8(hi);
    while (i + 64 <= n) {
        uint8x16_t a = vld1q_u8(p + i), b = vld1q_u8(p + i + 16), c = vld1q_u8(p + i + 32), d = vld1q_u8(p + i + 48);
        uint8x16_t out = vorrq_u8(vorrq_u8(vorrq_u8(vcltq_u8(a, low), vcgtq_u8(a, high)), vorrq_u8(vcltq_u8(b, low), vcgtq_u8(b, high))),
                                  vorrq_u8(vorrq_u8(vcltq_u8(c, low), vcgtq_u8(c, high)), vorrq_u8(vcltq_u8(d, low), vcgtq_u8(d, high))));
        if (vmaxvq_u8(out) != 0) break;
        i += 64;
    }
#endif
    (void)p; (void)lo; (void)hi;
    return i;
}

/* The position (0...15) of the first of the sixteen bytes at p that is not base64url (A-Z a-z 0-9 - _); 16 when all
 * sixteen are. The audit's search for a compact JWS in a line of text, a token being a kilobyte of base64url.
 * Reads exactly sixteen bytes. */
static inline unsigned idtk_first_non_base64url16(const uint8_t *p) {
#if defined(__SSE2__)
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    /* Signed compares: bytes from 0x80 are negative and fall in no range. Setting bit 5 maps A-Z onto a-z, and
     * nothing else onto a-z. */
    __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(folded, _mm_set1_epi8('z' + 1)));
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    __m128i mark = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('-')), _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
    unsigned mask = ~(unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), mark)) & 0xFFFFu;
    return mask ? (unsigned)__builtin_ctz(mask) : 16u;
#elif defined(__ARM_NEON)
    uint8x16_t v = vld1q_u8(p);
    uint8x16_t folded = vorrq_u8(v, vdupq_n_u8(0x20));
    uint8x16_t letter = vandq_u8(vcgeq_u8(folded, vdupq_n_u8('a')), vcleq_u8(folded, vdupq_n_u8('z')));
    uint8x16_t digit = vandq_u8(vcgeq_u8(v, vdupq_n_u8('0')), vcleq_u8(v, vdupq_n_u8('9')));
    uint8x16_t mark = vorrq_u8(vceqq_u8(v, vdupq_n_u8('-')), vceqq_u8(v, vdupq_n_u8('_')));
    uint8x16_t miss = vmvnq_u8(vorrq_u8(vorrq_u8(letter, digit), mark));
    uint64_t mask = vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(miss), 4)), 0);
    return mask ? (unsigned)(__builtin_ctzll(mask) >> 2) : 16u;
#else
    for (unsigned i = 0; i < 16; i++) {
        uint8_t c = p[i], f = c | 0x20;
        if (!((f >= 'a' && f <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return i;
    }
    return 16u;
#endif
}

#endif
