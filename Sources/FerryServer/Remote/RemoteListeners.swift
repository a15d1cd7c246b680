import FerryCore
import FerryKit
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The listeners beyond loopback (``RemoteSettings``): HTTPS with the user's certificate or one
/// of Ferry's own CA, or plain HTTP for a trusted reverse proxy. Each serves the web app and the
/// API under ``RemoteGuardMiddleware``.
package final class RemoteListeners: Sendable {
    /// One `--listen`.
    package struct Address: Sendable, Hashable {
        package var host: String
        package var port: Int
        /// HTTPS; false: plain HTTP for a reverse proxy.
        package var tls: Bool

        /// `8443`, `0.0.0.0:8443`, `https://[::]:8443` (HTTPS), `http://127.0.0.1:8080` (plain).
        /// - Throws: `invalid_request` for anything else.
        package init(_ text: String) throws(FerryError) {
            var rest = Substring(text)
            tls = true
            if rest.lowercased().hasPrefix("https://") {
                rest = rest.dropFirst(8)
            } else if rest.lowercased().hasPrefix("http://") {
                rest = rest.dropFirst(7)
                tls = false
            }
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            host = "0.0.0.0"
            var portText = rest
            if let colon = rest.lastIndex(of: ":") {
                host = String(rest[..<colon])
                portText = rest[rest.index(after: colon)...]
                if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            }
            guard let port = Int(portText), (0...65535).contains(port), IPRange.bytes(host) != nil else {
                throw FerryError.invalidRequest(
                    "--listen takes PORT or ADDRESS:PORT, with http:// for a plain listener behind a proxy (e.g. 8443, 0.0.0.0:8443, [::]:8443, http://127.0.0.1:8080); got '\(text.prefix(80))'."
                )
            }
            self.port = port
        }

        var everyAddress: Bool { host == "0.0.0.0" || host == "::" }
    }

    package let settings: RemoteSettings
    package let addresses: [Address]
    let rules: [Address: RemoteRules]
    /// The certificate of the TLS listeners; nil when there are none.
    package let certificate: CertificateSource?
    /// Ferry's own CA when it made the certificate.
    package let authority: LocalAuthority?
    /// The URLs bound so far (a port 0 is known once bound).
    let bound = Mutex<[Address: Int]>([:])

    /// Checks the settings and makes or reads the certificate.
    /// - Throws: `invalid_request` naming what is wrong.
    package init(settings: RemoteSettings, state: URL, logger: Logger) throws {
        let (addresses, proxies) = try Self.check(settings)
        let names = settings.serverNames.isEmpty ? MachineAddresses.names() : settings.serverNames.map { $0.lowercased() }
        let machine = MachineAddresses.all()
        var rules: [Address: RemoteRules] = [:]
        for address in addresses {
            let reachable = address.everyAddress ? machine : [address.host]
            rules[address] = RemoteRules(hosts: Set(names + reachable), trustedProxies: proxies, proxied: !address.tls)
        }
        self.settings = settings
        self.addresses = addresses
        self.rules = rules
        guard addresses.contains(where: \.tls) else {
            (certificate, authority) = (nil, nil)
            return
        }
        if let certificate = settings.certificate, let key = settings.privateKey {
            self.certificate = try CertificateSource(certificate: certificate, key: key)
            authority = nil
            return
        }
        let ipAddresses = Set(addresses.flatMap { $0.everyAddress ? machine : [$0.host] })
        let authority = LocalAuthority(state: state)
        if try authority.prepare(names: names.filter { IPRange.bytes($0) == nil }, addresses: Array(ipAddresses)) {
            logger.notice("made Ferry's certificate authority: devices trust it once (`ferry remote`)", metadata: ["tls.ca": "\(authority.caCertificatePath)"])
        }
        self.certificate = try CertificateSource(certificate: authority.certificatePath, key: authority.keyPath)
        self.authority = authority
    }

    /// The settings' addresses and proxies, checked (files aside).
    /// - Throws: `invalid_request` naming what is wrong.
    package static func check(_ settings: RemoteSettings) throws(FerryError) -> (addresses: [Address], proxies: [IPRange]) {
        guard !settings.listen.isEmpty else { throw FerryError.invalidRequest("No --listen address for the listeners beyond loopback.") }
        let addresses = try settings.listen.map { text throws(FerryError) in try Address(text) }
        let proxies = try settings.trustedProxies.map { text throws(FerryError) in try RemoteRules.range(text) }
        if addresses.contains(where: { !$0.tls }), proxies.isEmpty {
            throw FerryError.invalidRequest(
                "A plain HTTP listener is for a reverse proxy in front of Ferry: give the proxy's address with --trusted-proxy (e.g. --trusted-proxy 127.0.0.1)."
            )
        }
        guard (settings.certificate == nil) == (settings.privateKey == nil) else {
            throw FerryError.invalidRequest("--certificate and --private-key go together.")
        }
        for name in settings.serverNames where RemoteRules.hostName(name) != name.lowercased() {
            throw FerryError.invalidRequest("'\(name.prefix(80))' is not a host name for --server-name (like nas.local or ferry.example.org).")
        }
        return (addresses, proxies)
    }

    /// One application per address, serving `router(rules, tls)`.
    func services(router: (RemoteRules, Bool) -> Router<FerryRequestContext>, logger: Logger) throws -> [any Service] {
        try addresses.map { address in
            let configuration = ApplicationConfiguration(address: .hostname(address.host, port: address.port), serverName: "Ferry")
            let onRunning: @Sendable (any Channel) async -> Void = { [self] channel in
                let port = channel.localAddress?.port ?? address.port
                self.bound.withLock { $0[address] = port }
                logger.info("listening beyond loopback", metadata: ["remote.address": "\(address.host):\(port)", "remote.tls": "\(address.tls)"])
            }
            let routes = router(rules[address]!, address.tls)
            if address.tls, let certificate {
                return Application(
                    router: routes, server: try .secure(tls: certificate.serverConfiguration()), configuration: configuration,
                    onServerRunning: onRunning, logger: logger
                )
            }
            return Application(router: routes, configuration: configuration, onServerRunning: onRunning, logger: logger)
        }
    }

    /// What `ferry remote` shows.
    package func status() -> RemoteStatus {
        let ports = bound.withLock { $0 }
        let names = settings.serverNames.isEmpty ? MachineAddresses.names() : settings.serverNames
        var urls: [String] = []
        for address in addresses {
            guard let port = ports[address] else { continue }
            let scheme = address.tls ? "https" : "http"
            let hosts = address.everyAddress ? names + MachineAddresses.reachable() : [address.host]
            for host in hosts {
                let shown = host.contains(":") ? "[\(host)]" : host
                let url = (address.tls && port == 443) || (!address.tls && port == 80) ? "\(scheme)://\(shown)" : "\(scheme)://\(shown):\(port)"
                if !urls.contains(url) { urls.append(url) }
            }
        }
        let caURL = authority != nil ? urls.first { $0.hasPrefix("https://") }.map { $0 + "/ca.pem" } : nil
        return RemoteStatus(
            settings: settings, urls: urls, certificateFingerprint: certificate?.fingerprint,
            caFingerprint: authority.flatMap { CertificateSource.fingerprint(ofPEMFile: $0.caCertificatePath) }, caURL: caURL
        )
    }
}
