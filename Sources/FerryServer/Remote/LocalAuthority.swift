import Crypto
import FerryCore
import FerryKit
import Foundation
import SwiftASN1
import X509

/// Ferry's own small certificate authority, for listeners beyond loopback when the user brings
/// no certificate: a CA kept in the state folder (`tls/ca.pem`, its key 0600) that a phone trusts
/// once, and a server certificate it signs for the machine's names and addresses, made again
/// when they change or it nears its end.
///
/// The CA may only sign local names (`.local`, `.lan`, `.home.arpa`, `localhost`, the machine's
/// own and the names given: name constraints): a device that trusts it trusts no site on the
/// internet through it, even if its key were stolen. Addresses are not constrained: BoringSSL
/// (swift-nio-ssl's, so FerryKit's on another machine) refuses a chain whose CA constrains
/// them, and sites are reached by name.
package struct LocalAuthority: Sendable {
    let folder: URL

    package init(state: URL) {
        folder = state.appendingPathComponent("tls", isDirectory: true)
    }

    package var caCertificatePath: String { folder.appendingPathComponent("ca.pem").path }
    var caKeyPath: String { folder.appendingPathComponent("ca-key.pem").path }
    package var certificatePath: String { folder.appendingPathComponent("server.pem").path }
    package var keyPath: String { folder.appendingPathComponent("server-key.pem").path }

    /// A server certificate is made to last 397 days (what browsers accept of a server's) and
    /// made again 30 days before its end.
    static let serverLifetime: TimeInterval = 397 * 86_400
    static let renewBefore: TimeInterval = 30 * 86_400
    static let caLifetime: TimeInterval = 10 * 365 * 86_400

    /// Makes what is missing: the CA, and a server certificate naming every one of `names`
    /// (DNS names) and `addresses` (IP addresses).
    /// - Returns: whether the CA was made now (devices must trust it again).
    @discardableResult
    package func prepare(names: [String], addresses: [String], now: Date = Date()) throws -> Bool {
        let names = Array(Set(names.map { $0.lowercased() })).sorted()
        let addresses = Array(Set(addresses)).sorted()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var (ca, caKey) = (try? loadCA()) ?? (nil, nil)
        var madeCA = false
        if ca == nil || caKey == nil || !Self.permits(ca!, names: names) || ca!.notValidAfter < now + Self.serverLifetime {
            let made = try Self.makeCA(names: names, now: now)
            try write(try made.certificate.serializeAsPEM().pemString, to: caCertificatePath, mode: 0o644)
            try write(made.key.pemRepresentation, to: caKeyPath, mode: 0o600)
            (ca, caKey, madeCA) = (made.certificate, made.key, true)
        }
        guard let ca, let caKey else { return madeCA }
        if !madeCA, let current = try? loadServerCertificate(), Self.covers(current, names: names, addresses: addresses),
            current.issuer == ca.subject, ca.publicKey.isValidSignature(current.signature, for: current),
            current.notValidAfter > now + Self.renewBefore
        {
            return false
        }
        let key = P256.Signing.PrivateKey()
        let certificate = try Self.makeServerCertificate(key: key, names: names, addresses: addresses, ca: ca, caKey: caKey, now: now)
        // The key first: a reader never pairs the new certificate with the old key.
        try write(key.pemRepresentation, to: keyPath, mode: 0o600)
        try write(try certificate.serializeAsPEM().pemString, to: certificatePath, mode: 0o644)
        return madeCA
    }

    /// The CA's certificate (PEM), for devices to trust.
    package func caCertificatePEM() throws -> String {
        try String(contentsOfFile: caCertificatePath, encoding: .utf8)
    }

    // MARK: Making

    static func makeCA(names: [String], now: Date) throws -> (certificate: Certificate, key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let host = ProcessInfo.processInfo.hostName
        let subject = try DistinguishedName {
            OrganizationName("Ferry")
            CommonName("Ferry on \(host.prefix(40))")
        }
        let publicKey = Certificate.PublicKey(key.publicKey)
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: publicKey)
            Critical(NameConstraints(permittedDNSDomains: Self.localDomains + names.filter { !$0.isEmpty && IPRange.bytes($0) == nil }))
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: publicKey, notValidBefore: now - 3600, notValidAfter: now + caLifetime,
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        return (certificate, key)
    }

    static func makeServerCertificate(
        key: P256.Signing.PrivateKey, names: [String], addresses: [String], ca: Certificate, caKey: P256.Signing.PrivateKey, now: Date
    ) throws -> Certificate {
        let publicKey = Certificate.PublicKey(key.publicKey)
        let alternatives = names.map { GeneralName.dnsName($0) } + addresses.compactMap { IPRange.bytes($0).map { GeneralName.ipAddress(ASN1OctetString(contentBytes: $0[...])) } }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectKeyIdentifier(hash: publicKey)
            AuthorityKeyIdentifier(keyIdentifier: try ca.extensions.subjectKeyIdentifier?.keyIdentifier)
            SubjectAlternativeNames(alternatives)
        }
        return try Certificate(
            version: .v3, serialNumber: .init(), publicKey: publicKey, notValidBefore: now - 3600, notValidAfter: now + serverLifetime,
            issuer: ca.subject, subject: try DistinguishedName { CommonName(names.first ?? addresses.first ?? "ferry") },
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(caKey)
        )
    }

    /// The names a home's machines have: mDNS (`.local`), the usual home suffixes, loopback.
    static let localDomains = ["local", "lan", "home.arpa", "internal", "localhost"]

    // MARK: Checking

    /// Whether the CA's name constraints let it sign these names.
    static func permits(_ ca: Certificate, names: [String]) -> Bool {
        guard let constraints = try? ca.extensions.nameConstraints else { return false }
        let domains = Array(constraints.permittedDNSDomains)
        return names.allSatisfy { name in domains.contains { domain in name == domain || name.hasSuffix("." + domain) } }
    }

    /// Whether the certificate names every one of these.
    static func covers(_ certificate: Certificate, names: [String], addresses: [String]) -> Bool {
        guard let alternatives = try? certificate.extensions.subjectAlternativeNames else { return false }
        var dns: Set<String> = [], ips: Set<[UInt8]> = []
        for name in alternatives {
            switch name {
            case .dnsName(let text): dns.insert(text.lowercased())
            case .ipAddress(let bytes): ips.insert(Array(bytes.bytes))
            default: break
            }
        }
        return names.allSatisfy(dns.contains) && addresses.allSatisfy { IPRange.bytes($0).map(ips.contains) ?? false }
    }

    // MARK: Files

    private func loadCA() throws -> (Certificate, P256.Signing.PrivateKey) {
        let certificate = try Certificate(pemEncoded: try String(contentsOfFile: caCertificatePath, encoding: .utf8))
        let key = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: caKeyPath, encoding: .utf8))
        return (certificate, key)
    }

    private func loadServerCertificate() throws -> Certificate {
        try Certificate(pemEncoded: try String(contentsOfFile: certificatePath, encoding: .utf8))
    }

    /// Written whole (a temporary file renamed over), with its mode from the start.
    private func write(_ text: String, to path: String, mode: mode_t) throws {
        let temporary = path + ".new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FerryError(.fileSystem, "Could not write \(path): \(String(cString: strerror(errno))).") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        fsync(fd)
        close(fd)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw FerryError(.fileSystem, "Could not write \(path): \(String(cString: strerror(errno))).")
        }
    }
}
