import FuzzDriver
@testable import IDTokenServe  // the gRPC door's HPACK decoder is internal to the service; -enable-testing builds reach it
import NIOCore
import NIOHPACK

// The gRPC door's HPACK decoder (HeaderBlockDecoder) against swift-nio-http2's (NIOHPACK.HPACKDecoder), on the same
// header blocks of one connection, each decoder keeping its own dynamic table. The input is the blocks, each after a
// one-byte length. Checks, besides "never crash":
// - a block swift-nio-http2 decodes, this decoder decodes to the same fields, in order (compared as swift-nio-http2
//   gives them, as Strings in which bytes that are not UTF-8 are replaced);
// - a block only this decoder takes is one swift-nio-http2 refuses for what the door's field check refuses later (a
//   field with an empty name, or bytes that are not UTF-8): never a block that breaks HPACK itself;
// - the list limit: neither decodes a block past it (both at 4 KiB here).
// Both stop at the first block either refuses: the connection would end there.

let limit = 4096

Fuzz.run { data in
    var ours = HeaderBlockDecoder(maxListSize: limit)
    var theirs = HPACKDecoder(allocator: ByteBufferAllocator(), maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize,
                              maxHeaderListSize: limit)
    var at = data.startIndex
    while at < data.endIndex {
        let length = min(Int(data[at]), data.endIndex - at - 1)
        let block = UnsafeRawBufferPointer(rebasing: data[(at + 1)..<(at + 1 + length)])
        at += 1 + length
        var fields: [(name: [UInt8], value: [UInt8])] = []
        let decoded: Bool
        do throws(HeaderBlockDecoder.Failure) {
            try ours.decode(block) { name, value in fields.append((Array(name), Array(value))) }
            decoded = true
        } catch {
            decoded = false
        }
        var buffer = ByteBufferAllocator().buffer(bytes: block)
        guard let headers = try? theirs.decodeHeaders(from: &buffer) else {
            if decoded {
                let explained = fields.contains { $0.name.isEmpty || String(validating: $0.name, as: UTF8.self) == nil
                                                   || String(validating: $0.value, as: UTF8.self) == nil }
                if !explained { Fuzz.fail("only this decoder takes the block \(Fuzz.show(block)): \(fields.map { Fuzz.show($0.name) })") }
            }
            return
        }
        guard decoded else { Fuzz.fail("swift-nio-http2 decodes the block \(Fuzz.show(block)), this decoder does not") }
        // swift-nio-http2 makes a String of each name and value, bytes that are not UTF-8 replaced: compared as such.
        let theirFields = headers.map { ($0.name, $0.value) }
        guard theirFields.count == fields.count, zip(theirFields, fields).allSatisfy({
            $0.0 == String(decoding: $1.name, as: UTF8.self) && $0.1 == String(decoding: $1.value, as: UTF8.self)
        }) else {
            Fuzz.fail("the decoders disagree on \(Fuzz.show(block)): \(fields.map { Fuzz.show($0.name) + ": " + Fuzz.show($0.value) }) "
                      + "against \(headers.map { "\($0.name): \($0.value)" })")
        }
    }
}
