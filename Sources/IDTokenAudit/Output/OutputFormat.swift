import IDTokenKit
import JOSE

/// How an audit writes its per-record results.
package enum OutputFormat: String, Sendable, CaseIterable {
    /// One JSON object a line (the default).
    case ndjson
    /// Comma-separated values with a header row, quoted as RFC 4180 says.
    case csv

    /// The reported fields, in order: DESIGN §7's `line,id,valid,error,iss,sub,aud,kid,exp,iat`, then the time
    /// the token was judged at and the error message.
    package static let fields = ["line", "id", "valid", "error", "iss", "sub", "aud", "kid", "exp", "iat", "at", "message"]

    /// Text written once before the records (the CSV header row).
    package var header: String {
        switch self {
        case .ndjson: return ""
        case .csv: return OutputFormat.fields.joined(separator: ",") + "\r\n"
        }
    }

    /// Appends `result` as one line of output.
    package func render(_ result: AuditResult, into out: inout [UInt8]) {
        switch self {
        case .ndjson: RecordRendering.ndjson(result, into: &out)
        case .csv: RecordRendering.csv(result, into: &out)
        }
    }
}

enum RecordRendering {
    /// Each member's name is written with the comma and quotes around it in one piece, through a
    /// ``RecordWriter`` into room worked out from the lengths of the values (six bytes a byte for a string,
    /// which is what `\u00XX` takes).
    static func ndjson(_ r: AuditResult, into out: inout [UInt8]) {
        let claims = r.claims
        let message = r.error?.message
        var bound = 240
        func room(_ text: String?) { if let text { bound += 6 * text.utf8.count + 3 } }
        switch r.id {
        case .string(let text)?: room(text)
        case .json(let raw)?: bound += raw.utf8.count
        case nil: break
        }
        room(claims.issuer)
        room(claims.subject)
        switch claims.audience {
        case .single(let value)?: room(value)
        case .list(let values)?: for value in values { room(value) }
        case nil: break
        }
        room(claims.kid)
        bound += (claims.expiresNumber?.byteCount ?? 0) + (claims.issuedAtNumber?.byteCount ?? 0)
        room(message)
        RecordWriter.write(into: &out, bound: bound) { w in
            w.literal("{\"line\":")
            w.int(r.line)
            w.literal(",\"id\":")
            switch r.id {
            case .string(let text)?: w.string(text)
            case .json(let raw)?: w.raw(raw)
            case nil: w.literal("null")
            }
            if let error = r.error {
                w.literal(",\"valid\":false,\"error\":\"")
                w.raw(error.code.rawValue)
                w.byte(0x22)
            } else {
                w.literal(",\"valid\":true,\"error\":null")
            }
            w.literal(",\"iss\":")
            w.optionalString(claims.issuer)
            w.literal(",\"sub\":")
            w.optionalString(claims.subject)
            w.literal(",\"aud\":")
            switch claims.audience {
            case .single(let value)?: w.string(value)
            case .list(let values)?:
                w.byte(0x5B)
                for (k, value) in values.enumerated() {
                    if k > 0 { w.byte(0x2C) }
                    w.string(value)
                }
                w.byte(0x5D)
            case nil: w.literal("null")
            }
            w.literal(",\"kid\":")
            w.optionalString(claims.kid)
            w.literal(",\"exp\":")
            w.number(claims.expiresNumber)
            w.literal(",\"iat\":")
            w.number(claims.issuedAtNumber)
            w.literal(",\"at\":")
            // Whole seconds, as UnixTime.text writes every time people read (a record's at may carry a fraction).
            if r.at.isFinite, abs(r.at) < 1e15 { w.int(Int(r.at.rounded(.down))) } else { w.raw(UnixTime.text(r.at)) }
            w.literal(",\"message\":")
            w.optionalString(message)
            w.literal("}\n")
        }
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
                                 r.claims.issuedAtText, UnixTime.text(r.at), r.error?.message]
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
