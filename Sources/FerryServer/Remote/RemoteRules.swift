import FerryCore
import FerryKit
import Foundation

/// Who a listener beyond loopback answers, decided from a request's head alone (pure): the Host
/// must be one of the server's names or a listener's address (a page elsewhere whose name
/// resolves here, DNS rebinding, gets nothing); behind a reverse proxy, the proxy's
/// `X-Forwarded-*` count only when the peer is a trusted proxy.
package struct RemoteRules: Sendable, Hashable {
    /// Lower-case names and addresses (without port or brackets) the Host may name.
    package var hosts: Set<String>
    package var trustedProxies: [IPRange]
    /// A plain listener for a reverse proxy: only trusted proxies may connect.
    package var proxied: Bool

    package init(hosts: Set<String>, trustedProxies: [IPRange], proxied: Bool) {
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.trustedProxies = trustedProxies
        self.proxied = proxied
    }

    /// A request as these rules see it: whom it is from, for which host, whether over HTTPS.
    package struct Seen: Sendable, Hashable {
        package var client: String
        package var host: String
        package var secure: Bool
    }

    /// - Parameters:
    ///   - peer: the connection's address.
    ///   - tls: whether the connection itself is TLS.
    /// - Throws: `forbidden` for a peer that is not a trusted proxy on a proxied listener,
    ///   `forbidden_host` for a Host that is not this server's.
    package func see(peer: String, tls: Bool, host: String?, forwardedFor: String?, forwardedProto: String?, forwardedHost: String?) throws(FerryError) -> Seen {
        var seen = Seen(client: peer, host: host ?? "", secure: tls)
        let fromProxy = trustedProxies.contains { Self.range($0, contains: peer) }
        if proxied, !fromProxy {
            throw FerryError(.forbidden, "This listener answers the reverse proxy alone (--trusted-proxy); \(peer) is not one.")
        }
        if fromProxy {
            // The nearest address the proxies did not add themselves: the client's.
            let hops = (forwardedFor ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if let client = hops.reversed().first(where: { hop in !trustedProxies.contains { Self.range($0, contains: hop) } }) ?? hops.first {
                seen.client = client
            }
            if let proto = forwardedProto?.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).lowercased() {
                seen.secure = proto == "https"
            }
            if let forwarded = forwardedHost?.split(separator: ",").first?.trimmingCharacters(in: .whitespaces), !forwarded.isEmpty {
                seen.host = forwarded
            }
        }
        guard let name = Self.hostName(seen.host), hosts.contains(name) else {
            throw FerryError(
                .forbiddenHost,
                "The Host header must name this server (\(hosts.sorted().prefix(6).joined(separator: ", "))); got '\(seen.host.prefix(100))'. Add a name with --server-name."
            )
        }
        return seen
    }

    /// Whether a state-changing request's Origin is this request's own site.
    package func sameOrigin(_ origin: String, as seen: Seen) -> Bool {
        origin.lowercased() == "\(seen.secure ? "https" : "http")://\(seen.host.lowercased())"
            || (seen.secure && origin.lowercased() == "https://\(seen.host.lowercased()):443")
    }

    /// `192.168.1.0/24`, `10.0.0.1`, `fd00::/8`: a `--trusted-proxy`.
    /// - Throws: `invalid_request` for anything else.
    package static func range(_ text: String) throws(FerryError) -> IPRange {
        if let range = IPRange(addressOrRange: text) { return range }
        guard let address = text.split(separator: "/", maxSplits: 1).first, IPRange.bytes(String(address)) != nil else {
            throw FerryError.invalidRequest("'\(text.prefix(60))' is not an address or CIDR range (like 192.168.1.0/24 or ::1).")
        }
        throw FerryError.invalidRequest("'\(text.prefix(60))' has a prefix length out of range.")
    }

    /// Whether the address is in the range; an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, as
    /// a dual-stack socket reports an IPv4 peer) counts as its IPv4 one.
    package static func range(_ range: IPRange, contains address: String) -> Bool {
        let lower = address.lowercased()
        if lower.hasPrefix("::ffff:"), IPRange.bytes(String(lower.dropFirst(7)))?.count == 4, range.contains(String(lower.dropFirst(7))) {
            return true
        }
        return range.contains(address)
    }

    /// `nas.local:8443` → `nas.local`, `[fe80::1]:8443` → `fe80::1`; nil for anything that is
    /// not a host name or address.
    package static func hostName(_ authority: String) -> String? {
        var host = Substring(authority.lowercased())
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: end)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && Int(rest.dropFirst()) != nil) else { return nil }
            return String(host[host.index(after: host.startIndex)..<end])
        }
        if let colon = host.lastIndex(of: ":") {
            guard Int(host[host.index(after: colon)...]) != nil else { return nil }
            host = host[..<colon]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else { return nil }
        return String(host)
    }
}
