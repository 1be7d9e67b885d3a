/* The project's own small C, used by JOSE only (DESIGN §1): SIMD base64url decoding and byte scanning,
 * ThreadSanitizer annotations, eight RSA-2048 public operations at once (AVX-512 IFMA), and the commit a release
 * was built from. One target, as swift-crypto keeps one CCryptoBoringSSLShims. */
#ifndef IDTK_CJOSESHIMS_H
#define IDTK_CJOSESHIMS_H

#include "idtk_base64url.h"
#include "idtk_build_info.h"
#include "idtk_byte_scan.h"
#include "idtk_rsa_ifma.h"
#include "idtk_tsan.h"

#endif
