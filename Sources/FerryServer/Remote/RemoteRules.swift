import FerryKit
import Foundation

/// Who a listener beyond loopback answers, decided from a request's head alone (pure): the Host
/// must be one of the server's names or a listener's address (a page elsewhere whose name
/// resolves here, DNS rebinding, gets nothing); behind a reverse proxy, the proxy's
/// `X-Forwarded-*` count only when the peer is a trusted proxy.
package struct RemoteRules: Sendable, Hashable {
    /// Lower-case names and addresses (without port or brackets) the Host may name.
    package var hosts: Set<String>
    package var trustedProxies: [AddressRange]
    /// A plain listener for a reverse proxy: only trusted proxies may connect.
    package var proxied: Bool

    package init(hosts: Set<String>, trustedProxies: [AddressRange], proxied: Bool) {
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
        let fromProxy = trustedProxies.contains { $0.contains(peer) }
        if proxied, !fromProxy {
            throw FerryError(.forbidden, "This listener answers the reverse proxy alone (--trusted-proxy); \(peer) is not one.")
        }
        if fromProxy {
            // The nearest address the proxies did not add themselves: the client's.
            let hops = (forwardedFor ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if let client = hops.reversed().first(where: { hop in !trustedProxies.contains { $0.contains(hop) } }) ?? hops.first {
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

/// An address or CIDR range: `192.168.1.0/24`, `10.0.0.1`, `fd00::/8`.
package struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    let bytes: [UInt8]
    let prefix: Int

    /// - Throws: `invalid_request` for anything else.
    package init(_ text: String) throws(FerryError) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let bytes = IPAddressText.bytes(first) else {
            throw FerryError.invalidRequest("'\(text.prefix(60))' is not an address or CIDR range (like 192.168.1.0/24 or ::1).")
        }
        let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
        guard let prefix, (0...(bytes.count * 8)).contains(prefix) else {
            throw FerryError.invalidRequest("'\(text.prefix(60))' has a prefix length out of range.")
        }
        self.bytes = bytes
        self.prefix = prefix
    }

    /// Whether the address is in the range (an IPv4-mapped IPv6 address counts as its IPv4 one).
    package func contains(_ address: String) -> Bool {
        guard var other = IPAddressText.bytes(address) else { return false }
        if other.count == 16, bytes.count == 4, other.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] { other = Array(other.suffix(4)) }
        guard other.count == bytes.count else { return false }
        for bit in 0..<prefix where (other[bit / 8] ^ bytes[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 { return false }
        return true
    }

    package var description: String {
        let text = bytes.count == 4 ? bytes.map(String.init).joined(separator: ".") : stride(from: 0, to: 16, by: 2).map { String(format: "%x", Int(bytes[$0]) << 8 | Int(bytes[$0 + 1])) }.joined(separator: ":")
        return "\(text)/\(prefix)"
    }
}
