import FerryModel
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import X509

/// After a handshake failed on the server's certificate: a second handshake that checks
/// nothing, only to read the certificate and tell the user in one line whose it is and what is
/// wrong with it (expired, for other names, signed by an authority this machine does not trust)
/// and what to do, instead of BoringSSL's error number.
enum CertificateProbe {
    /// True for a handshake refused on the certificate (not one cut by the network).
    static func isCertificateFailure(_ error: any Error) -> Bool {
        guard error is NIOSSLError || error is NIOSSLExtraError else { return false }
        let text = String(describing: error).lowercased()
        return text.contains("certificate") || text.contains("hostname")
    }

    /// The refusal, explained; nil when the probe could not read the certificate (the plain
    /// message stays).
    static func explain(_ url: URL, base: TLSConfiguration?, now: Date = Date()) async -> CertificateRefusal? {
        guard let host = url.host, url.scheme?.lowercased() == "https" else { return nil }
        let port = url.port ?? 443
        guard let leaf = await leafCertificate(host: host, port: port, base: base) else { return nil }
        return describe(leaf, host: host, now: now)
    }

    static func describe(_ certificate: Certificate, host: String, now: Date) -> CertificateRefusal {
        let subject = name(certificate.subject)
        let whose = "\(host)'s certificate (\(subject))"
        let advice = "If you trust it, give its authority's certificate with --ca-certificate FILE."
        if now > certificate.notValidAfter {
            return CertificateRefusal(message: "\(whose) expired on \(day(certificate.notValidAfter)); Ferry does not download from it. The server must renew it.")
        }
        if now < certificate.notValidBefore {
            return CertificateRefusal(
                message: "\(whose) is not valid until \(day(certificate.notValidBefore)); Ferry does not download from it. Is this machine's clock right?"
            )
        }
        let names = serverNames(certificate)
        if !names.isEmpty, !names.contains(where: { matches($0, host: host) }) {
            return CertificateRefusal(
                message: "\(whose) is for \(names.prefix(5).joined(separator: ", ")), not \(host); Ferry does not download from it. Use one of those names in the URL."
            )
        }
        if certificate.issuer == certificate.subject {
            return CertificateRefusal(message: "\(whose) is self-signed, and this machine does not trust it; Ferry does not download from it. \(advice)")
        }
        return CertificateRefusal(
            message: "\(whose) is signed by \(name(certificate.issuer)), an authority this machine does not trust; Ferry does not download from it. \(advice)"
        )
    }

    /// `“CN=localhost, O=Lab”`, the common name first when there is one.
    static func name(_ name: DistinguishedName) -> String {
        "“\(String(describing: name))”"
    }

    static func serverNames(_ certificate: Certificate) -> [String] {
        guard let names = try? certificate.extensions.subjectAlternativeNames else { return [] }
        return names.compactMap { name in
            switch name {
            case .dnsName(let dns): return dns
            case .ipAddress(let octets):
                let bytes = Array(octets.bytes)
                if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
                if bytes.count == 16 {
                    return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":")
                }
                return nil
            default: return nil
            }
        }
    }

    /// A name of the certificate against the URL's host: exact, or a wildcard's one label.
    static func matches(_ name: String, host: String) -> Bool {
        let name = name.lowercased(), host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if name == host { return true }
        guard name.hasPrefix("*."), let dot = host.firstIndex(of: ".") else { return false }
        return host[dot...] == name.dropFirst()
    }

    static func day(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day())
    }

    /// The server's certificate, read by a handshake that verifies nothing (nothing is sent).
    static func leafCertificate(host: String, port: Int, base: TLSConfiguration?) async -> Certificate? {
        var configuration = base ?? TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        let serverName = host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: serverName))
                }
            }
        guard let channel = try? await bootstrap.connect(host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port).get() else { return nil }
        defer { channel.close(promise: nil) }
        // The handshake runs on connect; its end is seen by a read of the peer's certificate.
        for _ in 0..<100 {
            let peer = try? await channel.eventLoop.submit { () -> [UInt8]? in
                let handler = try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
                return try handler.peerCertificate?.toDERBytes()
            }.get()
            if let peer = peer ?? nil { return try? Certificate(derEncoded: peer) }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }
}

/// A server's certificate refused, in words (``CertificateProbe``).
struct CertificateRefusal: Error {
    var message: String
}
