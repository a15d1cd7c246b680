import Foundation

/// aria2's name for a download: 16 hex digits. A Ferry transfer's is its id in hex, so it is
/// stable across restarts and the same for every client.
enum Aria2GID {
    static func gid(_ id: Int64) -> String {
        let hex = String(UInt64(bitPattern: id), radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }

    /// The transfer id a GID names; nil for anything that is not 16 hex digits (aria2 also
    /// takes a unique prefix, which clients do not send).
    static func id(_ gid: String) -> Int64? {
        guard gid.utf8.count == 16, let value = UInt64(gid, radix: 16), value > 0, value <= UInt64(Int64.max) else { return nil }
        return Int64(value)
    }
}
