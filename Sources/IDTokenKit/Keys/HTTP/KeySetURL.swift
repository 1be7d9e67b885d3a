import Foundation

/// A key-set address that passed the transport rule: `https`, or plain `http` only to a loopback address
/// (127.0.0.0/8, `::1`, `localhost`) so that tests can serve keys from the same machine. Keys fetched over
/// plain HTTP from anywhere else could be swapped by anyone on the path.
public struct KeySetURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL as given.
    public let absoluteString: String
    /// Its host, without IPv6 brackets.
    public let host: String
    /// Whether the host is a loopback name or address.
    public let isLoopback: Bool

    /// Checks `text` against the transport rule.
    /// - Throws: ``KeyFetchError`` `insecureURL` for anything but `https`, or `http` to a loopback host, and for
    ///   URLs carrying credentials.
    public init(_ text: String) throws(KeyFetchError) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              let host = url.host, !host.isEmpty else {
            throw KeyFetchError(.insecureURL, "\"\(text)\" is not an absolute http(s) URL")
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let loopback = Self.isLoopback(host: bare)
        switch scheme {
        case "https": break
        case "http" where loopback: break
        case "http":
            throw KeyFetchError(.insecureURL, "key set URL \(text) must use https (plain http is allowed only for loopback addresses)")
        default:
            throw KeyFetchError(.insecureURL, "key set URL \(text) must use https, not \(scheme)")
        }
        if url.user != nil || url.password != nil {
            throw KeyFetchError(.insecureURL, "key set URL \(text) must not carry credentials")
        }
        self.absoluteString = text
        self.host = bare
        self.isLoopback = loopback
    }

    public var description: String { absoluteString }

    /// Whether `host` is a loopback name or address: `localhost`, 127.0.0.0/8 in dotted-quad form, or `::1`.
    public static func isLoopback(host: String) -> Bool {
        let h = host.lowercased()
        if h == "localhost" || h == "localhost." { return true }
        if h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let octets = h.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return false }
        var values: [Int] = []
        for octet in octets {
            // Strict decimal octets: "0127.0.0.1" or "127.1" are not accepted as loopback.
            guard !octet.isEmpty, octet.count <= 3, octet.allSatisfy({ $0.isASCII && $0.isNumber }),
                  octet.count == 1 || octet.first != "0", let v = Int(octet), v <= 255 else { return false }
            values.append(v)
        }
        return values[0] == 127
    }
}
