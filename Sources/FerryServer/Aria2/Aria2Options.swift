import FerryCore
import FerryKit
import Foundation

/// The options of `aria2.addUri` Ferry carries out, read as aria2 writes them (strings, rates
/// with K and M): `dir`, `out`, `header`, `checksum`, `max-download-limit`, `split`,
/// `max-connection-per-server`, `pause`, `gid`, `metalink-location`, `http-user` and `http-passwd` (answered as Ferry
/// answers `--user`: Basic or Digest, to the URL's own origin only). Others are ignored, as aria2 ignores what does not apply
/// to a download. A value Ferry cannot use is aria2's error for the call. Pure.
struct Aria2Options {
    var directory: String?
    var name: String?
    var checksum: Checksum?
    var paused = false
    /// The GID the client chose (lower-case), if any.
    var gid: String?
    var transferOptions: TransferOptions?
    /// `metalink-location`: country codes whose mirrors a Metalink's downloads try first.
    var metalinkLocations: [String] = []

    init(_ value: Any) throws {
        guard let options = value as? [String: Any] else { throw Aria2RPC.Failure.aria2("The options are an object of names and values.") }
        func text(_ key: String) throws -> String? {
            switch options[key] {
            case nil: return nil
            case let string as String: return string
            case let number as NSNumber: return number.stringValue
            default: throw Aria2RPC.Failure.aria2("We encountered a problem while processing the option '--\(key)'.")
            }
        }
        directory = try text("dir")
        if let out = try text("out") {
            guard !out.isEmpty, !out.contains("/") else { throw Aria2RPC.Failure.aria2("The option '--out' is a file name, without '/'.") }
            name = out
        }
        if let value = try text("checksum") {
            do { checksum = try Checksum(parsing: value) } catch { throw Aria2RPC.Failure.aria2(error.message) }
        }
        if let value = try text("pause") { paused = value == "true" }
        metalinkLocations = try text("metalink-location")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        gid = try text("gid").map(Aria2GID.chosen)
        var transfer = TransferOptions()
        let headers: [String]
        switch options["header"] {
        case nil: headers = []
        case let one as String: headers = [one]
        case let many as [String]: headers = many
        default: throw Aria2RPC.Failure.aria2("We encountered a problem while processing the option '--header'.")
        }
        for line in headers {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw Aria2RPC.Failure.aria2("A header is 'Name: value'; got '\(line.prefix(60))'.")
            }
            transfer.headers = (transfer.headers ?? [:]).merging([String(line[..<colon]).trimmingCharacters(in: .whitespaces): String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)]) { $1 }
        }
        if let value = try text("max-download-limit") {
            let rate = try Self.rate(value, option: "max-download-limit")
            if rate > 0 { transfer.bytesPerSecond = rate }
        }
        // Connections for the download: split as aria2 -s says it (any number, as aria2 takes;
        // Ferry opens at most 16), else -x's number (16 at most, as in aria2).
        let split = try text("split").map { min(16, try Self.count($0, option: "split", upTo: .max)) }
        let perServer = try text("max-connection-per-server").map { try Self.count($0, option: "max-connection-per-server", upTo: 16) }
        transfer.connections = split ?? perServer
        if let user = try text("http-user") {
            transfer.user = user
            transfer.password = try text("http-passwd")
        } else if try text("http-passwd") != nil {
            throw Aria2RPC.Failure.aria2("The option '--http-passwd' goes with '--http-user'.")
        }
        do { try transfer.validate() } catch let error as FerryError { throw Aria2RPC.Failure.aria2(error.message) }
        transferOptions = transfer.isEmpty ? nil : transfer
    }

    /// What `aria2.changeOption` may change of a download: its limit, its connections, its
    /// headers (replaced whole, as aria2 does); any other option is refused, nothing changed.
    static let changeable: Set<String> = ["max-download-limit", "split", "max-connection-per-server", "header"]

    static func update(_ value: Any) throws -> TransferOptionsUpdate {
        guard let options = value as? [String: Any] else { throw Aria2RPC.Failure.aria2("The options are an object of names and values.") }
        if let other = options.keys.sorted().first(where: { !changeable.contains($0) }) {
            throw Aria2RPC.Failure.aria2(
                "Ferry does not change the option '--\(other.prefix(60))' of a download (it changes max-download-limit, split, max-connection-per-server and header)."
            )
        }
        let set = try Aria2Options(options).transferOptions ?? TransferOptions()
        var clear: [String] = []
        if options["max-download-limit"] != nil, set.bytesPerSecond == nil { clear.append("bytesPerSecond") }
        if options["header"] != nil { clear.append("headers") }
        return TransferOptionsUpdate(set: set.isEmpty ? nil : set, clear: clear.isEmpty ? nil : clear)
    }

    /// aria2's sizes: bytes, or with K or M (1024s).
    static func rate(_ text: String, option: String) throws -> Int64 {
        let upper = text.uppercased().trimmingCharacters(in: .whitespaces)
        let unit: Int64 = upper.hasSuffix("K") ? 1024 : upper.hasSuffix("M") ? 1024 * 1024 : 1
        guard let number = Int64(unit == 1 ? upper : String(upper.dropLast())), number >= 0 else {
            throw Aria2RPC.Failure.aria2("We encountered a problem while processing the option '--\(option)'.")
        }
        return number * unit
    }

    static func count(_ text: String, option: String, upTo limit: Int) throws -> Int {
        guard let number = Int(text), (1...limit).contains(number) else {
            throw Aria2RPC.Failure.aria2("We encountered a problem while processing the option '--\(option)'.")
        }
        return number
    }
}
