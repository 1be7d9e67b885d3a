import CompressNIO
import NIOCore

/// Decompresses a gzip stream from another source as it is read: constant memory whatever the file's size.
///
/// Concatenated gzip members (`cat a.gz b.gz`) are read one after the other, as `gzip -d` does. A stream cut
/// short throws ``AuditInputError/Kind/truncatedGzip`` once every byte before the cut has been returned, so a
/// reader still sees (and audits) everything the file holds. Progress counts compressed bytes, so that it can
/// be compared with the file's size.
package final class GzipByteSource: ByteSource {
    private let inner: any ByteSource
    private let decompressor: ZlibDecompressor
    private var input: ByteBuffer
    private var output: ByteBuffer
    private var endOfInput = false
    private var done = false
    private let name: String

    /// - Parameters:
    ///   - inner: the compressed bytes.
    ///   - name: how to name the input in error messages.
    ///   - chunkSize: how many decompressed bytes each ``nextChunk()`` returns at most.
    package init(_ inner: any ByteSource, name: String = "the input", chunkSize: Int = 256 * 1024) throws(AuditInputError) {
        self.inner = inner
        self.name = name
        do { decompressor = try ZlibDecompressor(algorithm: .gzip) } catch {
            throw AuditInputError(.io, "cannot start a gzip decompressor: \(error)")
        }
        let allocator = ByteBufferAllocator()
        input = allocator.buffer(capacity: 64 * 1024)
        output = allocator.buffer(capacity: max(4096, chunkSize))
    }

    package var bytesConsumed: Int64 { inner.bytesConsumed }
    package var totalBytes: Int64? { inner.totalBytes }

    private enum Step { case progressed, needsInput, outputFull }

    package func nextChunk() throws(AuditInputError) -> [UInt8]? {
        while !done {
            if input.readableBytes == 0 && !endOfInput {
                if let chunk = try inner.nextChunk() {
                    input.clear()
                    input.writeBytes(chunk)
                } else {
                    endOfInput = true
                }
            }
            let before = input.readableBytes
            output.clear()
            let step: Step
            do {
                try decompressor.inflate(from: &input, to: &output)
                step = .progressed
            } catch let error as CompressNIOError where error == .bufferOverflow {
                step = .outputFull
            } catch let error as CompressNIOError where error == .inputBufferOverflow {
                step = .needsInput
            } catch {
                throw AuditInputError(.corruptGzip,
                                      "\(name) is not a valid gzip stream (\(error)) at about byte \(inner.bytesConsumed - Int64(input.readableBytes)) of the compressed file")
            }
            if output.readableBytes > 0 { return Array(output.readableBytesView) }
            let consumed = before - input.readableBytes
            switch step {
            case .outputFull:
                continue
            case .needsInput:
                guard endOfInput else { continue }
                done = true
                // An empty file is an empty log, not a broken one.
                if inner.bytesConsumed == 0 { return nil }
                throw AuditInputError(.truncatedGzip,
                                      "\(name) is truncated: the gzip stream ends without its end marker after \(inner.bytesConsumed) compressed bytes; every line before that point was read")
            case .progressed:
                // zlib reports progress or the end of a member; no progress and no error means the member ended.
                if input.readableBytes > 0 {
                    if consumed == 0 {
                        do { try decompressor.reset() } catch {
                            throw AuditInputError(.corruptGzip, "cannot read the next gzip member of \(name): \(error)")
                        }
                    }
                    continue
                }
                if endOfInput && consumed == 0 { done = true }
            }
        }
        return nil
    }
}

extension GzipByteSource {
    /// `source` itself, or a decompressor over it when it starts with the gzip magic bytes (1f 8b): so that
    /// `zcat`-free pipes (`cat log.gz | idtoken audit -`) and compressed files without a `.gz` name just work.
    package static func detecting(_ source: any ByteSource, name: String = "the input") throws(AuditInputError) -> any ByteSource {
        var first: [UInt8] = []
        while first.count < 2, let chunk = try source.nextChunk() { first += chunk }
        let replayed = PrefixedByteSource(first: first, rest: source)
        guard first.count >= 2, first[0] == 0x1F, first[1] == 0x8B else { return replayed }
        return try GzipByteSource(replayed, name: name)
    }
}

/// A source whose first chunk was already read (to look at it) and is served again first.
final class PrefixedByteSource: ByteSource {
    private var first: [UInt8]?
    private let rest: any ByteSource

    init(first: [UInt8], rest: any ByteSource) {
        self.first = first
        self.rest = rest
    }

    var bytesConsumed: Int64 { rest.bytesConsumed }
    var totalBytes: Int64? { rest.totalBytes }

    func nextChunk() throws(AuditInputError) -> [UInt8]? {
        if let chunk = first {
            first = nil
            if !chunk.isEmpty { return chunk }
        }
        return try rest.nextChunk()
    }
}
