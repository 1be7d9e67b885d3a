/// Shows token values in error messages: short, quoted, never the whole payload.
enum Quoted {
    static let limit = 100

    /// A JSON value as it appears in the token, cut to a readable length.
    static func value(_ value: JSONValue) -> String {
        let text = value.kind == .string ? "\"\(value.string ?? "")\"" : value.rawJSON
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }
}
