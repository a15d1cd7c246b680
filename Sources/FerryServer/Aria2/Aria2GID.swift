import Foundation

/// aria2's name for a download: 16 hex digits. A Ferry transfer's is its id in hex, so it is
/// stable across restarts and the same for every client, unless the client that added it chose
/// one (aria2's `gid` option, kept by the journal). Ids stay far below 2^48, so chosen GIDs
/// must be above it: the two never meet.
enum Aria2GID {
    static func gid(_ id: Int64) -> String {
        let hex = String(UInt64(bitPattern: id), radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }

    /// The transfer id a GID names as Ferry's own; nil for anything that is not 16 hex digits
    /// (aria2 also takes a unique prefix, which clients do not send).
    static func id(_ gid: String) -> Int64? {
        guard isWellFormed(gid), let value = UInt64(gid, radix: 16), value > 0, value <= UInt64(Int64.max) else { return nil }
        return Int64(value)
    }

    static func isWellFormed(_ gid: String) -> Bool {
        gid.utf8.count == 16 && gid.allSatisfy(\.isHexDigit)
    }

    /// The smallest GID a client may choose.
    static let firstChosen: UInt64 = 1 << 48

    /// A GID a client asks for, lower-cased. - Throws: aria2's error when it is not one.
    static func chosen(_ text: String) throws -> String {
        let gid = text.lowercased()
        guard isWellFormed(gid), let value = UInt64(gid, radix: 16) else {
            throw Aria2RPC.Failure.aria2("The option '--gid' is 16 hex digits; got '\(text.prefix(40))'.")
        }
        guard value >= firstChosen else {
            throw Aria2RPC.Failure.aria2("GID \(gid) is Ferry's own: GIDs below 0001000000000000 are its transfer ids. Choose another.")
        }
        return gid
    }
}
