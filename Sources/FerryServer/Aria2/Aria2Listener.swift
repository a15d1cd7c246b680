import FerryCore
import FerryKit
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// aria2's RPC endpoint (`ferry serve --aria2-rpc`): `/jsonrpc` on loopback (port 6800, as
/// aria2's) by HTTP POST, or over a WebSocket that also carries aria2's notifications, for
/// aria2's front ends and client libraries. Nothing else is served there.
package struct Aria2Listener: Sendable {
    package var host: String
    package var port: Int
    package static let defaultPort = 6800

    package init(host: String = "127.0.0.1", port: Int = Self.defaultPort) {
        self.host = host
        self.port = port
    }

    func application(engine: TransferEngine, secret: String, address: DaemonAddress, logger: Logger) -> any Service {
        let rpc = Aria2RPC(engine: engine, secret: secret, sessionId: Self.sessionId())
        let router = Router(context: FerryRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: LoopbackGuardMiddleware())
        Self.register(rpc, on: router)
        let host = self.host
        let onRunning: @Sendable (any Channel) async -> Void = { channel in
            let url = "http://\(host):\(channel.localAddress?.port ?? 0)/jsonrpc"
            address.set(url)
            logger.info("aria2 RPC listening", metadata: ["aria2.url": "\(url)"])
        }
        let hub = engine.hub
        return Application(
            router: router,
            server: .http1WebSocketUpgrade { request, _, _ in
                // As for POST: only this path, only under a loopback name (no DNS rebinding).
                guard request.path?.split(separator: "?").first == "/jsonrpc",
                    let authority = request.authority, LoopbackGuardMiddleware.isLoopback(authority: authority)
                else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in
                    try await Self.serve(rpc: rpc, hub: hub, inbound: inbound.messages(maxSize: 4 << 20)) { text in
                        try await outbound.write(.text(text))
                    }
                }
            },
            configuration: .init(address: .hostname(host, port: port), serverName: "Ferry"), onServerRunning: onRunning, logger: logger
        )
    }

    /// One WebSocket: each text message is a call (or a batch) answered in turn, and every
    /// download's start, pause, stop, completion and error is announced as aria2 does. One
    /// writer, fed by both.
    static func serve(
        rpc: Aria2RPC, hub: EventHub, inbound: WebSocketInboundMessageStream, write: @escaping @Sendable (String) async throws -> Void
    ) async throws {
        let (outgoing, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(4096))
        let events = hub.subscribe(session: nil)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await message in events {
                    if case .event(let event) = message, Aria2Notifications.method(for: event.kind) != nil,
                        let data = Aria2Notifications.message(event, gid: await rpc.gid(event.transferId))
                    {
                        continuation.yield(String(decoding: data, as: UTF8.self))
                    }
                }
            }
            group.addTask {
                defer { continuation.finish() }
                for try await message in inbound {
                    guard case .text(let text) = message else { continue }
                    continuation.yield(String(decoding: await rpc.answer(Data(text.utf8)).body, as: UTF8.self))
                }
            }
            for await text in outgoing { try await write(text) }
            group.cancelAll()
        }
    }

    /// 40 hex digits, new with each daemon (aria2's session id is a SHA-1).
    /// `POST /jsonrpc`: on this listener, and on the listeners beyond loopback (the secret is
    /// the credential there too).
    static func register(_ rpc: Aria2RPC, on router: Router<FerryRequestContext>) {
        router.post("jsonrpc") { request, context in
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            let answer = await rpc.answer(Data(body.readableBytesView))
            return Response(
                status: .init(code: answer.status), headers: [.contentType: "application/json-rpc", .cacheControl: "no-cache"],
                body: .init(byteBuffer: ByteBuffer(bytes: answer.body))
            )
        }
    }

    static func sessionId() -> String {
        SecretFile.randomHex(byteCount: 20)
    }
}
