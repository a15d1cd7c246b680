import FerryModel
import Foundation

/// A `.netrc` file (as curl and ftp read it): `machine NAME login USER password SECRET
/// [account ACCOUNT]` entries, a `default` entry for every other host, and `macdef NAME` blocks
/// (macros, up to the next blank line) and lines starting with `#` skipped. Tokens are separated by spaces, tabs or line
/// breaks; a token may be quoted like curl's (`"pass word"`, with `\"`, `\\`, `\n`, `\r`, `\t`).
package struct Netrc: Sendable, Hashable {
    package struct Entry: Sendable, Hashable {
        /// The host, or nil for `default`.
        package var machine: String?
        package var login: String?
        package var password: String?
        package var account: String?
    }

    package var entries: [Entry]

    /// The entry for `host`: the first `machine` entry naming it (the one with `login` when a
    /// user is given), else `default`.
    package func entry(host: String, login: String? = nil) -> Entry? {
        let host = host.lowercased()
        let named = entries.filter { $0.machine?.lowercased() == host }
        if let login { if let match = named.first(where: { $0.login == login }) { return match } } else if let first = named.first { return first }
        return entries.first { $0.machine == nil && (login == nil || $0.login == nil || $0.login == login) }
    }

    /// - Parameter text: the file's contents.
    /// - Throws: ``FerryError`` `invalid_request` naming the line and what is wrong there.
    package init(parsing text: String, file: String = ".netrc") throws(FerryError) {
        var tokens = Tokens(Array(text.utf8))
        var entries: [Entry] = []
        func fail(_ reason: String, _ line: Int) -> FerryError {
            FerryError.invalidRequest("\(file), line \(line): \(reason).")
        }
        while let (word, line) = try tokens.next(file: file) {
            switch word {
            case "machine":
                guard let (name, _) = try tokens.next(file: file) else { throw fail("'machine' without a host name", line) }
                entries.append(Entry(machine: name))
            case "default":
                entries.append(Entry(machine: nil))
            case "login", "password", "account":
                guard !entries.isEmpty else { throw fail("'\(word)' before any 'machine' or 'default'", line) }
                guard let (value, _) = try tokens.next(file: file) else { throw fail("'\(word)' without a value", line) }
                switch word {
                case "login": entries[entries.count - 1].login = value
                case "password": entries[entries.count - 1].password = value
                default: entries[entries.count - 1].account = value
                }
            case "macdef":
                guard try tokens.next(file: file) != nil else { throw fail("'macdef' without a name", line) }
                tokens.skipMacro()
            default:
                // The word is not quoted back: the file may be one the caller should not read
                // (a 0600 file of the daemon's named as a .netrc).
                throw fail("a word that is not a .netrc keyword (machine, default, login, password, account, macdef)", line)
            }
        }
        self.entries = entries
    }

    /// Reads a `.netrc` file, refusing one that others may read (curl warns; Ferry refuses, since
    /// the daemon would otherwise spread a password any local user can see).
    /// - Throws: ``FerryError`` `invalid_request`: a file that is missing, not a regular file,
    ///   readable or writable by group or others, or malformed.
    package static func load(path: String) throws(FerryError) -> Netrc {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw FerryError.invalidRequest("The .netrc file \(path) cannot be read: it does not exist or is not accessible.")
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw FerryError.invalidRequest("The .netrc file \(path) is not a regular file.")
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        guard mode & 0o077 == 0 else {
            throw FerryError.invalidRequest(
                "The .netrc file \(path) can be read by other users (mode \(String(mode, radix: 8))); Ferry will not use its passwords. Run: chmod 600 \(path)"
            )
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FerryError.invalidRequest("The .netrc file \(path) cannot be read.")
        }
        guard data.count <= 1 << 20 else { throw FerryError.invalidRequest("The .netrc file \(path) is larger than 1 MiB.") }
        return try Netrc(parsing: String(decoding: data, as: UTF8.self), file: path)
    }

    /// The tokens of a netrc file, with the line each starts on.
    struct Tokens {
        let bytes: [UInt8]
        var at = 0
        var line = 1

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x0B].contains(bytes[at]) {
                if bytes[at] == 0x0A { line += 1 }
                at += 1
            }
        }

        mutating func next(file: String) throws(FerryError) -> (String, Int)? {
            skipSpace()
            // A line that starts with `#` is a comment (as curl reads it).
            while at < bytes.count, bytes[at] == UInt8(ascii: "#"), startsLine(at) {
                while at < bytes.count, bytes[at] != 0x0A { at += 1 }
                skipSpace()
            }
            guard at < bytes.count else { return nil }
            let start = line
            var word: [UInt8] = []
            if bytes[at] == UInt8(ascii: "\"") {
                at += 1
                while true {
                    guard at < bytes.count, bytes[at] != 0x0A else {
                        throw FerryError.invalidRequest("\(file), line \(start): a quoted token is not closed.")
                    }
                    let byte = bytes[at]
                    at += 1
                    if byte == UInt8(ascii: "\"") { break }
                    if byte == UInt8(ascii: "\\"), at < bytes.count {
                        let escaped = bytes[at]
                        at += 1
                        switch escaped {
                        case UInt8(ascii: "n"): word.append(0x0A)
                        case UInt8(ascii: "r"): word.append(0x0D)
                        case UInt8(ascii: "t"): word.append(0x09)
                        default: word.append(escaped)
                        }
                    } else {
                        word.append(byte)
                    }
                }
            } else {
                while at < bytes.count, ![0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x0B].contains(bytes[at]) {
                    word.append(bytes[at])
                    at += 1
                }
            }
            return (String(decoding: word, as: UTF8.self), start)
        }

        func startsLine(_ index: Int) -> Bool {
            var i = index - 1
            while i >= 0, bytes[i] == 0x20 || bytes[i] == 0x09 { i -= 1 }
            return i < 0 || bytes[i] == 0x0A
        }

        /// A macro's body: every line up to the first empty one.
        mutating func skipMacro() {
            // The rest of the `macdef NAME` line.
            while at < bytes.count, bytes[at] != 0x0A { at += 1 }
            while at < bytes.count {
                at += 1
                line += 1
                let lineStart = at
                while at < bytes.count, bytes[at] != 0x0A { at += 1 }
                let body = bytes[lineStart..<at]
                if body.allSatisfy({ $0 == 0x0D }) { return }
            }
        }
    }
}
