#ifndef IDTOKENKIT_CLIBCRYPTO_SHIM_H
#define IDTOKENKIT_CLIBCRYPTO_SHIM_H

/* The low-level SHA-2 functions are marked deprecated in OpenSSL 3 but are the cheapest way to hash a
 * signing input: no EVP_MD_CTX allocation, no provider fetch. (The one-shot SHA256() in OpenSSL 3 goes
 * through EVP_Q_digest, which fetches and allocates on every call: about 6,000 instructions a token.) */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <openssl/bn.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

static inline unsigned char *idtk_sha256(const void *data, size_t len, unsigned char *out) {
    SHA256_CTX ctx;
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, data, len);
    SHA256_Final(out, &ctx);
    return out;
}
static inline unsigned char *idtk_sha384(const void *data, size_t len, unsigned char *out) {
    SHA512_CTX ctx;
    SHA384_Init(&ctx);
    SHA384_Update(&ctx, data, len);
    SHA384_Final(out, &ctx);
    return out;
}
static inline unsigned char *idtk_sha512(const void *data, size_t len, unsigned char *out) {
    SHA512_CTX ctx;
    SHA512_Init(&ctx);
    SHA512_Update(&ctx, data, len);
    SHA512_Final(out, &ctx);
    return out;
}

/* Macros in OpenSSL that Swift cannot import. */
static inline int idtk_pkey_ctx_set_rsa_padding(EVP_PKEY_CTX *ctx, int padding) {
    return EVP_PKEY_CTX_set_rsa_padding(ctx, padding);
}
static inline int idtk_pkey_ctx_set_rsa_pss_saltlen(EVP_PKEY_CTX *ctx, int len) {
    return EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, len);
}
static inline int idtk_pkey_ctx_set_signature_md(EVP_PKEY_CTX *ctx, const EVP_MD *md) {
    return EVP_PKEY_CTX_set_signature_md(ctx, md);
}
static inline int idtk_pkey_ctx_set_rsa_mgf1_md(EVP_PKEY_CTX *ctx, const EVP_MD *md) {
    return EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, md);
}
static inline BIO *idtk_bio_new_mem(const void *buf, int len) {
    return BIO_new_mem_buf(buf, len);
}
static inline const int idtk_rsa_pkcs1_padding(void) { return RSA_PKCS1_PADDING; }
static inline const int idtk_rsa_pkcs1_pss_padding(void) { return RSA_PKCS1_PSS_PADDING; }

static inline const int idtk_evp_pkey_public_key_selection(void) { return EVP_PKEY_PUBLIC_KEY; }
/* OSSL_PARAM_BLD keeps the parameter-name pointers until OSSL_PARAM_BLD_to_param, so the names must have
 * static storage; Swift string arguments would not outlive the push call. */
static inline const char *idtk_param_rsa_n(void) { return OSSL_PKEY_PARAM_RSA_N; }
static inline const char *idtk_param_rsa_e(void) { return OSSL_PKEY_PARAM_RSA_E; }
static inline const char *idtk_param_group(void) { return OSSL_PKEY_PARAM_GROUP_NAME; }
static inline const char *idtk_param_pub(void) { return OSSL_PKEY_PARAM_PUB_KEY; }

/* Claims a one-time right, atomically: 1 for the first caller on `flag` (an int32 that starts at 0), 0 for
 * every later one. Used by JOSE for the member area a token's storage lends to the first reading of its
 * claims. */
static inline int idtk_claim_once(void *flag) {
    return __atomic_exchange_n((int *)flag, 1, __ATOMIC_ACQ_REL) == 0;
}
#endif
