import Foundation

/// Runs the selected scenarios, each interleaved round by round with its baseline so that both see the same
/// machine: on a shared, noisy machine the ratio of neighbours in time is steadier than either rate.
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
                for _ in 0..<options.rounds {
                    var baseSample: Sample?
                    if let baseline {
                        baseSample = baseline.measure(threads: threads, seconds: options.seconds)
                        baseRates.append(baseSample!.rate)
                    }
                    let sample = scenario.measure(threads: threads, seconds: options.seconds)
                    guard sample.failures == 0 else {
                        throw BenchError("\(scenario.name): \(sample.failures) operations failed; a benchmark must measure the success path")
                    }
                    rates.append(sample.rate)
                    perCPU.append(sample.ratePerCPUSecond)
                    if let baseSample { ratios.append(sample.ratePerCPUSecond / baseSample.ratePerCPUSecond) }
                }
                var result = Result(scenario: scenario.name, summary: scenario.summary, threads: threads,
                                    rate: median(rates), ratePerCPUSecond: median(perCPU), baseline: scenario.baseline,
                                    baselineRate: baseRates.isEmpty ? nil : median(baseRates),
                                    ratio: ratios.isEmpty ? nil : median(ratios))
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
        lines.append("ratio: per-CPU-second rate over the baseline's, median of \(options.rounds) interleaved rounds of \(options.seconds) s")
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
                + "\"baselineOpsPerSecond\":\(num(r.baselineRate)),\"ratio\":\(num(r.ratio)),\"scaling\":\(num(r.scaling))}"
        }
        return "{\"seconds\":\(options.seconds),\"rounds\":\(options.rounds),\"results\":[\n  "
            + rows.joined(separator: ",\n  ") + "\n]}"
    }
}
