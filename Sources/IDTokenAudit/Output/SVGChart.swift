import IDTokenKit

/// Small SVG charts drawn as text, for the HTML report: no scripts, no external resources.
enum SVGChart {
    struct Series {
        let name: String
        let color: String
    }

    /// Stacked vertical bars, one per time bucket: `rows[k].counts[s]` is series `s` in bucket `k`.
    static func stackedBars(rows: [(start: Double, counts: [Int])], series: [Series], bucketWidth: Double,
                            width: Int = 960, height: Int = 300) -> String {
        let left = 56.0, right = 16.0, top = 12.0, bottom = 44.0
        let plotWidth = Double(width) - left - right, plotHeight = Double(height) - top - bottom
        let totals = rows.map { $0.counts.prefix(series.count).reduce(0, +) }
        let maxTotal = max(1, totals.max() ?? 1)
        let scale = niceCeiling(maxTotal)
        var svg = open(width, height, label: "stacked bar chart")
        svg += axes(left: left, top: top, plotWidth: plotWidth, plotHeight: plotHeight, maxValue: scale)
        let slot = plotWidth / Double(max(1, rows.count))
        let barWidth = max(1, slot * 0.82)
        for (k, row) in rows.enumerated() {
            var y = top + plotHeight
            let x = left + Double(k) * slot + (slot - barWidth) / 2
            for (s, entry) in series.enumerated() where s < row.counts.count && row.counts[s] > 0 {
                let h = Double(row.counts[s]) / Double(scale) * plotHeight
                y -= h
                svg += "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(barWidth))\" height=\"\(f(max(h, 0.5)))\" fill=\"\(entry.color)\">"
                    + "<title>\(escape(label(row.start, bucketWidth))): \(row.counts[s]) \(escape(entry.name))</title></rect>"
            }
        }
        // Time labels: about six, at bucket starts.
        let step = max(1, Int((Double(rows.count) / 6).rounded(.up)))
        for k in stride(from: 0, to: rows.count, by: step) {
            let x = left + (Double(k) + 0.5) * slot
            svg += "<line x1=\"\(f(x))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(x))\" y2=\"\(f(top + plotHeight + 4))\" stroke=\"#555\"/>"
            svg += "<text x=\"\(f(x))\" y=\"\(f(top + plotHeight + 18))\" text-anchor=\"middle\" class=\"tick\">\(escape(label(rows[k].start, bucketWidth)))</text>"
        }
        svg += "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(Double(height) - 6))\" text-anchor=\"middle\" class=\"axis\">time of presentation (UTC), bars of \(escape(duration(bucketWidth)))</text>"
        return svg + "</svg>" + legend(series)
    }

    /// Horizontal bars with their labels and values.
    static func horizontalBars(_ items: [(label: String, value: Int, color: String)], width: Int = 960) -> String {
        let rowHeight = 26.0, left = 190.0, right = 70.0, top = 6.0
        let height = Int(top * 2 + rowHeight * Double(max(1, items.count)))
        let maxValue = max(1, items.map(\.value).max() ?? 1)
        let plotWidth = Double(width) - left - right
        var svg = open(width, height, label: "bar chart")
        for (k, item) in items.enumerated() {
            let y = top + Double(k) * rowHeight
            let w = max(1, Double(item.value) / Double(maxValue) * plotWidth)
            svg += "<text x=\"\(f(left - 8))\" y=\"\(f(y + rowHeight * 0.65))\" text-anchor=\"end\" class=\"label\">\(escape(item.label))</text>"
            svg += "<rect x=\"\(f(left))\" y=\"\(f(y + 4))\" width=\"\(f(w))\" height=\"\(f(rowHeight - 8))\" fill=\"\(item.color)\"><title>\(escape(item.label)): \(item.value)</title></rect>"
            svg += "<text x=\"\(f(left + w + 6))\" y=\"\(f(y + rowHeight * 0.65))\" class=\"value\">\(item.value)</text>"
        }
        return svg + "</svg>"
    }

    // MARK: Pieces

    private static func open(_ width: Int, _ height: Int, label: String) -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(width) \(height)\" width=\"100%\" role=\"img\" aria-label=\"\(label)\">"
    }

    private static func axes(left: Double, top: Double, plotWidth: Double, plotHeight: Double, maxValue: Int) -> String {
        var svg = ""
        for k in 0...4 {
            let value = maxValue * k / 4
            let y = top + plotHeight - Double(k) / 4 * plotHeight
            svg += "<line x1=\"\(f(left))\" y1=\"\(f(y))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(y))\" stroke=\"\(k == 0 ? "#555" : "#e3e3e3")\"/>"
            svg += "<text x=\"\(f(left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\" class=\"tick\">\(value)</text>"
        }
        return svg
    }

    private static func legend(_ series: [Series]) -> String {
        "<div class=\"legend\">" + series.map {
            "<span><i style=\"background:\($0.color)\"></i>\(escape($0.name))</span>"
        }.joined() + "</div>"
    }

    /// The smallest 1, 2 or 5 × 10ⁿ at or above `value`, so that axis ticks are round numbers.
    static func niceCeiling(_ value: Int) -> Int {
        var magnitude = 1
        while magnitude * 10 <= value { magnitude *= 10 }
        for step in [1, 2, 4, 5, 10] where step * magnitude >= value {
            if (step * magnitude) % 4 == 0 || step == 10 || magnitude == 1 { return max(4, step * magnitude) }
        }
        return 10 * magnitude
    }

    static func label(_ start: Double, _ width: Double) -> String {
        let text = UnixTime.iso8601(start)       // 2026-01-01T12:00:00Z
        let date = String(text.prefix(10)), time = String(text.dropFirst(11).prefix(5))
        return width >= 86_400 ? date : (time == "00:00" || width >= 21_600 ? "\(date.dropFirst(5)) \(time)" : time)
    }

    static func duration(_ seconds: Double) -> String {
        if seconds >= 86_400 { return trim(seconds / 86_400) + " d" }
        if seconds >= 3600 { return trim(seconds / 3600) + " h" }
        if seconds >= 60 { return trim(seconds / 60) + " min" }
        return trim(seconds) + " s"
    }

    private static func trim(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
    }

    static func f(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
