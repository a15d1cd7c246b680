import FerryCore
import FerryKit
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// aria2's RPC endpoint (`ferry serve --aria2-rpc`): `POST /jsonrpc` on loopback (port 6800, as
/// aria2's), for aria2's front ends and client libraries. Nothing else is served there.
public struct Aria2Listener: Sendable {
    public var host: String
    public var port: Int
    public static let defaultPort = 6800

    public init(host: String = "127.0.0.1", port: Int = Self.defaultPort) {
        self.host = host
        self.port = port
    }

    func application(engine: TransferEngine, secret: String, address: DaemonAddress, logger: Logger) -> any Service {
        let rpc = Aria2RPC(engine: engine, secret: secret, sessionId: Self.sessionId())
        let router = Router(context: FerryRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: LoopbackGuardMiddleware())
        router.post("jsonrpc") { request, context in
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            let answer = await rpc.answer(Data(body.readableBytesView))
            return Response(
                status: .init(code: answer.status), headers: [.contentType: "application/json-rpc", .cacheControl: "no-cache"],
                body: .init(byteBuffer: ByteBuffer(bytes: answer.body))
            )
        }
        let host = self.host
        let onRunning: @Sendable (any Channel) async -> Void = { channel in
            let url = "http://\(host):\(channel.localAddress?.port ?? 0)/jsonrpc"
            address.set(url)
            logger.info("aria2 RPC listening", metadata: ["aria2.url": "\(url)"])
        }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "Ferry"), onServerRunning: onRunning,
            logger: logger
        )
    }

    /// 40 hex digits, new with each daemon (aria2's session id is a SHA-1).
    static func sessionId() -> String {
        (0..<20).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
    }
}
