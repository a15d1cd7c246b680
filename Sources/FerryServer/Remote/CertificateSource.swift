import Crypto
import FerryKit
import Foundation
import NIOCore
import NIOSSL
import Synchronization
import X509

/// The certificate a TLS listener presents: read from PEM files, and read again at the next
/// handshake after they change (a renewed certificate needs no restart). A certificate and key
/// that do not belong together (one file replaced before the other) are not used: the last good
/// pair is, until both are in place.
package final class CertificateSource: Sendable {
    package let certificatePath: String
    package let keyPath: String
    private let loaded: Mutex<Loaded>

    struct Loaded: @unchecked Sendable {  // NIOSSL's certificate and key are immutable once read.
        var identity: [FileIdentity]
        var chain: [NIOSSLCertificate]
        var key: NIOSSLPrivateKey
        var fingerprint: String
    }

    /// What tells a file changed: its inode, size and modification time.
    struct FileIdentity: Hashable {
        var inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            seconds = info.st_mtim.tv_sec
            nanoseconds = info.st_mtim.tv_nsec
        }
    }

    /// - Throws: `invalid_request` naming the file that cannot be read, or a key that is not the
    ///   certificate's.
    package init(certificate: String, key: String) throws {
        certificatePath = certificate
        keyPath = key
        loaded = Mutex(try Self.load(certificate: certificate, key: key))
    }

    /// The SHA-256 of the certificate presented now, as `AB:CD:…`.
    package var fingerprint: String { current().fingerprint }

    /// For a listener's TLS: the pair read now, and every handshake asks ``current()``.
    package func serverConfiguration() -> TLSConfiguration {
        let now = current()
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: now.chain.map { .certificate($0) }, privateKey: .privateKey(now.key)
        )
        configuration.minimumTLSVersion = .tlsv12
        configuration.sslContextCallback = { [self] _, promise in
            let pair = current()
            var override = NIOSSLContextConfigurationOverride()
            override.certificateChain = pair.chain.map { .certificate($0) }
            override.privateKey = .privateKey(pair.key)
            promise.succeed(override)
        }
        return configuration
    }

    /// The pair to present: the files' when they changed and read well together, else the last.
    func current() -> Loaded {
        let identity = [FileIdentity(certificatePath), FileIdentity(keyPath)].compactMap { $0 }
        return loaded.withLock { loaded in
            guard identity.count == 2, identity != loaded.identity else { return loaded }
            if let fresh = try? Self.load(certificate: certificatePath, key: keyPath) { loaded = fresh }
            return loaded
        }
    }

    static func load(certificate: String, key: String) throws -> Loaded {
        let identity = [FileIdentity(certificate), FileIdentity(key)].compactMap { $0 }
        let chain: [NIOSSLCertificate]
        let privateKey: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw FerryError.invalidRequest("Could not read the certificate \(certificate) (PEM): \(error).")
        }
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw FerryError.invalidRequest("Could not read the private key \(key) (PEM, not encrypted): \(error).")
        }
        guard let leaf = chain.first else { throw FerryError.invalidRequest("\(certificate) holds no certificate.") }
        let der = try leaf.toDERBytes()
        // The key must be the certificate's: checked with swift-certificates, which reads both.
        if let parsed = try? Certificate(derEncoded: der), let pem = try? String(contentsOfFile: key, encoding: .utf8),
            let parsedKey = try? Certificate.PrivateKey(pemEncoded: pem), parsedKey.publicKey != parsed.publicKey
        {
            throw FerryError.invalidRequest("The private key \(key) is not the key of the certificate \(certificate).")
        }
        return Loaded(identity: identity, chain: chain, key: privateKey, fingerprint: Self.fingerprint(der))
    }

    static func fingerprint(_ der: [UInt8]) -> String {
        SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    /// The SHA-256 fingerprint of the first certificate in a PEM file.
    package static func fingerprint(ofPEMFile path: String) -> String? {
        guard let first = try? NIOSSLCertificate.fromPEMFile(path).first, let der = try? first.toDERBytes() else { return nil }
        return fingerprint(der)
    }
}
