/// Durations as people say them, rounded to their largest units: `45 s`, `3 min 20 s`, `2 h 5 min`,
/// `7 days`.
public enum DurationText {
    public static func describe(_ duration: Duration) -> String {
        let total = max(0, Int((duration / .seconds(1)).rounded()))
        let days = total / 86_400, hours = total % 86_400 / 3600, minutes = total % 3600 / 60, seconds = total % 60
        if days > 0 { return hours > 0 ? "\(days) d \(hours) h" : "\(days) day\(days == 1 ? "" : "s")" }
        if hours > 0 { return minutes > 0 ? "\(hours) h \(minutes) min" : "\(hours) h" }
        if minutes > 0 { return seconds > 0 ? "\(minutes) min \(seconds) s" : "\(minutes) min" }
        return "\(seconds) s"
    }
}
