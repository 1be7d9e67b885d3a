import AsyncHTTPClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The warm start: a key set saved to a cache file by an earlier process is served at once, until its own
/// lifetime says otherwise, so that a restarted service answers before its first fetch.
extension HTTPKeySource {
    func loadCacheFile(_ path: String) {
        guard KeyFileIO.isDirectory(path) == false else { return }
        do {
            let file = try KeyCacheFile.read(path: path)
            guard file.url == url.absoluteString else {
                logger.notice("ignoring a key cache file written for another URL", metadata: ["path": "\(path)", "file_url": "\(file.url)"])
                return
            }
            let keys = try Self.parseKeys(file.body, source: path)
            let now = clock.now()
            // A file from the future or promising more than the ceiling is clamped, never trusted further.
            let fetchedAt = min(file.fetchedAt, now)
            let expiresAt = min(file.expiresAt, fetchedAt + cachePolicy.maximumLifetime.inSeconds)
            let snapshot = makeSnapshot(keys: keys, body: file.body, fetchedAt: fetchedAt, expiresAt: expiresAt, fromCacheFile: true)
            guard now < snapshot.usableUntil else {
                logger.notice("the key cache file is too old to use", metadata: ["path": "\(path)", "fetched_at": "\(UnixTime.iso8601(fetchedAt))"])
                return
            }
            state.withLockedValue { publish(snapshot, into: &$0) }
            logger.info("key set loaded from the cache file", metadata: [
                "path": "\(path)", "kids": "\(keys.kids.joined(separator: ","))", "fetched_at": "\(UnixTime.iso8601(fetchedAt))",
            ])
        } catch {
            logger.warning("could not use the key cache file", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}
