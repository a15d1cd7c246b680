import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate authority a test makes, and the server certificates it signs: for names and
/// addresses, valid when the test says (an expired one, one for another name). Written as PEM
/// files for servers and for `--ca-certificate`.
package struct TestAuthority: Sendable {
    package let certificate: Certificate
    let key: P256.Signing.PrivateKey

    package init(name: String = "Ferry Test Lab CA") throws {
        key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(name) }
        let publicKey = Certificate.PublicKey(key.publicKey)
        certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: publicKey, notValidBefore: Date() - 3600, notValidAfter: Date() + 86_400,
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
    }

    /// Writes the authority's certificate to `file` (PEM).
    package func write(to file: URL) throws {
        try certificate.serializeAsPEM().pemString.write(to: file, atomically: true, encoding: .utf8)
    }

    /// A server certificate for `names` (DNS) and `addresses` (IPv4), valid from `notBefore` to
    /// `notAfter`, written with its key into `folder` as `NAME.crt` and `NAME.key`.
    package func issue(
        _ fileName: String, names: [String] = ["localhost"], addresses: [[UInt8]] = [[127, 0, 0, 1]], notBefore: Date = Date() - 3600,
        notAfter: Date = Date() + 86_400, in folder: URL
    ) throws -> (chain: URL, key: URL) {
        let serverKey = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(serverKey.publicKey)
        let alternatives = names.map { GeneralName.dnsName($0) } + addresses.map { GeneralName.ipAddress(ASN1OctetString(contentBytes: $0[...])) }
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: publicKey, notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: certificate.subject, subject: try DistinguishedName { CommonName(names.first ?? "server") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(alternatives)
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        let chain = folder.appendingPathComponent("\(fileName).crt"), keyFile = folder.appendingPathComponent("\(fileName).key")
        try (server.serializeAsPEM().pemString + "\n" + certificate.serializeAsPEM().pemString).write(to: chain, atomically: true, encoding: .utf8)
        try serverKey.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        return (chain, keyFile)
    }
}
