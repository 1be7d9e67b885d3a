#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's open-files limit (`RLIMIT_NOFILE`). Every connection holds a descriptor, and the soft limit
/// most shells and service managers start a process with (1024) is far below the default `maxConnections`
/// (10,000): at the soft limit `accept` fails with `EMFILE`, pending connections pile up in the listen queue, and
/// even a well-behaved request waits. A process may raise its own soft limit up to the hard limit without
/// privileges, so the service does that at start.
package enum OpenFilesLimit {
    /// Descriptors the service needs besides its connections: the listening socket, key fetches, the Redis
    /// connection, log and cache files, the event loops' own descriptors.
    package static let reserve = 64

    /// Raises the soft limit to the hard limit (on macOS, to `OPEN_MAX` when the hard limit is unlimited, the most
    /// `setrlimit` accepts there). Returns the soft limit in force afterwards, nil when it cannot be read or is
    /// unlimited.
    @discardableResult
    package static func raiseToHardLimit() -> Int? {
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        #if canImport(Darwin)
        let unlimited = RLIM_INFINITY
        #else
        let unlimited = rlim_t.max      // RLIM_INFINITY, (rlim_t)-1, which Swift does not import
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        var wanted = limit.rlim_max
        #if canImport(Darwin)
        if wanted == unlimited { wanted = rlim_t(OPEN_MAX) }
        #endif
        if limit.rlim_cur != unlimited && limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur == unlimited ? nil : Int(clamping: limit.rlim_cur)
    }
}
