import FerryModel
import Foundation

/// The proxies the daemon's environment names, as curl reads them: `http_proxy` for http URLs,
/// `https_proxy` for https, `all_proxy` for both when those are unset (each also in capitals,
/// the lower-case one winning), and `no_proxy`: hosts reached directly, a comma-separated list
/// of names (matching the name and every name below it: `example.com`, `.example.com`),
/// addresses, address ranges (`10.0.0.0/8`, `fd00::/8`), optionally with `:port`, or `*`.
package struct ProxyEnvironment: Sendable, Hashable, CustomStringConvertible {
    package var http: ProxyURL?
    package var https: ProxyURL?
    package var all: ProxyURL?
    package var noProxy: [String]

    package init(http: ProxyURL? = nil, https: ProxyURL? = nil, all: ProxyURL? = nil, noProxy: [String] = []) {
        self.http = http
        self.https = https
        self.all = all
        self.noProxy = noProxy
    }

    /// Reads the variables.
    /// - Throws: `invalid_request` naming the variable whose proxy URL Ferry cannot use.
    package init(environment: [String: String]) throws(FerryError) {
        func proxy(_ name: String) throws(FerryError) -> ProxyURL? {
            guard let text = environment[name] ?? environment[name.uppercased()], !text.isEmpty else { return nil }
            do {
                return try ProxyURL(parsing: text)
            } catch {
                throw FerryError.invalidRequest("\(name): \(error.message)")
            }
        }
        http = try proxy("http_proxy")
        https = try proxy("https_proxy")
        all = try proxy("all_proxy")
        noProxy = (environment["no_proxy"] ?? environment["NO_PROXY"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    }

    package var isEmpty: Bool { http == nil && https == nil && all == nil }

    /// `http: http://ann:<redacted>@proxy:3128, no_proxy: localhost`: passwords hidden, for logs.
    package var description: String {
        let named = [("http", http), ("https", https), ("all", all)].compactMap { name, proxy in proxy.map { "\(name): \($0.redacted)" } }
        return (named + (noProxy.isEmpty ? [] : ["no_proxy: \(noProxy.joined(separator: ","))"])).joined(separator: ", ")
    }

    /// The proxy for `url`, or nil to connect directly.
    package func proxy(for url: URL) -> ProxyURL? {
        let scheme = url.scheme?.lowercased()
        guard let proxy = (scheme == "https" ? https : scheme == "http" ? http : nil) ?? all, let host = url.host else { return nil }
        return bypasses(host: host, port: url.port ?? (scheme == "https" ? 443 : 80)) ? nil : proxy
    }

    /// True when `no_proxy` names this host (or its domain, or a range holding its address).
    package func bypasses(host rawHost: String, port: Int) -> Bool {
        let host = rawHost.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        for entry in noProxy {
            if entry == "*" { return true }
            var pattern = entry
            if let colon = pattern.lastIndex(of: ":"), !pattern.hasPrefix("["), pattern.filter({ $0 == ":" }).count == 1 {
                guard Int(pattern[pattern.index(after: colon)...]) == port else { continue }
                pattern = String(pattern[..<colon])
            }
            pattern = pattern.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            if pattern.contains("/") {
                if IPRange(pattern)?.contains(host) == true { return true }
                continue
            }
            let name = pattern.hasPrefix(".") ? String(pattern.dropFirst()) : pattern
            if host == name || host.hasSuffix("." + name) { return true }
        }
        return false
    }
}
