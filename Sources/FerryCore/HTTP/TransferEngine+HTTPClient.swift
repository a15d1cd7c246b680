import AsyncHTTPClient
import NIOCore
import NIOPosix
import NIOSSL

/// The outbound HTTP client as transfers need it.
extension TransferEngine {
    /// The HTTP client Ferry uses: no automatic redirects (Ferry checks each hop), no
    /// decompression (bytes on disk are the bytes served), connect and idle-read timeouts, and
    /// no silent retrying of a refused connection: the engine's retry policy (with its backoff
    /// and events) decides, and the catalog reports "connection refused" at once instead of a
    /// timeout at its deadline.
    package static func makeHTTPClient(connectTimeout: Duration = .seconds(15), readTimeout: Duration = .seconds(60)) -> HTTPClient {
        HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: httpClientConfiguration(connectTimeout: connectTimeout, readTimeout: readTimeout)
        )
    }

    /// The configuration of ``makeHTTPClient(connectTimeout:readTimeout:)``, for tests that
    /// add to it (a test certificate).
    package static func httpClientConfiguration(connectTimeout: Duration = .seconds(15), readTimeout: Duration = .seconds(60)) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .init(connectTimeout), read: .init(readTimeout)),
            decompression: .disabled
        )
        configuration.httpVersion = .automatic
        configuration.connectionPool.retryConnectionEstablishment = false
        // AsyncHTTPClient keeps 8 connections per host by default: with more transfers from one
        // host running at once, the rest waited for a connection (1,000 files, 16 at a time).
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        // AsyncHTTPClient's only access to a new connection's channel (named for debugging).
        configuration.http1_1ConnectionDebugInitializer = { useLargeReads($0) }
        configuration.http2ConnectionDebugInitializer = { useLargeReads($0) }
        configuration.tlsConfiguration = clientTLS()
        return configuration
    }

    /// TLS as every request of Ferry's speaks it: 1.2 or newer (NIOSSL would accept 1.0 and 1.1,
    /// which curl and browsers refuse), trusting the system's roots and the environment's
    /// SSL_CERT_FILE / SSL_CERT_DIR besides.
    package static func clientTLS() -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        let environment = TLSTrust.environment
        if !environment.roots.isEmpty { tls.additionalTrustRoots = [.certificates(environment.roots)] }
        return tls
    }

    /// The most a connection reads from its socket at once.
    package static let connectionReadSize = 256 * 1024

    /// NIO reads a socket 64 KiB at a time, up to 4 times each time AsyncHTTPClient asks for
    /// more of a body; one read of up to 256 KiB instead makes a 1 GiB download 2–11 % faster
    /// with 10 % less CPU, for 0.5 MiB more memory at its peak
    /// (bench/reports/2026-11-large-download.md, "Reads of up to 256 KiB"). The buffer grows from
    /// 2 KiB only while reads fill it, as NIO's does.
    static func useLargeReads(_ channel: any Channel) -> EventLoopFuture<Void> {
        let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: connectionReadSize)
        return channel.setOption(ChannelOptions.recvAllocator, value: allocator).flatMap {
            channel.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
        }
    }
}
