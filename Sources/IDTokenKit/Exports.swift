// IDTokenKit's clients use JOSE's value types (JWKSet, JSONObject, TokenError, JWSAlgorithm…) in its API:
// importing IDTokenKit brings them, so that no client has to know the layer exists.
@_exported import JOSE
