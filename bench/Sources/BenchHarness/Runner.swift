import Foundation

/// Runs the selected scenarios, each with its baseline in alternating 20 ms slices (a whole run: between two
/// measurements of it) so that both see the same machine: on a shared, noisy machine the ratio of neighbours in
/// time is steadier than either rate.
public struct Runner {
    public let options: Options
    public let scenarios: [Scenario]

    public init(options: Options, scenarios: [Scenario]) {
        self.options = options
        self.scenarios = scenarios
    }

    struct Result {
        let scenario: String
        let summary: String
        let threads: Int
        let rate: Double
        let ratePerCPUSecond: Double
        let baseline: String?
        let baselineRate: Double?
        let ratio: Double?
        /// Per-CPU-second rate at this thread count over the one-thread rate (1.0 = no contention).
        var scaling: Double?
        /// Rate (wall clock) over the baseline's rate on as many threads: for a whole run, how close it comes
        /// to `threads ×` the raw primitive.
        var wallRatio: Double?
        /// Operations (records) of one whole run.
        var operations: Int?
        var peakResidentBytes: Int?
    }

    public func run() throws -> Report {
        let byName = Dictionary(uniqueKeysWithValues: scenarios.map { ($0.name, $0) })
        let selected: [Scenario]
        if options.scenarios.isEmpty {
            selected = scenarios.filter { $0.baseline != nil }
        } else {
            selected = try options.scenarios.map { try byName[$0].orThrow("no scenario \($0); try --list") }
        }
        var results: [Result] = []
        for scenario in selected {
            var oneThreadPerCPU: Double?
            for threads in options.threads {
                let baseline = scenario.baseline.flatMap { byName[$0] }
                var rates: [Double] = [], perCPU: [Double] = [], baseRates: [Double] = [], ratios: [Double] = []
                var wallRatios: [Double] = [], peaks: [Int] = [], operations: [Int] = []
                /// The baseline's rates around a measurement: before it, and for a whole run (which may last
                /// minutes while the machine's load changes) after it too.
                func measureBaseline() -> Sample? { baseline?.measure(threads: threads, seconds: options.seconds) }
                for _ in 0..<options.rounds {
                    // Operations on threads are measured in slices alternating with their baseline's; the
                    // others (async, whole runs) right after a measurement of it.
                    let paired = baseline.flatMap { scenario.measurePaired(with: $0, threads: threads, seconds: options.seconds) }
                    let before = paired?.1 ?? measureBaseline()
                    let sample = paired?.0 ?? scenario.measure(threads: threads, seconds: options.seconds)
                    guard sample.failures == 0 else {
                        throw BenchError("\(scenario.name): \(sample.failures) operations failed; a benchmark must measure the success path")
                    }
                    let after = scenario.isWholeRun ? measureBaseline() : nil
                    rates.append(sample.rate)
                    perCPU.append(sample.ratePerCPUSecond)
                    if let before {
                        let baseRate = after.map { (before.rate + $0.rate) / 2 } ?? before.rate
                        let basePerCPU = after.map { (before.ratePerCPUSecond + $0.ratePerCPUSecond) / 2 } ?? before.ratePerCPUSecond
                        baseRates.append(baseRate)
                        ratios.append(sample.ratePerCPUSecond / basePerCPU)
                        wallRatios.append(sample.rate / baseRate)
                    }
                    if let peak = sample.peakResidentBytes { peaks.append(peak) }
                    if scenario.isWholeRun { operations.append(sample.operations) }
                }
                var result = Result(scenario: scenario.name, summary: scenario.summary, threads: threads,
                                    rate: median(rates), ratePerCPUSecond: median(perCPU), baseline: scenario.baseline,
                                    baselineRate: baseRates.isEmpty ? nil : median(baseRates),
                                    ratio: ratios.isEmpty ? nil : median(ratios))
                if scenario.isWholeRun {
                    result.wallRatio = wallRatios.isEmpty ? nil : median(wallRatios)
                    result.operations = operations.max()
                    result.peakResidentBytes = peaks.max()
                }
                if threads == 1 { oneThreadPerCPU = result.ratePerCPUSecond }
                if let one = oneThreadPerCPU { result.scaling = result.ratePerCPUSecond / one }
                results.append(result)
                FileHandle.standardError.write(Data("  \(scenario.name) ×\(threads): \(Int(result.rate)) ops/s\n".utf8))
            }
        }
        return Report(options: options, results: results)
    }
}

public struct Report {
    let options: Options
    let results: [Runner.Result]

    public func table() -> String {
        var lines = ["scenario              thr        ops/s   per-CPU-s     baseline    ratio  scaling"]
        for r in results {
            func f(_ v: Double?, _ w: Int, _ digits: Int = 0) -> String {
                let text = v.map { String(format: "%.\(digits)f", $0) } ?? "-"
                return String(repeating: " ", count: max(0, w - text.count)) + text
            }
            lines.append(r.scenario.padding(toLength: 20, withPad: " ", startingAt: 0) + f(Double(r.threads), 5)
                         + f(r.rate, 13) + f(r.ratePerCPUSecond, 12) + f(r.baselineRate, 13) + f(r.ratio, 9, 3)
                         + f(r.scaling, 9, 3))
        }
        for r in results where r.operations != nil {
            let peak = r.peakResidentBytes.map { String(format: "%.1f MB", Double($0) / 1e6) } ?? "-"
            let wall = r.wallRatio.map { String(format: "%.3f", $0) } ?? "-"
            lines.append("\(r.scenario) ×\(r.threads): \(r.operations!) operations in one run; rate over \(r.threads) × baseline (wall): \(wall); peak resident memory \(peak)")
        }
        lines.append("ratio: per-CPU-second rate over the baseline's, median of \(options.rounds) rounds of \(options.seconds) s a side, the two sides alternating every 20 ms"
                     + (results.contains { $0.operations != nil } ? " (a whole run: baseline before and after it)" : ""))
        return lines.joined(separator: "\n")
    }

    public func json() -> String {
        func num(_ v: Double?) -> String { v.map { $0.isFinite ? String(format: "%.4f", $0) : "null" } ?? "null" }
        func str(_ s: String?) -> String {
            guard let s else { return "null" }
            let escaped = s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return "\"\(escaped)\""
        }
        let rows = results.map { r in
            "{\"scenario\":\(str(r.scenario)),\"threads\":\(r.threads),\"opsPerSecond\":\(num(r.rate)),"
                + "\"opsPerCPUSecond\":\(num(r.ratePerCPUSecond)),\"baseline\":\(str(r.baseline)),"
                + "\"baselineOpsPerSecond\":\(num(r.baselineRate)),\"ratio\":\(num(r.ratio)),\"scaling\":\(num(r.scaling))"
                + (r.operations.map { ",\"operations\":\($0),\"wallRatio\":\(num(r.wallRatio)),\"peakResidentBytes\":\(r.peakResidentBytes.map(String.init) ?? "null")" } ?? "")
                + "}"
        }
        return "{\"seconds\":\(options.seconds),\"rounds\":\(options.rounds),\"results\":[\n  "
            + rows.joined(separator: ",\n  ") + "\n]}"
    }
}
