#ifndef IDTOKENKIT_CJANSSON_SHIM_H
#define IDTOKENKIT_CJANSSON_SHIM_H

#include <jansson.h>

/* json_typeof and the json_is_* family are macros; Swift sees these instead. */
static inline int idtk_json_type(const json_t *json) { return json ? (int)json_typeof(json) : -1; }
static inline void idtk_json_decref(json_t *json) { json_decref(json); }
static inline json_t *idtk_json_incref(json_t *json) { return json_incref(json); }
static inline const size_t idtk_json_reject_duplicates(void) { return JSON_REJECT_DUPLICATES; }
static inline const size_t idtk_json_decode_any(void) { return JSON_DECODE_ANY; }
static inline const size_t idtk_json_allow_nul(void) { return JSON_ALLOW_NUL; }

#endif
