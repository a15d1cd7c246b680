#if canImport(Glibc)
import Glibc
#endif

/// An address range in CIDR notation, IPv4 or IPv6: `no_proxy`'s ranges, and the reverse
/// proxies a listener beyond loopback trusts.
package struct IPRange: Sendable, Hashable {
    let network: [UInt8]
    let prefix: Int

    /// `10.0.0.0/8`, `fd00::/8`; nil for anything else.
    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let bytes = Self.bytes(String(parts[0])), let prefix = Int(parts[1]), (0...bytes.count * 8).contains(prefix) else {
            return nil
        }
        self.init(network: bytes, prefix: prefix)
    }

    /// A range, or one address (`10.0.0.1`: a range of it alone).
    package init?(addressOrRange text: String) {
        if text.contains("/") {
            self.init(text)
        } else {
            guard let bytes = Self.bytes(text) else { return nil }
            self.init(network: bytes, prefix: bytes.count * 8)
        }
    }

    private init(network: [UInt8], prefix: Int) {
        self.network = network
        self.prefix = prefix
    }

    package func contains(_ address: String) -> Bool {
        guard let bytes = Self.bytes(address), bytes.count == network.count else { return false }
        for bit in 0..<prefix where (bytes[bit / 8] ^ network[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 { return false }
        return true
    }

    /// The address's bytes (4 or 16), or nil when it is not a numeric address.
    package static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
