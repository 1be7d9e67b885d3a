/// The claims of a Facebook Limited Login token. The `user_*` claims appear only when the app asked for the
/// matching permission.
public struct FacebookClaims: Sendable {
    public let claims: Claims

    public init(_ claims: Claims) { self.claims = claims }

    /// The app-scoped user ID (`sub`).
    public var userID: String? { claims.subject }
    /// The token's unique ID (`jti`).
    public var jti: String? { claims.jwtID }
    public var nonce: String? { claims.nonce }
    public var name: String? { claims.name }
    public var givenName: String? { claims.string("given_name") }
    public var familyName: String? { claims.string("family_name") }
    public var email: String? { claims.email }
    public var picture: String? { claims.picture }
    /// App-scoped IDs of friends who also use the app.
    public var userFriends: [String]? { claims.strings("user_friends") }
    /// As Facebook writes it, e.g. `"01/31/1990"`.
    public var userBirthday: String? { claims.string("user_birthday") }
    public var userAgeRange: AgeRange? {
        guard let object = claims["user_age_range"]?.object else { return nil }
        return AgeRange(min: object["min"]?.int64.map(Int.init), max: object["max"]?.int64.map(Int.init))
    }
    public var userHometown: Place? { claims["user_hometown"].flatMap(Place.init) }
    public var userLocation: Place? { claims["user_location"].flatMap(Place.init) }
    public var userGender: String? { claims.string("user_gender") }
    public var userLink: String? { claims.string("user_link") }

    /// `user_age_range`: `{"min": 21}` or `{"min": 18, "max": 20}`.
    public struct AgeRange: Sendable, Equatable {
        public let min: Int?
        public let max: Int?

        public init(min: Int?, max: Int?) {
            self.min = min
            self.max = max
        }
    }

    /// `user_hometown` / `user_location`: `{"id": "…", "name": "…"}`.
    public struct Place: Sendable, Equatable {
        public let id: String?
        public let name: String?

        init?(_ value: JSONValue) {
            guard let object = value.object else { return nil }
            id = object["id"]?.string
            name = object["name"]?.string
        }
    }
}
