import AsyncHTTPClient
import FerryModel
import Foundation
import NIOSSL
import Synchronization

/// Every outbound client of the daemon, and which one a URL goes through: direct, or through a
/// proxy (a transfer's or session's `proxy` / `noProxy`, else the environment's, see
/// ``ProxyEnvironment``). AsyncHTTPClient sets a proxy per client, not per request, so there is
/// one client per proxy in use, made on first use from the same configuration as the direct one.
/// An HTTP proxy is asked to `CONNECT` for https and http alike, with Basic credentials when its
/// URL has them; a SOCKS5 proxy resolves the server's name itself.
package final class HTTPClients: Sendable {
    /// The client for direct connections; its owner shuts it down.
    package let direct: HTTPClient
    package let environment: ProxyEnvironment
    let configuration: HTTPClient.Configuration
    private let proxied = Mutex<[ProxyURL: HTTPClient]>([:])
    /// Direct connections that speak HTTP/1.1 only (``client(for:options:http1:)``), made on first use.
    private let http1Only = Mutex<HTTPClient?>(nil)
    /// The daemon's own options (`ferry session set '*' --proxy …`), for requests that belong to
    /// no transfer: catalog searches and feed refreshes.
    private let daemonOptions = Mutex(TransferOptions())
    /// The authorities options add to the clients' trust.
    package let trust = TLSTrust()
    /// Connections to servers whose key is pinned (`pinnedPublicKey`).
    package let tunnels = PinnedTunnels()

    /// - Parameters:
    ///   - direct: the client for direct connections.
    ///   - configuration: what clients for proxies are made from (the direct one's, ideally).
    ///   - environment: the daemon's proxy variables.
    package init(
        direct: HTTPClient, configuration: HTTPClient.Configuration = TransferEngine.httpClientConfiguration(),
        environment: ProxyEnvironment = ProxyEnvironment()
    ) {
        self.direct = direct
        self.configuration = configuration
        self.environment = environment
    }

    /// Takes the daemon's options (its proxy or `noProxy`) for requests of no transfer.
    package func setDaemonOptions(_ options: TransferOptions) {
        daemonOptions.withLock { $0 = options }
    }

    /// The proxy `url` goes through under `options` (by default the daemon's), or nil for a
    /// direct connection.
    package func proxy(for url: URL, options: TransferOptions? = nil) -> ProxyURL? {
        let options = options ?? daemonOptions.withLock { $0 }
        if options.noProxy == true { return nil }
        if let text = options.proxy, let proxy = try? ProxyURL(parsing: text) { return proxy }
        return environment.proxy(for: url)
    }

    /// The client to request `url` with.
    /// - Parameter http1: HTTP/1.1 even where the server offers HTTP/2 (a large file's bytes:
    ///   ``TransferWorker/prefersHTTP1(_:)``).
    package func client(for url: URL, options: TransferOptions? = nil, http1: Bool = false) -> HTTPClient {
        guard let proxy = proxy(for: url, options: options) else {
            guard http1 else { return direct }
            return http1Only.withLock { client in
                if let client { return client }
                var configuration = configuration
                configuration.httpVersion = .http1Only
                let made = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
                client = made
                return made
            }
        }
        return proxied.withLock { clients in
            if let client = clients[proxy] { return client }
            var configuration = configuration
            switch proxy.kind {
            case .http:
                let authorization = proxy.user.map { HTTPClient.Authorization.basic(username: $0, password: proxy.password ?? "") }
                configuration.proxy = .server(host: proxy.host, port: proxy.port, authorization: authorization)
            case .socks5:
                configuration.proxy = .socksServer(host: proxy.host, port: proxy.port)
            }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[proxy] = client
            return client
        }
    }

    /// The clients' own TLS configuration: the system's roots, with the environment's
    /// (`SSL_CERT_FILE`, `SSL_CERT_DIR`) when it names any; nil for NIOSSL's defaults.
    package var baseTLS: TLSConfiguration? { configuration.tlsConfiguration }

    /// The TLS configuration a request under `options` needs: nil for the client's own (the
    /// system's roots and the environment's), else with the options' authorities added.
    /// - Throws: `invalid_request` when a CA file or folder cannot be read (fails the attempt at once).
    package func tlsConfiguration(for options: TransferOptions) throws(FerryError) -> TLSConfiguration? {
        try trust.configuration(for: options, base: configuration.tlsConfiguration)
    }

    /// The tunnel a request to `url` goes through when `options` pin the server's key (nil: none,
    /// or `url` is not https). A pinned download connects directly: a proxy's CONNECT would
    /// need the tunnel's own HTTP client.
    /// - Parameter tls: the request's TLS configuration (``tlsConfiguration(for:)``), nil for the clients' own.
    /// - Throws: `invalid_request` for a malformed pin, or a proxy set for `url`.
    package func pinnedTunnel(for url: URL, options: TransferOptions, tls: TLSConfiguration?) async throws -> PinnedTunnel? {
        guard let text = options.pinnedPublicKey, url.scheme?.lowercased() == "https" else { return nil }
        let pins = try PublicKeyPins(parsing: text)
        if let proxy = proxy(for: url, options: options) {
            throw FerryError.invalidRequest(
                "A download with a pinned public key connects directly, and \(url.host ?? "this host") goes through the proxy \(proxy.redacted); give --no-proxy to download it directly.")
        }
        let tls = tls ?? baseTLS ?? TransferEngine.clientTLS()
        let settings = [options.caCertificate, options.caDirectory, options.clientCertificate, options.clientKey, options.clientKeyPassphrase]
            .map { $0 ?? "" }.joined(separator: "\u{0}")
        return try await tunnels.tunnel(to: url, pins: pins, tls: tls, insecure: options.insecure == true, settings: settings)
    }

    /// Shuts down the clients made for proxies (the direct one belongs to whoever made it).
    package func shutdownProxied() async {
        let clients = proxied.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        } + http1Only.withLock { client in
            defer { client = nil }
            return client.map { [$0] } ?? []
        }
        for client in clients { try? await client.shutdown() }
        await tunnels.close()
    }
}
