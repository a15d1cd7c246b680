import Crypto
import FerryModel
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// TLS to one server whose public key is pinned (``PublicKeyPins``), for AsyncHTTPClient, which
/// has no way to look at a server's key: the client speaks plain HTTP/1.1 to a Unix socket in a
/// folder only this user can open, and each connection accepted there is carried over a TLS
/// connection of the tunnel's own to the server, made with NIOSSL's usual checks of the chain and
/// name and then the pin (or, with `insecure`, the pin alone, as curl's `-k --pinnedpubkey`).
/// A refusal is kept for the request that caused it (``failure(after:)``), because the client
/// sees only a connection closed.
package final class PinnedTunnel: Sendable {
    let host: String
    let port: Int
    let pins: PublicKeyPins
    /// The socket the client connects to.
    package let socketPath: String
    private let server: any Channel
    /// Refusals so far, the last, and the last refused pin (the handshake's own error follows it,
    /// and is not what the user needs to read).
    private let failures = Mutex<(count: Int, last: (any Error)?, pinAt: Int, pin: PinRefusal?)>((0, nil, 0, nil))

    /// Listens on `socketPath` and carries each connection to `host:port`.
    static func open(
        socketPath: String, host: String, port: Int, pins: PublicKeyPins, tls: TLSConfiguration, insecure: Bool,
        connectTimeout: Duration = .seconds(15)
    ) async throws -> PinnedTunnel {
        var tls = tls
        tls.applicationProtocols = ["http/1.1"]
        // The pin is checked after the usual checks, or instead of them when the user said not to check.
        tls.certificateVerification = insecure ? .noHostnameVerification : (tls.certificateVerification == .none ? .fullVerification : tls.certificateVerification)
        let context = try NIOSSLContext(configuration: tls)
        let box = TunnelBox()
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(ChannelOptions.autoRead, value: true)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    guard let tunnel = box.tunnel else { throw ChannelError.ioOnClosedChannel }
                    try tunnel.carry(child, context: context, insecure: insecure, connectTimeout: connectTimeout)
                }
            }
            .bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true)
            .get()
        let tunnel = PinnedTunnel(host: host, port: port, pins: pins, socketPath: socketPath, server: server)
        box.tunnel = tunnel
        return tunnel
    }

    private init(host: String, port: Int, pins: PublicKeyPins, socketPath: String, server: any Channel) {
        self.host = host
        self.port = port
        self.pins = pins
        self.socketPath = socketPath
        self.server = server
    }

    /// Where the client asks for `url` (same path and query) through this tunnel.
    package func url(for url: URL) -> URL? {
        var uri = url.path(percentEncoded: true)
        if uri.isEmpty { uri = "/" }
        if let query = url.query(percentEncoded: true) { uri += "?" + query }
        return URL(httpURLWithSocketPath: socketPath, uri: uri)
    }

    /// How many refusals there have been: a request notes it before it starts.
    package var failureMark: Int { failures.withLock { $0.count } }

    /// The last refusal since `mark`, if any.
    package func failure(after mark: Int) -> (any Error)? {
        failures.withLock { state in
            if state.pinAt > mark, let pin = state.pin { return pin }
            return state.count > mark ? state.last : nil
        }
    }

    func close() async {
        try? await server.close()
        unlink(socketPath)
    }

    private func record(_ error: any Error) {
        // The handshake's failure after a refused pin: the refusal, in words, is recorded already.
        if error is PinMismatch { return }
        failures.withLock { state in
            state.count += 1
            state.last = error
            if let pin = error as? PinRefusal { (state.pinAt, state.pin) = (state.count, pin) }
        }
    }

    /// Connects `child` (a client's connection) to the server over TLS and passes bytes both ways.
    private func carry(_ child: any Channel, context: NIOSSLContext, insecure: Bool, connectTimeout: Duration) throws {
        let (inner, outer) = TunnelGlue.pair()
        try child.pipeline.syncOperations.addHandler(inner)
        let outerBound = NIOLoopBound(outer, eventLoop: child.eventLoop)
        let handler: NIOSSLClientHandler
        let serverName = CookieJar.isIPAddress(host) ? nil : host
        if insecure {
            handler = try NIOSSLClientHandler(context: context, serverHostname: serverName) { [self] chain, promise in
                promise.succeed(check(chain.first) ? .certificateVerified : .failed)
            }
        } else {
            handler = try NIOSSLClientHandler._makeSSLClientHandler(context: context, serverHostname: serverName) { [self] certificate, channel in
                check(certificate) ? channel.eventLoop.makeSucceededVoidFuture() : channel.eventLoop.makeFailedFuture(PinMismatch())
            }
        }
        let handlerBound = NIOLoopBound(handler, eventLoop: child.eventLoop)
        ClientBootstrap(group: child.eventLoop)
            .connectTimeout(.init(connectTimeout))
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(handlerBound.value)
                    try channel.pipeline.syncOperations.addHandler(outerBound.value)
                    outerBound.value.onError = { [self] error in record(error) }
                }
            }
            .connect(host: host, port: port)
            .whenFailure { [self] error in
                record(error)
                child.close(promise: nil)
            }
    }

    /// True when the certificate's key is pinned; a mismatch is recorded with both keys named.
    private func check(_ certificate: NIOSSLCertificate?) -> Bool {
        guard let certificate, let spki = try? certificate.extractPublicKey().toSPKIBytes() else {
            record(PinRefusal(message: "\(host) showed no public key Ferry could read; the pinned key cannot be checked, so Ferry does not download from it."))
            return false
        }
        let digest = Array(SHA256.hash(data: spki))
        if pins.allows(digest) { return true }
        record(PinRefusal(message: "\(host)'s public key is \(PublicKeyPins.text(digest)), not the one pinned (\(pins.text)); Ferry does not download from it. If the server's key was changed on purpose, pin the new one."))
        return false
    }

    /// The additional check's failure (its words are in the recorded ``PinRefusal``).
    struct PinMismatch: Error {}
}

/// A server key that is not the pinned one, in words.
struct PinRefusal: Error {
    var message: String
}

/// Set once the listener is bound; read when a connection comes.
private final class TunnelBox: @unchecked Sendable {
    private let lock = Mutex<PinnedTunnel?>(nil)
    var tunnel: PinnedTunnel? {
        get { lock.withLock { $0 } }
        set { lock.withLock { $0 = newValue } }
    }
}

/// One end of a tunnel: what its channel reads goes to the partner's channel, and it reads only
/// while the partner's channel can take more (so a slow reader slows the server, not memory).
/// Both ends live on one event loop.
final class TunnelGlue: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: TunnelGlue?
    private var context: ChannelHandlerContext?
    private var readPending = false
    /// Errors of this end's channel (a refused handshake).
    var onError: ((any Error) -> Void)?

    static func pair() -> (TunnelGlue, TunnelGlue) {
        let first = TunnelGlue()
        let second = TunnelGlue()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        partner?.partnerCanTakeMore()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.context?.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.context?.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // What was passed on is written before the partner closes (a close fails pending writes).
        if let other = partner?.context {
            let channel = other.channel
            other.writeAndFlush(NIOAny(ByteBuffer())).whenComplete { _ in channel.close(promise: nil) }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        onError?(error)
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerCanTakeMore() }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if let other = partner?.context, other.channel.isActive, other.channel.isWritable {
            context.read()
        } else {
            readPending = true
        }
    }

    private func partnerCanTakeMore() {
        guard readPending, let context else { return }
        readPending = false
        context.read()
    }
}

/// The tunnels in use, one per server, pins and TLS settings, each made on first use; their
/// sockets are in a folder of mode 0700 (`mkdtemp`), so no other user can borrow a connection
/// that carries this user's client certificate.
package actor PinnedTunnels {
    private var tunnels: [String: PinnedTunnel] = [:]
    private var folder: String?
    private var made = 0

    package init() {}

    /// The tunnel to `url`'s server for a download with these pins and TLS settings.
    /// - Parameter settings: what else sets the TLS connection apart (authorities, client certificate).
    package func tunnel(to url: URL, pins: PublicKeyPins, tls: TLSConfiguration, insecure: Bool, settings: String) async throws -> PinnedTunnel {
        guard var host = url.host, !host.isEmpty else { throw FerryError.invalidRequest("\(url) names no host.") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = url.port ?? 443
        let key = [host, String(port), pins.text, insecure ? "insecure" : "", settings].joined(separator: "\u{0}")
        if let tunnel = tunnels[key] { return tunnel }
        let folder = try self.folder ?? Self.makeFolder()
        self.folder = folder
        made += 1
        let tunnel = try await PinnedTunnel.open(
            socketPath: "\(folder)/\(made).sock", host: host, port: port, pins: pins, tls: tls, insecure: insecure)
        if let raced = tunnels[key] {
            await tunnel.close()
            return raced
        }
        tunnels[key] = tunnel
        return tunnel
    }

    /// Closes every tunnel and removes their folder.
    package func close() async {
        for tunnel in tunnels.values { await tunnel.close() }
        tunnels = [:]
        if let folder { rmdir(folder) }
        folder = nil
    }

    private static func makeFolder() throws -> String {
        var template = Array("/tmp/ferry-pinned-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw FerryError(.fileSystem, "Cannot make a folder for pinned connections in /tmp: \(String(cString: strerror(errno))).")
        }
        return String(cString: made)
    }
}
