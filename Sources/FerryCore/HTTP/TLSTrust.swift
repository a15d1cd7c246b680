import FerryModel
import Foundation
import NIOSSL
import Synchronization

/// The authorities a TLS connection trusts besides the system's: the daemon environment's
/// `SSL_CERT_FILE` and `SSL_CERT_DIR` (as OpenSSL's tools read them), and a transfer's or
/// session's `caCertificate` / `caDirectory`. Loaded certificates are kept by path and
/// modification time, so a renewed file is read again and an unchanged one never.
package final class TLSTrust: Sendable {
    private let loaded = Mutex<[String: (stamp: TimeInterval, certificates: [NIOSSLCertificate])]>([:])
    private let identities = Mutex<[String: (stamp: TimeInterval, identity: ClientIdentity)]>([:])

    package init() {}

    /// The certificates of a PEM file.
    /// - Throws: `invalid_request` naming the file and what is wrong with it.
    package func certificates(file path: String) throws(FerryError) -> [NIOSSLCertificate] {
        let stamp = Self.stamp(path)
        if let cached = loaded.withLock({ $0[path] }), cached.stamp == stamp { return cached.certificates }
        let certificates = try Self.read(file: path)
        loaded.withLock { $0[path] = (stamp, certificates) }
        return certificates
    }

    /// The certificates of every `*.pem`, `*.crt` and hashed (`abcd1234.0`) file of a folder.
    /// - Throws: `invalid_request` for a folder that cannot be read or holds no certificate.
    package func certificates(directory path: String) throws(FerryError) -> [NIOSSLCertificate] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw FerryError.invalidRequest("The CA folder \(path) cannot be read.")
        }
        var all: [NIOSSLCertificate] = []
        for name in names.sorted() where Self.isCertificateName(name) {
            all += (try? certificates(file: (path as NSString).appendingPathComponent(name))) ?? []
        }
        guard !all.isEmpty else { throw FerryError.invalidRequest("The CA folder \(path) holds no PEM certificate (*.pem, *.crt).") }
        return all
    }

    /// The extra roots of `options` (nil: none, the client's own trust).
    package func roots(for options: TransferOptions) throws(FerryError) -> [NIOSSLCertificate]? {
        guard options.caCertificate != nil || options.caDirectory != nil else { return nil }
        var roots: [NIOSSLCertificate] = []
        if let file = options.caCertificate { roots += try certificates(file: file) }
        if let folder = options.caDirectory { roots += try certificates(directory: folder) }
        return roots
    }

    /// The TLS configuration for `options`: `base` (the client's: the system's roots and the
    /// environment's) with their authorities added, their client certificate, and no check of
    /// the server's certificate when they say `insecure`; nil when they change nothing.
    package func configuration(for options: TransferOptions, base: TLSConfiguration?) throws(FerryError) -> TLSConfiguration? {
        let roots = try roots(for: options)
        let identity = try clientIdentity(for: options)
        guard roots != nil || identity != nil || options.insecure == true else { return nil }
        var configuration = base ?? TransferEngine.clientTLS()
        if let roots { configuration.additionalTrustRoots.append(.certificates(roots)) }
        if let identity {
            configuration.certificateChain = identity.chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(identity.key)
        }
        if options.insecure == true { configuration.certificateVerification = .none }
        return configuration
    }

    /// Checks what options name before anything is journaled: the authorities can be read, the
    /// client certificate and key can be read, and the key is the certificate's.
    package func check(_ options: TransferOptions?) throws(FerryError) {
        guard let options else { return }
        _ = try roots(for: options)
        _ = try clientIdentity(for: options)
    }

    /// The client certificate's chain and its key (nil: none), read once per file version.
    /// - Throws: `invalid_request` for a file that is not PEM, an encrypted key without its
    ///   passphrase or with a wrong one, or a key that is not the certificate's.
    package func clientIdentity(for options: TransferOptions) throws(FerryError) -> ClientIdentity? {
        guard let certificatePath = options.clientCertificate, let keyPath = options.clientKey else { return nil }
        let cacheKey = "\(certificatePath)\u{0}\(keyPath)\u{0}\(options.clientKeyPassphrase ?? "")"
        let stamp = Self.stamp(certificatePath) + Self.stamp(keyPath) * 3
        if let cached = identities.withLock({ $0[cacheKey] }), cached.stamp == stamp { return cached.identity }
        let identity = try ClientIdentity.read(certificate: certificatePath, key: keyPath, passphrase: options.clientKeyPassphrase)
        identities.withLock { $0[cacheKey] = (stamp, identity) }
        return identity
    }

    /// This process's `SSL_CERT_FILE` / `SSL_CERT_DIR` roots, read once: every client is made from
    /// them, and a folder such as /etc/ssl/certs holds hundreds of files to parse.
    package static let environment = TLSTrust().environmentRoots()

    /// The roots of the environment's `SSL_CERT_FILE` and `SSL_CERT_DIR` (folders separated by
    /// `:`), and what could not be read.
    package func environmentRoots(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> (roots: [NIOSSLCertificate], problems: [String]) {
        var roots: [NIOSSLCertificate] = []
        var problems: [String] = []
        // The system's own store (what Debian's profile often names here) is trusted already.
        let system = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/certs"]
        func isSystem(_ path: String) -> Bool {
            let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
            return system.contains { URL(fileURLWithPath: $0).resolvingSymlinksInPath().standardizedFileURL.path == resolved }
        }
        if let file = environment["SSL_CERT_FILE"], !file.isEmpty, !isSystem(file) {
            do { roots += try certificates(file: file) } catch { problems.append("SSL_CERT_FILE: \(error.message)") }
        }
        for folder in (environment["SSL_CERT_DIR"] ?? "").split(separator: ":").map(String.init) where !folder.isEmpty && !isSystem(folder) {
            do { roots += try certificates(directory: folder) } catch { problems.append("SSL_CERT_DIR: \(error.message)") }
        }
        return (roots, problems)
    }

    static func read(file path: String, what: String = "CA certificate") throws(FerryError) -> [NIOSSLCertificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FerryError.invalidRequest("The \(what) \(path) cannot be read.")
        }
        guard data.count <= 16 << 20, let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") else {
            throw FerryError.invalidRequest("\(path) is not a PEM certificate (no \"-----BEGIN CERTIFICATE-----\").")
        }
        do {
            return try NIOSSLCertificate.fromPEMBytes(Array(data))
        } catch {
            throw FerryError.invalidRequest("\(path) is not a PEM certificate: \(error).")
        }
    }

    static func isCertificateName(_ name: String) -> Bool {
        guard !name.hasPrefix(".") else { return false }
        let lower = name.lowercased()
        if lower.hasSuffix(".pem") || lower.hasSuffix(".crt") { return true }
        // c_rehash's links: eight hex digits, a dot, a number.
        let parts = lower.split(separator: ".")
        return parts.count == 2 && parts[0].count == 8 && parts[0].allSatisfy(\.isHexDigit) && parts[1].allSatisfy(\.isNumber)
    }

    static func stamp(_ path: String) -> TimeInterval {
        var info = stat()
        guard stat(path, &info) == 0 else { return -1 }
        return TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9 + TimeInterval(info.st_size) * 1e-12
    }
}
