import Foundation

/// This machine's names and interface addresses: what a certificate of Ferry's names, what a
/// listener on every address may be reached by, and what `ferry remote` offers a phone.
package enum MachineAddresses {
    /// Every address of every interface that is up (loopback too), IPv6 without zones.
    package static func all() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let address = entry.pointee.ifa_addr, entry.pointee.ifa_flags & UInt32(IFF_UP) != 0 else { continue }
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            addresses.append(String(name.split(separator: "%").first ?? ""))
        }
        return Array(Set(addresses)).sorted()
    }

    /// The addresses a device elsewhere may use: all but loopback and link-local.
    package static func reachable() -> [String] {
        all().filter { !$0.hasPrefix("127.") && $0 != "::1" && !$0.lowercased().hasPrefix("fe80:") }
    }

    /// The machine's host name and, when it has no domain, its mDNS name (`NAME.local`).
    package static func names() -> [String] {
        let host = ProcessInfo.processInfo.hostName.lowercased()
        guard !host.isEmpty, RemoteRules.hostName(host) != nil else { return [] }
        return host.contains(".") ? [host] : [host, host + ".local"]
    }
}
