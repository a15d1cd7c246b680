import FerryModel
import Foundation
import NIOSSL

/// A client certificate and its private key, for servers that ask who the client is (mutual
/// TLS): read from PEM files, the key decrypted with its passphrase, and checked to be the
/// certificate's before anything is journaled or sent.
package struct ClientIdentity: Sendable {
    package var chain: [NIOSSLCertificate]
    package var key: NIOSSLPrivateKey

    /// - Throws: `invalid_request` naming the file and what is wrong with it.
    static func read(certificate certificatePath: String, key keyPath: String, passphrase: String?) throws(FerryError) -> ClientIdentity {
        let chain = try TLSTrust.read(file: certificatePath, what: "client certificate")
        guard let data = FileManager.default.contents(atPath: keyPath) else {
            throw FerryError.invalidRequest("The private key \(keyPath) cannot be read.")
        }
        guard data.count <= 1 << 20, let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN"), text.contains("PRIVATE KEY-----") else {
            throw FerryError.invalidRequest("\(keyPath) is not a PEM private key (no \"-----BEGIN … PRIVATE KEY-----\").")
        }
        let encrypted = text.contains("ENCRYPTED")
        if encrypted, passphrase == nil {
            throw FerryError.invalidRequest(
                "The private key \(keyPath) is encrypted: give its passphrase (--private-key-passphrase-file FILE or --private-key-passphrase-stdin)."
            )
        }
        let key: NIOSSLPrivateKey
        do {
            if let passphrase {
                key = try NIOSSLPrivateKey(bytes: Array(data), format: .pem) { (setter: ([UInt8]) -> Void) in setter(Array(passphrase.utf8)) }
            } else {
                key = try NIOSSLPrivateKey(bytes: Array(data), format: .pem)
            }
        } catch {
            throw FerryError.invalidRequest(
                encrypted ? "The passphrase does not open the private key \(keyPath)." : "\(keyPath) is not a private key NIOSSL can read: \(error)."
            )
        }
        let identity = ClientIdentity(chain: chain, key: key)
        try identity.checkPair(certificatePath: certificatePath, keyPath: keyPath)
        return identity
    }

    /// The key must be the certificate's: BoringSSL refuses a mismatched pair when a context is
    /// made from them (its check, not one of ours).
    private func checkPair(certificatePath: String, keyPath: String) throws(FerryError) {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateChain = chain.map { .certificate($0) }
        configuration.privateKey = .privateKey(key)
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw FerryError.invalidRequest("The private key \(keyPath) is not the key of the certificate \(certificatePath).")
        }
    }
}
