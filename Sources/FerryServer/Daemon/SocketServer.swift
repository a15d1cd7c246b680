import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOExtras
import NIOPosix
import ServiceLifecycle

/// Serves the daemon's router over HTTP/1.1 on a socket that is already listening
/// (``ListeningSocket``): one systemd handed over, or one bound before start. Hummingbird's own
/// server only binds addresses itself, so this runs the same router, child channels and graceful
/// shutdown on a given descriptor. Run it in a service group after the application's services
/// (see ``FerryDaemon/services(listeningOn:)``): a graceful shutdown stops it first.
struct SocketServer: Service {
    let socket: ListeningSocket
    let responder: RouterResponder<FerryRequestContext>
    let onServerRunning: @Sendable (any Channel) async -> Void
    let onShutdown: @Sendable () -> Void
    let logger: Logger

    func run() async throws {
        let responder = responder
        let logger = logger
        let http = HTTP1Channel(responder: { request, writer, channel in
            let context = FerryRequestContext(source: .init(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch {
                response = Response(status: .internalServerError)
            }
            response.headers[.server] = "Ferry"
            try await writer.write(response: response.head, body: response.body)
        })
        let group = MultiThreadedEventLoopGroup.singleton
        let quiescing = ServerQuiescingHelper(group: group)
        let server = try await ServerBootstrap(group: group)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .bind(socket.descriptor) { channel in http.setup(channel: channel, logger: logger) }

        await withGracefulShutdownHandler {
            await onServerRunning(server.channel)
            await withDiscardingTaskGroup { connections in
                do {
                    try await server.executeThenClose { inbound in
                        for try await connection in inbound {
                            connections.addTask { await http.handle(value: connection, logger: logger) }
                        }
                    }
                } catch {
                    logger.error("the listening socket failed", metadata: ["error": "\(error)"])
                }
            }
        } onGracefulShutdown: {
            onShutdown()
            // Stop accepting, let each connection finish its request, then close it.
            quiescing.initiateShutdown(promise: nil)
        }
    }
}
