#ifndef IDTOKENKIT_BYTE_SCAN_H
#define IDTOKENKIT_BYTE_SCAN_H

/* Byte scans for JOSE's JSON reader and ByteSearch, as static inline functions so that the Swift compiler inlines
 * them into its loops (a call would cost more than the scan of a short string). Swift's own SIMD types do not lower
 * these compares and the mask extraction to single vector instructions.
 *
 * Each scan stops at the bytes of one class (IDTK_STOP_*). For each class there is one test of sixteen bytes, which
 * both the position of the first stop among sixteen bytes (idtk_first_stop16) and the skip of whole blocks of
 * sixty-four bytes without a stop (idtk_clear_blocks64) use. The class is a constant at every call, which the
 * compiler folds. */

#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

enum {
    /* '"', '\\', a control character (below 0x20) or 0x80 and above: where a JSON string stops being plain text. */
    IDTK_STOP_STRING_SPECIAL = 0,
    /* The same and DEL (0x7F): outside printable ASCII, or '"' or '\\'. */
    IDTK_STOP_NOT_PLAIN = 1,
    /* Outside lo...hi (unsigned). */
    IDTK_STOP_OUTSIDE = 2,
    /* Not base64url (A-Z a-z 0-9 - _). */
    IDTK_STOP_NOT_BASE64URL = 3
};

#if defined(__SSE2__)
/* Sixteen bytes' stops: nonzero in the lanes of bytes of class `stop`, zero in the others. */
static inline __m128i idtk_stops_v(__m128i v, int stop, uint8_t lo, uint8_t hi) {
    switch (stop) {
    case IDTK_STOP_STRING_SPECIAL:
    case IDTK_STOP_NOT_PLAIN: {
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
        /* A signed compare: bytes 0x80...0xFF are negative, so they are "below 0x20" too. */
        hit = _mm_or_si128(hit, _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        if (stop == IDTK_STOP_NOT_PLAIN) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F)));
        return hit;
    }
    case IDTK_STOP_OUTSIDE:
        /* Saturating differences: nonzero exactly where v < lo, or v > hi. */
        return _mm_or_si128(_mm_subs_epu8(_mm_set1_epi8((char)lo), v), _mm_subs_epu8(v, _mm_set1_epi8((char)hi)));
    default: {
        /* Signed compares: bytes from 0x80 are negative and fall in no range. Setting bit 5 maps A-Z onto a-z, and
         * nothing else onto a-z. */
        __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(folded, _mm_set1_epi8('z' + 1)));
        __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
        __m128i mark = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('-')), _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
        return _mm_xor_si128(_mm_or_si128(_mm_or_si128(letter, digit), mark), _mm_set1_epi8((char)0xFF));
    }
    }
}
#elif defined(__ARM_NEON)
/* Sixteen bytes' stops: 0xFF in the lanes of bytes of class `stop`, zero in the others. */
static inline uint8x16_t idtk_stops_v(uint8x16_t v, int stop, uint8_t lo, uint8_t hi) {
    switch (stop) {
    case IDTK_STOP_STRING_SPECIAL:
    case IDTK_STOP_NOT_PLAIN:
        return vorrq_u8(vorrq_u8(vceqq_u8(v, vdupq_n_u8('"')), vceqq_u8(v, vdupq_n_u8('\\'))),
                        vorrq_u8(vcltq_u8(v, vdupq_n_u8(0x20)), vcgeq_u8(v, vdupq_n_u8(stop == IDTK_STOP_NOT_PLAIN ? 0x7F : 0x80))));
    case IDTK_STOP_OUTSIDE:
        return vorrq_u8(vcltq_u8(v, vdupq_n_u8(lo)), vcgtq_u8(v, vdupq_n_u8(hi)));
    default: {
        uint8x16_t folded = vorrq_u8(v, vdupq_n_u8(0x20));
        uint8x16_t letter = vandq_u8(vcgeq_u8(folded, vdupq_n_u8('a')), vcleq_u8(folded, vdupq_n_u8('z')));
        uint8x16_t digit = vandq_u8(vcgeq_u8(v, vdupq_n_u8('0')), vcleq_u8(v, vdupq_n_u8('9')));
        uint8x16_t mark = vorrq_u8(vceqq_u8(v, vdupq_n_u8('-')), vceqq_u8(v, vdupq_n_u8('_')));
        return vmvnq_u8(vorrq_u8(vorrq_u8(letter, digit), mark));
    }
    }
}
#endif

/* Whether byte c is of class `stop`: the portable reading, for machines without SSE2 or NEON. */
static inline int idtk_stops_byte(uint8_t c, int stop, uint8_t lo, uint8_t hi) {
    switch (stop) {
    case IDTK_STOP_STRING_SPECIAL: return c == '"' || c == '\\' || c < 0x20 || c >= 0x80;
    case IDTK_STOP_NOT_PLAIN: return c == '"' || c == '\\' || c < 0x20 || c >= 0x7F;
    case IDTK_STOP_OUTSIDE: return c < lo || c > hi;
    default: {
        uint8_t f = c | 0x20;
        return !((f >= 'a' && f <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_');
    }
    }
}

/* The position (0...15) of the first of the sixteen bytes at p of class `stop`; 16 when there is none. Reads exactly
 * sixteen bytes. */
static inline unsigned idtk_first_stop16(const uint8_t *p, int stop, uint8_t lo, uint8_t hi) {
#if defined(__SSE2__)
    __m128i stops = idtk_stops_v(_mm_loadu_si128((const __m128i *)p), stop, lo, hi);
    unsigned mask = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(stops, _mm_setzero_si128())) & 0xFFFFu;
    return mask ? (unsigned)__builtin_ctz(mask) : 16u;
#elif defined(__ARM_NEON)
    uint8x16_t stops = idtk_stops_v(vld1q_u8(p), stop, lo, hi);
    /* Four bits a byte: shift each 16-bit lane right by 4 and narrow. */
    uint64_t mask = vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(stops), 4)), 0);
    return mask ? (unsigned)(__builtin_ctzll(mask) >> 2) : 16u;
#else
    for (unsigned i = 0; i < 16; i++) {
        if (idtk_stops_byte(p[i], stop, lo, hi)) return i;
    }
    return 16u;
#endif
}

/* How many of the n bytes at p can be skipped, sixty-four at a time, as holding no byte of class `stop`: a multiple
 * of 64 that ends before the first block holding one (the caller finds that byte sixteen at a time). For the long
 * runs of a token (a kilobyte), where one test a block costs about a third of four tests of sixteen bytes. */
static inline size_t idtk_clear_blocks64(const uint8_t *p, size_t n, int stop, uint8_t lo, uint8_t hi) {
    size_t i = 0;
#if defined(__SSE2__)
    while (i + 64 <= n) {
        __m128i a = _mm_loadu_si128((const __m128i *)(p + i)), b = _mm_loadu_si128((const __m128i *)(p + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(p + i + 32)), d = _mm_loadu_si128((const __m128i *)(p + i + 48));
        __m128i any;
        if (stop == IDTK_STOP_NOT_BASE64URL) {
            any = _mm_or_si128(_mm_or_si128(idtk_stops_v(a, stop, lo, hi), idtk_stops_v(b, stop, lo, hi)),
                               _mm_or_si128(idtk_stops_v(c, stop, lo, hi), idtk_stops_v(d, stop, lo, hi)));
        } else {
            /* The range classes test the block's smallest and largest byte once (unsigned), not each vector. */
            __m128i least = _mm_min_epu8(_mm_min_epu8(a, b), _mm_min_epu8(c, d));
            __m128i most = _mm_max_epu8(_mm_max_epu8(a, b), _mm_max_epu8(c, d));
            uint8_t low = stop == IDTK_STOP_OUTSIDE ? lo : 0x20;
            uint8_t high = stop == IDTK_STOP_OUTSIDE ? hi : stop == IDTK_STOP_NOT_PLAIN ? 0x7E : 0x7F;
            any = _mm_or_si128(_mm_subs_epu8(_mm_set1_epi8((char)low), least), _mm_subs_epu8(most, _mm_set1_epi8((char)high)));
            if (stop != IDTK_STOP_OUTSIDE) {
                const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
                any = _mm_or_si128(any, _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(a, quote), _mm_cmpeq_epi8(a, backslash)),
                                                     _mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, backslash))));
                any = _mm_or_si128(any, _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(c, quote), _mm_cmpeq_epi8(c, backslash)),
                                                     _mm_or_si128(_mm_cmpeq_epi8(d, quote), _mm_cmpeq_epi8(d, backslash))));
            }
        }
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(any, _mm_setzero_si128())) != 0xFFFF) break;
        i += 64;
    }
#elif defined(__ARM_NEON)
    while (i + 64 <= n) {
        uint8x16_t any = vorrq_u8(vorrq_u8(idtk_stops_v(vld1q_u8(p + i), stop, lo, hi), idtk_stops_v(vld1q_u8(p + i + 16), stop, lo, hi)),
                                  vorrq_u8(idtk_stops_v(vld1q_u8(p + i + 32), stop, lo, hi), idtk_stops_v(vld1q_u8(p + i + 48), stop, lo, hi)));
        if (vmaxvq_u8(any) != 0) break;
        i += 64;
    }
#else
    (void)p; (void)n; (void)stop; (void)lo; (void)hi;
#endif
    return i;
}

/* The position (0...15) of the first of the sixteen bytes at p that a JSON string cannot hold as is: '"',
 * '\\', a control character (below 0x20) or a byte of a multi-byte UTF-8 sequence (0x80 and above); 16 when
 * all sixteen are plain printable ASCII (DEL included, which JSON allows). The JSON reader's string scan. */
static inline unsigned idtk_first_string_special16(const uint8_t *p) {
    return idtk_first_stop16(p, IDTK_STOP_STRING_SPECIAL, 0, 0);
}

/* The same with DEL: the first byte that is not printable ASCII (0x20...0x7E) or is '"' or '\\', where a JSON
 * string whose bytes are its text ends, or stops being that simple (the audit's record lines). */
static inline unsigned idtk_first_not_plain16(const uint8_t *p) { return idtk_first_stop16(p, IDTK_STOP_NOT_PLAIN, 0, 0); }

/* How many bytes at p can be skipped, sixty-four at a time, as plain in the sense of idtk_first_not_plain16. */
static inline size_t idtk_plain_blocks64(const uint8_t *p, size_t n) {
    return idtk_clear_blocks64(p, n, IDTK_STOP_NOT_PLAIN, 0, 0);
}

/* The position (0...15) of the first of the sixteen bytes at p outside lo...hi (unsigned); 16 when all are in it.
 * ByteSearch's range scans: visible or printable ASCII (a bearer token, a header value), the end of a header line.
 * Reads exactly sixteen bytes. */
static inline unsigned idtk_first_outside16(const uint8_t *p, uint8_t lo, uint8_t hi) {
    return idtk_first_stop16(p, IDTK_STOP_OUTSIDE, lo, hi);
}

/* How many bytes at p can be skipped, sixty-four at a time, as all inside lo...hi (a header line that holds a
 * token). */
static inline size_t idtk_inside_blocks64(const uint8_t *p, size_t n, uint8_t lo, uint8_t hi) {
    return idtk_clear_blocks64(p, n, IDTK_STOP_OUTSIDE, lo, hi);
}

/* The position (0...15) of the first of the sixteen bytes at p that is not base64url (A-Z a-z 0-9 - _); 16 when all
 * sixteen are. The audit's search for a compact JWS in a line of text, a token being a kilobyte of base64url.
 * Reads exactly sixteen bytes. */
static inline unsigned idtk_first_non_base64url16(const uint8_t *p) {
    return idtk_first_stop16(p, IDTK_STOP_NOT_BASE64URL, 0, 0);
}

/* How many bytes at p can be skipped, sixty-four at a time, as all base64url. */
static inline size_t idtk_base64url_blocks64(const uint8_t *p, size_t n) {
    return idtk_clear_blocks64(p, n, IDTK_STOP_NOT_BASE64URL, 0, 0);
}

#endif
