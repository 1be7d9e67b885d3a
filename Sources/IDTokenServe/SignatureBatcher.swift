import IDTokenKit
import NIOCore

/// One event loop's signatures, verified together (DESIGN §13): the ID tokens of the requests that the loop's read
/// cycle delivers, across its connections, wait at their signature; once the cycle's reads are handled, the loop
/// runs the batch (eight RS256 signatures at a time through the IFMA kernel) and each connection writes its answer.
///
/// A lone request is never held back by a timer: the batch runs as a task queued on the loop when its first token
/// arrives, and the loop runs its tasks as soon as it has handled the reads it woke up for. Batching pays only when
/// a cycle brings several tokens (the kernel costs as much for one lane as for eight), so under light load tokens are
/// verified where they are read, and every sixteenth, with the rest of its cycle, is batched to see whether the load
/// has grown: once a cycle's batch holds ``SignatureBatch/minimumKernelLanes`` tokens, every token waits for its
/// cycle's batch, until a batch comes out smaller. Used only on its loop's thread.
final class SignatureBatcher: @unchecked Sendable {
    let eventLoop: any EventLoop
    private let signatures: SignatureBatch
    private var waiting: [Queued] = []
    private var spare: [Queued] = []

    /// A token waiting for its cycle's batch, and what gets its verdict.
    private struct Queued {
        let token: MultiProfileVerifier.PendingToken
        let verified: (Bool) -> Void
    }
    /// Batches run and tokens verified in them, and the largest batch (for tests and metrics).
    private(set) var batches = 0
    private(set) var tokens = 0
    private(set) var largest = 0
    /// Tokens verified where they were read (light load).
    private(set) var unbatched = 0
    /// Whether the last batch was large enough for the kernel: tokens wait for their cycle's batch.
    private var batching = false
    private var sinceProbe = 0

    init(eventLoop: any EventLoop, implementation: RSABatchImplementation) {
        self.eventLoop = eventLoop
        self.signatures = SignatureBatch(implementation: implementation)
    }

    /// Whether the token read now should wait for its cycle's batch (then ``add(_:verified:)``); false: verify it
    /// where it was read.
    func defers() -> Bool {
        if batching || !waiting.isEmpty { return true }
        sinceProbe += 1
        if sinceProbe >= 16 {
            sinceProbe = 0
            return true
        }
        unbatched += 1
        return false
    }

    /// Queues `token`'s signature; `verified` gets the verdict (libcrypto's, or the kernel's exact encoding) once the
    /// loop has handled this cycle's reads.
    func add(_ token: MultiProfileVerifier.PendingToken, verified: @escaping (Bool) -> Void) {
        waiting.append(Queued(token: token, verified: verified))
        if waiting.count == 1 {
            eventLoop.execute { self.run() }
        }
    }

    private func run() {
        // Answers written below may read the next request on the same connection, which queues a new batch.
        swap(&waiting, &spare)
        let count = spare.count
        batches += 1
        tokens += count
        largest = max(largest, count)
        batching = count >= signatures.minimumKernelLanes
        // Read through the buffer: the tokens are lent to the batch where they are, not copied out.
        spare.withUnsafeBufferPointer { spare in
            signatures.verify(count: count, entry: { k, use in
                MultiProfileVerifier.PendingToken.withSignatureInput(of: (spare.baseAddress! + k).pointer(to: \.token)!, use)
            }) { k, valid in
                spare[k].verified(valid)
            }
        }
        spare.removeAll(keepingCapacity: true)
    }
}
