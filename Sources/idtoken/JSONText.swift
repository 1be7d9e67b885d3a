import JOSE

/// The command line's JSON output is written by hand: claims are copied as the token carries them, so no JSON
/// encoder is needed.
extension JSONText {
    static func optional(_ value: String?) -> String { value.map(quoted) ?? "null" }

    /// An object from members whose values are already JSON text, in order.
    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}
