import FerryKit
import Foundation

/// Human-readable numbers, the same in the CLI everywhere (and in the web app's JavaScript).
enum Format {
    /// Decimal units, as file managers show them: `999 B`, `1.2 MB`, `3.40 GB`.
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB", "PB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(count) B" }
        return String(format: value < 10 ? "%.2f %@" : value < 100 ? "%.1f %@" : "%.0f %@", value, units[unit])
    }

    /// `4.2 MB/s`, with `×8` for a download over 8 connections.
    static func speedAndConnections(_ transfer: Transfer) -> String {
        let rate = speed(transfer.bytesPerSecond)
        guard let connections = transfer.connections, connections > 1 else { return rate }
        return rate.isEmpty ? "×\(connections)" : "\(rate) ×\(connections)"
    }

    static func speed(_ bytesPerSecond: Double?) -> String {
        guard let bytesPerSecond, bytesPerSecond.isFinite, bytesPerSecond > 0 else { return "" }
        return bytes(Int64(bytesPerSecond)) + "/s"
    }

    /// `42.0%`
    static func percent(_ fraction: Double) -> String {
        String(format: "%.1f%%", min(max(fraction, 0), 1) * 100)
    }

    /// `0:07`, `12:30`, `1:02:03`
    static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0, seconds < 360_000 else { return "" }
        let total = Int(seconds.rounded())
        let h = total / 3600, m = total / 60 % 60, s = total % 60
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }

    /// A short name for a transfer: its file name once known, else the URL's last component.
    static func name(_ transfer: Transfer) -> String {
        if let path = transfer.path { return URL(fileURLWithPath: path).lastPathComponent }
        guard let url = URL(string: transfer.url) else { return transfer.url }
        let last = url.lastPathComponent
        return last.isEmpty || last == "/" ? (url.host ?? transfer.url) : last
    }

    /// `42.0% of 1.2 MB`, `3.4 MB`, `Paused · 42.0% of 1.2 MB`.
    static func progress(_ transfer: Transfer) -> String {
        let amount: String
        if let total = transfer.totalBytes, total > 0 {
            amount = "\(percent(Double(transfer.bytesReceived) / Double(total))) of \(bytes(total))"
        } else {
            amount = bytes(transfer.bytesReceived)
        }
        return amount
    }

    /// Why a waiting transfer waits and when it tries again: `no network; next try in 40 s`.
    static func waiting(_ transfer: Transfer, now: Date = Date()) -> String {
        let reason = transfer.waitReason ?? transfer.error?.message ?? "waiting"
        guard let next = transfer.retryAt else { return reason }
        let seconds = next.timeIntervalSince(now)
        return seconds < 1 ? "\(reason); trying again now" : "\(reason); next try in \(DurationText.describe(.seconds(seconds)))"
    }

    /// A schedule's window as it is written: `Mon-Fri 09:00-18:00, 2.0 MB/s`.
    static func window(_ window: RateSchedule.Window) -> String {
        let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        let days = window.days.isEmpty ? "every day" : window.days.sorted().map { names[$0 - 1] }.joined(separator: ",")
        func time(_ seconds: Int) -> String {
            seconds % 60 == 0
                ? String(format: "%02d:%02d", seconds / 3600, seconds / 60 % 60)
                : String(format: "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
        }
        let rate = window.bytesPerSecond.map { "\(bytes($0))/s" } ?? "no limit"
        return "\(days) \(time(window.start))-\(time(window.end)), \(rate)"
    }

    /// A moment as the daemon's local clock shows it: `14:05`, or `Mon 09:00` beyond today.
    static func clock(_ date: Date, now: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = Calendar.current.isDate(date, inSameDayAs: now) ? "HH:mm" : "EEE HH:mm"
        return formatter.string(from: date)
    }

    static func truncate(_ text: String, to width: Int) -> String {
        guard text.count > width, width > 1 else { return text }
        return String(text.prefix(width - 1)) + "…"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
