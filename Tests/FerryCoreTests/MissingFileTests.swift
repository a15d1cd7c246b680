import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// The disk is the truth: a completed download whose file was deleted or moved shows
/// `fileMissing`, and asking for its URL again downloads it again instead of answering with the
/// old transfer.
@Suite struct MissingFileTests {
    @Test func aDeletedFileShowsMissingAndIsDownloadedAgain() async throws {
        let file = Origin.File(data: Origin.bytes(30_000))
        try await Origin.run { origin, base in
            origin.serve("/song.m4a", file)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let url = base.appendingPathComponent("song.m4a")
                    let first = try await h.get([url])[0]
                    let done = try await h.wait(first.id, for: .completed)
                    #expect(done.fileMissing == nil)
                    // Asked again while the file is there: the same transfer.
                    #expect(try await h.get([url])[0].id == first.id)
                    try FileManager.default.moveItem(atPath: done.path!, toPath: home.appendingPathComponent("elsewhere.m4a").path)
                    #expect(try await h.engine.transfer(first.id).fileMissing == true)
                    #expect(try await h.engine.list(states: [.completed]).transfers.map(\.fileMissing) == [true])
                    let again = try await h.get([url])[0]
                    #expect(again.id != first.id)
                    let redone = try await h.wait(again.id, for: .completed)
                    #expect(redone.fileMissing == nil && redone.sha256 == file.sha256)
                    #expect(origin.requests(for: "/song.m4a").count == 2)
                }
            }
        }
    }

    /// Pages of a long list, oldest or newest first, each with the cursor of the next.
    @Test func listsComeInPages() async throws {
        try await withTemporaryDirectory { home in
            try await EngineHarness.run(home: home) { h in
                let urls = (1...25).map { URL(string: "http://127.0.0.1:9/\($0)")! }
                let created = try await h.engine.enqueue(.init(urls: urls, session: "test", options: .init(startAfter: .distantFuture)))
                var seen: [Int64] = []
                var cursor: String?
                var pages = 0
                repeat {
                    let page = try await h.engine.list(limit: 10, cursor: cursor)
                    seen += page.transfers.map(\.id)
                    cursor = page.nextCursor
                    pages += 1
                } while cursor != nil
                #expect(seen == created.map(\.id) && pages == 3)
                let newest = try await h.engine.list(limit: 5, newestFirst: true)
                #expect(newest.transfers.map(\.id) == Array(created.map(\.id).reversed().prefix(5)))
                let last = try await h.engine.list(limit: 5, cursor: String(created[20].id))
                #expect(last.transfers.count == 4 && last.nextCursor == nil)
                await #expect(throws: FerryError.self) { try await h.engine.list(limit: 5, cursor: "abc") }
            }
        }
    }
}
