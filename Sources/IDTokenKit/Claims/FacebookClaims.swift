/// The claims of a Facebook Limited Login token. The `user_*` claims appear only when the app asked for the
/// matching permission.
public struct FacebookClaims: Sendable {
    /// All the token's claims.
    public let claims: Claims

    /// Facebook's view of `claims`.
    public init(_ claims: Claims) { self.claims = claims }

    /// The app-scoped user ID (`sub`).
    public var userID: String? { claims.subject }
    /// The token's unique ID (`jti`).
    public var jti: String? { claims.jwtID }
    /// The `nonce` claim as the token carries it.
    public var nonce: String? { claims.nonce }
    /// The user's full name.
    public var name: String? { claims.name }
    /// The user's given name.
    public var givenName: String? { claims.string("given_name") }
    /// The user's family name.
    public var familyName: String? { claims.string("family_name") }
    /// The user's email address, when the app asked for it.
    public var email: String? { claims.email }
    /// The URL of the user's profile picture.
    public var picture: String? { claims.picture }
    /// App-scoped IDs of friends who also use the app.
    public var userFriends: [String]? { claims.strings("user_friends") }
    /// As Facebook writes it, e.g. `"01/31/1990"`.
    public var userBirthday: String? { claims.string("user_birthday") }
    /// The user's age range (`user_age_range`), when the app asked for it.
    public var userAgeRange: AgeRange? {
        guard let object = claims["user_age_range"]?.object else { return nil }
        return AgeRange(min: object["min"]?.int64.map(Int.init), max: object["max"]?.int64.map(Int.init))
    }
    /// The user's hometown (`user_hometown`), when the app asked for it.
    public var userHometown: Place? { claims["user_hometown"].flatMap(Place.init) }
    /// The user's current location (`user_location`), when the app asked for it.
    public var userLocation: Place? { claims["user_location"].flatMap(Place.init) }
    /// The user's gender (`user_gender`), when the app asked for it.
    public var userGender: String? { claims.string("user_gender") }
    /// A link to the user's profile (`user_link`), when the app asked for it.
    public var userLink: String? { claims.string("user_link") }

    /// `user_age_range`: `{"min": 21}` or `{"min": 18, "max": 20}`.
    public struct AgeRange: Sendable, Equatable {
        /// The lower bound, when there is one.
        public let min: Int?
        /// The upper bound, when there is one.
        public let max: Int?

        /// A range from `min` to `max`.
        public init(min: Int?, max: Int?) {
            self.min = min
            self.max = max
        }
    }

    /// `user_hometown` / `user_location`: `{"id": "…", "name": "…"}`.
    public struct Place: Sendable, Equatable {
        /// The place's Facebook ID.
        public let id: String?
        /// The place's name.
        public let name: String?

        init?(_ value: JSONValue) {
            guard let object = value.object else { return nil }
            id = object["id"]?.string
            name = object["name"]?.string
        }
    }
}
