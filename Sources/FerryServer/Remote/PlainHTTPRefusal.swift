import NIOCore

/// First on a TLS listener's connections: a TLS handshake goes on to TLS; plain HTTP (someone
/// typed `http://` for an HTTPS port) gets a plain `400` saying which URL to use, then the
/// connection closes, instead of a handshake error or a hang.
final class PlainHTTPRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A TLS record's first byte for a handshake.
    static let handshake: UInt8 = 0x16

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return }
        if first == Self.handshake {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        let text = Self.refusal(for: buffer)
        let response = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(text.utf8.count)\r\nConnection: close\r\n\r\n\(text)"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: response))).whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// "This port speaks HTTPS: https://HOST/", with the Host of the request when it has one.
    static func refusal(for buffer: ByteBuffer) -> String {
        let head = String(decoding: buffer.readableBytesView.prefix(8192), as: UTF8.self)
        let host = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("host:") }
            .map { $0.dropFirst(5).trimmingCharacters(in: .whitespaces) }
            .flatMap { $0.allSatisfy { $0.isLetter || $0.isNumber || ".-:[]".contains($0) } ? $0 : nil }
        return "This port speaks HTTPS only" + (host.map { ": open https://\($0)/" } ?? "; use https://") + "\n"
    }
}
