import GRPCCore
import IDTokenServe

/// `envoy.service.auth.v3.Authorization/Check`: the gRPC door of `idtoken serve`, what Envoy's `ext_authz` filter
/// (Istio's `envoyExtAuthzGrpc`, Envoy Gateway's SecurityPolicy) calls. A thin mapping of the HTTP door's answer
/// (docs/serve.md, "Envoy over gRPC"): the request's headers and path become the same ``ServeRequest``, the service
/// decides as it does over HTTP, and its answer becomes a `CheckResponse`.
///
/// - Allow (200): status OK; `ok_response.headers` the identity headers (lower-case names, overwriting), and
///   `headers_to_remove` every identity header the answer does not carry, so that a client's own `x-auth-email`
///   never reaches the upstream (and `authorization` too when `serve.grpcRemoveAuthorization` says so).
/// - Refuse (401, 403, 503): status UNAUTHENTICATED, PERMISSION_DENIED or UNAVAILABLE, whose message is the
///   verdict's code (``ServeResponse/refused``, `missing_token` without a token), with a `denied_response` carrying
///   the HTTP door's status and headers (`www-authenticate`, `x-auth-error`, `retry-after`), which Envoy sends to
///   the client.
package struct ExternalAuthorizationService: Envoy_Service_Auth_V3_Authorization.SimpleServiceProtocol {
    /// The context extension (set per route in Envoy's `ext_authz` per-route configuration) that names a profile.
    package static let profileExtension = "idtoken-profile"

    private let service: ServeService
    private let nonceHeader: String
    /// The App Check header's lower-case name, when the service requires an App Check token.
    private let appCheckHeader: String?
    private let removesAuthorization: Bool

    package init(service: ServeService) {
        self.service = service
        self.nonceHeader = service.settings.nonceHeader.lowercased()
        self.appCheckHeader = service.settings.appCheckProfile == nil ? nil : service.settings.appCheckHeader.lowercased()
        self.removesAuthorization = service.settings.grpcRemovesAuthorization
    }

    package func check(request: Envoy_Service_Auth_V3_CheckRequest,
                       context: ServerContext) async throws -> Envoy_Service_Auth_V3_CheckResponse {
        let http = request.attributes.request.http
        let headers = Self.headers(of: http)
        // The profile: the route's context extension, else the path as over HTTP (`/verify/<profile>/…` when the
        // original path's first segment names one), else the token's issuer.
        var target = "/verify"
        if let profile = request.attributes.contextExtensions[Self.profileExtension], !profile.isEmpty {
            target += "/" + profile
        } else if http.path.utf8.first == UInt8(ascii: "/") {
            target += http.path
        }
        let answer = await service.respond(to: ServeRequest(target: target, authorization: headers["authorization"],
                                                            cookie: headers["cookie"], nonce: headers[nonceHeader],
                                                            appCheck: appCheckHeader.flatMap { headers[$0] }))
        return Self.checkResponse(answer, removesAuthorization: removesAuthorization)
    }

    /// The request's headers by lower-case name: the `headers` map, or the `header_map` list Envoy sends instead
    /// when `encode_raw_headers` is set (several values of one name joined as Envoy joins them, `; ` for cookies).
    static func headers(of http: Envoy_Service_Auth_V3_AttributeContext.HttpRequest) -> [String: String] {
        guard http.headers.isEmpty, http.hasHeaderMap else {
            return http.headers
        }
        var headers: [String: String] = [:]
        for header in http.headerMap.headers {
            let name = header.key.lowercased()
            let value = header.value.isEmpty ? String(decoding: header.rawValue, as: UTF8.self) : header.value
            if let earlier = headers[name] {
                headers[name] = earlier + (name == "cookie" ? "; " : ",") + value
            } else {
                headers[name] = value
            }
        }
        return headers
    }

    /// The identity headers an allow answer can carry: those it does not carry are removed upstream.
    static let identityHeaders = ["x-auth-subject", "x-auth-issuer", "x-auth-provider", "x-auth-profile",
                                  "x-auth-audience", "x-auth-expires", "x-auth-email", "x-auth-claims",
                                  "x-auth-claims-omitted", "x-auth-app-id"]

    /// The HTTP door's answer as a `CheckResponse`.
    static func checkResponse(_ answer: ServeResponse, removesAuthorization: Bool) -> Envoy_Service_Auth_V3_CheckResponse {
        var response = Envoy_Service_Auth_V3_CheckResponse()
        var status = Google_Rpc_Status()
        func option(_ name: String, _ value: String) -> Envoy_Config_Core_V3_HeaderValueOption {
            var option = Envoy_Config_Core_V3_HeaderValueOption()
            option.header.key = name
            option.header.value = value
            option.appendAction = .overwriteIfExistsOrAdd
            return option
        }
        // Header values reach Envoy as they would reach an HTTP client: only those IdentityHeaders.isSafe passes.
        let headers = answer.headers.filter { IdentityHeaders.isSafe($0.1) }.map { ($0.0.lowercased(), $0.1) }
        if answer.status == 200 {
            status.code = Int32(Status.Code.ok.rawValue)
            var ok = Envoy_Service_Auth_V3_OkHttpResponse()
            let identity = headers.filter { $0.0.hasPrefix("x-auth-") }
            ok.headers = identity.map { option($0.0, $0.1) }
            let sent = Set(identity.map(\.0))
            ok.headersToRemove = Self.identityHeaders.filter { !sent.contains($0) }
            if removesAuthorization { ok.headersToRemove.append("authorization") }
            response.okResponse = ok
        } else {
            let code: Status.Code
            switch answer.status {
            case 401: code = .unauthenticated
            case 403: code = .permissionDenied
            case 503: code = .unavailable
            default: code = .internalError
            }
            status.code = Int32(code.rawValue)
            status.message = answer.refused?.rawValue ?? (answer.status == 401 ? "missing_token" : "refused")
            var denied = Envoy_Service_Auth_V3_DeniedHttpResponse()
            denied.status.code = Envoy_Type_V3_StatusCode(rawValue: answer.status) ?? .internalServerError
            denied.headers = headers.map { option($0.0, $0.1) }
            denied.body = answer.body
            response.deniedResponse = denied
        }
        response.status = status
        return response
    }
}
