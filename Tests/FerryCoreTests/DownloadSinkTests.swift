import FerryTestSupport
import Foundation
import NIOCore
import Testing

@testable import FerryCore

/// The part file's writes: network reads gathered into few system calls, nothing lost or reordered.
@Suite struct DownloadSinkTests {
    @Test func piecesAreWrittenInOrderEvenBeyondOneSystemCallsLimit() async throws {
        try await withTemporaryDirectory { folder in
            let data = Origin.bytes(3_000_000, seed: 4)
            // Uneven pieces, empty ones among them, more than one pwritev may take.
            var cuts = [0]
            while cuts.last! < data.count { cuts.append(min(data.count, cuts.last! + [0, 1, 700, 1500, 4096][cuts.count % 5])) }
            #expect(cuts.count - 1 > PartFile.maxPieces * 2)
            let part = try PartFile(url: folder.appendingPathComponent("a.part"))
            try data.withUnsafeBytes { bytes in
                let pieces = zip(cuts, cuts.dropFirst()).map { UnsafeRawBufferPointer(rebasing: bytes[$0..<$1]) }
                try part.append(pieces)
            }
            #expect(part.length == Int64(data.count))
            part.close()
            #expect(FileManager.default.contents(atPath: folder.appendingPathComponent("a.part").path) == data)
        }
    }

    @Test func appendedBytesCountBeforeTheyAreWrittenAndAFlushWritesThem() async throws {
        try await withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("a.part")
            let data = Origin.bytes(2_500_000, seed: 5)
            let sink = try DownloadSink(url: url, durableBytes: 0)
            var offset = 0
            while offset < data.count {
                let end = min(data.count, offset + 60_000)
                try sink.append(ByteBuffer(bytes: data[offset..<end]))
                offset = end
                #expect(sink.length == Int64(offset))
                // Written in batches of about a MiB: never more than one batch behind.
                let onDisk = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as! Int
                #expect(onDisk <= offset && offset - onDisk < DownloadSink.writeBatchBytes)
            }
            try sink.flush()
            #expect(FileManager.default.contents(atPath: url.path) == data)
            #expect(try await sink.sha256() == data.sha256Hex)

            // A restart drops what was not written too.
            try sink.append(ByteBuffer(bytes: data[0..<1000]))
            try sink.restart()
            #expect(sink.length == 0)
            try sink.flush()
            #expect(FileManager.default.contents(atPath: url.path)?.count == 0)
            sink.close()
        }
    }
}
