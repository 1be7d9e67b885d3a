#include "idtk_base64url.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

/* Classification by nibbles (after W. Muła's and D. Lemire's base64 decoders), for the URL-safe alphabet.
 * Each high nibble that can start a valid character has its own bit; lo_mask[l] holds the bits of the high
 * nibbles h for which the byte (h, l) is NOT in the alphabet, plus 0x40, the bit of every other high nibble
 * (0, 1, 8-F: controls, space, punctuation, non-ASCII). A byte is valid iff lo_mask[l] & hi_bit[h] == 0.
 *   h=2: only 0x2D '-'      h=3: 0x30-0x39 digits     h=4: 0x41-0x4F letters     h=5: 0x50-0x5A, 0x5F '_'
 *   h=6: 0x61-0x6F letters  h=7: 0x70-0x7A letters
 * The sextet is the byte plus an offset chosen by the high nibble; '_' (h=5, like 'P'-'Z') is moved to a
 * spare index (8) of the offset table. */
__attribute__((target("ssse3")))
static size_t decode_ssse3(const uint8_t *src, size_t count, uint8_t *dst, size_t dst_count, int *invalid) {
    const __m128i hi_bit = _mm_setr_epi8(0x40, 0x40, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20,
                                         0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40);
    const __m128i lo_mask = _mm_setr_epi8(
        /* 0 */ 0x40 | 0x01 | 0x04 | 0x10,
        /* 1 */ 0x40 | 0x01,
        /* 2 */ 0x40 | 0x01,
        /* 3 */ 0x40 | 0x01,
        /* 4 */ 0x40 | 0x01,
        /* 5 */ 0x40 | 0x01,
        /* 6 */ 0x40 | 0x01,
        /* 7 */ 0x40 | 0x01,
        /* 8 */ 0x40 | 0x01,
        /* 9 */ 0x40 | 0x01,
        /* A */ 0x40 | 0x01 | 0x02,
        /* B */ 0x40 | 0x01 | 0x02 | 0x08 | 0x20,
        /* C */ 0x40 | 0x01 | 0x02 | 0x08 | 0x20,
        /* D */ 0x40 | 0x02 | 0x08 | 0x20,
        /* E */ 0x40 | 0x01 | 0x02 | 0x08 | 0x20,
        /* F */ 0x40 | 0x01 | 0x02 | 0x20);
    /* Offsets by high nibble: '-' +17 (to 62), digits +4 (to 52-61), 'A'-'Z' -65, 'a'-'z' -71, '_' -32 (to 63). */
    const __m128i offsets = _mm_setr_epi8(0, 0, 17, 4, -65, -65, -71, -71, -32, 0, 0, 0, 0, 0, 0, 0);
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m128i underscore = _mm_set1_epi8(0x5F);
    const __m128i three = _mm_set1_epi8(3);
    /* Sextets a b c d -> a*64+b, c*64+d (16-bit lanes) -> (a*64+b)*4096 + c*64+d (32-bit lanes, 24 bits used). */
    const __m128i merge_pairs = _mm_set1_epi32(0x01400140);
    const __m128i merge_quads = _mm_set1_epi32(0x00011000);
    /* The three bytes of each 32-bit lane, most significant first, packed into the low 12 bytes. */
    const __m128i pack = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    __m128i errors = _mm_setzero_si128();
    size_t i = 0, o = 0;
    while (i + 16 <= count && o + 16 <= dst_count) {
        __m128i in = _mm_loadu_si128((const __m128i *)(src + i));
        __m128i hi = _mm_and_si128(_mm_srli_epi32(in, 4), nibble);
        __m128i lo = _mm_and_si128(in, nibble);
        errors = _mm_or_si128(errors, _mm_and_si128(_mm_shuffle_epi8(lo_mask, lo), _mm_shuffle_epi8(hi_bit, hi)));
        __m128i index = _mm_add_epi8(hi, _mm_and_si128(_mm_cmpeq_epi8(in, underscore), three));
        __m128i sextets = _mm_add_epi8(in, _mm_shuffle_epi8(offsets, index));
        __m128i merged = _mm_madd_epi16(_mm_maddubs_epi16(sextets, merge_pairs), merge_quads);
        _mm_storeu_si128((__m128i *)(dst + o), _mm_shuffle_epi8(merged, pack));
        i += 16;
        o += 12;
    }
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(errors, _mm_setzero_si128())) != 0xFFFF) *invalid = 1;
    return i;
}


/* The same steps on 32 characters at a time. vpshufb looks up within each 128-bit lane, so the tables are
 * repeated in both lanes, and each lane packs its 12 bytes to its low end; a permutation then joins the two
 * halves into 24 contiguous bytes (the 32-byte store writes 8 scratch bytes). A 16-character block left over
 * goes through the 128-bit code, here with VEX encoding. */
__attribute__((target("avx2")))
static size_t decode_avx2(const uint8_t *src, size_t count, uint8_t *dst, size_t dst_count, int *invalid) {
    const __m256i hi_bit = _mm256_setr_epi8(0x40, 0x40, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20,
                                            0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40,
                                            0x40, 0x40, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20,
                                            0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40);
#define LO_MASK_ROW 0x40 | 0x01 | 0x04 | 0x10, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, \
                    0x40 | 0x01 | 0x02, 0x40 | 0x01 | 0x02 | 0x08 | 0x20, 0x40 | 0x01 | 0x02 | 0x08 | 0x20, \
                    0x40 | 0x02 | 0x08 | 0x20, 0x40 | 0x01 | 0x02 | 0x08 | 0x20, 0x40 | 0x01 | 0x02 | 0x20
    const __m256i lo_mask = _mm256_setr_epi8(LO_MASK_ROW, LO_MASK_ROW);
#undef LO_MASK_ROW
    const __m256i offsets = _mm256_setr_epi8(0, 0, 17, 4, -65, -65, -71, -71, -32, 0, 0, 0, 0, 0, 0, 0,
                                             0, 0, 17, 4, -65, -65, -71, -71, -32, 0, 0, 0, 0, 0, 0, 0);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i underscore = _mm256_set1_epi8(0x5F);
    const __m256i three = _mm256_set1_epi8(3);
    const __m256i merge_pairs = _mm256_set1_epi32(0x01400140);
    const __m256i merge_quads = _mm256_set1_epi32(0x00011000);
    const __m256i pack = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,
                                          2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    __m256i errors = _mm256_setzero_si256();
    size_t i = 0, o = 0;
    while (i + 32 <= count && o + 32 <= dst_count) {
        __m256i in = _mm256_loadu_si256((const __m256i *)(src + i));
        __m256i hi = _mm256_and_si256(_mm256_srli_epi32(in, 4), nibble);
        __m256i lo = _mm256_and_si256(in, nibble);
        errors = _mm256_or_si256(errors, _mm256_and_si256(_mm256_shuffle_epi8(lo_mask, lo), _mm256_shuffle_epi8(hi_bit, hi)));
        __m256i index = _mm256_add_epi8(hi, _mm256_and_si256(_mm256_cmpeq_epi8(in, underscore), three));
        __m256i sextets = _mm256_add_epi8(in, _mm256_shuffle_epi8(offsets, index));
        __m256i merged = _mm256_madd_epi16(_mm256_maddubs_epi16(sextets, merge_pairs), merge_quads);
        __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(merged, pack), join);
        _mm256_storeu_si256((__m256i *)(dst + o), packed);
        i += 32;
        o += 24;
    }
    if (_mm256_movemask_epi8(_mm256_cmpeq_epi8(errors, _mm256_setzero_si256())) != -1) *invalid = 1;
    return i + decode_ssse3(src + i, count - i, dst + o, dst_count - o, invalid);
}

/* 0 unknown, 1 neither, 2 SSSE3, 3 AVX2 (CPU and OS: the YMM state must be enabled in XCR0). A benign race:
 * every thread computes the same answer. */
static int simd_level(void) {
    static int cached = 0;
    int level = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (level == 0) {
        unsigned a, b, c, d;
        level = 1;
        if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3)) {
            level = 2;
            if ((c & bit_OSXSAVE) && (c & bit_AVX)) {
                unsigned xcr0_lo, xcr0_hi;
                __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
                if ((xcr0_lo & 6) == 6 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2)) level = 3;
            }
        }
        __atomic_store_n(&cached, level, __ATOMIC_RELAXED);
    }
    return level;
}
#endif

size_t idtk_base64url_decode_blocks(const uint8_t *src, size_t count, uint8_t *dst, size_t dst_count, int *invalid) {
#if defined(__x86_64__)
    if (count >= 16) {
        int level = simd_level();
        if (level == 3) return decode_avx2(src, count, dst, dst_count, invalid);
        if (level == 2) return decode_ssse3(src, count, dst, dst_count, invalid);
    }
#endif
    (void)src; (void)count; (void)dst; (void)dst_count; (void)invalid;
    return 0;
}
