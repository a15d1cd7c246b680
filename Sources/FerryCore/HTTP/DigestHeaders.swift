import FerryModel
import Foundation

/// The whole file's digest as a server states it: RFC 9530's `Repr-Digest` (of the
/// representation, so good on a `206` too), `Content-Digest` (of this response's content: the
/// whole file only on a `200` without a content coding), or RFC 3230's `Digest`. Pure.
enum DigestHeaders {
    /// Algorithms in the order Ferry prefers them: SHA-256 is computed anyway.
    static let preference: [Checksum.Algorithm] = [.sha256, .sha512, .sha1, .md5]

    /// The digest to check the file against, and the header it came from, if any usable.
    static func checksum(
        reprDigest: String?, contentDigest: String?, digest: String?, status: Int, contentEncoding: String?
    ) -> (checksum: Checksum, header: String)? {
        let identity = contentEncoding.map { $0.trimmingCharacters(in: .whitespaces).lowercased() == "identity" } ?? true
        let candidates: [(String, [Checksum])] = [
            ("Repr-Digest", reprDigest.map(structured) ?? []),
            ("Content-Digest", status == 200 && identity ? contentDigest.map(structured) ?? [] : []),
            ("Digest", digest.map(legacy) ?? []),
        ]
        for (header, checksums) in candidates {
            if let best = preference.lazy.compactMap({ algorithm in checksums.first { $0.algorithm == algorithm } }).first {
                return (best, header)
            }
        }
        return nil
    }

    /// RFC 9530: a structured-field dictionary of byte sequences, `sha-256=:BASE64:, sha-512=:…:`.
    static func structured(_ value: String) -> [Checksum] {
        members(value).compactMap { key, value in
            guard let algorithm = algorithm(named: key), value.hasPrefix(":"), value.hasSuffix(":"), value.count >= 2 else { return nil }
            return checksum(algorithm, base64: String(value.dropFirst().dropLast()))
        }
    }

    /// RFC 3230: `SHA-256=BASE64, MD5=BASE64` (algorithm names in any case; `SHA` is SHA-1).
    static func legacy(_ value: String) -> [Checksum] {
        members(value).compactMap { key, value in
            algorithm(named: key).flatMap { checksum($0, base64: value) }
        }
    }

    /// `key=value` members separated by commas, parameters (`;…`) dropped.
    private static func members(_ value: String) -> [(String, String)] {
        value.split(separator: ",").compactMap { member in
            let bare = member.split(separator: ";", maxSplits: 1).first ?? member
            let parts = bare.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return (parts[0].trimmingCharacters(in: .whitespaces).lowercased(), parts[1].trimmingCharacters(in: .whitespaces))
        }
    }

    private static func algorithm(named name: String) -> Checksum.Algorithm? {
        switch name {
        case "sha-256": .sha256
        case "sha-512": .sha512
        case "sha", "sha-1": .sha1
        case "md5": .md5
        default: nil
        }
    }

    private static func checksum(_ algorithm: Checksum.Algorithm, base64: String) -> Checksum? {
        guard let bytes = Data(base64Encoded: base64), bytes.count == algorithm.byteCount else { return nil }
        return try? Checksum(algorithm: algorithm, hex: bytes.hexText)
    }
}
