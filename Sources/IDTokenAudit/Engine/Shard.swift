import Foundation

/// One shard of an audit spread over several processes (DESIGN §12): the records whose line number ≡ `index`
/// (mod `count`) of a shared input. Every shard reads the whole input (splitting lines is cheap) and judges only
/// its own lines, which keep their global numbers, so that the shards' verdicts sorted by line are one
/// process's verdicts.
package struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// 0 ≤ index < count.
    package let index: Int
    /// How many shards the input is split into.
    package let count: Int

    /// Shard `index` of `count`; refuses an index out of range or a count under 1.
    package init(index: Int, count: Int) throws(AuditError) {
        guard count >= 1 else { throw AuditError("the shard count must be at least 1, not \(count)") }
        guard index >= 0, index < count else {
            throw AuditError("the shard index must be from 0 to \(count - 1), not \(index)")
        }
        self.index = index
        self.count = count
    }

    /// Parses `I/N`.
    package init(parsing text: String) throws(AuditError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw AuditError("a shard is INDEX/COUNT (0/4 … 3/4), not \"\(text)\"")
        }
        try self.init(index: index, count: count)
    }

    /// Whether line `number` (1-based) is this shard's: line L belongs to shard L mod N (DESIGN §12).
    @inline(__always)
    package func contains(line number: Int) -> Bool {
        count == 1 || number % count == index
    }

    /// `I/N`.
    package var description: String { "\(index)/\(count)" }

    /// The environment variables a batch engine sets for an array job, in the order they are looked at: the
    /// index variable and the variable holding the count.
    package static let environmentVariables: [(index: String, count: String)] = [
        ("JOB_COMPLETION_INDEX", "JOB_COMPLETIONS"),                  // Kubernetes Indexed Job (count: set in the manifest)
        ("AWS_BATCH_JOB_ARRAY_INDEX", "AWS_BATCH_JOB_ARRAY_SIZE"),    // AWS Batch array job (size: set in the job definition)
    ]

    /// The shard the environment names, if any: the first index variable present, with its count variable.
    /// - Returns: the shard and a sentence saying where it came from, or nil when no index variable is set.
    /// - Throws: ``AuditError`` naming the variable when the index or count is missing, malformed or out
    ///   of range.
    package static func fromEnvironment(_ environment: [String: String]) throws(AuditError) -> (shard: Shard, source: String)? {
        for (indexName, countName) in environmentVariables {
            guard let indexText = environment[indexName] else { continue }
            guard let index = Int(indexText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw AuditError("\(indexName)=\"\(indexText)\" is not a shard index (a whole number from 0)")
            }
            guard let countText = environment[countName] else {
                throw AuditError("\(indexName) is set but \(countName) (the number of shards) is not; set it, or give --shard I/N")
            }
            guard let count = Int(countText.trimmingCharacters(in: .whitespacesAndNewlines)), count >= 1 else {
                throw AuditError("\(countName)=\"\(countText)\" is not a number of shards (a whole number from 1)")
            }
            guard index >= 0, index < count else {
                throw AuditError("\(indexName)=\(index) is out of range: \(countName)=\(count) shards are numbered 0 to \(count - 1)")
            }
            let shard = try Shard(index: index, count: count)
            return (shard, "shard \(shard) from \(indexName)=\(index) and \(countName)=\(count)")
        }
        return nil
    }
}
