#ifndef IDTOKENKIT_BASE64URL_H
#define IDTOKENKIT_BASE64URL_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the leading whole 16-character blocks of base64url text with SIMD instructions, when the CPU has
 * them (AVX2 or SSSE3 on x86-64); the caller decodes what is left, and checks the canonical form of the
 * last characters.
 * Never stores past dst + dst_count: each 16 characters decode to 12 bytes, written with a 16-byte store (32
 * bytes for 24 with AVX2) whose scratch bytes the next block, or the caller, overwrites.
 * Returns the number of characters consumed (a multiple of 16, 0 when the CPU lacks the instructions) and
 * sets *invalid to 1 if any of them is outside the base64url alphabet (it never clears it). */
size_t idtk_base64url_decode_blocks(const uint8_t *src, size_t count, uint8_t *dst, size_t dst_count, int *invalid);

#endif
