import HummingbirdCore
import Logging
import NIOCore
import NIOSSL

/// A listener's connections over TLS (as HummingbirdTLS's `TLSChannel`), with plain HTTP
/// answered by ``PlainHTTPRefusal`` rather than dropped.
struct SecureChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let context: NIOSSLContext

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(PlainHTTPRefusal())
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension SecureChannel: HTTPChannelHandler where Base: HTTPChannelHandler {
    var responder: HTTPChannelHandler.Responder { base.responder }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 over TLS with a context of ours (its certificate read again when it changes).
    static func secure(tls: TLSConfiguration, http: HTTP1Channel.Configuration = .init()) throws -> HTTPServerBuilder {
        let context = try NIOSSLContext(configuration: tls)
        return .init { responder in SecureChannel(base: HTTP1Channel(responder: responder, configuration: http), context: context) }
    }
}
