import IDTokenKit

/// One record of an audit log, as read from its line: the token and what the line said about it.
package struct AuditRecord: Sendable {
    /// How the line held its token.
    package enum Form: String, Sendable {
        /// The line is the token.
        case bareToken = "token"
        /// A JSON object with `token` (and optional `at`, `nonce`, `id`).
        case json
        /// Other text holding a compact JWS, such as an access-log line.
        case text
        /// No token could be read from the line.
        case unreadable
    }

    /// 1-based line number.
    package let line: Int
    package let form: Form
    /// The record's `id`, when the line gave one.
    package let id: RecordID?
    /// The token's bytes, when one was found: a slice of the line it was read from (no copy), or the text the
    /// strict JSON reader unescaped. The audit verifies them as they are (``TokenBytes``), without a `String`.
    package let tokenBytes: ArraySlice<UInt8>?
    /// The token, when one was found (made from ``tokenBytes``).
    package var token: String? { tokenBytes.map { String(decoding: $0, as: UTF8.self) } }
    /// The time to judge the token at (Unix seconds), when the line gave one.
    package let at: Double?
    /// The raw nonce the backend kept for this sign-in, when the line gave one.
    package let nonce: String?
    /// Why the line could not be read as a record (code `malformed`), if it could not.
    package let problem: TokenError?

    package init(line: Int, form: Form, id: RecordID? = nil, token: String? = nil, at: Double? = nil,
                nonce: String? = nil, problem: TokenError? = nil) {
        self.init(line: line, form: form, id: id, tokenBytes: token.map { Array($0.utf8)[...] }, at: at, nonce: nonce,
                  problem: problem)
    }

    /// A record whose token is `tokenBytes` (a slice of its line).
    package init(line: Int, form: Form, id: RecordID? = nil, tokenBytes: ArraySlice<UInt8>?, at: Double? = nil,
                nonce: String? = nil, problem: TokenError? = nil) {
        self.line = line
        self.form = form
        self.id = id
        self.tokenBytes = tokenBytes
        self.at = at
        self.nonce = nonce
        self.problem = problem
    }
}

/// A record's `id` as the line gave it: a string, or other JSON (a number…) kept as its JSON text.
package enum RecordID: Sendable, Equatable {
    case string(String)
    /// JSON text (a number, `true`…), already valid JSON.
    case json(String)

    /// The id as plain text (for CSV).
    package var text: String {
        switch self {
        case .string(let value): return value
        case .json(let value): return value
        }
    }
}
