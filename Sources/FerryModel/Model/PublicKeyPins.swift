import Foundation

/// The public keys a server may have (`--pinned-public-key`, curl's syntax): `sha256//BASE64`
/// hashes of the key's SubjectPublicKeyInfo, several separated by `;`. A connection to a server
/// whose key is none of them is refused, even when its certificate chain is valid.
public struct PublicKeyPins: Sendable, Hashable {
    /// The SHA-256 digests (32 bytes each), in the order given.
    public let digests: [[UInt8]]

    /// - Throws: `invalid_request` naming the part that is not a pin.
    public init(parsing text: String) throws(FerryError) {
        let parts = text.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard text.utf8.count <= 4096, !parts.isEmpty else { throw Self.invalid(text) }
        var digests: [[UInt8]] = []
        for part in parts {
            guard part.hasPrefix("sha256//"), let data = Data(base64Encoded: String(part.dropFirst(8))), data.count == 32 else {
                throw Self.invalid(part)
            }
            digests.append(Array(data))
        }
        self.digests = digests
    }

    /// Whether a key whose SubjectPublicKeyInfo hashes to `digest` is one of the pinned.
    public func allows(_ digest: [UInt8]) -> Bool { digests.contains(digest) }

    /// `sha256//BASE64` of one digest, as a pin is written.
    public static func text(_ digest: [UInt8]) -> String { "sha256//" + Data(digest).base64EncodedString() }

    /// The pins as given, one per digest.
    public var text: String { digests.map(Self.text).joined(separator: ";") }

    private static func invalid(_ part: some StringProtocol) -> FerryError {
        FerryError.invalidRequest(
            "'\(part.prefix(80))' is not a public key pin: give sha256// and the base64 SHA-256 of the server's public key (several separated by ';'), as curl's --pinned-public-key takes. `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64` prints it."
        )
    }
}
