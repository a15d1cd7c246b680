import AsyncHTTPClient
import NIOSSL

/// The proxy of a session: its `connectionProxyDictionary`, else the environment's
/// `https_proxy`/`http_proxy` (as curl and swift-corelibs-foundation read them).
enum ProxySettings {
    static func proxy(for configuration: URLSessionConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment) -> HTTPClient.Configuration.Proxy? {
        if let dictionary = configuration.connectionProxyDictionary {
            for (hostKey, portKey) in [("HTTPSProxy", "HTTPSPort"), ("HTTPProxy", "HTTPPort")] {
                if let host = dictionary[hostKey] as? String, !host.isEmpty {
                    let port = (dictionary[portKey] as? Int) ?? (dictionary[portKey] as? NSNumber)?.intValue ?? 8080
                    return .server(host: host, port: port)
                }
            }
            return nil
        }
        for name in ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"] {
            if let value = environment[name], let url = URL(string: value.contains("://") ? value : "http://\(value)"), let host = url.host {
                return .server(host: host, port: url.port ?? 8080)
            }
        }
        return nil
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
