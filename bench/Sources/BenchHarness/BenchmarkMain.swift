import Foundation
import JOSE

/// The command line shared by the benchmark executables (idtoken-bench and the peers package):
///
///     idtoken-bench [--seconds S] [--rounds R] [--threads 1,2] [--scenario NAME]... [--json]
///     idtoken-bench --scenario jose-rs256 --iterations 2000   (a fixed amount of work, for callgrind)
public struct Options {
    public var seconds = 1.0
    public var rounds = 5
    public var threads = [1, 2]
    public var scenarios: [String] = []
    public var json = false
    public var iterations: Int?
    public var fixtures = Fixtures.defaultPath
    public var list = false
    /// The log the `audit` scenario audits (`--audit-log`, or the environment variable `IDTK_BENCH_AUDIT_LOG`).
    public var auditLog = ProcessInfo.processInfo.environment["IDTK_BENCH_AUDIT_LOG"]
    public var auditConfig = Options.defaultAuditConfig
    public var auditAt: String?
    public var auditCacheCapacity = 8192

    static let usage = """
    usage: idtoken-bench [--seconds S] [--rounds R] [--threads 1,2,...] [--scenario NAME]... [--json]
                         [--iterations N] [--fixtures FILE] [--list]
                         [--audit-log FILE [--audit-config FILE] [--audit-at TIME] [--audit-cache N]]
      --seconds S      length of one measurement (default 1.0)
      --rounds R       measurements per scenario, each alternating with its baseline every 20 ms (default 5)
      --threads LIST   thread counts to run (default 1,2)
      --scenario NAME  run only this scenario (and its baseline); repeatable
      --json           print one JSON document instead of a table
      --iterations N   run the scenario N times on one thread and exit (for callgrind instruction counts)
      --list           list the scenarios
      --audit-log FILE adds the `audit` scenario: AuditEngine over FILE (also IDTK_BENCH_AUDIT_LOG), one whole
                       run per round, between two raw-rsa2048 measurements; with --iterations N, its first N lines
      --audit-config F the audit's profiles (default Vectors/samples/audit-config.json, the generator's)
      --audit-at TIME  time for records without one (default: the configuration's "at")
      --audit-cache N  verdict cache capacity (default 8192; 0 verifies every line)
    """

    public init(_ args: [String]) throws {
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < args.count else { throw BenchError("\(args[i - 1]) needs a value\n\(Options.usage)") }
            return args[i]
        }
        while i < args.count {
            switch args[i] {
            case "--seconds": seconds = try Double(value()).orThrow("--seconds takes a number")
            case "--rounds": rounds = try Int(value()).orThrow("--rounds takes a whole number")
            case "--threads":
                threads = try value().split(separator: ",").map { try Int($0).orThrow("--threads takes a list like 1,2") }
            case "--scenario": scenarios.append(try value())
            case "--json": json = true
            case "--iterations": iterations = try Int(value()).orThrow("--iterations takes a whole number")
            case "--fixtures": fixtures = try value()
            case "--list": list = true
            case "--audit-log": auditLog = try value()
            case "--audit-config": auditConfig = try value()
            case "--audit-at": auditAt = try value()
            case "--audit-cache": auditCacheCapacity = try Int(value()).orThrow("--audit-cache takes a whole number")
            case "-h", "--help": print(Options.usage); exit(0)
            default: throw BenchError("unknown option \(args[i])\n\(Options.usage)")
            }
            i += 1
        }
        guard seconds > 0, rounds > 0, !threads.isEmpty, threads.allSatisfy({ $0 > 0 }) else {
            throw BenchError("--seconds, --rounds and --threads must be positive")
        }
    }
}

extension Options {
    static var defaultAuditConfig: String {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("../../../Vectors/samples/audit-config.json").standardizedFileURL.path
    }
}

extension Optional {
    public func orThrow(_ message: String) throws -> Wrapped {
        guard let self else { throw BenchError(message) }
        return self
    }
}


/// Parses the command line, builds the scenarios from the fixtures, runs them and prints the report.
public func benchmarkMain(scenarios makeScenarios: (Fixtures) throws -> [Scenario]) -> Never {
    do {
        let options = try Options(Array(CommandLine.arguments.dropFirst()))
        let scenarios = try makeScenarios(try Fixtures(path: options.fixtures)) + auditScenarios(options)
        if options.list {
            for s in scenarios { print("\(s.name.padding(toLength: 22, withPad: " ", startingAt: 0)) \(s.summary)") }
            exit(0)
        }
        if let iterations = options.iterations {
            // A fixed amount of work for instruction counting: no clocks, no threads.
            for name in options.scenarios {
                guard let scenario = scenarios.first(where: { $0.name == name }) else { throw BenchError("no scenario \(name)") }
                let failures = scenario.runFixed(iterations: iterations)
                if failures > 0 { throw BenchError("\(name): \(failures) of \(iterations) operations failed") }
            }
            exit(0)
        }
        let report = try Runner(options: options, scenarios: scenarios).run()
        print(options.json ? report.json() : report.table())
    } catch {
        FileHandle.standardError.write(Data("idtoken-bench: \(error)\n".utf8))
        exit(2)
    }
    exit(0)
}
