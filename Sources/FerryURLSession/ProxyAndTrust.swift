import AsyncHTTPClient
import NIOSSL

/// The proxy of a session: its `connectionProxyDictionary` (CFNetwork's keys: `HTTPSProxy`,
/// `HTTPProxy` or `SOCKSProxy` with their ports and `…Enable` flags, credentials under
/// `kCFProxyUsernameKey`/`kCFProxyPasswordKey`), else the environment's
/// `https_proxy`/`http_proxy` (as curl and swift-corelibs-foundation read them, credentials in
/// the URL).
enum ProxySettings {
    /// The proxy as a URL (`http://user:password@host:port`, `socks5h://host:port`): what the
    /// daemon's `proxy` option takes.
    static func url(for configuration: URLSessionConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        if let dictionary = configuration.connectionProxyDictionary {
            func text(_ key: String) -> String? { (dictionary[key] as? String).flatMap { $0.isEmpty ? nil : $0 } }
            func number(_ key: String) -> Int? { (dictionary[key] as? Int) ?? (dictionary[key] as? NSNumber)?.intValue }
            for kind in ["HTTPS", "HTTP", "SOCKS"] where number(kind + "Enable") != 0 {
                guard let host = text(kind + "Proxy") else { continue }
                var url = URLComponents()
                url.scheme = kind == "SOCKS" ? "socks5h" : "http"
                url.host = host
                url.port = number(kind + "Port") ?? (kind == "SOCKS" ? 1080 : 8080)
                if kind != "SOCKS", let user = text("kCFProxyUsernameKey") {
                    url.user = user
                    url.password = text("kCFProxyPasswordKey") ?? ""
                }
                return url.url
            }
            return nil
        }
        for name in ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"] {
            if let value = environment[name], let url = URL(string: value.contains("://") ? value : "http://\(value)"), url.host != nil {
                return url
            }
        }
        return nil
    }

    static func proxy(for configuration: URLSessionConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment) -> HTTPClient.Configuration.Proxy? {
        guard let url = url(for: configuration, environment: environment), let host = url.host else { return nil }
        if url.scheme?.hasPrefix("socks") == true { return .socksServer(host: host, port: url.port ?? 1080) }
        let login = url.user.map {
            HTTPClient.Authorization.basic(username: $0.removingPercentEncoding ?? $0, password: url.password?.removingPercentEncoding ?? "")
        }
        return .server(host: host, port: url.port ?? 8080, authorization: login)
    }
}

/// The roots a session trusts: the system's, plus `SSL_CERT_FILE` when it is set (as OpenSSL
/// and curl honour it).
enum TrustSettings {
    static func clientConfiguration(environment: [String: String] = ProcessInfo.processInfo.environment) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let file = environment["SSL_CERT_FILE"], FileManager.default.isReadableFile(atPath: file) {
            tls.additionalTrustRoots = [.file(file)]
        }
        return tls
    }
}
