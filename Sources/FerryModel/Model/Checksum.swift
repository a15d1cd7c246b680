import Foundation

/// A digest a file must have, in aria2c's syntax: `sha-256=HEX` (also `sha-512`, `sha-1`, and
/// `md5` for old mirrors). The download is checked before it is placed; a mismatch fails it with
/// `checksum_mismatch`.
public struct Checksum: Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Algorithm: String, Sendable, Hashable, Codable, CaseIterable {
        case sha256 = "sha-256"
        case sha512 = "sha-512"
        case sha1 = "sha-1"
        case md5
        /// Podcasting 2.0's `podcast:integrity` writes SRI values, mostly sha384.
        case sha384 = "sha-384"

        /// The digest's length in bytes.
        public var byteCount: Int {
            switch self {
            case .sha256: 32
            case .sha512: 64
            case .sha384: 48
            case .sha1: 20
            case .md5: 16
            }
        }
    }

    public var algorithm: Algorithm
    /// The digest, lower-case hex.
    public var hex: String

    /// - Parameters:
    ///   - algorithm: the digest's algorithm.
    ///   - hex: the digest in hex, of the algorithm's length (any case).
    public init(algorithm: Algorithm, hex: String) throws(FerryError) {
        let lower = hex.lowercased()
        guard lower.count == algorithm.byteCount * 2, lower.allSatisfy(\.isHexDigit) else {
            throw FerryError.invalidRequest(
                "A \(algorithm.rawValue) digest is \(algorithm.byteCount * 2) hex digits; '\(hex.prefix(140))' is not."
            )
        }
        self.algorithm = algorithm
        self.hex = lower
    }

    /// Reads `ALGORITHM=HEX` (`sha-256=…`; `sha256` and `sha1` are taken too).
    public init(parsing text: String) throws(FerryError) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
        let names = Algorithm.allCases.map(\.rawValue).joined(separator: ", ")
        guard parts.count == 2 else {
            throw FerryError.invalidRequest("Give a checksum as ALGORITHM=HEX, e.g. sha-256=… (algorithms: \(names)).")
        }
        let name = parts[0].lowercased()
        guard let algorithm = Algorithm(rawValue: name) ?? Algorithm.allCases.first(where: { $0.rawValue.replacingOccurrences(of: "-", with: "") == name }) else {
            throw FerryError.invalidRequest("'\(parts[0].prefix(20))' is not a checksum algorithm Ferry knows; use \(names).")
        }
        try self.init(algorithm: algorithm, hex: parts[1])
    }

    /// `sha-256=…`, as it is given.
    public var description: String { "\(algorithm.rawValue)=\(hex)" }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
