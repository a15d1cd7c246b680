import FerryCore
import FerryKit
import FerryListening
import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

/// The sync API's own listener (`ferry serve --sync-listen ADDRESS:PORT`): phones are not on
/// loopback, so it may listen on another address, and answers the gpodder.net paths and nothing
/// else; the rest of the API stays on loopback. HTTPS when given a certificate and its key.
package struct SyncListener: Sendable {
    package var host: String
    package var port: Int
    /// PEM files; both or neither.
    package var certificate: String?
    package var key: String?

    package init(host: String, port: Int, certificate: String? = nil, key: String? = nil) {
        self.host = host
        self.port = port
        self.certificate = certificate
        self.key = key
    }

    /// The listener `sync.json` keeps for every start (``ListenerSettings/Sync``).
    /// - Throws: `invalid_request` for an address that is not one.
    package init(_ setting: ListenerSettings.Sync) throws(FerryError) {
        do {
            let (host, port) = try Self.parse(setting.listen)
            self.init(host: host, port: port, certificate: setting.certificate, key: setting.privateKey)
        } catch let error as FerryError {
            throw error
        } catch {
            throw FerryError.invalidRequest("\(error)")
        }
    }

    /// `8080` (loopback), `0.0.0.0:8080`, `192.168.1.5:8080`, `[::]:8080`.
    /// - Throws: `invalid_request` for anything else.
    package static func parse(_ text: String) throws -> (host: String, port: Int) {
        var host = "127.0.0.1", portText = Substring(text)
        if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        }
        guard let port = Int(portText), (0...65535).contains(port), !host.isEmpty, !host.contains("/") else {
            throw FerryError.invalidRequest("--sync-listen takes PORT or ADDRESS:PORT (e.g. 8080, 0.0.0.0:8080, [::]:8080); got '\(text)'.")
        }
        return (host, port)
    }

    var scheme: String { certificate == nil ? "http" : "https" }

    func application(sync: SyncLibrary, auth: SyncAuthenticator, address: DaemonAddress, logger: Logger) throws -> any Service {
        let router = Router(context: FerryRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        SyncRoutes(sync: sync, auth: auth, subscribeInBackground: { Task { await sync.subscribePending() } }, scheme: scheme).register(on: router)
        let scheme = scheme
        let onRunning: @Sendable (any Channel) async -> Void = { channel in
            let port = channel.localAddress?.port ?? 0
            let host = channel.localAddress?.ipAddress ?? "127.0.0.1"
            let url = "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
            address.set(url)
            logger.info("sync listening", metadata: ["sync.url": "\(url)"])
        }
        let configuration = ApplicationConfiguration(address: .hostname(host, port: port), serverName: "Ferry")
        if let certificate, let key {
            let tls: TLSConfiguration
            do {
                tls = TLSConfiguration.makeServerConfiguration(
                    certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
                    privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
                )
            } catch {
                throw FerryError.invalidRequest("Could not read the sync certificate \(certificate) or its key \(key) (PEM): \(error)")
            }
            return Application(
                router: router, server: try .tls(.http1(), tlsConfiguration: tls), configuration: configuration, onServerRunning: onRunning,
                logger: logger
            )
        }
        return Application(router: router, configuration: configuration, onServerRunning: onRunning, logger: logger)
    }
}
