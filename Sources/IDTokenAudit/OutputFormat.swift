import JOSE

/// How an audit writes its per-record results.
public enum OutputFormat: String, Sendable, CaseIterable {
    /// One JSON object a line (the default).
    case ndjson
    /// Comma-separated values with a header row, quoted as RFC 4180 says.
    case csv

    /// The reported fields, in order: DESIGN §7's `line,id,valid,error,iss,sub,aud,kid,exp,iat`, then the time
    /// the token was judged at and the error message.
    public static let fields = ["line", "id", "valid", "error", "iss", "sub", "aud", "kid", "exp", "iat", "at", "message"]

    /// Text written once before the records (the CSV header row).
    public var header: String {
        switch self {
        case .ndjson: return ""
        case .csv: return OutputFormat.fields.joined(separator: ",") + "\r\n"
        }
    }

    /// Appends `result` as one line of output.
    public func render(_ result: AuditResult, into out: inout [UInt8]) {
        switch self {
        case .ndjson: RecordRendering.ndjson(result, into: &out)
        case .csv: RecordRendering.csv(result, into: &out)
        }
    }
}

enum RecordRendering {
    /// Each member's name is written with the comma and quotes around it in one piece.
    static func ndjson(_ r: AuditResult, into out: inout [UInt8]) {
        JSONText.appendLiteral("{\"line\":", to: &out)
        JSONText.appendInt(r.line, to: &out)
        JSONText.appendLiteral(",\"id\":", to: &out)
        switch r.id {
        case .string(let text)?: JSONText.appendPlainString(text, to: &out)
        case .json(let raw)?: JSONText.appendRaw(raw, to: &out)
        case nil: JSONText.appendLiteral("null", to: &out)
        }
        JSONText.appendLiteral(r.isValid ? ",\"valid\":true,\"error\":" : ",\"valid\":false,\"error\":", to: &out)
        JSONText.appendOptionalString(r.error?.code.rawValue, to: &out)
        JSONText.appendLiteral(",\"iss\":", to: &out)
        JSONText.appendOptionalString(r.claims.issuer, to: &out)
        JSONText.appendLiteral(",\"sub\":", to: &out)
        JSONText.appendOptionalString(r.claims.subject, to: &out)
        JSONText.appendLiteral(",\"aud\":", to: &out)
        switch r.claims.audience {
        case .single(let value)?: JSONText.appendPlainString(value, to: &out)
        case .list(let values)?:
            out.append(0x5B)
            for (k, value) in values.enumerated() {
                if k > 0 { out.append(0x2C) }
                JSONText.appendPlainString(value, to: &out)
            }
            out.append(0x5D)
        case nil: JSONText.appendLiteral("null", to: &out)
        }
        JSONText.appendLiteral(",\"kid\":", to: &out)
        JSONText.appendOptionalString(r.claims.kid, to: &out)
        JSONText.appendLiteral(",\"exp\":", to: &out)
        if let exp = r.claims.expiresText { JSONText.appendRaw(exp, to: &out) } else { JSONText.appendLiteral("null", to: &out) }
        JSONText.appendLiteral(",\"iat\":", to: &out)
        if let iat = r.claims.issuedAtText { JSONText.appendRaw(iat, to: &out) } else { JSONText.appendLiteral("null", to: &out) }
        JSONText.appendLiteral(",\"at\":", to: &out)
        JSONText.appendNumber(r.at, to: &out)
        JSONText.appendLiteral(",\"message\":", to: &out)
        JSONText.appendOptionalString(r.error?.message, to: &out)
        JSONText.appendLiteral("}\n", to: &out)
    }

    static func csv(_ r: AuditResult, into out: inout [UInt8]) {
        let aud: String?
        switch r.claims.audience {
        case .single(let value)?: aud = value
        case .list(let values)?:
            var text: [UInt8] = []
            text.append(0x5B)
            for (k, value) in values.enumerated() {
                if k > 0 { text.append(0x2C) }
                JSONText.appendString(value, to: &text)
            }
            text.append(0x5D)
            aud = String(decoding: text, as: UTF8.self)
        case nil: aud = nil
        }
        let fields: [String?] = [String(r.line), r.id?.text, r.isValid ? "true" : "false", r.error?.code.rawValue,
                                 r.claims.issuer, r.claims.subject, aud, r.claims.kid, r.claims.expiresText,
                                 r.claims.issuedAtText, JSONText.number(r.at), r.error?.message]
        for (k, field) in fields.enumerated() {
            if k > 0 { out.append(0x2C) }
            if let field { appendCSVField(field, to: &out) }
        }
        out.append(0x0D)
        out.append(0x0A)
    }

    /// RFC 4180: a field holding a comma, a quote, CR or LF is enclosed in quotes, and its quotes are doubled.
    static func appendCSVField(_ field: String, to out: inout [UInt8]) {
        let needsQuotes = field.utf8.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }
        guard needsQuotes else {
            out.append(contentsOf: field.utf8)
            return
        }
        out.append(0x22)
        for byte in field.utf8 {
            if byte == 0x22 { out.append(0x22) }
            out.append(byte)
        }
        out.append(0x22)
    }
}
